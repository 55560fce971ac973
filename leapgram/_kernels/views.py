"""A grammar's or an arena's arrays passed to a kernel as one int64 array of views.

numba unboxes every array argument on each call (a reference-counting record allocated and
freed per array): about 40 ns an array, 1.6 µs of the trie walk's 40 arrays, which a computed
mask pays on each of its 1-3 kernel calls. A *views* array lists instead, per array, its address
and shapes (``views[k] = (address, shape[0], shape[-1])``, row 6 of a grammar's its start
symbol): one array to unbox, and the kernel makes the arrays again as views of that memory (as
numba's ``carray``, with no reference count). The tuple stays the arrays' owner: the views are
valid only while its arrays live, so the caller makes the views again whenever it replaces an
array (:meth:`leapgram.parser.arena.ChartArena._pack`). A views array holds the arrays it names
(its base is a :class:`_Holder` of them), and a kernel's caller holds its argument until the call
returns: a kernel still running on views made before a replacement reads the old arrays, alive,
never freed memory, and they are freed once no call holds those views (no walk in flight). That
is what lets the lexer's 8 arrays come as views too (``Lexer.views``): one lexer serves every
thread, and a thread that grows it replaces arrays another thread's kernel may be reading.

With numba disabled the views *are* the tuple, and :func:`arena_of` and :func:`grammar_of`
return it (the plain-Python twins of the kernels then run on the arrays themselves).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core import config as numba_config
from numba.extending import intrinsic

from . import njit
from .entry import DirectKernel

ARENA_ARRAYS = 21  # the arrays of ChartArena.arrays
GRAMMAR_ARRAYS = 6  # the arrays of ParserTables.grammar, before its start symbol
LEXER_ARRAYS = 8  # Lexer.trans, Lexer.accepting, then the 6 of Lexer.kernel_arrays


@intrinsic
def _vector_at(typingctx, address, size, kind):
    """The C-contiguous array of ``size`` items of type ``kind`` (a numpy scalar type) at integer
    ``address``, without a reference count (numba's ``carray`` does the same in a function of
    ``numba.np.arrayobj``, and loading a cached kernel that calls it imports that module: about
    40 ms of a fresh process's first request; see ``_kernels/rows.py``)."""
    array_type = types.Array(kind.instance_type, 1, "C")

    def codegen(context, builder, signature, args):
        return _array_value(context, builder, array_type, args[0], (args[1],))
    return array_type(types.int64, types.int64, kind), codegen


@intrinsic
def _matrix_at(typingctx, address, rows, cols, kind):
    """As :func:`_vector_at`, a C-contiguous ``rows`` x ``cols`` array."""
    array_type = types.Array(kind.instance_type, 2, "C")

    def codegen(context, builder, signature, args):
        return _array_value(context, builder, array_type, args[0], (args[1], args[2]))
    return array_type(types.int64, types.int64, types.int64, kind), codegen


def _array_value(context, builder, array_type, address, shape):
    """numba's array struct for ``array_type`` over the memory at ``address`` (no meminfo, no parent)."""
    array = cgutils.create_struct_proxy(array_type)(context, builder)
    item = context.get_data_type(array_type.dtype)
    itemsize = context.get_constant(types.intp, context.get_abi_sizeof(item))
    strides = [itemsize]
    for size in reversed(shape[1:]):
        strides.insert(0, builder.mul(strides[0], size))
    nitems = shape[0]
    for size in shape[1:]:
        nitems = builder.mul(nitems, size)
    array.meminfo = cgutils.get_null_value(array.meminfo.type)
    array.parent = cgutils.get_null_value(array.parent.type)
    array.nitems = nitems
    array.itemsize = itemsize
    array.data = builder.inttoptr(address, item.as_pointer())
    array.shape = cgutils.pack_array(builder, list(shape))
    array.strides = cgutils.pack_array(builder, strides)
    return array._getvalue()


@njit(cache=True, nogil=True, inline="always")
def _vec8(views, k):
    return _vector_at(views[k, 0], views[k, 1], np.int8)


@njit(cache=True, nogil=True, inline="always")
def _vec32(views, k):
    return _vector_at(views[k, 0], views[k, 1], np.int32)


@njit(cache=True, nogil=True, inline="always")
def _vec64(views, k):
    return _vector_at(views[k, 0], views[k, 1], np.int64)


@njit(cache=True, nogil=True, inline="always")
def _mat32(views, k):
    return _matrix_at(views[k, 0], views[k, 1], views[k, 2], np.int32)


@njit(cache=True, nogil=True, inline="always")
def _mat64(views, k):
    return _matrix_at(views[k, 0], views[k, 1], views[k, 2], np.int64)


@njit(cache=True, nogil=True, inline="always")
def _put(views, k, array):
    views[k, 0] = array.ctypes.data
    views[k, 1] = array.shape[0]
    views[k, 2] = array.shape[-1]


@njit(cache=True, nogil=True, inline="always")
def _put_six(views, k, arrays):
    """The views of the 6 arrays of the tuple ``arrays``, in rows ``k`` to ``k + 5``."""
    _put(views, k, arrays[0])
    _put(views, k + 1, arrays[1])
    _put(views, k + 2, arrays[2])
    _put(views, k + 3, arrays[3])
    _put(views, k + 4, arrays[4])
    _put(views, k + 5, arrays[5])


@njit(cache=True, nogil=True)
def arena_views_kernel(arrays, views):
    """Write the views of ``ChartArena.arrays`` (C-contiguous, in their order) into ``views``."""
    _put_six(views, 0, arrays[:6])
    _put_six(views, 6, arrays[6:12])
    _put_six(views, 12, arrays[12:18])
    _put(views, 18, arrays[18])
    _put(views, 19, arrays[19])
    _put(views, 20, arrays[20])


@njit(cache=True, nogil=True)
def grammar_views_kernel(grammar, views):
    """Write the views of ``ParserTables.grammar`` into ``views`` (its start symbol in row 6)."""
    _put_six(views, 0, grammar[:6])
    views[6, 0] = grammar[6]


@njit(cache=True, nogil=True)
def lexer_views_kernel(trans, accepting, arrays, views):
    """Write the views of ``trans``, ``accepting`` and the 6 arrays of ``Lexer.kernel_arrays``."""
    _put(views, 0, trans)
    _put(views, 1, accepting)
    _put_six(views, 2, arrays)


@njit(cache=True, nogil=True, inline="always")
def lexer_of(views):
    """``(trans, accepting, acc_start, acc_len, acc_pool, acc_id, acc_ignore_only, single_fresh)``
    of a lexer's views."""
    return (_mat32(views, 0), _vec8(views, 1), _vec32(views, 2), _vec32(views, 3), _vec32(views, 4),
            _vec32(views, 5), _vec8(views, 6), _vec32(views, 7))


@njit(cache=True, nogil=True, inline="always")
def arena_of(views):
    """The tuple of ``ChartArena.arrays`` that ``views`` were made from."""
    return (_mat32(views, 0), _mat32(views, 1), _vec64(views, 2), _vec64(views, 3), _vec64(views, 4),
            _vec64(views, 5), _vec64(views, 6), _vec64(views, 7), _vec64(views, 8), _vec64(views, 9),
            _vec64(views, 10), _vec32(views, 11), _vec32(views, 12), _vec32(views, 13), _vec64(views, 14),
            _vec32(views, 15), _vec32(views, 16), _vec32(views, 17), _vec32(views, 18), _mat32(views, 19),
            _mat64(views, 20))


@njit(cache=True, nogil=True, inline="always")
def grammar_of(views):
    """The tuple ``ParserTables.grammar`` that ``views`` were made from."""
    return (_vec32(views, 0), _vec32(views, 1), _vec8(views, 2), _vec8(views, 3), _vec32(views, 4),
            _vec32(views, 5), views[6, 0])


_ARENA_VIEWS = DirectKernel(arena_views_kernel)  # ChartArena.arrays: always the same types
_GRAMMAR_VIEWS = DirectKernel(grammar_views_kernel)  # ParserTables.grammar: the same, but for read-only flags
_LEXER_VIEWS = DirectKernel(lexer_views_kernel)  # a Lexer's arrays: always the same types


class _Holder(np.ndarray):
    """The memory of a views array, with the arrays the views name as ``arrays``."""


def holding(rows: int, arrays: tuple) -> np.ndarray:
    """A zeroed int64 ``(rows, 3)`` array that keeps ``arrays`` alive as long as it lives (a plain
    ``ndarray``, as the kernels take it, whose base is a :class:`_Holder`)."""
    holder = _Holder((rows, 3), dtype=np.int64)
    holder.fill(0)
    holder.arrays = arrays
    return holder.view(np.ndarray)


def arena_views(arrays: tuple[np.ndarray, ...]) -> np.ndarray | tuple[np.ndarray, ...]:
    """The views of ``ChartArena.arrays`` (the tuple itself while numba is disabled)."""
    if numba_config.DISABLE_JIT:
        return arrays
    views = holding(ARENA_ARRAYS, arrays)
    _ARENA_VIEWS.call(arrays, views)
    return views


def grammar_views(grammar: tuple) -> np.ndarray | tuple:
    """The views of ``ParserTables.grammar`` (the tuple itself while numba is disabled)."""
    if numba_config.DISABLE_JIT:
        return grammar
    views = holding(GRAMMAR_ARRAYS + 1, grammar)
    _GRAMMAR_VIEWS.call(grammar, views)
    return views


def lexer_views(trans: np.ndarray, accepting: np.ndarray, arrays: tuple[np.ndarray, ...]) -> np.ndarray | tuple:
    """The views of a lexer's ``trans``, ``accepting`` and ``kernel_arrays`` (while numba is
    disabled, the tuple of the 8 arrays)."""
    if numba_config.DISABLE_JIT:
        return (trans, accepting, *arrays)
    views = holding(LEXER_ARRAYS, (trans, accepting, *arrays))
    _LEXER_VIEWS.call(trans, accepting, arrays, views)
    return views


if numba_config.DISABLE_JIT:  # the twins: the views are the tuples themselves
    def arena_of(views):
        """The tuple of ``ChartArena.arrays`` (the views are the tuple while numba is disabled)."""
        return views

    def grammar_of(views):
        """The tuple ``ParserTables.grammar`` (the views are the tuple while numba is disabled)."""
        return views

    def lexer_of(views):
        """A lexer's 8 arrays (the views are their tuple while numba is disabled)."""
        return views
