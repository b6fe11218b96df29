// Symmetric positive-definite banded matrices: Cholesky factorisation, solves,
// log-determinant and selected inversion of the band of the inverse.
//
// The trajectory problems of dynid (IRW smoothing, weighted-residual smoothing) have banded
// normal matrices; these routines keep them O(N p^2) in time and O(N p) in memory.
//
// Storage: lower band, `band(i, j)` holds A(j + i, j) for i = 0..p (row i is the i-th
// sub-diagonal; band(0, j) is the diagonal), i.e. a (p+1) x N column-major array.
#ifndef DYNID_SOLVERS_INTERNAL_BANDED_H_
#define DYNID_SOLVERS_INTERNAL_BANDED_H_

#include <Eigen/Core>

namespace dynid::solvers {

class BandedSpdMatrix {
 public:
  BandedSpdMatrix(int size, int bandwidth);

  int size() const { return size_; }
  int bandwidth() const { return bandwidth_; }

  // A(row, col) for |row - col| <= bandwidth (either triangle), zero outside.
  double operator()(int row, int col) const;
  // Mutable access to the stored lower-band entry (row >= col, row - col <= bandwidth).
  double& At(int row, int col);

  // y = A x.
  Eigen::VectorXd Multiply(const Eigen::VectorXd& x) const;

  const Eigen::MatrixXd& band() const { return band_; }

 private:
  int size_;
  int bandwidth_;
  Eigen::MatrixXd band_;  // (bandwidth + 1) x size
};

// A = L L^T with L lower-banded. Factorize returns false when A is not (numerically)
// positive definite; `failed_pivot` then holds the index of the first non-positive pivot.
class BandedCholesky {
 public:
  bool Factorize(const BandedSpdMatrix& matrix, int* failed_pivot = nullptr);

  // Solves A x = b in place (b -> x). Requires a successful Factorize.
  void SolveInPlace(Eigen::VectorXd* b) const;
  Eigen::VectorXd Solve(const Eigen::VectorXd& b) const;

  // log det A = 2 sum log L_ii.
  double LogDeterminant() const;

  // The entries of A^{-1} inside the band (same storage as BandedSpdMatrix), by the
  // Takahashi / selected-inversion recursion on the factor: O(N p^2), never forming A^{-1}.
  BandedSpdMatrix InverseBand() const;

  int size() const { return size_; }
  int bandwidth() const { return bandwidth_; }

 private:
  int size_ = 0;
  int bandwidth_ = 0;
  Eigen::MatrixXd factor_;  // lower band of L, same layout as BandedSpdMatrix
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_INTERNAL_BANDED_H_
