#include "dynid/solvers/idim.h"

#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include "dynid/data/signal.h"
#include "dynid/solvers/irw_irregular.h"
#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"
#include "dynid/solvers/parameter_covariance.h"

namespace dynid::solvers {
namespace {

constexpr data::StackOrder kOrder = data::StackOrder::kJointMajor;

Eigen::VectorXd StackColumns(const Eigen::MatrixXd& m) {
  Eigen::VectorXd v(m.size());
  for (Eigen::Index j = 0; j < m.cols(); ++j) v.segment(j * m.rows(), m.rows()) = m.col(j);
  return v;
}

// IRW smoothing of every column with its own ML NVR; consume(c, result) takes column c's
// position and derivative(s) as soon as they are smoothed. With one thread the columns go one at
// a time (each column's fit and smoothing are its own, so the values are those of all columns
// at once), so that one column's result is held rather than all of them (IRWSM2: position,
// velocity, acceleration and 3 states per sample, 288 MB for 6 columns of 10⁶ samples); with more
// threads, all columns in parallel.
bool SmoothColumnsMl(const Eigen::MatrixXd& signals, double dt, IrwModel irw_model, int num_threads,
                     std::vector<double>* nvr,
                     const std::function<void(int, const IrwSmootherResult&)>& consume,
                     std::string* error) {
  NvrFitOptions fit_options;
  fit_options.model = irw_model;
  fit_options.criterion = NvrCriterion::kMaximumLikelihood;
  const int columns = static_cast<int>(signals.cols());
  const int group = num_threads == 1 ? 1 : columns;
  nvr->clear();
  for (int first = 0; first < columns; first += group) {
    std::vector<std::string> names;
    for (int c = first; c < first + group; ++c) names.push_back("joint " + std::to_string(c + 1));
    std::vector<NvrFitSummary> fits;
    std::vector<IrwSmootherResult> results;
    Eigen::MatrixXd part;
    if (group != columns) part = signals.middleCols(first, group);
    if (!SmoothColumnsWithFittedNvr(group != columns ? part : signals, dt, fit_options, false,
                                    names, &fits, &results, error, num_threads)) {
      // A smoothing error names the column within the group.
      if (group == 1 && error->rfind("column 1: ", 0) == 0) {
        *error = "column " + std::to_string(first + 1) + error->substr(8);
      }
      return false;
    }
    for (int i = 0; i < group; ++i) {
      nvr->push_back(fits[i].nvr);
      consume(first + i, results[i]);
    }
  }
  return true;
}

// cond(X) from the eigenvalues of XᵀX: a BLAS-3 product instead of a Householder QR of a copy
// of X (the QR doubled the memory of a run on an undecimated system: 75 MB for the 7 s TX40
// record, and took 0.4 s). Its relative error is about eps · cond(X)², 1e-11 for the TX40
// systems (cond ≈ 200–400); beyond cond 1e4 it is not trusted and the QR is used.
double GramConditionNumber(const Eigen::MatrixXd& x) {
  const Eigen::Index b = x.cols();
  if (b == 0) return ConditionNumber(x);
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(b, b);
  gram.selfadjointView<Eigen::Lower>().rankUpdate(x.transpose());
  const Eigen::VectorXd eigenvalues =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly).eigenvalues();
  const double smallest = eigenvalues[0], largest = eigenvalues[b - 1];
  if (smallest > 0.0 && largest <= 1e8 * smallest) return std::sqrt(largest / smallest);
  return ConditionNumber(x);
}

}  // namespace

const char* IdimDifferentiatorName(IdimDifferentiator differentiator) {
  switch (differentiator) {
    case IdimDifferentiator::kConventional:
      return "conventional";
    case IdimDifferentiator::kIrw1:
      return "irwsm1";
    case IdimDifferentiator::kIrw2:
      return "irwsm2";
  }
  return "?";
}

const char* IdimEstimatorName(IdimEstimator estimator) {
  switch (estimator) {
    case IdimEstimator::kLeastSquares:
      return "LS";
    case IdimEstimator::kWeightedLeastSquares:
      return "WLS";
    case IdimEstimator::kInstrumentalVariables:
      return "IV";
  }
  return "?";
}

bool IdimPreprocessingOptions::IsValid(std::string* why) const {
  if (!(sample_rate_hz > 0.0) || !std::isfinite(sample_rate_hz)) {
    *why = "sample_rate_hz must be finite and > 0";
    return false;
  }
  if (decimation_factor < 1) {
    *why = "decimation_factor must be >= 1, got " + std::to_string(decimation_factor);
    return false;
  }
  if (differentiator == IdimDifferentiator::kConventional && position_cutoff_hz > 0.0) {
    if (butterworth_order < 1) {
      *why = "butterworth_order must be >= 1";
      return false;
    }
    if (!(position_cutoff_hz < 0.5 * sample_rate_hz)) {
      *why = "position cut-off " + std::to_string(position_cutoff_hz) +
             " Hz is not below the Nyquist frequency " + std::to_string(0.5 * sample_rate_hz) +
             " Hz";
      return false;
    }
  }
  if (num_threads < 0) {
    *why = "num_threads must be >= 0";
    return false;
  }
  if (!(rest_velocity >= 0.0) || !std::isfinite(rest_velocity)) {
    *why = "rest_velocity must be finite and >= 0";
    return false;
  }
  if (select_samples && !selection.IsValid(why)) return false;
  if (selection_guard_rows < 0 || !(selection_guard_s >= 0.0)) {
    *why = "selection_guard_rows and selection_guard_s must be >= 0";
    return false;
  }
  return true;
}

// ---- IdimModel ----

bool IdimModel::Create(const models::SerialRobot& robot, const models::BaseParameterSet& base,
                       const std::vector<std::string>& names, IdimModel* model,
                       std::string* error) {
  CHECK(model != nullptr);
  CHECK_EQ(base.grouping.cols(), robot.num_parameters())
      << "base grouping: expected " << robot.num_parameters() << " columns";
  model->robot_ = robot;
  model->base_ = base;
  model->names_.clear();
  model->base_index_.clear();
  model->standard_index_.clear();
  const std::vector<std::string>& wanted = names.empty() ? base.names : names;
  for (const std::string& name : wanted) {
    const int index = base.Index(name);
    if (index < 0) {
      *error = "parameter '" + name + "' is not a base parameter of " + robot.name();
      return false;
    }
    if (std::find(model->names_.begin(), model->names_.end(), name) != model->names_.end()) {
      *error = "parameter '" + name + "' listed twice";
      return false;
    }
    model->names_.push_back(name);
    model->base_index_.push_back(index);
    model->standard_index_.push_back(base.kept[index]);
  }
  return true;
}

bool IdimModel::IsFrictionOrOffset(int i) const {
  switch (robot_.parameter_info()[standard_index_[i]].kind) {
    case models::ParameterKind::kFv:
    case models::ParameterKind::kFc:
    case models::ParameterKind::kFs:
    case models::ParameterKind::kOffset:
    case models::ParameterKind::kCoupledFv:
    case models::ParameterKind::kCoupledFc:
      return true;
    default:
      return false;
  }
}

void IdimModel::Regressor(const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                          const Eigen::MatrixXd& qdd, Eigen::MatrixXd* x,
                          const std::vector<int>* rows) const {
  const int n = num_joints();
  CHECK_EQ(q.cols(), n) << "q: expected " << n << " columns";
  CHECK(qd.rows() == q.rows() && qdd.rows() == q.rows() && qd.cols() == n && qdd.cols() == n)
      << "q, qd, qdd: expected equal shapes";
  const Eigen::Index ns = q.rows();
  const int b = num_parameters();
  if (rows != nullptr) {
    CHECK(std::is_sorted(rows->begin(), rows->end()) &&
          (rows->empty() || (rows->front() >= 0 && rows->back() < n * ns)))
        << "Regressor: rows must be increasing stacked-row indices";
  }
  x->resize(rows != nullptr ? static_cast<Eigen::Index>(rows->size()) : n * ns, b);
  // Chunks keep the (n·chunk × p) standard regressor small; one workspace serves them all.
  constexpr Eigen::Index kChunk = 2048;
  Eigen::MatrixXd chunk_x;
  models::SerialRobotData data(robot_);
  for (Eigen::Index start = 0; start < ns; start += kChunk) {
    const Eigen::Index m = std::min(kChunk, ns - start);
    robot_.StackedRegressor(q.middleRows(start, m), qd.middleRows(start, m),
                            qdd.middleRows(start, m), &data, &chunk_x);
    for (int j = 0; j < n; ++j) {
      if (rows == nullptr) {
        for (int i = 0; i < b; ++i) {
          x->col(i).segment(j * ns + start, m) = chunk_x.col(standard_index_[i]).segment(j * m, m);
        }
        continue;
      }
      // The selected rows of joint j within this chunk: stacked rows j·Ns + [start, start + m).
      const auto first = std::lower_bound(rows->begin(), rows->end(), j * ns + start);
      const auto last = std::lower_bound(first, rows->end(), j * ns + start + m);
      const Eigen::Index out = first - rows->begin();
      for (int i = 0; i < b; ++i) {
        const double* in = chunk_x.col(standard_index_[i]).data() + j * m - (j * ns + start);
        double* column = x->col(i).data() + out;
        for (auto row = first; row != last; ++row) *column++ = in[*row];
      }
    }
  }
}

Eigen::VectorXd IdimModel::FromStandard(const Eigen::VectorXd& theta_standard) const {
  const Eigen::VectorXd theta_base = base_.Reduce(theta_standard);
  Eigen::VectorXd theta(num_parameters());
  for (int i = 0; i < num_parameters(); ++i) theta[i] = theta_base[base_index_[i]];
  return theta;
}

models::SerialRobot IdimModel::RobotWithParameters(const Eigen::VectorXd& theta) const {
  CHECK_EQ(theta.size(), num_parameters()) << "theta: expected " << num_parameters();
  Eigen::VectorXd theta_standard = Eigen::VectorXd::Zero(robot_.num_parameters());
  for (int i = 0; i < num_parameters(); ++i) theta_standard[standard_index_[i]] = theta[i];
  models::SerialRobot robot = robot_;
  robot.SetStandardParameters(theta_standard);
  return robot;
}

