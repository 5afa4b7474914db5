"""scripts/host_profile.py --backend host: the op API's whole calls through the tests' host C library, on a machine
with no GPU (how two versions of oprt_core/ops.py are compared on a machine without a device)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from op_helpers import host_ops

from oprt_core import operators

ROOT = Path(__file__).resolve().parents[2]


def test_host_profile_times_whole_calls_through_the_host_library():
    pytest.importorskip("cffi")
    if not any(shutil.which(c.split()[0]) for c in (os.environ.get("CC", ""), "cc", "gcc", "clang") if c):
        pytest.skip("no C compiler to build the host oprt.h library")
    cmd = [sys.executable, str(ROOT / "scripts/host_profile.py"), "--backend", "host", "--calls", "400"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = dict((m.group(2), float(m.group(1))) for m in re.finditer(r"^\s*(\d+)\s+(.+)$", proc.stdout, re.M))
    script = _script()
    op = script.profiled_op()
    whole = script.call_label(op, " (the whole call)")
    labels = [script.call_label(s) for s in operators.specs() if s is not op and s.name in host_ops()
              and (operators.group(s.name) == "core" or s.min_inputs + s.n_outputs >= 4)]
    assert any("arrays)" in label for label in labels)
    for name in ("launcher() (prepared buffers)", whole, f"ops.run('{op.name}', [x], out=)", *labels):
        assert rows.get(name, 0) > 0, proc.stdout
    # a whole call is the launch and more: a figure under the bare launcher's would mean the call did not launch
    assert rows[whole] > rows["launcher() (prepared buffers)"], proc.stdout


def _script():
    """scripts/host_profile.py as a module (its labels of the calls it times)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("host_profile_script", ROOT / "scripts" / "host_profile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
