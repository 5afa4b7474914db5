"""The C ABI of an op, derived from its :class:`~oprt_core.spec.OpSpec`: the prototypes and the argument marshalling.

An op with a C ABI (``spec.has_c_abi``: every param declares its ``Param.ctype``) has four entry points, named
and shaped alike for every op:

    oprt_status_t oprt_create_<op>_descriptor(oprt_<op>_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                              const oprt_tensor_desc_t *<input>..., <ctype> <param>...);
    oprt_status_t oprt_get_<op>_workspace_size(oprt_<op>_descriptor_t desc, size_t *size);
    oprt_status_t oprt_<op>(oprt_<op>_descriptor_t desc, void *workspace, size_t workspace_size,
                            void *out, const void *<input>..., oprt_stream_t stream);
    oprt_status_t oprt_destroy_<op>_descriptor(oprt_<op>_descriptor_t desc);

An op with several outputs (``spec.outputs``) takes one ``const oprt_tensor_desc_t *<output>`` and one
``void *<output>`` per output, named and ordered as declared, in place of ``out``.
An optional input (``spec.optional_inputs``, matmul's ``c``) has its tensor and pointer like any other; a caller
leaving it out passes NULL for both (:meth:`~oprt_core.compiled.CompiledBackend.prepare` does).

:func:`prototypes` writes them from the spec; the core ops' are the generated region of oprt.h (between
``OPRT_OPS_BEGIN`` and ``OPRT_OPS_END``, inside the cffi declarations), kept equal to this module's output by
``python -m oprt_core.cdecl --check`` (a test runs it; ``--write`` regenerates). A third-party op gets a header
of its own from :func:`header` (``python -m oprt_core.cdecl --header module:spec``), which a compiled backend's
kernels include and its cffi build declares (``NativeBuild.extra_cdef``). :func:`c_params` marshals validated
params to the C values of the create call, by their declared C types; CompiledBackend uses nothing else.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import InvalidArgumentError
from .spec import OpSpec

__all__ = ["entry_points", "prototypes", "ops_region", "header", "entry_macro", "entry_header", "plan_includes",
           "for_each_op", "c_params", "c_abi_ops", "OPS_BEGIN", "OPS_END", "main"]

OPS_BEGIN = "/* OPRT_OPS_BEGIN */"
OPS_END = "/* OPRT_OPS_END */"
_WIDTH = 110  # oprt.h's line length


def entry_points(op: str) -> tuple[str, str, str, str]:
    """(create, workspace size, launch, destroy): the C names of ``op``'s entry points."""
    return (f"oprt_create_{op}_descriptor", f"oprt_get_{op}_workspace_size", f"oprt_{op}",
            f"oprt_destroy_{op}_descriptor")


def _function(name: str, args: Sequence[str]) -> str:
    """``oprt_status_t name(args);``, wrapped under the open parenthesis where it passes the line length."""
    head = f"oprt_status_t {name}("
    lines, line = [], head
    for i, arg in enumerate(args):
        text = arg + (");" if i == len(args) - 1 else ",")
        if line != head and len(line) + 1 + len(text) > _WIDTH:
            lines.append(line)
            line = " " * len(head) + text
        else:
            line += ("" if line == head else " ") + text
    lines.append(line)
    return "\n".join(lines)


def _comment(spec: OpSpec) -> list[str]:
    """The op's doc, then one line per param: its C type, meaning and the C value standing for None."""
    lines = [f"/* ---- {spec.name}: {spec.doc.rstrip('.')} ----"]
    for name, dts in spec.index_inputs.items():
        lines.append(f" * {name} (an index tensor): {' or '.join(dts)}")
    for name in spec.optional_inputs:
        may = "; out may be exactly it (in place)" if name in spec.inplace and not spec.multi_output else ""
        lines.append(f" * {name} (optional): NULL tensor and pointer where left out{may}")
    if spec.multi_output:
        for o in spec.outputs:
            may = f"; may be exactly {' or '.join(o.inplace)} (in place)" if o.inplace else ""
            lines.append(f" * {o.name} (output): {o.doc or 'an output'}{may}")
    for p in spec.params:
        kind = f"{p.ctype}, 0 or 1" if bool in p.types else p.ctype
        if p.choices:
            kind = f"{p.ctype}: " + ", ".join(f"{i} {c}" for i, c in enumerate(p.choices))
        none = f" (None is passed as {p.c_none})" if p.allow_none else ""
        lines.append(f" * {p.name} ({kind}): {p.doc}{none}")
    lines[-1] += " */"
    return lines


