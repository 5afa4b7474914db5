#!/usr/bin/env python3
"""Check oprt-bench's measurements against independent references on a CUDA GPU.

    python scripts/check_baselines.py OUT [--parts timing,peaks] [--tolerance-timing 0.03] [--tolerance-peak 0.05]

Parts (``--parts``, comma-separated; default ``timing,peaks``, the two that pass or fail; ``all``: every part):

timing  torch ops, every core op of one input with its default params (those that keep each element where it is on
        64M f32 elements; those over an axis that keep the shape on 16384x4096 and 4096x16384, those that reduce it
        on 8192x8192 and 16384x16384) timed twice with the *same* prepared TorchBackend launcher: by
        oprt-bench's own cold timing loop (``oprt_bench.timing.measure``, L2 flushed before every sample) and by
        ``triton.testing.do_bench`` (median; it flushes L2 itself). Cases whose medians are both >= 100 us must
        agree within 3%; shorter cases are listed, not judged.
peaks   the calibrated peak (``oprt_bench.calibrate.calibrate``: device-to-device copy, read + written, through
        the backend) of the ``nvidia`` and ``torch`` backends (and ``cupy``, listed) against a cudaMemcpy
        device-to-device measured with CuPy (1 GiB, CUDA events, median of 20); each must be within 5%.
flush   (listed) what the cold flush costs the sample after it: the nvidia backend's launchers and torch's own
        calls (the op folders' torch implementations) on the same buffers, of the sum over all or an axis (the op
        of role sum-all) and of a device copy (the op of role bandwidth-probe, oprt_core.operators.with_role),
        device events around the launch only, after four preludes: ``write`` (the
        bench's flush: zero a buffer of 2 x L2, which leaves L2 full of dirty lines that DRAM writes back inside
        the op's events), ``write+read`` (then a read of the whole buffer: clean lines), ``read`` and ``none``.
offset  (listed) identical 16-bit copies (2, 32, 256 MiB; the op of role bandwidth-probe) five ways -- the nvidia
        launcher on its own buffers and on torch's, torch's own on its own, on another allocation and on the nvidia
        backend's buffers -- each
        under five timings: each side's own events and flush ("bench", as oprt-bench), torch's events and
        ``zero_`` flush for all, the nvidia events with torch's flush, torch's events with the nvidia flush, and
        torch's ``fill_`` of a changing byte; each row's median and its ratio to "torch own" under that timing.

OUT is a folder (created; ``check_baselines.md`` and ``check_baselines.json`` go there) or a file
path ending in .md or .json (the other is written beside it). A missing triton, cupy, CUDA device or
nvidia backend is a clear "skipped: why" line, never a traceback.

Exit status: 0 every judged check ran and passed; 1 a check failed; 3 nothing failed but some check was
skipped (a missing dependency). timing and peaks take well under 2 minutes on an H200 (most of it imports).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MiB = 1 << 20
GiB = 1 << 30


def _import_oprt() -> None:
    """oprt_core / oprt_bench installed, else from this checkout's src folders (nvidia needs an install)."""
    for pkg, src in (("oprt_core", ROOT / "oprt_core" / "src"), ("oprt_bench", ROOT / "oprt_bench" / "src")):
        try:
            __import__(pkg)
        except ImportError:
            sys.path.insert(0, str(src))


def log(text: str = "") -> None:
    print(text, flush=True)


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- (a) oprt-bench's cold timing loop against triton.testing.do_bench ------------------------------------------

# the shapes each kind of one-input core op is timed on: no axis (each element kept where it is), over an axis keeping
# the shape, over an axis reducing it
KIND_SHAPES: dict[str, list[tuple[int, ...]]] = {
    "elementwise": [(64 * MiB,)],
    "over an axis": [(16384, 4096), (4096, 16384)],
    "reducing": [(8192, 8192), (16384, 16384)],
}
JUDGED_ABOVE_MS = 0.1


