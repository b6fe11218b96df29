// solvers:: covariance of the constant parameters of a trajectory problem, and the
// identifiability report (solvers/README.md, "Pitfalls").
//
// For a least-squares problem ½|r(y, theta)|² whose trajectory unknowns y are ordered so that the
// Gauss–Newton matrix H = JᵀJ is banded (node-ordered blocks, as in
// problems/weighted_residual_problem.h), the information of theta is the Schur complement
//
//     S = H_θθ − H_θy H_yy⁻¹ H_yθ                 (p × p)
//
// and cov(theta) = S⁻¹ = [(JᵀJ)⁻¹]_θθ, the same quantity ceres::Covariance returns. S is computed
// with a sparse Cholesky factorisation of the banded H_yy in its natural (node) order, so the
// cost is O(N) in the number of nodes (ceres::Covariance instead factorises the whole Jacobian
// and solves once per requested column).
// The covariance is in the metric of the residual weights: when the weights are inverse noise
// variances (intensities), it is the parameter covariance; otherwise scale it by the residual
// variance.
//
// The same factorisation gives the full covariance blocks of groups of trajectory unknowns
// (e.g. every node's [s; v; a; u]) and their cross-covariance with theta by banded selected
// inversion (TrajectoryCovarianceBySelectedInversion), also O(N).
//
// When S is singular or ill-conditioned the report names the parameter combinations the data do
// not determine (eigenvectors of the relative information D S D, D = diag(|theta|)) instead of
// failing.
#ifndef DYNID_SOLVERS_PARAMETER_COVARIANCE_H_
#define DYNID_SOLVERS_PARAMETER_COVARIANCE_H_

#include <Eigen/Core>
#include <cmath>
#include <string>
#include <vector>

#include "dynid/solvers/residual_analysis.h"

namespace ceres {
class Problem;
namespace internal {
class ResidualBlock;
}
using ResidualBlockId = internal::ResidualBlock*;  // as ceres/problem.h declares it
}  // namespace ceres

