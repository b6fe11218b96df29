// The IRW smoother solved as a banded least-squares problem (Brunot et al. (2018) §3), two ways:
// a direct banded Cholesky of the normal matrix I + D^T D / NVR, and Ceres
// (SPARSE_NORMAL_CHOLESKY with SuiteSparse) on the problem built by problems::BuildIrwProblem.
// Both return the smoothed positions; the increments follow as differences
// (∇x(k) = x(k+1) - x(k), ∇²x(k) = x(k+2) - 2x(k+1) + x(k)), with the end samples continued
// as the state model does (the expected next increment equals the last one).
// They are the cross-checks of the recursive KF/FIS in irw_smoother.h, which the library uses
// by default (faster, O(N) memory with small constants, and well conditioned at tiny NVR where
// the normal matrix has condition number ~16/NVR).
#ifndef DYNID_SOLVERS_IRW_LEAST_SQUARES_H_
#define DYNID_SOLVERS_IRW_LEAST_SQUARES_H_

#include <string>

#include <Eigen/Core>

#include "dynid/solvers/irw_smoother.h"

namespace dynid::solvers {

// N x n_x states [x, ∇x (, ∇²x)] from positions smoothed by a banded solve.
bool SmoothIrwBanded(const Eigen::VectorXd& y, IrwModel model, double nvr,
                     Eigen::MatrixXd* states, std::string* error);

struct IrwCeresSummary {
  bool converged = false;
  int iterations = 0;
  double final_cost = 0.0;
  double solve_time_s = 0.0;
  std::string message;
};

// The same through Ceres. Uses SuiteSparse when Ceres was built with it.
bool SmoothIrwCeres(const Eigen::VectorXd& y, IrwModel model, double nvr,
                    Eigen::MatrixXd* states, IrwCeresSummary* summary, std::string* error);

// Differences of smoothed positions -> states (shared by both paths).
Eigen::MatrixXd IrwStatesFromPositions(const Eigen::VectorXd& positions, IrwModel model);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_IRW_LEAST_SQUARES_H_
