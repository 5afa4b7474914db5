// matmul_sm90_f16.cu: the CUTLASS sm_90 kernels for f16 (matmul_sm90.cuh), one source a dtype so that they compile
// in parallel.
#include "matmul_sm90.cuh"

namespace oprt_sm90 {
size_t workspace_f16(const Plan &plan, int sm_count) { return Dtype16<cutlass::half_t>::workspace(plan, sm_count); }
cudaError_t run_f16(const LaunchArgs &args, bool *launched) { return Dtype16<cutlass::half_t>::run(args, launched); }
}  // namespace oprt_sm90
