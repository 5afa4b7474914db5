"""Quick bandwidth check of the nvidia kernels against torch, for the edit-measure loop on a GPU host.

    python oprt_nvidia/tools/quick_bench.py [--reps 20] [--filter softmax]

Cold (L2 flushed before each sample) event timing of one launch, median of --reps samples; GB/s from
the op spec's bytes. The real benchmark is ``oprt-bench``; this is the one-minute sanity check.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from oprt_core import operators
from oprt_core.spec import Case, TensorCase
from oprt_nvidia.plugin import make_backend

M64 = 1 << 26
SHAPES = [
    ("copy", [(M64,)], {}, "contiguous"),
    ("vector_add", [(M64,), (M64,)], {}, "contiguous"),
    ("relu", [(M64,)], {"negative_slope": 0.0}, "contiguous"),
    ("reduce_sum", [(8192, 8192)], {"axis": -1, "keepdims": False}, "contiguous"),
    ("reduce_sum", [(8192, 8192)], {"axis": 0, "keepdims": False}, "contiguous"),
    ("reduce_sum", [(M64,)], {"axis": None, "keepdims": False}, "contiguous"),
    ("softmax", [(524288, 128)], {"axis": -1}, "contiguous"),
    ("softmax", [(65536, 1024)], {"axis": -1}, "contiguous"),
    ("softmax", [(16384, 4096)], {"axis": -1}, "contiguous"),
    ("softmax", [(4096, 16384)], {"axis": -1}, "contiguous"),
    ("softmax", [(1024, 65536)], {"axis": -1}, "contiguous"),
    ("softmax", [(8192, 8192)], {"axis": 0}, "contiguous"),
    ("copy", [(8192, 8192)], {}, "transposed"),
]


def _time(run, flush, sync, event, reps: int) -> float:
    run()
    sync()
    samples = []
    for _ in range(reps):
        flush()
        a, b = event(), event()
        a.record()
        run()
        b.record()
        samples.append(a.elapsed_ms(b))
    return statistics.median(samples)


def _torch_fn(torch, op, tensors, params):
    if op == "copy":
        out = torch.empty(tensors[0].shape, dtype=tensors[0].dtype, device="cuda")
        return lambda: out.copy_(tensors[0])
    if op == "vector_add":
        return lambda: torch.add(*tensors)
    if op == "relu":
        return lambda: torch.relu(tensors[0])
    if op == "reduce_sum":
        axis = params["axis"]
        return (lambda: tensors[0].sum()) if axis is None else (lambda: tensors[0].sum(dim=axis))
    return lambda: torch.softmax(tensors[0], dim=params["axis"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--filter", default="")
    parser.add_argument("--dtypes", default="f32,f16,bf16")
    args = parser.parse_args()
    be = make_backend()
    avail = be.availability()
    if not avail.ok:
        raise SystemExit(f"nvidia unavailable: {avail.reason}")
    try:
        import torch
    except ImportError:
        torch = None
    flush_buf = torch.empty(256 << 20, dtype=torch.uint8, device="cuda") if torch else None
    print(f"{'op':<11} {'shape':<16} {'layout':<10} {'dtype':<5} {'nvidia GB/s':>11} {'torch GB/s':>10} {'ratio':>6}")
    for op, shapes, params, layout in SHAPES:
        if args.filter and args.filter not in op:
            continue
        spec = operators.spec(op)
        case = Case(op, "x".join(map(str, shapes[0])), tuple(TensorCase(s, layout) for s in shapes),
                    tuple(sorted(params.items())))
        for dtype in args.dtypes.split(","):
            rng = np.random.default_rng(0)
            host = spec.make_inputs(case, dtype, rng)
            full = spec.validate_params(params)
            dev = [be.to_device(x) for x in host]
            out = be.empty(spec.output_shape([x.shape for x in host], full), dtype)
            launcher = be.prepare(op, dev, out, full)
            nbytes = spec.bytes_moved(case, dtype)
            ms = _time(launcher, be.flush_cache, be.synchronize, be.event, args.reps)
            line = f"{op:<11} {case.name:<16} {layout:<10} {dtype:<5} {nbytes / ms / 1e6:>11.0f}"
            if torch is not None:
                tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
                ts = [torch.as_tensor(x.astype(np.float32), device="cuda").to(tdt) for x in host]
                if layout == "transposed":
                    ts = [t.t().contiguous().t() for t in ts]
                fn = _torch_fn(torch, op, ts, full)

                class _Ev:
                    def __init__(self):
                        self.e = torch.cuda.Event(enable_timing=True)

                    def record(self):
                        self.e.record()

                    def elapsed_ms(self, end):
                        end.e.synchronize()
                        return self.e.elapsed_time(end.e)

                tms = _time(fn, lambda: flush_buf.fill_(1), torch.cuda.synchronize, _Ev, args.reps)
                line += f" {nbytes / tms / 1e6:>10.0f} {tms / ms:>6.2f}"
            print(line, flush=True)
            del dev, out, launcher


if __name__ == "__main__":
    main()
