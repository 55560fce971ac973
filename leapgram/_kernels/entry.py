"""Calling a kernel without numba's per-call type dispatch.

A numba dispatcher works out the type of every argument on each call to pick the compiled
version. The trie walk took about 40 arrays (the trie, the lexer, the parser tables and the chart
arena), and that dispatch cost 3.4 µs of a call that often walks for only a few µs more (it is
called again after each lexer row filled in Python). A compiled version's ``entry_point`` only
unboxes the arguments: 2.0 µs then, 0.7 µs since the parser tables and the arena come as one
array of views each (:mod:`leapgram._kernels.views`). It does not check their types, so
:class:`DirectKernel` is for call sites whose argument types never change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from numba.core import types


class DirectKernel:
    """``kernel`` called through its compiled entry point after the first call; through the
    dispatcher while numba is disabled (a plain function) or when the kernel has compiled
    signatures that differ in more than arrays' read-only flags (the entry point would not know
    which one the arguments fit; read-only and writable arrays share one machine code).

    Every call must pass arguments of the types of the first call: numpy arrays of the same
    dtype, layout and number of dimensions, tuples of them, integers and booleans."""

    __slots__ = ("call", "kernel")

    def __init__(self, kernel: Callable) -> None:
        self.kernel = kernel
        self.call: Callable = self._first_call

    def _first_call(self, *args):
        result = self.kernel(*args)
        overloads = getattr(self.kernel, "overloads", None)
        if overloads and same_machine_code(overloads):
            self.call = next(iter(overloads.values())).entry_point
        else:
            self.call = self.kernel
        return result


def same_machine_code(signatures: Iterable[tuple]) -> bool:
    """Whether the argument types of ``signatures`` differ at most in arrays' read-only flags."""
    return len({tuple(_writable(t) for t in signature) for signature in signatures}) == 1


def _writable(kind):
    return kind.copy(readonly=False) if isinstance(kind, types.Array) and not kind.mutable else kind
