// solvers/linear_least_squares — the project's common linear least-squares / covariance path
// for stacked linear-in-the-parameters models y = X θ + e (Brunot et al. (2017) eqs. 4–7;
// Brunot et al. (2018) eqs. 5–8). Used by IDIM-LS, per-joint weighted LS, IDIM-IV and the
// essential- parameter selection, and generic over X: the caller supplies the stacked matrix (N_t ×
// b), the observations (N_t), optional column names and a row → block map (block = joint).
//
// Three solvers, one Summary:
//   SolveLeastSquares            Householder QR with column pivoting of X (never XᵀX).
//   SolveWeightedLeastSquares    Gautier's per-joint weighting: σ_j from an ordinary LS,
//                                rows of joint j scaled by 1/σ_j, solved again.
//   SolveLeastSquaresCeres       the same problem as a ceres::Problem (one parameter block θ,
//                                residual blocks of rows with the analytic Jacobian = rows of X),
//                                covariance by ceres::Covariance — the design rule's path; the
//                                tests show it agrees with the QR path to ~1e-9.
//   SolveInstrumentalVariables   θ = (ZᵀX)^{-1} Zᵀ y with the covariance of
//                                Brunot et al. (2018) eq. 8.
#ifndef DYNID_SOLVERS_LINEAR_LEAST_SQUARES_H_
#define DYNID_SOLVERS_LINEAR_LEAST_SQUARES_H_

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "dynid/data/stack_order.h"

namespace ceres {
class CostFunction;
}  // namespace ceres

namespace dynid::solvers {

// Which block (joint) each row of a stacked system belongs to, and optionally at which sample
// (needed only for a full n × n error covariance in the IV covariance).
struct RowBlocks {
  std::vector<int> block_of_row;         // size N_t, values in [0, num_blocks); empty = 1 block
  std::vector<int> sample_of_row;        // optional, size N_t
  std::vector<std::string> block_names;  // optional, size num_blocks ("joint 1", ...)

  // Number of blocks (max + 1 of block_of_row; 1 when empty).
  int num_blocks() const;
  // Block of row i (0 when block_of_row is empty).
  int BlockOf(int row) const { return block_of_row.empty() ? 0 : block_of_row[row]; }
  // Name of block j (block_names[j], or "block <j+1>").
  std::string BlockName(int block) const;

  // Consecutive blocks of the given sizes (sample_of_row = index inside the block).
  static RowBlocks FromSizes(const std::vector<int>& sizes);
  // The n · N_s rows of a stack in `order` (data/stack_order.h), with block = joint and the sample
  // map filled; names "joint 1", ..., "joint n".
  static RowBlocks Stacked(data::StackOrder order, int num_joints, int num_samples);
  // The rows `rows` of this layout (e.g. after data::SelectSamples), keeping names.
  RowBlocks Subset(const std::vector<int>& rows) const;

  // Sizes agree with `num_rows`, block indices are >= 0, names (if any) cover every block.
  bool IsValid(int num_rows, std::string* why) const;
};

// How SolveWeightedLeastSquares estimates the standard deviation σ_j of block j.
enum class BlockSigmaEstimate {
  // Gautier's: an ordinary LS on block j's own rows only (its non-zero columns, rank by pivoted
  // QR), σ_j² = ||y_j − X_j θ_j||² / (N_j − rank(X_j)).
  kBlockSubsystem,
  // From the residuals of one ordinary LS on the whole stack:
  // σ_j² = ||r_j||² / N_j · N_t / (N_t − b).
  kGlobalResidual,
};

struct LinearLeastSquaresOptions {
  std::vector<std::string> column_names;  // optional, size b; used in reports
  RowBlocks row_blocks;                   // per-block diagnostics and weights

  // Column k of the pivoted QR counts as dependent when |R_kk| <= rank_tolerance · |R_00|.
  double rank_tolerance = 1e-10;
  // cond(X) = σ_max / σ_min from the singular values of the b × b factor R.
  bool compute_condition_number = true;
  BlockSigmaEstimate block_sigma_estimate = BlockSigmaEstimate::kBlockSubsystem;

  // Ceres path only: linear solver (true = DENSE_QR, false = DENSE_NORMAL_CHOLESKY), rows per
  // residual block, and the covariance algorithm (true = DENSE_SVD, false = SPARSE_QR).
  bool ceres_dense_qr = true;
  int ceres_rows_per_residual_block = 64;
  bool ceres_covariance_dense_svd = true;
  int ceres_num_threads = 1;

