// experiments/scara_study/scara_estimators — the estimators of scara_study (see
// scara_estimators.h).
#include "experiments/scara_study/scara_estimators.h"

#include <ceres/problem.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/models/scara3.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/extended_kalman_filter.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/residual_analysis.h"
#include "dynid/solvers/weighted_residual_smoother.h"
#include "experiments/scara_study/scara_published.h"

namespace dynid::scara_study {

namespace {

// ---- LS and the Hopfield network: the stacked regression of the record.

// The regressor at the kinematics q, qd, qdd (Ns × 3 each), the record's measured torques.
Regression StackRegression(const Record& record, const Eigen::MatrixXd& q,
                           const Eigen::MatrixXd& qd, const Eigen::MatrixXd& qdd) {
  Regression regression;
  regression.phi.resize(3 * record.num, 4);
  regression.tau.resize(3 * record.num);
  for (int k = 0; k < record.num; ++k) {
    regression.phi.middleRows(3 * k, 3) = models::Scara3ClosedFormRegressor(
        q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose(), EstimatorGravity());
    regression.tau.segment(3 * k, 3) = record.sim.tau_measured.row(k).transpose();
  }
  return regression;
}

Regression StackRegression(const Record& record) {
  return StackRegression(record, record.sim.q, record.sim.qd, record.sim.qdd);
}

// A simulation: the regression on the IRWSM2 kinematics of the noisy joint states.
Regression StackIrwRegression(const Record& record) {
  if (record.measured) return Regression();
  return StackRegression(record, record.q_irw, record.qd_irw, record.qdd_irw);
}

// Weighted by the torque noise of each joint when it is known: the rows pre-whitened (divided by
// the joint's torque-noise std), then solvers::SolveLeastSquares (pivoted QR, covariance
// σ² (AᵀA)⁻¹ with σ² of the whitened residual). With `hac`, also the same estimate with the
// Newey–West HAC covariance of the whitened rows (solvers/residual_analysis.h; rows
// stacked sample-major, one block per joint, the Bartlett bandwidth from the residual's
// autocorrelation function): on smoothed kinematics the regressor carries the smoothed noise of
// the joint states, which leaves a residual correlated over many samples.
Estimate EstimateLeastSquares(const Record& record, const Regression& regression,
                              double* condition_number, Estimate* hac = nullptr) {
  const int num = static_cast<int>(regression.tau.size() / 3);
  Eigen::VectorXd w(3 * num);
  for (int k = 0; k < num; ++k) {
    for (int j = 0; j < 3; ++j) {
      w(3 * k + j) = record.torque_noise(j) > 0.0 ? 1.0 / record.torque_noise(j) : 1.0;
    }
  }
  solvers::LinearLeastSquaresOptions options;
  options.column_names = {kParamNames[0], kParamNames[1], kParamNames[2], kParamNames[3]};
  const Eigen::MatrixXd a = w.asDiagonal() * regression.phi;
  const Eigen::VectorXd b = w.asDiagonal() * regression.tau;
  const solvers::LinearLeastSquaresSummary solution = solvers::SolveLeastSquares(a, b, options);
  if (!solution.success) {
    std::cerr << "scara_study: warning: LS: " << solution.message << "\n";
  }
  Estimate ls;
  ls.p = solution.theta;
  ls.cov = solution.covariance;
  ls.has_cov = true;
  *condition_number = solution.condition_number;
  if (hac != nullptr) {
    *hac = ls;
    if (solution.success) {
      const solvers::HacCovariance covariance = solvers::ComputeHacCovariance(
          a, a, b - a * solution.theta,
          solvers::RowBlocks::Stacked(data::StackOrder::kSampleMajor, 3, num), 0,
          solvers::HacBandwidth::kAutocorrelation);
      hac->has_cov = covariance.success;
      if (covariance.success) {
        hac->cov = covariance.covariance;
      } else {
        std::cerr << "scara_study: warning: LS HAC: " << covariance.message << "\n";
      }
    }
  }
  return ls;
}

// LS on the record's kinematics and, for a simulation, LS_irw on the IRWSM2 kinematics of the
// noisy joint states.
void RunLeastSquares(const Record& record, const EstimatorRuns& runs, Results* results) {
  double condition_number = 0.0;
  Estimate ls = EstimateLeastSquares(record, runs.regression, &condition_number);
  ls.method = "LS";
  ls.description = "weighted least squares, " + record.kinematics + ", measured torques";
  results->estimates.push_back(ls);
  results->summary["regressor_condition_number"] = condition_number;
  if (record.measured) return;
  Estimate irw_hac;
  Estimate irw =
      EstimateLeastSquares(record, RowsFrom(runs.regression_irw, FirstSampleAfterStartup(record)),
                           &condition_number, &irw_hac);
  irw.method = "LS_irw";
  irw.description =
      "weighted least squares, IRWSM2 q, q', q'' of the noisy joint states the filters see, "
      "measured torques, after the first 0.5 s";
  results->estimates.push_back(irw);
  irw_hac.method = "LS_irw_hac";
  irw_hac.description = irw.description + "; Newey-West HAC covariance";
  results->estimates.push_back(irw_hac);
  results->summary["regressor_condition_number_irw"] = condition_number;
}

bool RunHopfield(const Record& record, const Regression& regression,
                 const Regression& regression_irw, solvers::HopfieldResult* hnn, Results* results,
                 std::string* error) {
  solvers::HopfieldOptions o;
  o.gain = FLAGS_hnn_gain;
  o.activation = FLAGS_hnn_activation == "tanh" ? solvers::HopfieldActivation::kTanh
                                                : solvers::HopfieldActivation::kLinear;
  o.amplitude = Eigen::Vector4d::Constant(FLAGS_hnn_amplitude);
  o.beta = FLAGS_hnn_beta;
  o.initial_parameters = Eigen::Vector4d(5.0, 0.5, 1.0, 1.5);  // the EKF's published x0
  if (!solvers::RunHopfieldEstimator(record.sim.time, regression.phi, regression.tau, o, hnn,
                                     error)) {
    *error = "Hopfield estimator: " + *error;
    return false;
  }
  Estimate mean;
  mean.method = "HNN";
  mean.description = "Hopfield network, time mean of the response over the whole record";
  mean.p = hnn->mean_estimate;
  mean.cov = hnn->mean_std.array().square().matrix().asDiagonal();
  mean.has_cov = true;  // spread of the response about its mean (as the published Dev.)
  results->estimates.push_back(mean);
  Estimate fin;
  fin.method = "HNN_final";
  fin.description = "Hopfield network, value at the end of the record";
  fin.p = hnn->final_estimate;
  results->estimates.push_back(fin);
  // Second-half mean: the transient from p0 excluded.
  solvers::HopfieldOptions o2 = o;
  o2.mean_start_s = record.sim.time(0) + 0.5 * record.duration_s;
  solvers::HopfieldResult hnn2;
  if (!solvers::RunHopfieldEstimator(record.sim.time, regression.phi, regression.tau, o2, &hnn2,
                                     error)) {
    *error = "Hopfield estimator: " + *error;
    return false;
  }
  Estimate half;
  half.method = "HNN_mean_second_half";
  half.description = "Hopfield network, time mean over the second half of the record";
  half.p = hnn2.mean_estimate;
  half.cov = hnn2.mean_std.array().square().matrix().asDiagonal();
  half.has_cov = true;
  results->estimates.push_back(half);
  results->summary["hnn"] = {{"message", hnn->message},
                             {"time_s", hnn->time_s},
                             {"max_steps_per_sample", hnn->max_steps_per_sample}};
  if (record.measured) return true;
  // HNN_irw: the same network (time mean over the whole record, as HNN) on the IRWSM2 regression
  // of the noisy joint states.
  solvers::HopfieldResult hnn_irw;
  const int first = FirstSampleAfterStartup(record);
  const Regression after_startup = RowsFrom(regression_irw, first);
  const Eigen::VectorXd time = record.sim.time.tail(record.num - first);
  if (!solvers::RunHopfieldEstimator(time, after_startup.phi, after_startup.tau, o, &hnn_irw,
                                     error)) {
    *error = "Hopfield estimator (IRWSM2 kinematics): " + *error;
    return false;
  }
  Estimate irw;
  irw.method = "HNN_irw";
  irw.description =
      "Hopfield network on the IRWSM2 kinematics of the noisy joint states, time mean over the "
      "record after the first 0.5 s";
  irw.p = hnn_irw.mean_estimate;
  irw.cov = hnn_irw.mean_std.array().square().matrix().asDiagonal();
  irw.has_cov = true;
  results->estimates.push_back(irw);
  return true;
}

// ---- Filters.

// The published x0: every joint state 1, the parameters (5, 0.5, 1, 1.5).
Eigen::VectorXd PublishedInitialState() {
  Eigen::VectorXd x0(10);
  x0 << 1, 1, 1, 1, 1, 1, 5, 0.5, 1, 1.5;
  return x0;
}

solvers::KalmanFilterOptions PaperFilterOptions(const Record& record) {
  solvers::KalmanFilterOptions o;
  o.process_noise = 10.0 * Eigen::MatrixXd::Identity(10, 10);
  o.initial_covariance = 10.0 * Eigen::MatrixXd::Identity(10, 10);
  o.initial_state = PublishedInitialState();
  o.measurement_covariance = record.r_paper;
  return o;
}

FilterSetup MakeFilterSetup(const Record& record) {
  const Model model(models::Scara3BaseParametersFromLinks(), EstimatorGravity());
  return {System(model, record.sim.time, record.sim.tau, solvers::Discretization::kForwardEuler, 1),
          System(model, record.sim.time, record.sim.tau, solvers::Discretization::kRk4,
                 FLAGS_rk4_substeps),
          PaperFilterOptions(record), TunedFilterOptions(record, record.y)};
}

bool RunEkf(const std::string& name, const std::string& description, const System& system,
            const solvers::EkfOptions& o, const Eigen::MatrixXd& y, FilterResults* filters,
            std::string* error) {
  FilterRun run;
  run.name = name;
  run.description = description;
  if (!solvers::RunExtendedKalmanFilter(system.Discrete(), y, o, &run.record, error)) {
    *error = name + ": " + *error;
    return false;
  }
  filters->runs.push_back(std::move(run));
  return true;
}

bool RunUkf(const std::string& name, const std::string& description, const System& system,
            const solvers::KalmanFilterOptions& o, const Eigen::MatrixXd& y, FilterResults* filters,
            std::string* error) {
  FilterRun run;
  run.name = name;
  run.description = description;
  run.is_ukf = true;
  const bool ok =
      solvers::RunSquareRootUkf(system.Discrete(), y, UkfOptionsFromFlags(o), &run.ukf, error);
  filters->ukf_json.push_back(
      {{"run", name},
       {"positive_definite_throughout", ok && run.ukf.positive_definite_throughout},
       {"min_sqrt_diagonal", run.ukf.min_sqrt_diagonal},
       {"sigma_point_evaluations", run.ukf.sigma_point_evaluations},
       {"message", ok ? run.ukf.record.message : *error}});
  if (!ok) {
    // The acceptance criterion of the study: the square-root UKF must keep P positive
    // definite on every run. A failure is an error of the whole study.
    *error = name + ": " + *error;
    return false;
  }
  run.record = run.ukf.record;
  filters->runs.push_back(std::move(run));
  return true;
}

bool RunFilters(const Record& record, const FilterSetup& setup, FilterResults* filters,
                std::string* error) {
  const Eigen::MatrixXd& y = record.y;
  if (!RunEkf("EKF_paper", "discrete EKF, forward Euler, published x0, P0 = Q = 10 I, R",
              setup.euler, solvers::EkfOptions{setup.paper}, y, filters, error) ||
      !RunEkf("EKF", "discrete EKF, RK4, tuned x0, P0, Q (constant parameters)", setup.rk4,
              solvers::EkfOptions{setup.tuned}, y, filters, error) ||
      !RunUkf("UKF", "square-root UKF, RK4, tuned x0, P0, Q", setup.rk4, setup.tuned, y, filters,
              error) ||
      !RunUkf("UKF_paper", "square-root UKF, forward Euler, published x0, P0 = Q = 10 I, R",
              setup.euler, setup.paper, y, filters, error)) {
    return false;
  }
  // The tuned EKF as the truncated second-order filter (Gelb (1974) §6.1).
  solvers::EkfOptions second_order{setup.tuned};
  second_order.second_order = true;
  if (!RunEkf("EKF_2nd", "second-order EKF, RK4, tuned x0, P0, Q (constant parameters)", setup.rk4,
              second_order, y, filters, error)) {
    return false;
  }
  // Continuous–discrete EKF (the project's general filter) with the tuned settings: intensity
  // Q/Δt so that Q Δt equals the discrete Q.
  solvers::ContinuousDiscreteEkfOptions co;
  co.process_noise_intensity = setup.tuned.process_noise / record.dt;
  co.measurement_covariance = setup.tuned.measurement_covariance;
  co.initial_state = setup.tuned.initial_state;
  co.initial_covariance = setup.tuned.initial_covariance;
  co.steps_per_sample = FLAGS_rk4_substeps;
  if (!solvers::RunContinuousDiscreteEkf(setup.rk4.ContinuousDiscrete(), record.sim.time, y, co,
                                         &filters->cd, error)) {
    *error = "CD-EKF: " + *error;
    return false;
  }
  if (!solvers::RunRtsSmoother(filters->runs[kEkfRun].record, &filters->ekf_rts, error) ||
      !solvers::RunRtsSmoother(filters->runs[kUkfRun].record, &filters->ukf_rts, error)) {
    *error = "RTS smoother: " + *error;
    return false;
  }
  return true;
}

void AddFilterEstimates(const Record& record, const FilterResults& filters,
                        std::vector<Estimate>* estimates) {
  for (const FilterRun& run : filters.runs) {
    Estimate e;
    e.method = run.name;
    e.description = run.description + ", final filtered value";
    e.p = FinalParameters(run.record.filtered_states);
    e.cov = FinalParameterCovariance(run.record.filtered_covariances);
    e.has_cov = true;
    estimates->push_back(e);
    if (run.name == "EKF_paper" || run.name == "UKF_paper") {
      Estimate m;
      m.method = run.name + "_mean";
      m.description = run.description + ", time mean of the filtered parameters";
      m.p = TimeMean(run.record.filtered_states.rightCols(4));
      const Eigen::MatrixXd d = run.record.filtered_states.rightCols(4).rowwise() - m.p.transpose();
      const Eigen::Vector4d var = (d.array().square().colwise().sum() / record.num).transpose();
      m.cov = var.asDiagonal();  // spread of the filtered trajectory about its mean
      m.has_cov = true;
      estimates->push_back(m);
    }
  }
  Estimate e;
  e.method = "CD_EKF";
  e.description = "continuous-discrete EKF (RK4 moment equations), tuned settings, final value";
  e.p = filters.cd.states.bottomRows(1).rightCols(4).transpose();
  e.cov = filters.cd.final_covariance.bottomRightCorner(4, 4);
  e.has_cov = true;
  estimates->push_back(e);
  Estimate se;
  se.method = "EKF_RTS";
  se.description = "RTS smoother over the tuned EKF, value at t0";
  se.p = filters.ekf_rts.states.row(0).tail(4).transpose();
  se.cov = filters.ekf_rts.covariances[0].bottomRightCorner(4, 4);
  se.has_cov = true;
  estimates->push_back(se);
  Estimate su = se;
  su.method = "UKF_RTS";
  su.description = "unscented RTS smoother over the tuned UKF, value at t0";
  su.p = filters.ukf_rts.states.row(0).tail(4).transpose();
  su.cov = filters.ukf_rts.covariances[0].bottomRightCorner(4, 4);
  estimates->push_back(su);
}

// ---- The project's batch weighted-residual smoother (after van de Molengraft (1990)) over the
// same record: positions, velocities and torques measured; shooting transcription, constant
// parameters.

problems::WeightedResidualWeights SmootherWeights(const Record& record) {
  // Per-sample weights 1/σ² (node spacing 1): the couplings as given weights, the equations of
  // motion and the measurements from their noise standard deviations.
  problems::NoiseStandardDeviations noise;
  noise.kinematic_weights.resize(6);
  noise.kinematic_weights << Eigen::Vector3d::Constant(1.0 / FLAGS_wr_position_intensity),
      Eigen::Vector3d::Constant(1.0 / FLAGS_wr_velocity_intensity);
  noise.equations = Eigen::Vector3d::Constant(FLAGS_wr_equation_std);
  noise.measurements.resize(9);
  for (int i = 0; i < 6; ++i) noise.measurements(i) = record.r_std(i);
  for (int j = 0; j < 3; ++j) {
    // A torque channel without noise gets the weight of a 1e-3 std.
    noise.measurements(6 + j) = record.torque_noise(j) > 0.0 ? record.torque_noise(j) : 1e-3;
  }
  problems::WeightedResidualWeights weights =
      problems::WeightedResidualWeights::FromStandardDeviations(noise, 1.0);
  weights.parameter = Eigen::Matrix4d::Identity();
  return weights;
}

// "measurements": the noisy positions and velocities themselves, zero accelerations (the
// kinematic residuals start at the size of the position noise / Δt, and the bilinear M(theta) a
// gives the inertias no gradient at a = 0: on short records Ceres stalls far from the optimum).
// "ukf_rts": the RTS-smoothed UKF joint states, accelerations by central differences of the
// smoothed velocities. The parameters start at the published x0 either way, so the smoother's
// parameter estimate is its own.
void SetInitialTrajectory(const Record& record, const solvers::RtsSmootherResult& ukf_rts,
                          problems::WeightedResidualVariables* variables) {
  const int num = record.num;
  const bool from_rts = FLAGS_wr_initial_trajectory == "ukf_rts";
  for (int k = 0; k < num; ++k) {
    for (int j = 0; j < 3; ++j) {
      if (from_rts) {
        variables->states(j, k) = ukf_rts.states(k, j);
        variables->states(3 + j, k) = ukf_rts.states(k, 3 + j);
        const int lo = std::max(0, k - 1), hi = std::min(num - 1, k + 1);
        variables->inputs(j, k) = (ukf_rts.states(hi, 3 + j) - ukf_rts.states(lo, 3 + j)) /
                                  (record.sim.time(hi) - record.sim.time(lo));
      } else {
        variables->states(j, k) = record.y(k, 2 * j);
        variables->states(3 + j, k) = record.y(k, 2 * j + 1);
      }
      variables->inputs(3 + j, k) = record.sim.tau_measured(k, j);
    }
  }
}

bool RunWeightedResidualSmoother(const Record& record, const FilterResults& filters,
                                 Results* results, std::string* error) {
  if (!FLAGS_wr_smoother) {
    results->summary["wr_smoother"] = nullptr;
    return true;
  }
  const models::Scara3TorqueModel wr_model(
      Model(models::Scara3BaseParametersFromLinks(), EstimatorGravity()));
  problems::WeightedResidualData wr_data;
  wr_data.time = record.sim.time;
  wr_data.measurements.resize(record.num, 9);
  wr_data.measurements << record.y, record.sim.tau_measured;
  const problems::WeightedResidualWeights weights = SmootherWeights(record);
  problems::WeightedResidualOptions wr_options;
  wr_options.transcription = problems::Transcription::kShooting;
  wr_options.parameter_mode = problems::ParameterMode::kConstant;
  problems::WeightedResidualVariables variables;
  problems::ResizeVariables(3, 3, PublishedInitialState().tail(4), record.num,
                            problems::ParameterMode::kConstant, &variables);
  SetInitialTrajectory(record, filters.ukf_rts, &variables);
  ceres::Problem problem;
  if (!problems::BuildWeightedResidualProblem(wr_model, wr_data, weights, wr_options, &variables,
                                              &problem, error)) {
    *error = "weighted-residual smoother: " + *error;
    return false;
  }
  solvers::WeightedResidualSmootherOptions so;
  so.max_iterations = FLAGS_wr_max_iterations;
  const solvers::SolverSummary ws = solvers::SolveWeightedResidual(&problem, &variables, so);
  Estimate e;
  e.method = "WR_smoother";
  e.description =
      "batch weighted-residual smoother (shooting, constant parameters) over "
      "positions, velocities and measured torques";
  e.p = variables.parameters.col(0);
  // The weights are set from assumed noise levels (--wr_equation_std and the kinematic
  // intensities are tuning values, not measured noise), so the residuals the data leave decide
  // the scale: the reported covariance is the sandwich with a variance factor per term of the
  // functional (solvers::ConstantParameterSandwichCovariance); the inverse information scaled by
  // one a posteriori variance factor 2 cost / (m − u) over the weighted residual rows is kept for
  // comparison (summary "std_variance_factor").
  const double variance_factor = solvers::ResidualVarianceFactor(
      problem, ws.final_cost, problems::CountWeightedResiduals(weights, wr_data, wr_options));
  Eigen::MatrixXd information;
  std::string why;
  nlohmann::json std_weights = nullptr, std_variance_factor = nullptr, std_hac = nullptr;
  nlohmann::json hac = nullptr;
  double hac_critical_value = NAN;
  if (solvers::ConstantParameterInformation(&problem, &variables, &information, &why)) {
    const solvers::IdentifiabilityReport report = solvers::AnalyzeIdentifiability(
        information, variables.parameters.col(0), {"IZZ1", "IZZ2", "mr", "m3"});
    std_weights = nlohmann::json::object();
    std_variance_factor = nlohmann::json::object();
    for (int i = 0; i < 4; ++i) {
      const double variance = std::max(0.0, report.covariance(i, i));
      std_weights[kParamNames[i]] = std::sqrt(variance);
      std_variance_factor[kParamNames[i]] = std::sqrt(variance * variance_factor);
    }
    solvers::SandwichCovariance sandwich;
    // The HAC form beside, with its white-noise reference (how much of its width the fit alone
    // gives; 64 draws, a few percent Monte Carlo error).
    solvers::SandwichOptions sandwich_options;
    sandwich_options.white_reference_draws = 64;
    if (solvers::ConstantParameterSandwichCovariance(&problem, &variables, wr_model.Info(), weights,
                                                     &sandwich, &why, sandwich_options)) {
      e.cov = sandwich.covariance;
      e.has_cov = true;
      std_hac = nlohmann::json::object();
      nlohmann::json reference = nlohmann::json::object(), excess = nlohmann::json::object();
      for (int i = 0; i < 4; ++i) {
        std_hac[kParamNames[i]] = sandwich.hac_standard_deviation(i);
        reference[kParamNames[i]] = sandwich.hac_white_reference_standard_deviation(i);
        excess[kParamNames[i]] = sandwich.hac_excess(i);
      }
      hac_critical_value = sandwich.hac_critical_value_95;
      hac = {{"lags", sandwich.hac.lags},
             {"bandwidth_fraction", sandwich.hac.bandwidth_fraction},
             {"score_lag1_autocorrelation", sandwich.hac.rho},
             {"white_reference_draws", sandwich.white_reference_draws},
             {"white_reference_std", reference},
             {"excess", excess}};
    }
  }
  results->estimates.push_back(e);
  results->summary["wr_smoother"] = {{"converged", ws.converged},
                                     {"variance_factor", variance_factor},
                                     {"std_in_metric_of_weights", std_weights},
                                     {"std_variance_factor", std_variance_factor},
                                     {"std_hac", std_hac},
                                     {"hac_critical_value_95", hac_critical_value},
                                     {"hac", hac},
                                     {"iterations", ws.iterations},
                                     {"initial_cost", ws.initial_cost},
                                     {"final_cost", ws.final_cost},
                                     {"time_s", ws.time_s},
                                     {"message", ws.message},
                                     {"covariance_message", why}};
  return true;
}

}  // namespace

std::map<std::string, const Estimate*> EstimatesByName(const std::vector<Estimate>& estimates) {
  std::map<std::string, const Estimate*> by_name;
  for (const Estimate& e : estimates) by_name[e.method] = &e;
  return by_name;
}

int FirstSampleAfterStartup(const Record& record) {
  int first = 0;
  while (first + 1 < record.num &&
         record.sim.time(first) < record.sim.time(0) + kStartupTransientS) {
    ++first;
  }
  return first;
}

Regression RowsFrom(const Regression& regression, int first) {
  Regression rows;
  const int num_rows = static_cast<int>(regression.tau.size()) - 3 * first;
  rows.phi = regression.phi.bottomRows(num_rows);
  rows.tau = regression.tau.tail(num_rows);
  return rows;
}

EstimatorRuns::EstimatorRuns(const Record& record)
    : regression(StackRegression(record)),
      regression_irw(StackIrwRegression(record)),
      setup(MakeFilterSetup(record)) {}

bool RunEstimators(const Record& record, EstimatorRuns* runs, Results* results,
                   std::string* error) {
  RunLeastSquares(record, *runs, results);
  if (!RunHopfield(record, runs->regression, runs->regression_irw, &runs->hnn, results, error)) {
    return false;
  }
  if (!RunFilters(record, runs->setup, &runs->filters, error)) return false;
  AddFilterEstimates(record, runs->filters, &results->estimates);
  return RunWeightedResidualSmoother(record, runs->filters, results, error);
}

solvers::KalmanFilterOptions TunedFilterOptions(const Record& record, const Eigen::MatrixXd& y) {
  const Eigen::VectorXd x0 = PublishedInitialState();
  const Vector6d& r_std = record.r_std;
  solvers::KalmanFilterOptions o;
  Eigen::VectorXd p0(10);
  o.initial_state = x0;
  for (int j = 0; j < 3; ++j) {
    o.initial_state(j) = y(0, 2 * j);
    o.initial_state(3 + j) = y(0, 2 * j + 1);
    p0(j) = r_std(2 * j) * r_std(2 * j);
    p0(3 + j) = r_std(2 * j + 1) * r_std(2 * j + 1);
  }
  for (int i = 6; i < 10; ++i) {
    const double sd = FLAGS_prior_std_fraction * std::abs(x0(i));
    p0(i) = sd * sd;
  }
  o.process_noise = ProcessNoise(FLAGS_q_state, FLAGS_q_param);
  o.initial_covariance = p0.asDiagonal();
  o.measurement_covariance = record.r_paper;
  return o;
}

Eigen::Vector4d FinalParameters(const Eigen::MatrixXd& states) {
  return states.bottomRows(1).rightCols(4).transpose();
}
Eigen::Matrix4d FinalParameterCovariance(const std::vector<Eigen::MatrixXd>& covs) {
  return covs.back().bottomRightCorner(4, 4);
}

// Time mean of the parameter columns of a filter over the whole record (trapezoid).
Eigen::Vector4d TimeMean(const Eigen::MatrixXd& params) {
  const int n = static_cast<int>(params.rows());
  if (n < 2) return params.row(0).transpose();
  Eigen::Vector4d s = Eigen::Vector4d::Zero();
  for (int k = 0; k + 1 < n; ++k) s += 0.5 * (params.row(k) + params.row(k + 1)).transpose();
  return s / (n - 1);
}

// Diagonal: q_state on the six joint states, q_param on the four parameters.
Eigen::MatrixXd ProcessNoise(double q_state, double q_param) {
  Eigen::VectorXd q(10);
  q << Eigen::VectorXd::Constant(6, q_state), Eigen::VectorXd::Constant(4, q_param);
  return q.asDiagonal();
}

}  // namespace dynid::scara_study
