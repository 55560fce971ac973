"""Framework integrations, imported on use: ``leapgram.integrations.torch`` (bitmask application on
tensors), ``leapgram.integrations.transformers`` (a ``LogitsProcessor`` and :func:`generate`) and
``leapgram.integrations.smollm2`` (the embedded default model).

``import leapgram`` never imports this package's modules; each needs the ``torch`` extra
(``pip install 'leapgram[torch]'``).
"""
