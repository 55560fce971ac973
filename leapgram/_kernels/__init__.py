"""numba kernels over flat arrays, each with a plain-Python twin used by the tests.

Kernels are compiled with ``cache=True``. numba invalidates a cached kernel when its own source
file changes, not when a kernel it calls from another module does (the trie walk in
``cfg_walk.py`` calls the Earley kernels of ``earley.py``): after editing a kernel, delete
``leapgram/_kernels/__pycache__/*.nb*`` or the walk keeps running the old code.
"""
