"""The built-in plugin: the five core ops, the model ops (:mod:`oprt_core.llm_ops`) and the compute-bound ops
(:mod:`oprt_core.compute_ops`). The numpy backend is a separate entry point."""

from __future__ import annotations

from .compute_ops import COMPUTE_OPS
from .core_ops import CORE_OPS
from .hookspecs import hookimpl
from .llm_ops import LLM_OPS


@hookimpl
def oprt_register_ops(register) -> None:
    for spec in (*CORE_OPS, *LLM_OPS, *COMPUTE_OPS):
        register(spec)
