// solvers/idim — the inverse dynamic identification model (IDIM) pipeline of Brunot et al. (2018)
// and Brunot et al. (2017) for a models::SerialRobot: pre-processing of measured positions and
// torques for one level of prior knowledge → observation matrix → parallel decimation → sample
// selection → IDIM-LS, Gautier's per-joint WLS or IDIM-IV with instruments from a closed-loop
// auxiliary model (Brunot et al. (2018) eqs. 3–8 and §4; Brunot et al. (2017) §2.3).
//
// Data flow of BuildIdimSystem (Ns samples of n joints at fs, joint-major stacking throughout:
// row j·Ns + k is joint j at sample k, as models::SerialRobot::StackedRegressor):
//   1. derivatives of the measured positions q_m (Ns × n) by one of
//        conventional  Butterworth low-pass of order 4 (n_d + 2) at omega_q, forward-backward,
//                      then central differences for q̂' and q̂'' (METHODS §2 step 1); with
//                      omega_q <= 0 no low-pass ("no knowledge": raw central differences);
//        IRWSM1        IRW smoother, NVR per joint by maximum likelihood, velocity from it and
//                      acceleration by applying IRWSM1 a second time to that velocity (Brunot
//                      et al. (2018) §3.4), again with an ML NVR;
//        IRWSM2        double IRW smoother, NVR per joint by ML, velocity and acceleration from
//                      the same smoother;
//   2. X = phi(q̂, q̂', q̂'') restricted to the identified columns (IdimModel), y = tau stacked;
//   3. decimation by R (order-8 Chebyshev I at 0.8 (fs/2)/R, zero phase, every R-th sample) of
//      every column of X and of y ("parallel filtering", data::DecimateStacked); R = 1 means no
//      filter at all (the "no knowledge" setting of Brunot et al. (2018) §4);
//   4. optional sample selection on the decimated velocities (data::SelectSamples): rows where
//      the joint's velocity is below a threshold and the leading/trailing rest are dropped, and
//      a guard band around them (IdimPreprocessingOptions::selection_guard_rows / _s).
//
// IDIM-IV (RunIdim with kInstrumentalVariables): solvers::IterateInstrumentalVariables with an
// auxiliary model that, for the current estimate θ, builds the robot whose dynamics are X θ
// (IdimModel::RobotWithParameters), simulates the noise-free closed loop (data::SimulateClosedLoop,
// same controller gains, driven by the reference trajectory), and passes the simulated
// (q, q', q'') and applied torques through steps 2–4 with the SAME decimation and rows as the
// measured system (ProcessLikeSystem). The simulator's positions and velocities are exact; the
// accelerations are the central differences of the simulated velocities (MotionAccelerations),
// not the recorded sample-instant values, which Coulomb chatter corrupts.
// Every run also reports a HAC covariance (residual_analysis.h) next to eq. 8 / σ²(XᵀX)^{-1}.
// On the fast IV path the iteration's solves read only ZᵀX and Zᵀy (θ, residual, Λ): the Gram
// blocks Z_jᵀZ_j of eq. 8's covariance are formed once, for the instruments of the final
// estimate (in the HAC covariance's pass over them), bitwise those a solve would form; so a
// Σ_j Z_jᵀZ_j / Λ_jj that is not positive definite fails the run at its end, not an
// intermediate iteration.
//
// Memory, linear in the record with small constants (b = 55 columns, n = 6 joints of the TX40:
// n·b·8 bytes = 2.6 kB per sample of a full-rate regressor, 2.6 GB for 10⁶ samples):
//   - no full-rate regressor of a decimated system, measured or simulated: it is formed 2 048
//     samples at a time and every (joint, column) series goes through data::BlockDecimator,
//     whose forward pass of the zero-phase filter is carried from block to block exactly and
//     whose backward pass runs over a buffer of three "lookaheads" (the length after which the
//     filter's impulse response stays below 1e-17 of its peak, ≈ 210 R samples); X equals the
//     whole-record filter's up to the filter's round-off (bitwise when the record fits the
//     buffer of max(3 lookaheads, 65 536) samples: the 7 s TX40 record). Buffer: 65 536 · 8 bytes
//     per nonzero series for R <= 104 (84 MB: 161 of the n·b = 330 series; 173 MB if all were
//     nonzero), independent of the length. Filtering columns in blocks
//     instead (each block of columns decimated whole) evaluated the regressor once per block.
//   - an undecimated system (R = 1, up to n·Ns rows) with stream_regressor holds its states
//     (3 · Ns × n) instead of X, and every user forms X's rows 2 048 samples at a time: LS by a
//     tall-skinny QR over the pieces (solvers::SolveLeastSquaresFromRows), WLS by per-joint
//     tall-skinny QRs for σ_j and one of the weighted rows (SolveWeightedLeastSquaresFromRows;
//     4 passes, and 1 + the HAC's for Z = W X), the fast IV path from
//     the instruments' products with X's rows formed beside the instruments' (one more
//     regressor evaluation per products pass) and the residuals' sums of squares per joint from
//     X's block products (y_jᵀy_j − 2θᵀX_jᵀy_j + θᵀX_jᵀX_jθ), the HAC covariances from pieces
//     (ComputeHacCovarianceFromRows). The common IV path forms X whole. The extra
//     regressor evaluations cost CPU (IDIM-IV conv. on the undecimated 7 s TX40 record, 17
//     iterations: +0.4–1.5 s of 11–14 s), so a caller streams only long records (tx40_study:
//     X above 256 MB).
//   - the instruments of an undecimated IV run pass as their b × (b + 1 + n·b) products.
#ifndef DYNID_SOLVERS_IDIM_H_
#define DYNID_SOLVERS_IDIM_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/data/robot_simulator.h"
#include "dynid/data/sample_selection.h"
#include "dynid/data/trajectory.h"
#include "dynid/models/base_parameters.h"
#include "dynid/models/serial_robot.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/residual_analysis.h"

