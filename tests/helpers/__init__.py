"""Helpers the tests share, imported as ``tests.helpers.<module>`` (the repository root is on
pytest's ``pythonpath``)."""