def _kind(spec: Any) -> str | None:
    """Which of KIND_SHAPES a one-input op is (None: not one input)."""
    if spec.n_inputs != 1:
        return None
    over_axis = any(p.name == "axis" for p in spec.params)
    keeps = spec.output_shape([(4, 5)], spec.validate_params({})) == (4, 5)
    return "reducing" if not keeps else "over an axis" if over_axis else "elementwise"


def timing_cases() -> list[tuple[str, tuple[int, ...], dict[str, Any], str]]:
    """(op, shape, params, label) of every one-input core op, default params, on its kind's shapes."""
    from oprt_core import operators
    from oprt_core.spec import format_shape

    return [(spec.name, shape, {}, f"{spec.name} " + ("64M" if shape == (64 * MiB,) else format_shape(shape)))
            for spec in operators.specs("core") if _kind(spec) for shape in KIND_SHAPES[_kind(spec)]]


def torch_own(op: str, torch: Any, inputs: list[Any], out: Any, params: dict[str, Any]) -> Any:
    """Torch's own call of ``op`` (its folder's torch implementation) on ``inputs`` into ``out``; ``params``
    complete."""
    from oprt_core import operators

    impl = next(impl for backend, name, impl in operators.implementations() if backend == "torch" and name == op)
    return impl(torch, inputs, out, params)


def _do_bench_median(do_bench: Any, fn: Any) -> float:
    try:
        return float(do_bench(fn, warmup=25, rep=200, return_mode="median"))
    except TypeError:  # an older triton without return_mode
        return float(do_bench(fn, warmup=25, rep=200, quantiles=[0.5])[0])


def check_timing(tolerance: float) -> dict[str, Any]:
    section: dict[str, Any] = {"name": "timing: oprt-bench cold loop vs triton.testing.do_bench", "rows": [],
                               "tolerance": tolerance, "judged_above_ms": JUDGED_ABOVE_MS}
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        return section | {"status": "skipped", "why": f"torch is not importable ({_why(exc)})"}
    if not torch.cuda.is_available():
        return section | {"status": "skipped", "why": f"torch {torch.__version__} sees no CUDA device"}
    try:
        from triton.testing import do_bench
    except Exception as exc:  # noqa: BLE001
        return section | {"status": "skipped", "why": f"triton is not importable ({_why(exc)}); "
                                                      "pip install triton (it ships with CUDA torch wheels)"}
    from oprt_bench.baselines import TorchBackend
    from oprt_bench.timing import TimingConfig, measure
    from oprt_core import operators

    backend = operators.equip(TorchBackend("cuda"))
    avail = backend.availability()
    if not avail.ok:
        return section | {"status": "skipped", "why": f"torch backend unavailable: {avail.reason}"}
    config = TimingConfig(cold=True, time_budget_s=1.5, target_rel_ci=0.005, min_samples=30, max_samples=1000,
                          warmup_s=0.05, warmup_calls=3)
    section["oprt_timing_config"] = config.to_dict()
    failed = False
    gen = torch.Generator(device="cuda").manual_seed(0)
    for op, shape, params, label in timing_cases():
        row: dict[str, Any] = {"case": label, "op": op, "shape": "x".join(map(str, shape)), "dtype": "f32"}
        try:
            spec = operators.spec(op)
            x = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32) * 2 - 1
            full = spec.validate_params(params, [shape])
            out = backend.empty(spec.output_shape([shape], full), "f32")
            launch = backend.prepare(op, [x], out, full)
            launch()
            torch.cuda.synchronize()
            m = measure(backend, launch, config)
            ours = m.summary.median_ms
            theirs = _do_bench_median(do_bench, launch)
            ratio = ours / theirs if theirs > 0 else math.inf
            judged = ours >= JUDGED_ABOVE_MS and theirs >= JUDGED_ABOVE_MS
            ok = abs(ratio - 1) <= tolerance
            nbytes = (x.numel() + out.numel()) * 4
            row.update(oprt_median_ms=ours, oprt_p10_ms=m.summary.p10_ms, oprt_p90_ms=m.summary.p90_ms,
                       oprt_samples=m.summary.samples, do_bench_median_ms=theirs, ratio=ratio,
                       gbps=nbytes / (ours * 1e6), judged=judged,
                       status=("pass" if ok else "FAIL") if judged else "info (< 100 us)")
            failed |= judged and not ok
            del x, out, launch
        except Exception as exc:  # noqa: BLE001 - one broken case is a row
            row.update(status="error", why=_why(exc))
            failed = True
        section["rows"].append(row)
        log(f"  {label:<24} " + (f"oprt {row['oprt_median_ms']:.4f} ms  do_bench {row['do_bench_median_ms']:.4f} ms"
                                 f"  ratio {row['ratio']:.4f}  {row['status']}" if "ratio" in row
                                 else f"{row['status']}: {row.get('why', '')}"))
        torch.cuda.empty_cache()
    section["status"] = "FAIL" if failed else "pass"
    return section


