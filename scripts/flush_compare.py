"""Does the cold-L2 flush's kind move the nvidia backend against torch? (session 14)

    python scripts/flush_compare.py [--reps 100]

oprt's 16-bit vector_add has run 0.993-0.998x torch at ~102% of the peak in five oprt-bench runs (f32 and the
copies at 1.00x or above), and no block shape of the kernel is faster (tune-s14-2.log). oprt-bench flushes each
backend with its own flush: the nvidia backend writes a changing byte over 2x L2 with oprt_memset, torch zeroes its
buffer; the flush's dirty lines are written back while the timed op runs. This times the nvidia launcher and
torch's own call (``torch.add(a, b, out=)``, ``out.copy_(a)``) after each of three flushes of the same size (the
nvidia backend's, torch's ``zero_()``, torch's ``fill_()`` of a changing byte), interleaved, with torch's events
on the one default stream, and prints the medians and torch / nvidia ratios per flush.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import torch

from oprt_core.core_ops import CORE_OPS
from oprt_core.spec import Case, TensorCase
from oprt_nvidia.plugin import make_backend

SPECS = {s.name: s for s in CORE_OPS}
N = 1 << 27
TORCH_DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def prepared_pair(be, op: str, dtype: str, n: int = N):
    """(the nvidia launcher, torch's own call, the spec's bytes) for ``op`` (copy or vector_add) of n elements,
    on the same seeded random inputs."""
    spec = SPECS[op]
    shapes = [(n,)] * (2 if op == "vector_add" else 1)
    case = Case(op, str(n), tuple(TensorCase(s, "contiguous") for s in shapes), ())
    host = spec.make_inputs(case, dtype, np.random.default_rng(0))
    full = spec.validate_params({})
    out = be.empty(spec.output_shape([x.shape for x in host], full), dtype)
    ours = be.prepare(op, [be.to_device(x) for x in host], out, full)
    ts = [torch.as_tensor(x.astype(np.float32), device="cuda").to(TORCH_DT[dtype]) for x in host]
    tout = torch.empty_like(ts[0])
    if op == "vector_add":
        theirs = lambda: torch.add(ts[0], ts[1], out=tout)  # noqa: E731
    else:
        theirs = lambda: tout.copy_(ts[0])  # noqa: E731
    return ours, theirs, spec.bytes_moved(case, dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    be = make_backend()
    if not be.availability().ok:
        raise SystemExit(f"nvidia unavailable: {be.availability().reason}")
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    buf = torch.empty(max(2 * l2, 8 << 20), dtype=torch.uint8, device="cuda")
    state = {"v": 0}

    def fill() -> None:
        state["v"] = state["v"] % 255 + 1
        buf.fill_(state["v"])

    flushes = {"oprt_memset": be.flush_cache, "torch zero_": buf.zero_, "torch fill_": fill}
    print(f"flush buffers: {buf.numel() >> 20} MiB; medians of {args.reps} samples, ms")
    for op, dtype in (("vector_add", "f16"), ("vector_add", "bf16"), ("vector_add", "f32"), ("copy", "f16")):
        ours, theirs, nbytes = prepared_pair(be, op, dtype)
        runs = {"nvidia": ours, "torch": theirs}
        ms: dict[tuple[str, str], list[float]] = {(r, f): [] for r in runs for f in flushes}
        for fn in runs.values():
            fn()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(args.reps):
            for (r, f), samples in ms.items():
                flushes[f]()
                e0.record()
                runs[r]()
                e1.record()
                e1.synchronize()
                samples.append(e0.elapsed_time(e1))
        for f in flushes:
            a, b = statistics.median(ms[("nvidia", f)]), statistics.median(ms[("torch", f)])
            print(f"{op:<10} {dtype:<4} after {f:<12} nvidia {a:.4f} ({nbytes / a / 1e6:.0f} GB/s)  "
                  f"torch {b:.4f} ({nbytes / b / 1e6:.0f} GB/s)  speedup {b / a:.4f}", flush=True)
        del ours, theirs, runs


if __name__ == "__main__":
    main()
