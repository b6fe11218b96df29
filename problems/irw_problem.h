// The IRW smoother as a sparse linear least-squares problem (Brunot et al. (2018) §3).
//
// With a diffuse prior, the smoothed positions x(0..N-1) of IRWSM1 minimise
//   J(x) = sum_k (y(k) - x(k))^2 + (1/NVR) sum_k (x(k+2) - 2 x(k+1) + x(k))^2,
// and those of IRWSM2 the same with third differences (x(k+3) - 3x(k+2) + 3x(k+1) - x(k)):
// the n_x-th difference of the positions is the (scaled) process noise eta. The Jacobian is
// banded (bandwidth n_x), so Ceres' SPARSE_NORMAL_CHOLESKY solves it in O(N).
#ifndef DYNID_PROBLEMS_IRW_PROBLEM_H_
#define DYNID_PROBLEMS_IRW_PROBLEM_H_

#include <vector>

#include <Eigen/Core>

namespace ceres {
class Problem;
}

namespace dynid::problems {

// Adds the residuals of J to `problem`. `positions` (size N) holds the parameter blocks, one
// scalar block per sample, initialised by the caller (e.g. to y) and owned by the caller.
// `difference_order` is n_x: 2 for IRWSM1, 3 for IRWSM2. Residual blocks: N data residuals
// (x(k) - y(k)) and N - n_x difference residuals scaled by 1/sqrt(NVR), all with analytic
// (constant) Jacobians.
void BuildIrwProblem(const Eigen::VectorXd& y, int difference_order, double nvr,
                     std::vector<double>* positions, ceres::Problem* problem);

}  // namespace dynid::problems

#endif  // DYNID_PROBLEMS_IRW_PROBLEM_H_
