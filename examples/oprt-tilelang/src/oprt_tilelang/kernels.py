"""The TileLang kernels of the five core ops: one factory per kernel, building a ``T.prim_func`` for a KernelKey.

Imported when a kernel is first compiled (:func:`compile_key`), never at registration. Every kernel
takes contiguous tensors whose extents are dynamic (``T.dynamic``): one compiled kernel serves every
shape of its class; the block sizes, thread counts and dtypes come from the key
(:mod:`oprt_tilelang.layout` chooses them). Arithmetic is in f32, rounded once to the output's dtype.

- ``ew_copy``, ``ew_relu`` (the slope a runtime f32 argument), ``ew_add``: one flat index, ``block``
  elements a block; ``ew_add_row``: ``b`` is a row of ``r`` elements repeated, read at ``idx % r``.
- ``sum_rows``: ``X[m, n]`` summed along ``n`` into ``Out[s, m]``: a ``[BO, BK]`` f32 tile accumulated over
  the block's part of ``n`` (part ``s`` of ``S``: S == 1 unless split), then ``T.reduce_sum`` across threads.
- ``sum_cols``: ``X[o, n, i]`` summed along ``n`` into ``Out[s, o, i]``: a ``[BK, BI]`` tile, ``T.reduce_sum``
  along its first dim.
- ``softmax_rows``: ``BO`` rows of up to ``BN`` elements in one fragment: ``T.reduce_max``, exp, ``T.reduce_sum``.
- ``softmax_rows_online``: one row a block, ``BN``-element chunks: a pass of running max and rescaled sum,
  then a normalising pass (two reads of the row).
- ``softmax_cols``: one column a thread (``BI`` columns a block), running max and sum along ``n``, then a
  normalising pass; each step's loads are contiguous across the block.

Out-of-range lanes are guarded by ``T.if_then_else`` (loads) and ``if`` (stores).
"""

# no ``from __future__ import annotations``: TileLang evaluates the T.Tensor annotations, which name the factory's
# locals (dtype, extents)
import time
from collections.abc import Callable
from typing import Any

import tilelang
import tilelang.language as T

from .layout import KernelKey

__all__ = ["FACTORIES", "build", "compile_key"]

F32 = "float32"


def _ew(op: str, key: KernelKey) -> Any:
    dt, block, threads = key.out_dtype, key.param("block"), key.param("threads")
    n = T.dynamic("n")

    if op == "copy":
        @T.prim_func
        def ew_copy(X: T.Tensor((n,), dt), Out: T.Tensor((n,), dt)):
            with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
                for i in T.Parallel(block):
                    idx = bx * block + i
                    if idx < n:
                        Out[idx] = X[idx]

        return ew_copy
    if op == "relu":
        @T.prim_func
        def ew_relu(X: T.Tensor((n,), dt), Out: T.Tensor((n,), dt), slope: T.float32):
            with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
                for i in T.Parallel(block):
                    idx = bx * block + i
                    if idx < n:
                        v = T.cast(X[idx], F32)
                        Out[idx] = T.cast(T.if_then_else(v > 0, v, v * slope), dt)

        return ew_relu
    if op == "add":
        @T.prim_func
        def ew_add(A: T.Tensor((n,), dt), B: T.Tensor((n,), dt), Out: T.Tensor((n,), dt)):
            with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
                for i in T.Parallel(block):
                    idx = bx * block + i
                    if idx < n:
                        Out[idx] = T.cast(T.cast(A[idx], F32) + T.cast(B[idx], F32), dt)

        return ew_add
    r = T.dynamic("r")

    @T.prim_func
    def ew_add_row(A: T.Tensor((n,), dt), B: T.Tensor((r,), dt), Out: T.Tensor((n,), dt)):
        with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
            for i in T.Parallel(block):
                idx = bx * block + i
                if idx < n:
                    Out[idx] = T.cast(T.cast(A[idx], F32) + T.cast(B[idx % r], F32), dt)

    return ew_add_row


