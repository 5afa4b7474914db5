"""Plugin manager factory, guarded entry-point loading and the registry facade.

The order follows pluggy's eggsample: add the hookspecs, load the ``oprt``
entry points (each one guarded), register the built-in plugin. Core code then
reads backends and ops through :class:`Registry`, never through ``pm.hook``.

Environment:
- ``OPRT_DISABLE_PLUGIN_AUTOLOAD=1``: load no entry point except those named
  in ``OPRT_PLUGINS=a,b`` (like ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``/``PYTEST_PLUGINS``).
- ``OPRT_DISABLED_PLUGINS=a,b``: skip these entry points (like tox's
  ``TOX_DISABLED_EXTERNAL_PLUGINS``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from . import builtin, hookspecs
from .errors import PluginLoadError, UnknownNameError
from .hookspecs import PROJECT_NAME

__all__ = [
    "BACKEND_DISTRIBUTIONS",
    "ENTRY_POINT_GROUP",
    "OprtPluginManager",
    "PluginInfo",
    "Registry",
    "get_plugin_manager",
    "get_registry",
    "install_hint",
    "list_plugins",
]

ENTRY_POINT_GROUP = PROJECT_NAME
BUILTIN_PLUGIN_NAME = "core"

#: The backends this project ships as distributions of their own (backend name -> distribution; its source is the
#: repository's folder of that name with an underscore): the one list the hint of an unknown backend reads.
BACKEND_DISTRIBUTIONS = {"nvidia": "oprt-nvidia", "metax": "oprt-metax"}


def install_hint(backend: object) -> str | None:
    """How to install ``backend`` where it is one of :data:`BACKEND_DISTRIBUTIONS`, else None."""
    dist = BACKEND_DISTRIBUTIONS.get(backend) if isinstance(backend, str) else None
    if dist is None:
        return None
    return f"install {dist} for it: pip install ./{dist.replace('-', '_')} (from the oprt repository)"


def _env_list(name: str) -> set[str]:
    return {p.strip() for p in os.environ.get(name, "").split(",") if p.strip()}


def _dist_name(ep: metadata.EntryPoint) -> str | None:
    dist = getattr(ep, "dist", None)
    return dist.metadata["Name"] if dist is not None else None


@dataclass
class PluginInfo:
    """One row of ``oprt-bench backends``' plugin listing."""

    name: str
    distribution: str | None = None
    version: str | None = None
    backends: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    error: PluginLoadError | None = None
    impls: list[str] = field(default_factory=list)  # "op@backend" pairs given through oprt_register_impls

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "backends": list(self.backends),
            "ops": list(self.ops),
            "error": str(self.error) if self.error else None,
        }