namespace dynid::solvers {

enum class IdimDifferentiator { kConventional, kIrw1, kIrw2 };
// "conventional", "irwsm1", "irwsm2".
const char* IdimDifferentiatorName(IdimDifferentiator differentiator);

struct IdimPreprocessingOptions {
  IdimDifferentiator differentiator = IdimDifferentiator::kConventional;
  double sample_rate_hz = 5000.0;
  // Conventional path: Butterworth cut-off omega_q (Hz) and order; <= 0: no low-pass.
  double position_cutoff_hz = 50.0;
  int butterworth_order = 4;
  // R >= 1; 1: neither the decimation filter nor down-sampling.
  int decimation_factor = 100;
  bool select_samples = false;
  data::SampleSelectionOptions selection;
  // Guard band of the selection, in decimated rows: a kept row of joint j is also dropped when
  // an excluded row of joint j (rest, low velocity, coupled motor at rest) lies within this
  // many rows. At rest the measured torque holds stiction, not fc·sign(q̂'), and the decimation
  // filter (order-8 Chebyshev I, impulse response ≈ ±15 decimated rows to 1 %) smears that
  // mismatch into the neighbouring rows: on the simulated 7 s TX40 record (good knowledge) the
  // residual RMS at the true θ is 0.54 N m next to an excluded row, 0.13 at 4 rows, 0.07 at 7
  // and 0.034 beyond 12 (the noise floor), and those rows biased the IDIM-IV estimates by up
  // to 9σ (tx40_bias). The band is at least `selection_guard_s` long in time as well, because
  // the differentiation filters and the break-away after a rest spread the mismatch over a
  // time that does not shrink with R (measured, poor knowledge R = 13: fc3 of IDIM-IV IRWSM2 at
  // 3.3σ with 5 rows = 13 ms, 2.4σ with 15 rows). Band = max(rows, ceil(s · fs / R)); both 0
  // reproduce the plain selection.
  int selection_guard_rows = 5;
  double selection_guard_s = 0.04;
  int num_threads = 1;  // threads for the per-column filters and IRW smoothers
  // Joints whose torque is measured (n flags; empty = all). The rows of the other joints are
  // left out of the system (their torque columns are ignored and may hold NaN); real records
  // often lack some joints' efforts. Identify the base parameters of the measured equations
  // (models::NumericalBaseOptions::measured_joints), or some columns are undetermined.
  std::vector<bool> measured_joints;
  // Rest detection, after step 1: a differentiated velocity of magnitude below rest_velocity
  // [rad/s, or m/s for a prismatic joint] is set to zero, so the joint counts as at rest. A
  // smoothed velocity never vanishes exactly, and at rest its sign follows the smoother's noise,
  // so that the Coulomb column sign(q') jumps between ±1 where the torque holding the joint is
  // stiction, anywhere within ±fc; with sign(0) = 0 those rows predict the offset instead (the
  // mean of stiction). 0 = off.
  double rest_velocity = 0.0;
  // Without decimation (R = 1), do not hold X (rows × b: 75 MB for the 7 s TX40 record, 2.2 GB
  // for 10⁶ samples) but keep the differentiated states and form X's rows from them piece by
  // piece wherever they are needed (IdimSystem::streamed). Decimated systems always hold X.
  bool stream_regressor = false;
  bool IsValid(std::string* why) const;
};

// The identified columns: a subset of a robot's base parameters (e.g. the 28 essential
// parameters of Brunot et al. (2018) Table 2), b of them.
class IdimModel {
 public:
  // `names`: base-parameter names to identify (each must be in base.names), empty = all.
  static bool Create(const models::SerialRobot& robot, const models::BaseParameterSet& base,
                     const std::vector<std::string>& names, IdimModel* model, std::string* error);

