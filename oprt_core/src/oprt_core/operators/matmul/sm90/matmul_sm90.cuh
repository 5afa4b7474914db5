// matmul_sm90.cuh: the CUTLASS 3.x kernels for sm_90 as templates (CollectiveBuilder: TMA loads, WGMMA, warp-specialised
// persistent kernels), instantiated per dtype by matmul_sm90_<dtype>.cu. Compiled for sm_90a only.
//
// Three tile configurations (docs/matmul.md, "CUTLASS kernels"): large 128 x 256 (a cluster of 2 x 1, cooperative:
// two consumer warp groups share each tile), mid 128 x 128 (cooperative) and small 64 x 128 (ping-pong: two consumer
// warp groups take alternate tiles), each 64 deep (16-bit), 32 deep (TF32) or 128 deep (e4m3: the same bytes a stage).
// A is K-major, B N-major or K-major (TF32 and fp8 WGMMA read both operands K-major: K-major B only), C and D
// row-major; f32 accumulation; the epilogue is D = alpha * acc + beta * C (C not read where beta is 0). fp8 A and B
// (e4m3) take bf16 C and D (ElementCD) and CUTLASS's FP8 main loop of the non-FastAccum schedules, which adds the
// tensor cores' partial sums into f32 registers every mma_promotion_interval (4) MMAs (docs/matmul.md), and a
// 128 x 128 large tile (matmul_sm90_e4m3.cu says why); the 16-bit large configuration also as a stream-K
// kernel and as a 256 x 128 tile in a 1 x 2 cluster, which the plan takes where OPRT_NVIDIA_MATMUL_STREAMK=1 or
// OPRT_NVIDIA_MATMUL_TILE=256x128 (designs not yet measured against the default).
#pragma once