def prototypes(spec: OpSpec) -> str:
    """The C declarations of ``spec``'s entry points (a comment, the descriptor typedef, the four functions);
    plain C that cffi's ``cdef`` reads. InvalidArgumentError for an op without a C ABI."""
    if not spec.has_c_abi:
        missing = [p.name for p in spec.params if p.ctype is None]
        raise InvalidArgumentError(f"op {spec.name!r} has no C ABI: param(s) {', '.join(missing)} declare no ctype")
    op, desc_t = spec.name, f"oprt_{spec.name}_descriptor_t"
    create, workspace, launch, destroy = entry_points(op)
    ins = spec.input_names
    lines = _comment(spec)
    outs = spec.output_names
    lines.append(f"typedef struct oprt_{op}_descriptor *{desc_t};")
    lines.append(_function(create, [f"{desc_t} *desc", *(f"const oprt_tensor_desc_t *{o}" for o in outs),
                                    *(f"const oprt_tensor_desc_t *{n}" for n in ins),
                                    *(f"{p.ctype} {p.name}" for p in spec.params)]))
    lines.append(_function(workspace, [f"{desc_t} desc", "size_t *size"]))
    lines.append(_function(launch, [f"{desc_t} desc", "void *workspace", "size_t workspace_size",
                                    *(f"void *{o}" for o in outs), *(f"const void *{n}" for n in ins),
                                    "oprt_stream_t stream"]))
    lines.append(_function(destroy, [f"{desc_t} desc"]))
    return "\n".join(lines) + "\n"


def ops_region(specs: Iterable[OpSpec]) -> str:
    """The generated region of oprt.h: the markers around every op's :func:`prototypes`."""
    return OPS_BEGIN + "\n\n" + "\n".join(prototypes(s) for s in specs) + OPS_END


def header(specs: Iterable[OpSpec], guard: str) -> str:
    """A header declaring third-party ops' entry points, to include after oprt.h: C and C++, its declarations
    between OPRT_CDEF markers (``oprt_core.build.parse_cdef`` reads them for cffi)."""
    specs = list(specs)
    body = "\n".join(prototypes(s) for s in specs)
    return ("/* Generated from the op specs by oprt_core.cdecl (python -m oprt_core.cdecl --header); edit the specs,\n"
            " * not this. */\n"
            f"#ifndef {guard}\n#define {guard}\n\n#include \"oprt.h\"\n\n"
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
            f"/* OPRT_CDEF_BEGIN */\n{body}/* OPRT_CDEF_END */\n\n"
            "#ifdef __cplusplus\n}\n#endif\n\n"
            "/* The entry points around a backend's plan and launch functions: OPRT_DEFINE_OP(<op>, State, plan_fn,\n"
            " * launch_fn), with oprt_entry.h included first (it says how). */\n"
            + "\n".join(entry_macro(s) for s in specs) +
            f"\n#endif /* {guard} */\n")


def _signature(name: str, args: Sequence[str]) -> list[str]:
    """The lines of ``    oprt_status_t name(args) {`` wrapped under the open parenthesis (a macro body's)."""
    return ["    " + line for line in (_function(name, args)[:-1] + " {").split("\n")]


def _create_prologue(op: str, struct: str, plan_args: str) -> list[str]:
    """The start of an entry macro's create function: allocate the descriptor, run plan_fn(plan_args), free it on
    failure."""
    return [
        "        OPRT_CHECK_NOT_NULL(desc);",
        "        *desc = NULL;",
        f"        {struct} *d_ = ({struct} *)calloc(1, sizeof *d_);",
        f'        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "{op}: out of host memory");',
        f"        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, {plan_args});",
        "        if (s_ != OPRT_STATUS_SUCCESS) {",
        "            free(d_);",
        "            return s_;",
        "        }",
    ]


