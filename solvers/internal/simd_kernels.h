// solvers::simd — small dense kernels on column-major blocks whose columns are padded to a
// multiple of 4 doubles, written with GCC's generic vector types, and the run-time choice of
// the instruction set they are compiled for.
//
// The per-node algebra of the Riccati sweeps works on 6 × 6 to 12 × 6 matrices. Eigen picks its
// packet size at compile time (SSE2, 2 doubles, in the portable build) and only uses a 4-wide
// packet when it divides a fixed length; a padded column is always whole packets. A sweep's
// per-node body is written once as an always-inline function template on the packet type V and
// instantiated twice: with Packet4 inside a function compiled for AVX2 + FMA (DYNID_TARGET_WIDE,
// chosen at run time when the CPU has them: one 256-bit register per packet), and with Packet2
// inside a plain one (SSE2, any x86-64; or another architecture). Nothing of Eigen's heap or
// alignment ABI changes (the build stays portable and keeps Debian's Ceres ABI; see
// CMakeLists.txt).
//
// Padding rows of every block are kept zero by the kernels' callers, so that whole-packet
// arithmetic never reads uninitialised values.
#ifndef DYNID_SOLVERS_INTERNAL_SIMD_KERNELS_H_
#define DYNID_SOLVERS_INTERNAL_SIMD_KERNELS_H_

#include <atomic>
#include <cmath>

#define DYNID_ALWAYS_INLINE inline __attribute__((always_inline))
#if defined(__GNUC__) && defined(__x86_64__)
#define DYNID_TARGET_WIDE __attribute__((target("avx2,fma")))
#else
#define DYNID_TARGET_WIDE
#endif
// Lambdas do not inherit their enclosing function's target attribute (DYNID_TARGET_WIDE): those
// of per-node code are always inlined, so that they are compiled for the caller's instruction set.
#define DYNID_LAMBDA_INLINE __attribute__((always_inline))
// Full unrolling of a fixed-trip-count loop. MultiplyAccumulate's outer loop stays rolled: the
// per-node code of a sweep must fit the instruction cache, which unrolling every product
// overflowed; the factorisation and the solves are small enough to unroll whole.
#define DYNID_UNROLL _Pragma("GCC unroll 16")