# -- (b) calibrated peaks against cudaMemcpy D2D measured with CuPy -------------------------------------------

def cupy_memcpy_reference(nbytes: int = GiB, samples: int = 20) -> dict[str, Any]:
    import cupy as cp

    rt = cp.cuda.runtime
    kind = getattr(rt, "memcpyDeviceToDevice", 3)
    with cp.cuda.Device(0):
        src = cp.ones(nbytes, cp.uint8)
        dst = cp.zeros(nbytes, cp.uint8)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        for _ in range(3):
            rt.memcpy(dst.data.ptr, src.data.ptr, nbytes, kind)
        rt.deviceSynchronize()
        times = []
        for _ in range(samples):
            start.record()
            rt.memcpy(dst.data.ptr, src.data.ptr, nbytes, kind)
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        del src, dst
        cp.get_default_memory_pool().free_all_blocks()
    median = statistics.median(times)
    return {"method": "cupy.cuda.runtime.memcpy device-to-device, CUDA events", "buffer_bytes": nbytes,
            "bytes_per_sample": 2 * nbytes, "samples": samples, "median_ms": median, "min_ms": min(times),
            "max_ms": max(times), "gbps": 2 * nbytes / (median * 1e6)}


def _backends() -> dict[str, Any]:
    """nvidia from the installed plugins, torch and cupy directly."""
    out: dict[str, Any] = {}
    try:
        from oprt_core import get_registry

        registry = get_registry()
        if "nvidia" in registry.backends:
            out["nvidia"] = registry.get_backend("nvidia")
        else:
            out["nvidia"] = "the nvidia backend is not registered (pip install ./oprt_nvidia)"
    except Exception as exc:  # noqa: BLE001
        out["nvidia"] = f"the plugin registry failed: {_why(exc)}"
    from oprt_bench.baselines import CupyBackend, TorchBackend
    from oprt_core.operators import equip

    out["torch"] = equip(TorchBackend("cuda"))
    out["cupy"] = equip(CupyBackend(0))
    return out


