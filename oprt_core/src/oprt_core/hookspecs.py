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
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .backend import Backend
    from .spec import OpSpec

__all__ = ["hookspec", "hookimpl", "oprt_register_backends", "oprt_register_ops"]

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

    The five core ops come from the built-in plugin the same way.

    :param register: call ``register(spec)`` once per
        :class:`oprt_core.spec.OpSpec`; its name must not be taken already.
    """
