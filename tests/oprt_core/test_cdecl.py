"""One declaration per op: the C ABI (oprt.h's op prototypes, the cffi cdef), CompiledBackend's marshalling and the
``ops.<op>`` functions all come from the op's spec (oprt_core.cdecl, oprt_core.ops)."""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import oprt_core.build as oprt_build
from oprt_core import DTYPES, Budget, Case, InvalidArgumentError, OpSpec, Param, TensorCase, cdecl, operators, ops
from oprt_core.cabi import cdef, header_text, include_dir
from oprt_core.compiled import c_abi_impl
from oprt_core.errors import UnsupportedCase

SRC = Path(__file__).resolve().parents[2] / "oprt_core" / "src" / "oprt_core"
ABI_OPS = cdecl.c_abi_ops()  # oprt.h's ops: the core ops, then the model ops


def plugsq_spec(params=()) -> OpSpec:
    """A third-party op (its name taken by no op folder, nor by the operator guide's example)."""
    case = Case("plugsq", "7", (TensorCase((7,)),))
    return OpSpec(name="plugsq", doc="out = x * x.", n_inputs=1, input_names=("x",), reference_fn=lambda x: x * x,
                  bytes_fn=lambda c, dt: 2 * c.numel * dt.itemsize, flops_fn=lambda c: c.numel,
                  budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES}, case_sets={"smoke": [case]},
                  params=tuple(params))


# -- oprt.h ---------------------------------------------------------------------------------------------------------

def test_oprt_h_op_region_is_the_specs_own():
    assert cdecl.main(["--check"]) == 0
    text = header_text()
    assert cdecl.regenerate(text, ABI_OPS) == text
    stale = text.replace("float negative_slope", "double negative_slope")
    assert stale != text and cdecl.regenerate(stale, ABI_OPS) == text  # --check would fail on the stale one


def test_oprt_entry_h_is_the_specs_own(tmp_path, monkeypatch):
    entry = Path(include_dir()) / "oprt_entry.h"
    assert entry.read_text() == cdecl.entry_header(ABI_OPS)
    # one macro per op, its launch checking the op's own inputs and setting the in-place inputs it declares
    text = entry.read_text()
    for spec in ABI_OPS:
        macro = cdecl.entry_macro(spec)
        assert f"#define OPRT_DEFINE_OP_{spec.name}(State, plan_fn, launch_fn)" in macro
        assert macro.count("d_->common.alias.inplace[") == len(spec.inplace)
        assert f"static const char *const names_[{spec.n_inputs}]" in macro
    assert text.count("#define OPRT_DEFINE_OP_") == len(ABI_OPS)
    # --check fails on a stale header, --write repairs it
    copy = tmp_path / "include"
    shutil.copytree(include_dir(), copy)
    monkeypatch.setattr(cdecl, "_oprt_h", lambda: copy / "oprt.h")
    (copy / "oprt_entry.h").write_text(text.replace("free(d_);", "", 1))
    assert cdecl.main(["--check"]) == 1
    assert cdecl.main(["--write"]) == 0 and (copy / "oprt_entry.h").read_text() == text


def test_every_op_declaration_of_oprt_h_is_generated():
    """No hand-written op prototype outside the generated region: each op's four entry points are there once."""
    text = cdef()
    start, end = text.index(cdecl.OPS_BEGIN), text.index(cdecl.OPS_END)
    outside = text[:start] + text[end:]
    assert not re.search(r"descriptor_t|oprt_create_", outside)
    for spec in ABI_OPS:
        for name in cdecl.entry_points(spec.name):
            assert len(re.findall(rf"\b{name}\(", text[start:end])) == 1, name


def test_prototypes_follow_the_declared_c_types():
    text = cdecl.prototypes(operators.spec("reduce_sum"))
    assert ("const oprt_tensor_desc_t *x,\n" in text or "const oprt_tensor_desc_t *x, " in text)
    assert re.search(r"const oprt_tensor_desc_t \*x,\s+int32_t axis, int32_t keepdims\);", text)
    assert "float negative_slope);" in cdecl.prototypes(operators.spec("relu"))
    eps = plugsq_spec([Param("eps", (float,), 0.5, "added", ctype="float")])
    assert re.search(r"\*x,\s+float eps\);", cdecl.prototypes(eps))
    # the launch functions keep the form oprt_build's pointer entry points read
    decls, _ = oprt_build.pointer_entry_points(cdef())
    assert re.findall(r"oprt_ptrs_(\w+)\(", decls) == [s.name for s in ABI_OPS]


def test_an_op_without_c_types_has_no_c_abi():
    spec = plugsq_spec([Param("scale", (float,), 1.0, "factor")])
    assert not spec.has_c_abi
    with pytest.raises(InvalidArgumentError, match=r"op 'plugsq' has no C ABI: param\(s\) scale declare no ctype"):
        cdecl.prototypes(spec)


def test_param_c_types_are_checked():
    with pytest.raises(InvalidArgumentError, match="ctype 'double' is not one of float, int32_t"):
        Param("eps", (float,), 0.0, "x", ctype="double")
    with pytest.raises(InvalidArgumentError, match="needs c_none"):
        Param("axis", (int,), 0, "x", allow_none=True, ctype="int32_t")


