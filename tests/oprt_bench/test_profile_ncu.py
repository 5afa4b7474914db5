"""--profile ncu (oprt_bench.profile_ncu) without Nsight Compute: row selection, the command, parsing ncu's CSV
from a stored sample, and what happens where ncu is missing or not permitted (a fake runner stands in for it)."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from bench_helpers import make_registry
from click.testing import CliRunner

from oprt_bench import profile_ncu
from oprt_bench.cli import cli
from oprt_bench.errors import UsageError
from oprt_bench.profile_case import case_options
from oprt_core import DeviceInfo
from oprt_core.numpy_backend import NumpyBackend

# `ncu --import R --csv --page raw --print-units base --metrics ...` of a launch of two kernels (trimmed columns)
RAW_CSV = ('''==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC","dram__bytes.sum",'''
           '''"dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum"
"","","","","","","","","","byte","%","nsecond"
"0","4242","python3","127.0.0.1","reduce_cols_band","1","7","0","9.0","33,554,432","80.5","30,000"
"1","4242","python3","127.0.0.1","reduce_cols_band_finish","1","7","0","9.0","1,024","2.5","10,000"
''')
# the same metrics in ncu's default (scaled) units
RAW_CSV_SCALED = ('''"ID","Kernel Name","dram__bytes.sum",'''
                  '''"dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum"
"","","Mbyte","%","usecond"
"0","softmax","67.11","91.00","17.34"
''')

NVIDIA = {"device_info": {"vendor": "NVIDIA", "memory_bytes": 1 << 30}}
META = {"backends": {"nvidia": NVIDIA, "torch": NVIDIA, "numpy": {"device_info": {"vendor": "x86_64"}}}}


def row(op, case, backend, pct, status="ok", dtype="f16", spec=None):
    return {"op": op, "case": case, "dtype": dtype, "backend": backend, "status": status,
            "median_ms": 0.1 if status == "ok" else None, "pct_of_peak": pct, "pct_of_spec": spec}


ROWS = [row("copy", "1m", "nvidia", 91.0), row("softmax", "4k", "nvidia", 40.0), row("softmax", "4k", "torch", 55.0),
        row("relu", "odd", "nvidia", 12.0, status="failed"), row("copy", "1m", "numpy", 3.0),
        row("relu", "4k", "nvidia", 70.0)]


def test_profile_option_parsing():
    assert profile_ncu.parse_profile("ncu") == 2 and profile_ncu.parse_profile("ncu:5") == 5
    for bad in ("nsys", "ncu:0", "ncu:x", "ncu:"):
        if bad == "ncu:":
            assert profile_ncu.parse_profile(bad) == 2
            continue
        with pytest.raises(UsageError, match="--profile takes ncu or ncu:N"):
            profile_ncu.parse_profile(bad)
    assert profile_ncu.parse_row_names("softmax/4k/f16/nvidia, copy/1m") == [("softmax", "4k", "f16", "nvidia"),
                                                                            ("copy", "1m")]
    for bad in ("softmax", "a/b/c/d/e", "a//b", ","):
        with pytest.raises(UsageError, match="--profile-rows"):
            profile_ncu.parse_row_names(bad)


def test_the_lowest_timed_nvidia_rows_against_their_roofline_are_chosen():
    chosen = profile_ncu.select_rows(ROWS, META, 2)
    assert [(r["op"], r["backend"]) for r in chosen] == [("softmax", "nvidia"), ("softmax", "torch")]
    assert len(profile_ncu.select_rows(ROWS, META, 10)) == 4  # not the failed row, not the host's
    named = profile_ncu.select_rows(ROWS, META, 2, [("copy", "1m"), ("relu", "4k", "f16", "nvidia")])
    assert [(r["op"], r["case"], r["backend"]) for r in named] == [("copy", "1m", "nvidia"), ("relu", "4k", "nvidia")]
    uncalibrated = [row("copy", "1m", "nvidia", None, spec=80.0), row("relu", "4k", "nvidia", None, spec=20.0)]
    assert [r["op"] for r in profile_ncu.select_rows(uncalibrated, META, 1)] == ["relu"]


def test_ncu_command_profiles_one_launch_into_the_run_folder(tmp_path):
    cmd = profile_ncu.ncu_command("/opt/ncu", tmp_path, row("softmax", "4096x4096-axis0", "nvidia", 40.0),
                                  python="/py")
    assert cmd[0] == "/opt/ncu"
    assert cmd[cmd.index("--clock-control") + 1] == "none" and cmd[cmd.index("--set") + 1] == "basic"
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(profile_ncu.METRICS)
    assert cmd[cmd.index("--profile-from-start") + 1] == "off"
    assert cmd[cmd.index("--export") + 1] == str(tmp_path / "profiles" / "softmax-4096x4096-axis0-f16-nvidia")
    assert cmd[cmd.index("/py"):] == ["/py", "-m", "oprt_bench.profile_case", str(tmp_path), "softmax",
                                      "4096x4096-axis0", "f16", "nvidia"]
    assert profile_ncu.report_name(row("a b", "x/y", "n", 1.0)) == "profiles/a_b-x_y-f16-n.ncu-rep"
    imp = profile_ncu.import_command("ncu", tmp_path / "r.ncu-rep")
    assert imp[:3] == ["ncu", "--import", str(tmp_path / "r.ncu-rep")] and "raw" in imp and "base" in imp


def test_raw_csv_is_summed_over_the_launch_kernels():
    got = profile_ncu.parse_raw_csv(RAW_CSV)
    assert got["ncu_dram_bytes"] == 33_555_456 and got["ncu_time_ms"] == pytest.approx(0.04)
    assert got["ncu_dram_pct"] == pytest.approx((80.5 * 30 + 2.5 * 10) / 40)
    scaled = profile_ncu.parse_raw_csv(RAW_CSV_SCALED)
    assert scaled["ncu_dram_bytes"] == 67_110_000 and scaled["ncu_time_ms"] == pytest.approx(0.01734)
    with pytest.raises(ValueError, match="no kernel"):
        profile_ncu.parse_raw_csv("==PROF== No kernels were profiled.\n")
    # the short time units of ncu 2025 (H200 host: "ns" with --print-units base)
    short = profile_ncu.parse_raw_csv(RAW_CSV.replace('"nsecond"', '"ns"'))
    assert short["ncu_time_ms"] == pytest.approx(0.04) and short["ncu_dram_bytes"] == 33_555_456
    with pytest.raises(ValueError, match="unknown unit"):
        profile_ncu.parse_raw_csv(RAW_CSV_SCALED.replace("Mbyte", "furlong"))


class SpecGPU(NumpyBackend):
    """numpy computing, reporting an NVIDIA device with a spec peak (pct_of_spec without calibration)."""

    name = "specgpu"

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="Fake H200", vendor="NVIDIA", memory_bytes=1 << 30, spec_peak_gbps=100.0)


def sweep(tmp_path, *extra):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--isolation", "none", "--no-telemetry", "--backends",
                                 "numpy,specgpu", "--ops", "copy,relu", "--cases", "smoke", "--dtypes", "f32",
                                 "--time-budget", "0.01", "--out", str(out), *extra],
                           obj={"registry": make_registry(SpecGPU())})
    return out, r


def test_missing_ncu_is_one_line_and_the_sweep_stays(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out, r = sweep(tmp_path, "--profile", "ncu:1")
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stderr.splitlines() if "profile" in ln]
    assert lines == ["oprt-bench: profile: ncu not found on PATH (Nsight Compute); nothing profiled, the sweep's "
                     "results are kept"]
    assert "Traceback" not in r.output and not (out / "profiles").exists()
    assert all(x["ncu_report"] == "" and x["status"] == "ok" for x in csv.DictReader((out / "results.csv").open()))


def test_bad_profile_option_is_refused_before_the_sweep(tmp_path):
    out, r = sweep(tmp_path, "--profile", "nsys")
    assert r.exit_code == 2 and "--profile takes ncu or ncu:N" in r.stderr and not out.exists()


class FakeNcu:
    """Runs as subprocess.run: the profiling command writes the report, the import prints RAW_CSV."""

    def __init__(self, fail: str = ""):
        self.fail = fail
        self.commands: list[list[str]] = []

    def __call__(self, cmd, **kwargs):
        self.commands.append(cmd)
        if self.fail:
            return subprocess.CompletedProcess(cmd, 1, "", self.fail)
        if "--import" in cmd:
            return subprocess.CompletedProcess(cmd, 0, RAW_CSV, "")
        Path(cmd[cmd.index("--export") + 1] + ".ncu-rep").write_bytes(b"NCU")
        return subprocess.CompletedProcess(cmd, 0, "==PROF== Report: ...", "")


def test_profiled_rows_get_their_figures_in_csv_json_run_json_and_report(tmp_path):
    out, r = sweep(tmp_path)
    assert r.exit_code == 0, r.output
    before = {(x["op"], x["case"], x["backend"]): x for x in csv.DictReader((out / "results.csv").open())}
    fake = FakeNcu()
    result = profile_ncu.profile_run(out, 1, which=lambda name: "/opt/ncu", runner=fake)
    assert len(fake.commands) == 2 and len(result.figures) == 1, result.lines
    (key, figures), = result.figures.items()
    assert key[3] == "specgpu" and (out / figures["ncu_report"]).read_bytes() == b"NCU"
    after = {(x["op"], x["case"], x["backend"]): x for x in csv.DictReader((out / "results.csv").open())}
    profiled = after[(key[0], key[1], key[3])]
    assert profiled["ncu_dram_bytes"] == "33555456" and float(profiled["ncu_time_ms"]) == pytest.approx(0.04)
    for k, x in after.items():  # every other cell as it was written
        assert {c: v for c, v in x.items() if not c.startswith("ncu_")} == \
               {c: v for c, v in before[k].items() if not c.startswith("ncu_")}
        if x is not profiled:
            assert x["ncu_report"] == ""
    doc = json.loads((out / "results.json").read_text())
    assert [x["ncu_dram_bytes"] for x in doc["rows"] if x["ncu_report"]] == [33555456]
    meta = json.loads((out / "run.json").read_text())
    assert meta["profile"]["rows"][0]["report"] == figures["ncu_report"] and doc["run"]["profile"]
    html = (out / "report.html").read_text()
    assert "33.6 MB" in html and figures["ncu_report"] in html


def test_counter_permission_error_is_the_hint_and_stops(tmp_path):
    out, _ = sweep(tmp_path)
    fake = FakeNcu(fail="==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                        "Performance Counters")
    result = profile_ncu.profile_run(out, 3, which=lambda name: "/opt/ncu", runner=fake)
    assert len(fake.commands) == 1 and not result.figures
    assert result.lines == [result.lines[0]] and result.lines[0].endswith(profile_ncu.PERMISSION_HINT)
    assert json.loads((out / "run.json").read_text())["profile"]["rows"][0]["report"] is None


def test_profile_case_plans_only_the_row():
    opts = case_options({"cases": "smoke", "shapes": ["64x64"], "seed": 3, "ops": "all", "unknown": 1},
                        "softmax", "f16", "nvidia")
    assert (opts.ops, opts.dtypes, opts.backends, opts.baseline) == ("softmax", "f16", "nvidia", "none")
    assert opts.shapes == ("64x64",) and opts.seed == 3 and not opts.calibrate and opts.isolation == "none"
