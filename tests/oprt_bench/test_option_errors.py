"""Option mistakes (an empty --dtypes, a --shape too large, an unknown dtype) are one-line usage errors, not a
silent run or error rows."""

from __future__ import annotations

import pytest
from test_cli import invoke, one_error_line

SMALL = ("--ops", "relu", "--cases", "smoke", "--format", "csv", "-q")


@pytest.mark.parametrize("args, fragment", [
    (("--dtypes", ","), "--dtypes is empty; valid choices: all, "),
    (("--shape", "99999999999999999999999"), "--shape 99999999999999999999999 is too large"),
    (("--shape", "100000000000x100000000000"), "--shape 100000000000x100000000000 is too large"),
])
def test_option_mistakes_are_usage_errors(registry, tmp_path, args, fragment):
    r = invoke(registry, *SMALL, "--out", str(tmp_path / "run"), *args)
    assert r.exit_code == 2, r.output
    line = one_error_line(r)
    assert fragment in line, line
    assert not (tmp_path / "run").exists()


def test_unknown_dtype_lists_all(registry, tmp_path):
    r = invoke(registry, *SMALL, "--out", str(tmp_path / "run"), "--dtypes", "f64")
    line = one_error_line(r)
    assert "unknown dtype 'f64'" in line and "all" in line.split("valid choices: ")[1].split(", "), line


def test_peaks_has_no_peak_gbps():
    import oprt_bench.peaks as peaks

    assert not hasattr(peaks, "peak_gbps")
