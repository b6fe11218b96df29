// solvers::FitPhysicallyConsistent — inverse dynamic identification of a models::SerialRobot whose
// every iterate is physically consistent (problems/physically_consistent_problem.h: log-Cholesky
// pseudo-inertias after Rucker & Wensing (2022), rotor inertias and friction ≥ 0 through
// exponentials), with the delta-method covariance of the standard and of the column (base)
// parameters, and the consistency diagnostics of ordinary estimates.
//
// Solve, in two phases (solvers/README.md, "Optima on the boundary"). First Levenberg–Marquardt
// (Ceres, dense normal equations of the compressed rows) in log-Cholesky coordinates from a
// consistent starting point: the caller's θ_std (description values, or an LS estimate), by
// default first shifted by the smallest change that gives it the LS columns
// (warm_start_from_least_squares), then projected onto the consistent set when it is not strictly
// inside it (PhysicalParameterization::ProjectToConsistent); run from both starts, the lower cost
// kept. The change of unknowns φ → θ_std is a diffeomorphism onto the interior of the consistent
// set and the data cost is convex in θ_std, so a stationary point with an invertible
// D = ∂θ_std/∂φ is a global minimiser over the consistent set (Rucker & Wensing (2022) make the
// same point). Where the optimum lies on the boundary (a friction that the data put at or below
// zero, a link that wants to be flat) those unknowns run towards −∞ and the steps shrink, so the
// second phase continues from the best point in Cholesky coordinates
// (problems::PhysicalCoordinates::kCholesky), where the boundary lies at finite values, with BFGS
// (Ceres's line-search minimiser), which learns the curvature that the Gauss–Newton model of the
// change of unknowns leaves out; terms that end on the boundary are reported in `at_bound`.
//
// Covariance (delta method). With J_φ = M D the Jacobian of all residuals (data and prior) and
// σ̂² = ResidualVarianceFactor(data cost, m, r) — m the rows of non-zero weight, r the rank of the
// data information (the rank of the LS problem, so that σ̂² equals the LS σ̂² when both fits
// agree) —
//     cov(φ) = σ̂² (J_φᵀ J_φ)⁺,   cov(θ_std) = D cov(φ) Dᵀ,   cov(β) = A cov(θ_std) Aᵀ,
// the pseudo-inverse taken after Jacobi scaling with eigenvalues below rank_tolerance × the
// largest treated as zero. A standard (or column) parameter whose linearised value is not a
// function of the determined directions is reported with standard deviation +inf instead of the
// pseudo-inverse's finite number. In the interior, without prior, cov(β) of the base parameters
// equals the LS covariance σ̂² (X_bᵀ X_b)^{-1} (tests). At a bound the delta method gives the
// spread of the interior direction only; such terms are listed in at_bound.
//
// HAC covariance (options.hac). The delta-method covariance assumes white residuals. With serially
// correlated ones the fit is still the minimiser of ½ Σ r_t², so its covariance is the sandwich
//     cov(φ) = H⁺ Ω_φ H⁺,   H = J_φᵀ J_φ (data and prior),   Ω_φ = (A D)ᵀ Ω (A D),
// with Ω the long-run covariance of the column scores g_t = (w_t x_t)ᵀ (w_t e_t) of the data rows
// (ComputeHacScoreCovariance: Newey & West (1987) Bartlett weights, the bandwidth by Andrews'
// (1991) rule; the rows' joints and samples from hac_blocks). The prior is not data: it adds to
// H only. In the interior, without prior, the columns' HAC covariance equals that of the LS
// estimator with the fit's residuals, (XᵀW²X)^{-1} Ω (XᵀW²X)^{-1} (tests), as the delta-method one
// equals σ̂² (XᵀW²X)^{-1}.
//
// What the data do not determine (rank-deficient excitation, a joint that never moves) is read
// from the data information of the columns, Xᵀ diag(w)² X (c × c), after Jacobi scaling: each
// eigenvector below rank_tolerance is reported as a combination of column names. Fit the base
// regressor (column map K) to see only what the record misses; with the standard regressor the
// structural combinations that the base parameters remove are listed as well.
#ifndef DYNID_SOLVERS_PHYSICALLY_CONSISTENT_FIT_H_
#define DYNID_SOLVERS_PHYSICALLY_CONSISTENT_FIT_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/inertia_parameterization.h"
#include "dynid/models/serial_robot.h"
#include "dynid/problems/physically_consistent_problem.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/residual_analysis.h"
#include "dynid/solvers/solver_summary.h"

