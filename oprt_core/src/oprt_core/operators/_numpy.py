"""What the built-in ops' numpy implementations (``<op>/numpy_impl.py``) share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["F32", "Impl", "quiet"]

#: An implementation of the numpy backend: ``run(inputs, out, params)`` writes into ``out`` (a tuple of arrays for
#: a multi-output op).
Impl = Callable[[Sequence[np.ndarray], Any, Mapping[str, Any]], None]
F32 = np.float32


def quiet(impl: Impl) -> Impl:
    """``impl`` under ``np.errstate(all="ignore")``: overflow to inf, and NaN from inf - inf, are the IEEE results
    the op defines (the GPU kernels give the same), not something to warn about."""

    def run(inputs, out, params) -> None:
        with np.errstate(all="ignore"):
            impl(inputs, out, params)

    run.__name__ = run.__qualname__ = impl.__name__
    run.__module__ = impl.__module__
    run.__doc__ = impl.__doc__
    return run
