"""The aten ops that per-op capture never times: views and metadata ops that launch no kernel.

One list for both observers (docs/engine.md "Who reports ops"): the C++ `straggler._ops` gets
it when it is built (`OpCapture`), the Python fallback checks it per op. Such an op is *seen
through*: the ops it calls are reported on their own, so `reshape` of a non-contiguous tensor
is not timed but its nested `clone` is, and `contiguous` times its copy only when it makes one.
`item`/`_local_scalar_dense` is a host sync, not compute: never timed. Names are aten base
names (no namespace, no overload).
"""

from __future__ import annotations

__all__ = ["UNTIMED_OPS"]

UNTIMED_OPS = frozenset({
    # views: a new tensor header over the same storage
    "view", "_unsafe_view", "view_as", "reshape", "_reshape_alias", "reshape_as", "flatten",
    "unflatten", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim", "expand",
    "expand_as", "slice", "select", "squeeze", "unsqueeze", "split", "split_with_sizes",
    "unsafe_split", "chunk", "unsafe_chunk", "narrow", "unbind", "as_strided", "alias",
    "detach", "diagonal", "view_as_real", "view_as_complex", "lift_fresh", "resolve_conj",
    "resolve_neg", "contiguous", "to", "type_as",
    # allocation and metadata: no kernel
    "empty", "empty_like", "empty_strided", "set_", "resize_", "_to_copy_meta",
    "is_same_size", "size", "stride", "numel", "dim", "is_contiguous", "sym_size",
    "sym_stride", "sym_numel", "sym_storage_offset",
    # a host sync: the GPU drains here, nothing is computed
    "item", "_local_scalar_dense",
})

