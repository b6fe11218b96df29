#include "solvers/simd_kernels.h"

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

TEST(SimdKernelsTest, ForcingPortableKernelsTurnsWideOff) {
  ForcePortableKernels(true);
  EXPECT_FALSE(UseWideKernels());
  ForcePortableKernels(false);
}

}  // namespace
}  // namespace dynid::solvers::simd
