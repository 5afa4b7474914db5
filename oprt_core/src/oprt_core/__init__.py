"""oprt_core: operator specs, the plugin system, the C ABI oprt.h and the numpy backend."""

from __future__ import annotations

__version__ = "0.1.0"

from .backend import Availability, Backend, DeviceInfo, Event, Launcher, Support
from .dtypes import DTYPES, OPT_IN_DTYPES, DType, get_dtype
from .errors import (
    BackendError,
    BackendUnavailable,
    InvalidArgumentError,
    OprtError,
    PluginLoadError,
    UnknownNameError,
    UnsupportedCase,
)
from .hookspecs import hookimpl, hookspec
from .plugins import PluginInfo, Registry, get_plugin_manager, get_registry, list_plugins
from .spec import Budget, Case, OpSpec, Param, TensorCase, parse_shape

__all__ = [
    "__version__",
    "Availability", "Backend", "DeviceInfo", "Event", "Launcher", "Support",
    "DTYPES", "OPT_IN_DTYPES", "DType", "get_dtype",
    "BackendError", "BackendUnavailable", "InvalidArgumentError", "OprtError", "PluginLoadError",
    "UnknownNameError", "UnsupportedCase",
    "hookimpl", "hookspec",
    "PluginInfo", "Registry", "get_plugin_manager", "get_registry", "list_plugins",
    "Budget", "Case", "OpSpec", "Param", "TensorCase", "parse_shape",
]
