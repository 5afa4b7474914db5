#!/usr/bin/env python3
"""Host overhead of one op call on a GPU backend (the target: <= 10 us with a prepared descriptor).

    python scripts/host_overhead.py [--backend nvidia] [--calls 5000] [--csv out.csv]

For each op, on a small tensor (the kernel's GPU time stays below the host time, so the host is
what is measured), times one call with ``time.perf_counter_ns`` around it, every call separately,
and reports the median and p90 in microseconds of:

  launcher()            the prepared launcher (C descriptor made once) on its own buffers
  launcher.run(...)     the prepared descriptor on caller buffers (layout checked per call)
  ops.<op>(cupy)        the functional API with cupy inputs and out, descriptor from its cache
  ops.<op>(torch)       the same with torch tensors
  torch                 torch's own call (copy_, add, clamp_min, sum, mul with out=; softmax and the norms
                        allocate), for scale

Ops: the core ops and the model ops (rms_norm, add_rms_norm and rope: two outputs, layer_norm, silu_mul, cross_entropy).

The stream is synchronised every 200 calls so the launch queue never fills (a full queue would
make a launch wait for the GPU, and the GPU time would be measured instead of the host's).

The calls are taken in ``--rounds`` rounds (default 5), each round visiting every op and every way of
calling it in turn, and the median and p90 are over all of a cell's calls. Measured one cell after the
other, copy, always first, was 1-3 us slower than relu through every path, torch's own copy included;
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


def _rope_torch(torch, q, k, cos, sin, pos):
    """neox rope in torch for scale (allocates, as a model's own code does)."""
    c, s = cos[pos][:, None, :], sin[pos][:, None, :]
    out = []
    for x in (q, k):
        x1, x2 = x[..., :c.shape[-1]], x[..., c.shape[-1]:]
        out.append(torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="nvidia")
    ap.add_argument("--calls", type=int, default=5000, help="calls per op and way of calling, over all rounds")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()

    import cupy as cp
    import torch

    import oprt_core.ops as ops
    from oprt_core.plugins import get_registry

    be = get_registry().get_backend(args.backend)
    avail = be.availability()
    if not avail.ok:
        print(f"error: backend {args.backend!r} unavailable: {avail.reason}", file=sys.stderr)
        return 2
    shape = (64, 128)
    rng = cp.random.default_rng(7)
    xc = rng.uniform(-1, 1, shape, dtype=cp.float32)
    yc = rng.uniform(-1, 1, shape, dtype=cp.float32)
    oc = cp.empty(shape, cp.float32)
    hc = cp.empty(shape, cp.float32)  # add_rms_norm's second output
    orow = cp.empty((shape[0],), cp.float32)
    wc = rng.uniform(0.5, 1.5, (shape[1],), dtype=cp.float32)
    bc = rng.uniform(-1, 1, (shape[1],), dtype=cp.float32)
    xt, yt, ot, ort, wt, bt, ht = (torch.as_tensor(a, device="cuda") for a in (xc, yc, oc, orow, wc, bc, hc))
    F = torch.nn.functional
    # cross_entropy's targets; rope on q and k of 2 heads of 64 over the same rows, a 64-position cos/sin cache
    tc = rng.integers(0, shape[1], (shape[0],), dtype=cp.int64)
    qc, kc = xc.reshape(shape[0], 2, shape[1] // 2), yc.reshape(shape[0], 2, shape[1] // 2)
    qoc, koc = cp.empty_like(qc), cp.empty_like(kc)
    cosc = rng.uniform(-1, 1, (shape[0], shape[1] // 4), dtype=cp.float32)
    sinc = rng.uniform(-1, 1, (shape[0], shape[1] // 4), dtype=cp.float32)
    pc = cp.arange(shape[0], dtype=cp.int64)
    tt, qt, kt, qot, kot, cost, sint, pt = (torch.as_tensor(a, device="cuda")
                                            for a in (tc, qc, kc, qoc, koc, cosc, sinc, pc))

    def sync() -> None:
        torch.cuda.synchronize()

    cases = [
        ("copy", [xc], {}, oc, [xt], ot, lambda: ot.copy_(xt)),
        ("vector_add", [xc, yc], {}, oc, [xt, yt], ot, lambda: torch.add(xt, yt, out=ot)),
        ("relu", [xc], {"negative_slope": 0.0}, oc, [xt], ot, lambda: torch.clamp_min(xt, 0.0, out=ot)),
        ("reduce_sum", [xc], {"axis": -1, "keepdims": False}, orow, [xt], ort,
         lambda: torch.sum(xt, -1, out=ort)),
        ("softmax", [xc], {"axis": -1}, oc, [xt], ot, lambda: torch.softmax(xt, -1)),  # no out= in torch
        # the model ops (torch's norms allocate their output: no out= either)
        ("rms_norm", [xc, wc], {"eps": 1e-6}, oc, [xt, wt], ot, lambda: F.rms_norm(xt, (shape[1],), wt, 1e-6)),
        ("add_rms_norm", [xc, yc, wc], {"eps": 1e-6}, (oc, hc), [xt, yt, wt], (ot, ht),
         lambda: F.rms_norm(torch.add(xt, yt, out=ht), (shape[1],), wt, 1e-6)),
        ("layer_norm", [xc, wc, bc], {"eps": 1e-5}, oc, [xt, wt, bt], ot,
         lambda: F.layer_norm(xt, (shape[1],), wt, bt, 1e-5)),
        ("silu_mul", [xc, yc], {}, oc, [xt, yt], ot, lambda: torch.mul(F.silu(xt), yt, out=ot)),
        ("cross_entropy", [xc, tc], {"ignore_index": -100, "reduction": "none"}, orow, [xt, tt], ort,
         lambda: F.cross_entropy(xt, tt, reduction="none")),
        ("rope", [qc, kc, cosc, sinc, pc], {"style": "neox"}, (qoc, koc), [qt, kt, cost, sint, pt], (qot, kot),
         lambda: _rope_torch(torch, qt, kt, cost, sint, pt)),
    ]
    rows = []
    per_round = max(1, args.calls // max(1, args.rounds))
    print(f"backend {args.backend}, shape {shape} f32, {args.rounds} rounds x {per_round} calls each, "
          "microseconds (median / p90)")
    print(f"{'op':<12} {'launcher()':>16} {'launcher.run':>16} {'ops(cupy)':>16} {'ops(torch)':>16} {'torch':>16}")
    calls = {}  # op -> {way of calling: fn}
    for op, ins_c, params, out_c, ins_t, out_t, torch_fn in cases:
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
            "torch": torch_fn,
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
