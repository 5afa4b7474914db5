"""A row's memory need is checked before its case is drawn: a case that cannot fit is a skipped row naming what it
needs and what there is, never a worker killed by the out-of-memory killer."""

from __future__ import annotations

import csv

import pytest
from bench_helpers import isolated_env, run_script

from oprt_bench.errors import UsageError
from oprt_bench.memory import DEVICE_SHARE, case_need, host_available, memory_refusal, parse_bytes
from oprt_core.plugins import get_registry
from oprt_core.spec import Case, TensorCase


def _softmax_case(rows: int, cols: int) -> Case:
    return Case("softmax", f"{rows}x{cols}", (TensorCase((rows, cols)),), (("axis", -1),))


def test_need_counts_inputs_reference_and_check():
    spec = get_registry().get_op("softmax")
    n = 1000 * 3000
    host_backend = case_need(spec, _softmax_case(1000, 3000), "f32", on_host=True)
    device_backend = case_need(spec, _softmax_case(1000, 3000), "f32", on_host=False)
    assert device_backend.device == 2 * 4 * n  # input and output in f32
    # input, its float64 copy, the float64 reference, the output fetched back and two float64 temporaries
    assert device_backend.host == 4 * n + 8 * n + 8 * n + 4 * n + 16 * n

    assert host_backend.device == 0 and host_backend.host > device_backend.host
    assert case_need(spec, _softmax_case(1000, 3000), "bf16", on_host=False).device == 2 * 2 * n


def test_refusal_names_both_figures():
    spec = get_registry().get_op("softmax")
    case = _softmax_case(4096, 256000)
    why = memory_refusal(spec, case, "f32", {}, available=8 * 2**30)
    assert why is not None and "of host memory" in why and "8.0 GiB is available" in why
    assert memory_refusal(spec, case, "f32", {}, available=2**40) is None
    small_gpu = {"memory_bytes": 4 * 2**30}
    why = memory_refusal(spec, case, "f32", small_gpu, available=2**40)
    assert why is not None and "of device memory" in why and "the device has 4.0 GiB" in why
    assert memory_refusal(spec, case, "f32", {"memory_bytes": int(16 * 2**30 / DEVICE_SHARE)}, available=2**40) \
        is None


def test_host_memory_setting(monkeypatch):
    assert parse_bytes("8G") == 8 * 2**30 and parse_bytes("512MiB") == 512 * 2**20 and parse_bytes("1024") == 1024
    monkeypatch.setenv("OPRT_HOST_MEMORY", "3G")
    assert host_available() == 3 * 2**30
    monkeypatch.setenv("OPRT_HOST_MEMORY", "lots")
    with pytest.raises(UsageError, match="OPRT_HOST_MEMORY='lots' is not a size"):
        host_available()
    monkeypatch.delenv("OPRT_HOST_MEMORY")
    assert host_available() is None or host_available() > 0


def test_a_case_too_big_for_the_host_is_a_skipped_row(tmp_path):
    """Through the console script, with the worker: the 64 MiB case asks more than OPRT_HOST_MEMORY allows and is
    skipped with both figures, the small one runs; exit 0. A malformed setting is a one-line usage error."""
    out = tmp_path / "run"
    p = run_script("--ops", "softmax", "--backends", "numpy", "--shape", "4096x4096", "--shape", "64x100",
                   "--dtypes", "f32", "--mode", "test", "--no-calibrate", "--format", "csv", "--out", str(out),
                   env=isolated_env(OPRT_HOST_MEMORY="200M"))
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {r["case"]: r for r in csv.DictReader((out / "results.csv").open())}
    assert rows["64x100-axis-1"]["status"] == "ok"
    big = rows["4096x4096-axis-1"]
    assert big["status"] == "skipped", big
    assert "of host memory" in big["message"] and "0.2 GiB is available" in big["message"]
    assert "1 skipped" in p.stdout
    bad = run_script("--ops", "softmax", "--backends", "numpy", "--shape", "64x100", "--out", str(tmp_path / "bad"),
                     env=isolated_env(OPRT_HOST_MEMORY="lots"))
    assert bad.returncode == 2 and "OPRT_HOST_MEMORY" in bad.stderr and "Traceback" not in bad.stderr


def test_need_of_a_loss_counts_temporaries_of_its_inputs():
    """A loss over (tokens, vocabulary) logits has a (tokens,) output, but its reference and check work on the
    logits: measured on this machine's numpy backend, 1024 x 128000 f32 peaked at 3.0 GiB of RSS."""
    spec = get_registry().get_op("cross_entropy")
    case = spec.custom_case_fn((1024, 128000), {"reduction": "none", "ignore_index": -100})
    need = case_need(spec, case, "f32", on_host=True)
    assert need.host >= 3.0 * 2**30
