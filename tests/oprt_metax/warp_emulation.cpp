// Runs the kernels' warp-level templates (oprt_shared/oprt_warp.h) on the host, on emulated warps of 32 and 64
// lanes, and checks every lane's result. A lane is one call of the code under test; the warp runs its lanes one
// after the other, repeatedly: shuffle number k of a pass returns what lane (lane ^ offset) passed to its shuffle
// number k in the previous pass, until a pass changes no shuffled value (a lockstep warp's result: the values at
// shuffle k depend only on those at shuffles < k, so depth + 1 passes settle them). Exit status 0 when every check
// holds; each failure is printed.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "oprt_warp.h"

namespace {

int failures = 0;

void check(bool ok, const char *what, int width, int lane, double got, double want) {
    if (ok) return;
    ++failures;
    std::printf("FAIL %s: %d lanes, lane %d: got %.9g, want %.9g\n", what, width, lane, got, want);
}

// The shuffles of one pass: slot k holds what each lane passed to its k-th shuffle.
struct Exchange {
    std::vector<std::vector<float>> prev, next;
};

template <int W> struct EmulatedWarp {
    static constexpr int kWidth = W;
    int lane;
    Exchange *x;
    mutable size_t k = 0;
    template <typename T> T shfl_xor(T v, int offset, int width) const {
        static_assert(sizeof(T) == sizeof(float), "32-bit values");
        float f;
        std::memcpy(&f, &v, 4);
        if (x->next.size() <= k) x->next.resize(k + 1, std::vector<float>(W, 0.f));
        x->next[k][lane] = f;
        // the source lane stays inside the caller's segment of `width` lanes, as the hardware's does
        const int src = (lane & ~(width - 1)) | ((lane ^ offset) & (width - 1));
        const float r = k < x->prev.size() ? x->prev[k][src] : 0.f;
        ++k;
        T out;
        std::memcpy(&out, &r, 4);
        return out;
    }
};

// Runs body(warp) for every lane of a W-lane warp until the shuffled values settle; returns the lanes' results.
template <int W, typename R> std::vector<R> run_warp(const std::function<R(const EmulatedWarp<W> &)> &body) {
    Exchange x;
    std::vector<R> out(W);
    for (int pass = 0; pass < 64; ++pass) {
        x.next.clear();
        for (int lane = 0; lane < W; ++lane) out[lane] = body(EmulatedWarp<W>{lane, &x});
        const bool settled = pass > 0 && x.next.size() == x.prev.size() &&
                             std::equal(x.next.begin(), x.next.end(), x.prev.begin(), [](const auto &a, const auto &b) {
                                 return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
                             });
        x.prev = x.next;
        if (settled) return out;
    }
    ++failures;
    std::printf("FAIL: %d-lane emulation did not settle\n", W);
    return out;
}

// Lane i's input: small integers (exact sums in any order), distinct per lane.
float input(int lane) { return (float)((lane * 7 + 3) % 23) - 11.f; }

template <int W> void test_warp_allreduce() {
    const auto sums = run_warp<W, float>([](const EmulatedWarp<W> &w) {
        return oprt_warp::warp_allreduce(w, input(w.lane), oprt_warp::SumOp{});
    });
    const auto maxes = run_warp<W, float>([](const EmulatedWarp<W> &w) {
        return oprt_warp::warp_allreduce(w, input(w.lane), oprt_warp::MaxOp{});
    });
    float sum = 0.f, mx = -INFINITY;
    for (int l = 0; l < W; ++l) sum += input(l), mx = std::fmax(mx, input(l));
    for (int l = 0; l < W; ++l) {
        check(sums[l] == sum, "warp_allreduce sum", W, l, sums[l], sum);
        check(maxes[l] == mx, "warp_allreduce max", W, l, maxes[l], mx);
    }
}

template <int W, int G> void test_group_allreduce() {
    const auto got = run_warp<W, float>([](const EmulatedWarp<W> &w) {
        return oprt_warp::group_allreduce<G>(w, input(w.lane), oprt_warp::SumOp{});
    });
    for (int l = 0; l < W; ++l) {
        float want = 0.f;
        const int g = oprt_warp::Lanes<W>::group(l, G);
        for (int j = 0; j < G; ++j) want += input(g * G + j);
        check(got[l] == want, "group_allreduce", W, l, got[l], want);
        check(oprt_warp::Lanes<W>::group_lane(l, G) == l % G, "group_lane", W, l, oprt_warp::Lanes<W>::group_lane(l, G), l % G);
    }
    if constexpr (G * 2 <= W) test_group_allreduce<W, G * 2>();
}

template <int W, int S> void test_strided_allreduce() {
    const auto got = run_warp<W, float>([](const EmulatedWarp<W> &w) {
        return oprt_warp::strided_allreduce<S>(w, input(w.lane), oprt_warp::SumOp{});
    });
    for (int l = 0; l < W; ++l) {
        float want = 0.f;
        for (int j = l % S; j < W; j += S) want += input(j);
        check(got[l] == want, "strided_allreduce", W, l, got[l], want);
    }
    if constexpr (S * 2 <= W) test_strided_allreduce<W, S * 2>();
}

template <int W> void test_maxsum() {
    // lane l holds the (max, sum of exp(x - max)) of one value; a few lanes are empty (-inf, 0)
    auto value = [](int l) { return l % 5 == 4 ? -INFINITY : input(l) * 0.37f; };
    const auto got = run_warp<W, oprt_warp::MaxSum>([&](const EmulatedWarp<W> &w) {
        const float x = value(w.lane);
        const oprt_warp::MaxSum v = oprt_warp::maxsum_add(oprt_warp::MaxSum{-INFINITY, 0.f}, x);
        return oprt_warp::warp_allreduce_maxsum(w, v);
    });
    double m = -INFINITY, s = 0.;
    for (int l = 0; l < W; ++l) m = std::fmax(m, (double)value(l));
    for (int l = 0; l < W; ++l) s += std::exp((double)value(l) - m);
    for (int l = 0; l < W; ++l) {
        check(got[l].m == (float)m, "warp_allreduce_maxsum max", W, l, got[l].m, m);
        check(std::fabs(got[l].s - s) <= 1e-5 * s, "warp_allreduce_maxsum sum", W, l, got[l].s, s);
    }
}

// A block's two-level reduction as the kernels' block_reduce does it: each warp's all-reduce, lane 0 of warp w
// writes partial w, then warp 0 reduces the partials (lanes past the block's warps take the identity).
template <int W> void test_block_reduce(int threads) {
    using L = oprt_warp::Lanes<W>;
    const int nwarps = L::warps(threads);
    if (nwarps > W) {
        ++failures;
        std::printf("FAIL block_reduce: %d threads make %d warps, more than %d lanes\n", threads, nwarps, W);
        return;
    }
    std::vector<float> partial(nwarps);
    float want = 0.f;
    for (int t = 0; t < threads; ++t) want += input(t);
    for (int wi = 0; wi < nwarps; ++wi) {
        const auto r = run_warp<W, float>([&](const EmulatedWarp<W> &w) {
            const int t = wi * W + w.lane;
            return oprt_warp::warp_allreduce(w, t < threads ? input(t) : 0.f, oprt_warp::SumOp{});
        });
        partial[L::warp(wi * W)] = r[L::lane(wi * W)];
    }
    const auto r = run_warp<W, float>([&](const EmulatedWarp<W> &w) {
        return oprt_warp::warp_allreduce(w, w.lane < nwarps ? partial[w.lane] : 0.f, oprt_warp::SumOp{});
    });
    for (int l = 0; l < W; ++l) check(r[l] == want, "block_reduce", W, l, r[l], want);
}

template <int W> void test_width() {
    test_warp_allreduce<W>();
    test_group_allreduce<W, 1>();
    test_strided_allreduce<W, 1>();
    test_maxsum<W>();
    for (int threads : {W, 256, 512, 1024, 1000}) test_block_reduce<W>(threads);
}

}  // namespace

int main() {
    test_width<32>();
    test_width<64>();
    std::printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
