// matmul_sm90.h: what matmul.cu sees of the CUTLASS kernels for sm_90 (matmul_sm90*.cu), plain C++ without CUTLASS.
// oprt_nvidia's build compiles those sources, and defines OPRT_HAS_CUTE for every source, only where it finds the
// CUTLASS headers and an sm_90 architecture among OPRT_CUDA_ARCHS (docs/building.md); the MetaX build never does.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "../plan.h"  // oprt_matmul_plan_t

namespace oprt_sm90 {

// The kernel's view of one product, D = alpha * A @ B + beta * C, every operand (L, rows, cols): A (M x K) K-major,
// B (K x N) N-major or K-major (TF32, e4m3: K-major), C and D (M x N) row-major. A column-major out is the product
// transposed (D^T = B^T A^T: a and b swap roles), so one output layout serves both.
struct Problem {
    int32_t dtype;                 // OPRT_DTYPE_* of C and D: f16, bf16, f32 (TF32 products); bf16 for e4m3 A and B
    int32_t in_dtype;              // A's and B's: dtype, or OPRT_DTYPE_F8E4M3 (fp8 products, dtype bf16)
    int64_t m, n, k, l;            // the kernel's M and N (swapped where out is column-major)
    int64_t a_rs, a_bs;            // A: element (i, l) at i * a_rs + l (K contiguous)
    int64_t b_ld, b_bs;            // B: b_k_major ? (l, j) at j * b_ld + l : at l * b_ld + j
    int64_t d_rs, d_bs;            // D: (i, j) at i * d_rs + j
    int32_t b_k_major;
    int32_t swapped;               // a and b swapped (out column-major): the launch passes them so
};

// Planned once with the descriptor: which tile configuration (kConfig*), or kNone for the tiled kernel.
enum Config : int32_t { kNone = -1, kConfigLarge = 0, kConfigMid = 1, kConfigSmall = 2 };

// How the persistent kernel walks its tiles (CUTLASS's tile scheduler arguments), planned with the configuration.
enum Raster : int32_t { kRasterHeuristic = 0, kRasterAlongM = 1, kRasterAlongN = 2 };

struct Plan {
    Problem prob;
    int32_t config;                // Config
    int32_t sm_count;              // the SM count it was planned for (CUTLASS's persistent grid)
    // the tile scheduler: stream-K (16-bit large configuration only: the last wave's tiles split along K across the
    // SMs, partial sums reduced in the workspace, deterministic order) or data-parallel; the swizzle (1, 2, 4, 8
    // tiles) and raster order of the tile walk. Defaults: data-parallel, 1, heuristic; OPRT_NVIDIA_MATMUL_STREAMK=1,
    // OPRT_NVIDIA_MATMUL_SWIZZLE=N and OPRT_NVIDIA_MATMUL_RASTER=m|n set them at plan time (docs/matmul.md)
    int32_t stream_k;
    int32_t tall;                  // the 16-bit large configuration as a 256 x 128 tile, 1 x 2 cluster
                                   // (OPRT_NVIDIA_MATMUL_TILE=256x128; stream-K is then not taken)
    int32_t swizzle;
    int32_t raster;                // Raster
    const char *name;              // config_name's: made once by plan(), lives as long as the process
    size_t workspace;              // in bytes: the K-major copy of B (b_copy_bytes), then CUTLASS's get_workspace_size
    // TF32 and e4m3 with an N-major B (their WGMMA reads B K-major): each launch first copies B transposed into the
    // workspace's start, K-major, packed (prob.b_ld = K, prob.b_bs = N K), and the kernel reads that copy.
    int32_t b_copy;
    int64_t b_src_ld, b_src_bs;    // the N-major B as given: (l, j) at l * b_src_ld + j, batch b at b * b_src_bs
    size_t b_copy_bytes;           // the copy's bytes, rounded up to 256 (CUTLASS's workspace follows)
};

// Plans `p` for the CUTLASS kernels: fills `out` (config kNone where the shape, strides or dtype do not qualify:
// the caller runs its fallback). `sm_count` picks the tile configuration. Never fails.
void plan(const oprt_matmul_plan_t *p, int sm_count, Plan *out);

// The tile configuration's name, e.g. "cutlass_sm90_128x256x64_ws", "..._e4m3" for fp8, prefixed
// "matmul_transpose_b+" where B is copied K-major first, suffixed "_streamk", "_swizzleN", "_rasterM" / "_rasterN"
// where the scheduler is not the default's (nullptr for kNone). The string lives as long as the process.
const char *config_name(const Plan &plan);

// Launches the planned kernel where everything that is known only now qualifies: the device's capability is exactly
// 9.0, every pointer 16-byte aligned, C (where beta != 0) row-major like D in the kernel's view with aligned strides,
// the workspace large enough and CUTLASS's can_implement() true. *launched says whether it did; false with
// cudaSuccess: the caller runs its fallback. A failed launch returns the runtime's error (and *launched true).
// `c` may be null where beta == 0 (never read then); c_bs/c_rs/c_cs are its strides in the caller's (B, M, N) view.
cudaError_t launch(const Plan &plan, void *out, const void *a, const void *b, const void *c, int64_t c_bs,
                   int64_t c_rs, int64_t c_cs, float alpha, float beta, void *workspace, size_t workspace_size,
                   cudaStream_t stream, bool *launched);

}  // namespace oprt_sm90

// ---- between the dispatcher (matmul_sm90.cu) and the per-dtype sources (matmul_sm90_<dtype>.cu) -----------------
namespace oprt_sm90 {

struct LaunchArgs {
    const Plan *plan;
    int device, sm_count;
    void *d;
    const void *a, *b, *c;         // the kernel's A and B (already swapped where the plan says so); c: D's where beta 0
    int64_t c_rs, c_bs;            // C in the kernel's view: (i, j) at i * c_rs + j
    float alpha, beta;
    void *workspace;
    cudaStream_t stream;
};

// Per dtype (f16, bf16, tf32, e4m3: one source each, compiled in parallel): CUTLASS's workspace for `plan` (0 where
// it cannot say), and the launch (*launched false where can_implement() refuses).
size_t workspace_f16(const Plan &plan, int sm_count);
size_t workspace_bf16(const Plan &plan, int sm_count);
size_t workspace_tf32(const Plan &plan, int sm_count);
size_t workspace_e4m3(const Plan &plan, int sm_count);
cudaError_t run_f16(const LaunchArgs &args, bool *launched);
cudaError_t run_bf16(const LaunchArgs &args, bool *launched);
cudaError_t run_tf32(const LaunchArgs &args, bool *launched);
cudaError_t run_e4m3(const LaunchArgs &args, bool *launched);

}  // namespace oprt_sm90
