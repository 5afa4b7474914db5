"""The built-in operators, one package (folder) each: ``oprt_core.operators.<op>``.

A folder holds the whole op, and nothing outside it names the op:

- ``__init__.py``: ``SPEC`` (the :class:`~oprt_core.spec.OpSpec`: float64 reference, budgets, case sets, API doc),
  ``GROUP`` (``"core"``, ``"model"`` or ``"compute"``: how listings group ops) and ``ORDER`` (an int: the op's place
  in listings, reports and plans; ties broken by name);
- ``numpy_impl.py``: ``run(inputs, out, params)``, the numpy backend's implementation;
- ``baselines.py`` (optional): ``IMPLS``, baseline backend name (``torch``, ``torch-compile``, ``cupy``,
  ``liger``) -> implementation, in the signature that backend's ``add_op`` documents; the library (torch, cupy, ...)
  is passed in, never imported at module level;
- the kernel source both GPU vendors build, and ``README.md``, the op's doc;
- ``ROLES`` (optional): the roles of :data:`ROLES` the op plays for code that serves every op, each with the params
  it plays it with (:func:`with_role`).

The built-in plugin (:mod:`oprt_core.builtin`) registers every folder's spec through ``oprt_register_ops`` and
every implementation through ``oprt_register_impls``, exactly as a third-party op package does; a new folder is a
new op, with nothing else to edit (the generated C header aside: ``python -m oprt_core.cdecl --write``). An op
folder may also define ``api(functions)``: it makes ``oprt_core.ops.<op>`` from the functions made from the specs
(rms_norm's, which takes a ``residual`` and then calls add_rms_norm). Code several ops share lives in the
underscore-named modules here (``_shared``, ``_norm``, ``_numpy``), which discovery skips.

What every op's README states, counted alike:

- Error budget: ``|out - ref| <= atol + rtol * |ref|`` against a float64 reference computed from the same,
  already-rounded inputs (an op's ``tolerance_fn`` may give each case, or each element, its own atol and rtol).
- Bytes moved (``bytes_fn``, the numerator of GB/s): the logical elements an ideal kernel reads and writes, each
  once, not DRAM traffic. An input of layout ``broadcast0`` (full shape, stride 0 on dim 0) is charged for every
  element read, though it occupies, and is fetched from DRAM as, a single row (the rest are cache hits): GB/s on
  those broadcast edge cases overstates DRAM bandwidth; compare them only with each other, not with the dense
  cases or the device's peak. (vector_add's shape broadcasting, a smaller operand such as (N,) + (M, N), is
  charged once at the operand's own size.)
- Flops (``flops_fn``, the numerator of TFLOP/s and of the report's roofline): the floating-point operations an
  ideal kernel does per call, each operation 1 (an exp, an rsqrt or a division too).
- Aliasing (``inplace``): the inputs ``out`` may be exactly (each element, or each slice, read before it is
  written); any other overlap of ``out`` and an input is refused.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import Any

from ..spec import OpSpec

__all__ = ["GROUPS", "ROLES", "names", "module", "specs", "spec", "group", "with_role", "implementations", "equip"]

GROUPS = ("core", "model", "compute")

#: What code that serves every op asks of some op, by role; the op folder that plays one says so in its ``ROLES``.
ROLES = {
    "bandwidth-probe": "out = x of a 1-D f32 x, each element read and written once: the calibration's probe of a "
                       "backend's bandwidth where the backend has no copy_probe",
    "sum-all": "the sum of a whole 1-D f32 x into a 0-d out (and, by its param ``axis``, over one axis): the read that "
               "cleans a compiled backend's cache flush",
}


@cache
def _modules() -> tuple[ModuleType, ...]:
    found = [importlib.import_module(f"{__name__}.{info.name}")
             for info in pkgutil.iter_modules(__path__) if info.ispkg and not info.name.startswith("_")]
    return tuple(sorted(found, key=lambda m: (m.ORDER, m.SPEC.name)))


def names(group: str | None = None) -> tuple[str, ...]:
    """The built-in ops' names in listing order; only ``group``'s where given."""
    return tuple(s.name for s in specs(group))


def module(name: str) -> ModuleType:
    """The package of built-in op ``name`` (KeyError if there is none)."""
    for m in _modules():
        if m.SPEC.name == name:
            return m
    raise KeyError(name)


def specs(group: str | None = None) -> tuple[OpSpec, ...]:
    """The built-in ops' specs in listing order; only ``group``'s (one of :data:`GROUPS`) where given."""
    if group is not None and group not in GROUPS:
        raise ValueError(f"unknown op group {group!r}; the groups are {', '.join(GROUPS)}")
    return tuple(m.SPEC for m in _modules() if group is None or m.GROUP == group)


def spec(name: str) -> OpSpec:
    """Built-in op ``name``'s spec (KeyError if there is none)."""
    return module(name).SPEC


def group(name: str) -> str:
    """The group of built-in op ``name``."""
    return module(name).GROUP


def with_role(role: str) -> tuple[OpSpec, dict[str, Any]]:
    """The built-in op that plays ``role`` (one of :data:`ROLES`) and the params it plays it with (a new dict)."""
    if role not in ROLES:
        raise ValueError(f"unknown op role {role!r}; the roles are {', '.join(ROLES)}")
    for m in _modules():
        roles = getattr(m, "ROLES", {})
        if role in roles:
            return m.SPEC, dict(roles[role])
    raise LookupError(f"no built-in op plays the role {role!r}")


def implementations() -> Iterator[tuple[str, str, Any]]:
    """Every built-in op's implementations as ``(backend name, op name, impl)``: numpy's from ``numpy_impl.run``,
    the baselines' from ``baselines.IMPLS``. The built-in plugin registers these through ``oprt_register_impls``."""
    for m in _modules():
        op = m.SPEC.name
        yield "numpy", op, importlib.import_module(f"{m.__name__}.numpy_impl").run
        try:
            baselines = importlib.import_module(f"{m.__name__}.baselines")
        except ModuleNotFoundError as exc:
            if exc.name != f"{m.__name__}.baselines":
                raise
            continue
        for backend, impl in baselines.IMPLS.items():
            yield backend, op, impl


def equip(backend: Any) -> Any:
    """Hand ``backend`` (made outside a registry, e.g. in a test) the built-in ops' implementations for its name,
    through its ``add_op`` as the registry does; returns it. The name is ``backend.impl_name`` where it has one: a
    variant of a backend under another name runs that backend's implementations (``TorchBackend(device="cpu")``,
    backend ``torch-cpu``, runs ``torch``'s)."""
    wanted = getattr(backend, "impl_name", backend.name)
    for name, op, impl in implementations():
        if name == wanted:
            backend.add_op(spec(op), impl)
    return backend