namespace dynid::solvers {

struct PhysicallyConsistentOptions {
  problems::PhysicallyConsistentProblemOptions problem;  // row compression, prior
  int max_iterations = 100;  // Levenberg–Marquardt in log-Cholesky coordinates, per start
  // Ceres: relative cost decrease. At a boundary the unknowns run toward −∞ and the cost keeps
  // falling by ever smaller amounts; this tolerance is what ends such a solve.
  double function_tolerance = 1e-10;
  double gradient_tolerance = 1e-14;   // Ceres: max-norm of the projected gradient
  double parameter_tolerance = 1e-12;  // Ceres: relative step
  // Margin of the starting point: a start closer to the boundary is projected (eigenvalues of
  // each pseudo-inertia and each drive term raised to this fraction of the largest), in (0, 1).
  double start_floor = 1e-3;
  // Before projecting, move the start so that its columns β = A θ equal the least-squares
  // estimate, by the smallest change of θ_std (Δβ minimum-norm over what the data leave
  // undetermined, Δθ = A⁺ Δβ); the projection then lands near the optimum instead of wherever the
  // caller's values were. Without it a start far from the data (e.g. 1 kg links) can be driven
  // onto the boundary early and crawl there.
  bool warm_start_from_least_squares = true;
  double rank_tolerance = 1e-10;  // relative eigenvalue of the Jacobi-scaled information
  // A link whose smallest pseudo-inertia eigenvalue, or a drive term whose physical value, is below
  // this fraction of the largest (of its link, of its kind) is reported at its bound.
  double bound_tolerance = 1e-6;
  // After the log-Cholesky solves, continue from the best point in Cholesky coordinates
  // (problems::PhysicalCoordinates::kCholesky), where an optimum on the boundary is reached
  // rather than approached ever more slowly (header comment).
  bool finish_in_cholesky_coordinates = true;
  int finish_max_iterations = 3000;  // BFGS iterations of that finish
  // The HAC covariance beside the delta-method one (header comment), with the rows' layout
  // (block = joint, sample of every row of data.x; empty = one block in row order), L fixed by
  // hac_lags > 0 or chosen by hac_bandwidth's rule.
  bool hac = false;
  RowBlocks hac_blocks;
  int hac_lags = 0;
  HacBandwidth hac_bandwidth = HacBandwidth::kAr1;
  ProgressOptions progress;
  bool IsValid(std::string* why) const;
};

struct PhysicallyConsistentSummary {
  bool success = false;  // an estimate exists (Ceres did not fail); see solver.converged
  std::string message;
  SolverSummary solver;  // iterations, costs (data + prior), time, convergence

  Eigen::VectorXd theta;         // p standard parameters (consistent)
  Eigen::VectorXd phi;  // p unknowns (problems::PhysicalParameterization::names()) of the solution
  problems::PhysicalCoordinates coordinates = problems::PhysicalCoordinates::kLogCholesky;  // of phi
  Eigen::VectorXd start_theta;   // the consistent starting point actually used
  bool start_projected = false;  // start_theta differs from the caller's (shifted, projected)

  int num_rows = 0;             // m, rows of non-zero weight
  int rank = 0;                 // of the data information (identifiable combinations)
  double data_cost = 0.0;       // ½ ||diag(w)(X A θ − y)||²
  double prior_cost = 0.0;      // ½ ||prior residual||² (0 without prior)
  double sigma2 = 0.0;          // σ̂² (dimensionless with weights 1/σ_j)
  double relative_error = 0.0;  // ||y − X A θ|| / ||y||, unweighted