  // For SolveInstrumentalVariables: Λ of Brunot et al. (2018) eq. 8 as a full n × n covariance of
  // the per-sample residual vectors (requires row_blocks.sample_of_row with every block present at
  // every sample) instead of the diagonal of per-block variances.
  bool iv_full_error_covariance = false;

  bool IsValid(std::string* why) const;
};

struct LinearLeastSquaresSummary {
  bool success = false;    // false for bad input, rank deficiency or a solver failure
  std::string message;     // why not, or a one-line success note
  std::string method;      // "LS (QR)", "WLS (QR)", "LS (Ceres DENSE_QR)", "IV"
  int num_rows = 0;        // N_t
  int num_parameters = 0;  // b
  int rank = 0;
  int iterations = 0;  // Ceres iterations (1 for the direct paths)
  double time_s = 0.0;

  Eigen::VectorXd theta;                 // b
  Eigen::MatrixXd covariance;            // b × b; NaN rows/columns for dependent columns
  Eigen::VectorXd standard_deviation;    // sqrt(diag(covariance))
  Eigen::VectorXd relative_std_percent;  // 100 σ_k / |θ_k| (inf when θ_k = 0)
  double sigma2 = 0.0;                   // ||r||² / (N_t − b) (weighted residual for WLS)
  Eigen::VectorXd residual;              // y − X θ (unweighted), N_t
  double residual_norm = 0.0;            // ||y − X θ||
  double relative_error = 0.0;           // ||y − X θ|| / ||y||  (Brunot et al. (2018) Table 3)
  double condition_number = 0.0;         // cond(X) (of the row-scaled X for WLS); 0 if skipped
  Eigen::VectorXd block_rms;             // RMS of the residual per block
  Eigen::VectorXd block_sigma;           // WLS: σ_j used as weights; IV: sqrt(diag(Λ))
  Eigen::MatrixXd error_covariance;      // IV: Λ (n × n) used in eq. 8

  std::vector<int> dependent_columns;  // columns the data do not determine
  std::string dependence_report;       // "c = 1.5·a − 0.5·b" per dependent column

