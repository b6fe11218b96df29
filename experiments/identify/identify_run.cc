#include "experiments/identify/identify_run.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "dynid/data/robot_simulator.h"
#include "dynid/data/signal.h"
#include "dynid/problems/physically_consistent_problem.h"
#include "experiments/common/progress.h"

namespace dynid::identify {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ||y − X θ_b|| / ||y|| on the system's rows.
double RelativeError(const solvers::IdimSystem& system, const Eigen::VectorXd& theta_base) {
  return (system.y - system.x * theta_base).norm() / system.y.norm();
}

// The validation record: the states of `log` differentiated as the identification record was
// (same differentiator, NVRs fitted on this record), every sample, measured torques.
bool MakeValidationRecord(const solvers::IdimModel& model, const JointLog& log,
                          const solvers::IdimPreprocessingOptions& preprocessing,
                          solvers::ValidationRecord* record, std::string* error) {
  solvers::IdimPreprocessingOptions options = preprocessing;
  options.select_samples = false;
  solvers::IdimSystem system;
  if (!solvers::BuildIdimSystemAtTimes(model, log.t, log.q, log.tau, options, &system, error)) {
    *error = "validation record " + log.source + ": " + *error;
    return false;
  }
  record->q = std::move(system.q);
  record->qd = std::move(system.qd);
  record->qdd = std::move(system.qdd);
  record->tau = log.tau;
  for (int j = 0; j < static_cast<int>(log.measured.size()); ++j) {
    if (!log.measured[j]) record->tau.col(j).setZero();
  }
  record->measured = log.measured;
  return true;
}

std::string FormatG(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

// IDIM-IV when the record carries a reference trajectory and is uniformly sampled (the closed
// loop is simulated at the record's rate). Fills `estimate` (unavailable with the reason
// otherwise); false only for an invalid controller.
bool RunInstrumentalVariables(const models::SerialRobot& robot, const solvers::IdimModel& model,
                              const JointLog& log, const IdentifyOptions& options,
                              IdentifyResults& r, MethodEstimate* estimate, std::string* error) {
  // The reference the closed loop follows: the log's, or — a stated substitute for logs without
  // one — the smoothed measured positions (a well-tuned controller tracks its reference closely,
  // so the measured motion is the reference plus a small tracking error).
  const bool substitute = options.iv_reference_from_measured && log.qref.size() == 0;
  if (log.qref.size() == 0 && !substitute) {
    estimate->message =
        "no reference trajectory (qref_<joint> columns; --iv_reference=measured uses the smoothed "
        "measured positions instead)";
    return true;
  }
  const Eigen::MatrixXd& qref = substitute ? r.system.q : log.qref;
  const Eigen::Index ns = log.t.size();
  const double step = (log.t[ns - 1] - log.t[0]) / static_cast<double>(ns - 1);
  const Eigen::VectorXd steps = log.t.tail(ns - 1) - log.t.head(ns - 1);
  if ((steps.array() - step).abs().maxCoeff() > 1e-6 * step) {
    estimate->message =
        "the record is not uniformly sampled: the closed loop of IDIM-IV is simulated at a fixed "
        "rate";
    return true;
  }
  const double rate = 1.0 / step;
  const int n = robot.num_joints();
  Eigen::MatrixXd qd_ref(ns, n), qdd_ref(ns, n);
  for (int j = 0; j < n; ++j) {
    qd_ref.col(j) = data::CentralDifference(qref.col(j), step);
    qdd_ref.col(j) = data::CentralSecondDifference(qref.col(j), step);
  }
  const solvers::SampledTrajectory reference(qref, qd_ref, qdd_ref, rate);
  // θ^0 (Brunot et al. (2018) eq. 6 step 1): the description's inertial values, no friction; a
  // description without inertial values (a bare DH table) starts from the IDIM-LS estimate.
  Eigen::VectorXd theta0 = model.FromStandard(robot.standard_parameters());
  bool has_inertia = false;
  for (int i = 0; i < model.num_parameters(); ++i) {
    if (model.IsFrictionOrOffset(i)) {
      theta0[i] = 0.0;
    } else {
      has_inertia = has_inertia || theta0[i] != 0.0;
    }
  }
  std::string start = "the description's inertia, no friction";
  if (!has_inertia) {
    if (!r.ls.success) {
      estimate->message = "the description has no inertial values and IDIM-LS failed: no θ^0";
      return true;
    }
    theta0 = r.ls.fit.theta;
    start = "the IDIM-LS estimate (the description has no inertial values)";
  }
  data::RobotSimulatorOptions controller;
  controller.control_rate_hz = rate;
  controller.duration_s = (ns - 1) * step;
  // Gains tuned on the robot of θ^0 (the description, or the LS estimate without one).
  controller.gains = data::TunePidGains(model.RobotWithParameters(theta0), qref.row(0).transpose(),
                                        options.pid_bandwidth_hz);
  if (options.kp.size() > 0) controller.gains.kp = options.kp;
  if (options.ki.size() > 0) controller.gains.ki = options.ki;
  if (options.kd.size() > 0) controller.gains.kd = options.kd;
  if (!controller.IsValid(n, error)) {
    *error = "IDIM-IV controller: " + *error;
    return false;
  }
  solvers::ClosedLoopAuxiliaryModel auxiliary(&reference, controller, /*cache_capacity=*/1);
  cli::Stage stage("IDIM-IV");
  solvers::IdimRunOptions run;
  run.estimator = solvers::IdimEstimator::kInstrumentalVariables;
  run.iv = options.iv;
  run.hac_bandwidth = options.hac_bandwidth;
  std::string why;
  if (!solvers::RunIdim(model, r.system, run, theta0, &auxiliary, &r.iv, &why) || !r.iv.success) {
    estimate->message = why.empty() ? r.iv.message : why;
    return true;
  }
  estimate->available = true;
  estimate->base = r.iv.fit.theta;
  estimate->base_std = r.iv.fit.standard_deviation;
  estimate->relative_error = r.iv.fit.relative_error;
  if (!r.iv.converged) {
    estimate->message = "not converged after " + std::to_string(r.iv.iterations) + " iterations";
  }
  r.notes.push_back(
      std::string("IDIM-IV (reference: ") +
      (substitute ? "SUBSTITUTE, the smoothed measured positions" : "the log's qref") + ") from " +
      start + ": " + std::to_string(r.iv.iterations) + " iterations, " +
      std::to_string(r.iv.simulations) + " closed-loop simulations (PID: " +
      (options.kp.size() > 0
           ? std::string("given gains")
           : "tuned at " + FormatG(options.pid_bandwidth_hz) + " Hz on the inertia of θ^0") +
      ")" + (r.iv.converged ? "" : "; NOT converged"));
  return true;
}

}  // namespace

const char* MethodName(Method method) {
  switch (method) {
    case Method::kPrior:
      return "prior";
    case Method::kLs:
      return "ls";
    case Method::kWls:
      return "wls";
    case Method::kPc:
      return "pc";
    case Method::kIv:
      return "iv";
  }
  return "?";
}

const char* MethodLabel(Method method) {
  switch (method) {
    case Method::kPrior:
      return "description prior";
    case Method::kLs:
      return "IDIM-LS";
    case Method::kWls:
      return "IDIM-WLS";
    case Method::kPc:
      return "physically consistent";
    case Method::kIv:
      return "IDIM-IV";
  }
  return "?";
}

const MethodEstimate& IdentifyResults::Estimate(Method method) const {
  for (const MethodEstimate& estimate : estimates) {
    if (estimate.method == method) return estimate;
  }
  LOG(FATAL) << "no estimate of method " << MethodName(method);
  return estimates.front();
}

const solvers::HacCovariance* IdentifyResults::Hac(Method method) const {
  const solvers::HacCovariance* hac = nullptr;
  switch (method) {
    case Method::kLs:
      hac = &ls.hac;
      break;
    case Method::kWls:
      hac = &wls.hac;
      break;
    case Method::kIv:
      hac = &iv.hac;
      break;
    case Method::kPc:
      hac = &pc.column_hac;
      break;
    case Method::kPrior:
      break;
  }
  return hac != nullptr && hac->success && Estimate(method).available ? hac : nullptr;
}

bool RunIdentify(const models::SerialRobot& robot, const JointLog& identification,
                 const JointLog& validation, const IdentifyOptions& options,
                 IdentifyResults* results, std::string* error) {
  CHECK(results != nullptr);
  IdentifyResults& r = *results;
  const int n = robot.num_joints();
  r.measured = identification.measured;
  r.joint_names.clear();
  for (int j = 0; j < n; ++j) r.joint_names.push_back(robot.JointName(j));
  r.identification_samples = identification.num_samples();
  r.validation_samples = validation.num_samples();

  // Base parameters of the measured equations.
  const int measured_count =
      static_cast<int>(std::count(r.measured.begin(), r.measured.end(), true));
  models::NumericalBaseOptions base_options;
  base_options.measured_joints = r.measured;
  base_options.num_states =
      std::max(base_options.num_states, 2 * robot.num_parameters() / measured_count + 1);
  {
    cli::Stage stage("base parameters");
    if (!models::ComputeBaseParameters(robot, base_options, &r.base, error)) return false;
  }
  solvers::IdimModel model;
  if (!solvers::IdimModel::Create(robot, r.base, {}, &model, error)) return false;

  // The IDIM system.
  solvers::IdimPreprocessingOptions preprocessing = options.preprocessing;
  preprocessing.measured_joints = r.measured;
  preprocessing.num_threads = options.num_threads;
  {
    cli::Stage stage("differentiation and observation matrix");
    if (!solvers::BuildIdimSystemAtTimes(model, identification.t, identification.q,
                                         identification.tau, preprocessing, &r.system, error)) {
      *error = identification.source + ": " + *error;
      return false;
    }
  }
  r.condition_number = solvers::ConditionNumber(r.system.x);
  if (!r.system.selection_report.empty()) r.notes.push_back(r.system.selection_report);

  r.estimates.clear();
  for (Method method : kMethods) {
    MethodEstimate estimate;
    estimate.method = method;
    r.estimates.push_back(estimate);
  }
  auto estimate_of = [&](Method method) -> MethodEstimate& {
    return r.estimates[static_cast<int>(method)];
  };

  // The description's values.
  {
    MethodEstimate& prior = estimate_of(Method::kPrior);
    prior.available = true;
    prior.standard = robot.standard_parameters();
    prior.base = r.base.Reduce(prior.standard);
    prior.base_std = Eigen::VectorXd::Constant(prior.base.size(), kNaN);
    prior.relative_error = RelativeError(r.system, prior.base);
    r.prior_consistency = solvers::CheckStandardConsistency(robot, prior.standard);
  }

  // IDIM-LS and IDIM-WLS.
  for (Method method : {Method::kLs, Method::kWls}) {
    cli::Stage stage(std::string(MethodLabel(method)));
    solvers::IdimRunOptions run;
    run.estimator = method == Method::kLs ? solvers::IdimEstimator::kLeastSquares
                                          : solvers::IdimEstimator::kWeightedLeastSquares;
    run.hac_bandwidth = options.hac_bandwidth;
    solvers::IdimResult& result = method == Method::kLs ? r.ls : r.wls;
    MethodEstimate& estimate = estimate_of(method);
    std::string why;
    if (!solvers::RunIdim(model, r.system, run, Eigen::VectorXd(), nullptr, &result, &why) ||
        !result.success) {
      estimate.message = why.empty() ? result.message : why;
      continue;
    }
    estimate.available = true;
    estimate.base = result.fit.theta;
    estimate.base_std = result.fit.standard_deviation;
    estimate.relative_error = result.fit.relative_error;
  }

  // The physically consistent fit, rows weighted as WLS.
  {
    cli::Stage stage("physically consistent fit");
    problems::PhysicallyConsistentData data;
    data.x = r.system.x;
    data.y = r.system.y;
    data.column_map = r.base.grouping;
    if (estimate_of(Method::kWls).available) {
      data.row_weights.resize(r.system.x.rows());
      for (Eigen::Index i = 0; i < data.row_weights.size(); ++i) {
        data.row_weights[i] =
            1.0 / r.wls.fit.block_sigma[r.system.blocks.BlockOf(static_cast<int>(i))];
      }
      r.notes.push_back(
          "physically consistent fit: rows weighted by 1/σ_j of the WLS fit (Gautier's per-joint "
          "σ)");
    }
    solvers::PhysicallyConsistentOptions pc_options;
    pc_options.problem.prior_weight = options.prior_weight;
    if (options.prior_weight > 0.0) {
      // The prior must be strictly consistent; a description that is not (CAD rounding, a
      // flat link) is moved to the nearest consistent values first, and the report says so.
      const problems::PhysicalParameterization layout(robot);
      pc_options.problem.prior_theta =
          layout.ProjectToConsistent(robot.standard_parameters(), 1e-6);
      if (!r.prior_consistency.consistent) {
        r.notes.push_back(
            "the description's values are not physically consistent; the prior of the "
            "physically consistent fit is the nearest consistent set (each pseudo-inertia's "
            "eigenvalues raised to 1e-6 of its largest)");
      }
    }
    // Its HAC covariance too (solvers/physically_consistent_fit.h), the rows' joints and samples
    // from the system, the bandwidth rule as for the IDIM estimators.
    pc_options.hac = true;
    pc_options.hac_blocks = r.system.blocks;
    pc_options.hac_bandwidth = options.hac_bandwidth;
    pc_options.progress.callback = stage.Callback();
    MethodEstimate& estimate = estimate_of(Method::kPc);
    if (!solvers::FitPhysicallyConsistent(robot, data, robot.standard_parameters(), pc_options,
                                          r.base.names, &r.pc, error)) {
      *error = "physically consistent fit: " + *error;
      return false;
    }
    if (r.pc.success) {
      estimate.available = true;
      estimate.standard = r.pc.theta;
      estimate.base = r.pc.columns;
      estimate.base_std = r.pc.column_standard_deviation;
      estimate.relative_error = r.pc.relative_error;
      if (!r.pc.solver.converged) estimate.message = "the solver did not converge";
    } else {
      estimate.message = r.pc.message;
    }
  }
  // Essential parameters of the LS system.
  if (options.essential) {
    cli::Stage stage("essential parameters");
    solvers::EssentialParametersOptions essential;
    essential.max_relative_error_increase = options.essential_max_error_increase;
    essential.least_squares.row_blocks = r.system.blocks;
    r.essential =
        solvers::SelectEssentialParameters(r.system.x, r.system.y, r.base.names, essential);
    if (!r.essential.success) {
      r.notes.push_back("essential parameters: not selected (" + r.essential.message + ")");
    }
  }

  // IDIM-IV.
  {
    MethodEstimate& estimate = estimate_of(Method::kIv);
    if (!RunInstrumentalVariables(robot, model, identification, options, r, &estimate, error)) {
      return false;
    }
  }
  if (estimate_of(Method::kLs).available && estimate_of(Method::kPc).available) {
    r.ls_to_pc = solvers::CompareEstimates(r.ls.fit.theta, r.ls.fit.covariance, r.pc.columns);
  }

  // Held-out validation.
  if (validation.num_samples() > 0) {
    cli::Stage stage("validation");
    if (!MakeValidationRecord(model, validation, preprocessing, &r.validation_record, error)) {
      return false;
    }
    r.validation_time = validation.t;
    for (MethodEstimate& estimate : r.estimates) {
      if (!estimate.available) continue;
      const bool ok =
          estimate.standard.size() > 0
              ? solvers::ValidateTorques(robot, estimate.standard, r.validation_record,
                                         &estimate.validation, error)
              : solvers::ValidateTorques(robot, r.base, estimate.base, r.validation_record,
                                         &estimate.validation, error);
      if (!ok) {
        *error = "validation of " + std::string(MethodLabel(estimate.method)) + ": " + *error;
        return false;
      }
      estimate.validated = true;
    }
  }
  return true;
}

}  // namespace dynid::identify