// ---- Pre-processing ----

Eigen::MatrixXd MotionAccelerations(const Eigen::MatrixXd& qd, double sample_rate_hz) {
  Eigen::MatrixXd qdd(qd.rows(), qd.cols());
  for (Eigen::Index j = 0; j < qd.cols(); ++j) {
    qdd.col(j) = data::CentralDifference(qd.col(j), 1.0 / sample_rate_hz);
  }
  return qdd;
}

namespace {

// Rows [start, start + m) of MotionAccelerations(qd, sample_rate_hz), by data::CentralDifference's
// formula at each row (bitwise its values), so that the accelerations of a simulation need not
// be held whole (Ns × n: 48 MB for 10⁶ samples of the TX40).
void MotionAccelerationRows(const Eigen::MatrixXd& qd, double sample_rate_hz, Eigen::Index start,
                            Eigen::Index m, Eigen::MatrixXd* qdd) {
  const double dt = 1.0 / sample_rate_hz;
  const Eigen::Index ns = qd.rows();
  CHECK_GE(ns, 2) << "motion accelerations: expected >= 2 samples";
  qdd->resize(m, qd.cols());
  for (Eigen::Index j = 0; j < qd.cols(); ++j) {
    for (Eigen::Index k = start; k < start + m; ++k) {
      (*qdd)(k - start, j) = k == 0        ? (qd(1, j) - qd(0, j)) / dt
                             : k == ns - 1 ? (qd(ns - 1, j) - qd(ns - 2, j)) / dt
                                           : (qd(k + 1, j) - qd(k - 1, j)) / (2.0 * dt);
    }
  }
}

// Steps 2–3 for a decimated system: X decimated by R (n·DecimatedLength(Ns, R) × b, joint-major)
// without the full-rate stack (n·Ns × b: 92 MB for the 7 s TX40 record, 2.6 GB for 10⁶
// samples). The regressor is formed 2048 samples at a time, each (joint, column) series fed to a
// data::BlockDecimator, whose forward pass is Decimate's and whose backward pass runs over a
// buffer of max(3 · 210 R, 65 536) samples (the filter's decay); equal to data::DecimateStacked
// of the full stack up to round-off, bitwise when the record fits one buffer. Forming the block's
// columns only (blocks of columns, each decimated whole) evaluated the regressor once per block
// instead. An empty qdd: the motion accelerations of qd at motion_rate_hz, chunk by chunk.
bool DecimatedRegressor(const IdimModel& model, const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                        const Eigen::MatrixXd& qdd, int factor, int num_threads,
                        const std::vector<int>* kept_rows, Eigen::MatrixXd* x, std::string* error,
                        double motion_rate_hz = 0.0) {
  const int n = model.num_joints();
  const int b = model.num_parameters();
  const int ns = static_cast<int>(q.rows());
  const bool motion = qdd.size() == 0;
  CHECK(q.cols() == n && qd.rows() == ns && qd.cols() == n &&
        (motion ? motion_rate_hz > 0.0 : qdd.rows() == ns && qdd.cols() == n))
      << "q, qd, qdd: expected equal shapes with " << n << " columns";
  data::BlockDecimator decimator;
  if (!decimator.Init(n * b, ns, factor, num_threads, error)) return false;
  // The decimated rows go straight into x (its kept rows only), which is never held twice.
  decimator.SetOutput(x, n, kept_rows);
  constexpr int kChunk = 2048;
  Eigen::MatrixXd chunk_x, block, chunk_qdd;
  models::SerialRobotData data(model.robot());
  for (int start = 0; start < ns; start += kChunk) {
    // The first block (2048 samples or the whole record, which Init checked against the
    // filter's minimum length) holds the samples of the odd extension at the start.
    const int m = std::min(kChunk, ns - start);
    if (motion) {
      MotionAccelerationRows(qd, motion_rate_hz, start, m, &chunk_qdd);
    } else {
      chunk_qdd = qdd.middleRows(start, m);
    }
    model.robot().StackedRegressor(q.middleRows(start, m), qd.middleRows(start, m), chunk_qdd,
                                   &data, &chunk_x);
    // Series i·n + j = (column i, joint j): rows j·nd.. of x's column i. Each series is
    // filtered on its own, so the order does not change the values.
    block.resize(m, static_cast<Eigen::Index>(n) * b);
    for (int i = 0; i < b; ++i) {
      for (int j = 0; j < n; ++j) {
        block.col(i * n + j) = chunk_x.col(model.StandardIndex(i)).segment(j * m, m);
      }
    }
    decimator.Feed(block);
  }
  return true;
}

// Steps 2–4 shared by measured data and instruments: regressor, decimation, row selection
// (kept_rows: rows of the decimated stack; nullptr: all).
bool StackDecimate(const IdimModel& model, const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                   const Eigen::MatrixXd& qdd, const Eigen::MatrixXd& tau, int factor,
                   int num_threads, const std::vector<int>* kept_rows, Eigen::MatrixXd* x,
                   Eigen::VectorXd* y, std::string* error) {
  const int n = model.num_joints();
  if (factor == 1) {
    model.Regressor(q, qd, qdd, x, kept_rows);
  } else if (!DecimatedRegressor(model, q, qd, qdd, factor, num_threads, kept_rows, x, error)) {
    return false;
  }
  if (tau.size() > 0) {
    Eigen::VectorXd y_all = StackColumns(tau);
    if (factor > 1) {
      Eigen::VectorXd y_decimated;
      if (!data::DecimateStacked(y_all, n, kOrder, factor, num_threads, &y_decimated, error)) {
        return false;
      }
      y_all = std::move(y_decimated);
    }
    *y = kept_rows == nullptr ? std::move(y_all) : data::KeepRows(y_all, *kept_rows);
  }
  return true;
}

bool IsMeasured(const IdimPreprocessingOptions& options, int joint) {
  return options.measured_joints.empty() || options.measured_joints[joint];
}

// Sizes, length and finiteness of a record (shared by both entry points).
bool CheckRecord(const IdimModel& model, const Eigen::MatrixXd& q_measured,
                 const Eigen::MatrixXd& tau_measured, const IdimPreprocessingOptions& options,
                 std::string* error) {
  const int n = model.num_joints();
  if (!options.IsValid(error)) return false;
  if (q_measured.cols() != n || tau_measured.cols() != n) {
    *error = "expected " + std::to_string(n) + " position and torque columns, got " +
             std::to_string(q_measured.cols()) + " and " + std::to_string(tau_measured.cols());
    return false;
  }
  if (q_measured.rows() != tau_measured.rows()) {
    *error = "positions have " + std::to_string(q_measured.rows()) + " samples, torques " +
             std::to_string(tau_measured.rows());
    return false;
  }
  if (!options.measured_joints.empty() && static_cast<int>(options.measured_joints.size()) != n) {
    *error = "measured_joints has " + std::to_string(options.measured_joints.size()) +
             " flags for " + std::to_string(n) + " joints";
    return false;
  }
  const int ns = static_cast<int>(q_measured.rows());
  const int factor = options.decimation_factor;
  // Enough samples for the filters and for more rows than parameters after decimation.
  const int min_samples = std::max(64, 30 * factor);
  if (ns < min_samples) {
    *error = std::to_string(ns) + " samples are too few for decimation by " +
             std::to_string(factor) + " (need at least " + std::to_string(min_samples) + ")";
    return false;
  }
  bool finite = q_measured.allFinite();
  for (int j = 0; j < n; ++j)
    finite = finite && (!IsMeasured(options, j) || tau_measured.col(j).allFinite());
  if (!finite) {
    *error = "positions or measured torques contain NaN or Inf";
    return false;
  }
  return true;
}

// Steps 2–4 on the differentiated states system->q, qd, qdd.
bool AssembleSystem(const IdimModel& model, const Eigen::MatrixXd& tau_in,
                    const IdimPreprocessingOptions& options, IdimSystem* system,
                    std::string* error) {
  const int n = model.num_joints();
  const int ns = static_cast<int>(system->q.rows());
  const int factor = options.decimation_factor;
  if (options.rest_velocity > 0.0) {
    system->qd = (system->qd.array().abs() < options.rest_velocity).select(0.0, system->qd);
  }
  const Eigen::MatrixXd& q = system->q;
  const Eigen::MatrixXd& qd = system->qd;
  const Eigen::MatrixXd& qdd = system->qdd;
  // Unmeasured torque columns may hold NaN: zero them (their rows are dropped below).
  Eigen::MatrixXd tau_zeroed;
  if (!options.measured_joints.empty()) {
    tau_zeroed = tau_in;
    for (int j = 0; j < n; ++j) {
      if (!IsMeasured(options, j)) tau_zeroed.col(j).setZero();
    }
  }
  const Eigen::MatrixXd& tau_measured = options.measured_joints.empty() ? tau_in : tau_zeroed;

  system->num_samples = data::DecimatedLength(ns, factor);
  system->sample_rate_hz = options.sample_rate_hz / factor;
  RowBlocks blocks = RowBlocks::Stacked(kOrder, n, system->num_samples);
  // Rows of the decimated stack. The selection (step 4) needs only the velocities, so it comes
  // first and steps 2–3 form just the kept rows below.
  const int stacked_rows = n * system->num_samples;
  bool all_rows = false;

  // 4. Sample selection on the decimated velocities.
  system->selection_report.clear();
  if (options.select_samples) {
    Eigen::MatrixXd qd_decimated;
    if (factor == 1) {
      qd_decimated = qd;
    } else if (!data::DecimateColumns(qd, factor, options.num_threads, &qd_decimated, error)) {
      return false;
    }
    data::SampleSelection selection;
    if (!data::SelectSamples(qd_decimated, kOrder, options.selection, &selection, error)) {
      return false;
    }
    // A coupled motor's Coulomb term sign(cᵀq') has the same standstill problem on every
    // joint it acts on, so those rows are also dropped where |cᵀq'| is below the threshold.
    std::vector<int> kept;
    kept.reserve(selection.kept_rows.size());
    const Eigen::VectorXd& threshold = options.selection.velocity_threshold;
    int coupled_dropped = 0;
    int unmeasured_dropped = 0;
    for (int row : selection.kept_rows) {
      const int j = row / system->num_samples;
      const int k = row % system->num_samples;
      if (!IsMeasured(options, j)) {
        ++unmeasured_dropped;
        continue;
      }
      bool drop = false;
      for (const models::CoupledMotor& motor : model.robot().coupled_motors()) {
        const double limit = threshold.size() == 1 ? threshold[0] : threshold[j];
        if (motor.coupling[j] != 0.0 && std::abs(qd_decimated.row(k).dot(motor.coupling)) < limit) {
          drop = true;
        }
      }
      if (drop) {
        ++coupled_dropped;
      } else {
        kept.push_back(row);
      }
    }
    const size_t kept_before_guard = kept.size();
    int guard_dropped = 0;
    const int guard = std::max(
        options.selection_guard_rows,
        static_cast<int>(std::ceil(options.selection_guard_s * system->sample_rate_hz - 1e-9)));
    if (guard > 0) {
      const int ns_d = system->num_samples;
      std::vector<char> is_kept(static_cast<size_t>(n) * ns_d, 0);
      for (int row : kept) is_kept[row] = 1;
      // Per joint: distance to the nearest excluded sample, by two passes.
      std::vector<int> distance(ns_d);
      std::vector<int> guarded;
      guarded.reserve(kept.size());
      for (int j = 0; j < n; ++j) {
        const char* k_j = is_kept.data() + static_cast<size_t>(j) * ns_d;
        int last = -ns_d - guard - 1;
        for (int k = 0; k < ns_d; ++k) {
          if (!k_j[k]) last = k;
          distance[k] = k - last;
        }
        last = 2 * ns_d + guard + 1;
        for (int k = ns_d - 1; k >= 0; --k) {
          if (!k_j[k]) last = k;
          distance[k] = std::min(distance[k], last - k);
        }
        for (int k = 0; k < ns_d; ++k) {
          if (!k_j[k]) continue;
          if (distance[k] > guard) {
            guarded.push_back(j * ns_d + k);
          } else {
            ++guard_dropped;
          }
        }
      }
      kept = std::move(guarded);
    }
    if (kept.size() <= static_cast<size_t>(model.num_parameters())) {
      *error = "sample selection leaves " + std::to_string(kept.size()) + " rows for " +
               std::to_string(model.num_parameters()) + " parameters";
      return false;
    }
    system->kept_rows = kept;
    system->selection_report = selection.report;
    if (unmeasured_dropped > 0) {
      system->selection_report += "\nunmeasured joints: their " +
                                  std::to_string(unmeasured_dropped) + " selected rows left out";
    }
    if (!model.robot().coupled_motors().empty()) {
      system->selection_report += "\ncoupled motors: " + std::to_string(coupled_dropped) +
                                  " further rows of the coupled joints excluded where the motor "
                                  "velocity |c'q'| is below the threshold; " +
                                  std::to_string(kept_before_guard) + " of " +
                                  std::to_string(stacked_rows) + " rows used";
    }
    if (guard > 0) {
      system->selection_report += "\nguard band: " + std::to_string(guard_dropped) +
                                  " further rows within " + std::to_string(guard) +
                                  " decimated rows of an excluded row of the same joint "
                                  "excluded; " +
                                  std::to_string(kept.size()) + " of " +
                                  std::to_string(stacked_rows) + " rows used";
    }
    system->blocks = blocks.Subset(kept);
  } else if (!options.measured_joints.empty()) {
    std::vector<int> kept;
    for (int r = 0; r < stacked_rows; ++r) {
      if (IsMeasured(options, r / system->num_samples)) kept.push_back(r);
    }
    system->kept_rows = kept;
    system->blocks = blocks.Subset(kept);
  } else {
    all_rows = true;
    system->kept_rows.resize(stacked_rows);
    for (int r = 0; r < stacked_rows; ++r) system->kept_rows[r] = r;
    system->blocks = std::move(blocks);
  }
  if (static_cast<int>(system->kept_rows.size()) <= model.num_parameters()) {
    *error = std::to_string(system->kept_rows.size()) + " rows remain for " +
             std::to_string(model.num_parameters()) + " parameters";
    return false;
  }

  // 2–3. Observation matrix, parallel decimation, kept rows. Without decimation the kept rows are
  // computed directly, so the full-rate stack (n·Ns × b, 92 MB for the 7 s TX40 record) is never
  // formed; with decimation every full-rate row enters the filter.
  system->streamed = factor == 1 && options.stream_regressor;
  if (factor == 1) {
    if (system->streamed) {
      system->x.resize(0, model.num_parameters());  // formed piece by piece from q, qd, qdd
    } else {
      model.Regressor(q, qd, qdd, &system->x, all_rows ? nullptr : &system->kept_rows);
    }
    Eigen::VectorXd y = StackColumns(tau_measured);
    system->y = all_rows ? std::move(y) : data::KeepRows(y, system->kept_rows);
    return true;
  }
  // The kept rows are decimated straight into X (never the whole decimated stack beside them).
  return StackDecimate(model, q, qd, qdd, tau_measured, factor, options.num_threads,
                       all_rows ? nullptr : &system->kept_rows, &system->x, &system->y, error);
}

// Step 1 on a uniform record.
bool DifferentiateUniform(const Eigen::MatrixXd& q_measured,
                          const IdimPreprocessingOptions& options, IdimSystem* system,
                          std::string* error) {
  const int n = static_cast<int>(q_measured.cols());
  const int ns = static_cast<int>(q_measured.rows());
  const double dt = 1.0 / options.sample_rate_hz;
  system->options = options;
  system->nvr_position.clear();
  system->nvr_velocity.clear();
  Eigen::MatrixXd& q = system->q;
  Eigen::MatrixXd& qd = system->qd;
  Eigen::MatrixXd& qdd = system->qdd;
  q.resize(ns, n);
  qd.resize(ns, n);
  qdd.resize(ns, n);

  // 1. Derivatives.
  switch (options.differentiator) {
    case IdimDifferentiator::kConventional: {
      if (options.position_cutoff_hz > 0.0) {
        data::SecondOrderSections sos;
        if (!data::DesignButterworthLowPass(options.butterworth_order, options.position_cutoff_hz,
                                            options.sample_rate_hz, &sos, error) ||
            !data::FiltFiltColumns(sos, q_measured, options.num_threads, &q, error)) {
          return false;
        }
      } else {
        q = q_measured;
      }
      for (int j = 0; j < n; ++j) {
        qd.col(j) = data::CentralDifference(q.col(j), dt);
        qdd.col(j) = data::CentralSecondDifference(q.col(j), dt);
      }
      break;
    }
    case IdimDifferentiator::kIrw1: {
      if (!SmoothColumnsMl(
              q_measured, dt, IrwModel::kIrw1, options.num_threads, &system->nvr_position,
              [&](int j, const IrwSmootherResult& result) {
                q.col(j) = result.position;
                qd.col(j) = result.velocity;
              },
              error)) {
        return false;
      }
      // Applying IRWSM1 a second time, to the velocity (Brunot et al. (2018) §3.4).
      if (!SmoothColumnsMl(
              qd, dt, IrwModel::kIrw1, options.num_threads, &system->nvr_velocity,
              [&](int j, const IrwSmootherResult& result) { qdd.col(j) = result.velocity; },
              error)) {
        return false;
      }
      break;
    }
    case IdimDifferentiator::kIrw2: {
      if (!SmoothColumnsMl(
              q_measured, dt, IrwModel::kIrw2, options.num_threads, &system->nvr_position,
              [&](int j, const IrwSmootherResult& result) {
                q.col(j) = result.position;
                qd.col(j) = result.velocity;
                qdd.col(j) = result.acceleration;
              },
              error)) {
        return false;
      }
      break;
    }
  }

  return true;
}

}  // namespace

