"""--timing graph on the host: the buffer rotation from the L2 size and working set, the sampling loop driven by a
fake CUDA runtime, the fallback (and its reason) for backends that cannot be captured, the columns. The capture on a
GPU is tested at the end (skipped without one)."""

from __future__ import annotations

import csv
import importlib.util

import numpy as np
import pytest
from bench_helpers import make_registry
from click.testing import CliRunner

from oprt_bench.calibrate import TimerCheck
from oprt_bench.cli import cli
from oprt_bench.errors import UsageError
from oprt_bench.execute import fill_row, prepare_case
from oprt_bench.graph import MAX_SETS, RotationPlan, measure_graph, rotation_plan, runtime_for, time_graphs
from oprt_bench.model import BackendEntry, Row, SweepOptions
from oprt_bench.peaks import Peak
from oprt_bench.plan import make_plan
from oprt_bench.results import COLUMNS
from oprt_bench.timing import TimingConfig
from oprt_core.compiled import CompiledBackend
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators import equip

MiB = 1 << 20


# -- the rotation -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("ws", "l2", "sets"), [
    (10 * MiB, 50 * MiB, 11),  # 10 x 10 MiB = 2 x L2 exactly is not past it: 11
    (7 * MiB, 50 * MiB, 15),  # 15 x 7 = 105 > 100
    (100 * MiB, 50 * MiB, 2),  # 1 x 100 = 2 x L2: one more
    (101 * MiB, 50 * MiB, 1),  # past 2 x L2 by itself
    (512 * MiB, 60 * MiB, 1),
])
def test_rotation_is_the_least_count_past_twice_the_l2(ws, l2, sets):
    plan = rotation_plan(ws, l2)
    assert plan.sets == sets and not plan.flush_between
    assert plan.sets * ws > 2 * l2 and (plan.sets - 1) * ws <= 2 * l2


def test_a_small_working_set_is_capped_and_flushed_between_samples():
    plan = rotation_plan(4096, 60 * MiB)
    assert plan.sets == MAX_SETS and plan.flush_between
    assert "flushed before each sample" in plan.describe() and "64 buffer sets" in plan.describe()


def test_the_memory_cap_bounds_the_extra_sets():
    # 16 MiB sets on an L2 of 60 MiB need 8; a device of 64 MiB lends a quarter (16 MiB): one extra set
    plan = rotation_plan(16 * MiB, 60 * MiB, memory_bytes=64 * MiB)
    assert plan.sets == 2 and plan.flush_between
    assert rotation_plan(16 * MiB, 60 * MiB, memory_bytes=80 * 1024 * MiB).sets == 8


def test_warm_timing_and_unknown_l2():
    assert rotation_plan(MiB, 60 * MiB, cold=False) == RotationPlan(1, MiB, 60 * MiB, False)
    unknown = rotation_plan(MiB, None)
    assert unknown.sets == 1 and unknown.flush_between and "L2 size unknown" in unknown.describe()
    with pytest.raises(ValueError, match="positive"):
        rotation_plan(0, 60 * MiB)


def test_describe_names_the_rotation():
    assert rotation_plan(10 * MiB, 50 * MiB).describe() == "graph replay, 11 buffer sets x 10 MiB > 2x L2 (50 MiB)"


# -- who can be captured ---------------------------------------------------------------------------------------

def test_numpy_falls_back_with_the_reason():
    make, reason = runtime_for(NumpyBackend())
    assert make is None and reason == "numpy is a host backend: no CUDA graph to capture"


def test_torch_on_the_cpu_and_a_non_cuda_compiled_backend_fall_back():
    from oprt_bench.baselines import TorchBackend

    make, reason = runtime_for(TorchBackend("cpu"))
    assert make is None and "runs on the CPU" in reason
    mxcc = CompiledBackend("metax", loader=lambda: None, cuda_interop=False)
    make, reason = runtime_for(mxcc)
    assert make is None and "not CUDA memory" in reason
    nvidia = CompiledBackend("nvidia", loader=lambda: None, cuda_interop=True)
    make, reason = runtime_for(nvidia)
    if importlib.util.find_spec("cupy") is None and importlib.util.find_spec("torch") is None:
        assert make is None and "needs CuPy or torch" in reason
    else:
        assert make is not None and reason == ""


# -- the sampling loop with a fake runtime ---------------------------------------------------------------------

