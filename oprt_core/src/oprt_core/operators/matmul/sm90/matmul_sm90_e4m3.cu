// matmul_sm90_e4m3.cu: the CUTLASS sm_90 kernels for fp8 e4m3 a and b with a bf16 out and c (matmul_sm90.cuh). fp8
// WGMMA reads both operands K-major: B K-major only. The Coop and PingPong schedules with fp8 inputs make
// CollectiveBuilder pick MainloopSm90TmaGmmaWarpSpecializedFP8, which adds the tensor cores' reduced-precision
// partial sums into f32 registers every mma_promotion_interval (4) MMAs, once a 128-deep k tile; the ...FP8FastAccum
// schedules, which never do, are not used (docs/matmul.md, "fp8 on the CUTLASS kernels").
#include <type_traits>

#include "matmul_sm90.cuh"

namespace oprt_sm90 {
namespace {
template <class Policy> struct PromotesToF32 : std::false_type {};
template <int kStages, class Cluster, class Schedule>
struct PromotesToF32<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<kStages, Cluster, Schedule>>
    : std::true_type {};
}  // namespace

// The large configuration's tile is 128 x 128 (with the 2 x 1 cluster): the promotion keeps a second set of
// accumulators, and a 128 x 256 tile's two (128 f32 registers a thread each) spill past the 232 registers a consumer
// thread has (ptxas: 858 bytes of spill stores), where a 128 x 128 tile's take 128.
using E4m3 = Configs<cutlass::float_e4m3_t, cutlass::layout::ColumnMajor, 128, cutlass::bfloat16_t, tiles::Mid<128>>;
static_assert(PromotesToF32<E4m3::Large::Mainloop::DispatchPolicy>::value &&
                  PromotesToF32<E4m3::Mid::Mainloop::DispatchPolicy>::value &&
                  PromotesToF32<E4m3::Small::Mainloop::DispatchPolicy>::value,
              "e4m3: CUTLASS's FP8 main loop, which promotes the partial sums into f32");
size_t workspace_e4m3(const Plan &plan, int sm_count) { return E4m3::workspace(plan, sm_count); }
cudaError_t run_e4m3(const LaunchArgs &args, bool *launched) { return E4m3::run(args, launched); }
}  // namespace oprt_sm90