bool BuildIdimSystem(const IdimModel& model, const Eigen::MatrixXd& q_measured,
                     const Eigen::MatrixXd& tau_measured, const IdimPreprocessingOptions& options,
                     IdimSystem* system, std::string* error) {
  CHECK(system != nullptr);
  CHECK(error != nullptr);
  if (!CheckRecord(model, q_measured, tau_measured, options, error)) return false;
  system->options = options;
  return DifferentiateUniform(q_measured, options, system, error) &&
         AssembleSystem(model, tau_measured, options, system, error);
}

bool BuildIdimSystemAtTimes(const IdimModel& model, const Eigen::VectorXd& time_s,
                            const Eigen::MatrixXd& q_measured, const Eigen::MatrixXd& tau_measured,
                            const IdimPreprocessingOptions& options, IdimSystem* system,
                            std::string* error) {
  CHECK(system != nullptr);
  CHECK(error != nullptr);
  const Eigen::Index ns = q_measured.rows();
  if (time_s.size() != ns) {
    *error =
        "expected " + std::to_string(ns) + " time stamps, got " + std::to_string(time_s.size());
    return false;
  }
  if (ns < 2 || !time_s.allFinite()) {
    *error = "time stamps: need at least 2 finite values";
    return false;
  }
  for (Eigen::Index k = 1; k < ns; ++k) {
    if (!(time_s[k] > time_s[k - 1])) {
      *error = "time stamps not strictly increasing at sample " + std::to_string(k + 1);
      return false;
    }
  }
  const Eigen::VectorXd steps = time_s.tail(ns - 1) - time_s.head(ns - 1);
  const double mean_step = (time_s[ns - 1] - time_s[0]) / static_cast<double>(ns - 1);
  IdimPreprocessingOptions adjusted = options;
  if ((steps.array() - mean_step).abs().maxCoeff() <= 1e-6 * mean_step) {
    adjusted.sample_rate_hz = 1.0 / mean_step;
    return BuildIdimSystem(model, q_measured, tau_measured, adjusted, system, error);
  }
  std::vector<double> sorted(steps.data(), steps.data() + steps.size());
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  adjusted.sample_rate_hz = 1.0 / sorted[sorted.size() / 2];
  if (options.differentiator == IdimDifferentiator::kConventional) {
    *error = "the record's time steps are not uniform (" + std::to_string(steps.minCoeff()) +
             " to " + std::to_string(steps.maxCoeff()) +
             " s): the conventional differentiator needs a uniform record; use irwsm1 or irwsm2";
    return false;
  }
  if (options.decimation_factor != 1) {
    *error = "the record's time steps are not uniform: decimation (factor " +
             std::to_string(options.decimation_factor) + ") needs a uniform record; use 1";
    return false;
  }
  if (!CheckRecord(model, q_measured, tau_measured, adjusted, error)) return false;
  system->options = adjusted;
  system->nvr_position.clear();
  system->nvr_velocity.clear();
  const int n = model.num_joints();
  system->q.resize(ns, n);
  system->qd.resize(ns, n);
  system->qdd.resize(ns, n);
  NvrFitOptions fit_options;
  fit_options.criterion = NvrCriterion::kMaximumLikelihood;
  fit_options.model =
      options.differentiator == IdimDifferentiator::kIrw2 ? IrwModel::kIrw2 : IrwModel::kIrw1;
  std::vector<std::string> names;
  for (int j = 0; j < n; ++j) names.push_back("joint " + std::to_string(j + 1));
  std::vector<NvrFitSummary> fits;
  std::vector<IrwSmootherResult> results;
  if (!SmoothColumnsAtTimesWithFittedNvr(time_s, q_measured, fit_options, false, names, &fits,
                                         &results, error, options.num_threads)) {
    return false;
  }
  for (int j = 0; j < n; ++j) {
    system->nvr_position.push_back(fits[j].nvr);
    system->q.col(j) = results[j].position;
    system->qd.col(j) = results[j].velocity;
    if (fit_options.model == IrwModel::kIrw2) system->qdd.col(j) = results[j].acceleration;
  }
  if (fit_options.model == IrwModel::kIrw1) {
    // Brunot et al. (2018) §3.4: IRWSM1 applied a second time, to the velocity.
    if (!SmoothColumnsAtTimesWithFittedNvr(time_s, system->qd, fit_options, false, names, &fits,
                                           &results, error, options.num_threads)) {
      return false;
    }
    for (int j = 0; j < n; ++j) {
      system->nvr_velocity.push_back(fits[j].nvr);
      system->qdd.col(j) = results[j].velocity;
    }
  }
  return AssembleSystem(model, tau_measured, adjusted, system, error);
}