def _sum_rows(key: KernelKey) -> Any:
    in_dt, out_dt = key.in_dtype, key.out_dtype
    bo, bk, threads = key.param("BO"), key.param("BK"), key.param("threads")
    m, n, s = T.dynamic("m, n, s")

    @T.prim_func
    def sum_rows(X: T.Tensor((m, n), in_dt), Out: T.Tensor((s, m), out_dt)):
        with T.Kernel(T.ceildiv(m, bo), s, threads=threads) as (bx, by):
            acc = T.alloc_fragment((bo, bk), F32)
            total = T.alloc_fragment((bo,), F32)
            T.clear(acc)
            chunk = T.ceildiv(T.ceildiv(n, s), bk) * bk  # the part of n this block sums: [by * chunk, ... + chunk)
            for k in T.serial(T.ceildiv(chunk, bk)):
                for i, j in T.Parallel(bo, bk):
                    row = bx * bo + i
                    col = by * chunk + k * bk + j
                    acc[i, j] += T.if_then_else(row < m, T.if_then_else(col < n, T.cast(X[row, col], F32), 0.0), 0.0)
            T.reduce_sum(acc, total, dim=1)
            for i in T.Parallel(bo):
                if bx * bo + i < m:
                    Out[by, bx * bo + i] = T.cast(total[i], out_dt)

    return sum_rows


def _sum_cols(key: KernelKey) -> Any:
    in_dt, out_dt = key.in_dtype, key.out_dtype
    bi, bk, threads = key.param("BI"), key.param("BK"), key.param("threads")
    o, n, c, s = T.dynamic("o, n, c, s")

    @T.prim_func
    def sum_cols(X: T.Tensor((o, n, c), in_dt), Out: T.Tensor((s, o, c), out_dt)):
        with T.Kernel(T.ceildiv(c, bi), o, s, threads=threads) as (bx, by, bz):
            acc = T.alloc_fragment((bk, bi), F32)
            total = T.alloc_fragment((bi,), F32)
            T.clear(acc)
            chunk = T.ceildiv(T.ceildiv(n, s), bk) * bk
            for k in T.serial(T.ceildiv(chunk, bk)):
                for j, i in T.Parallel(bk, bi):
                    row = bz * chunk + k * bk + j
                    col = bx * bi + i
                    acc[j, i] += T.if_then_else(row < n, T.if_then_else(col < c, T.cast(X[by, row, col], F32), 0.0),
                                                0.0)
            T.reduce_sum(acc, total, dim=0)
            for i in T.Parallel(bi):
                if bx * bi + i < c:
                    Out[bz, by, bx * bi + i] = T.cast(total[i], out_dt)

    return sum_cols


def _softmax_rows(key: KernelKey) -> Any:
    dt, bo, bn, threads = key.out_dtype, key.param("BO"), key.param("BN"), key.param("threads")
    m, n = T.dynamic("m, n")

    @T.prim_func
    def softmax_rows(X: T.Tensor((m, n), dt), Y: T.Tensor((m, n), dt)):
        with T.Kernel(T.ceildiv(m, bo), threads=threads) as bx:
            x = T.alloc_fragment((bo, bn), F32)
            mx = T.alloc_fragment((bo,), F32)
            total = T.alloc_fragment((bo,), F32)
            for i, j in T.Parallel(bo, bn):
                row = bx * bo + i
                x[i, j] = T.if_then_else(row < m, T.if_then_else(j < n, T.cast(X[row, j], F32), -T.infinity(F32)),
                                         -T.infinity(F32))
            T.reduce_max(x, mx, dim=1)
            for i, j in T.Parallel(bo, bn):
                x[i, j] = T.exp(x[i, j] - mx[i])
            T.reduce_sum(x, total, dim=1)
            for i, j in T.Parallel(bo, bn):
                if bx * bo + i < m and j < n:
                    Y[bx * bo + i, j] = T.cast(x[i, j] / total[i], dt)

    return softmax_rows