  int num_parameters() const { return static_cast<int>(names_.size()); }
  int num_joints() const { return robot_.num_joints(); }
  const std::vector<std::string>& names() const { return names_; }
  const models::SerialRobot& robot() const { return robot_; }
  const models::BaseParameterSet& base() const { return base_; }
  // Standard-parameter index of identified column i.
  int StandardIndex(int i) const { return standard_index_[i]; }
  // True for friction columns (fv*, fc*, fv<motor>, fc<motor>, off*).
  bool IsFrictionOrOffset(int i) const;

  // X ((n·Ns) × b, joint-major) at the states q, qd, qdd (Ns × n each), built in chunks so that
  // the full standard regressor is never held for all samples. With `rows` (increasing indices
  // of the n·Ns stacked rows), only those rows, in that order: the stack is never formed.
  void Regressor(const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd, const Eigen::MatrixXd& qdd,
                 Eigen::MatrixXd* x, const std::vector<int>* rows = nullptr) const;
  // The identified values of a standard parameter vector: (K θ_std)(columns).
  Eigen::VectorXd FromStandard(const Eigen::VectorXd& theta_standard) const;
  // The robot whose torques are X θ: all standard parameters zero except the kept standard
  // column of every identified base parameter, set to its θ entry. Its mass matrix equals the
  // one implied by θ (the regrouping is exact for every q), so it can be simulated.
  models::SerialRobot RobotWithParameters(const Eigen::VectorXd& theta) const;