namespace {

// A simulated record of ns samples decimates to the system's length.
bool DecimatesLikeSystem(const IdimSystem& system, Eigen::Index ns, std::string* error) {
  if (data::DecimatedLength(static_cast<int>(ns), system.options.decimation_factor) !=
      system.num_samples) {
    *error = "the simulated record has " + std::to_string(ns) +
             " samples, which does not decimate to the measured system's " +
             std::to_string(system.num_samples);
    return false;
  }
  return true;
}

}  // namespace

bool ProcessLikeSystem(const IdimModel& model, const IdimSystem& system, const Eigen::MatrixXd& q,
                       const Eigen::MatrixXd& qd, const Eigen::MatrixXd& qdd,
                       const Eigen::MatrixXd& tau, Eigen::MatrixXd* x, Eigen::VectorXd* tau_stacked,
                       std::string* error) {
  const int factor = system.options.decimation_factor;
  const int n = model.num_joints();
  if (!DecimatesLikeSystem(system, q.rows(), error)) return false;
  const std::vector<int>& rows = system.kept_rows;
  // n·(decimated length) rows before the selection (checked above).
  const bool all =
      static_cast<Eigen::Index>(rows.size()) == static_cast<Eigen::Index>(n) * system.num_samples;
  if (x == nullptr) {
    // The torques only.
  } else if (factor == 1) {
    // Without decimation the kept rows are computed directly into x (its storage is reused when
    // it already has the shape): the full-rate stack is never formed.
    model.Regressor(q, qd,
                    qdd.size() == 0 ? MotionAccelerations(qd, system.options.sample_rate_hz) : qdd,
                    x, all ? nullptr : &rows);
  } else {
    // Decimated block by block (DecimatedRegressor): the full-rate regressor is never formed,
    // and the kept rows go straight into x (its storage reused when it already has the shape).
    if (!DecimatedRegressor(model, q, qd, qdd, factor, system.options.num_threads,
                            all ? nullptr : &rows, x, error, system.options.sample_rate_hz)) {
      return false;
    }
  }
  if (tau_stacked != nullptr) {
    if (tau.size() == 0) {
      tau_stacked->resize(0);
    } else {
      Eigen::VectorXd y_all = StackColumns(tau);
      if (factor > 1) {
        Eigen::VectorXd y_decimated;
        if (!data::DecimateStacked(y_all, n, kOrder, factor, system.options.num_threads,
                                   &y_decimated, error)) {
          return false;
        }
        y_all = std::move(y_decimated);
      }
      *tau_stacked = all ? std::move(y_all) : data::KeepRows(y_all, rows);
    }
  }
  return true;
}

namespace {

// Piece consumer of the rows of two regressors at the same system rows: z from the states
// (q, qd, qdd), x from the system's own states (empty without them).
using PairConsumer =
    std::function<void(Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& z,
                       const Eigen::Ref<const Eigen::MatrixXd>& x)>;

// Without decimation, chunks of samples: the kept rows of each joint within a chunk are
// consecutive rows of the system (joint-major), formed by IdimModel::Regressor from the chunk's
// states alone and handed over joint by joint. With `with_system_rows` the same rows of the
// system's own regressor (its states q, qd, qdd) come along: a streamed X beside the instruments.
void ForEachKeptRowPiece(const IdimModel& model, const IdimSystem& system, const Eigen::MatrixXd& q,
                         const Eigen::MatrixXd& qd, const Eigen::MatrixXd& qdd,
                         bool with_system_rows, const PairConsumer& consume) {
  const int n = model.num_joints();
  const Eigen::Index ns = q.rows();
  const std::vector<int>& kept = system.kept_rows;
  constexpr Eigen::Index kChunk = 2048;
  Eigen::MatrixXd q_chunk, qd_chunk, qdd_chunk, z_chunk, x_chunk;
  std::vector<int> chunk_rows;
  std::vector<Eigen::Index> first(n + 1);
  for (Eigen::Index start = 0; start < ns; start += kChunk) {
    const Eigen::Index m = std::min(kChunk, ns - start);
    chunk_rows.clear();
    for (int j = 0; j < n; ++j) {
      const auto begin = std::lower_bound(kept.begin(), kept.end(), j * ns + start);
      const auto end = std::lower_bound(begin, kept.end(), j * ns + start + m);
      first[j] = begin - kept.begin();
      for (auto row = begin; row != end; ++row) {
        chunk_rows.push_back(static_cast<int>(*row - (j * ns + start) + j * m));
      }
    }
    if (chunk_rows.empty()) continue;
    q_chunk = q.middleRows(start, m);
    qd_chunk = qd.middleRows(start, m);
    if (qdd.size() == 0) {  // the motion accelerations of qd
      MotionAccelerationRows(qd, system.options.sample_rate_hz, start, m, &qdd_chunk);
    } else {
      qdd_chunk = qdd.middleRows(start, m);
    }
    model.Regressor(q_chunk, qd_chunk, qdd_chunk, &z_chunk, &chunk_rows);
    if (with_system_rows) {
      q_chunk = system.q.middleRows(start, m);
      qd_chunk = system.qd.middleRows(start, m);
      qdd_chunk = system.qdd.middleRows(start, m);
      model.Regressor(q_chunk, qd_chunk, qdd_chunk, &x_chunk, &chunk_rows);
    }
    Eigen::Index offset = 0;
    for (int j = 0; j < n; ++j) {
      const auto end = std::lower_bound(kept.begin() + first[j], kept.end(), j * ns + start + m);
      const Eigen::Index count = (end - kept.begin()) - first[j];
      if (count > 0) {
        consume(first[j], z_chunk.middleRows(offset, count),
                with_system_rows ? x_chunk.middleRows(offset, count) : x_chunk.topRows(0));
      }
      offset += count;
    }
  }
}

}  // namespace

bool ForEachInstrumentPiece(const IdimModel& model, const IdimSystem& system,
                            const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                            const Eigen::MatrixXd& qdd, const HacRowConsumer& consume,
                            std::string* error) {
  if (!DecimatesLikeSystem(system, q.rows(), error)) return false;
  if (system.options.decimation_factor > 1) {
    // The decimated instruments are a few thousand rows: formed whole, handed over in pieces.
    Eigen::MatrixXd z;
    if (!ProcessLikeSystem(model, system, q, qd, qdd, Eigen::MatrixXd(), &z, nullptr, error)) {
      return false;
    }
    constexpr Eigen::Index kPiece = 4096;
    for (Eigen::Index start = 0; start < z.rows(); start += kPiece) {
      consume(start, z.middleRows(start, std::min(kPiece, z.rows() - start)));
    }
    return true;
  }
  ForEachKeptRowPiece(model, system, q, qd, qdd, /*with_system_rows=*/false,
                      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& z,
                          const Eigen::Ref<const Eigen::MatrixXd>&) { consume(first_row, z); });
  return true;
}

bool ForEachSystemPiece(const IdimModel& model, const IdimSystem& system,
                        const HacRowConsumer& consume, std::string* error) {
  if (!system.streamed) {
    constexpr Eigen::Index kPiece = 4096;
    for (Eigen::Index start = 0; start < system.x.rows(); start += kPiece) {
      consume(start, system.x.middleRows(start, std::min(kPiece, system.x.rows() - start)));
    }
    return true;
  }
  if (system.q.rows() == 0) {
    *error = "the system's regressor is streamed but its states were released";
    return false;
  }
  ForEachKeptRowPiece(model, system, system.q, system.qd, system.qdd, /*with_system_rows=*/false,
                      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& x,
                          const Eigen::Ref<const Eigen::MatrixXd>&) { consume(first_row, x); });
  return true;
}

