#!/usr/bin/env python3
"""Host overhead of one op call on a GPU backend (the target: <= 10 us with a prepared descriptor).

    python scripts/host_overhead.py [--backend nvidia] [--calls 5000] [--csv out.csv]

For each op, on a small tensor (the kernel's GPU time stays below the host time, so the host is
what is measured: its first input 64 x 128 f32, or 64 tokens of 2 heads of 64 where it takes three dims; default
params), times one call with ``time.perf_counter_ns`` around it, every call separately, and reports the median and
p90 in microseconds of:

  launcher()            the prepared launcher (C descriptor made once) on its own buffers
  launcher.run(...)     the prepared descriptor on caller buffers (layout checked per call)
  ops.<op>(cupy)        the functional API with cupy inputs and out, descriptor from its cache
  ops.<op>(torch)       the same with torch tensors
  torch                 torch's own call on the torch tensors (the op folder's torch implementation), for scale

Ops: the core ops and the model ops (oprt_core.operators, groups "core" and "model").

The stream is synchronised every 200 calls so the launch queue never fills (a full queue would
make a launch wait for the GPU, and the GPU time would be measured instead of the host's).

The calls are taken in ``--rounds`` rounds (default 5), each round visiting every op and every way of
calling it in turn, and the median and p90 are over all of a cell's calls. Measured one cell after the
other, the first op, always first, was 1-3 us slower than the third through every path, torch's own call included;
rounds show whether that is the order or the op. The per-round medians go to the CSV
(``round_medians_us``), so a drift shows.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from functools import partial


def measure(fn, calls: int, sync) -> list[int]:
    """Nanoseconds of each of ``calls`` calls of ``fn``, after 200 warm-up calls."""
    for _ in range(200):  # warm-up: caches, lazy module state
        fn()
    sync()
    ts = []
    for i in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
        if i % 200 == 199:
            sync()
    sync()
    return ts


def summary_us(ts: list[int]) -> tuple[float, float]:
    s = sorted(ts)
    return statistics.median(s) / 1e3, s[int(0.9 * len(s))] / 1e3


def small_case(spec):
    """A small case of op ``spec``: its first input 64 x 128, or (64, 2, 64) where it takes three dims."""
    from oprt_core.errors import InvalidArgumentError

    for shape in ((64, 128), (64, 2, 64)):
        try:
            return spec.custom_case(shape)
        except InvalidArgumentError:
            continue
    raise SystemExit(f"error: op {spec.name!r} takes neither a 64 x 128 nor a 64 x 2 x 64 first input")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="nvidia")
    ap.add_argument("--calls", type=int, default=5000, help="calls per op and way of calling, over all rounds")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()

    import cupy as cp
    import numpy as np
    import torch

    import oprt_core.ops as ops
    from oprt_core import operators
    from oprt_core.plugins import get_registry

    be = get_registry().get_backend(args.backend)
    avail = be.availability()
    if not avail.ok:
        print(f"error: backend {args.backend!r} unavailable: {avail.reason}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(7)
    torch_own = {op: impl for backend, op, impl in operators.implementations() if backend == "torch"}

    def sync() -> None:
        torch.cuda.synchronize()

    # (op, params, cupy inputs, cupy out, torch inputs, torch out): the torch arrays are views of the cupy ones
    cases = []
    for spec in (*operators.specs("core"), *operators.specs("model")):
        case = small_case(spec)
        params = spec.validate_params(case.param_dict)
        ins_c = [cp.asarray(x) for x in spec.make_inputs(case, "f32", rng)]
        outs_c = tuple(cp.empty(shape, cp.float32) for shape in spec.output_shapes([x.shape for x in ins_c], params))
        ins_t = [torch.as_tensor(a, device="cuda") for a in ins_c]
        outs_t = tuple(torch.as_tensor(o, device="cuda") for o in outs_c)
        one = len(outs_c) == 1
        cases.append((spec.name, params, ins_c, outs_c[0] if one else outs_c, ins_t, outs_t[0] if one else outs_t))
    shape = small_case(operators.specs("core")[0]).shape
    rows = []
    per_round = max(1, args.calls // max(1, args.rounds))
    print(f"backend {args.backend}, shape {shape} f32, {args.rounds} rounds x {per_round} calls each, "
          "microseconds (median / p90)")
    print(f"{'op':<12} {'launcher()':>16} {'launcher.run':>16} {'ops(cupy)':>16} {'ops(torch)':>16} {'torch':>16}")
    calls = {}  # op -> {way of calling: fn}
    for op, params, ins_c, out_c, ins_t, out_t in cases:
        dev_in = [be.asarray(a) for a in ins_c]
        dev_out = tuple(be.asarray(o) for o in out_c) if isinstance(out_c, tuple) else be.asarray(out_c)
        launcher = be.prepare(op, dev_in, dev_out, params)
        fn = getattr(ops, op)
        kw = {k: v for k, v in params.items()}
        calls[op] = {
            "launcher()": launcher,
            "launcher.run": partial(launcher.run, ins_c, out_c),
            "ops(cupy)": partial(fn, *ins_c, backend=args.backend, out=out_c, **kw),
            "ops(torch)": partial(fn, *ins_t, backend=args.backend, out=out_t, **kw),
            "torch": torch_own[op](torch, ins_t, out_t, params),
        }
    samples: dict[tuple[str, str], list[int]] = {}
    medians: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for op, ways in calls.items():
            for how, f in ways.items():
                ts = measure(f, per_round, sync)
                samples.setdefault((op, how), []).extend(ts)
                medians.setdefault((op, how), []).append(round(statistics.median(ts) / 1e3, 3))
    for op, ways in calls.items():
        res = {how: summary_us(samples[(op, how)]) for how in ways}
        print(f"{op:<12} " + " ".join(f"{m:7.2f} / {p:6.2f}" for m, p in res.values()))
        for how, (m, p) in res.items():
            rows.append({"op": op, "call": how, "median_us": round(m, 3), "p90_us": round(p, 3),
                         "backend": args.backend, "calls": len(samples[(op, how)]), "rounds": args.rounds,
                         "round_medians_us": " ".join(str(v) for v in medians[(op, how)])})
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