 private:
  models::SerialRobot robot_{"empty", {models::JointGeometry()}};
  models::BaseParameterSet base_;
  std::vector<std::string> names_;
  std::vector<int> base_index_, standard_index_;
};

// The stacked, pre-processed IDIM system.
struct IdimSystem {
  // rows × b (after decimation and selection); 0 × b when `streamed`.
  Eigen::MatrixXd x;
  Eigen::VectorXd y;             // rows
  RowBlocks blocks;              // row → joint (and decimated sample)
  int num_samples = 0;           // per joint after decimation, before selection
  double sample_rate_hz = 0.0;   // after decimation
  std::vector<int> kept_rows;    // rows of the decimated stack that were kept (all if no selection)
  std::string selection_report;  // empty without selection
  Eigen::MatrixXd q, qd, qdd;    // differentiated states at the input rate (Ns × n)
  // X is not held (options.stream_regressor, R = 1): its kept rows are formed from q, qd, qdd
  // (which must then be kept) 2 048 samples at a time, by IdimModel::Regressor exactly as the
  // held X (same values). Passes over X, each one regressor evaluation of the record: LS 4
  // (tall-skinny QR, residual, XᵀX and the rows of the HAC covariance), WLS 6 (per-joint QRs,
  // their residuals, weighted QR, residual, ZᵀX, the HAC's rows), IV fast path one per
  // instrument products (beside the instruments' rows, ProcessLikeSystemProducts) plus 2 (block
  // products, final residual). Use ForEachSystemPiece, SystemTimes or FormSystemRegressor
  // rather than x.
  bool streamed = false;
  int num_rows() const { return static_cast<int>(y.size()); }
  std::vector<double> nvr_position, nvr_velocity;  // IRW paths: ML NVR per joint
  IdimPreprocessingOptions options;
};

// Steps 1–4 above. q_measured, tau_measured: Ns × n (n = model.num_joints()). Returns false with
// a message for invalid options, too short records, an IRW fit failure or an empty selection.
bool BuildIdimSystem(const IdimModel& model, const Eigen::MatrixXd& q_measured,
                     const Eigen::MatrixXd& tau_measured, const IdimPreprocessingOptions& options,
                     IdimSystem* system, std::string* error);

// The same for a record with its own time stamps time_s (Ns, strictly increasing), as real logs
// have: their steps jitter. When every step is within 1e-6 of the mean step the record is
// uniform and this is BuildIdimSystem at the rate 1 / mean step. Otherwise step 1 runs the IRW
// smoothers on the time stamps (solvers/irw_irregular.h: the integrated Wiener process sampled
// at the stamps, NVR per joint by maximum likelihood; IRWSM1's acceleration by smoothing its
// velocity once more at the same stamps), so no resampling error enters; the conventional
// differentiator (a zero-phase Butterworth filter and central differences) and the decimation
// filter need a uniform record and are refused with a message, and options.sample_rate_hz is
// replaced by 1 / median step (IdimSystem::sample_rate_hz, used by the selection's guard band).
bool BuildIdimSystemAtTimes(const IdimModel& model, const Eigen::VectorXd& time_s,
                            const Eigen::MatrixXd& q_measured, const Eigen::MatrixXd& tau_measured,
                            const IdimPreprocessingOptions& options, IdimSystem* system,
                            std::string* error);

// Steps 2–4 for exact states (no differentiation): the instruments of IDIM-IV. x and tau_stacked
// have the rows of `system` (same decimation, same kept rows). tau may be empty (then only x);
// x may be null (then only tau_stacked, and q, qd, qdd are not used beyond their shape).
// Neither path forms the full-rate stack: without decimation the kept rows are computed
// directly into x; with decimation the regressor is formed 2 048 samples at a time and
// decimated block by block (data::BlockDecimator; see "Memory" above). An empty qdd (0 × 0)
// stands for MotionAccelerations(qd, system.options.sample_rate_hz), formed chunk by chunk where
// the regressor needs them (bitwise the same values; not held whole: Ns × n doubles, 48 MB for
// 10⁶ TX40 samples); so also in ProcessLikeSystemProducts and ForEachInstrumentPiece.
bool ProcessLikeSystem(const IdimModel& model, const IdimSystem& system, const Eigen::MatrixXd& q,
                       const Eigen::MatrixXd& qd, const Eigen::MatrixXd& qdd,
                       const Eigen::MatrixXd& tau, Eigen::MatrixXd* x, Eigen::VectorXd* tau_stacked,
                       std::string* error);

// X of the system in pieces (consecutive rows, every row once; pieces of one joint in increasing
// order): the held matrix in pieces of 4 096 rows, or a streamed X formed from the states. Fails
// when a streamed system's states were released.
bool ForEachSystemPiece(const IdimModel& model, const IdimSystem& system,
                        const HacRowConsumer& consume, std::string* error);
// X whole (a copy of the held one; a streamed one formed).
bool FormSystemRegressor(const IdimModel& model, const IdimSystem& system, Eigen::MatrixXd* x,
                         std::string* error);
// X θ (rows), held or streamed.
bool SystemTimes(const IdimModel& model, const IdimSystem& system, const Eigen::VectorXd& theta,
                 Eigen::VectorXd* x_theta, std::string* error);

// Accelerations consistent with a simulated motion: central differences of the exact
// velocities (Ns × n). The IDIM-IV instruments use these rather than a simulator's recorded
// q''(t_k): under Coulomb chatter the recorded sample-instant accelerations are not those of
// the motion (measured on the simulated TX40: the decimated recorded q5'' differs from the
// decimated second difference of q5 by 40–80 %, in the phases where motor 6 sticks).
Eigen::MatrixXd MotionAccelerations(const Eigen::MatrixXd& qd, double sample_rate_hz);

// A reference trajectory known only at uniform samples (a recorded reference of a simulation or
// a real robot): linear interpolation of q, q', q'' between samples t_k = k / rate.
class SampledTrajectory : public data::JointTrajectory {
 public:
  SampledTrajectory(Eigen::MatrixXd q, Eigen::MatrixXd qd, Eigen::MatrixXd qdd,
                    double sample_rate_hz);
  int num_joints() const override { return static_cast<int>(q_.cols()); }
  double duration() const override { return (q_.rows() - 1) / rate_; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override;

 private:
  Eigen::MatrixXd q_, qd_, qdd_;
  double rate_;
};

// The closed-loop auxiliary model of IDIM-IV. Simulations are cached by θ (exact match), so
// runs that start from the same θ^0 share their first simulation; thread-safe. A θ that another
// thread is simulating is waited for rather than simulated again (runs on parallel workers start
// together from θ^0).
class ClosedLoopAuxiliaryModel {
 public:
  // `reference` must outlive this object. simulator: gains, control rate, duration; its
  // encoder resolution, noise and bias are cleared (noise-free auxiliary model) and the velocity
  // feedback uses the exact state.
  // motion_only: each simulation records only time, q, q' and tau (what RunIdim uses;
  // RobotSimulatorOptions::recorded_series), 4 of its 12 series (the others are never formed:
  // 13 MB per simulation of the 7 s TX40 record).
  ClosedLoopAuxiliaryModel(const data::JointTrajectory* reference,
                           data::RobotSimulatorOptions simulator, int cache_capacity = 4,
                           bool motion_only = false);
  // Simulates the robot of model.RobotWithParameters(theta). Fails (no abort) when that robot's
  // mass matrix is not positive definite along the reference (checked every `check_stride`
  // samples) or when the simulation diverges.
  bool Simulate(const IdimModel& model, const Eigen::VectorXd& theta,
                std::shared_ptr<const data::RobotSimulation>* simulation, std::string* error);
  int num_simulations() const;
  // The instruments ProcessLikeSystem forms for a decimated system (R > 1) at θ, all
  // n·DecimatedLength(Ns, R) rows before the selection, formed once per (θ, R, sample rate) and
  // shared: runs on systems of the same decimation that start from the same θ^0 (tx40_study: the
  // three differentiators of a knowledge level) take their kept rows from them (bitwise the
  // rows ProcessLikeSystem forms). Only for a θ whose simulation is cached and instruments of at
  // most 64 MB (a few thousand rows per joint; the undecimated or long records form theirs per
  // system); otherwise *instruments is null. Kept as long as this object.
  bool SharedDecimatedInstruments(const IdimModel& model, const IdimSystem& system,
                                  const Eigen::VectorXd& theta,
                                  std::shared_ptr<const Eigen::MatrixXd>* instruments,
                                  std::string* error);

