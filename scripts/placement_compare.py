"""The kernel or the memory? The nvidia and torch 16-bit vector_add / copy on each other's buffers (session 27)

    python scripts/placement_compare.py [--reps 300] [--quick]

scripts/tie_compare.py (call 1 of session 27) read the 256 MiB f16 vector_add at 0.990x torch and the f16 copy at
0.990x under every sampling in one process, where the bench's rows of the same run read 0.997-0.998x and 0.9998-1.006x:
the launchers were the same, the buffers were not. This allocates four sets of a row's buffers (inputs and output), in
the order torch, nvidia, torch, nvidia (torch's caching allocator, the nvidia backend's cudaMalloc), and runs both
backends' kernels on every set (the nvidia launcher takes torch's tensors zero-copy; torch gets views of the nvidia
backend's arrays through __cuda_array_interface__), and then on sub-buffers of one allocation whose inputs and output
sit at chosen distances from each other. Every sample is interleaved with the others, after the same flush (the nvidia
backend's) and between the same events, so a row of the table differs from another only in the memory, and a column
only in the kernel.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import torch

from oprt_bench.baselines.torch_backend import TorchBackend
from oprt_core.core_ops import CORE_OPS
from oprt_core.spec import Case, TensorCase
from oprt_nvidia.plugin import make_backend

SPECS = {s.name: s for s in CORE_OPS}
N = 1 << 27
MiB = 1 << 20
TORCH_DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
CASES = (("vector_add", "f16"), ("vector_add", "bf16"), ("vector_add", "f32"), ("copy", "f16"))
# byte distances between the starts of the inputs and the output inside one allocation (beyond their own size)
GAPS = (0, 256, 4096, 65536, MiB, 2 * MiB + 4096, 3 * MiB)


class _Bits:
    """A __cuda_array_interface__ of 16-bit integers over a DeviceArray (torch reads no bf16 typestr)."""

    def __init__(self, arr) -> None:
        self.__cuda_array_interface__ = dict(arr.__cuda_array_interface__, typestr="<i2")


def to_torch(x: np.ndarray, dtype: str):
    """A host array on the GPU as torch's (16-bit through int16: torch.from_numpy reads no bfloat16)."""
    return torch.from_numpy(x.view(np.int16) if dtype != "f32" else x).cuda().view(TORCH_DT[dtype])


def torch_view(arr, dtype: str):
    """A zero-copy torch tensor over the nvidia backend's ``arr``."""
    if dtype == "f32":
        return torch.as_tensor(arr, device="cuda")
    return torch.as_tensor(_Bits(arr), device="cuda").view(TORCH_DT[dtype])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="one buffer set of each allocator, no gaps")
    args = parser.parse_args()
    nv, th = make_backend(), TorchBackend("cuda")
    for be in (nv, th):
        if not be.availability().ok:
            raise SystemExit(f"{be.name} unavailable: {be.availability().reason}")
    start, end = nv.event(), nv.event()
    print(f"medians of {args.reps} interleaved samples a cell, us; the nvidia flush and events for every cell")
    for op, dtype in CASES:
        spec = SPECS[op]
        k = 2 if op == "vector_add" else 1
        case = Case(op, str(N), tuple(TensorCase((N,), "contiguous") for _ in range(k)), ())
        host = spec.make_inputs(case, dtype, np.random.default_rng(0))
        params = spec.validate_params({})
        tdt = TORCH_DT[dtype]
        nbytes = host[0].nbytes
        sets: dict[str, tuple[list, object]] = {}  # name -> (inputs, out) as torch tensors
        keep = []
        for name in ("torch 1", "nvidia 1") if args.quick else ("torch 1", "nvidia 1", "torch 2", "nvidia 2"):
            if name.startswith("torch"):
                ins = [to_torch(x, dtype) for x in host]
                out = torch.empty_like(ins[0])
            else:
                arrays = [nv.to_device(x) for x in host]
                o = nv.empty((N,), dtype)
                keep.append((arrays, o))
                ins = [torch_view(a, dtype) for a in arrays]
                out = torch_view(o, dtype)
            sets[name] = (ins, out)
        gaps = () if args.quick else GAPS
        big = torch.empty((k + 1) * (nbytes + max(gaps)) + 4096, dtype=torch.uint8, device="cuda") if gaps else None
        for gap in gaps:
            views = [big[i * (nbytes + gap):i * (nbytes + gap) + nbytes].view(tdt) for i in range(k + 1)]
            for v, src in zip(views, sets["torch 1"][0]):
                v.copy_(src)
            sets[f"one alloc, gap {gap}"] = (views[:k], views[k])
        cells = {}
        for name, (ins, out) in sets.items():
            cells[(name, "nvidia")] = nv.prepare(op, ins, out, params)
            cells[(name, "torch")] = th.prepare(op, ins, out, params)
        for fn in cells.values():
            fn()
        nv.synchronize()
        got: dict[tuple[str, str], list[float]] = {c: [] for c in cells}
        for _ in range(args.reps):
            for c, fn in cells.items():
                nv.flush_cache()
                start.record()
                fn()
                end.record()
                nv.synchronize()
                got[c].append(float(start.elapsed_ms(end)) * 1e3)
        ref = statistics.median(got[("torch 1", "torch")])
        print(f"{op} {N} {dtype}: {spec.bytes_moved(case, dtype) >> 20} MiB moved; x = the cell / torch on torch 1")
        print(f"  {'buffers':<24} {'start % 2 MiB':>26} {'nvidia kernel':>16} {'torch kernel':>16} {'nv / torch':>10}")
        for name, (ins, out) in sets.items():
            a, b = statistics.median(got[(name, "nvidia")]), statistics.median(got[(name, "torch")])
            offs = "/".join(f"{t.data_ptr() % (2 * MiB):>7}" for t in [*ins, out])
            print(f"  {name:<24} {offs:>26} {a:8.2f} ({ref / a:.4f}) {b:8.2f} ({ref / b:.4f}) {b / a:10.4f}",
                  flush=True)
        del cells, sets, keep, big
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
