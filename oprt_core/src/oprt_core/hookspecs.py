"""Hook specifications of oprt: the plugin author's whole contract.

A plugin is a module (or object) exposed through the ``oprt`` entry-point group
whose functions carry the ``@hookimpl`` marker::

    # pyproject.toml of oprt-mybackend
    [project.entry-points.oprt]
    mybackend = "oprt_mybackend.plugin"

    # oprt_mybackend/plugin.py
    from oprt_core import hookimpl

    @hookimpl
    def oprt_register_backends(register):
        register(MyBackend())

The entry-point name is the backend name, so ``--backends mybackend`` and
``OPRT_DISABLED_PLUGINS=mybackend`` line up. Hooks only register objects;
the runner then calls methods on them (no op dispatch through hooks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .backend import Backend
    from .spec import OpSpec

__all__ = ["hookspec", "hookimpl", "oprt_register_backends", "oprt_register_ops", "oprt_register_impls"]

PROJECT_NAME = "oprt"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


# -------------------------------------------------------------------------
# Registration hooks


@hookspec
def oprt_register_backends(register: Callable[[Backend], None]) -> None:
    """Register the backends a plugin offers.

    Must be cheap: no device initialisation and no import of a compiled
    extension; availability is asked later through ``Backend.availability()``.

    :param register: call ``register(backend)`` once per backend object
        (anything implementing :class:`oprt_core.backend.Backend`). A name
        already taken by another plugin is reported as that plugin's error.
    """


@hookspec
def oprt_register_ops(register: Callable[[OpSpec], None]) -> None:
    """Register extra operator specifications.

    The built-in ops (:mod:`oprt_core.operators`) come from the built-in plugin the same way.

    :param register: call ``register(spec)`` once per
        :class:`oprt_core.spec.OpSpec`; its name must not be taken already.
    """


@hookspec
def oprt_register_impls(register: Callable[[str, str, Any], None]) -> None:
    """Register implementations of an op for backends that other plugins offer.

    This is how an op package (one that registers an ``OpSpec`` through
    ``oprt_register_ops``) runs on pure-Python backends it does not own, e.g.
    ``gelu_tanh`` on ``numpy`` and ``triton``; the built-in ops' own
    implementations (numpy's, the baselines') come the same way. After every plugin's ops and
    backends are registered, the registry hands each implementation to its
    backend by calling the backend's optional method ``add_op(spec, impl)``
    (:meth:`oprt_core.numpy_backend.NumpyBackend.add_op` is one). An
    implementation whose backend or op is not registered, or whose backend has
    no ``add_op``, is not an error: it is listed in ``Registry.unused_impls``
    with the reason (except the built-in plugin's for a backend not
    registered), and the backend keeps reporting the op as unsupported.

    Must be cheap: pass a plain callable and import heavy modules (a kernel
    compiler, a device runtime) inside it, on its first call.

    :param register: call ``register(backend_name, op_name, impl)`` once per
        (backend, op) pair; ``impl``'s signature is the one the target
        backend's ``add_op`` documents (numpy and triton:
        ``impl(inputs, out, params) -> None``, writing into ``out``). A pair
        already registered by another plugin is reported as this plugin's error.
    """