def check_peaks(tolerance: float) -> dict[str, Any]:
    section: dict[str, Any] = {"name": "peak: calibrated D2D copy vs cudaMemcpy measured with CuPy", "rows": [],
                               "tolerance": tolerance, "judged": ["nvidia", "torch"]}
    try:
        ref = cupy_memcpy_reference()
    except ImportError as exc:
        return section | {"status": "skipped", "why": f"cupy is not importable ({_why(exc)}); "
                                                      "pip install cupy-cuda13x (or the cupy for this CUDA)"}
    except Exception as exc:  # noqa: BLE001
        return section | {"status": "skipped", "why": f"the cupy reference memcpy failed: {_why(exc)}"}
    section["reference"] = ref
    log(f"  reference cudaMemcpy D2D (cupy, 1 GiB, median of {ref['samples']}): {ref['gbps']:.1f} GB/s")
    from oprt_bench.calibrate import calibrate

    failed = skipped = False
    for name, backend in _backends().items():
        judged = name in section["judged"]
        row: dict[str, Any] = {"backend": name, "judged": judged}
        if isinstance(backend, str):
            row.update(status="skipped" if judged else "info", why=backend)
            skipped |= judged
        else:
            avail = backend.availability()
            if not avail.ok:
                row.update(status="skipped" if judged else "info", why=f"unavailable: {avail.reason}")
                skipped |= judged
            else:
                info = backend.device_info().to_dict()
                cal = calibrate(backend, info)
                row.update(device=info.get("name"), calibration=cal.to_dict())
                if cal.measured_peak_gbps is None:
                    row.update(status="FAIL" if judged else "info", why=cal.error)
                    failed |= judged
                else:
                    ratio = cal.measured_peak_gbps / ref["gbps"]
                    ok = abs(ratio - 1) <= tolerance
                    row.update(measured_peak_gbps=cal.measured_peak_gbps, spec_peak_gbps=cal.spec_peak_gbps,
                               spec_source=cal.spec_source, ratio=ratio,
                               status=("pass" if ok else "FAIL") if judged else "info")
                    failed |= judged and not ok
        section["rows"].append(row)
        if "ratio" in row:
            log(f"  {name:<8} calibrated {row['measured_peak_gbps']:.1f} GB/s (2 x "
                f"{row['calibration']['buffer_bytes'] / MiB:.0f} MiB, n={row['calibration']['samples']})  "
                f"ratio {row['ratio']:.4f}  {row['status']}")
        else:
            log(f"  {name:<8} {row['status']}: {row.get('why', '')}")
    section["status"] = "FAIL" if failed else ("skipped" if skipped else "pass")
    return section


# -- (listed) the cold flush's cost and the events / flush offset, nvidia against torch -------------------------