bool FormSystemRegressor(const IdimModel& model, const IdimSystem& system, Eigen::MatrixXd* x,
                         std::string* error) {
  CHECK(x != nullptr);
  if (!system.streamed) {
    *x = system.x;
    return true;
  }
  x->resize(system.y.size(), model.num_parameters());
  return ForEachSystemPiece(
      model, system,
      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
        x->middleRows(first_row, piece.rows()) = piece;
      },
      error);
}

bool SystemTimes(const IdimModel& model, const IdimSystem& system, const Eigen::VectorXd& theta,
                 Eigen::VectorXd* x_theta, std::string* error) {
  CHECK(x_theta != nullptr);
  if (!system.streamed) {
    *x_theta = system.x * theta;
    return true;
  }
  x_theta->resize(system.y.size());
  return ForEachSystemPiece(
      model, system,
      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
        x_theta->segment(first_row, piece.rows()).noalias() = piece * theta;
      },
      error);
}

namespace {

// Adds a piece of instruments (system rows first_row …) to the Gram blocks Z_jᵀZ_j of the
// packed products (their lower triangles).
void AddToGrams(Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece,
                const RowBlocks& blocks, Eigen::MatrixXd* products) {
  const Eigen::Index b = piece.cols();
  const Eigen::Index rows = piece.rows();
  // Z_jᵀZ_j over runs of consecutive rows of one block (the joint-major stacks: one run).
  for (Eigen::Index start = 0; start < rows;) {
    const int block = blocks.BlockOf(static_cast<int>(first_row + start));
    Eigen::Index end = start + 1;
    while (end < rows && blocks.BlockOf(static_cast<int>(first_row + end)) == block) ++end;
    products->middleCols(b + 1 + block * b, b)
        .selfadjointView<Eigen::Lower>()
        .rankUpdate(piece.middleRows(start, end - start).transpose());
    start = end;
  }
}

// Adds a piece of instruments (system rows first_row …) and X's same rows to the packed
// products; the Gram blocks only `with_grams` (they feed only the covariance of the final
// estimate, eq. 8, so the IV iteration forms them once, for its last instruments).
void AddToProducts(Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece,
                   const Eigen::Ref<const Eigen::MatrixXd>& x_piece, const Eigen::VectorXd& y,
                   const RowBlocks& blocks, bool with_grams, Eigen::MatrixXd* products) {
  const Eigen::Index b = x_piece.cols();
  const Eigen::Index rows = piece.rows();
  products->leftCols(b).noalias() += piece.transpose() * x_piece;
  products->col(b).noalias() += piece.transpose() * y.segment(first_row, rows);
  if (with_grams) AddToGrams(first_row, piece, blocks, products);
}

// Fills the upper triangles of the Gram blocks (accumulated in their lower triangles).
void SymmetrizeProducts(Eigen::Index b, int num_blocks, Eigen::MatrixXd* products) {
  for (int j = 0; j < num_blocks; ++j) {
    auto gram = products->middleCols(b + 1 + j * b, b);
    gram.triangularView<Eigen::StrictlyUpper>() = gram.transpose();
  }
}

}  // namespace

namespace {

// IdimIvProducts, the Gram blocks only `with_grams` (zero otherwise).
Eigen::MatrixXd PackProducts(const Eigen::MatrixXd& z, const Eigen::MatrixXd& x,
                             const Eigen::VectorXd& y, const RowBlocks& blocks, bool with_grams) {
  CHECK(z.rows() == x.rows() && z.cols() == x.cols() && y.size() == x.rows())
      << "IV: expected Z, X of equal shape and y with their rows";
  const Eigen::Index b = x.cols();
  const int num_blocks = blocks.num_blocks();
  Eigen::MatrixXd products = Eigen::MatrixXd::Zero(b, b + 1 + num_blocks * b);
  AddToProducts(0, z, x, y, blocks, with_grams, &products);
  SymmetrizeProducts(b, num_blocks, &products);
  return products;
}

// ProcessLikeSystemProducts, the Gram blocks only `with_grams` (zero otherwise).
bool LikeSystemProducts(const IdimModel& model, const IdimSystem& system, const Eigen::MatrixXd& q,
                        const Eigen::MatrixXd& qd, const Eigen::MatrixXd& qdd, bool with_grams,
                        Eigen::MatrixXd* products, std::string* error) {
  CHECK(products != nullptr);
  const Eigen::Index b = system.x.cols();
  const int num_blocks = system.blocks.num_blocks();
  products->setZero(b, b + 1 + num_blocks * b);
  if (system.streamed) {
    // X is not held: its rows are formed beside the instruments' from the system's states.
    if (!DecimatesLikeSystem(system, q.rows(), error)) return false;
    ForEachKeptRowPiece(model, system, q, qd, qdd, /*with_system_rows=*/true,
                        [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& z,
                            const Eigen::Ref<const Eigen::MatrixXd>& x) {
                          AddToProducts(first_row, z, x, system.y, system.blocks, with_grams,
                                        products);
                        });
  } else if (!ForEachInstrumentPiece(
                 model, system, q, qd, qdd,
                 [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
                   AddToProducts(first_row, piece, system.x.middleRows(first_row, piece.rows()),
                                 system.y, system.blocks, with_grams, products);
                 },
                 error)) {
    return false;
  }
  SymmetrizeProducts(b, num_blocks, products);
  return true;
}

}  // namespace

Eigen::MatrixXd IdimIvProducts(const Eigen::MatrixXd& z, const Eigen::MatrixXd& x,
                               const Eigen::VectorXd& y, const RowBlocks& blocks) {
  return PackProducts(z, x, y, blocks, /*with_grams=*/true);
}

bool ProcessLikeSystemProducts(const IdimModel& model, const IdimSystem& system,
                               const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                               const Eigen::MatrixXd& qdd, Eigen::MatrixXd* products,
                               std::string* error) {
  return LikeSystemProducts(model, system, q, qd, qdd, /*with_grams=*/true, products, error);
}

// ---- SampledTrajectory ----

SampledTrajectory::SampledTrajectory(Eigen::MatrixXd q, Eigen::MatrixXd qd, Eigen::MatrixXd qdd,
                                     double sample_rate_hz)
    : q_(std::move(q)), qd_(std::move(qd)), qdd_(std::move(qdd)), rate_(sample_rate_hz) {
  CHECK_GE(q_.rows(), 2) << "sampled trajectory: expected >= 2 samples";
  CHECK(qd_.rows() == q_.rows() && qdd_.rows() == q_.rows() && qd_.cols() == q_.cols() &&
        qdd_.cols() == q_.cols())
      << "sampled trajectory: q, qd, qdd must have equal shapes";
  CHECK_GT(rate_, 0.0) << "sampled trajectory: rate";
}

void SampledTrajectory::Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                                 Eigen::VectorXd* qdd) const {
  const double position = std::clamp(t * rate_, 0.0, static_cast<double>(q_.rows() - 1));
  // Snap to the sample when t is a sample instant up to rounding (the simulator's case).
  const double nearest = std::round(position);
  Eigen::Index k = static_cast<Eigen::Index>(std::floor(position));
  double w = position - k;
  if (std::abs(position - nearest) < 1e-9) {
    k = static_cast<Eigen::Index>(nearest);
    w = 0.0;
  }
  if (k >= q_.rows() - 1) {
    k = q_.rows() - 1;
    w = 0.0;
  }
  auto blend = [&](const Eigen::MatrixXd& m) {
    Eigen::VectorXd v = m.row(k).transpose();
    if (w > 0.0) v += w * (m.row(k + 1).transpose() - v);
    return v;
  };
  *q = blend(q_);
  *qd = blend(qd_);
  *qdd = blend(qdd_);
}

// ---- Closed-loop auxiliary model ----

ClosedLoopAuxiliaryModel::ClosedLoopAuxiliaryModel(const data::JointTrajectory* reference,
                                                   data::RobotSimulatorOptions simulator,
                                                   int cache_capacity, bool motion_only)
    : reference_(reference),
      simulator_(std::move(simulator)),
      cache_capacity_(cache_capacity),
      motion_only_(motion_only) {
  CHECK(reference_ != nullptr);
  simulator_.encoder_resolution_rad.resize(0);
  simulator_.torque_noise_std.resize(0);
  simulator_.torque_bias.resize(0);
  simulator_.velocity_from_encoder = false;
  // The simulator records only what RunIdim reads (time is always recorded): 3 of its 11 joint
  // series, not 11 formed and 8 dropped.
  if (motion_only_) {
    simulator_.recorded_series = data::kRecordQ | data::kRecordQd | data::kRecordTau;
  }
}

int ClosedLoopAuxiliaryModel::num_simulations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return num_simulations_;
}

struct ClosedLoopAuxiliaryModel::Pending {
  Eigen::VectorXd theta;
  bool done = false;
  std::shared_ptr<const data::RobotSimulation> simulation;  // null when it failed
};

bool ClosedLoopAuxiliaryModel::Simulate(const IdimModel& model, const Eigen::VectorXd& theta,
                                        std::shared_ptr<const data::RobotSimulation>* simulation,
                                        std::string* error) {
  std::shared_ptr<Pending> mine;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    for (const auto& entry : cache_) {
      if (entry.first.size() == theta.size() && entry.first == theta) {
        *simulation = entry.second;
        return true;
      }
    }
    std::shared_ptr<Pending> other;
    for (const std::shared_ptr<Pending>& pending : pending_) {
      if (pending->theta.size() == theta.size() && pending->theta == theta) other = pending;
    }
    if (other != nullptr) {
      // The same θ on another thread (e.g. θ^0 of two runs that start together): its result.
      finished_.wait(lock, [&] { return other->done; });
      if (other->simulation != nullptr) {
        *simulation = other->simulation;
        return true;
      }
      // It failed: simulate here as well, for this caller's own message.
    } else {
      mine = std::make_shared<Pending>();
      mine->theta = theta;
      pending_.push_back(mine);
    }
  }
  std::shared_ptr<const data::RobotSimulation> result;
  const bool ok = SimulateUncached(model, theta, &result, error);
  std::lock_guard<std::mutex> lock(mutex_);
  if (ok) {
    ++num_simulations_;
    if (static_cast<int>(cache_.size()) < cache_capacity_) cache_.emplace_back(theta, result);
  }
  if (mine != nullptr) {
    mine->simulation = ok ? result : nullptr;
    mine->done = true;
    pending_.erase(std::find(pending_.begin(), pending_.end(), mine));
    finished_.notify_all();
  }
  if (ok) *simulation = std::move(result);
  return ok;
}