namespace dynid::solvers {

// S = H_θθ − H_θy H_yy⁻¹ H_yθ at the current parameter values. `banded_blocks` are all
// non-constant trajectory blocks in band (node) order, `parameter_blocks` the blocks of theta
// (their sizes sum to p). H is accumulated row by row from the Jacobian into banded storage
// (solvers/internal/banded.h) and H_yy is factorised by banded Cholesky: O(N b²) for bandwidth b.
// Returns false with a message when H_yy is not positive definite (the trajectory itself is not
// determined by the data and weights).
// If `trajectory_variance` is non-null it receives the marginal variances of all trajectory
// unknowns, diag[(JᵀJ)⁻¹]_yy (in the order of `banded_blocks`), by banded selected inversion
// plus the rank-p correction for theta — O(N b²), no dense N × N matrix; left empty when S is
// singular.
bool ParameterInformationBySchur(ceres::Problem* problem, const std::vector<double*>& banded_blocks,
                                 const std::vector<double*>& parameter_blocks,
                                 Eigen::MatrixXd* information, std::string* error,
                                 Eigen::VectorXd* trajectory_variance = nullptr);

// Full covariance blocks of the trajectory by banded selected inversion (O(N b²) time and
// memory, no dense N × N matrix): the banded trajectory blocks are grouped into consecutive runs
// of `blocks_per_group` blocks (e.g. one group per node: [s_k; v_k], [a_k; u_k][, theta_k]), and
// for each group g the result holds cov(y_g) = [(JᵀJ)⁻¹]_gg = [H_yy⁻¹]_gg + X_g S⁻¹ X_gᵀ
// (X = H_yy⁻¹ H_yθ) and cov(y_g, theta) = −X_g S⁻¹, with cov(theta) = S⁻¹. `parameter_blocks` may
// be empty (kFixed, kTimeVarying). Fails with a message when H_yy or S is not positive definite,
// or when a group is wider than the band of H_yy (its entries would not be computed).
struct TrajectoryCovariance {
  Eigen::MatrixXd parameter_covariance;         // p × p (empty when p = 0)
  std::vector<Eigen::MatrixXd> blocks;          // one per group, group size × group size
  std::vector<Eigen::MatrixXd> parameter_cross; // one per group, group size × p
};
bool TrajectoryCovarianceBySelectedInversion(ceres::Problem* problem,
                                             const std::vector<double*>& banded_blocks,
                                             const std::vector<double*>& parameter_blocks,
                                             int blocks_per_group, TrajectoryCovariance* result,
                                             std::string* error);

// cov(theta) by ceres::Covariance (SPARSE_QR, SuiteSparse) for comparison on small problems.
// Fails (message from Ceres) when the Jacobian is rank deficient.
bool ParameterCovarianceByCeres(ceres::Problem* problem,
                                const std::vector<double*>& parameter_blocks,
                                Eigen::MatrixXd* covariance, std::string* error);

struct IdentifiabilityReport {
  bool identifiable = false;           // all relative-information eigenvalues above tolerance
  double condition_number = 0.0;       // of the relative information D S D (inf if singular)
  Eigen::VectorXd eigenvalues;         // of D S D, ascending
  Eigen::MatrixXd eigenvectors;        // columns, in relative coordinates δθ_i / |θ_i|
  Eigen::MatrixXd covariance;          // S⁻¹ when identifiable; else the pseudo-inverse on the
                                       // determined subspace (undetermined directions zeroed)
  Eigen::VectorXd standard_deviation;  // sqrt(diag(covariance))
  Eigen::VectorXd relative_standard_deviation;  // standard_deviation / |theta|
  std::vector<std::string> undetermined;        // one sentence per undetermined combination
  std::string message;                          // summary for logs and reports
};

// Analyses the information matrix S (p × p) at the estimate theta with the given names (with
// units, "mass [kg]"). A direction is undetermined when its eigenvalue of D S D is below
// `relative_tolerance` × the largest (D_ii = |theta_i|, or 1 when theta_i = 0).
IdentifiabilityReport AnalyzeIdentifiability(const Eigen::MatrixXd& information,
                                             const Eigen::VectorXd& theta,
                                             const std::vector<std::string>& names,
                                             double relative_tolerance = 1e-10);

// Sandwich covariance of theta for weights that are right only up to a factor per residual
// group. When the weights of a trajectory problem are not the inverse noise variances — the
// thesis's rule "1 / (order of magnitude)²", or weights tuned for a good trajectory — one
// common factor (ResidualVarianceFactor below) cannot repair S⁻¹: the terms that carry the
// noise into theta may be off by another factor than those that carry the fit. Linearised
// at the estimate, with residual rows r_i, the profiled Jacobian of theta
//
//     z_i = j_θ,i − Xᵀ j_y,i   (X = H_yy⁻¹ H_yθ; the row's sensitivity with the trajectory
//                               re-optimised, so S = Σ z_i z_iᵀ)
//
// gives θ̂ − θ = −S⁻¹ Σ z_i r_i, hence cov(θ̂) = S⁻¹ (Σ_ij z_i E[r_i r_j] z_jᵀ) S⁻¹ (the
// Huber (1967) / White (1980) sandwich). With the rows of group g white with a common variance
// s_g² (in the metric of the weights; 1 when the weights are right), the middle is
// Σ_g s_g² Σ_{i∈g} z_i z_iᵀ. Each s_g² is estimated from the fitted residuals by the redundancy
// numbers of the group (Förstner (1979); Koch (1999) §3.6, the first step of Helmert's variance
// component estimation):
//
//     ŝ_g² = Σ_{i∈g} r_i² / Σ_{i∈g} (1 − h_ii),   h_ii = j_iᵀ H⁻¹ j_i
//          = j_y,iᵀ H_yy⁻¹ j_y,i + z_iᵀ S⁻¹ z_i   (the leverage; Σ_i h_ii = the number of
//                                             unknowns when J has full column rank),
//
// so that with one group the result is ResidualVarianceFactor × S⁻¹, and with right weights
// close to S⁻¹ (every ŝ_g² near 1).
// h_ii needs only the band of H_yy⁻¹ (selected inversion), so the cost stays O(N b²).
// Rows of a group whose Jacobian row is zero (zero weight) count in neither sum. Rows marked as
// prior (group −1, e.g. an initial-condition term whose weight is its inverse covariance)
// enter with variance 1, not estimated.
// Model error in a term widens that term's ŝ_g² (it is counted as noise); what this middle does
// not model is its correlation in time along the trajectory, and no covariance repairs a bias of
// theta from the weights or a wrong model structure.
//
// The HAC form (when the layout gives each row its time sample) drops the whiteness: the rows of
// every group at sample t add up to the score g_t = Σ_{i at t} z_i r_i / sqrt(1 − h_ii) (the
// fitted residual rescaled by its leverage, MacKinnon & White's (1985) HC2, so that a white row
// contributes z_i z_iᵀ s_g² on average), and the middle is the long-run covariance of g_t,
//
//     M_HAC = Σ_{|l| ≤ L} (1 − |l| / (L + 1)) Σ_t g_t g_{t+l}ᵀ + (the prior rows' Σ z_i z_iᵀ)
//
// (Newey & West (1987) Bartlett weights; ComputeHacScoreCovariance), which takes in what the
// terms share at one sample and model error that persists over L samples. L is Andrews' (1991)
// automatic bandwidth with α pooled over the p columns of g from their flat-top autocorrelation
// estimates (HacBandwidth::kAutocorrelation, which sees a slowly decaying correlation); the
// intervals are θ̂ ± c σ with Kiefer & Vogelsang's (2005) fixed-b value c at b = (L + 1) / T
// (hac_critical_value_95), because at a long bandwidth the scores of a fit partly cancel
// (Σ_t g_t ≈ 0 at the optimum) and the HAC σ alone is biased down. It counts every persistent
// pattern of the residuals as error, so it is conservative where a smoother's scores are
// correlated without any model error (solvers/README.md gives measured cases); prefer it where
// the residuals hold model error that persists along the trajectory. The white-noise reference
// (SandwichOptions::white_reference_draws; hac_excess) tells the two apart.
//
// The rows of the problem (ceres::Problem::Evaluate with `residual_blocks` in the given order,
// each block's rows in order) with their groups:
struct ResidualRowLayout {
  std::vector<ceres::ResidualBlockId> residual_blocks;  // every block of the problem, in order
  std::vector<int> group;  // one per row, 0 … group_names.size() − 1, or −1 (prior)
  std::vector<std::string> group_names;  // e.g. the weight entries "V.z.x_measured", "W.v.x"
  // Optional, one per row: the row's time sample 0 … T − 1 (a node's index, an interval's first
  // node), −1 for a prior row. Given, the HAC form is computed too.
  std::vector<int> sample;
};
struct SandwichCovariance {
  std::vector<std::string> group_names;  // the layout's
  Eigen::MatrixXd covariance;            // p × p, S⁻¹ M S⁻¹
  Eigen::VectorXd standard_deviation;    // sqrt(diag(covariance))
  Eigen::VectorXd group_variance;    // ŝ_g², one per group (NaN for a group without redundancy)
  Eigen::VectorXd group_redundancy;  // Σ_{i∈g} (1 − h_ii)
  Eigen::VectorXi group_rows;        // rows with a non-zero Jacobian row, per group
  // The HAC form, when the layout has samples (else hac.success is false and these are empty).
  HacScoreCovariance hac;          // M_HAC without the prior rows; L, α, b = (L + 1) / T
  Eigen::MatrixXd hac_covariance;  // S⁻¹ M_HAC S⁻¹
  Eigen::VectorXd hac_standard_deviation;
  double hac_critical_value_95 = NAN;  // the fixed-b c of θ̂ ± c σ
  // The HAC form's white-noise reference (SandwichOptions::white_reference_draws > 0, else
  // empty): the mean HAC covariance that the same fit, layout and bandwidth L give when every
  // group's rows are white with variance ŝ_g² — draws e of such errors (prior rows variance 1),
  // fitted through the linearised problem, r = (I − J H⁻¹ Jᵀ) e, their scores and M_HAC at L.
  // A smoother's fitted residuals are correlated even when its errors are white (the trajectory
  // takes up part of every error), so its HAC σ exceed the white σ by a factor that the fit
  // alone sets; the ratio below tells that factor from persistent error in the residuals.
  int white_reference_draws = 0;
  Eigen::MatrixXd hac_white_reference_covariance;
  Eigen::VectorXd hac_white_reference_standard_deviation;
  // hac_standard_deviation / hac_white_reference_standard_deviation: about 1 (within the HAC's
  // own scatter) where the residuals' persistence is only what the fit induces in white errors,
  // above 1 where they hold error that persists beyond it.
  Eigen::VectorXd hac_excess;
};
// Options of ParameterSandwichCovarianceBySchur.
struct SandwichOptions {
  // Draws of the HAC form's white-noise reference; 0 skips it. Each draw costs one solve with
  // the factorised trajectory block and one HAC sum, O(N) as the sandwich. One draw's HAC
  // variance scatters by 20–80 % of its mean on the studies' records, so 64 draws leave the
  // reference a Monte Carlo error of a few percent.
  int white_reference_draws = 0;
  unsigned white_reference_seed = 1;  // the draws are deterministic for a given seed
};
// A group with no redundancy (every row fitted exactly, h_ii = 1: then z_i = 0 too) adds nothing
// and reports NaN. Fails with a message when H_yy or S is not positive definite or when the
// layout does not match the problem's rows.
bool ParameterSandwichCovarianceBySchur(ceres::Problem* problem,
                                        const std::vector<double*>& banded_blocks,
                                        const std::vector<double*>& parameter_blocks,
                                        const ResidualRowLayout& layout, SandwichCovariance* result,
                                        std::string* error,
                                        const SandwichOptions& options = SandwichOptions());

// How an estimator whose weights are not the inverse noise variances scales the covariance of
// theta it reports: by one a posteriori variance factor (ResidualVarianceFactor × S⁻¹), or by the
// sandwich with a variance factor per residual group (ParameterSandwichCovarianceBySchur).
// kHac reports the HAC form of the sandwich with its fixed-b intervals.
enum class CovarianceScaling { kVarianceFactor, kSandwich, kHac };
// "variance_factor", "sandwich", "hac".
const char* CovarianceScalingName(CovarianceScaling scaling);

// A posteriori variance factor (residual variance) of a weighted least-squares fit,
//
//     σ̂² = rᵀWr / (m − u) = 2 cost / (m − u),
//
// with cost = ½ Σ residual² (Ceres's convention: residuals in the metric of their weights, so σ̂²
// is dimensionless), m the number of weighted observations (residual components with non-zero
// weight) and u the number of free unknowns. With E[rᵀWr] = σ² (m − u) at the optimum of a
// model that is linear near it, σ̂² is the unbiased estimate of the common factor σ² by which the
// weights W are off from the inverse noise covariance; the covariance in the metric of the
// weights (S⁻¹ above) times σ̂² is the parameter covariance when the weights are only known up to
// that factor. A residual row of zero weight (a measurement weighted 0, a zero diagonal entry of
// V) is identically zero: it carries no information and no degree of freedom, so it is not
// counted in m (counting it would shrink σ̂ by sqrt((m − u) / (m + zero rows − u))).
// NaN when m <= u.
double ResidualVarianceFactor(double cost, int num_weighted_residuals, int num_unknowns);

// The number of free unknowns of `problem`: the tangent sizes (after the parameter blocks'
// manifolds) of the parameter blocks that are not held constant.
int CountFreeUnknowns(const ceres::Problem& problem);

// ResidualVarianceFactor(cost, m, CountFreeUnknowns(problem)) — the one degrees-of-freedom rule
// of the weighted-residual estimators: m residual components with non-zero weight minus the free
// unknowns. For a problem built by problems::BuildWeightedResidualProblem, m is
// problems::CountWeightedResiduals(weights, data, options), not problem.NumResiduals() (which
// includes the zero-weight rows).
double ResidualVarianceFactor(const ceres::Problem& problem, double cost,
                              int num_weighted_residuals);

// True when `covariance` can be a covariance matrix: square, finite, symmetric to
// 1e-9 (1 + max|c_ij|) and positive semi-definite to round-off (smallest eigenvalue of its
// symmetric part >= −1e-12 (1 + max|c_ij|)). Otherwise false, with the first failed condition
// in *why when why is non-null. An empty matrix is not a covariance.
bool IsValidCovariance(const Eigen::MatrixXd& covariance, std::string* why = nullptr);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_PARAMETER_COVARIANCE_H_