def test_the_generated_header_of_a_third_party_op_parses_and_compiles(tmp_path):
    cffi = pytest.importorskip("cffi")
    spec = plugsq_spec([Param("eps", (float, int), 0.5, "added", ctype="float")])
    text = cdecl.header([spec], "OPRT_PLUGSQ_H_")
    ffi = cffi.FFI()
    ffi.cdef(cdef() + oprt_build.parse_cdef(text))  # the cffi declarations of a backend that builds the op in
    assert "oprt_plugsq_descriptor_t" in ffi.list_types()[0]
    assert str(ffi.typeof("oprt_status_t(*)(oprt_plugsq_descriptor_t *, const oprt_tensor_desc_t *, "
                          "const oprt_tensor_desc_t *, float)")).startswith("<ctype")
    cc = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) to compile the generated header")
    (tmp_path / "oprt_plugsq.h").write_text(text)
    src = tmp_path / "use.c"
    src.write_text('#include "oprt_plugsq.h"\n'
                   "oprt_status_t (*create)(oprt_plugsq_descriptor_t *, const oprt_tensor_desc_t *,\n"
                   "                        const oprt_tensor_desc_t *, float) = oprt_create_plugsq_descriptor;\n")
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-fsyntax-only", f"-I{include_dir()}",
                           f"-I{tmp_path}", str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# -- marshalling --------------------------------------------------------------------------------------------------

def test_a_compiled_backend_takes_a_third_party_op_with_a_c_abi(host_backend):
    spec = plugsq_spec([Param("eps", (float,), 0.5, "added", ctype="float")])
    assert not host_backend.supports("plugsq", "f32").ok
    with pytest.raises(InvalidArgumentError, match="oprt_core.compiled.c_abi_impl for .plugsq."):
        host_backend.add_op(spec, lambda *a: None)
    with pytest.raises(InvalidArgumentError, match="has no C ABI"):
        host_backend.add_op(plugsq_spec([Param("k", (float,), 1.0, "k")]), c_abi_impl)
    host_backend.add_op(spec, c_abi_impl)
    try:
        # the host library has no plugsq kernel: the entry points are looked up by their generated names
        sup = host_backend.supports("plugsq", "f32")
        assert not sup.ok and "does not implement 'plugsq'" in sup.reason
        x = host_backend.to_device(np.ones(7, np.float32))
        with pytest.raises(UnsupportedCase, match="the library does not implement 'plugsq'"):
            host_backend.prepare("plugsq", [x], host_backend.empty((7,), "f32"), {"eps": 0.25})
    finally:
        del host_backend._specs["plugsq"]


# -- ops.<op> -------------------------------------------------------------------------------------------------------

def test_op_functions_are_made_from_the_specs():
    for spec in operators.specs("core"):
        fn = getattr(ops, spec.name)
        sig = inspect.signature(fn)
        assert list(sig.parameters) == [*spec.input_names, *(p.name for p in spec.params), "backend", "out"]
        assert [sig.parameters[p.name].default for p in spec.params] == [p.default for p in spec.params]
        assert fn.__module__ == "oprt_core.ops" and spec.name in ops.__all__


def test_an_op_function_for_a_registered_plugin_op(monkeypatch):
    from oprt_core import plugins

    spec = plugsq_spec([Param("eps", (float, int), 0.5, "added", ctype="float")])

    class Registry:
        def get_op(self, name):
            if name == "plugsq":
                return spec
            raise KeyError(name)

    monkeypatch.setattr(plugins, "get_registry", lambda: Registry())
    monkeypatch.setattr(ops, "get_registry", lambda: Registry())
    fn = ops.plugsq
    assert list(inspect.signature(fn).parameters) == ["x", "eps", "backend", "out"]
    assert ops.plugsq is fn  # made once per spec
    with pytest.raises(AttributeError, match="no op 'cube' is registered"):
        ops.cube  # noqa: B018


# -- no per-op code where the spec is consumed ------------------------------------------------------------------------

# the generic consumers of the spec: none may name a built-in op in code (a string literal equal to an op's name or
# holding one of its C names, a variable, function or class named after it, an attribute oprt_<op>...), so a new op
# needs nothing there. Allowed: compiled.py's cache flush reads its buffer back with the
# library's reduce_sum (a use of that op, not code for it).
CONSUMERS = ["compiled.py", "ops.py", "cabi.py", "cdecl.py", "validate.py", "build.py", "numpy_backend.py",
             "builtin.py"]


@pytest.mark.parametrize("path", CONSUMERS)
def test_no_per_op_code_where_the_spec_is_consumed(path):
    tree = ast.parse((SRC / path).read_text(encoding="utf-8"))
    c_names = {name: op for op in operators.names() for name in cdecl.entry_points(op)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in operators.names():
                found.add(node.value)
            found.update(op for name, op in c_names.items() if re.search(rf"\b{name}\b", node.value))
        elif isinstance(node, ast.Name) and node.id in operators.names():
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in c_names:
            found.add(c_names[node.attr])
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in operators.names():
            found.add(node.name)
    assert found == set(), f"{path} has code for ops {sorted(found)}"
