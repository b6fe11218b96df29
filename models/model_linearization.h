// models::LinearizeModel — value and Jacobians of a mechanical model's equations of motion and
// measurements with respect to the augmented state x = [s; v; theta] and the augmented input
// p̄ = [a; u] (van de Molengraft (1990) eqs. 2.11 and 2.16).
//
// In the notation of the identification model E z = f(x, t) + F(x, t) p̄ + zeta with
// f = [h; g] and F = [[M, H], [G, R]]:
//   [J_r_x; J_z_x]       = C = ∂(f + F p̄)/∂x     ((n + l) × (2n + p))
//   [J_r_pbar; J_z_pbar] = D = F                 ((n + l) × (n + m))
//
// The definition (Ceres Jets) is in model_linearization.hxx, included at the end of this header:
// a model of the user's own is linearised by including this header, nothing else.
// The library's own models declare `extern template` instances compiled once in their .cc files,
// so that every caller runs the same machine code (bit-identical results whatever the caller's
// target flags, e.g. the first-order sweep's AVX2 kernels).
#ifndef DYNID_MODELS_MODEL_LINEARIZATION_H_
#define DYNID_MODELS_MODEL_LINEARIZATION_H_

#include <Eigen/Core>
#include <glog/logging.h>

namespace dynid::models {

template <class Model>
struct ModelLinearization {
  static constexpr int n = Model::kNumPositions;
  static constexpr int m = Model::kNumInputs;
  static constexpr int p = Model::kNumParameters;
  static constexpr int l = Model::kNumMeasurements;

  // Jacobians are stored row by row (one residual's derivatives contiguous, as automatic
  // differentiation produces them and as the first-order approximation's elimination reads them).
  template <int Rows, int Cols>
  using RowMatrix = Eigen::Matrix<double, Rows, Cols,
                                  Cols == 1 && Rows != 1 ? Eigen::ColMajor : Eigen::RowMajor>;

  Eigen::Matrix<double, n, 1> equations;          // r = M a + h + H u
  Eigen::Matrix<double, l, 1> measurements;       // z = g + G a + R u
  RowMatrix<n, 2 * n + p> J_r_x;                  // ∂r/∂[s; v; theta]
  RowMatrix<n, n + m> J_r_pbar;                   // ∂r/∂[a; u] = [M, H]
  RowMatrix<l, 2 * n + p> J_z_x;                  // ∂z/∂[s; v; theta]
  RowMatrix<l, n + m> J_z_pbar;                   // ∂z/∂[a; u] = [G, R]
};

// Where LinearizeModelInto writes: r (n values), z (l values) and the Jacobians' rows, row-major
// (∂r/∂x: n rows of 2n + p, ∂r/∂p̄: n rows of n + m, ∂z/∂x: l rows of 2n + p, ∂z/∂p̄: l rows of
// n + m), so that a caller may place them in its own stacked matrices.
struct LinearizationTarget {
  double* equations;
  double* measurements;
  double* J_r_x;
  double* J_r_pbar;
  double* J_z_x;
  double* J_z_pbar;
  // Doubles from one row to the next, and from one value of r or z to the next; 0: contiguous
  // (rows 2n + p or n + m apart, values adjacent). A caller's row-major matrix [∂/∂p̄ | ∂/∂x | r]
  // of row length L takes stride = L.
  int stride = 0;
  // ∂/∂p̄'s columns in the order [u; a] instead of [a; u].
  bool inputs_first = false;
};

// Evaluates r, z and their Jacobians at (s, v, a, u, theta, t) by forward-mode automatic
// differentiation (one pass with a Jet of size 3n + m + p). Pointers have n, n, n, m, p values.
template <class Model>
void LinearizeModelInto(const Model& model, const double* s, const double* v, const double* a,
                        const double* u, const double* theta, double t,
                        const LinearizationTarget& out);

// As above, into a ModelLinearization.
template <class Model>
void LinearizeModel(const Model& model, const double* s, const double* v, const double* a,
                    const double* u, const double* theta, double t,
                    ModelLinearization<Model>* out) {
  CHECK(out != nullptr) << "expected an output linearization, got nullptr";
  LinearizeModelInto(model, s, v, a, u, theta, t,
                     LinearizationTarget{out->equations.data(), out->measurements.data(),
                                         out->J_r_x.data(), out->J_r_pbar.data(),
                                         out->J_z_x.data(), out->J_z_pbar.data()});
}

}  // namespace dynid::models

#include "dynid/models/model_linearization.hxx"

#endif  // DYNID_MODELS_MODEL_LINEARIZATION_H_