def _workspace_and_destroy(workspace: str, destroy: str, desc_t: str) -> tuple[list[str], list[str]]:
    """An entry macro's workspace-size and destroy functions (the same for every op)."""
    return [
        f"    oprt_status_t {workspace}({desc_t} desc, size_t *size) {{",
        "        OPRT_CHECK_NOT_NULL(desc);",
        "        OPRT_CHECK_NOT_NULL(size);",
        "        *size = desc->common.workspace_size;",
        "        return OPRT_STATUS_SUCCESS;",
        "    }",
    ], [
        f"    oprt_status_t {destroy}({desc_t} desc) {{",
        "        OPRT_CHECK_NOT_NULL(desc);",
        "        free(desc);",
        "        return OPRT_STATUS_SUCCESS;",
        "    }",
    ]


def _macro(lines: list[str]) -> str:
    """Lines joined into one C macro, the continuation backslashes aligned."""
    width = max(len(line) for line in lines) + 1
    return " \\\n".join(line.ljust(width) for line in lines[:-1]) + " \\\n" + lines[-1]


def entry_macro(spec: OpSpec) -> str:
    """``OPRT_DEFINE_OP_<op>(State, plan_fn, launch_fn)``: a C macro defining ``spec``'s four entry points around a
    backend's two functions, so the backend writes only those (oprt_entry.h says how)."""
    if not spec.has_c_abi:
        raise InvalidArgumentError(f"op {spec.name!r} has no C ABI")
    if spec.multi_output:
        return _entry_macro_outputs(spec)
    op, ins, n = spec.name, spec.input_names, spec.n_inputs
    desc_t, struct = f"oprt_{op}_descriptor_t", f"struct oprt_{op}_descriptor"
    create, workspace, launch, destroy = entry_points(op)
    workspace_fn, destroy_fn = _workspace_and_destroy(workspace, destroy, desc_t)
    tensors = ["const oprt_tensor_desc_t *out", *(f"const oprt_tensor_desc_t *{i}" for i in ins)]
    params = [f"{p.ctype} {p.name}" for p in spec.params]
    pnames = "".join(f", {p.name}" for p in spec.params)
    inames = ", ".join(ins)
    quoted = ", ".join(f'"{i}"' for i in ins)
    inplace = [f"        d_->common.alias.inplace[{k}] = 1;" for k, i in enumerate(ins) if i in spec.inplace]
    lines = [
        f"#define OPRT_DEFINE_OP_{op}(State, plan_fn, launch_fn)",
        f"    {struct} {{",
        "        oprt_op_common_t common;",
        "        State state;",
        "    };",
        *_signature(create, [f"{desc_t} *desc", *tensors, *params]),
        *_create_prologue(op, struct, f"out, {inames}{pnames}"),
        f"        const oprt_tensor_desc_t *ins_[{n}] = {{{inames}}};",
        f"        oprt_op_common_init(&d_->common, out, ins_, {n});",
        *inplace,
        "        *desc = d_;",
        "        return OPRT_STATUS_SUCCESS;",
        "    }",
        *workspace_fn,
        *_signature(launch, [f"{desc_t} desc", "void *workspace", "size_t workspace_size", "void *out",
                             *(f"const void *{i}" for i in ins), "oprt_stream_t stream"]),
        "        OPRT_ENTRY_LAUNCH_PROLOGUE();",
        "        OPRT_CHECK_NOT_NULL(desc);",
        f"        const void *ins_[{n}] = {{{inames}}};",
        f"        static const char *const names_[{n}] = {{{quoted}}};",
        f'        OPRT_CHECK(oprt_check_launch(&desc->common, "{op}", workspace, workspace_size, out, ins_, names_));',
        f"        return launch_fn(&desc->state, workspace, out, {inames}, stream);",
        "    }",
        *destroy_fn,
    ]
    body = _macro(lines)
    return f"/* {op}: launch_fn(const State *, void *workspace, void *out, const void *{', const void *'.join(ins)}, " \
           f"oprt_stream_t) */\n{body}\n"