class OprtPluginManager(pluggy.PluginManager):
    """A pluggy manager that records, instead of raising, a plugin that fails to load."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.plugin_info: dict[str, PluginInfo] = {}

    def load_oprt_entrypoints(self, entry_points: Iterable[metadata.EntryPoint] | None = None) -> None:
        """Load every ``oprt`` entry point; one that raises becomes a PluginLoadError record."""
        if entry_points is None:
            entry_points = metadata.entry_points(group=ENTRY_POINT_GROUP)
        disabled = _env_list("OPRT_DISABLED_PLUGINS")
        autoload = not os.environ.get("OPRT_DISABLE_PLUGIN_AUTOLOAD")
        explicit = _env_list("OPRT_PLUGINS")
        for ep in entry_points:
            if ep.name in disabled or (not autoload and ep.name not in explicit):
                continue
            if self.get_plugin(ep.name) is not None or self.is_blocked(ep.name):
                continue
            dist = getattr(ep, "dist", None)
            info = PluginInfo(ep.name, _dist_name(ep), dist.version if dist else None)
            self.plugin_info[ep.name] = info
            try:
                plugin = ep.load()
                self.register(plugin, name=ep.name)
            except Exception as exc:  # noqa: BLE001 - any import failure is the plugin's, not ours
                info.error = PluginLoadError(ep.name, info.distribution, exc)

    def register_plugin(self, plugin: object, name: str, distribution: str | None = None,
                        version: str | None = None) -> None:
        """Register an in-process plugin (tests, embedding) with a listing record."""
        self.register(plugin, name=name)
        self.plugin_info.setdefault(name, PluginInfo(name, distribution, version))

    @property
    def load_errors(self) -> list[PluginLoadError]:
        return [i.error for i in self.plugin_info.values() if i.error is not None]


def get_plugin_manager(load_entrypoints: bool = True) -> OprtPluginManager:
    """A fresh plugin manager: hookspecs, then entry points (guarded), then the built-in plugin."""
    pm = OprtPluginManager()
    if load_entrypoints:
        pm.load_oprt_entrypoints()
    try:
        import oprt_core

        version = oprt_core.__version__
    except AttributeError:  # partially initialised package during import
        version = None
    pm.register_plugin(builtin, BUILTIN_PLUGIN_NAME, "oprt-core", version)
    return pm


class Registry:
    """Backends and ops collected from every plugin, each attributed to its plugin.

    Each plugin's hook is called on its own: one that raises, or registers a
    name already taken, is recorded as that plugin's PluginLoadError and
    contributes nothing, while the others still register.
    """

    def __init__(self, pm: OprtPluginManager) -> None:
        self.pm = pm
        self.backends: dict[str, Any] = {}
        self.ops: dict[str, Any] = {}
        self.impls: dict[tuple[str, str], Any] = {}  # (backend, op) -> impl, from oprt_register_impls
        self.unused_impls: dict[tuple[str, str], str] = {}  # (backend, op) -> why no backend took it
        self.owner: dict[tuple[str, str], str] = {}  # (kind, name) -> plugin name; impls as ("impl", "op@backend")
        self._collect("oprt_register_ops", "op", self.ops)
        self._collect("oprt_register_backends", "backend", self.backends)
        self._collect_impls()
        self._apply_impls()

    def _hookimpls(self, hook_name: str) -> list[Any]:
        # registration order (pluggy *calls* hooks in reverse), oprt-core's own plugins first: a plugin that
        # reuses a core name (op "copy", backend "numpy") is then the one reported, whatever order the file
        # system lists distributions in
        impls = getattr(self.pm.hook, hook_name).get_hookimpls()
        impls.sort(key=lambda impl: getattr(self.pm.plugin_info.get(impl.plugin_name), "distribution", None)
                   != "oprt-core")
        return impls

    def _collect(self, hook_name: str, kind: str, into: dict[str, Any]) -> None:
        for impl in self._hookimpls(hook_name):
            plugin = impl.plugin_name
            info = self.pm.plugin_info.setdefault(plugin, PluginInfo(plugin))
            if info.error is not None:
                continue
            staged: dict[str, Any] = {}

            def register(obj: Any, _staged=staged, _kind=kind, _plugin=plugin) -> None:
                name = getattr(obj, "name", None)
                if not isinstance(name, str) or not name:
                    raise TypeError(f"a registered {_kind} needs a non-empty str .name, got {obj!r}")
                if name in into or name in _staged:
                    other = self.owner.get((_kind, name), _plugin)
                    raise ValueError(f"{_kind} name {name!r} is already registered by plugin {other!r}")
                _staged[name] = obj

            try:
                impl.function(register=register)
            except Exception as exc:  # noqa: BLE001 - a plugin's failure is recorded, not raised
                info.error = PluginLoadError(plugin, info.distribution, exc)
                self._withdraw(plugin, info)  # what its other hook registered goes too: it contributes nothing
                continue
            for name, obj in staged.items():
                into[name] = obj
                self.owner[(kind, name)] = plugin
                (info.ops if kind == "op" else info.backends).append(name)

    def _collect_impls(self) -> None:
        """Collect ``oprt_register_impls``: (backend, op) -> impl, each pair from one plugin only."""
        for hook in self._hookimpls("oprt_register_impls"):
            plugin = hook.plugin_name
            info = self.pm.plugin_info.setdefault(plugin, PluginInfo(plugin))
            if info.error is not None:
                continue
            staged: dict[tuple[str, str], Any] = {}

            def register(backend: Any, op: Any, impl: Any, _staged=staged, _plugin=plugin) -> None:
                if not isinstance(backend, str) or not backend or not isinstance(op, str) or not op:
                    raise TypeError(f"register(backend, op, impl) needs non-empty str backend and op names, "
                                    f"got {backend!r}, {op!r}")
                if not callable(impl):
                    raise TypeError(f"the implementation of {op!r} for backend {backend!r} is not callable: "
                                    f"{impl!r}")
                key = (backend, op)
                if key in self.impls or key in _staged:
                    other = self.owner.get(("impl", f"{op}@{backend}"), _plugin)
                    raise ValueError(f"an implementation of op {op!r} for backend {backend!r} is already "
                                     f"registered by plugin {other!r}")
                _staged[key] = impl

            try:
                hook.function(register=register)
            except Exception as exc:  # noqa: BLE001 - a plugin's failure is recorded, not raised
                info.error = PluginLoadError(plugin, info.distribution, exc)
                self._withdraw(plugin, info)
                continue
            for (backend, op), impl in staged.items():
                self.impls[(backend, op)] = impl
                self.owner[("impl", f"{op}@{backend}")] = plugin
                info.impls.append(f"{op}@{backend}")

    def _apply_impls(self) -> None:
        """Hand each collected impl to the optional ``add_op(spec, impl)`` of the backends it is for: those whose
        ``impl_name`` (default: their name) is the impl's backend name, so a variant registered under a name of its
        own (a subclass of the numpy backend, ``torch-cpu``) runs its base's implementations; never raises. The
        built-in plugin offers its ops' implementations for every backend it knows (numpy, the baselines): one whose
        backend is not installed or not loaded is simply not used, not listed in ``unused_impls``."""
        targets: dict[str, list[tuple[str, Any]]] = {}
        for name, be in self.backends.items():
            targets.setdefault(getattr(be, "impl_name", name), []).append((name, be))
        for (backend, op), impl in self.impls.items():
            found, spec = targets.get(backend, []), self.ops.get(op)
            if not found:
                if self.owner.get(("impl", f"{op}@{backend}")) != BUILTIN_PLUGIN_NAME:
                    self.unused_impls[(backend, op)] = f"backend {backend!r} is not registered"
                continue
            if spec is None:
                self.unused_impls[(backend, op)] = f"op {op!r} is not registered"
                continue
            for name, be in found:
                if not callable(getattr(be, "add_op", None)):
                    self.unused_impls[(backend, op)] = (f"backend {name!r} ({type(be).__name__}) has no add_op(spec, "
                                                        "impl): it takes no implementations from plugins")
                    continue
                try:
                    be.add_op(spec, impl)
                except Exception as exc:  # noqa: BLE001 - the op stays unsupported on that backend
                    self.unused_impls[(backend, op)] = (f"{type(be).__name__}.add_op raised {type(exc).__name__}: "
                                                        f"{exc}")

    def _withdraw(self, plugin: str, info: PluginInfo) -> None:
        for kind, name in [key for key, owner in self.owner.items() if owner == plugin]:
            del self.owner[(kind, name)]
            if kind == "impl":
                op, _, backend = name.partition("@")
                self.impls.pop((backend, op), None)
            else:
                (self.ops if kind == "op" else self.backends).pop(name, None)
        info.ops.clear()
        info.backends.clear()
        info.impls.clear()

    def get_backend(self, name: str) -> Any:
        if not isinstance(name, str) or name not in self.backends:
            raise UnknownNameError("backend", name, self.backends, install_hint(name))
        return self.backends[name]

    def get_op(self, name: str) -> Any:
        if not isinstance(name, str) or name not in self.ops:
            raise UnknownNameError("op", name, self.ops)
        return self.ops[name]

    def plugins(self) -> list[PluginInfo]:
        return list(self.pm.plugin_info.values())


def list_plugins(registry: Registry | None = None) -> list[PluginInfo]:
    """Per plugin: name, distribution, version, backends and ops registered, load error."""
    return (registry or get_registry()).plugins()


@functools.lru_cache(maxsize=1)
def get_registry() -> Registry:
    """The process-wide registry built from the installed plugins (cached; tests build their own)."""
    return Registry(get_plugin_manager())
