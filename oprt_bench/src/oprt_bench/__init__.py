"""oprt-bench: the sweep runner, measurement loop, reports and run comparison of oprt.

Modules, one idea each:
- :mod:`.cli`: the ``oprt-bench`` command (click): parses options, calls :mod:`.run` and :mod:`.views`.
- :mod:`.model`: the data of a sweep: options, plan, backend entry, row, a worker's tasks (dataclasses).
- :mod:`.plan`: validating a sweep's options into a plan (availability probed via :mod:`.availability`).
- :mod:`.sweep`: calibrating a plan's backends and running it case by case into rows.
- :mod:`.runners`, :mod:`.worker`, :mod:`.execute`: where a row runs (a backend's worker process, or this
  one) and how it is computed (inputs, check, timing).
- :mod:`.run`: a sweep into a run folder (provenance, writer, interruption, report); rebuilding a report.
- :mod:`.views`: the ``backends``, ``ops`` and ``compare`` outputs.
- :mod:`.errors`: the usage error, and an exception as one line.
- :mod:`.timing`: the measurement loop (warm-up, cold/warm samples, noise-based stopping).
- :mod:`.stats`: order statistics of samples and the median's confidence interval.
- :mod:`.peaks`: the spec peak bandwidth (driver figure or datasheet table) of ``pct_of_spec``.
- :mod:`.calibrate`: once per run and backend: the measured peak (a device-to-device copy) of
  ``pct_of_peak``, and the timer floor (empty launch, event resolution) of the ``launch-bound`` flag.
- :mod:`.flags`: the row flags (``launch-bound``, ``fits-in-l2``, ``above-peak``).
- :mod:`.results`: run folders, the versioned CSV schema, run.json provenance, reading runs back.
- :mod:`.resume`: ``--resume``: what a run to continue must share with the new one.
- :mod:`.progress`: the progress bar or lines of a sweep.
- :mod:`.report`: the self-contained HTML report.
- :mod:`.compare`: noise-aware comparison of two runs.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
