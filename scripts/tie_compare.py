"""How much of a near tie with torch is the bench's sampling? (session 27)

    python scripts/tie_compare.py [--rounds 8] [--budget 0.2] [--json FILE]

oprt-bench's large sweeps read the 256 MiB f16 / bf16 vector_add at 0.992-0.999x torch in 12 of 13 rows since
session 21 (both backends at ~102% of the copy peak), while in one process with interleaved samples (session 14's
flush_compare.py) f16 read 0.998x and bf16 1.001x. A bench row takes each backend's samples in one block, torch (the
baseline) first, and with the default --target-ci of 1% its median comes from 5-16 samples (bench-large-s26). This
times the same prepared launchers the bench times (the nvidia plugin's backend, oprt_bench's TorchBackend, each with
its own events and cold flush, inputs from the op's make_inputs with seed 0) under four samplings, each repeated:

  bench          oprt_bench.timing.measure with the sweep's config (budget, target CI 1%, >= 5 samples), torch first
  bench reversed the same, nvidia first
  full budget    measure with --target-ci 0 (every row samples its whole budget), the order alternating per round
  interleaved    one sample of each backend in turn, the same flush and events

and prints, per sampling, each round's speedup (torch median / nvidia median), their median and range, and the
pooled medians; --json keeps every sample.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace

import numpy as np

from oprt_bench.baselines.torch_backend import TorchBackend
from oprt_bench.timing import TimingConfig, flush, measure
from oprt_core.core_ops import CORE_OPS
from oprt_core.spec import Case, TensorCase
from oprt_nvidia.plugin import make_backend

SPECS = {s.name: s for s in CORE_OPS}
N = 1 << 27
CASES = (("vector_add", "f16"), ("vector_add", "bf16"), ("vector_add", "f32"), ("copy", "f16"), ("copy", "bf16"))


def prepared(backend, op: str, dtype: str, host: list[np.ndarray]):
    """The bench's launcher for ``op`` on ``backend`` (its own buffers), as runners._run_backend prepares it."""
    spec = SPECS[op]
    arrays = [backend.to_device(x) for x in host]
    out = backend.empty(spec.output_shape([x.shape for x in host], {}), dtype)
    launch = backend.prepare(op, arrays, out, spec.validate_params({}))
    launch()
    backend.synchronize()
    return launch, (arrays, out)


def interleaved(pairs, reps: int, flush_kind: str) -> dict[str, list[float]]:
    events = {name: (be.event(), be.event()) for name, (be, _) in pairs.items()}
    out: dict[str, list[float]] = {name: [] for name in pairs}
    for _ in range(reps):
        for name, (be, launch) in pairs.items():
            start, end = events[name]
            flush(be, flush_kind)
            start.record()
            launch()
            end.record()
            be.synchronize()
            out[name].append(float(start.elapsed_ms(end)))
    return out


def describe(label: str, ratios: list[float], pooled: dict[str, list[float]], samples: list[int] | None) -> str:
    t, n = statistics.median(pooled["torch"]), statistics.median(pooled["nvidia"])
    text = (f"  {label:<15} rounds {' '.join(f'{r:.4f}' for r in ratios)} | median {statistics.median(ratios):.4f} "
            f"[{min(ratios):.4f}, {max(ratios):.4f}] | pooled torch {t * 1e3:.2f} us nvidia {n * 1e3:.2f} us "
            f"-> {t / n:.4f}")
    if samples:
        text += f" | samples a round {min(samples)}-{max(samples)}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--budget", type=float, default=0.2, help="the sweep's --time-budget (gpu_bench: 0.2)")
    parser.add_argument("--reps", type=int, default=400, help="interleaved samples per backend")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    nv, th = make_backend(), TorchBackend("cuda")
    for be in (nv, th):
        if not be.availability().ok:
            raise SystemExit(f"{be.name} unavailable: {be.availability().reason}")
    bench = TimingConfig(time_budget_s=args.budget, warmup_s=min(0.05, 0.2 * args.budget))
    full = replace(bench, target_rel_ci=0.0)
    dump: dict[str, dict] = {}
    print(f"{args.rounds} rounds a sampling, budget {args.budget} s; speedup = torch median / nvidia median")
    for op, dtype in CASES:
        spec = SPECS[op]
        shapes = [(N,)] * (2 if op == "vector_add" else 1)
        case = Case(op, str(N), tuple(TensorCase(s, "contiguous") for s in shapes), ())
        host = spec.make_inputs(case, dtype, np.random.default_rng(0))
        t_launch, t_keep = prepared(th, op, dtype, host)
        n_launch, n_keep = prepared(nv, op, dtype, host)
        runs = {"torch": (th, t_launch), "nvidia": (nv, n_launch)}
        print(f"{op} {N} {dtype} ({spec.bytes_moved(case, dtype) >> 20} MiB moved)", flush=True)
        dump[f"{op} {dtype}"] = record = {}
        for label, config, orders in (
                ("bench", bench, [("torch", "nvidia")]),
                ("bench reversed", bench, [("nvidia", "torch")]),
                ("full budget", full, [("torch", "nvidia"), ("nvidia", "torch")])):
            ratios, pooled, counts = [], {"torch": [], "nvidia": []}, []
            rounds = []
            for r in range(args.rounds):
                medians = {}
                for name in orders[r % len(orders)]:
                    be, launch = runs[name]
                    m = measure(be, launch, config)
                    medians[name] = m.summary.median_ms
                    pooled[name].extend(m.samples_ms)
                    counts.append(len(m.samples_ms))
                    rounds.append({"backend": name, "samples_ms": m.samples_ms, "stopped_by": m.stopped_by})
                ratios.append(medians["torch"] / medians["nvidia"])
            print(describe(label, ratios, pooled, counts), flush=True)
            record[label] = rounds
        ratios, pooled = [], {"torch": [], "nvidia": []}
        for _ in range(args.rounds):
            got = interleaved(runs, args.reps // args.rounds, bench.flush)
            ratios.append(statistics.median(got["torch"]) / statistics.median(got["nvidia"]))
            for k, v in got.items():
                pooled[k].extend(v)
        print(describe("interleaved", ratios, pooled, None), flush=True)
        record["interleaved"] = pooled
        del t_keep, n_keep, runs
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dump, f)


if __name__ == "__main__":
    main()
