#include "dynid/solvers/internal/simd_kernels.h"

#include <cmath>
#include <cstdlib>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <gtest/gtest.h>

namespace dynid::solvers::simd {
namespace {

template <int LD, int C>
Block<LD, C> ToBlock(const Eigen::MatrixXd& m) {
  Block<LD, C> block;
  block.SetZero();
  for (int c = 0; c < m.cols(); ++c) {
    for (int r = 0; r < m.rows(); ++r) block(r, c) = m(r, c);
  }
  return block;
}

template <int LD, int C>
Eigen::MatrixXd FromBlock(const Block<LD, C>& block, int rows, int cols) {
  Eigen::MatrixXd m(rows, cols);
  for (int c = 0; c < cols; ++c) {
    for (int r = 0; r < rows; ++r) m(r, c) = block(r, c);
  }
  return m;
}

// Each kernel against Eigen on a 6 × 6 symmetric positive definite matrix and a 10 × 6 block,
// with either packet type (Packet4 is lowered to SSE pairs outside AVX2 code: same results).
template <class V>
void CheckKernels() {
  constexpr int W = kWidth<V>;
  srand(7);
  const Eigen::MatrixXd G = Eigen::MatrixXd::Random(6, 6);
  const Eigen::MatrixXd A = G * G.transpose() + 6.0 * Eigen::MatrixXd::Identity(6, 6);
  const Eigen::MatrixXd X = Eigen::MatrixXd::Random(10, 6);
  const Eigen::MatrixXd B = Eigen::MatrixXd::Random(6, 6);

  // out = start − X Bᵀ over 12 padded rows (3 packets of 4 or 6 of 2).
  Block<12, 6> x = ToBlock<12, 6>(X), start = ToBlock<12, 6>(Eigen::MatrixXd::Ones(10, 6)), out;
  out.SetZero();
  MultiplyAccumulate<V, 12 / W, 6, 6>(x, [&B](int k, int j) { return -B(j, k); },
                                      ColumnStart<V, 12 / W, 0, 12, 6>{start}, &out);
  EXPECT_LT((FromBlock(out, 10, 6) - (Eigen::MatrixXd::Ones(10, 6) - X * B.transpose()))
                .cwiseAbs()
                .maxCoeff(),
            1e-14);
  for (int c = 0; c < 6; ++c) {  // the padding rows stay zero
    EXPECT_EQ(out(10, c), 0.0);
    EXPECT_EQ(out(11, c), 0.0);
  }

  // The lower triangle of a symmetric product whose diagonal starts at row 4 of a 12-row block
  // (a packet shared with the rows above): Gram += Y Yᵀ over rows 4..9 of x, Y = those rows.
  const Eigen::MatrixXd Y = X.middleRows(4, 6);
  Block<12, 6> gram = ToBlock<12, 6>(Eigen::MatrixXd::Zero(10, 6));
  for (int c = 0; c < 6; ++c) {
    for (int r = 0; r < 6; ++r) gram(4 + r, c) = A(r, c);
  }
  LowerMultiplyAccumulate<V, 12 / W, 6, 6, 4, true>(
      x, [&x](int k, int j) { return x(4 + j, k); }, &gram);
  const Eigen::MatrixXd expected = A + Y * Y.transpose();
  for (int c = 0; c < 6; ++c) {
    for (int r = c; r < 6; ++r) EXPECT_NEAR(gram(4 + r, c), expected(r, c), 1e-13);
  }

  Block<8, 6> lower = ToBlock<8, 6>(A);
  ASSERT_TRUE((Cholesky<V, 6>(&lower)));
  const Eigen::MatrixXd L = A.llt().matrixL();
  const Eigen::MatrixXd ours = FromBlock(lower, 6, 6).triangularView<Eigen::Lower>();
  EXPECT_LT((ours - L).cwiseAbs().maxCoeff(), 1e-13);

  Block<12, 6> solved = x;
  SolveTransposedFromRight<V, 6, 12 / W>(lower, &solved);  // X L⁻ᵀ
  EXPECT_LT((FromBlock(solved, 10, 6) * L.transpose() - X).cwiseAbs().maxCoeff(), 1e-13);
  solved = x;
  SolveFromRight<V, 6, 12 / W>(lower, &solved);  // X L⁻¹
  EXPECT_LT((FromBlock(solved, 10, 6) * L - X).cwiseAbs().maxCoeff(), 1e-13);

  Block<8, 6> indefinite = ToBlock<8, 6>(A - 50.0 * Eigen::MatrixXd::Identity(6, 6));
  EXPECT_FALSE((Cholesky<V, 6>(&indefinite)));
}

TEST(SimdKernelsTest, TwoDoublePacketsMatchEigen) { CheckKernels<Packet2>(); }

TEST(SimdKernelsTest, FourDoublePacketsMatchEigen) { CheckKernels<Packet4>(); }

// AnyNonzero looks at the first K entries of a column only, counts −0.0 as zero and NaN as
// nonzero, with K inside one packet, at a packet boundary and across packets.
template <class V>
void CheckAnyNonzero() {
  Block<8, 4> b;
  b.SetZero();
  b(5, 0) = 1.0;   // beyond K = 5 entries: not seen
  b(1, 1) = -0.0;  // a zero
  b(4, 2) = 1e-300;
  b(0, 3) = std::nan("");
  EXPECT_FALSE((AnyNonzero<V, 5>(b, 0)));
  EXPECT_TRUE((AnyNonzero<V, 6>(b, 0)));
  EXPECT_FALSE((AnyNonzero<V, 8>(b, 1)));
  EXPECT_TRUE((AnyNonzero<V, 5>(b, 2)));
  EXPECT_FALSE((AnyNonzero<V, 4>(b, 2)));
  EXPECT_TRUE((AnyNonzero<V, 1>(b, 3)));
}

TEST(SimdKernelsTest, AnyNonzeroSeesExactlyTheFirstEntries) {
  CheckAnyNonzero<Packet2>();
  CheckAnyNonzero<Packet4>();
}

TEST(SimdKernelsTest, ForcingPortableKernelsTurnsWideOff) {
  ForcePortableKernels(true);
  EXPECT_FALSE(UseWideKernels());
  ForcePortableKernels(false);
}

}  // namespace
}  // namespace dynid::solvers::simd
