"""Identical GPU work, measured 1-2% apart: where does the bench's nvidia-against-torch offset come from? (session 19)

    python scripts/timing_compare.py [--reps 200]

Since session 19 the nvidia backend copies contiguous tensors of up to 64 MiB with cudaMemcpyAsync, the call torch's
``copy_`` makes, yet oprt-bench's default set read those copies at 0.981-0.998x torch (bench-default-s19). This times,
interleaved in one process, a 16-bit copy of 2 MiB, 32 MiB and 256 MiB (the last on the copy kernel) five ways:

  nvidia own      the prepared launcher on the backend's own buffers (what oprt-bench times)
  nvidia on torch ``oprt_core.ops.copy`` on torch's tensors (the same buffers as torch's call)
  torch own       ``out.copy_(x)`` on torch's tensors (what oprt-bench times for torch)
  torch other     ``out2.copy_(x2)`` on a second pair of torch tensors (another allocation)
  torch on nvidia torch's copy_ on torch views of the nvidia backend's buffers (zero-copy)

each under five timings: "bench" (each backend's own events and cold flush, as oprt-bench: the nvidia backend's
CompiledEvent and oprt_memset flush for the nvidia rows, torch's events and zero_ flush for the torch rows), "torch"
(torch's events and zero_ flush for all), "nv-ev" (the nvidia backend's events, torch's zero_ flush), "nv-fl"
(torch's events, the nvidia backend's flush) and "fill" (torch's events, torch's fill_ of a changing byte: the
nvidia flush's pattern through torch). It prints medians (us) and each row's ratio to "torch own" under the same
timing.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

import numpy as np
import torch

import oprt_core.ops as ops
from oprt_nvidia.plugin import make_backend

MiB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    be = make_backend()
    if not be.availability().ok:
        raise SystemExit(f"nvidia unavailable: {be.availability().reason}")
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    tflush = torch.empty(max(2 * l2, 8 * MiB), dtype=torch.uint8, device="cuda")
    rng = np.random.default_rng(0)
    print(f"flush buffers {tflush.numel() // MiB} MiB; medians of {args.reps} interleaved samples, us")
    for mib in (2, 32, 256):
        n = mib * MiB // 2
        host = rng.uniform(-1, 1, n).astype(np.float16)
        x_n, o_n = be.to_device(host), be.empty((n,), "f16")
        nv_own = be.prepare("copy", [x_n], o_n, {})
        x_t = torch.from_numpy(host).cuda()
        o_t = torch.empty_like(x_t)
        x_t2, o_t2 = x_t.clone(), torch.empty_like(x_t)
        # torch views of the nvidia backend's buffers (__cuda_array_interface__, zero-copy)
        x_tn = torch.as_tensor(x_n, device="cuda")
        o_tn = torch.as_tensor(o_n, device="cuda")
        runs = {
            "nvidia own": (nv_own, "nvidia"),
            "nvidia on torch": (partial(ops.copy, x_t, backend="nvidia", out=o_t), "nvidia"),
            "torch own": (partial(o_t.copy_, x_t), "torch"),
            "torch other": (partial(o_t2.copy_, x_t2), "torch"),
            "torch on nvidia": (partial(o_tn.copy_, x_tn), "torch"),
        }
        timings = ("bench", "torch", "nv-ev", "nv-fl", "fill")
        state = {"v": 0}

        def fill(state=state) -> None:
            state["v"] = state["v"] % 255 + 1
            tflush.fill_(state["v"])

        ev = {
            "nvidia": (be.event(), be.event()),
            "torch": (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)),
        }
        flush = {"nvidia": be.flush_cache, "torch": tflush.zero_, "fill": fill}
        # timing -> (whose events, whose flush); "bench": the run's own side for both
        how = {
            "torch": ("torch", "torch"),
            "nv-ev": ("nvidia", "torch"),
            "nv-fl": ("torch", "nvidia"),
            "fill": ("torch", "fill"),
        }
        for fn, _ in runs.values():
            fn()
        torch.cuda.synchronize()
        ms: dict[tuple[str, str], list[float]] = {(r, t): [] for r in runs for t in timings}
        for _ in range(args.reps):
            for (r, t), samples in ms.items():
                fn, side = runs[r]
                evs, fl = (side, side) if t == "bench" else how[t]
                e0, e1 = ev[evs]
                flush[fl]()
                e0.record()
                fn()
                e1.record()
                if evs == "torch":
                    e1.synchronize()
                    samples.append(e0.elapsed_time(e1))
                else:
                    samples.append(e0.elapsed_ms(e1))
        for t in timings:
            ref = statistics.median(ms[("torch own", t)])
            for r in runs:
                m = statistics.median(ms[(r, t)])
                print(
                    f"{mib:>4} MiB f16  timing {t:<6} {r:<16} {m * 1e3:9.2f} us  torch own / this {ref / m:.4f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