def _entry_macro_outputs(spec: OpSpec) -> str:
    """:func:`entry_macro` of an op with several outputs: the outputs' tensors and pointers first, each output's
    aliasing of the inputs as its :class:`~oprt_core.spec.Output` declares (``oprt_op_outputs_t``,
    ``oprt_check_launch_outputs``: no two outputs may overlap)."""
    op, ins, n = spec.name, spec.input_names, spec.n_inputs
    outs, m = spec.output_names, spec.n_outputs
    desc_t, struct = f"oprt_{op}_descriptor_t", f"struct oprt_{op}_descriptor"
    create, workspace, launch, destroy = entry_points(op)
    workspace_fn, destroy_fn = _workspace_and_destroy(workspace, destroy, desc_t)
    tensors = [*(f"const oprt_tensor_desc_t *{o}" for o in outs), *(f"const oprt_tensor_desc_t *{i}" for i in ins)]
    params = [f"{p.ctype} {p.name}" for p in spec.params]
    pnames = "".join(f", {p.name}" for p in spec.params)
    inames, onames = ", ".join(ins), ", ".join(outs)
    quoted = ", ".join(f'"{i}"' for i in ins)
    oquoted = ", ".join(f'"{o}"' for o in outs)
    inplace = [f"        d_->common.alias[{j}].inplace[{k}] = 1;" for j, o in enumerate(spec.outputs)
               for k, i in enumerate(ins) if i in o.inplace]
    lines = [
        f"#define OPRT_DEFINE_OP_{op}(State, plan_fn, launch_fn)",
        f"    {struct} {{",
        "        oprt_op_outputs_t common;",
        "        State state;",
        "    };",
        *_signature(create, [f"{desc_t} *desc", *tensors, *params]),
        *_create_prologue(op, struct, f"{onames}, {inames}{pnames}"),
        f"        const oprt_tensor_desc_t *outs_[{m}] = {{{onames}}};",
        f"        const oprt_tensor_desc_t *ins_[{n}] = {{{inames}}};",
        f"        oprt_op_outputs_init(&d_->common, outs_, {m}, ins_, {n});",
        *inplace,
        "        *desc = d_;",
        "        return OPRT_STATUS_SUCCESS;",
        "    }",
        *workspace_fn,
        *_signature(launch, [f"{desc_t} desc", "void *workspace", "size_t workspace_size",
                             *(f"void *{o}" for o in outs), *(f"const void *{i}" for i in ins),
                             "oprt_stream_t stream"]),
        "        OPRT_ENTRY_LAUNCH_PROLOGUE();",
        "        OPRT_CHECK_NOT_NULL(desc);",
        f"        void *const outs_[{m}] = {{{onames}}};",
        f"        const void *ins_[{n}] = {{{inames}}};",
        f"        static const char *const onames_[{m}] = {{{oquoted}}};",
        f"        static const char *const names_[{n}] = {{{quoted}}};",
        f'        OPRT_CHECK(oprt_check_launch_outputs(&desc->common, "{op}", workspace, workspace_size, outs_, '
        'onames_, ins_,',
        "                                             names_));",
        f"        return launch_fn(&desc->state, workspace, {onames}, {inames}, stream);",
        "    }",
        *destroy_fn,
    ]
    body = _macro(lines)
    return f"/* {op}: launch_fn(const State *, void *workspace, void *{', void *'.join(outs)}, " \
           f"const void *{', const void *'.join(ins)}, oprt_stream_t) */\n{body}\n"


