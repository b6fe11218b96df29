// experiments/backlash_study/backlash_estimators — the estimators run on one case (see
// backlash_estimators.h).
#include "experiments/backlash_study/backlash_estimators.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "dynid/data/excitation_signals.h"
#include "dynid/problems/backlash_smoother_problem.h"
#include "experiments/backlash_study/backlash_flags.h"

namespace dynid::backlash_study {
namespace {

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

double Rms(const Eigen::VectorXd& v) { return std::sqrt(v.squaredNorm() / v.size()); }

// The two tau_K errors of an estimate: at the sample instants, and against the mean of the true
// torque over the interval the estimate is held over (trapezoid), which is what tau_K,k stands
// for in the zero-order-hold model of the SAEKF and the smoothers.
void SetTauErrors(const Eigen::VectorXd& estimate, const Eigen::VectorXd& truth,
                  EstimatorOutcome* outcome) {
  const Eigen::Index n = truth.size();
  outcome->tau_rms_error = Rms(estimate - truth);
  outcome->tau_rms_error_interval =
      Rms(estimate.head(n - 1) - 0.5 * (truth.head(n - 1) + truth.tail(n - 1)));
}

int FitStride(int n) { return std::max(1, (n + FLAGS_max_fit_pairs - 1) / FLAGS_max_fit_pairs); }

bool FitPairs(const Eigen::VectorXd& delta, const Eigen::VectorXd& tau, std::uint64_t seed,
              double duration_s, solvers::DeadZoneFit* fit, std::string* error) {
  const int n = static_cast<int>(delta.size());
  const int stride = FitStride(n);
  const int m = (n + stride - 1) / stride;
  Eigen::VectorXd d(m), t(m);
  for (int i = 0; i < m; ++i) d(i) = delta(i * stride), t(i) = tau(i * stride);
  solvers::DeadZoneFitOptions options;
  options.bootstrap_replicates = FLAGS_bootstrap;
  options.seed = seed;
  // 0: all cores for a single run; one per fit in a Monte Carlo, whose runs share the cores.
  options.num_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (FLAGS_monte_carlo > 0) options.num_threads = 1;
  if (FLAGS_fit_threads > 0) options.num_threads = FLAGS_fit_threads;
  options.center_segments =
      FLAGS_center_window_s > 0.0
          ? std::max(1, static_cast<int>(std::lround(duration_s / FLAGS_center_window_s)))
          : 0;
  return solvers::FitDeadZone(d, t, options, fit, error);
}

// An estimator that stopped before converging gives no verdict, whatever its fit says: its
// (Δ, tau_K) pairs are not the estimate the model defines.
void MarkNotConverged(const std::string& what, const solvers::SolverSummary& summary,
                      EstimatorOutcome* outcome) {
  outcome->converged = false;
  outcome->fit.backlash_detected = false;
  outcome->fit.verdict = "no verdict: " + what + " did not converge (" +
                         std::to_string(summary.iterations) + " iterations: " + summary.message +
                         ")";
}

}  // namespace

std::string VerdictLabel(const EstimatorOutcome& outcome) {
  if (!outcome.converged) return "NOT CONVERGED: no verdict";
  if (outcome.fit.backlash_detected) return "backlash";
  return outcome.fit.verdict.rfind("no backlash detected", 0) == 0 ? "no backlash detected"
                                                                   : "backlash not established";
}

// The fitted centre at sample k (the fit ran on every FitStride-th pair).
double FittedCenter(const solvers::DeadZoneFit& fit, int k, int n) {
  const int stride = FitStride(n);
  const int m = (n + stride - 1) / stride;
  return solvers::DeadZoneCenterAt(fit, std::min(k / stride, m - 1), m);
}

bool RunCase(const Case& config, int samples, double qpp, std::uint64_t seed, CaseRun* run,
             std::string* error) {
  run->config = config;
  run->samples = samples;
  // The estimators' model (the true one unless --model_*_scale perturbs it); the simulator keeps
  // the truth.
  const models::TwoMassTransmission model(config.estimator_parameters);
  const double ts = config.sample_period_s;
  if (config.measured) {
    // (The first `samples` rows; only time and input of the record are known.)
    run->record.sample_period_s = ts;
    run->record.time = config.time.head(samples);
    run->record.input = config.input.head(samples);
    run->measurements = config.measurements.topRows(samples);
  } else {
    const Eigen::VectorXd signal = config.prbs
                                       ? data::PrbsSignal(samples, ts, config.prbs_options)
                                       : data::SweptSineSignal(samples, ts, config.sine_options);
    run->record = models::SimulateTransmission(
        models::TwoMassTransmission(config.parameters), signal, ts,
        models::TwoMassTransmission::State::Zero(), FLAGS_simulation_substeps);
    run->measurements = models::AddVelocityNoise(run->record, config.measure_arm_velocity,
                                                 config.measurement_variance, seed);
    if (config.encoder_counts > 0) {
      // Unmodelled: encoder differences in place of the velocities, the same noise added.
      const Eigen::Index l = run->measurements.cols();
      run->measurements += models::EncoderVelocities(run->record, config.measure_arm_velocity,
                                                     config.encoder_counts) -
                           run->record.states.middleCols(2, l);
    }
  }
  const Eigen::VectorXd& input = run->record.input;

  solvers::SaekfOptions saekf;
  saekf.state_noise_intensity = config.state_noise_intensity;
  saekf.tau_noise_intensity = qpp;
  saekf.measurement_variance = config.measurement_variance;
  saekf.measure_arm_velocity = config.measure_arm_velocity;
  saekf.steps_per_sample = FLAGS_rk4_steps;
  double cpu_start = CpuSeconds();
  if (!solvers::RunSaekf(model, input, ts, run->measurements, saekf, &run->saekf, error)) {
    return false;
  }
  run->filter_outcome.cpu_s = CpuSeconds() - cpu_start;
  problems::BacklashSmootherData smoother_data;
  smoother_data.sample_period_s = ts;
  smoother_data.input = input;
  smoother_data.measurements = run->measurements;
  problems::BacklashSmootherProblemOptions problem_options;
  problem_options.state_noise_intensity = config.state_noise_intensity;
  problem_options.tau_noise_intensity = qpp;
  problem_options.measurement_variance = config.measurement_variance;
  problem_options.rk4_steps_per_sample = FLAGS_rk4_steps;
  solvers::BacklashSmootherOptions smoother_options;
  smoother_options.max_iterations = FLAGS_smoother_iterations;
  smoother_options.progress.log_progress = FLAGS_log_progress;
  smoother_options.use_eigen_sparse = FLAGS_eigen_sparse;
  smoother_options.initial_trust_region_radius = FLAGS_trust_region_radius;
  smoother_options.refine_trust_region_radius = FLAGS_refine_radius;
  smoother_options.num_threads = FLAGS_threads;
  smoother_options.progress.progress_period_s = FLAGS_progress_period;
  cpu_start = CpuSeconds();
  if (!solvers::RunBacklashSmoother(model, smoother_data, problem_options, smoother_options,
                                    run->saekf.states, run->saekf.tau, &run->smoother, error)) {
    return false;
  }
  run->filter_outcome.tau = run->saekf.tau;
  run->filter_outcome.delta = run->saekf.delta;
  run->filter_outcome.states = run->saekf.states;
  run->filter_outcome.time_s = run->saekf.filter.time_s;
  run->smoother_outcome.tau = run->smoother.tau;
  run->smoother_outcome.delta = run->smoother.delta;
  run->smoother_outcome.states = run->smoother.states;
  run->smoother_outcome.time_s = run->smoother.summary.time_s;
  run->smoother_outcome.cpu_s = CpuSeconds() - cpu_start;
  run->has_q0 = FLAGS_smoother_q0 && (config.state_noise_intensity.array() > 0.0).any();
  std::vector<EstimatorOutcome*> outcomes = {&run->filter_outcome, &run->smoother_outcome};
  if (run->has_q0) {
    problem_options.state_noise_intensity.setZero();
    cpu_start = CpuSeconds();
    if (!solvers::RunBacklashSmoother(model, smoother_data, problem_options, smoother_options,
                                      run->saekf.states, run->saekf.tau, &run->smoother_q0,
                                      error)) {
      return false;
    }
    run->q0_outcome.tau = run->smoother_q0.tau;
    run->q0_outcome.delta = run->smoother_q0.delta;
    run->q0_outcome.states = run->smoother_q0.states;
    run->q0_outcome.time_s = run->smoother_q0.summary.time_s;
    run->q0_outcome.cpu_s = CpuSeconds() - cpu_start;
    outcomes.push_back(&run->q0_outcome);
  }
  for (EstimatorOutcome* outcome : outcomes) {
    if (!config.measured) SetTauErrors(outcome->tau, run->record.spring_torque, outcome);
    cpu_start = CpuSeconds();
    if (!FitPairs(outcome->delta, outcome->tau, seed + 1, samples * ts, &outcome->fit, error)) {
      return false;
    }
    outcome->fit_cpu_s = CpuSeconds() - cpu_start;
  }
  run->has_shape = FLAGS_shape_refinement;
  if (run->has_shape) {
    // Start from the free smoother and its dead-zone fit; a transmission reported backlash-free
    // is refined as a linear spring (b held at 0).
    const solvers::DeadZoneFit& start = run->smoother_outcome.fit;
    problems::BacklashShapeOptions shape_options;
    shape_options.shape_residual_std_nm = FLAGS_shape_std;
    if (!problems::ParseShapeCurvePoint(FLAGS_shape_curve, &shape_options.curve_point, error)) {
      return false;
    }
    shape_options.hold_backlash_at_zero = !start.backlash_detected && !FLAGS_shape_free_backlash;
    Eigen::Vector3d spring(
        start.center_rad, start.backlash_detected ? start.backlash_rad : 0.0,
        start.backlash_detected ? start.stiffness_nm_per_rad : start.linear_stiffness_nm_per_rad);
    problem_options.state_noise_intensity = config.state_noise_intensity;
    if (!problems::ParseTauHold(FLAGS_shape_hold, &problem_options.tau_hold, error)) return false;
    Eigen::MatrixXd shape_start = run->smoother.states;
    if (problem_options.tau_hold == problems::TauHold::kFirstOrder && start.backlash_detected) {
      // The free smoother's Δ drifts (with x3 alone by metres of arm travel over the record) and
      // the fit follows it with a moving centre c(t); the shape problem has one constant c. Its
      // start is the free trajectory with that drift removed, Δ_k − c(t_k) + c(t_0), and c(t_0):
      // from the free trajectory as it is, with c at the mean of the knots, the solve ended on
      // Simulation 1 with Δ half the gap off during the first contacts (a misfit of 0.2–0.5 N m
      // RMS off the curve in the first 2 s, posterior variance factor ~180; seed 2002).
      const int n = static_cast<int>(shape_start.rows());
      const double c0 = FittedCenter(start, 0, n);
      for (int k = 0; k < n; ++k) {
        shape_start(k, 1) += FittedCenter(start, k, n) - c0;  // x2: Δ = x1 − x2 moves by −(c − c0)
      }
      spring(0) = c0;
    }
    cpu_start = CpuSeconds();
    // One phase: the shape problem starts from the free smoother's settled trajectory, and a
    // restart would cost more (~1 s at 1e5 samples) than the iterations it saves.
    solvers::BacklashSmootherOptions shape_solver_options = smoother_options;
    shape_solver_options.refine_trust_region_radius = 0.0;
    shape_solver_options.function_tolerance = FLAGS_shape_function_tolerance;
    if (!solvers::RunBacklashShapeSmoother(model, smoother_data, problem_options, shape_options,
                                           shape_solver_options, shape_start, run->smoother.tau,
                                           spring, &run->shape, error)) {
      return false;
    }
    EstimatorOutcome& out = run->shape_outcome;
    out.tau = run->shape.smoother.tau;
    out.delta = run->shape.smoother.delta;
    out.states = run->shape.smoother.states;
    out.time_s = run->shape.smoother.summary.time_s;
    out.cpu_s = CpuSeconds() - cpu_start;
    if (!config.measured) SetTauErrors(out.tau, run->record.spring_torque, &out);
    // Report in the dead-zone fit's terms: intervals ±1.96 σ from the covariance.
    solvers::DeadZoneFit& fit = out.fit;
    const solvers::BacklashShapeResult& shape = run->shape;
    fit.center_rad = shape.spring(0);
    fit.centers_rad = {shape.spring(0)};
    fit.backlash_rad = shape.spring(1);
    fit.stiffness_nm_per_rad = shape.spring(2);
    fit.linear_stiffness_nm_per_rad = start.linear_stiffness_nm_per_rad;
    fit.linear_center_rad = start.linear_center_rad;
    const double z = 1.959963984540054;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const bool cov = shape.covariance_valid;
    // b on its bound 0: no interval for b (the covariance is that of [c, K] with b held).
    const bool cov_b = cov && !shape.b_on_bound && !shape_options.hold_backlash_at_zero;
    fit.center_lower = cov ? shape.spring(0) - z * shape.spring_std(0) : nan;
    fit.center_upper = cov ? shape.spring(0) + z * shape.spring_std(0) : nan;
    fit.backlash_std = cov_b ? shape.spring_std(1) : nan;
    fit.stiffness_std = cov ? shape.spring_std(2) : nan;
    fit.backlash_lower = cov_b ? std::max(0.0, shape.spring(1) - z * shape.spring_std(1)) : nan;
    fit.backlash_upper = cov_b ? shape.spring(1) + z * shape.spring_std(1) : nan;
    fit.stiffness_lower = cov ? shape.spring(2) - z * shape.spring_std(2) : nan;
    fit.stiffness_upper = cov ? shape.spring(2) + z * shape.spring_std(2) : nan;
    fit.num_points = samples;
    fit.iterations = shape.smoother.summary.iterations;
    if (!shape.smoother.summary.converged) {
      MarkNotConverged("the shape-constrained smoother", shape.smoother.summary, &out);
    } else if (shape_options.hold_backlash_at_zero) {
      fit.backlash_detected = false;
      fit.verdict = "no backlash detected (refined as a linear spring, b held at 0)";
    } else if (shape.b_on_bound) {
      fit.backlash_detected = false;
      fit.verdict = "no backlash detected (b ends on its bound 0)";
    } else {
      fit.backlash_detected = cov_b && fit.backlash_lower > 0.0;
      fit.verdict = fit.backlash_detected ? "backlash detected (b > 0 at 95 %)"
                    : cov_b ? "no backlash detected (the 95 % interval of b reaches 0)"
                            : "backlash not established (" + shape.covariance_note + ")";
    }
  }
  // Verdicts only where the estimator converged. Marked after the shape stage, which starts from
  // the free smoother's fit as it is (its start must not depend on this report).
  run->filter_outcome.converged = run->saekf.filter.converged;
  if (!run->filter_outcome.converged) {
    run->filter_outcome.fit.backlash_detected = false;
    run->filter_outcome.fit.verdict = "no verdict: the SAEKF did not run to the end";
  }
  if (!run->smoother.summary.converged) {
    MarkNotConverged("the smoother", run->smoother.summary, &run->smoother_outcome);
  }
  if (run->has_q0 && !run->smoother_q0.summary.converged) {
    MarkNotConverged("the smoother with Q_xx = 0", run->smoother_q0.summary, &run->q0_outcome);
  }
  return true;
}

}  // namespace dynid::backlash_study
