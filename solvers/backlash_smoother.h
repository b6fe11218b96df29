// solvers::RunBacklashSmoother — solves the batch backlash smoothing problem of
// problems/backlash_smoother_problem.h (the SAEKF model of Hovland et al. (2002), all data at once)
// with Ceres: Levenberg–Marquardt, SPARSE_NORMAL_CHOLESKY (SuiteSparse), O(N) per iteration
// because the Jacobian is block-banded in sample order.
//
// Initialisation matters because tau_f (Coulomb) and the RK4 map are non-linear; the natural
// start is the SAEKF's filtered trajectory (pass it as initial_states / initial_tau), which puts
// the smoother in the basin of the filter's answer. Without it the nodes start from the
// measured velocities with zero positions and tau_K.
//
// Long runs report progress (solver_summary.h): the callback `progress.callback` after every
// iteration and, with `progress.log_progress`, a LOG(INFO) line every
// `progress.progress_period_s`.
#ifndef DYNID_SOLVERS_BACKLASH_SMOOTHER_H_
#define DYNID_SOLVERS_BACKLASH_SMOOTHER_H_

#include <Eigen/Core>
#include <functional>
#include <string>

#include "dynid/models/two_mass_transmission.h"
#include "dynid/problems/backlash_smoother_problem.h"
#include "dynid/solvers/solver_summary.h"

namespace dynid::solvers {

struct BacklashSmootherOptions {
  int max_iterations = 50;
  // Relative cost change per successful step. 1e-5 of a cost of ~N is far below the cost's own
  // statistical spread (~sqrt(N)); the estimates no longer change in their fourth digit.
  double function_tolerance = 1e-5;
  double gradient_tolerance = 1e-12;
  double parameter_tolerance = 1e-8;
  // The solve runs Levenberg–Marquardt in two phases (max_iterations counts both).
  // Settling: from initial_trust_region_radius, large so that the first steps are nearly
  // Gauss–Newton. The start (the filter's trajectory) violates the stiff dynamics residuals by
  // orders of magnitude, and a small radius would spend tens of iterations walking out of it;
  // Gauss–Newton removes that violation in 1–3 steps. The phase stops once a step lowers the
  // cost by less than settle_function_tolerance (relative).
  // Refinement: what is left is the non-smooth part (Coulomb friction near zero velocity, the
  // corners of the dead zone), where full Gauss–Newton steps overshoot; kept at the huge radius,
  // Levenberg–Marquardt would reject ~8 steps in a row while halving its way down from ~1e13
  // (measured: Simulation 2, 1e5 samples, 8 of 13 iterations rejected). It restarts instead from
  // refine_trust_region_radius and runs to function_tolerance. 0 disables the refinement
  // phase (one phase from initial_trust_region_radius to function_tolerance).
  double initial_trust_region_radius = 1e12;
  double settle_function_tolerance = 1e-3;
  double refine_trust_region_radius = 1e3;
  int num_threads = 1;
  bool use_eigen_sparse = false;  // Eigen's sparse Cholesky instead of SuiteSparse (CHOLMOD)
  ProgressOptions progress;  // callback after every iteration, periodic LOG(INFO) lines

  bool IsValid(std::string* why) const;
};

struct BacklashSmootherResult {
  Eigen::MatrixXd states;                 // N × 4 smoothed [x1, x2, x3, x4]
  Eigen::VectorXd tau;                    // N smoothed tau_K [Nm]
  Eigen::VectorXd delta;                  // N, x1 − x2
  Eigen::MatrixXd measurement_residuals;  // N × l, y_k − h(x̂_k)
  SolverSummary summary;
};

// Builds and solves the problem. initial_states (N × 4) and initial_tau (N) are optional (pass
// empty matrices to use the default start). Returns false with `error` for invalid input or
// when Ceres fails; a run that stops at max_iterations returns true with converged = false.
bool RunBacklashSmoother(const models::TwoMassTransmission& model,
                         const problems::BacklashSmootherData& data,
                         const problems::BacklashSmootherProblemOptions& problem_options,
                         const BacklashSmootherOptions& options,
                         const Eigen::MatrixXd& initial_states, const Eigen::VectorXd& initial_tau,
                         BacklashSmootherResult* result, std::string* error);

// The shape-constrained refinement (problems::BuildBacklashShapeProblem): the smoother solved
// again with tau_K(t) tied to the dead-zone curve K dz(Δ − c; b), estimating the states and
// spring = [c, b, K] together. Start it from the free smoother's trajectory and a FitDeadZone of
// its pairs. That start already satisfies the dynamics, so one phase is the better choice here
// (refine_trust_region_radius = 0; the restart of a second phase costs ~1 s at 1e5 samples and
// saves no iterations), with function_tolerance 1e-4 (backlash_study's default: on Simulation 2
// with 1e5 samples it changes b by 1e-6 rad and K by 3e-4 Nm/rad against 1e-5, under 0.01 σ, and
// saves 5 of 11 iterations). The covariance of [c, b, K] is the [c, b, K] block of (JᵀJ)⁻¹ at the solution,
// computed through the Schur complement of the node block (JᵀJ accumulated from the residual
// blocks into block-tridiagonal storage, nodes eliminated in order by 5 × 5 block Cholesky, O(N);
// no Ceres-assembled sparse Jacobian), multiplied by s² = max(1, posterior_variance_factor) where
// posterior_variance_factor = ResidualVarianceFactor (solvers/parameter_covariance.h: 2 cost /
// (residuals with non-zero weight − free unknowns), 0 when not positive): the residual weights are taken as
// the noise model when the fit is as good as they claim or better (factor <= 1, e.g. an
// inflated Q_xx), and the covariance is widened by the misfit otherwise (factor > 1: weights too
// tight for the model's discretisation or start-up transient). It is valid only as far as the
// model is (the intervals ignore the bias of a wrong shape). When b ends on its bound 0 (no
// backlash in the data) the constraint is active and the covariance is that of [c, K] with b
// held (b's row and column zero, b_on_bound set); none is reported when the solve did not
// converge. The covariance test compares the unscaled
// (JᵀJ)⁻¹ with ceres::Covariance (factor <= 1 there).
struct BacklashShapeResult {
  BacklashSmootherResult smoother;  // states, tau_K (the curve plus the shape residual), …
  Eigen::Vector3d spring = Eigen::Vector3d::Zero();             // [c rad, b rad, K Nm/rad]
  Eigen::Matrix3d spring_covariance = Eigen::Matrix3d::Zero();  // 0 rows/cols for held entries
  Eigen::Vector3d spring_std = Eigen::Vector3d::Zero();
  bool covariance_valid = false;
  bool b_on_bound = false;      // b ended at its bound 0 (its variance is not reported)
  std::string covariance_note;  // why not valid, or what it assumes
  double posterior_variance_factor = 0.0;
  double covariance_time_s = 0.0;
};

bool RunBacklashShapeSmoother(
    const models::TwoMassTransmission& model, const problems::BacklashSmootherData& data,
    const problems::BacklashSmootherProblemOptions& problem_options,
    const problems::BacklashShapeOptions& shape_options, const BacklashSmootherOptions& options,
    const Eigen::MatrixXd& initial_states, const Eigen::VectorXd& initial_tau,
    const Eigen::Vector3d& initial_spring, BacklashShapeResult* result, std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_BACKLASH_SMOOTHER_H_