def _nvidia_and_torch() -> tuple[Any, Any] | str:
    """(the nvidia backend, torch) or why not."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        return f"torch is not importable ({_why(exc)})"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device"
    backends = _backends()
    be = backends["nvidia"]
    if isinstance(be, str):
        return be
    if not be.availability().ok:
        return f"nvidia unavailable: {be.availability().reason}"
    return be, torch


def _median_us(fn: Any, before: list[Any], start: Any, end: Any, samples: int, sync: Any) -> float:
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(samples):
        for step in before:
            step()
        start.record()
        fn()
        end.record()
        sync()
        times.append((start.elapsed_time(end) if hasattr(start, "elapsed_time") else start.elapsed_ms(end)) * 1e3)
    return statistics.median(times)


def check_flush(samples: int) -> dict[str, Any]:
    section: dict[str, Any] = {"name": "flush: what the cold flush costs the sample after it (listed)", "rows": []}
    got = _nvidia_and_torch()
    if isinstance(got, str):
        return section | {"status": "skipped", "why": got}
    be, torch = got

    import numpy as np

    from oprt_bench.baselines import flush_bytes
    from oprt_core.operators import with_role

    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    fbuf = torch.empty(flush_bytes(l2), dtype=torch.uint8, device="cuda")
    fview, sink = fbuf.view(torch.float32), torch.empty((), dtype=torch.float32, device="cuda")
    preludes = {"write": [fbuf.zero_], "write+read": [fbuf.zero_, lambda: torch.sum(fview, dim=0, out=sink)],
                "read": [lambda: torch.sum(fview, dim=0, out=sink)], "none": []}
    rng = np.random.default_rng(11)
    dt = {"f32": (np.float32, torch.float32), "f16": (np.float16, torch.float16)}
    total, sum_all = with_role("sum-all")
    probe, probe_params = with_role("bandwidth-probe")
    # (label, op, shape, dtype, params)
    cases = [(f"{total.name} 8192x8192 {d} axis {a}", total, (8192, 8192), d, {**sum_all, "axis": a})
             for d in ("f32", "f16") for a in (-1, 0)]
    cases.append((f"{probe.name} 2^26 f32", probe, (1 << 26,), "f32", probe_params))
    cases.append((f"{probe.name} 1 f32 (empty)", probe, (1,), "f32", probe_params))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    log(f"  flush buffer {fbuf.numel() // MiB} MiB (L2 {l2 // MiB} MiB), {samples} samples, median us")
    for label, spec, shape, d, params in cases:
        op, params = spec.name, spec.validate_params(params, [shape])
        x_n = be.to_device(rng.uniform(-1, 1, shape).astype(dt[d][0]))
        o_n = be.empty(spec.output_shape([shape], params), d)
        x_t, o_t = torch.as_tensor(x_n, device="cuda"), torch.as_tensor(o_n, device="cuda")
        nbytes = x_t.nbytes + o_t.nbytes
        for who, fn in (("nvidia", be.prepare(op, [x_n], o_n, params)),
                        ("torch", torch_own(op, torch, [x_t], o_t, params))):
            row: dict[str, Any] = {"case": label, "who": who, "bytes": nbytes}
            for name, steps in preludes.items():
                row[name] = round(_median_us(fn, steps, start, end, samples, torch.cuda.synchronize), 3)
            section["rows"].append(row)
            log(f"  {label:<32} {who:<6} " + "  ".join(f"{k} {row[k]:8.2f}" for k in preludes))
    section["columns"] = ["case", "who", *preludes]
    return section | {"status": "info"}


def check_offset(reps: int) -> dict[str, Any]:
    section: dict[str, Any] = {"name": "offset: identical copies under swapped events and flushes (listed)",
                               "rows": []}
    got = _nvidia_and_torch()
    if isinstance(got, str):
        return section | {"status": "skipped", "why": got}
    be, torch = got
    from functools import partial

    import numpy as np

    import oprt_core.ops as ops
    from oprt_core.operators import with_role

    spec, params = with_role("bandwidth-probe")
    name = spec.name
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    tflush = torch.empty(max(2 * l2, 8 * MiB), dtype=torch.uint8, device="cuda")
    rng = np.random.default_rng(0)
    state = {"v": 0}

    def fill() -> None:
        state["v"] = state["v"] % 255 + 1
        tflush.fill_(state["v"])

    events = {"nvidia": (be.event(), be.event()),
              "torch": (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))}
    flushes = {"nvidia": be.flush_cache, "torch": tflush.zero_, "fill": fill}
    # timing -> (whose events, whose flush); "bench": each run's own side for both
    how = {"torch": ("torch", "torch"), "nv-ev": ("nvidia", "torch"), "nv-fl": ("torch", "nvidia"),
           "fill": ("torch", "fill")}
    timings = ("bench", *how)
    for mib in (2, 32, 256):
        n = mib * MiB // 2
        host = rng.uniform(-1, 1, n).astype(np.float16)
        x_n, o_n = be.to_device(host), be.empty((n,), "f16")
        x_t = torch.from_numpy(host).cuda()
        o_t, x_t2, o_t2 = torch.empty_like(x_t), x_t.clone(), torch.empty_like(x_t)
        x_tn, o_tn = torch.as_tensor(x_n, device="cuda"), torch.as_tensor(o_n, device="cuda")  # zero-copy views
        runs = {"nvidia own": (be.prepare(name, [x_n], o_n, params), "nvidia"),
                "nvidia on torch": (partial(getattr(ops, name), x_t, backend="nvidia", out=o_t, **params), "nvidia"),
                "torch own": (torch_own(name, torch, [x_t], o_t, params), "torch"),
                "torch other": (torch_own(name, torch, [x_t2], o_t2, params), "torch"),
                "torch on nvidia": (torch_own(name, torch, [x_tn], o_tn, params), "torch")}
        for fn, _ in runs.values():
            fn()
        torch.cuda.synchronize()
        ms: dict[tuple[str, str], list[float]] = {(r, t): [] for r in runs for t in timings}
        for _ in range(reps):  # interleaved: drift hits every row alike
            for (r, t), samples in ms.items():
                fn, side = runs[r]
                ev, fl = (side, side) if t == "bench" else how[t]
                e0, e1 = events[ev]
                flushes[fl]()
                e0.record()
                fn()
                e1.record()
                if ev == "torch":
                    e1.synchronize()
                    samples.append(e0.elapsed_time(e1))
                else:
                    samples.append(e0.elapsed_ms(e1))
        for t in timings:
            ref = statistics.median(ms[("torch own", t)])
            for r in runs:
                m = statistics.median(ms[(r, t)])
                section["rows"].append({"case": f"{name} f16 {mib} MiB", "timing": t, "run": r,
                                        "median_us": round(m * 1e3, 3), "torch_own_over_this": round(ref / m, 4)})
                log(f"  {mib:>4} MiB f16  timing {t:<6} {r:<16} {m * 1e3:9.2f} us  torch own / this {ref / m:.4f}")
    section["columns"] = ["case", "timing", "run", "median_us", "torch_own_over_this"]
    return section | {"status": "info"}


# -- the summary ------------------------------------------------------------------------------------------------

def _fmt(v: Any, spec: str) -> str:
    return "" if v is None else format(v, spec)


def markdown(doc: dict[str, Any]) -> str:
    lines = [f"# check_baselines: {doc['verdict']}", "",
             f"{doc['host']} · {doc.get('device', '?')} · {doc['started_utc']} · {doc['elapsed_s']:.1f} s", "",
             "versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items()), ""]
    t = doc["timing"]
    lines += [f"## (a) {t['name']}: {t['status']}", ""]
    if t.get("why"):
        lines += [f"skipped: {t['why']}", ""]
    if t["rows"]:
        lines += [f"Agreement within {t['tolerance']:.0%} required where both medians are >= "
                  f"{t['judged_above_ms'] * 1e3:.0f} us.", "",
                  "| case | oprt-bench median ms (p10-p90, n) | do_bench median ms | oprt / do_bench | GB/s | status |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for r in t["rows"]:
            if "ratio" in r:
                lines.append(f"| {r['case']} | {r['oprt_median_ms']:.4f} ({r['oprt_p10_ms']:.4f}-"
                             f"{r['oprt_p90_ms']:.4f}, {r['oprt_samples']}) | {r['do_bench_median_ms']:.4f} | "
                             f"{r['ratio']:.4f} | {r['gbps']:.0f} | {r['status']} |")
            else:
                lines.append(f"| {r['case']} | | | | | {r['status']}: {r.get('why', '')} |")
        lines.append("")
    p = doc["peaks"]
    lines += [f"## (b) {p['name']}: {p['status']}", ""]
    if p.get("why"):
        lines += [f"skipped: {p['why']}", ""]
    if p.get("reference"):
        ref = p["reference"]
        lines += [f"Reference: {ref['method']}, {ref['buffer_bytes'] // MiB} MiB, median of {ref['samples']}: "
                  f"**{ref['gbps']:.1f} GB/s** (read + written). Within {p['tolerance']:.0%} required for "
                  f"{', '.join(p['judged'])}.", "",
                  "| backend | calibrated GB/s | buffer | samples | spec GB/s | calibrated / reference | status |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in p["rows"]:
            if "ratio" in r:
                c = r["calibration"]
                lines.append(f"| {r['backend']} | {r['measured_peak_gbps']:.1f} | {c['buffer_bytes'] // MiB} MiB | "
                             f"{c['samples']} | {_fmt(r['spec_peak_gbps'], '.0f')} ({r['spec_source']}) | "
                             f"{r['ratio']:.4f} | {r['status']} |")
            else:
                lines.append(f"| {r['backend']} | | | | | | {r['status']}: {r.get('why', '')} |")
        lines.append("")
    for key, letter in (("flush", "c"), ("offset", "d")):
        part = doc.get(key)
        if not part or part.get("why") == "not requested":
            continue
        lines += [f"## ({letter}) {part['name']}: {part['status']}", ""]
        if part.get("why"):
            lines += [f"skipped: {part['why']}", ""]
        cols = part.get("columns", [])
        if part["rows"] and cols:
            lines += ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
            lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in part["rows"]]
            lines.append("")
    return "\n".join(lines)


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ("oprt-core", "oprt-bench", "oprt-nvidia", "torch", "triton", "cupy-cuda13x", "cupy-cuda12x",
                 "cupy", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _paths(out: Path) -> tuple[Path, Path]:
    if out.suffix in (".md", ".json"):
        out.parent.mkdir(parents=True, exist_ok=True)
        return out.with_suffix(".md"), out.with_suffix(".json")
    out.mkdir(parents=True, exist_ok=True)
    return out / "check_baselines.md", out / "check_baselines.json"


PARTS = ("timing", "peaks", "flush", "offset")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="folder (or .md / .json path) for the summary")
    ap.add_argument("--parts", default="timing,peaks",
                    help=f"comma-separated parts of {', '.join(PARTS)}, or all (default timing,peaks)")
    ap.add_argument("--tolerance-timing", type=float, default=0.03, help="oprt-bench vs do_bench (default 3%%)")
    ap.add_argument("--tolerance-peak", type=float, default=0.05, help="calibrated vs cudaMemcpy (default 5%%)")
    ap.add_argument("--samples", type=int, default=60, help="samples a median in the flush part (default 60)")
    ap.add_argument("--reps", type=int, default=200, help="interleaved rounds in the offset part (default 200)")
    args = ap.parse_args(argv)
    parts = PARTS if args.parts == "all" else tuple(p.strip() for p in args.parts.split(",") if p.strip())
    if not parts or set(parts) - set(PARTS):
        ap.error(f"--parts: choose from {', '.join(PARTS)} or all")
    md_path, json_path = _paths(args.out)
    _import_oprt()
    t0 = time.monotonic()
    doc: dict[str, Any] = {"tool": "scripts/check_baselines.py", "host": platform.node(),
                           "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "versions": _versions(), "parts": list(parts)}
    try:
        import torch

        if torch.cuda.is_available():
            doc["device"] = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001
        pass
    log(f"check_baselines on {doc['host']} ({doc.get('device', 'no CUDA device seen by torch')})")
    runs: dict[str, tuple[Any, Any, str]] = {
        "timing": (check_timing, args.tolerance_timing, "(a) oprt-bench cold timing loop vs triton.testing.do_bench"),
        "peaks": (check_peaks, args.tolerance_peak, "(b) calibrated peak vs cudaMemcpy D2D with cupy"),
        "flush": (check_flush, args.samples, "(c) the cold flush's cost to the sample after it"),
        "offset": (check_offset, args.reps, "(d) identical copies under swapped events and flushes"),
    }
    for key, (fn, arg, title) in runs.items():
        log(title)
        base = {"name": title, "rows": [], "tolerance": arg, "judged_above_ms": JUDGED_ABOVE_MS, "judged": []}
        if key not in parts:
            doc[key] = base | {"status": "skipped", "why": "not requested"}
            continue
        try:
            doc[key] = fn(arg)
        except Exception as exc:  # noqa: BLE001 - a crash of one part is reported, the others still run
            doc[key] = base | {"status": "FAIL", "why": _why(exc), "traceback": traceback.format_exc()}
        if doc[key].get("why"):
            log(f"  {doc[key]['status']}: {doc[key]['why']}")
    requested = [doc[k]["status"] for k in parts]
    doc["verdict"] = "FAIL" if "FAIL" in requested else ("SKIPPED (incomplete)" if "skipped" in requested else "PASS")
    doc["elapsed_s"] = time.monotonic() - t0
    json_path.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(markdown(doc) + "\n", encoding="utf-8")
    log(f"verdict: {doc['verdict']} in {doc['elapsed_s']:.1f} s -> {md_path}, {json_path}")
    return 1 if doc["verdict"] == "FAIL" else (3 if doc["verdict"].startswith("SKIPPED") else 0)


if __name__ == "__main__":
    sys.exit(main())