  Eigen::MatrixXd covariance;                 // p × p, cov(θ_std)
  Eigen::VectorXd standard_deviation;         // p; +inf where undetermined
  Eigen::VectorXd columns;                    // c, β = A θ (the base parameters for A = K)
  Eigen::MatrixXd column_covariance;          // c × c
  Eigen::VectorXd column_standard_deviation;  // c; +inf where the data do not determine β_i
  // options.hac: the columns' HAC covariance (c × c) and standard deviations (+inf where the data
  // do not determine β_i), with the bandwidth used; success false otherwise or when it failed.
  HacCovariance column_hac;

  // Column combinations the data do not determine: unit-norm c-vectors (columns), each also as a
  // sentence over the column names.
  Eigen::MatrixXd undetermined_directions;
  std::vector<std::string> undetermined;

  std::vector<models::LinkConsistency> links;  // of theta (consistent by construction)
  std::vector<std::string> at_bound;           // links and drive terms at their bound

  // Several lines: convergence, σ̂², rank, relative error, bounds, undetermined combinations.
  std::string Report() const;
};

// Fits `data` (see problems/physically_consistent_problem.h; A = data.column_map) for `robot`
// starting from theta_start (p standard values; any values, projected when not consistent).
// column_names: c names for the report (empty: the standard names when A is the identity,
// "column <i>" otherwise). Returns false with a message for invalid options or data; a failed
// Ceres solve returns true with success = false.
bool FitPhysicallyConsistent(const models::SerialRobot& robot,
                             const problems::PhysicallyConsistentData& data,
                             const Eigen::VectorXd& theta_start,
                             const PhysicallyConsistentOptions& options,
                             const std::vector<std::string>& column_names,
                             PhysicallyConsistentSummary* summary, std::string* error);

// ---- Consistency of ordinary estimates --------------------------------------------------------

// Which standard parameters of an estimate (e.g. LS on the standard regressor, or a
// description's values) are physically inconsistent, and by how much.
struct StandardConsistencyReport {
  // Every link has m > 0 and J ⪰ 0 (eigenvalues above −1e-12 of the largest: a fit on the
  // boundary counts as consistent), and every physical drive term is ≥ 0.
  bool consistent = true;
  std::vector<models::LinkConsistency> links;  // per link
  Eigen::VectorXd physical_values;             // PhysicalParameterization::PhysicalValues
  std::vector<int> negative_drive_terms;       // standard indices with a physical value < 0
  std::vector<std::string> violations;         // one sentence per inconsistent link or term
};
StandardConsistencyReport CheckStandardConsistency(const models::SerialRobot& robot,
                                                   const Eigen::VectorXd& theta_standard);

// Distance of another estimate of the same columns (the consistent fit's β) from a reference
// estimate with covariance (the LS base estimate): z_i = (other_i − reference_i) / σ_i and the
// Mahalanobis distance sqrt(Δᵀ Σ⁻¹ Δ) over the columns with a finite σ_i. Without prior and with
// the same rows and weights, the consistent fit minimises exactly this distance (the LS cost is
// quadratic about its minimum), so it is the distance from the LS estimate to the nearest
// consistent one, in units of σ: ≈ 0 when the LS estimate is itself consistent.
struct EstimateDistance {
  double mahalanobis = 0.0;
  double max_abs_z = 0.0;
  int worst = -1;     // column of max |z|
  Eigen::VectorXd z;  // c; NaN where σ_i is not finite
  int num_compared = 0;
};
EstimateDistance CompareEstimates(const Eigen::VectorXd& reference,
                                  const Eigen::MatrixXd& reference_covariance,
                                  const Eigen::VectorXd& other);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_PHYSICALLY_CONSISTENT_FIT_H_