struct ClosedLoopAuxiliaryModel::Shared {
  Eigen::VectorXd theta;
  int factor = 0;
  double sample_rate_hz = 0.0;
  std::once_flag formed;
  bool ok = false;
  std::string error;
  std::shared_ptr<const Eigen::MatrixXd> instruments;
};

bool ClosedLoopAuxiliaryModel::SharedDecimatedInstruments(
    const IdimModel& model, const IdimSystem& system, const Eigen::VectorXd& theta,
    std::shared_ptr<const Eigen::MatrixXd>* instruments, std::string* error) {
  CHECK(instruments != nullptr);
  instruments->reset();
  const int factor = system.options.decimation_factor;
  const double rate = system.options.sample_rate_hz;
  if (factor <= 1) return true;
  std::shared_ptr<const data::RobotSimulation> simulation;
  std::shared_ptr<Shared> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& cached : cache_) {
      if (cached.first.size() == theta.size() && cached.first == theta) simulation = cached.second;
    }
    if (simulation == nullptr) return true;
    // The 7 s TX40 record: 1 MB (R = 100) and 7 MB (R = 13); a 10⁶-sample record's R = 13
    // instruments (200 MB) are not kept.
    constexpr int64_t kMaxBytes = int64_t{64} << 20;
    const int64_t rows = int64_t{model.num_joints()} *
                         data::DecimatedLength(static_cast<int>(simulation->q.rows()), factor);
    if (rows * model.num_parameters() * int64_t{8} > kMaxBytes) return true;
    for (const std::shared_ptr<Shared>& candidate : shared_) {
      if (candidate->factor == factor && candidate->sample_rate_hz == rate &&
          candidate->theta.size() == theta.size() && candidate->theta == theta) {
        entry = candidate;
      }
    }
    if (entry == nullptr) {
      entry = std::make_shared<Shared>();
      entry->theta = theta;
      entry->factor = factor;
      entry->sample_rate_hz = rate;
      shared_.push_back(entry);
    }
  }
  // Formed by the first caller; another one asking meanwhile waits for it.
  std::call_once(entry->formed, [&] {
    auto z = std::make_shared<Eigen::MatrixXd>();
    const Eigen::MatrixXd qdd = MotionAccelerations(simulation->qd, rate);
    entry->ok = DecimatedRegressor(model, simulation->q, simulation->qd, qdd, factor,
                                   system.options.num_threads, nullptr, z.get(), &entry->error);
    entry->instruments = std::move(z);
  });
  if (!entry->ok) {
    *error = entry->error;
    return false;
  }
  *instruments = entry->instruments;
  return true;
}

bool ClosedLoopAuxiliaryModel::SimulateUncached(
    const IdimModel& model, const Eigen::VectorXd& theta,
    std::shared_ptr<const data::RobotSimulation>* simulation, std::string* error) const {
  const models::SerialRobot robot = model.RobotWithParameters(theta);
  // ForwardDynamics aborts on an indefinite mass matrix; refuse such estimates first.
  const int checks = 50;
  Eigen::VectorXd q, qd, qdd;
  Eigen::MatrixXd mass;
  models::SerialRobotData data(robot);
  for (int c = 0; c <= checks; ++c) {
    reference_->Evaluate(reference_->duration() * c / checks, &q, &qd, &qdd);
    robot.MassMatrix(q, &data, &mass);
    Eigen::LLT<Eigen::MatrixXd> llt(mass);
    if (llt.info() != Eigen::Success || !(llt.matrixLLT().diagonal().array() > 0.0).all()) {
      *error =
          "the estimate gives a mass matrix that is not positive definite along the "
          "reference (t = " +
          std::to_string(reference_->duration() * c / checks) +
          " s); the auxiliary model cannot be simulated";
      return false;
    }
  }
  auto result = std::make_shared<data::RobotSimulation>();
  if (!data::SimulateClosedLoop(robot, *reference_, simulator_, result.get(), error)) {
    *error = "auxiliary closed-loop simulation: " + *error;
    return false;
  }
  *simulation = std::move(result);
  return true;
}

// ---- Estimation ----

LinearLeastSquaresSummary SolveIdimIvNormalProducts(const Eigen::MatrixXd& z,
                                                    const Eigen::MatrixXd& x,
                                                    const Eigen::VectorXd& y,
                                                    const RowBlocks& blocks,
                                                    double condition_number_x) {
  return SolveIdimIvFromProducts(IdimIvProducts(z, x, y, blocks), x, y, blocks, condition_number_x);
}