ENTRY_PREAMBLE = """/*
 * oprt_entry.h: the ops' C entry points, written around a backend's own two functions per op. Generated from the
 * op specs by oprt_core.cdecl (python -m oprt_core.cdecl --write); edit the specs, not this.
 *
 * A backend source that includes oprt_validate.h and this header implements an op by
 *     OPRT_DEFINE_OP(<op>, State, plan_fn, launch_fn)
 * at file scope, inside extern "C" in C++, with
 *     oprt_status_t plan_fn(State *state, size_t *workspace_size, const oprt_tensor_desc_t *out,
 *                           const oprt_tensor_desc_t *<input>..., <ctype> <param>...);
 *     oprt_status_t launch_fn(const State *state, void *workspace, void *out, const void *<input>...,
 *                             oprt_stream_t stream);
 * An op with several outputs takes one tensor and one pointer per output, in its declared order, where these take
 * `out`<several outputs>; its launch also refuses two outputs that share memory (oprt_check_launch_outputs).
 * An optional input<optional input> left out is a NULL tensor in create (plan_fn gets NULL and decides what that
 * means) and a pointer the launch checks do not look at (launch_fn gets it as given, NULL from oprt_core).
 * plan_fn validates (the op's oprt_plan_<op>, from its folder's plan.h, included below) and fills the state, a plain
 * struct copied by value and freed with the descriptor; launch_fn runs the kernel. The macro defines the descriptor,
 * its create, workspace size and destroy, and a launch that checks the descriptor, the workspace, NULL pointers and
 * the aliasing the op declares (oprt_check_launch) before calling launch_fn.
 */
#ifndef OPRT_ENTRY_H_
#define OPRT_ENTRY_H_

#include <stdlib.h>

#include "oprt_validate.h"

/* Run first in every launch the macros define, before its checks, so that it runs for a call they refuse too: a
 * backend may define it, before or after including this header, to reset per-call state (the GPU kernels' note of
 * the call's launches: common.cuh). Nothing by default. */
#ifndef OPRT_ENTRY_LAUNCH_PROLOGUE
#define OPRT_ENTRY_LAUNCH_PROLOGUE() ((void)0)
#endif

"""

ENTRY_MACRO = """#define OPRT_DEFINE_OP(op, State, plan_fn, launch_fn) OPRT_DEFINE_OP_##op(State, plan_fn, launch_fn)

"""


def _operators_dir() -> Path:
    return Path(__file__).resolve().parent / "operators"


def plan_includes(specs: Iterable[OpSpec], operators_dir: Path | None = None) -> str:
    """The ``#include`` lines of oprt_entry.h for the ops' plans: ``operators/<op>/plan.h`` (the op's
    ``oprt_plan_<op>``) of each op whose folder has one, relative to the include folder (its sibling)."""
    folder = _operators_dir() if operators_dir is None else Path(operators_dir)
    found = [s.name for s in specs if (folder / s.name / "plan.h").is_file()]
    if not found:
        return ""
    lines = "".join(f'#include "../operators/{op}/plan.h"\n' for op in found)
    return "/* each op's oprt_plan_<op> (oprt_core/operators/<op>/plan.h) */\n" + lines + "\n"


def for_each_op(specs: Iterable[OpSpec]) -> str:
    """``OPRT_FOR_EACH_OP(X)``: ``X(<op>)`` for each op, in order, so that C code doing one thing for every op (a
    skeleton library defining each as unsupported) names none by hand."""
    items = [f"X({s.name})" for s in specs]
    lines, line = [], "#define OPRT_FOR_EACH_OP(X)"
    for item in items:
        if len(line) + 1 + len(item) > _WIDTH - 2:
            lines.append(line)
            line = "    " + item
        else:
            line += " " + item
    lines.append(line)
    return ("/* Every op of oprt.h, in its order: OPRT_FOR_EACH_OP(X) is X(<op>) for each (with OPRT_DEFINE_OP: the\n"
            " * same entry points for all of them, as docs/how-to-add-a-backend.md's skeleton does). */\n"
            + " \\\n".join(lines) + "\n\n")


def _entry_preamble(specs: Sequence[OpSpec]) -> str:
    """ENTRY_PREAMBLE, its examples (an op of several outputs, an optional input) the first such of ``specs``."""
    multi = next((s for s in specs if s.multi_output), None)
    optional = next((s for s in specs if s.optional_inputs), None)
    return (ENTRY_PREAMBLE
            .replace("<several outputs>", f" ({multi.name}: {', '.join(multi.output_names)})" if multi else "")
            .replace("<optional input>", f" ({optional.name}'s {optional.optional_inputs[0]})" if optional else ""))


