#!/usr/bin/env python3
"""Where the op API's host time goes: each piece of its fast path timed alone (the <= 10 us host-overhead target).

    python scripts/host_profile.py [--backend nvidia|numpy|host] [--calls 20000]

scripts/host_overhead.py times whole calls; this times the parts of one ``ops.<op>(x, out=o)`` call with a prepared
descriptor (oprt_core/ops.py's fast path), median nanoseconds over ``--calls`` calls each, timed in batches of 200
(``time.perf_counter_ns`` around the batch, so the timer's own cost is not in the figure), GPU work synchronised
between batches. The op is the first core op of one input and one float param (its params key is that float's 8
bytes). With ``--backend numpy`` (no GPU, no cupy) it times the parts that do not launch, on CPU torch tensors. With
``--backend host`` (no GPU) it builds the tests' host C library of oprt.h (tests/oprt_core/host_lib, with the
``oprt_ptrs_<op>`` entry points) and times whole op-API calls through it on small device arrays of that backend
(every core op, and the ops of four arrays or more): the fast path with a real C call at the end, so two versions of
ops.py can be compared on any machine. The first row, a pure-Python loop, says how fast this host's CPU is, so that
figures from two hosts can be compared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def per_call_ns(fn, calls: int, sync) -> float:
    """Median over batches of 200 calls of the time per call, in ns, after one warm-up batch."""
    batch = 200
    for _ in range(batch):
        fn()
    sync()
    per = []
    for _ in range(max(1, calls // batch)):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        per.append((time.perf_counter_ns() - t0) / batch)
        sync()
    return statistics.median(per)


def py_loop() -> int:
    s = 0
    for i in range(100):
        s += i
    return s


def profiled_op():
    """The spec of the op profiled: the first core op of one input and one float param."""
    from oprt_core import operators

    return next(s for s in operators.specs("core") if s.n_inputs == 1 and len(s.params) == 1
                and float in s.params[0].types)


def call_label(spec, how: str = "") -> str:
    """``ops.<op>(<inputs>, out=)``, and how many arrays a call of it takes where that is four or more."""
    outs = "out=" if spec.n_outputs == 1 else f"out=({', '.join(spec.output_names)})"
    arrays = spec.min_inputs + spec.n_outputs
    return (f"ops.{spec.name}({', '.join(spec.input_names[:spec.min_inputs])}, {outs})" + how
            + (f" ({arrays} arrays)" if arrays >= 4 else ""))


def host_library_calls(calls: int) -> int:
    """Whole op-API calls through the tests' host C library (a CompiledBackend named ``host``), no GPU: every core op
    and the ops of four arrays or more, on one-element arrays (a 3-dim first input where the op takes no other:
    ``(1, 1, 2)``)."""
    import importlib.util
    import tempfile
    from pathlib import Path

    import numpy as np

    import oprt_core.ops as ops
    from oprt_core import operators
    from oprt_core.compiled import CompiledBackend
    from oprt_core.errors import InvalidArgumentError
    from oprt_core.plugins import get_registry

    tests = Path(__file__).resolve().parents[1] / "tests"
    sys.path.insert(0, str(tests))  # the test helpers the host library's build reads (op_helpers), as pytest has it
    conftest = tests / "oprt_core" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_host_lib_conftest", conftest)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lib = mod.build_host_library(Path(tempfile.mkdtemp(prefix="oprt-host-lib-")))
    be = CompiledBackend("host", mod.host_loader(lib), vendor="host")
    get_registry().backends["host"] = be
    rng = np.random.default_rng(0)

    def small_call(spec):
        """ops.<op> on one-element device arrays (default params), out given."""
        for shape in ((1,), (1, 1, 2)):
            try:
                case = spec.custom_case(shape)
                break
            except InvalidArgumentError:
                continue
        ins = [be.to_device(x) for x in spec.make_inputs(case, "f32", rng)]
        outs = tuple(be.empty(s, "f32") for s in spec.output_shapes([x.shape for x in ins], spec.validate_params({})))
        fn = getattr(ops, spec.name)
        return lambda: fn(*ins, backend="host", out=outs if len(outs) > 1 else outs[0])

    op = profiled_op()
    whole = small_call(op)
    whole()  # prepares the descriptor and files the fast path's entry
    launcher = next(iter(ops._fast.values()))[1]
    x, o = be.to_device(rng.uniform(-1, 1, (1,)).astype(np.float32)), be.empty((1,), "f32")
    params = {op.params[0].name: 0.0}
    runs = [s for s in operators.specs() if be.supports(s.name, "f32").ok]  # an op the library lacks: left out
    many = [s for s in runs if operators.group(s.name) != "core" and s.min_inputs + s.n_outputs >= 4]
    pieces = [
        ("pure-Python loop of 100 adds (host speed)", py_loop),
        ("launcher() (prepared buffers)", launcher),
        (call_label(op, " (the whole call)"), whole),
        *((call_label(s), small_call(s)) for s in runs if operators.group(s.name) == "core" and s is not op),
        *((call_label(s), small_call(s)) for s in many),
        (f"ops.run('{op.name}', [x], out=)", lambda: ops.run(op.name, [x], params, backend="host", out=o)),
    ]
    print(f"backend host (tests/oprt_core/host_lib, CPU), 1-element f32 device arrays, median ns per call over "
          f"batches of 200 ({calls} calls)")
    for name, fn in pieces:
        print(f"{per_call_ns(fn, calls, lambda: None):9.0f}  {name}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="nvidia")
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()

    if args.backend == "host":
        return host_library_calls(args.calls)

    import torch

    import oprt_core.ops as ops
    from oprt_core.plugins import get_registry

    op = profiled_op()
    name = op.name
    fn = getattr(ops, name)
    gpu = args.backend != "numpy"
    reg = get_registry()
    be = reg.get_backend(args.backend)
    if gpu:
        avail = be.availability()
        if not avail.ok:
            print(f"error: backend {args.backend!r} unavailable: {avail.reason}", file=sys.stderr)
            return 2
    dev = "cuda" if gpu else "cpu"
    x = torch.rand(64, 128, device=dev) - 0.5
    o = torch.empty(64, 128, device=dev)
    params = {op.params[0].name: 0.0}

    def sync() -> None:
        if gpu:
            torch.cuda.synchronize()

    pieces = [
        ("pure-Python loop of 100 adds (host speed)", py_loop),
        ("empty Python call", lambda: None),
        ("torch signature (_signature)", lambda: ops._signature(x)),
        ("params key of run() (_params_key)", lambda: ops._params_key(params)),
        (f"params key of ops.{name} (a float's 8 bytes)", lambda: ops._f64_bytes(0.0)),
        ("get_registry()", ops.get_registry),
        ("run()'s key and lookup, a miss (_fast_launch)",
         lambda: ops._fast_launch(name, ops._params_key(params), args.backend, o, [x])),
    ]
    if gpu:
        import cupy as cp

        from oprt_core import operators

        xc, oc = cp.asarray(x), cp.asarray(o)
        fn(x, backend=args.backend, out=o)  # prepares the descriptor and files the fast path's entry
        (so, out_ptr), (sx, in_ptr) = ops._signature(o), ops._signature(x)
        key = (name, args.backend, ops._f64_bytes(0.0), so, sx)  # the op function's key (ops._fast_launch)
        entry = ops._fast[key]
        reg, launcher, backend, call = entry
        torch_own = next(impl for backend, op_name, impl in operators.implementations()
                         if backend == "torch" and op_name == name)(torch, [x], o, op.validate_params(params))
        pieces += [
            ("cupy signature (_signature)", lambda: ops._signature(xc)),
            ("fast-path lookup (_fast.get)", lambda: ops._fast.get(key)),
            ("registry and backend check", lambda: reg is ops.get_registry() and reg.backends.get(args.backend)
             is backend),
            ("launcher() (prepared buffers)", launcher),
            ("the entry's launch call(out, x) (the fast path's launch)", lambda: call(out_ptr, in_ptr)),
            (f"ops.{name}(torch, out=) (the whole call)", lambda: fn(x, backend=args.backend, out=o)),
            (f"ops.{name}(cupy, out=) (the whole call)", lambda: fn(xc, backend=args.backend, out=oc)),
            (f"ops.run('{name}', [torch], out=) (the whole call)",
             lambda: ops.run(name, [x], params, backend=args.backend, out=o)),
            (f"torch's own {name} (its folder's torch implementation)", torch_own),
        ]
    print(f"backend {args.backend}, 64 x 128 f32, median ns per call over batches of 200 ({args.calls} calls)")
    for name, fn in pieces:
        print(f"{per_call_ns(fn, args.calls, sync):9.0f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
