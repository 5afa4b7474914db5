"""oprt_bench.touched: the ops a change touches (the GPU suite's verify sweep), on made-up trees and on this
repository's own kernel sources."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from oprt_bench.touched import touched_ops

ROOT = Path(__file__).resolve().parents[2]
OPS = ["add_rms_norm", "copy", "cross_entropy", "layer_norm", "reduce_sum", "relu", "rms_norm", "rope", "softmax",
       "vector_add"]
FILES = {
    "k/norm.cu": '#include "rows.cuh"\nOPRT_DEFINE_OP(rms_norm, S, p, r)\nOPRT_DEFINE_OP(layer_norm, S, p, r)\n',
    "k/elementwise.cu": '#include "common.cuh"\noprt_status_t oprt_create_copy_descriptor(x);\n',
    "k/rows.cuh": "template <int N> void rows();\n",
    "k/common.cuh": "// nothing an op source names\n",
    "k/orphan.cuh": "// included by no source\n",
}


def _touched(*paths):
    return touched_ops(paths, OPS, FILES.get, lambda p: [f for f in FILES if f.startswith("k/")])


def test_a_file_named_after_an_op_touches_it_only():
    assert _touched("k/rope.cu") == ["rope"]
    assert _touched("tests/oprt_nvidia/test_nvidia_rope.py") == ["rope"]
    assert _touched("k/softmax_rows.cuh") == ["softmax"]
    assert _touched("ops/cross_entropy/spec.py") == ["cross_entropy"]


def test_a_source_touches_the_ops_it_defines_and_a_header_those_of_its_includers():
    assert _touched("k/norm.cu") == ["layer_norm", "rms_norm"]
    assert _touched("k/elementwise.cu") == ["copy"]
    assert _touched("k/rows.cuh") == ["layer_norm", "rms_norm"]
    assert _touched("k/common.cuh") == ["copy"]
    assert _touched("k/norm.cu", "k/rope.cu") == ["layer_norm", "rms_norm", "rope"]


def test_words_are_whole_and_docs_touch_nothing():
    # "norm" and "reduce_cols" name no op; a generic file may touch every op
    assert _touched("k/orphan.cuh") is None
    assert _touched("oprt_core/ops.py") is None
    assert _touched("k/reduce_cols.py") is None
    assert _touched("docs/kernels.md", "results/h200/x/results.csv", "README.md") == []


def test_the_repository_kernels_map_to_their_ops():
    ops = "oprt_core/src/oprt_core/operators"

    def read(p):
        f = ROOT / p
        return f.read_text() if f.is_file() else None

    def siblings(p):
        return [str(q.relative_to(ROOT)) for q in sorted((ROOT / p).parent.glob("*.cu*"))]

    assert touched_ops([f"{ops}/cross_entropy/cross_entropy.cu"], OPS, read, siblings) == ["cross_entropy"]
    assert touched_ops([f"{ops}/rms_norm/rms_norm.cu", f"{ops}/rms_norm/plan.h"], OPS, read, siblings) == ["rms_norm"]
    assert touched_ops([f"{ops}/matmul/sm90/matmul_sm90.cu"], OPS + ["matmul"], read, siblings) == ["matmul"]


def test_the_command_prints_a_list(tmp_path):
    out = subprocess.run([sys.executable, "-m", "oprt_bench.touched", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line == "all" or line == "none" or all(part for part in line.split(","))
    bad = subprocess.run([sys.executable, "-m", "oprt_bench.touched", "--nope"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "usage" in bad.stderr