def entry_header(specs: Iterable[OpSpec]) -> str:
    """oprt_entry.h: the ops' plan headers (:func:`plan_includes`), :func:`for_each_op` and :func:`entry_macro` of
    each op."""
    specs = list(specs)
    return (_entry_preamble(specs) + plan_includes(specs) + for_each_op(specs) + ENTRY_MACRO
            + "\n".join(entry_macro(s) for s in specs) + "\n#endif /* OPRT_ENTRY_H_ */\n")


def _c_int32(value: int, what: str) -> int:
    value = int(value)
    if not -(1 << 31) <= value < (1 << 31):
        raise InvalidArgumentError(f"{what} {value} does not fit a C int32")
    return value


def c_params(spec: OpSpec, params: Mapping[str, Any]) -> tuple:
    """The C values of ``params`` (validated, defaults filled: ``spec.validate_params``) for the create call, in
    declaration order, by each param's C type: ``float`` as a Python float; ``int32_t`` as an int in range (a bool
    as 0 or 1, None as ``c_none``, a str of ``choices`` as its index), InvalidArgumentError naming the param
    otherwise."""
    values: list[Any] = []
    for p in spec.params:
        v = params[p.name]
        if p.ctype == "float":
            values.append(float(v))
        elif v is None:
            values.append(p.c_none)
        elif p.choices:
            values.append(p.choices.index(v))
        elif isinstance(v, bool):
            values.append(1 if v else 0)
        else:
            values.append(_c_int32(v, p.name))
    return tuple(values)


# -- the command line: keep oprt.h's region and third-party headers in step with the specs ----------------------

def c_abi_ops() -> tuple[OpSpec, ...]:
    """The ops of oprt.h's C ABI, in its order: the built-in ops (:mod:`oprt_core.operators`) in listing order (the
    core ops, the model ops, then the compute-bound ops)."""
    from . import operators

    return operators.specs()


def _oprt_h() -> Path:
    return Path(__file__).resolve().parent / "include" / "oprt.h"


def regenerate(text: str, specs: Iterable[OpSpec]) -> str:
    """``text`` (oprt.h) with its generated region replaced by the one of ``specs``."""
    start, end = text.find(OPS_BEGIN), text.find(OPS_END)
    if start < 0 or end < start:
        raise RuntimeError("oprt.h lacks its OPRT_OPS_BEGIN/END markers")
    return text[:start] + ops_region(specs) + text[end + len(OPS_END):]


def _load_spec(ref: str) -> OpSpec:
    module, _, attr = ref.partition(":")
    spec = getattr(importlib.import_module(module), attr)
    if not isinstance(spec, OpSpec):
        raise SystemExit(f"error: {ref} is a {type(spec).__name__}, not an OpSpec")
    return spec


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m oprt_core.cdecl",
                                     description="The C ABI generated from op specs (oprt_core.cdecl).")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when oprt.h's generated region is stale")
    mode.add_argument("--write", action="store_true", help="regenerate oprt.h's region from the core op specs")
    mode.add_argument("--header", nargs="+", metavar="MODULE:SPEC",
                      help="print a header declaring these specs' entry points (a third-party op's)")
    parser.add_argument("--guard", default=None, help="include guard of --header (default OPRT_<OP>_H_)")
    args = parser.parse_args(argv)
    if args.header:
        loaded = [_load_spec(ref) for ref in args.header]
        sys.stdout.write(header(loaded, args.guard or f"OPRT_{loaded[0].name.upper()}_H_"))
        return 0
    specs = c_abi_ops()
    path, entry = _oprt_h(), _oprt_h().with_name("oprt_entry.h")
    text = path.read_text(encoding="utf-8")
    fresh = regenerate(text, specs)
    entry_text = entry.read_text(encoding="utf-8") if entry.exists() else ""
    entry_fresh = entry_header(specs)
    if args.write:
        if fresh != text:
            path.write_text(fresh, encoding="utf-8")
        if entry_fresh != entry_text:
            entry.write_text(entry_fresh, encoding="utf-8")
        return 0
    stale = [f"{path}: the region between OPRT_OPS_BEGIN/END"] if fresh != text else []
    stale += [str(entry)] if entry_fresh != entry_text else []
    for what in stale:
        print(f"{what} is stale: run python -m oprt_core.cdecl --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