def _softmax_rows_online(key: KernelKey) -> Any:
    dt, bn, threads = key.out_dtype, key.param("BN"), key.param("threads")
    m, n = T.dynamic("m, n")

    @T.prim_func
    def softmax_rows_online(X: T.Tensor((m, n), dt), Y: T.Tensor((m, n), dt)):
        with T.Kernel(m, threads=threads) as bx:
            x = T.alloc_fragment((bn,), F32)
            chunk_max = T.alloc_fragment((1,), F32)
            chunk_sum = T.alloc_fragment((1,), F32)
            run_max = T.alloc_fragment((1,), F32)
            run_sum = T.alloc_fragment((1,), F32)
            new_max = T.alloc_fragment((1,), F32)
            T.fill(run_max, -T.infinity(F32))
            T.fill(run_sum, 0.0)
            for k in T.serial(T.ceildiv(n, bn)):
                for j in T.Parallel(bn):
                    x[j] = T.if_then_else(k * bn + j < n, T.cast(X[bx, k * bn + j], F32), -T.infinity(F32))
                T.reduce_max(x, chunk_max, dim=0)
                new_max[0] = T.max(run_max[0], chunk_max[0])
                for j in T.Parallel(bn):
                    x[j] = T.exp(x[j] - new_max[0])
                T.reduce_sum(x, chunk_sum, dim=0)
                run_sum[0] = run_sum[0] * T.exp(run_max[0] - new_max[0]) + chunk_sum[0]
                run_max[0] = new_max[0]
            for k in T.serial(T.ceildiv(n, bn)):
                for j in T.Parallel(bn):
                    if k * bn + j < n:
                        Y[bx, k * bn + j] = T.cast(T.exp(T.cast(X[bx, k * bn + j], F32) - run_max[0]) / run_sum[0], dt)

    return softmax_rows_online


def _softmax_cols(key: KernelKey) -> Any:
    dt, bi, threads = key.out_dtype, key.param("BI"), key.param("threads")
    o, n, c = T.dynamic("o, n, c")

    @T.prim_func
    def softmax_cols(X: T.Tensor((o, n, c), dt), Y: T.Tensor((o, n, c), dt)):
        with T.Kernel(T.ceildiv(c, bi), o, threads=threads) as (bx, by):
            run_max = T.alloc_fragment((bi,), F32)
            run_sum = T.alloc_fragment((bi,), F32)
            T.fill(run_max, -T.infinity(F32))
            T.fill(run_sum, 0.0)
            for k in T.serial(n):
                for i in T.Parallel(bi):
                    col = bx * bi + i
                    v = T.if_then_else(col < c, T.cast(X[by, k, col], F32), 0.0)
                    top = T.max(run_max[i], v)
                    run_sum[i] = run_sum[i] * T.exp(run_max[i] - top) + T.exp(v - top)
                    run_max[i] = top
            for k in T.serial(n):
                for i in T.Parallel(bi):
                    if bx * bi + i < c:
                        v = T.cast(X[by, k, bx * bi + i], F32)
                        Y[by, k, bx * bi + i] = T.cast(T.exp(v - run_max[i]) / run_sum[i], dt)

    return softmax_cols


#: factory name (KernelKey.factory) -> the function building its T.prim_func
FACTORIES: dict[str, Callable[[KernelKey], Any]] = {
    "ew_copy": lambda key: _ew("copy", key),
    "ew_relu": lambda key: _ew("relu", key),
    "ew_add": lambda key: _ew("add", key),
    "ew_add_row": lambda key: _ew("add_row", key),
    "sum_rows": _sum_rows,
    "sum_cols": _sum_cols,
    "softmax_rows": _softmax_rows,
    "softmax_rows_online": _softmax_rows_online,
    "softmax_cols": _softmax_cols,
}


def build(key: KernelKey) -> Any:
    """The ``T.prim_func`` of ``key`` (TileLang IR: nothing compiled yet, no GPU needed)."""
    return FACTORIES[key.factory](key)


def compile_key(key: KernelKey, target: str = "cuda") -> tuple[Any, float]:
    """``tilelang.compile`` of ``key``'s kernel for ``target``: (the JITKernel, seconds it took). tilelang looks the
    generated source up in its disk cache (``TILELANG_CACHE_DIR``) first."""
    start = time.perf_counter()
    kernel = tilelang.compile(build(key), target=target)
    return kernel, time.perf_counter() - start