 private:
  // One simulation, no cache.
  bool SimulateUncached(const IdimModel& model, const Eigen::VectorXd& theta,
                        std::shared_ptr<const data::RobotSimulation>* simulation,
                        std::string* error) const;

  const data::JointTrajectory* reference_;
  data::RobotSimulatorOptions simulator_;
  int cache_capacity_;
  bool motion_only_;
  struct Pending;  // a simulation in progress on some thread
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  std::vector<std::pair<Eigen::VectorXd, std::shared_ptr<const data::RobotSimulation>>> cache_;
  std::vector<std::shared_ptr<Pending>> pending_;
  int num_simulations_ = 0;
  struct Shared;  // decimated instruments of a cached simulation
  std::vector<std::shared_ptr<Shared>> shared_;
};

enum class IdimEstimator { kLeastSquares, kWeightedLeastSquares, kInstrumentalVariables };
const char* IdimEstimatorName(IdimEstimator estimator);  // "LS", "WLS", "IV"

struct IdimRunOptions {
  IdimEstimator estimator = IdimEstimator::kLeastSquares;
  IvIterationOptions iv;
  WhitenessOptions whiteness;
  // IV: true = solvers::IterateInstrumentalVariables / SolveInstrumentalVariables (the common
  // pivoted-QR path, cond(X) recomputed every iteration); false = the same iteration with
  // SolveIdimIvNormalProducts (fast path for long records; tests show both agree). On an
  // undecimated system the fast path never holds the instruments: their products are formed
  // chunk by chunk from each simulation (ProcessLikeSystemProducts, SolveIdimIvFromProducts),
  // and the HAC covariance forms them once more, in pieces, from the last solve's simulation.
  bool iv_common_path = false;
  // Also the HAC covariance (solvers/residual_analysis.h: Newey–West sandwich, Andrews'
  // bandwidth when hac_lags = 0, α by the hac_bandwidth rule), valid under serially correlated
  // residuals; reported next to eq. 8 / σ²(XᵀX)^{-1}. Not on the common IV path.
  bool hac = true;
  int hac_lags = 0;
  HacBandwidth hac_bandwidth = HacBandwidth::kAr1;
};

// The IV estimate of SolveInstrumentalVariables (Brunot et al. (2018) eqs. 7–8, diagonal Λ per
// block) from the b × b products: θ = (ZᵀX)^{-1} Zᵀy by full-pivoting LU, Λ_jj = ||r_j||²/N_j ·
// N_t/(N_t − b), P = (Σ_j Z_jᵀZ_j / Λ_jj)^{-1}. O(N_t b²) in BLAS-3 products instead of a pivoted
// Householder QR of Z; condition_number is set to `condition_number_x` (cond(X) does not change
// between IV iterations, so the caller computes it once). Fails (success = false) when ZᵀX is
// singular.
LinearLeastSquaresSummary SolveIdimIvNormalProducts(const Eigen::MatrixXd& z,
                                                    const Eigen::MatrixXd& x,
                                                    const Eigen::VectorXd& y,
                                                    const RowBlocks& blocks,
                                                    double condition_number_x);

// The same estimate from the products of the instruments instead of the instruments, packed
// side by side in one b × (b + 1 + blocks · b) matrix [ZᵀX | Zᵀy | Z_1ᵀZ_1 | … | Z_mᵀZ_m]
// (Z_j: the rows of block j; every b × b block symmetric in full). RunIdim's fast IV path passes
// these through the iteration, so that the instruments (as large as X) are never held.
// SolveIdimIvNormalProducts is this with IdimIvProducts(z, …).
LinearLeastSquaresSummary SolveIdimIvFromProducts(const Eigen::MatrixXd& products,
                                                  const Eigen::MatrixXd& x,
                                                  const Eigen::VectorXd& y, const RowBlocks& blocks,
                                                  double condition_number_x);

// The packed products of instruments z held whole (z, x: equal shapes; y: their rows).
Eigen::MatrixXd IdimIvProducts(const Eigen::MatrixXd& z, const Eigen::MatrixXd& x,
                               const Eigen::VectorXd& y, const RowBlocks& blocks);

// The packed products of the instruments that ProcessLikeSystem would form from the exact
// states q, qd, qdd (Ns × n), with the system's x, y and blocks, accumulated piece by piece.
// Without decimation the instruments' kept rows are formed 2048 samples at a time, so memory is
// O(chunk · n · b) instead of the rows × b instruments (75 MB for the undecimated 7 s TX40
// record); with decimation the decimated instruments are formed first (as ProcessLikeSystem).
// For a streamed system (IdimSystem::streamed) X's rows are formed beside the instruments' from
// the system's states. Equal to IdimIvProducts of ProcessLikeSystem's instruments up to
// round-off.
bool ProcessLikeSystemProducts(const IdimModel& model, const IdimSystem& system,
                               const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                               const Eigen::MatrixXd& qdd, Eigen::MatrixXd* products,
                               std::string* error);

// The instruments of ProcessLikeSystem handed to `consume` piece by piece (the rows of each
// block in increasing order), as ProcessLikeSystemProducts forms them; for the HAC covariance
// of IDIM-IV (ComputeHacCovarianceFromRows) without holding them.
bool ForEachInstrumentPiece(const IdimModel& model, const IdimSystem& system,
                            const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                            const Eigen::MatrixXd& qdd, const HacRowConsumer& consume,
                            std::string* error);

struct IdimResult {
  bool success = false;   // an estimate exists (IV: also when it did not converge)
  bool converged = true;  // IV: both convergence tests met within the cap
  bool stalled = false;  // IV: stopped early, not converging (IvIterationOptions::stall_iterations)
  int iterations = 0;    // IV solves (0 for LS/WLS)
  std::string message;
  LinearLeastSquaresSummary fit;  // estimate, covariance, residual, cond(X), relative error
  WhitenessSummary whiteness;     // of fit.residual per joint
  HacCovariance hac;              // options.hac: covariance valid under correlated residuals
  std::vector<double> torque_change, parameter_change;  // IV history
  int simulations = 0;
  double time_s = 0.0;
};

// Runs one estimator on a built system. IV needs `auxiliary` and θ^0 (b; Brunot et al. (2018): CAD
// inertias, zero friction); LS/WLS ignore both. Returns false only when no estimate exists (message
// says why); a non-converged IV returns true with converged = false and the last estimate.
bool RunIdim(const IdimModel& model, const IdimSystem& system, const IdimRunOptions& options,
             const Eigen::VectorXd& theta0, ClosedLoopAuxiliaryModel* auxiliary, IdimResult* result,
             std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_IDIM_H_
