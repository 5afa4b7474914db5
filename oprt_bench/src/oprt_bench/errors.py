"""The one exception the CLI turns into a one-line usage error (exit 2)."""

from __future__ import annotations

from oprt_core import OprtError

__all__ = ["UsageError"]


class UsageError(OprtError):
    """A user mistake: bad option value, unknown name, unwritable folder, missing run."""