#include "matmul_sm90.h"

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace oprt_sm90 {

// Element: A's and B's; ElementCD: C's and D's (Element's own but for fp8 inputs); Scheduler: CUTLASS's tile
// scheduler tag (PersistentScheduler: data-parallel; StreamKScheduler: cooperative schedules only).
template <class Element, class LayoutB, class Tile, class Cluster, class MainloopSchedule, class EpilogueSchedule,
          class ElementCD = Element, class Scheduler = cutlass::gemm::PersistentScheduler>
struct GemmSm90 {
    using Acc = float;
    static constexpr int kAlign = 128 / cutlass::sizeof_bits<Element>::value;  // 16 bytes: TMA's alignment
    static constexpr int kAlignCD = 128 / cutlass::sizeof_bits<ElementCD>::value;
    using LayoutA = cutlass::layout::RowMajor;
    using LayoutCD = cutlass::layout::RowMajor;
    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
        cutlass::epilogue::collective::EpilogueTileAuto, Acc, Acc, ElementCD, LayoutCD, kAlignCD, ElementCD, LayoutCD,
        kAlignCD, EpilogueSchedule>::CollectiveOp;
    using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlign, Element, LayoutB, kAlign, Acc,
        Tile, Cluster,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
        MainloopSchedule>::CollectiveOp;
    using Kernel =
        cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue, Scheduler>;
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

    // A cute stride of three modes from three values; a static mode (cute::Int<1>) keeps its value (the plan chose
    // the layout whose unit stride is there).
    template <class Stride>
    static Stride strides(int64_t s0, int64_t s1, int64_t s2) {
        Stride s{};
        set(cute::get<0>(s), s0);
        set(cute::get<1>(s), s1);
        set(cute::get<2>(s), s2);
        return s;
    }
    template <class Mode>
    static void set(Mode &&mode, int64_t v) {
        if constexpr (!cute::is_static<cute::remove_cvref_t<Mode>>::value) mode = v;
    }

    static typename Gemm::Arguments arguments(const Plan &plan, const LaunchArgs *la, int device, int sm_count) {
        const Problem &p = plan.prob;
        using StrideA = typename Kernel::StrideA;
        using StrideB = typename Kernel::StrideB;
        using StrideC = typename Kernel::StrideC;
        using StrideD = typename Kernel::StrideD;
        typename Gemm::Arguments args{};
        args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
        args.problem_shape = cute::make_shape((int)p.m, (int)p.n, (int)p.k, (int)p.l);
        args.mainloop.dA = strides<StrideA>(p.a_rs, 1, p.a_bs);                             // (M, K, L)
        args.mainloop.dB = p.b_k_major ? strides<StrideB>(p.b_ld, 1, p.b_bs)              // (N, K, L)
                                       : strides<StrideB>(1, p.b_ld, p.b_bs);
        args.epilogue.dD = strides<StrideD>(p.d_rs, 1, p.d_bs);                             // (M, N, L)
        args.epilogue.dC = strides<StrideC>(p.d_rs, 1, p.d_bs);
        args.epilogue.thread.alpha = 1.f;
        args.epilogue.thread.beta = 0.f;
        // fp8: the tensor cores' partial sums go into the f32 accumulators every 4 MMAs (CUTLASS's default, said
        // here: 4 MMAs of 32 make one 128-deep k tile, and can_implement wants a multiple of the MMAs a k tile)
        if constexpr (cutlass::sizeof_bits<Element>::value == 8) args.mainloop.mma_promotion_interval = 4;
        // the tile walk (stream-K keeps CUTLASS's heuristic decomposition and its deterministic reduction)
        using RasterOpt = decltype(args.scheduler.raster_order);
        args.scheduler.max_swizzle_size = plan.swizzle > 0 ? plan.swizzle : 1;
        args.scheduler.raster_order = plan.raster == kRasterAlongM   ? RasterOpt::AlongM
                                      : plan.raster == kRasterAlongN ? RasterOpt::AlongN
                                                                     : RasterOpt::Heuristic;
        if (la != nullptr) {
            args.mainloop.ptr_A = static_cast<const Element *>(la->a);
            args.mainloop.ptr_B = static_cast<const Element *>(la->b);
            args.epilogue.ptr_D = static_cast<ElementCD *>(la->d);
            args.epilogue.ptr_C = static_cast<const ElementCD *>(la->c);
            args.epilogue.dC = strides<StrideC>(la->c_rs, 1, la->c_bs);
            args.epilogue.thread.alpha = la->alpha;
            args.epilogue.thread.beta = la->beta;
        }
        args.hw_info.device_id = device;
        args.hw_info.sm_count = sm_count;
        return args;
    }

    static size_t workspace(const Plan &plan, int sm_count) {
        return Gemm::get_workspace_size(arguments(plan, nullptr, 0, sm_count));
    }

    static cudaError_t run(const LaunchArgs &la, bool *launched) {
        *launched = false;
        typename Gemm::Arguments args = arguments(*la.plan, &la, la.device, la.sm_count);
        if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return cudaSuccess;  // the fallback runs
        if (Gemm::get_workspace_size(args) > la.plan->workspace) return cudaSuccess;
        Gemm gemm;
        if (gemm.initialize(args, la.workspace, la.stream) != cutlass::Status::kSuccess) {
            cudaError_t err = cudaGetLastError();
            return err;  // cudaSuccess: refused before any launch, the fallback runs
        }
        *launched = true;
        cutlass::Status st = gemm.run(la.stream);
        cudaError_t err = cudaGetLastError();
        // CUTLASS's run() has read (and so cleared) the launch's error itself: an unknown error, not a sticky one
        if (st != cutlass::Status::kSuccess && err == cudaSuccess) err = cudaErrorUnknown;
        return err;
    }
};

namespace tiles {
using namespace cute;
// 16-bit: 64 deep; TF32: 32 deep; e4m3: 128 deep (the same 128 bytes a row of a stage)
template <int kK> using Large = Shape<_128, _256, Int<kK>>;
template <int kK> using Mid = Shape<_128, _128, Int<kK>>;
template <int kK> using Small = Shape<_64, _128, Int<kK>>;
template <int kK> using Tall = Shape<_256, _128, Int<kK>>;  // the large configuration's alternative (16-bit)
using ClusterLarge = Shape<_2, _1, _1>;
using ClusterTall = Shape<_1, _2, _1>;  // two CTAs along N sharing (multicasting) A's 256-row tile
using ClusterOne = Shape<_1, _1, _1>;
}  // namespace tiles

using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using CoopEpi = cutlass::epilogue::TmaWarpSpecializedCooperative;
using PingPong = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using PingPongEpi = cutlass::epilogue::TmaWarpSpecialized;

// LargeTile: the large configuration's tile (e4m3: 128 x 128, docs/matmul.md), its cluster 2 x 1 whatever the tile.
// kAlternatives: the large configuration also as a stream-K kernel and as a 256 x 128 tile in a 1 x 2 cluster
// (16-bit only: the plan asks for them nowhere else).
template <class Element, class LayoutB, int kK, class ElementCD = Element, class LargeTile = tiles::Large<kK>,
          bool kAlternatives = false>
struct Configs {
    using Large = GemmSm90<Element, LayoutB, LargeTile, tiles::ClusterLarge, Coop, CoopEpi, ElementCD>;
    using LargeStreamK = GemmSm90<Element, LayoutB, LargeTile, tiles::ClusterLarge, Coop, CoopEpi, ElementCD,
                                  cutlass::gemm::StreamKScheduler>;
    using LargeTall = GemmSm90<Element, LayoutB, tiles::Tall<kK>, tiles::ClusterTall, Coop, CoopEpi, ElementCD>;
    using Mid = GemmSm90<Element, LayoutB, tiles::Mid<kK>, tiles::ClusterOne, Coop, CoopEpi, ElementCD>;
    using Small = GemmSm90<Element, LayoutB, tiles::Small<kK>, tiles::ClusterOne, PingPong, PingPongEpi, ElementCD>;

    static size_t workspace(const Plan &plan, int sm_count) {
        switch (plan.config) {
        case kConfigLarge:
            if constexpr (kAlternatives) {
                if (plan.tall) return LargeTall::workspace(plan, sm_count);
                if (plan.stream_k) return LargeStreamK::workspace(plan, sm_count);
            }
            return Large::workspace(plan, sm_count);
        case kConfigMid: return Mid::workspace(plan, sm_count);
        case kConfigSmall: return Small::workspace(plan, sm_count);
        default: return 0;
        }
    }
    static cudaError_t run(const LaunchArgs &la, bool *launched) {
        switch (la.plan->config) {
        case kConfigLarge:
            if constexpr (kAlternatives) {
                if (la.plan->tall) return LargeTall::run(la, launched);
                if (la.plan->stream_k) return LargeStreamK::run(la, launched);
            }
            return Large::run(la, launched);
        case kConfigMid: return Mid::run(la, launched);
        case kConfigSmall: return Small::run(la, launched);
        default: *launched = false; return cudaSuccess;
        }
    }
};

// A 16-bit dtype: B N-major or K-major.
template <class Element>
struct Dtype16 {
    using RowB = Configs<Element, cutlass::layout::RowMajor, 64, Element, tiles::Large<64>, true>;     // B N-major
    using ColB = Configs<Element, cutlass::layout::ColumnMajor, 64, Element, tiles::Large<64>, true>;  // B K-major
    static size_t workspace(const Plan &plan, int sm_count) {
        return plan.prob.b_k_major ? ColB::workspace(plan, sm_count) : RowB::workspace(plan, sm_count);
    }
    static cudaError_t run(const LaunchArgs &la, bool *launched) {
        return la.plan->prob.b_k_major ? ColB::run(la, launched) : RowB::run(la, launched);
    }
};

}  // namespace oprt_sm90
