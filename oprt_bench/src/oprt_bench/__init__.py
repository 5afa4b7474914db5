"""oprt-bench: the sweep runner, measurement loop, reports and run comparison of oprt.

Modules, one idea each:
- :mod:`.cli`: the ``oprt-bench`` command (click).
- :mod:`.sweep`: validating a sweep's options into a plan, and running it case by case.
- :mod:`.timing`: the measurement loop (warm-up, cold/warm samples, noise-based stopping).
- :mod:`.stats`: order statistics of samples and the median's confidence interval.
- :mod:`.peaks`: the spec peak bandwidth (driver figure or datasheet table) of ``pct_of_spec``.
- :mod:`.calibrate`: once per run and backend: the measured peak (a device-to-device copy) of
  ``pct_of_peak``, and the timer floor (empty launch, event resolution) of the ``launch-bound`` flag.
- :mod:`.flags`: the row flags (``launch-bound``, ``fits-in-l2``, ``above-peak``).
- :mod:`.results`: run folders, the versioned CSV schema, run.json provenance, reading runs back.
- :mod:`.report`: the self-contained HTML report.
- :mod:`.compare`: noise-aware comparison of two runs.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
