// matmul_sm90_tf32.cu: the CUTLASS sm_90 kernels for f32 inputs with TF32 products (matmul_sm90.cuh; only where the
// caller allows TF32). TF32 WGMMA reads both operands K-major: B K-major only.
#include "matmul_sm90.cuh"

namespace oprt_sm90 {
using Tf32 = Configs<float, cutlass::layout::ColumnMajor, 32>;
size_t workspace_tf32(const Plan &plan, int sm_count) { return Tf32::workspace(plan, sm_count); }
cudaError_t run_tf32(const LaunchArgs &args, bool *launched) { return Tf32::run(args, launched); }
}  // namespace oprt_sm90