class FakeRuntime:
    """Records what the loop asks for; a replay of graph k takes 0.010 + 0.001 k ms."""

    name = "fake"
    handle = 1234

    def __init__(self) -> None:
        self.log: list[str] = []
        self.start, self.end = "start", "end"
        self.last = 0.0

    def run(self, fn):
        self.log.append("eager")
        fn()

    def capture(self, launch):
        self.log.append("capture")
        launch()
        return len([e for e in self.log if e == "capture"]) - 1

    def replay(self, graph):
        self.log.append(f"replay{graph}")
        self.last = 0.010 + 0.001 * graph

    def spin(self, cycles):
        assert cycles > 0
        self.log.append("spin")

    def record(self, event):
        self.log.append(event)

    def elapsed_ms(self):
        return self.last

    def synchronize(self):
        pass


class CountingBackend(NumpyBackend):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush_cache(self, clean: bool = False) -> None:
        self.flushes += 1


CONFIG = TimingConfig(time_budget_s=10.0, target_rel_ci=0.0, min_samples=5, max_samples=9, warmup_s=0.0,
                      warmup_calls=1, timer="graph")


def test_one_replay_per_sample_round_robin_after_a_spin():
    rt, backend = FakeRuntime(), CountingBackend()
    launched: list[int] = []
    launches = [lambda k=k: launched.append(k) for k in range(3)]
    m = time_graphs(backend, rt, launches, RotationPlan(3, MiB, MiB, False), CONFIG)
    assert launched == [0, 0, 1, 1, 2, 2]  # each set: eager, then captured
    timed = rt.log[rt.log.index("spin"):]
    assert timed[:4] == ["spin", "start", "replay0", "end"]
    replays = [e for e in timed if e.startswith("replay")]
    assert replays == [f"replay{i % 3}" for i in range(len(replays))]
    assert timed.count("spin") == m.summary.samples == 9 and backend.flushes == 0
    assert m.samples_ms == pytest.approx([0.010 + 0.001 * (i % 3) for i in range(9)])
    for i, e in enumerate(timed):  # every replay timed is bracketed by the two events, the spin before them
        if e.startswith("replay"):
            assert timed[i - 2:i] == ["spin", "start"] and timed[i + 1] == "end"


def test_a_capped_rotation_flushes_before_each_sample():
    rt, backend = FakeRuntime(), CountingBackend()
    m = time_graphs(backend, rt, [lambda: None], RotationPlan(1, 4096, MiB, True), CONFIG)
    assert backend.flushes == m.summary.samples == 9


def _entry(backend, floor_ms=0.005, resolution_ms=0.0005) -> BackendEntry:
    timer = TimerCheck(floor_ms, floor_ms, "empty_launch_probe", resolution_ms, "documented",
                       launch_bound_below_ms=10 * floor_ms)
    return BackendEntry(backend.name, backend, "dev", {"l2_bytes": 64 * 1024, "memory_bytes": 1 << 30},
                        Peak(None, "none"), timer=timer)


def _row_for(entry, op="relu", case_index=0, dtype="f32", timing=CONFIG):
    registry = make_registry()
    spec = registry.get_op(op)
    case = spec.case_sets["smoke"][case_index]
    row = Row(op=op, case=case.name, shape=case.shape_str, dtype=dtype, backend=entry.name)
    fill_row(entry, spec, case, dtype, prepare_case(spec, case, dtype, 1), "all", timing, row)
    return row


def test_a_graph_row_says_graph_keeps_the_events_figure_when_launch_bound(monkeypatch):
    rts: list[FakeRuntime] = []

    def fake(backend):
        def make():
            rts.append(FakeRuntime())
            return rts[-1]
        return make, ""

    monkeypatch.setattr("oprt_bench.graph.runtime_for", fake)
    backend = equip(NumpyBackend())
    row = _row_for(_entry(backend))
    assert row.status == "ok" and row.timer == "graph", row.message
    # the relu smoke case (1000 f32, in and out: 8000 B) against an L2 of 64 KiB: 17 sets
    assert row.timer_note == rotation_plan(8000, 64 * 1024).describe() and "17 buffer sets" in row.timer_note
    assert rts[0].log.count("capture") == 17
    assert row.median_ms == pytest.approx(0.018, abs=0.0085)  # the fake replays: 0.010..0.026 ms
    # under the events' launch-bound threshold (0.05 ms): the events' median beside it, from host timestamps
    assert row.event_median_ms is not None and row.event_median_ms > 0 and row.event_median_ms != row.median_ms
    # judged against the timer's resolution (5 us): not launch-bound
    assert "launch-bound" not in row.flags


