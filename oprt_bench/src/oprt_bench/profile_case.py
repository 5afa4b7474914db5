"""One case of one backend of a run, launched once inside a profiler range: what ``--profile ncu`` runs under
Nsight Compute.

    python -m oprt_bench.profile_case RUN_DIR OP CASE DTYPE BACKEND

The case is rebuilt from the run's options (case set, ``--shape``, ``--shapes FILE``) and drawn from the
row's seed, so the profiled launch is the row's. The launch runs once outside the range (module loading,
autotuning), then once between ``cuProfilerStart`` and ``cuProfilerStop``: ncu, started with
``--profile-from-start off``, profiles that launch's kernels only. A one-line message and exit status 2
where the case cannot be rebuilt or run; 3 where the profiler range cannot be opened.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["case_options", "main"]


def case_options(options: dict[str, Any], op: str, dtype: str, backend: str) -> Any:
    """The sweep options that plan exactly ``op`` x ``dtype`` on ``backend`` with the run's cases."""
    from .model import SweepOptions

    fields = {f.name for f in dataclasses.fields(SweepOptions)}
    kept: dict[str, Any] = {k: (tuple(v) if k == "shapes" else v) for k, v in options.items() if k in fields}
    return dataclasses.replace(SweepOptions(**kept), ops=op, dtypes=dtype, backends=backend, baseline="none",
                               mode="bench", calibrate=False, isolation="none", telemetry=False)


def _profiler(call: str) -> int:
    lib = ctypes.CDLL("libcuda.so.1")
    return int(getattr(lib, call)())


def _run(run_dir: Path, op: str, case_name: str, dtype: str, backend_name: str) -> int:
    from oprt_core import get_registry

    from .execute import prepare_case
    from .plan import make_plan
    from .sweep import case_seed

    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    plan = make_plan(get_registry(), case_options(meta.get("options") or {}, op, dtype, backend_name))
    cases = [c for c in plan.cases.get(op, []) if c.name == case_name]
    if not plan.specs or not cases or not plan.backends:
        print(f"profile_case: {op} {case_name} {dtype} {backend_name} is not in the run's plan", file=sys.stderr)
        return 2
    spec, case, entry = plan.specs[0], cases[0], plan.backends[0]
    inputs, _, error, _ = prepare_case(spec, case, dtype, case_seed(int(meta.get("seed", 0)), op, case_name, dtype))
    if inputs is None:
        print(f"profile_case: {error or 'the op lacks the dtype'}", file=sys.stderr)
        return 2
    backend = entry.backend
    arrays = [backend.to_device(x) for x in inputs]
    out = spec.new_outputs(backend, [x.shape for x in inputs], case.param_dict, dtype)
    launch = backend.prepare(spec.name, arrays, out, case.param_dict)
    launch()
    backend.synchronize()
    rc = _profiler("cuProfilerStart")
    if rc != 0:
        print(f"profile_case: cuProfilerStart returned CUresult {rc}", file=sys.stderr)
        return 3
    launch()
    backend.synchronize()
    _profiler("cuProfilerStop")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 5:
        print("usage: python -m oprt_bench.profile_case RUN_DIR OP CASE DTYPE BACKEND", file=sys.stderr)
        return 2
    try:
        return _run(Path(args[0]), *args[1:])
    except Exception as exc:  # noqa: BLE001 - one line for the parent to show, not a traceback
        print(f"profile_case: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