  // A table "name  estimate  σ  %σ" plus the diagnostics, for printing.
  std::string Report(const std::vector<std::string>& column_names = {}) const;
};

// cond(X) = σ_max(X) / σ_min(X) of X (N × b, N >= b; any units), infinity when σ_min = 0;
// computed from the b × b triangular factor of a Householder QR (same singular values as X).
// With normalise_columns the columns are first scaled to unit Euclidean norm (zero columns kept),
// which removes the effect of the parameters' units.
double ConditionNumber(const Eigen::MatrixXd& X, bool normalise_columns = false);

// Ordinary LS by Householder QR with column pivoting: X P = Q R, θ = P R^{-1} Qᵀ y,
// σ² = ||y − Xθ||² / (N_t − b), Σ = σ² (XᵀX)^{-1} = σ² P R^{-1} R^{-T} Pᵀ (Brunot et al. (2017)
// eqs. 5–7). X: N_t × b with N_t > b; y: N_t (CHECKed). A rank-deficient X gives success = false,
// the basic solution (θ = 0 on dependent columns), the covariance of the independent columns with
// the dependent ones fixed, and the dependent columns named in message / dependence_report.
LinearLeastSquaresSummary SolveLeastSquares(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                            const LinearLeastSquaresOptions& options);

// X handed over in pieces rather than held (a long record's regressor, formed piece by piece from
// its states): `x_rows(consume, error)` calls consume(first_row, piece) for consecutive rows of
// X, every row exactly once, in any order of the pieces; false when the rows cannot be formed.
using RowPieceConsumer =
    std::function<void(Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece)>;
using RowSource = std::function<bool(const RowPieceConsumer& consume, std::string* error)>;

// SolveLeastSquares for an X (y.size() × b) that is not held: the rows pass twice, once through
// a tall-skinny Householder QR (each piece stacked under the b × b factor so far, with its
// entries of y) and once for the residual; the pivoted QR then runs on the factor, as
// SolveLeastSquares does for more than 8 192 rows. Same estimate, covariance, rank and
// diagnostics up to round-off. Fails (success = false, message) when x_rows fails.
LinearLeastSquaresSummary SolveLeastSquaresFromRows(const RowSource& x_rows, int b,
                                                    const Eigen::VectorXd& y,
                                                    const LinearLeastSquaresOptions& options);

// Gautier's weighted LS (see solvers/README.md): σ_j per block (options.block_sigma_estimate), rows
// of block j divided by σ_j, solved by SolveLeastSquares; covariance σ_w² (Xᵀ W X)^{-1} from the
// weighted fit; residual, relative error and block RMS reported unweighted. block_sigma holds σ_j.
LinearLeastSquaresSummary SolveWeightedLeastSquares(const Eigen::MatrixXd& X,
                                                    const Eigen::VectorXd& y,
                                                    const LinearLeastSquaresOptions& options);

// SolveWeightedLeastSquares for an X (y.size() × b) that is not held (RowSource above): σ_j from
// per-block tall-skinny QRs of the rows (kBlockSubsystem: one pass, then one for the block
// residuals) or from SolveLeastSquaresFromRows (kGlobalResidual), then the weighted rows through
// one more tall-skinny QR and one pass for the residual. Same estimate, σ_j, covariance and
// diagnostics up to round-off; memory O(blocks · b²) besides y and the residual.
LinearLeastSquaresSummary SolveWeightedLeastSquaresFromRows(
    const RowSource& x_rows, int b, const Eigen::VectorXd& y,
    const LinearLeastSquaresOptions& options);

// The same ordinary LS cast as a ceres::Problem: parameter block θ (b), residual blocks of
// options.ceres_rows_per_residual_block rows r = X_rows θ − y_rows with the analytic Jacobian
// X_rows, Levenberg–Marquardt with a huge initial trust region (one Gauss–Newton step solves a
// linear problem; the second iteration confirms convergence), covariance (JᵀJ)^{-1} by
// ceres::Covariance scaled by σ². Rank deficiency: ceres::Covariance fails → success = false.
LinearLeastSquaresSummary SolveLeastSquaresCeres(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                                 const LinearLeastSquaresOptions& options);

// The residual block of SolveLeastSquaresCeres: r = rows · θ − observations (rows: m × b,
// observations: m), one parameter block θ of size b, analytic Jacobian ∂r/∂θ = rows. The caller
// owns the result (ceres::Problem takes ownership when it is added to one).
ceres::CostFunction* NewLinearRowsCost(const Eigen::MatrixXd& rows,
                                       const Eigen::VectorXd& observations);

// Instrumental variables (Brunot et al. (2018) eqs. 5, 7): θ = (ZᵀX)^{-1} Zᵀ y for instruments Z
// with the shape of X (N_t × b; in IDIM-IV the decimated regressor of the simulated noise-free
// robot). Solved without forming ZᵀX: Z P = Q R, then (Qᵀ X) θ = Qᵀ y (same solution when ZᵀX is
// invertible, better conditioned). Covariance by Brunot et al. (2018) eq. 8 without its 1/N
// factors, i.e. the covariance of θ itself:  P = (Σ_i ζ_iᵀ Λ^{-1} ζ_i)^{-1}, ζ_i the n × b rows of
// Z at sample i, Λ the n × n covariance of the (filtered) error, estimated from r = y − X θ_IV:
// diagonal with Λ_jj = ||r_j||² / N_j · N_t / (N_t − b) by default (then P = (Zᵀ W Z)^{-1} with
// W = diag(1/Λ_jj) per row), or the full sample covariance of the per-sample residual vectors
// (options.iv_full_error_covariance). With Z = X and one block this is exactly σ² (XᵀX)^{-1}.
// success = false (with the dependent columns named) when Z or QᵀX is rank deficient.
LinearLeastSquaresSummary SolveInstrumentalVariables(const Eigen::MatrixXd& Z,
                                                     const Eigen::MatrixXd& X,
                                                     const Eigen::VectorXd& y,
                                                     const LinearLeastSquaresOptions& options);

// --- The IDIM-IV iteration (Brunot et al. (2018) §2.2, eqs. 6–8) ----------------------------

struct IvIterationOptions {
  int max_iterations = 20;  // Brunot et al. (2018) caps at 20
  // Converged when both relative changes fall to or below their tolerance:
  double torque_tolerance = 1e-3;     // ||τ_s^it − τ_s^(it−1)|| / ||τ_s^(it−1)||
  double parameter_tolerance = 1e-3;  // ||θ^it − θ^(it−1)|| / ||θ^(it−1)||
  // Torques first: the generator also accepts instruments == nullptr and then returns only the
  // simulated torques (it must return them). The iteration asks for the torques of a new
  // estimate first and for its instruments only when another solve needs them, so the
  // simulation that confirms convergence forms no instruments (IDIM-IV: one regressor and
  // decimation pass less per run, and one instrument matrix less alive at a time). A generator
  // that simulates should keep its last simulation, because the instruments of an estimate are
  // asked for right after its torques. Estimates, changes and counts are those of the default.
  bool torques_first = false;
  // Stop a run that is not converging (0 = off: run to max_iterations). The iteration stops
  // when, for this many consecutive iterations, neither relative change (torque, parameter) has
  // fallen below the smallest value it reached at an earlier iteration: an iteration that
  // contracts towards a fixed point lowers them, one that drifts or diverges keeps them at or
  // above a level (e.g. IDIM-IV conventional on the undecimated TX40 record without knowledge
  // of the bandwidth, Brunot et al. (2018) Table 5: changes of 2e-3–6e-3 from the 4th
  // iteration on, until an estimate gives an indefinite mass matrix at the 17th). The run is
  // reported as not converged (IvIterationSummary::stalled) with the last estimate, as at the
  // cap. It changes no run that converges without such a stretch.
  int stall_iterations = 0;
  bool IsValid(std::string* why) const;
};

// The auxiliary model: given the current estimate θ (b), simulate the noise-free system (in
// IDIM-IV the closed-loop robot driven by the reference trajectory) and return the instruments
// (N_t × b: its regressor, pre-processed with the same decimation filter as X) and its
// torques (N_t, stacked like y; may be left empty, then Z θ is used). Returns false with a
// message when the simulation fails (e.g. diverges for this θ). With
// IvIterationOptions::torques_first, instruments may be null: then only the torques.
using InstrumentGenerator =
    std::function<bool(const Eigen::VectorXd& theta, Eigen::MatrixXd* instruments,
                       Eigen::VectorXd* simulated_torques, std::string* error)>;

struct IvIterationSummary {
  bool converged = false;
  bool stalled = false;                // stopped by IvIterationOptions::stall_iterations
  int iterations = 0;                  // IV solves performed
  std::string message;                 // "converged after 4 iterations", or why not (honestly)
  LinearLeastSquaresSummary estimate;  // the last IV solve (covariance by eq. 8)
  std::vector<Eigen::VectorXd> theta_history;  // θ^0 (initial), θ^1, ...
  std::vector<double> torque_change;           // per iteration (from the 2nd simulation on)
  std::vector<double> parameter_change;        // per iteration
  double time_s = 0.0;
};

// Iterates: simulate with θ^(it−1) → instruments ζ; θ^it = SolveInstrumentalVariables(ζ, X, y)
// (eq. 7); stops when both relative changes are within tolerance (the torque change compares the
// simulations driven by θ^it and θ^(it−1), so convergence needs one simulation more than
// solves) or after max_iterations, reporting non-convergence with the last changes. θ^0 (b) is
// the initial guess (Brunot et al. (2018): CAD inertias, zero friction). X, y as in
// SolveLeastSquares.
IvIterationSummary IterateInstrumentalVariables(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                                const Eigen::VectorXd& theta0,
                                                const InstrumentGenerator& generator,
                                                const IvIterationOptions& iteration_options,
                                                const LinearLeastSquaresOptions& options);

// The IV solve of one iteration from the auxiliary model's instruments Z (N_t × b). The overload
// above uses SolveInstrumentalVariables(Z, X, y, options).
using IvSolve = std::function<LinearLeastSquaresSummary(const Eigen::MatrixXd& instruments)>;

// The same iteration with the caller's IV solve (e.g. idim's SolveIdimIvFromProducts on long
// records). The instruments behind the last estimate go to *final_instruments (if non-null), and
// the generator's storage is reused from one simulation to the next. Here the "instruments" are
// whatever the generator and the solve agree on: N_t × b instruments, or any summary of them
// (idim passes their b × b products, so that the instruments of an undecimated record are
// never held whole) provided the generator returns the torques.
IvIterationSummary IterateInstrumentalVariables(const Eigen::MatrixXd& X,
                                                const Eigen::VectorXd& theta0,
                                                const InstrumentGenerator& generator,
                                                const IvIterationOptions& iteration_options,
                                                const IvSolve& solve,
                                                Eigen::MatrixXd* final_instruments);

// The same for an X that is not held (its rows formed piece by piece by `solve`): only its row
// count is needed (the torques' length); b = theta0.size().
IvIterationSummary IterateInstrumentalVariables(Eigen::Index num_rows,
                                                const Eigen::VectorXd& theta0,
                                                const InstrumentGenerator& generator,
                                                const IvIterationOptions& iteration_options,
                                                const IvSolve& solve,
                                                Eigen::MatrixXd* final_instruments);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_LINEAR_LEAST_SQUARES_H_