def test_a_capture_that_fails_falls_back_with_the_reason(monkeypatch):
    class Broken(FakeRuntime):
        def capture(self, launch):
            raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr("oprt_bench.graph.runtime_for", lambda backend: (Broken, ""))
    row = _row_for(_entry(equip(NumpyBackend())))
    assert row.status == "ok" and row.timer == "events"
    assert row.timer_note == "events: graph capture failed: RuntimeError: operation not permitted when stream is " \
                             "capturing"
    assert row.event_median_ms is None


def test_measure_graph_copies_the_inputs_for_each_extra_set():
    backend = equip(NumpyBackend())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = backend.empty((2, 3), "f32")
    launcher = backend.prepare("relu", [backend.to_device(x)], out, {})
    rt = FakeRuntime()
    m, note = measure_graph(backend, launcher, launcher_inputs(launcher, x, backend), out, [x], (2, 3), "f32",
                            CONFIG, {"l2_bytes": 100}, make_runtime=lambda: rt)
    assert m is not None and "5 buffer sets x" in note  # 48 B a set, 2 x 100 B of L2: 5 sets
    assert rt.log.count("capture") == 5


def launcher_inputs(launcher, x, backend):
    return [backend.to_device(x)]


# -- options and columns ---------------------------------------------------------------------------------------

def test_the_columns_and_the_option():
    i = COLUMNS.index("timer")
    assert COLUMNS[i:i + 3] == ("timer", "timer_note", "event_median_ms")
    with pytest.raises(ValueError, match="timer must be one of events, graph"):
        TimingConfig(timer="cuda")
    with pytest.raises(UsageError, match="unknown timing 'cuda'"):
        make_plan(make_registry(), SweepOptions(backends="numpy", timer="cuda"))
    assert make_plan(make_registry(), SweepOptions(backends="numpy", timer="graph")).timing.timer == "graph"


def test_a_numpy_sweep_with_graph_timing_says_events_and_why(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["--no-calibrate", "--backends", "numpy", "--ops", "relu", "--cases", "smoke",
                                      "--dtypes", "f32", "--time-budget", "0.01", "--timing", "graph", "--format",
                                      "csv", "--out", str(out)], obj={"registry": make_registry()})
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(out / "results.csv", encoding="utf-8")))
    assert rows and {r["timer"] for r in rows} == {"events"}
    assert {r["timer_note"] for r in rows} == {"events: numpy is a host backend: no CUDA graph to capture"}
    bad = CliRunner().invoke(cli, ["--backends", "numpy", "--timing", "cuda"], obj={"registry": make_registry()})
    assert bad.exit_code == 2 and "Invalid value for '--timing'" in bad.output


def test_an_events_sweep_fills_the_timer_column(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["--no-calibrate", "--backends", "numpy", "--ops", "relu", "--cases", "smoke",
                                      "--dtypes", "f32", "--time-budget", "0.01", "--format", "csv", "--out",
                                      str(out)], obj={"registry": make_registry()})
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(out / "results.csv", encoding="utf-8")))
    assert {r["timer"] for r in rows} == {"events"} and {r["timer_note"] for r in rows} == {""}


# -- on a GPU ----------------------------------------------------------------------------------------------------

def _cuda_torch():
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return torch if torch.cuda.is_available() else None


@pytest.mark.skipif(_cuda_torch() is None, reason="needs torch with a CUDA device (graph capture on a GPU)")
def test_torch_rows_are_graph_timed_on_a_gpu():
    from oprt_bench.baselines import TorchBackend
    from oprt_core.operators import equip

    backend = equip(TorchBackend())
    assert backend.availability().ok
    entry = BackendEntry("torch", backend, "gpu", backend.device_info().to_dict(), Peak(None, "none"))
    row = _row_for(entry, op="softmax", timing=TimingConfig(time_budget_s=0.1, timer="graph"))
    assert row.status == "ok" and row.timer == "graph", (row.message, row.timer_note)
    assert "buffer sets" in row.timer_note and row.median_ms > 0
