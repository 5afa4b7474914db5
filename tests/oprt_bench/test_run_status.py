"""run.json records a sweep that died of an unexpected exception as failed, not complete."""

from __future__ import annotations

import json

from test_cli import invoke

import oprt_bench.run as run_mod


def test_escaping_exception_is_recorded_as_failed(registry, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("sweep exploded")

    monkeypatch.setattr(run_mod, "run_sweep", boom)
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "relu", "--dtypes", "f32", "--cases", "smoke", "--out", str(out), "-q")
    assert r.exit_code != 0 and isinstance(r.exception, RuntimeError)
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "failed (RuntimeError: sweep exploded)"
    assert meta["exit_code"] == 1
