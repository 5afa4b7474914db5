"""Every baseline backend in one plugin, for in-process registration (tests, scripts)::

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(oprt_bench.baselines.plugin, "baselines")

Installed, the backends come from the entry points ``torch`` (:mod:`.torch_plugin`), ``cupy``
(:mod:`.cupy_plugin`), ``torch-compile`` (:mod:`.torch_compile_plugin`) and ``liger`` (:mod:`.liger_plugin`),
one per backend so that the entry-point name is the backend name; do not register this module next to them
(the names would clash).
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from oprt_core.baselines.cupy_backend import CupyBackend
    from oprt_core.baselines.liger_backend import LigerBackend
    from oprt_core.baselines.torch_backend import TorchBackend
    from oprt_core.baselines.torch_compile_backend import TorchCompileBackend

    register(TorchBackend())
    register(CupyBackend())
    register(TorchCompileBackend())
    register(LigerBackend())
