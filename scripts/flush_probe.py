#!/usr/bin/env python3
"""What the cold-mode L2 flush itself costs the sample after it (issue 6, the "fixed ~5 us" of small reductions).

    python scripts/flush_probe.py [--samples 60] [--csv out.csv]

oprt-bench's cold samples are ``flush ; event ; launch ; event``, and every backend's flush *writes* a
buffer of >= 2x L2 (oprt_memset, torch ``zero_``, cupy ``fill``), so the sample starts with L2 full of
dirty lines of the flush buffer: the op's first reads evict them and DRAM writes them back inside the
op's events. This times the same launches (the nvidia backend's prepared launchers and torch's own
calls, all on the default stream, device events around the launch only) after five preludes:

  write        the bench's flush (zero a 2 x L2 buffer)
  write+read   the same, then a read of the whole buffer (sum): L2 left holding clean lines
  read         only the read (clean lines of the flush buffer; the op's data evicted all the same)
  write+idle   the write, then ~40 us of a spinning one-thread kernel (does L2 clean itself while idle?)
  none         nothing: the op's own data of the previous sample may still sit in L2 (warm)

and prints each median in microseconds and GB/s (the bench's byte counts). Nothing here changes the
bench: it measures how much of a small read-only op's time the dirty flush lines account for.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()

    import cupy as cp
    import torch

    from oprt_bench.baselines._common import flush_bytes
    from oprt_core.plugins import get_registry

    be = get_registry().get_backend("nvidia")
    if not be.availability().ok:
        print("error: the nvidia backend is not available here", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    l2 = int(torch.cuda.get_device_properties(dev).L2_cache_size)
    nflush = flush_bytes(l2)
    fbuf = torch.empty(nflush, dtype=torch.uint8, device=dev)
    fview = fbuf.view(torch.float32)
    sink = torch.empty((), dtype=torch.float32, device=dev)
    clock_hz = 1.98e9

    def write() -> None:
        fbuf.zero_()

    def read() -> None:
        torch.sum(fview, dim=0, out=sink)

    preludes = {
        "write": [write],
        "write+read": [write, read],
        "read": [read],
        "write+idle": [write, lambda: torch.cuda._sleep(int(40e-6 * clock_hz))],
        "none": [],
    }

    rng = cp.random.default_rng(11)
    cases = []

    def add_reduce(rows: int, cols: int, dtype, axis: int) -> None:
        x = rng.uniform(-1, 1, (rows, cols), dtype=cp.float32).astype(dtype)
        o = cp.empty((cols if axis == 0 else rows,), dtype)
        launcher = be.prepare("reduce_sum", [be.asarray(x)], be.asarray(o), {"axis": axis, "keepdims": False})
        xt, ot = torch.as_tensor(x, device=dev), torch.as_tensor(o, device=dev)
        nbytes = x.nbytes + o.nbytes
        name = f"reduce_sum {rows}x{cols} {cp.dtype(dtype).name} axis {axis}"
        cases.append((name, nbytes, launcher, lambda: torch.sum(xt, axis, out=ot), (x, o, xt, ot)))

    for dt in (cp.float32, cp.float16):
        add_reduce(8192, 8192, dt, -1)
        add_reduce(8192, 8192, dt, 0)
    add_reduce(16384, 16384, cp.float16, 0)
    x = rng.uniform(-1, 1, (1 << 26,), dtype=cp.float32)
    o = cp.empty_like(x)
    xt, ot = torch.as_tensor(x, device=dev), torch.as_tensor(o, device=dev)
    cases.append(("copy 2^26 f32", 2 * x.nbytes, be.prepare("copy", [be.asarray(x)], be.asarray(o), {}),
                  lambda: ot.copy_(xt), (x, o, xt, ot)))
    x4, o4 = cp.ones((1,), cp.float32), cp.empty((1,), cp.float32)
    x4t, o4t = torch.as_tensor(x4, device=dev), torch.as_tensor(o4, device=dev)
    cases.append(("copy 1 f32 (empty)", 8, be.prepare("copy", [be.asarray(x4)], be.asarray(o4), {}),
                  lambda: o4t.copy_(x4t), (x4, o4, x4t, o4t)))

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def time_one(fn, prelude) -> float:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(args.samples):
            for p in prelude:
                p()
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            ts.append(start.elapsed_time(end) * 1e3)
        return statistics.median(ts)

    rows = []
    print(f"flush buffer {nflush >> 20} MiB (L2 {l2 >> 20} MiB), {args.samples} samples, median us (GB/s)")
    print(f"{'case':<34} {'who':<6} " + " ".join(f"{m:>17}" for m in preludes))
    for name, nbytes, launcher, torch_fn, _keep in cases:
        for who, fn in (("oprt", launcher), ("torch", torch_fn)):
            res = {m: time_one(fn, p) for m, p in preludes.items()}
            cells = " ".join(f"{us:8.2f} ({nbytes / us / 1e3:6.0f})" for us in res.values())
            print(f"{name:<34} {who:<6} {cells}", flush=True)
            for m, us in res.items():
                rows.append({"case": name, "who": who, "prelude": m, "median_us": round(us, 3),
                             "gbps": round(nbytes / us / 1e3, 1), "bytes": nbytes, "samples": args.samples})
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
