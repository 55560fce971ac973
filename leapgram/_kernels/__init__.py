"""numba kernels over flat arrays, each with a plain-Python twin used by the tests."""
