"""The one exception the CLI turns into a one-line usage error (exit 2), and how any exception becomes one line."""

from __future__ import annotations

from oprt_core import OprtError

__all__ = ["UsageError", "one_line"]


class UsageError(OprtError):
    """A user mistake: bad option value, unknown name, unwritable folder, missing run."""


def one_line(exc: BaseException) -> str:
    """``TypeName: message`` with the message's whitespace (newlines too) collapsed; ``TypeName`` alone when empty.
    What a row's ``message``, a calibration's ``error`` and run.json's failed status say of an exception."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