namespace dynid::solvers::simd {

// Four and two doubles; they may alias double storage (like the intrinsics' __m256d, __m128d).
typedef double Packet4 __attribute__((vector_size(32), may_alias));
typedef double Packet2 __attribute__((vector_size(16), may_alias));

// Doubles per packet.
template <class V>
constexpr int kWidth = static_cast<int>(sizeof(V) / sizeof(double));

constexpr int PaddedRows(int rows) { return (rows + 3) / 4 * 4; }

// C columns of LD doubles (LD a multiple of 4), 32-byte aligned.
template <int LD, int C>
struct Block {
  static_assert(LD % 4 == 0, "columns are whole packets");
  alignas(32) double v[C][LD];
  void SetZero() {
    for (int c = 0; c < C; ++c) {
      for (int r = 0; r < LD; ++r) v[c][r] = 0.0;
    }
  }
  double& operator()(int r, int c) { return v[c][r]; }
  double operator()(int r, int c) const { return v[c][r]; }
  // Packet p (of kWidth<V> doubles) of column c.
  template <class V>
  V& packet(int p, int c) {
    return *reinterpret_cast<V*>(&v[c][kWidth<V> * p]);
  }
  template <class V>
  const V& packet(int p, int c) const {
    return *reinterpret_cast<const V*>(&v[c][kWidth<V> * p]);
  }
};

// f(i) for i in [begin, end): a loop unrolled completely when kUnroll (for bounds that are
// compile-time constants once the enclosing loops are unrolled), a plain loop otherwise (an
// unroll request on a run-time trip count only multiplies code).
template <bool kUnroll, class F>
DYNID_ALWAYS_INLINE void ForEach(int begin, int end, const F& f) {
  if constexpr (kUnroll) {
    DYNID_UNROLL
    for (int i = begin; i < end; ++i) f(i);
  } else {
    for (int i = begin; i < end; ++i) f(i);
  }
}

// Whether the sweeps run their AVX2 + FMA instantiation: the CPU has both, and the plain one was
// not forced (ForcePortableKernels, for tests comparing the two).
inline std::atomic<bool>& PortableKernelsForced() {
  static std::atomic<bool> forced{false};
  return forced;
}
inline void ForcePortableKernels(bool force) { PortableKernelsForced().store(force); }
inline bool UseWideKernels() {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool cpu_has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return cpu_has && !PortableKernelsForced().load(std::memory_order_relaxed);
#else
  return false;
#endif
}

// Calls f() from a function compiled for AVX2 + FMA (CallWide) or for the baseline (CallPortable);
// what f inlines is compiled for that instruction set, so f should be an always-inline lambda.
template <class F>
DYNID_TARGET_WIDE void CallWide(const F& f) {
  f();
}
template <class F>
void CallPortable(const F& f) {
  f();
}

// out.col(j) = start_j + Σ_{k<K} a.col(k) · s(k, j) for J0 <= j < C, over P packets of each
// column (a's from packet A0 on, out's from packet O0 on: row offsets of stacked blocks);
// start(j, acc) writes the P packets of start_j into acc (zero, or another block's column).
template <class V, int P, int K, int C, int A0 = 0, int O0 = 0, int J0 = 0, int LDA, int KA,
          int LDO, int CO, class Scalar, class Start>
DYNID_ALWAYS_INLINE void MultiplyAccumulate(const Block<LDA, KA>& a, const Scalar& s,
                                            const Start& start, Block<LDO, CO>* out) {
  constexpr int W = kWidth<V>;
  static_assert((A0 + P) * W <= LDA && (O0 + P) * W <= LDO && K <= KA && C <= CO,
                "block sizes");
  for (int j = J0; j < C; ++j) {  // (only the inner loops are unrolled: code size)
    V acc[P];
    start(j, acc);
    DYNID_UNROLL
    for (int k = 0; k < K; ++k) {
      const double scale = s(k, j);
      DYNID_UNROLL
      for (int p = 0; p < P; ++p) acc[p] += a.template packet<V>(A0 + p, k) * scale;
    }
    DYNID_UNROLL
    for (int p = 0; p < P; ++p) out->template packet<V>(O0 + p, j) = acc[p];
  }
}

// Start values for MultiplyAccumulate: zero, or packets F0.. of a block's columns (sign ±1).
template <class V, int P>
struct ZeroStart {
  DYNID_ALWAYS_INLINE void operator()(int, V* acc) const {
    DYNID_UNROLL
    for (int p = 0; p < P; ++p) acc[p] = V{};
  }
};
template <class V, int P, int F0, int LD, int C>
struct ColumnStart {
  const Block<LD, C>& from;
  double sign = 1.0;
  DYNID_ALWAYS_INLINE void operator()(int j, V* acc) const {
    DYNID_UNROLL
    for (int p = 0; p < P; ++p) acc[p] = sign * from.template packet<V>(F0 + p, j);
  }
};

// Whether any of the first K entries of column c of a block is nonzero (−0.0 counts as zero, NaN
// as nonzero): one comparison per packet, the lanes' masks combined before one reduction.
template <class V, int K, int LD, int C>
DYNID_ALWAYS_INLINE bool AnyNonzero(const Block<LD, C>& a, int c) {
  constexpr int W = kWidth<V>;
  static_assert(K <= LD, "block sizes");
  using Mask = decltype(V{} != V{});  // a lane is all ones where the comparison holds
  Mask any = a.template packet<V>(0, c) != V{};
  if constexpr (K < W) {
    Mask valid{};
    for (int lane = 0; lane < K; ++lane) valid[lane] = -1;
    any &= valid;
  }
  DYNID_UNROLL
  for (int p = 1; p * W < K; ++p) {
    Mask lanes = a.template packet<V>(p, c) != V{};
    if (K - p * W < W) {
      Mask valid{};
      for (int lane = 0; lane < K - p * W; ++lane) valid[lane] = -1;
      lanes &= valid;
    }
    any |= lanes;
  }
  auto reduced = any[0];
  DYNID_UNROLL
  for (int lane = 1; lane < W; ++lane) reduced |= any[lane];
  return reduced != 0;
}

// The lower triangle of a symmetric out (+)= a · s (out's rows are a's rows): column j of out,
// whose diagonal entry is row D0 + j, from the packet holding that entry on (some entries above
// it come along); out's other rows are left as they were. Columns J0..C−1, grouped by their
// first packet; accumulates into out when kAccumulate, else overwrites.
template <class V, int P, int K, int C, int D0, bool kAccumulate, int J0 = 0, int LDA, int KA,
          int LDO, int CO, class Scalar>
DYNID_ALWAYS_INLINE void LowerMultiplyAccumulate(const Block<LDA, KA>& a, const Scalar& s,
                                                 Block<LDO, CO>* out) {
  constexpr int W = kWidth<V>;
  constexpr int p0 = (D0 + J0) / W;
  constexpr int J1 = (p0 + 1) * W - D0 < C ? (p0 + 1) * W - D0 : C;
  static_assert(p0 < P, "block sizes");
  if constexpr (kAccumulate) {
    MultiplyAccumulate<V, P - p0, K, J1, p0, p0, J0>(
        a, s, ColumnStart<V, P - p0, p0, LDO, CO>{*out}, out);
  } else {
    MultiplyAccumulate<V, P - p0, K, J1, p0, p0, J0>(a, s, ZeroStart<V, P - p0>(), out);
  }
  if constexpr (J1 < C) {
    LowerMultiplyAccumulate<V, P, K, C, D0, kAccumulate, J1>(a, s, out);
  }
}

// A = L Lᵀ in place on the leading K × K block (L in its lower triangle; entries above the
// diagonal are left as scratch); false when A is not numerically positive definite.
template <class V, int K, int LD, int C>
DYNID_ALWAYS_INLINE bool Cholesky(Block<LD, C>* a) {
  constexpr int W = kWidth<V>;
  constexpr int P = (K + W - 1) / W;
  static_assert(K <= C && P * W <= LD, "block sizes");
  DYNID_UNROLL
  for (int j = 0; j < K; ++j) {
    const double d = (*a)(j, j);
    if (!(d > 0.0)) return false;
    const double inverse = 1.0 / std::sqrt(d);
    DYNID_UNROLL
    for (int p = j / W; p < P; ++p) a->template packet<V>(p, j) *= inverse;
    DYNID_UNROLL
    for (int c = j + 1; c < K; ++c) {
      const double l = (*a)(c, j);
      DYNID_UNROLL
      for (int p = c / W; p < P; ++p) {
        a->template packet<V>(p, c) -= a->template packet<V>(p, j) * l;
      }
    }
  }
  return true;
}

// X ← X L⁻ᵀ (solves Y Lᵀ = X by columns) for the K columns of X, P packets each; L lower.
template <class V, int K, int P, int LDX, int CX, int LDL, int CL>
DYNID_ALWAYS_INLINE void SolveTransposedFromRight(const Block<LDL, CL>& lower,
                                                  Block<LDX, CX>* x) {
  DYNID_UNROLL
  for (int i = 0; i < K; ++i) {
    const double inverse = 1.0 / lower(i, i);
    DYNID_UNROLL
    for (int p = 0; p < P; ++p) x->template packet<V>(p, i) *= inverse;
    DYNID_UNROLL
    for (int j = i + 1; j < K; ++j) {
      const double l = lower(j, i);
      DYNID_UNROLL
      for (int p = 0; p < P; ++p) {
        x->template packet<V>(p, j) -= x->template packet<V>(p, i) * l;
      }
    }
  }
}

// X ← X L⁻¹ (solves Y L = X by columns) for the K columns of X, P packets each; L lower.
template <class V, int K, int P, int LDX, int CX, int LDL, int CL>
DYNID_ALWAYS_INLINE void SolveFromRight(const Block<LDL, CL>& lower, Block<LDX, CX>* x) {
  DYNID_UNROLL
  for (int i = K - 1; i >= 0; --i) {
    const double inverse = 1.0 / lower(i, i);
    DYNID_UNROLL
    for (int p = 0; p < P; ++p) x->template packet<V>(p, i) *= inverse;
    DYNID_UNROLL
    for (int j = 0; j < i; ++j) {
      const double l = lower(i, j);
      DYNID_UNROLL
      for (int p = 0; p < P; ++p) {
        x->template packet<V>(p, j) -= x->template packet<V>(p, i) * l;
      }
    }
  }
}

}  // namespace dynid::solvers::simd

#endif  // DYNID_SOLVERS_INTERNAL_SIMD_KERNELS_H_
