"""The peak bandwidths a row is measured against.

Two figures per backend device:

- the **measured** peak: a device-to-device copy calibrated through the backend once per run
  (:mod:`oprt_bench.calibrate`); ``pct_of_peak`` divides by it;
- the **spec** peak: :func:`spec_peak` -- the driver's memory clock x bus width
  (``DeviceInfo.spec_peak_gbps``, double data rate), or the datasheet figure of
  :data:`SPEC_PEAKS` where the driver reports nothing or an entry is marked as an override
  (the driver's figure known to be wrong); ``pct_of_spec`` divides by it.

GB/s are 10^9 bytes per second throughout.

And one compute figure per dtype: :func:`compute_peak`, the dense peak TFLOP/s (10^12 flop/s) of the datasheet
(:data:`COMPUTE_PEAKS`, ``source: "spec"``), where the device is known. A kernel's roofline is
``min(compute peak, memory peak x arithmetic intensity)``; the two meet at the ridge point
(:func:`ridge_point`, flop per byte). A row that computes (at least :data:`COMPUTE_INTENSITY` flop per byte moved)
gets ``pct_of_compute``, its TFLOP/s as a % of the spec peak of its dtype (:func:`roof_dtype`). The compute peak is
calibrated after the fact: :func:`measured_compute_peaks` takes the fastest such row per device and dtype (typically
the vendor library's GEMM on a large square) as the measured roof; run.json records it as ``compute_calibration``
and the report draws it beside the spec roof.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Peak", "SpecEntry", "SPEC_PEAKS", "spec_peak", "COMPUTE_PEAKS", "compute_peak", "ridge_point",
           "roof_dtype", "COMPUTE_INTENSITY", "computes", "pct_of_compute", "measured_compute_peaks", "finite_float"]

#: flop per byte from which a row counts as computing: its TFLOP/s is shown and held to a compute roof (twice the
#: most of any memory-bound op: a normalisation with weight and bias in f16)
COMPUTE_INTENSITY = 4.0


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    source: str  # measured: "measured" | "none"; spec: "driver" | "table" | "table (override)" | "none"

    def to_dict(self) -> dict[str, Any]:
        return {"gbps": self.gbps, "source": self.source}


@dataclass(frozen=True)
class SpecEntry:
    """A datasheet DRAM bandwidth in GB/s; ``override`` replaces even a driver figure (known wrong)."""

    gbps: float
    note: str
    override: bool = False


# Datasheet figures by device name (as the runtime reports it; matched case-insensitively, whitespace
# collapsed). Used where the driver gives no memory clock / bus width (e.g. CUDA 13 dropped those fields
# from cudaDeviceProp; a runtime that does not fill them), and instead of the driver's figure only for an
# entry marked ``override=True``. None is an override today: where checked, the driver's clock x bus
# width agrees with the datasheet (on the H200 it gives 4.8 TB/s; the H100 SXM's 2619 MHz x 5120 bit
# gives 3.35 TB/s). Add an override only with the evidence in its note (see docs/measurement.md).
SPEC_PEAKS: dict[str, SpecEntry] = {
    "nvidia h200": SpecEntry(4800.0, "H200 SXM 141 GB HBM3e datasheet; the driver's figure agrees"),
    "nvidia h200 nvl": SpecEntry(4800.0, "H200 NVL 141 GB HBM3e datasheet"),
    "nvidia h100 80gb hbm3": SpecEntry(3350.0, "H100 SXM5 80 GB HBM3 datasheet"),
    "nvidia h100 pcie": SpecEntry(2000.0, "H100 PCIe 80 GB HBM2e datasheet"),
    "nvidia a100-sxm4-80gb": SpecEntry(2039.0, "A100 SXM4 80 GB HBM2e datasheet"),
    "nvidia a100-sxm4-40gb": SpecEntry(1555.0, "A100 SXM4 40 GB HBM2 datasheet"),
    "nvidia a100-pcie-40gb": SpecEntry(1555.0, "A100 PCIe 40 GB HBM2 datasheet"),
    "nvidia a100 80gb pcie": SpecEntry(1935.0, "A100 PCIe 80 GB HBM2e datasheet"),
    "metax c500": SpecEntry(1800.0, "MetaX C500 64 GB HBM2e datasheet"),
}


def _key(name: str) -> str:
    return " ".join(str(name).lower().split())


def spec_peak(device_info: dict[str, Any] | None, table: dict[str, SpecEntry] | None = None) -> Peak:
    """The spec DRAM bandwidth of a device (GB/s) and where it came from."""
    info = device_info or {}
    entry = (SPEC_PEAKS if table is None else table).get(_key(info.get("name", "")))
    driver = info.get("spec_peak_gbps")
    if entry is not None and entry.override:
        return Peak(entry.gbps, "table (override)")
    if driver:
        return Peak(float(driver), "driver")
    if entry is not None:
        return Peak(entry.gbps, "table")
    return Peak(None, "none")


# Dense peak TFLOP/s per dtype from NVIDIA's datasheets (the tensor-core figures without structured sparsity, which
# halves the datasheet's headline; f32 is the CUDA cores' non-tensor rate, tf32 the tensor cores' rate for f32
# inputs rounded to TF32). By device name, matched as SPEC_PEAKS is. A device not listed has no compute roof.
_HOPPER_SXM = {"f32": 66.9, "tf32": 494.7, "f16": 989.4, "bf16": 989.4, "fp8": 1978.9}
COMPUTE_PEAKS: dict[str, dict[str, float]] = {
    "nvidia h200": _HOPPER_SXM,  # H200 SXM: the H100 SXM's SM array and clocks, dense figures as the H100 SXM's
    "nvidia h100 80gb hbm3": _HOPPER_SXM,  # H100 SXM5 datasheet
}


def compute_peak(device_info: dict[str, Any] | None, table: dict[str, dict[str, float]] | None = None
                 ) -> dict[str, dict[str, Any]]:
    """The device's dense peak per dtype, ``{dtype: {"tflops": float, "source": "spec"}}``; ``{}`` where the
    device is not in the table (``table``: default :data:`COMPUTE_PEAKS`)."""
    entry = (COMPUTE_PEAKS if table is None else table).get(_key((device_info or {}).get("name", "")))
    return {d: {"tflops": float(t), "source": "spec"} for d, t in (entry or {}).items()}


def ridge_point(peak_tflops: float, peak_gbps: float) -> float:
    """The arithmetic intensity (flop per byte) where the compute roof meets the memory roof:
    peak flop/s / peak byte/s. Below it a kernel at the roof is bandwidth-bound, above it compute-bound."""
    if not (peak_tflops > 0 and peak_gbps > 0):
        raise ValueError(f"ridge_point needs positive peaks, got {peak_tflops} TFLOP/s and {peak_gbps} GB/s")
    return peak_tflops * 1e12 / (peak_gbps * 1e9)


def roof_dtype(dtype: str, params: dict[str, Any] | None = None) -> str:
    """The compute peak a row of ``dtype`` is held to: ``tf32`` for f32 with ``allow_tf32`` set, ``fp8`` for e4m3
    (the fp8 tensor cores' dense peak), else the dtype."""
    if dtype == "e4m3":
        return "fp8"
    return "tf32" if dtype == "f32" and (params or {}).get("allow_tf32") is True else dtype


def finite_float(value: Any) -> float | None:
    """``value`` as a float, None where it is empty, not a number, NaN or infinite (a CSV cell, a JSON field)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def computes(flops: Any, nbytes: Any) -> bool:
    """Whether a row of ``flops`` over ``nbytes`` moved reaches :data:`COMPUTE_INTENSITY` flop per byte."""
    f, b = finite_float(flops), finite_float(nbytes)
    return bool(f and b and f / b >= COMPUTE_INTENSITY)


def _params(params: Any) -> dict[str, Any]:
    """A row's params: a dict, or results.csv's JSON text of one ({} for anything else)."""
    if isinstance(params, dict):
        return params
    try:
        parsed = json.loads(params) if isinstance(params, str) and params else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def pct_of_compute(tflops: Any, flops: Any, nbytes: Any, dtype: str, params: Any,
                   peaks: dict[str, dict[str, Any]]) -> float | None:
    """A row's TFLOP/s as a % of ``peaks`` (:func:`compute_peak`'s form) for its roof dtype; None for a row that
    does not compute or a dtype without a peak."""
    t = finite_float(tflops)
    peak = finite_float((peaks.get(roof_dtype(dtype, _params(params))) or {}).get("tflops"))
    if t is None or not peak or not computes(flops, nbytes):
        return None
    return 100.0 * t / peak


def measured_compute_peaks(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """The compute roof measured by the fastest kernel: ``{device: {roof dtype: {"tflops", "backend", "op", "case",
    "source": "fastest row"}}}`` over the ok rows that compute (any backend: the roof is the device's). A run with
    no such row gives {}. The figure is a floor of the true peak: as good as the best kernel the rows ran."""
    best: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        t = finite_float(r.get("tflops"))
        if str(r.get("status")) != "ok" or t is None or not computes(r.get("flops"), r.get("bytes")):
            continue
        dtype = roof_dtype(str(r.get("dtype")), _params(r.get("params")))
        per = best.setdefault(str(r.get("device") or ""), {})
        if t > per.get(dtype, {}).get("tflops", 0.0):
            per[dtype] = {"tflops": t, "backend": str(r.get("backend")), "op": str(r.get("op")),
                          "case": str(r.get("case")), "source": "fastest row"}
    return best