namespace {

// X's per-block products for a streamed X: [X_jᵀX_j | X_jᵀy_j] side by side (b × (b + 1) per
// block) and y_jᵀy_j, so that a block's residual sum of squares at θ is
// y_jᵀy_j − 2 θᵀX_jᵀy_j + θᵀX_jᵀX_jθ without a pass over X.
struct BlockGrams {
  Eigen::MatrixXd xx_xy;
  Eigen::VectorXd yy;
};

bool ComputeBlockGrams(const IdimModel& model, const IdimSystem& system, BlockGrams* grams,
                       std::string* error) {
  const Eigen::Index b = model.num_parameters();
  const int num_blocks = system.blocks.num_blocks();
  grams->xx_xy = Eigen::MatrixXd::Zero(b, (b + 1) * num_blocks);
  grams->yy = Eigen::VectorXd::Zero(num_blocks);
  if (!ForEachSystemPiece(
          model, system,
          [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
            for (Eigen::Index start = 0; start < piece.rows();) {
              const int block = system.blocks.BlockOf(static_cast<int>(first_row + start));
              Eigen::Index end = start + 1;
              while (end < piece.rows() &&
                     system.blocks.BlockOf(static_cast<int>(first_row + end)) == block) {
                ++end;
              }
              const auto rows = piece.middleRows(start, end - start);
              const auto y = system.y.segment(first_row + start, end - start);
              grams->xx_xy.middleCols(block * (b + 1), b)
                  .selfadjointView<Eigen::Lower>()
                  .rankUpdate(rows.transpose());
              grams->xx_xy.col(block * (b + 1) + b).noalias() += rows.transpose() * y;
              grams->yy[block] += y.squaredNorm();
              start = end;
            }
          },
          error)) {
    return false;
  }
  for (int j = 0; j < num_blocks; ++j) {
    auto gram = grams->xx_xy.middleCols(j * (b + 1), b);
    gram.triangularView<Eigen::StrictlyUpper>() = gram.transpose();
  }
  return true;
}

// The covariance of eq. 8, P = (Σ_j Z_jᵀZ_j / Λ_jj)^{-1}, from the Gram blocks of the packed
// products and Λ (summary->error_covariance, set by the solve); completes the summary of a
// solve made without it. False (summary->success = false, message) when Σ_j Z_jᵀZ_j / Λ_jj is
// not positive definite.
bool FinishIvCovariance(const Eigen::MatrixXd& products, LinearLeastSquaresSummary* summary) {
  const Eigen::Index b = products.rows();
  const int num_blocks = static_cast<int>(summary->error_covariance.rows());
  Eigen::VectorXd weight(num_blocks);
  for (int j = 0; j < num_blocks; ++j) {
    const double lambda = summary->error_covariance(j, j);
    weight[j] = lambda > 0.0 ? 1.0 / lambda : 0.0;
  }
  // Σ_j Z_jᵀ Z_j / Λ_jj from the blocks' Gram matrices.
  Eigen::MatrixXd information = Eigen::MatrixXd::Zero(b, b);
  for (int j = 0; j < num_blocks; ++j) {
    information += weight[j] * products.middleCols(b + 1 + j * b, b);
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(information);
  if (llt.info() != Eigen::Success) {
    summary->success = false;
    summary->message = "IV: Zᵀ W Z is not positive definite (instruments rank deficient)";
    return false;
  }
  summary->covariance = llt.solve(Eigen::MatrixXd::Identity(b, b));
  summary->standard_deviation = summary->covariance.diagonal().cwiseSqrt();
  summary->relative_std_percent =
      100.0 * summary->standard_deviation.cwiseQuotient(summary->theta.cwiseAbs());
  return true;
}

// SolveIdimIvFromProducts with X held (x) or streamed (grams; then no residual vector: the
// caller forms it once for the final estimate). Without `covariance` the Gram blocks of the
// products are not read (they may be zero) and the summary has no covariance: an IV iteration's
// solve, completed by FinishIvCovariance for the final estimate only.
LinearLeastSquaresSummary SolveIvFromProductsCore(const Eigen::MatrixXd& products,
                                                  const Eigen::MatrixXd* x, const BlockGrams* grams,
                                                  const Eigen::VectorXd& y, const RowBlocks& blocks,
                                                  double condition_number_x,
                                                  bool covariance = true) {
  const Eigen::Index x_cols = products.rows();
  CHECK((x != nullptr) != (grams != nullptr)) << "IV: X or its block products";
  CHECK(products.cols() == x_cols * (1 + blocks.num_blocks()) + 1 &&
        (x == nullptr || (x->cols() == x_cols && y.size() == x->rows())))
      << "IV: expected the packed products of b columns and y with X's rows";
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method = "IV (normal products)";
  const int rows = static_cast<int>(y.size());
  const int b = static_cast<int>(x_cols);
  summary.num_rows = rows;
  summary.num_parameters = b;
  summary.iterations = 1;
  if (rows <= b) {
    summary.message =
        "IV: " + std::to_string(rows) + " rows for " + std::to_string(b) + " parameters";
    return summary;
  }
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(products.leftCols(b));
  summary.rank = static_cast<int>(lu.rank());
  if (!lu.isInvertible()) {
    summary.message =
        "IV: ZᵀX is singular (rank " + std::to_string(lu.rank()) + " of " + std::to_string(b) + ")";
    return summary;
  }
  summary.theta = lu.solve(products.col(b));
  const int num_blocks = blocks.num_blocks();
  Eigen::VectorXd sum_squares = Eigen::VectorXd::Zero(num_blocks);
  Eigen::VectorXi counts = Eigen::VectorXi::Zero(num_blocks);
  if (x != nullptr) {
    summary.residual = y - *x * summary.theta;
    for (int r = 0; r < rows; ++r) {
      sum_squares[blocks.BlockOf(r)] += summary.residual[r] * summary.residual[r];
      ++counts[blocks.BlockOf(r)];
    }
  } else {
    for (int r = 0; r < rows; ++r) ++counts[blocks.BlockOf(r)];
    for (int j = 0; j < num_blocks; ++j) {
      const auto gram = grams->xx_xy.middleCols(j * (b + 1), b);
      const auto xy = grams->xx_xy.col(j * (b + 1) + b);
      sum_squares[j] = std::max(0.0, grams->yy[j] - 2.0 * summary.theta.dot(xy) +
                                         summary.theta.dot(gram * summary.theta));
    }
  }
  const double squared_norm = x != nullptr ? summary.residual.squaredNorm() : sum_squares.sum();
  summary.residual_norm = std::sqrt(squared_norm);
  summary.relative_error = y.norm() > 0.0 ? summary.residual_norm / y.norm() : 0.0;
  summary.sigma2 = ResidualVarianceFactor(0.5 * squared_norm, rows, static_cast<int>(b));
  summary.block_rms.resize(num_blocks);
  summary.block_sigma.resize(num_blocks);
  summary.error_covariance = Eigen::MatrixXd::Zero(num_blocks, num_blocks);
  for (int j = 0; j < num_blocks; ++j) {
    const double mean_square = counts[j] > 0 ? sum_squares[j] / counts[j] : 0.0;
    summary.block_rms[j] = std::sqrt(mean_square);
    const double lambda = mean_square * rows / static_cast<double>(rows - b);
    summary.error_covariance(j, j) = lambda;
    summary.block_sigma[j] = std::sqrt(lambda);
  }
  if (covariance && !FinishIvCovariance(products, &summary)) return summary;
  summary.condition_number = condition_number_x;
  summary.success = true;
  summary.message = "IV by normal products";
  summary.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace

LinearLeastSquaresSummary SolveIdimIvFromProducts(const Eigen::MatrixXd& products,
                                                  const Eigen::MatrixXd& x,
                                                  const Eigen::VectorXd& y, const RowBlocks& blocks,
                                                  double condition_number_x) {
  return SolveIvFromProductsCore(products, &x, nullptr, y, blocks, condition_number_x);
}

bool RunIdim(const IdimModel& model, const IdimSystem& system, const IdimRunOptions& options,
             const Eigen::VectorXd& theta0, ClosedLoopAuxiliaryModel* auxiliary, IdimResult* result,
             std::string* error) {
  CHECK(result != nullptr);
  CHECK(error != nullptr);
  const auto start = std::chrono::steady_clock::now();
  *result = IdimResult();
  // IV (fast path): the instruments of the final estimate, or their packed products and the
  // simulation they come from (undecimated system).
  Eigen::MatrixXd instruments;
  std::shared_ptr<const data::RobotSimulation> instrument_simulation;
  // IV (fast path): the iteration's solves leave out the covariance of eq. 8, whose Gram blocks
  // Z_jᵀZ_j (a third of the products' cost) are formed once below, for the instruments of the
  // final estimate, into `final_grams` (packed like the products) — in the HAC covariance's pass
  // over those instruments when there is one.
  bool covariance_pending = false;
  bool instruments_as_products = false;
  bool grams_formed = false;
  Eigen::MatrixXd final_grams;
  LinearLeastSquaresOptions ls_options;
  ls_options.column_names = model.names();
  ls_options.row_blocks = system.blocks;
  const int b = model.num_parameters();
  // A streamed X (IdimPreprocessingOptions::stream_regressor) passes to LS, WLS, the fast IV path
  // and the HAC covariances in pieces formed from the states; the common IV path forms it whole
  // (`formed`).
  const bool streamed = system.streamed;
  const auto x_rows = [&](const HacRowConsumer& consume, std::string* why) {
    return ForEachSystemPiece(model, system, consume, why);
  };
  Eigen::MatrixXd formed;
  if (streamed && options.estimator == IdimEstimator::kInstrumentalVariables &&
      options.iv_common_path) {
    if (!FormSystemRegressor(model, system, &formed, error)) return false;
  }
  const Eigen::MatrixXd& x = streamed ? formed : system.x;
  switch (options.estimator) {
    case IdimEstimator::kLeastSquares:
      result->fit = streamed ? SolveLeastSquaresFromRows(x_rows, b, system.y, ls_options)
                             : SolveLeastSquares(system.x, system.y, ls_options);
      break;
    case IdimEstimator::kWeightedLeastSquares:
      result->fit = streamed ? SolveWeightedLeastSquaresFromRows(x_rows, b, system.y, ls_options)
                             : SolveWeightedLeastSquares(system.x, system.y, ls_options);
      break;
    case IdimEstimator::kInstrumentalVariables: {
      if (auxiliary == nullptr) {
        *error = "IDIM-IV needs a closed-loop auxiliary model (a reference trajectory)";
        return false;
      }
      if (theta0.size() != model.num_parameters()) {
        *error = "theta0 has " + std::to_string(theta0.size()) + " entries, expected " +
                 std::to_string(model.num_parameters());
        return false;
      }
      int simulations = 0;
      // On the fast path of an undecimated system the instruments (as large as X) pass through
      // the iteration as their packed products (SolveIdimIvFromProducts), accumulated chunk by
      // chunk; the simulation behind the last ones is kept for the HAC covariance, which forms
      // them again piece by piece. A decimated system's instruments are R times smaller than
      // the full-rate regressor they come from and are held whole (forming them again would
      // repeat the decimation filter).
      const bool products = !options.iv_common_path && system.options.decimation_factor == 1;
      instruments_as_products = products;
      // The iteration asks for the torques of a new estimate before its instruments
      // (IvIterationOptions::torques_first): the last simulation is kept for the instruments.
      std::shared_ptr<const data::RobotSimulation> last_simulation;
      Eigen::VectorXd last_theta;
      InstrumentGenerator generator = [&](const Eigen::VectorXd& theta, Eigen::MatrixXd* z,
                                          Eigen::VectorXd* tau_s, std::string* why) {
        std::shared_ptr<const data::RobotSimulation> sim;
        if (last_simulation != nullptr && last_theta.size() == theta.size() &&
            last_theta == theta) {
          sim = last_simulation;
        } else {
          last_simulation.reset();
          if (!auxiliary->Simulate(model, theta, &sim, why)) return false;
          ++simulations;
          last_simulation = sim;
          last_theta = theta;
        }
        if (z == nullptr) {
          return ProcessLikeSystem(model, system, sim->q, sim->qd, sim->qd, sim->tau, nullptr,
                                   tau_s, why);
        }
        // The accelerations of the instruments are the central differences of the simulated
        // velocities, not the recorded sample-instant values q''(t_k) = DDM(q_k, q'_k, tau_k):
        // where a Coulomb term chatters (a motor held by friction while its joints move, e.g.
        // q5' = −q6' for motor 6) the latter are not the accelerations of the motion, and the
        // decimation filter carries them into the kept rows.
        if (!products) {
          // Instruments shared with the runs on other systems of this decimation (θ^0): the
          // kept rows of this system.
          std::shared_ptr<const Eigen::MatrixXd> shared;
          if (!auxiliary->SharedDecimatedInstruments(model, system, theta, &shared, why)) {
            return false;
          }
          if (shared != nullptr) {
            // The torques (and the check of the simulation's length) first.
            if (!ProcessLikeSystem(model, system, sim->q, sim->qd, sim->qd, sim->tau, nullptr,
                                   tau_s, why)) {
              return false;
            }
            const std::vector<int>& rows = system.kept_rows;
            z->resize(static_cast<Eigen::Index>(rows.size()), shared->cols());
            for (Eigen::Index c = 0; c < shared->cols(); ++c) {
              const double* in = shared->col(c).data();
              double* out = z->col(c).data();
              for (size_t p = 0; p < rows.size(); ++p) out[p] = in[rows[p]];
            }
            return true;
          }
        }
        // Formed chunk by chunk where the regressor needs them (an empty qdd), not held whole.
        const Eigen::MatrixXd qdd;
        if (!products) {
          return ProcessLikeSystem(model, system, sim->q, sim->qd, qdd, sim->tau, z, tau_s, why);
        }
        instrument_simulation = sim;
        return LikeSystemProducts(model, system, sim->q, sim->qd, qdd, /*with_grams=*/false, z,
                                  why) &&
               ProcessLikeSystem(model, system, sim->q, sim->qd, qdd, sim->tau, nullptr, tau_s,
                                 why);
      };
      // The fast path's solve needs cond(X) once; a streamed X, its per-block products (one
      // pass), from which the solves take the residuals' sums of squares.
      BlockGrams grams;
      double condition = 0.0;
      if (streamed && !options.iv_common_path) {
        if (!ComputeBlockGrams(model, system, &grams, error)) return false;
        Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(b, b);
        for (int j = 0; j < system.blocks.num_blocks(); ++j) {
          gram += grams.xx_xy.middleCols(j * (b + 1), b);
        }
        const Eigen::VectorXd eigenvalues =
            Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly)
                .eigenvalues();
        if (eigenvalues[0] > 0.0 && eigenvalues[b - 1] <= 1e8 * eigenvalues[0]) {
          condition = std::sqrt(eigenvalues[b - 1] / eigenvalues[0]);
        } else {  // not trusted from the Gram matrix (GramConditionNumber): a QR of X
          if (!FormSystemRegressor(model, system, &formed, error)) return false;
          condition = ConditionNumber(formed);
          formed.resize(0, 0);
        }
      } else if (!options.iv_common_path) {
        condition = GramConditionNumber(system.x);
      }
      IvIterationOptions iv_options = options.iv;
      iv_options.torques_first = true;
      // Without the covariance (FinishIvCovariance below, for the final estimate only): the
      // iteration reads θ and the residual.
      const IvSolve solve = [&](const Eigen::MatrixXd& z) {
        if (streamed) {
          return SolveIvFromProductsCore(z, nullptr, &grams, system.y, system.blocks, condition,
                                         /*covariance=*/false);
        }
        if (products) {
          return SolveIvFromProductsCore(z, &system.x, nullptr, system.y, system.blocks, condition,
                                         /*covariance=*/false);
        }
        return SolveIvFromProductsCore(
            PackProducts(z, system.x, system.y, system.blocks, /*with_grams=*/false), &system.x,
            nullptr, system.y, system.blocks, condition, /*covariance=*/false);
      };
      const IvIterationSummary iv =
          options.iv_common_path
              ? IterateInstrumentalVariables(x, system.y, theta0, generator, iv_options, ls_options)
          : streamed ? IterateInstrumentalVariables(system.y.size(), theta0, generator, iv_options,
                                                    solve, &instruments)
                     : IterateInstrumentalVariables(system.x, theta0, generator, iv_options, solve,
                                                    &instruments);
      result->fit = iv.estimate;
      if (streamed && !options.iv_common_path && iv.estimate.success) {
        // The residual of the final estimate, by one pass over X; its norms replace those of
        // the block products (equal up to round-off).
        Eigen::VectorXd x_theta;
        if (!SystemTimes(model, system, iv.estimate.theta, &x_theta, error)) return false;
        LinearLeastSquaresSummary& fit = result->fit;
        fit.residual = system.y - x_theta;
        fit.residual_norm = fit.residual.norm();
        fit.relative_error = system.y.norm() > 0.0 ? fit.residual_norm / system.y.norm() : 0.0;
        for (int j = 0; j < system.blocks.num_blocks(); ++j) {
          double sum = 0.0;
          int count = 0;
          for (Eigen::Index r = 0; r < fit.residual.size(); ++r) {
            if (system.blocks.BlockOf(static_cast<int>(r)) != j) continue;
            sum += fit.residual[r] * fit.residual[r];
            ++count;
          }
          fit.block_rms[j] = count > 0 ? std::sqrt(sum / count) : 0.0;
        }
      }
      if (!options.iv_common_path && iv.estimate.success) {
        covariance_pending = true;
        // The instruments of the final estimate (those of θ^(it−1) for θ^it) are the iteration's
        // last ones unless a later simulation replaced them; then they are formed again.
        const bool held = products ? instruments.rows() == b && instrument_simulation != nullptr
                                   : instruments.rows() == system.y.size();
        if (!held) {
          Eigen::VectorXd unused;
          if (!generator(iv.theta_history[iv.theta_history.size() - 2], &instruments, &unused,
                         error)) {
            return false;
          }
        }
        final_grams = Eigen::MatrixXd::Zero(b, b + 1 + system.blocks.num_blocks() * b);
      }
      result->converged = iv.converged;
      result->stalled = iv.stalled;
      result->iterations = iv.iterations;
      result->torque_change = iv.torque_change;
      result->parameter_change = iv.parameter_change;
      result->simulations = simulations;
      result->message = iv.message;
      if (!iv.estimate.success) {
        *error = "IDIM-IV: " + iv.message +
                 (iv.estimate.message.empty() ? "" : "; " + iv.estimate.message);
        result->success = false;
        return false;
      }
      break;
    }
  }
  if (!result->fit.success) {
    *error =
        std::string("IDIM-") + IdimEstimatorName(options.estimator) + ": " + result->fit.message;
    return false;
  }
  if (result->message.empty()) result->message = result->fit.message;
  result->whiteness =
      AnalyseResidualWhiteness(result->fit.residual, system.blocks, options.whiteness);
  if (options.hac) {
    switch (options.estimator) {
      case IdimEstimator::kLeastSquares:
        if (streamed) {
          // Z = X in pieces; ZᵀX = XᵀX accumulated in one more pass.
          Eigen::MatrixXd xtx = Eigen::MatrixXd::Zero(b, b);
          if (!x_rows(
                  [&](Eigen::Index, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
                    xtx.selfadjointView<Eigen::Lower>().rankUpdate(piece.transpose());
                  },
                  error)) {
            return false;
          }
          xtx.triangularView<Eigen::StrictlyUpper>() = xtx.transpose();
          result->hac =
              ComputeHacCovarianceFromRows(x_rows, xtx, result->fit.residual, system.blocks,
                                           options.hac_lags, options.hac_bandwidth);
          break;
        }
        result->hac = ComputeHacCovariance(system.x, system.x, result->fit.residual, system.blocks,
                                           options.hac_lags, options.hac_bandwidth);
        break;
      case IdimEstimator::kWeightedLeastSquares: {
        // Z = W X, formed piece by piece rather than as a weighted copy of X.
        if (streamed) {
          const auto weigh_rows = [&](Eigen::Index first_row,
                                      const Eigen::Ref<const Eigen::MatrixXd>& piece,
                                      Eigen::MatrixXd* weighted) {
            *weighted = piece;
            for (Eigen::Index r = 0; r < piece.rows(); ++r) {
              const double sigma =
                  result->fit.block_sigma[system.blocks.BlockOf(static_cast<int>(first_row + r))];
              weighted->row(r) /= sigma * sigma;
            }
          };
          Eigen::MatrixXd ztx = Eigen::MatrixXd::Zero(b, b);
          Eigen::MatrixXd weighted;
          if (!x_rows(
                  [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
                    weigh_rows(first_row, piece, &weighted);
                    ztx.noalias() += weighted.transpose() * piece;
                  },
                  error)) {
            return false;
          }
          result->hac = ComputeHacCovarianceFromRows(
              [&](const HacRowConsumer& consume, std::string* why) {
                return x_rows(
                    [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
                      weigh_rows(first_row, piece, &weighted);
                      consume(first_row, weighted);
                    },
                    why);
              },
              ztx, result->fit.residual, system.blocks, options.hac_lags, options.hac_bandwidth);
          break;
        }
        constexpr Eigen::Index kPiece = 4096;
        const Eigen::Index rows = x.rows();
        Eigen::MatrixXd piece;
        auto weigh = [&](Eigen::Index start) {
          piece = x.middleRows(start, std::min(kPiece, rows - start));
          for (Eigen::Index r = 0; r < piece.rows(); ++r) {
            const double sigma =
                result->fit.block_sigma[system.blocks.BlockOf(static_cast<int>(start + r))];
            piece.row(r) /= sigma * sigma;
          }
        };
        Eigen::MatrixXd ztx = Eigen::MatrixXd::Zero(x.cols(), x.cols());
        for (Eigen::Index start = 0; start < rows; start += kPiece) {
          weigh(start);
          ztx.noalias() += piece.transpose() * x.middleRows(start, piece.rows());
        }
        result->hac = ComputeHacCovarianceFromRows(
            [&](const HacRowConsumer& consume, std::string*) {
              for (Eigen::Index start = 0; start < rows; start += kPiece) {
                weigh(start);
                consume(start, piece);
              }
              return true;
            },
            ztx, result->fit.residual, system.blocks, options.hac_lags, options.hac_bandwidth);
        break;
      }
      case IdimEstimator::kInstrumentalVariables: {
        // The instruments of the last solve, formed again piece by piece from its simulation;
        // ZᵀX is in their products.
        if (options.iv_common_path) {
          result->hac.message = "HAC: not computed on the common IV path";
          break;
        }
        if (!streamed && instruments.rows() == system.x.rows()) {  // held whole (decimated)
          result->hac =
              ComputeHacCovariance(instruments, system.x, result->fit.residual, system.blocks,
                                   options.hac_lags, options.hac_bandwidth);
          break;
        }
        if (instrument_simulation == nullptr || instruments.rows() != b) {
          result->hac.message = "HAC: the instruments of the final estimate are not available";
          break;
        }
        const Eigen::MatrixXd qdd;  // the motion accelerations, chunk by chunk
        // The same pass forms the Gram blocks of the covariance of eq. 8 (the pieces are those
        // of the iteration's products, so the blocks are bitwise the same).
        result->hac = ComputeHacCovarianceFromRows(
            [&](const HacRowConsumer& consume, std::string* why) {
              const bool add_grams = covariance_pending && !grams_formed;
              const bool ok = ForEachInstrumentPiece(
                  model, system, instrument_simulation->q, instrument_simulation->qd, qdd,
                  [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
                    if (add_grams) AddToGrams(first_row, piece, system.blocks, &final_grams);
                    consume(first_row, piece);
                  },
                  why);
              if (add_grams) {
                if (ok) {
                  grams_formed = true;
                } else {
                  final_grams.setZero();
                }
              }
              return ok;
            },
            instruments.leftCols(b), result->fit.residual, system.blocks, options.hac_lags,
            options.hac_bandwidth);
        break;
      }
    }
  }
  if (covariance_pending) {
    // The covariance of eq. 8 from the Gram blocks of the final instruments.
    if (!grams_formed && !instruments_as_products) {
      AddToGrams(0, instruments, system.blocks, &final_grams);
    } else if (!grams_formed) {
      const Eigen::MatrixXd qdd =
          MotionAccelerations(instrument_simulation->qd, system.options.sample_rate_hz);
      if (!ForEachInstrumentPiece(
              model, system, instrument_simulation->q, instrument_simulation->qd, qdd,
              [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
                AddToGrams(first_row, piece, system.blocks, &final_grams);
              },
              error)) {
        return false;
      }
    }
    SymmetrizeProducts(b, system.blocks.num_blocks(), &final_grams);
    if (!FinishIvCovariance(final_grams, &result->fit)) {
      *error = "IDIM-IV: " + result->fit.message;
      return false;
    }
  }
  result->success = true;
  result->time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
