#!/usr/bin/env python3
"""Where the op API's host time goes: each piece of its fast path timed alone (the <= 10 us host-overhead target).

    python scripts/host_profile.py [--backend nvidia|numpy|host] [--calls 20000]

scripts/host_overhead.py times whole calls; this times the parts of one ``ops.relu(x, out=o)`` call with a prepared
descriptor (oprt_core/ops.py's fast path), median nanoseconds over ``--calls`` calls each, timed in batches of 200
(``time.perf_counter_ns`` around the batch, so the timer's own cost is not in the figure), GPU work synchronised
between batches. With ``--backend numpy`` (no GPU, no cupy) it times the parts that do not launch, on CPU torch
tensors. With ``--backend host`` (no GPU) it builds the tests' host C library of oprt.h (tests/oprt_core/host_lib,
with the ``oprt_ptrs_<op>`` entry points) and times whole op-API calls through it on one-element device arrays of
that backend: the fast path with a real C call at the end, so two versions of ops.py can be compared on any
machine. The first row, a pure-Python loop, says how fast this host's CPU is, so that figures from two hosts can be
compared.
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


def host_library_calls(calls: int) -> int:
    """Whole op-API calls through the tests' host C library (a CompiledBackend named ``host``), no GPU."""
    import importlib.util
    import tempfile
    from pathlib import Path

    import numpy as np

    import oprt_core.ops as ops
    from oprt_core.compiled import CompiledBackend
    from oprt_core.plugins import get_registry

    conftest = Path(__file__).resolve().parents[1] / "tests" / "oprt_core" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_host_lib_conftest", conftest)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lib = mod.build_host_library(Path(tempfile.mkdtemp(prefix="oprt-host-lib-")))
    be = CompiledBackend("host", mod.host_loader(lib), vendor="host")
    get_registry().backends["host"] = be
    rng = np.random.default_rng(0)
    x, y = (be.to_device(rng.uniform(-1, 1, (1,)).astype(np.float32)) for _ in range(2))
    o = be.empty((1,), "f32")
    ops.relu(x, backend="host", out=o)  # prepares the descriptor and files the fast path's entry
    launcher = next(iter(ops._fast.values()))[1]
    params = {"negative_slope": 0.0}
    # the ops of three arrays or more: layer_norm (x, weight, bias, out), add_rms_norm (two outputs, three inputs),
    # rope (two outputs, five inputs: one (1, 1, 2) head, a one-row cos / sin table, an int32 position)
    r, h = be.to_device(rng.uniform(-1, 1, (1,)).astype(np.float32)), be.empty((1,), "f32")
    w, b = (be.to_device(rng.uniform(-1, 1, (1,)).astype(np.float32)) for _ in range(2))
    q, k = (be.to_device(rng.uniform(-1, 1, (1, 1, 2)).astype(np.float32)) for _ in range(2))
    qo, ko = be.empty((1, 1, 2), "f32"), be.empty((1, 1, 2), "f32")
    cos, sin = (be.to_device(rng.uniform(-1, 1, (1, 1)).astype(np.float32)) for _ in range(2))
    pos = be.to_device(np.zeros((1,), np.int32))
    pieces = [
        ("pure-Python loop of 100 adds (host speed)", py_loop),
        ("launcher() (prepared buffers)", launcher),
        ("ops.relu(x, out=) (the whole call)", lambda: ops.relu(x, backend="host", out=o)),
        ("ops.copy(x, out=)", lambda: ops.copy(x, backend="host", out=o)),
        ("ops.vector_add(x, y, out=)", lambda: ops.vector_add(x, y, backend="host", out=o)),
        ("ops.softmax(x, out=)", lambda: ops.softmax(x, backend="host", out=o)),
        ("ops.layer_norm(x, w, b, out=) (4 arrays)", lambda: ops.layer_norm(x, w, b, backend="host", out=o)),
        ("ops.add_rms_norm(x, r, w, out=(o, h)) (5 arrays)",
         lambda: ops.add_rms_norm(x, r, w, backend="host", out=(o, h))),
        ("ops.rope(q, k, cos, sin, pos, out=(qo, ko)) (7 arrays)",
         lambda: ops.rope(q, k, cos, sin, pos, backend="host", out=(qo, ko))),
        ("ops.run('relu', [x], out=)", lambda: ops.run("relu", [x], params, backend="host", out=o)),
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
    params = {"negative_slope": 0.0}

    def sync() -> None:
        if gpu:
            torch.cuda.synchronize()

    pieces = [
        ("pure-Python loop of 100 adds (host speed)", py_loop),
        ("empty Python call", lambda: None),
        ("torch signature (_signature)", lambda: ops._signature(x)),
        ("params key of run() (_params_key)", lambda: ops._params_key(params)),
        ("params key of ops.relu (a float's 8 bytes)", lambda: ops._f64_bytes(0.0)),
        ("get_registry()", ops.get_registry),
        ("run()'s key and lookup, a miss (_fast_launch)",
         lambda: ops._fast_launch("relu", ops._params_key(params), args.backend, o, [x])),
    ]
    if gpu:
        import cupy as cp

        xc, oc = cp.asarray(x), cp.asarray(o)
        ops.relu(x, backend=args.backend, out=o)  # prepares the descriptor and files the fast path's entry
        (so, out_ptr), (sx, in_ptr) = ops._signature(o), ops._signature(x)
        key = ("relu", args.backend, ops._f64_bytes(0.0), so, sx)  # ops.relu's key (ops._fast_launch)
        entry = ops._fast[key]
        reg, launcher, backend, call = entry
        pieces += [
            ("cupy signature (_signature)", lambda: ops._signature(xc)),
            ("fast-path lookup (_fast.get)", lambda: ops._fast.get(key)),
            ("registry and backend check", lambda: reg is ops.get_registry() and reg.backends.get(args.backend)
             is backend),
            ("launcher() (prepared buffers)", launcher),
            ("the entry's launch call(out, x) (the fast path's launch)", lambda: call(out_ptr, in_ptr)),
            ("ops.relu(torch, out=) (the whole call)", lambda: ops.relu(x, backend=args.backend, out=o)),
            ("ops.relu(cupy, out=) (the whole call)", lambda: ops.relu(xc, backend=args.backend, out=oc)),
            ("ops.run('relu', [torch], out=) (the whole call)",
             lambda: ops.run("relu", [x], params, backend=args.backend, out=o)),
            ("torch.clamp_min(x, 0, out=o) (torch's own)", lambda: torch.clamp_min(x, 0.0, out=o)),
        ]
    print(f"backend {args.backend}, 64 x 128 f32, median ns per call over batches of 200 ({args.calls} calls)")
    for name, fn in pieces:
        print(f"{per_call_ns(fn, args.calls, sync):9.0f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
