"""matmul on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.matmul(a, b, out=out)`` (cuBLAS on a GPU; a transposed operand passed as the view it is), then
  ``out.mul_(alpha)`` only where alpha != 1 (a second rounding, within the budget's rtol). With c and beta != 0:
  ``torch.addmm(c, a, b, beta=beta, alpha=alpha, out=out)`` (2-D) or ``torch.baddbmm`` (batched), cuBLAS's GEMM
  with its own beta (c read once, in the epilogue); a c given with beta == 0 is not passed (not read, as the op
  declares). Before each call ``torch.backends.cuda.matmul.allow_tf32`` is set to the case's allow_tf32 and the
  f16 / bf16 reduced-precision reductions are turned off: f32 accumulation, as the op declares.
  e4m3 inputs: ``torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16, out=out)`` (cuBLASLt's fp8
  GEMM; scale_a = alpha and scale_b = 1, float32 scalars on the device) where it exists: a CUDA device of compute
  capability 8.9 or more, ``a`` row-major and ``b`` column-major (a weight's ``W.T``), K and N multiples of 16,
  2-D, no ``beta * c`` (_scaled_mm has none); other cases are unsupported, saying which rule
  (:func:`scaled_mm_refusal`, asked through the impl's ``e4m3_refusal``).
- Not in torch-compile (its TF32 choice is fixed when the graph compiles), CuPy or Liger.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import UnsupportedCase

__all__ = ["IMPLS", "scaled_mm_refusal"]


def scaled_mm_refusal(case: Any) -> str | None:
    """Why ``torch._scaled_mm`` cannot run an e4m3 matmul case as it is laid out (None: it can): 2-D only, ``a``
    row-major and ``b`` column-major (its cuBLASLt layout rule), K and N multiples of 16 (its size checks), no
    ``beta * c`` (it has no such term; its bias is one row of N)."""
    a, b = case.inputs[0], case.inputs[1]
    if len(a.shape) != 2:
        return "torch._scaled_mm takes 2-D operands only (no batched form)"
    if len(case.inputs) > 2 and case.param_dict.get("beta", 0.0) != 0:
        return "torch._scaled_mm has no beta * c term (its bias is a row of N)"
    if a.layout != "contiguous" or b.layout != "transposed":
        return (f"torch._scaled_mm needs a row-major a and a column-major b (b = W.T of a row-major weight W); "
                f"this case has a {a.layout} and b {b.layout}")
    k, n = b.shape
    if k % 16 or n % 16:
        return f"torch._scaled_mm needs K and N multiples of 16; this case has K = {k}, N = {n}"
    return None


def _torch_e4m3_refusal(torch: Any, device: Any, case: Any | None) -> str | None:
    """e4m3 matmul: torch._scaled_mm where this torch has it, on a CUDA device with fp8 tensor cores (compute
    capability 8.9+), for the cases its layout and size rules allow."""
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no torch._scaled_mm (fp8 GEMM)"
    if device.type != "cuda":
        return ("torch._scaled_mm is measured on CUDA devices with fp8 tensor cores only, not on torch's CPU test "
                "device")
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) < (8, 9):
        return f"torch._scaled_mm needs fp8 tensor cores (compute capability 8.9+); this device is {major}.{minor}"
    return scaled_mm_refusal(case) if case is not None else None


def _matmul_flags(torch, allow_tf32: bool) -> None:
    """torch's global matmul switches as the op declares: TF32 only where asked, f32 accumulation for 16-bit."""
    flags = torch.backends.cuda.matmul
    flags.allow_tf32 = allow_tf32
    flags.allow_fp16_reduced_precision_reduction = False
    if hasattr(flags, "allow_bf16_reduced_precision_reduction"):
        flags.allow_bf16_reduced_precision_reduction = False


def _scaled_mm(torch, inputs, out, params) -> Callable[[], Any]:
    """e4m3 a @ b on fp8 tensor cores: torch._scaled_mm with alpha as scale_a (module docstring)."""
    a, b = inputs[:2]
    if a.dim() != 2:
        raise UnsupportedCase("torch._scaled_mm takes 2-D operands only (no batched form)")
    if len(inputs) > 2 and float(params["beta"]) != 0.0:
        raise UnsupportedCase("torch._scaled_mm has no beta * c term (its bias is a row of N)")
    if a.stride(-1) != 1 or b.stride(-2) != 1:
        raise UnsupportedCase(f"torch._scaled_mm needs a row-major a and a column-major b; got strides {a.stride()} "
                              f"and {b.stride()}")
    scale_a = torch.tensor(float(params["alpha"]), dtype=torch.float32, device=a.device)
    scale_b = torch.ones((), dtype=torch.float32, device=a.device)
    scaled_mm, bf16 = torch._scaled_mm, torch.bfloat16
    if out.is_contiguous():
        return lambda: scaled_mm(a, b, scale_a, scale_b, out_dtype=bf16, out=out)
    return lambda: out.copy_(scaled_mm(a, b, scale_a, scale_b, out_dtype=bf16))


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    a, b = inputs[:2]
    if a.dtype == torch.float8_e4m3fn:
        return _scaled_mm(torch, inputs, out, params)
    alpha, beta, tf32, matmul = float(params["alpha"]), float(params["beta"]), bool(params["allow_tf32"]), torch.matmul

    if len(inputs) > 2 and beta != 0.0:  # out = alpha * a @ b + beta * c in one cuBLAS GEMM
        c = inputs[2]
        gemm = torch.addmm if a.dim() == 2 else torch.baddbmm

        def run_c() -> Any:
            _matmul_flags(torch, tf32)
            return gemm(c, a, b, beta=beta, alpha=alpha, out=out)

        return run_c
    if alpha == 1.0:
        def run() -> Any:
            _matmul_flags(torch, tf32)
            return matmul(a, b, out=out)
    else:
        def run() -> Any:
            _matmul_flags(torch, tf32)
            return matmul(a, b, out=out).mul_(alpha)

    return run


_torch.e4m3_refusal = _torch_e4m3_refusal  # type: ignore[attr-defined]  # e4m3 inputs too, where _scaled_mm can

IMPLS = {"torch": _torch}
