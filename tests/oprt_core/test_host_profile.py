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

ROOT = Path(__file__).resolve().parents[2]


def test_host_profile_times_whole_calls_through_the_host_library():
    pytest.importorskip("cffi")
    if not any(shutil.which(c.split()[0]) for c in (os.environ.get("CC", ""), "cc", "gcc", "clang") if c):
        pytest.skip("no C compiler to build the host oprt.h library")
    cmd = [sys.executable, str(ROOT / "scripts/host_profile.py"), "--backend", "host", "--calls", "400"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = dict((m.group(2), float(m.group(1))) for m in re.finditer(r"^\s*(\d+)\s+(.+)$", proc.stdout, re.M))
    for name in ("launcher() (prepared buffers)", "ops.relu(x, out=) (the whole call)", "ops.vector_add(x, y, out=)",
                 "ops.run('relu', [x], out=)", "ops.layer_norm(x, w, b, out=) (4 arrays)",
                 "ops.add_rms_norm(x, r, w, out=(o, h)) (5 arrays)",
                 "ops.rope(q, k, cos, sin, pos, out=(qo, ko)) (7 arrays)"):
        assert rows.get(name, 0) > 0, proc.stdout
    # a whole call is the launch and more: a figure under the bare launcher's would mean the call did not launch
    assert rows["ops.relu(x, out=) (the whole call)"] > rows["launcher() (prepared buffers)"], proc.stdout
