// backlash_study — backlash and spring identification in a two-mass robot transmission
// (Hovland et al. (2002)).
//
// Question: from the motor torque and measured velocities of a motor–arm pair, how large is the
// backlash b and how stiff is the spring K, without assuming the shape of the transmission torque
// tau_K(Δ)? Method: tau_K is an unknown random walk (intensity Q_pp) estimated as an augmented
// state, (a) recursively by the SAEKF of Hovland et al. (2002) Table 1
// (solvers/continuous_discrete_ekf.h), (b) by the batch smoother over the whole record
// (problems/backlash_smoother_problem.h, solved by Ceres from the SAEKF start); b and K then come
// from a robust dead-zone fit of the (Δ, tau_K) pairs with block-bootstrap confidence intervals
// (solvers/dead_zone_fit.h); (c) the shape-constrained smoother (estimator smoother_shape, the
// reported result) solves the batch problem again with tau_K tied to that dead-zone curve,
// estimating [c, b, K] with the states, with intervals from the Schur-complement covariance
// (solvers/backlash_smoother.h). Cases:
//   sim1    Hovland et al. (2002) Simulation 1: m1 = 0.006442, m2 = 0.023454, D = 0.01, Kr = 1,
//           Cv = 0.2, Cc = 0, b = 0.2 rad, K = 37 Nm/rad; Q_pp = 1, R = 2.5e-4, Q_xx = 0;
//           motor velocity measured only; a swept-sine torque (the paper's Fig. 5 profile is
//           not tabulated).
//   sim2    Hovland et al. (2002) Simulation 2: m1 = 0.0008, m2 = 0.001765, D = 0.01, Kr = 0,
//           Cc = 0.27, Cv = 0.01, alpha = 100, b = 0.1 rad, K = 79 Nm/rad; Q_pp = 100, R = 1,
//           Q_xx = diag(0, 0, 1000, 0); motor and arm velocity measured; PRBS torque.
//   linear  the Simulation 2 axis with a backlash-free linear spring K = 67 Nm/rad (the real axis
//           of Hovland et al. (2002) §7); must be reported as "no backlash detected".
// Success: smoother b and K within 10 % on sim2, within 20 % on sim1 (or an explanation
// with figures), the linear case backlash-free; a Q_pp scan shows the sensitivity.
//
//   backlash_study [--cases=sim1,sim2,linear] [--samples=N] [--seed=S] [--out_dir=D]
//                  [--qpp_factors=0.1,1,10] [--figures=true]
//   backlash_study --measurements_csv=F [--motor_inertia=…] [--arm_inertia=…] [--damping=…]
//                  [--position_gain=…] [--viscous_friction=…] [--coulomb_friction=…]
//                  [--friction_sharpness=…] [--qpp=…] [--measurement_variance=…] [--qxx=…]
//
// Measured data (--measurements_csv): one record with the header t,u,x3 (motor velocity
// measured) or t,u,x3,x4 (motor and arm velocity), in s, N m, rad/s, rad/s; time strictly
// increasing with a uniform step (within 1 % of the record's mean step: the SAEKF and the
// smoother hold u over each sample interval); at least 100 rows. u_k is the torque applied over
// [t_k, t_{k+1}). The mechanical parameters other than b and K are known a priori (Hovland et al.
// (2002) §7) and come from the flags (defaults: the Simulation 2 axis), the covariances from --qxx,
// --qpp, --measurement_variance. The record is the only case (named "measured"); the Q_pp scan
// runs on it; there is no truth, so errors against it are not reported (NaN in results.csv).
//
// Writes D/<case>_series.csv (every k-th sample, k so that at most --max_plot_rows rows), D/<case>_
// tau_vs_delta.png (Figs. 7, 12), D/<case>_tau_vs_time.png (Fig. 8), D/<case>_errors.png
// (Fig. 11), D/qpp_sweep.csv (long form), D/qpp_sweep_<case>.csv and .png (b, K errors and
// tau_K RMS error against Q_pp), D/results.csv and D/summary.json (flags, seeds, every estimate
// with its interval, solver summaries, wall and CPU times). For a measured record the columns
// and figure series that need the true system (true states, tau_K, errors) are left out.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/excitation_signals.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/models/two_mass_transmission.h"
#include "dynid/problems/backlash_smoother_problem.h"
#include "dynid/solvers/backlash_smoother.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/dead_zone_fit.h"
#include "experiments/common/cli.h"

DEFINE_string(cases, "sim1,sim2,linear", "comma-separated cases: sim1, sim2, linear");
DEFINE_int32(samples, 0, "samples per case (0 = the case's default record length)");
DEFINE_uint64(seed, 2002,
              "measurement-noise seed of sim1 (sim2: +1, linear: +2; the PRBS uses a fixed LFSR "
              "start)");
DEFINE_string(out_dir, "out/backlash_study", "output folder");
DEFINE_string(qpp_factors, "0.1,1,10",
              "Q_pp scan: factors applied to each case's Q_pp (empty = no scan)");
DEFINE_string(sweep_cases, "sim1,sim2", "cases for the Q_pp scan");
DEFINE_int32(smoother_iterations, 50, "maximum Levenberg-Marquardt iterations of the smoother");
DEFINE_int32(bootstrap, 200, "bootstrap replicates of the dead-zone fit");
DEFINE_int32(fit_threads, 0,
             "threads for the dead-zone fits' bootstrap refits (0 = all cores; same result for "
             "any count)");
DEFINE_int32(max_fit_pairs, 5000, "the dead-zone fit uses every k-th pair, at most this many");
DEFINE_int32(max_plot_rows, 20000, "rows of the per-case CSV used by the figures");
DEFINE_int32(rk4_steps, 1, "RK4 steps per sample in the SAEKF and the smoother");
DEFINE_int32(simulation_substeps, 20, "RK4 substeps per sample of the true system");
DEFINE_double(prbs_amplitude, 3.0, "sim2/linear: PRBS torque amplitude [Nm]");
DEFINE_double(prbs_clock, 10e-3, "sim2/linear: PRBS clock period [s]");
DEFINE_double(sine_amplitude, 2.0, "sim1: swept-sine torque amplitude [Nm]");
DEFINE_bool(shape_refinement, true,
            "after the dead-zone fit, solve the smoother again with tau_K tied to the fitted "
            "dead-zone curve, estimating [c, b, K] with the states (estimator smoother_shape)");
DEFINE_string(shape_curve, "average",
              "smoother_shape: where tau_K,k (held over [t_k, t_{k+1}]) meets the dead-zone "
              "curve: average (mean over the interval), midpoint (at ½ (Δ_k + Δ_{k+1})), node "
              "(at Δ_k)");
DEFINE_bool(shape_free_backlash, true,
            "smoother_shape: estimate b even when the free smoother's fit found no backlash "
            "(false: such transmissions are refined as a linear spring, b held at 0)");
DEFINE_double(shape_std, 1e-2,
              "smoother_shape: admitted deviation of tau_K from the dead-zone curve [Nm]");
DEFINE_bool(smoother_q0, true,
            "also run the smoother with Q_xx = 0 (the floor): the simulated truth has no process "
            "noise; the paper's Q_xx(3,3) = 1000 is a filter-robustness inflation (only for cases "
            "with a non-zero Q_xx)");
DEFINE_double(center_window_s, 0.1,
              "dead-zone fit: the centre is piecewise linear in time with knots this far apart, "
              "absorbing the drift of the estimated Δ (0 = one constant centre)");
DEFINE_bool(eigen_sparse, false, "smoother: Eigen's sparse Cholesky instead of SuiteSparse");
DEFINE_double(trust_region_radius, 1e12, "smoother: initial Levenberg-Marquardt trust region");
DEFINE_double(refine_radius, 1e3,
              "smoother: trust region the refinement phase restarts from (0: one phase; see "
              "solvers::BacklashSmootherOptions)");
DEFINE_double(shape_function_tolerance, 1e-4,
              "shape-constrained refinement: relative cost change that ends the solve");
DEFINE_int32(threads, 1, "smoother: threads for Jacobian evaluation");
DEFINE_string(measurements_csv, "",
              "measured record t,u,x3[,x4] (see the header comment); empty = the simulated cases");
DEFINE_double(motor_inertia, 0.0008, "measured record: motor inertia m1 [kg m^2]");
DEFINE_double(arm_inertia, 0.001765, "measured record: arm inertia m2 [kg m^2]");
DEFINE_double(damping, 0.01, "measured record: transmission damping D [N m s/rad]");
DEFINE_double(position_gain, 0.0, "measured record: position feedback gain Kr [N m/rad]");
DEFINE_double(viscous_friction, 0.01, "measured record: motor viscous friction Cv [N m s/rad]");
DEFINE_double(coulomb_friction, 0.27, "measured record: motor Coulomb friction Cc [N m]");
DEFINE_double(friction_sharpness, 100.0,
              "measured record: alpha of Cc (2/pi) atan(alpha x3) [s/rad]");
DEFINE_double(qpp, 100.0, "measured record: random-walk intensity Q_pp of tau_K [(N m)^2/s]");
DEFINE_double(measurement_variance, 1.0, "measured record: velocity noise variance R [(rad/s)^2]");
DEFINE_string(qxx, "0,0,1000,0", "measured record: diagonal of the state noise intensity Q_xx");
DEFINE_bool(figures, true, "render figures (python3 + matplotlib)");
DEFINE_bool(log_progress, false, "log smoother progress (every --progress_period seconds)");
DEFINE_double(progress_period, 1.0, "seconds between smoother progress lines");

namespace {

using dynid::cli::Fail;

namespace models = dynid::models;
namespace problems = dynid::problems;
namespace solvers = dynid::solvers;
namespace data = dynid::data;

struct Case {
  std::string name;
  std::string description;
  models::TwoMassTransmissionParameters parameters;
  double sample_period_s = 1e-4;
  int default_samples = 20000;
  bool prbs = true;
  data::PrbsOptions prbs_options;
  data::SweptSineOptions sine_options;
  bool measure_arm_velocity = true;
  Eigen::Vector4d state_noise_intensity = Eigen::Vector4d::Zero();
  double tau_noise_intensity = 100.0;
  double measurement_variance = 1.0;
  // A measured record (--measurements_csv) instead of a simulation: no true system.
  bool measured = false;
  std::string source;            // the CSV file
  Eigen::VectorXd time, input;   // N, s and N m
  Eigen::MatrixXd measurements;  // N × (1 or 2), [x3] or [x3, x4] in rad/s
};

// The true b of a simulated case (0 for the linear spring).
double TrueBacklash(const Case& c) {
  return c.parameters.shape == models::SpringShape::kLinear ? 0.0 : c.parameters.backlash_rad;
}

Case MakeCase(const std::string& name) {
  Case c;
  c.name = name;
  if (name == "sim1") {
    c.description = "Hovland et al. (2002) Simulation 1 (motor velocity only)";
    c.parameters = models::SeedSimulation1Parameters();
    c.sample_period_s = 1e-3;
    c.default_samples = 20000;
    c.prbs = false;
    c.sine_options.amplitude = FLAGS_sine_amplitude;
    c.sine_options.start_frequency_hz = 0.5;
    c.sine_options.end_frequency_hz = 5.0;
    c.measure_arm_velocity = false;
    c.tau_noise_intensity = 1.0;
    c.measurement_variance = 2.5e-4;
  } else {
    c.description = name == "sim2" ? "Hovland et al. (2002) Simulation 2 (motor and arm velocity)"
                                   : "Simulation 2 axis, linear spring K = 67 Nm/rad";
    c.parameters = models::SeedSimulation2Parameters();
    if (name == "linear") {
      c.parameters.shape = models::SpringShape::kLinear;
      c.parameters.backlash_rad = 0.0;
      c.parameters.stiffness_nm_per_rad = 67.0;
    }
    c.sample_period_s = 1e-4;
    c.default_samples = 20000;
    c.prbs = true;
    c.prbs_options.amplitude = FLAGS_prbs_amplitude;
    c.prbs_options.clock_period_s = FLAGS_prbs_clock;
    c.prbs_options.register_bits = 11;
    c.prbs_options.seed = 0x5a5;
    c.measure_arm_velocity = true;
    c.state_noise_intensity << 0.0, 0.0, 1000.0, 0.0;
    c.tau_noise_intensity = 100.0;
    c.measurement_variance = 1.0;
  }
  return c;
}

// The measured case from --measurements_csv and the model flags; false with a message naming
// the file and line, or the flag.
bool MakeMeasuredCase(const std::string& path, Case* c, std::string* error) {
  c->name = "measured";
  c->measured = true;
  c->source = path;
  c->description = "measured record " + path;
  models::TwoMassTransmissionParameters& p = c->parameters;
  struct KnownParameter {
    const char* flag;
    double value;
    double* field;
    bool positive;  // > 0 (else >= 0)
  };
  const KnownParameter known[] = {
      {"motor_inertia", FLAGS_motor_inertia, &p.motor_inertia_kgm2, true},
      {"arm_inertia", FLAGS_arm_inertia, &p.arm_inertia_kgm2, true},
      {"damping", FLAGS_damping, &p.damping_nms_per_rad, false},
      {"position_gain", FLAGS_position_gain, &p.position_gain_nm_per_rad, false},
      {"viscous_friction", FLAGS_viscous_friction, &p.viscous_friction_nms_per_rad, false},
      {"coulomb_friction", FLAGS_coulomb_friction, &p.coulomb_friction_nm, false},
      {"friction_sharpness", FLAGS_friction_sharpness, &p.friction_sharpness_s_per_rad, true}};
  for (const KnownParameter& k : known) {
    if (!std::isfinite(k.value) || !(k.positive ? k.value > 0.0 : k.value >= 0.0)) {
      *error = std::string("--") + k.flag + " must be a number " + (k.positive ? "> 0" : ">= 0");
      return false;
    }
    *k.field = k.value;
  }
  if (!(FLAGS_qpp > 0.0) || !std::isfinite(FLAGS_qpp)) {
    *error = "--qpp must be a number > 0";
    return false;
  }
  if (!(FLAGS_measurement_variance > 0.0) || !std::isfinite(FLAGS_measurement_variance)) {
    *error = "--measurement_variance must be a number > 0";
    return false;
  }
  const std::vector<std::string> qxx = data::SplitList(FLAGS_qxx);
  if (qxx.size() != 4) {
    *error =
        "--qxx: expected 4 comma-separated numbers (the diagonal of Q_xx), got '" + FLAGS_qxx + "'";
    return false;
  }
  for (int i = 0; i < 4; ++i) {
    char* end = nullptr;
    const double value = std::strtod(qxx[i].c_str(), &end);
    if (qxx[i].empty() || *end != '\0' || !(value >= 0.0) || !std::isfinite(value)) {
      *error = "--qxx: '" + qxx[i] + "' is not a number >= 0";
      return false;
    }
    c->state_noise_intensity(i) = value;
  }
  c->tau_noise_intensity = FLAGS_qpp;
  c->measurement_variance = FLAGS_measurement_variance;

  data::CsvTable table;
  if (!data::ReadCsv(path, &table, error)) return false;
  const std::vector<std::string> motor_only = {"t", "u", "x3"}, both = {"t", "u", "x3", "x4"};
  if (table.header != motor_only && table.header != both) {
    std::string got;
    for (const std::string& name : table.header) got += (got.empty() ? "" : ",") + name;
    *error = path + ":1: expected the header t,u,x3 (motor velocity) or t,u,x3,x4 (motor and " +
             "arm velocity), got " + got;
    return false;
  }
  const int rows = static_cast<int>(table.values.rows());
  if (rows < 100) {
    *error = path + ": expected at least 100 data rows, got " + std::to_string(rows);
    return false;
  }
  double step = 0.0;
  if (!data::CheckTimeColumnIncreasing(table, path, error) ||
      !data::CheckUniformTimeStep(table, path, 0, false, 0.01,
                                  "the estimators need a uniform sample period", &step, error)) {
    return false;
  }
  const Eigen::VectorXd t = table.values.col(0);
  c->sample_period_s = step;
  c->default_samples = rows;
  c->measure_arm_velocity = table.header.size() == 4;
  c->time = t;
  c->input = table.values.col(1);
  c->measurements = table.values.rightCols(table.header.size() - 2);
  return true;
}

struct EstimatorOutcome {
  Eigen::VectorXd tau, delta;
  Eigen::MatrixXd states;
  solvers::DeadZoneFit fit;
  // Against the true tau_K(Δ(t_k)), and against ½ (tau_K(t_k) + tau_K(t_{k+1})), k < N − 1
  // (NaN for a measured record).
  double tau_rms_error = std::numeric_limits<double>::quiet_NaN();
  double tau_rms_error_interval = std::numeric_limits<double>::quiet_NaN();
  double time_s = 0.0;     // wall time of the estimator's solve
  double cpu_s = 0.0;      // process CPU time of the same (std::clock)
  double fit_cpu_s = 0.0;  // process CPU time of its dead-zone fit (with the bootstrap)
};

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// The measurement-noise seed of a case: --seed plus 0, 1, 2 for sim1, sim2, linear, the same in
// the main table and in the Q_pp scan (whose factor-1 row then repeats the table's).
std::uint64_t NoiseSeed(const std::string& case_name) {
  return FLAGS_seed + (case_name == "sim1" ? 0 : case_name == "sim2" ? 1 : 2);
}

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

// The fitted centre at sample k (the fit ran on every FitStride-th pair).
double FittedCenter(const solvers::DeadZoneFit& fit, int k, int n) {
  const int stride = FitStride(n);
  const int m = (n + stride - 1) / stride;
  return solvers::DeadZoneCenterAt(fit, std::min(k / stride, m - 1), m);
}

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
  options.num_threads = FLAGS_fit_threads > 0
                            ? FLAGS_fit_threads
                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  options.center_segments =
      FLAGS_center_window_s > 0.0
          ? std::max(1, static_cast<int>(std::lround(duration_s / FLAGS_center_window_s)))
          : 0;
  return solvers::FitDeadZone(d, t, options, fit, error);
}

struct CaseRun {
  Case config;
  int samples = 0;
  models::TransmissionRecord record;
  Eigen::MatrixXd measurements;
  solvers::SaekfResult saekf;
  solvers::BacklashSmootherResult smoother;
  EstimatorOutcome filter_outcome, smoother_outcome;
  bool has_q0 = false;  // the second smoother (Q_xx = 0) ran
  solvers::BacklashSmootherResult smoother_q0;
  EstimatorOutcome q0_outcome;
  bool has_shape = false;  // the shape-constrained refinement ran
  solvers::BacklashShapeResult shape;
  EstimatorOutcome shape_outcome;

  std::vector<std::pair<std::string, const EstimatorOutcome*>> Outcomes() const {
    std::vector<std::pair<std::string, const EstimatorOutcome*>> list = {
        {"saekf", &filter_outcome}, {"smoother", &smoother_outcome}};
    if (has_q0) list.push_back({"smoother_q0", &q0_outcome});
    if (has_shape) list.push_back({"smoother_shape", &shape_outcome});
    return list;
  }
};

bool RunCase(const Case& config, int samples, double qpp, std::uint64_t seed, CaseRun* run,
             std::string* error) {
  run->config = config;
  run->samples = samples;
  const models::TwoMassTransmission model(config.parameters);
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
        model, signal, ts, models::TwoMassTransmission::State::Zero(), FLAGS_simulation_substeps);
    run->measurements = models::AddVelocityNoise(run->record, config.measure_arm_velocity,
                                                 config.measurement_variance, seed);
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
    const Eigen::Vector3d spring(
        start.center_rad, start.backlash_detected ? start.backlash_rad : 0.0,
        start.backlash_detected ? start.stiffness_nm_per_rad : start.linear_stiffness_nm_per_rad);
    problem_options.state_noise_intensity = config.state_noise_intensity;
    cpu_start = CpuSeconds();
    // One phase: the shape problem starts from the free smoother's settled trajectory, and a
    // restart would cost more (~1 s at 1e5 samples) than the iterations it saves.
    solvers::BacklashSmootherOptions shape_solver_options = smoother_options;
    shape_solver_options.refine_trust_region_radius = 0.0;
    shape_solver_options.function_tolerance = FLAGS_shape_function_tolerance;
    if (!solvers::RunBacklashShapeSmoother(model, smoother_data, problem_options, shape_options,
                                           shape_solver_options, run->smoother.states,
                                           run->smoother.tau, spring, &run->shape, error)) {
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
    if (shape_options.hold_backlash_at_zero) {
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
  return true;
}

nlohmann::json FitJson(const solvers::DeadZoneFit& fit) {
  return {{"backlash_rad", fit.backlash_rad},
          {"backlash_ci", {fit.backlash_lower, fit.backlash_upper}},
          {"backlash_std", fit.backlash_std},
          {"stiffness_nm_per_rad", fit.stiffness_nm_per_rad},
          {"stiffness_ci", {fit.stiffness_lower, fit.stiffness_upper}},
          {"stiffness_std", fit.stiffness_std},
          {"center_rad", fit.center_rad},
          {"center_segments", fit.centers_rad.size()},
          {"center_ci", {fit.center_lower, fit.center_upper}},
          {"linear_stiffness_nm_per_rad", fit.linear_stiffness_nm_per_rad},
          {"residual_scale_nm", fit.residual_scale_nm},
          {"backlash_detected", fit.backlash_detected},
          {"verdict", fit.verdict},
          {"num_points", fit.num_points}};
}

double RelativeError(double estimate, double truth) {
  return truth != 0.0 ? (estimate - truth) / truth : estimate;
}

bool WriteCaseOutputs(const CaseRun& run, data::OutputStage* stage, std::string* error) {
  const std::string& name = run.config.name;
  const int n = run.samples;
  const int stride = std::max(1, (n + FLAGS_max_plot_rows - 1) / FLAGS_max_plot_rows);
  const int rows = (n + stride - 1) / stride;
  const int l = run.config.measure_arm_velocity ? 2 : 1;
  const bool truth = !run.config.measured;  // the true system's columns and series
  std::vector<std::string> header = {"t", "u"};
  if (truth) header.insert(header.end(), {"x1", "x2", "x3", "x4", "delta", "tau_true"});
  header.insert(header.end(), {"y_x3", "saekf_delta", "saekf_tau", "saekf_tau_std",
                               "smoother_delta", "smoother_tau"});
  if (truth) {
    header.insert(header.end(),
                  {"saekf_error_x3", "saekf_error_x4", "smoother_error_x3", "smoother_error_x4"});
  }
  header.insert(header.end(), {"saekf_innovation_x3", "smoother_residual_x3"});
  if (l == 2) {
    header.insert(header.end(), {"y_x4", "saekf_innovation_x4", "smoother_residual_x4"});
  }
  header.insert(header.end(), {"saekf_fit_tau", "smoother_fit_tau", "saekf_delta_centered",
                               "smoother_delta_centered"});
  if (run.has_q0) {
    header.insert(header.end(), {"smoother_q0_delta", "smoother_q0_tau", "smoother_q0_fit_tau",
                                 "smoother_q0_delta_centered"});
  }
  if (run.has_shape) {
    header.insert(header.end(), {"smoother_shape_delta", "smoother_shape_tau",
                                 "smoother_shape_fit_tau", "smoother_shape_delta_centered"});
  }
  Eigen::MatrixXd table(rows, header.size());
  const auto& rec = run.record;
  const auto& f = run.saekf;
  const auto& s = run.smoother;
  const auto& ff = run.filter_outcome.fit;
  const auto& sf = run.smoother_outcome.fit;
  for (int r = 0; r < rows; ++r) {
    const int k = r * stride;
    int c = 0;
    table(r, c++) = rec.time(k);
    table(r, c++) = rec.input(k);
    if (truth) {
      for (int j = 0; j < 4; ++j) table(r, c++) = rec.states(k, j);
      table(r, c++) = rec.delta(k);
      table(r, c++) = rec.spring_torque(k);
    }
    table(r, c++) = run.measurements(k, 0);
    table(r, c++) = f.delta(k);
    table(r, c++) = f.tau(k);
    table(r, c++) = f.tau_std(k);
    table(r, c++) = s.delta(k);
    table(r, c++) = s.tau(k);
    if (truth) {
      table(r, c++) = rec.states(k, 2) - f.states(k, 2);
      table(r, c++) = rec.states(k, 3) - f.states(k, 3);
      table(r, c++) = rec.states(k, 2) - s.states(k, 2);
      table(r, c++) = rec.states(k, 3) - s.states(k, 3);
    }
    table(r, c++) = f.filter.prediction_errors(k, 0);
    table(r, c++) = s.measurement_residuals(k, 0);
    if (l == 2) {
      table(r, c++) = run.measurements(k, 1);
      table(r, c++) = f.filter.prediction_errors(k, 1);
      table(r, c++) = s.measurement_residuals(k, 1);
    }
    const double fc = FittedCenter(ff, k, n), sc = FittedCenter(sf, k, n);
    table(r, c++) =
        solvers::DeadZoneTorque(f.delta(k), fc, ff.backlash_rad, ff.stiffness_nm_per_rad);
    table(r, c++) =
        solvers::DeadZoneTorque(s.delta(k), sc, sf.backlash_rad, sf.stiffness_nm_per_rad);
    table(r, c++) = f.delta(k) - fc;
    table(r, c++) = s.delta(k) - sc;
    if (run.has_q0) {
      const auto& q = run.smoother_q0;
      const auto& qf = run.q0_outcome.fit;
      const double qc = FittedCenter(qf, k, n);
      table(r, c++) = q.delta(k);
      table(r, c++) = q.tau(k);
      table(r, c++) =
          solvers::DeadZoneTorque(q.delta(k), qc, qf.backlash_rad, qf.stiffness_nm_per_rad);
      table(r, c++) = q.delta(k) - qc;
    }
    if (run.has_shape) {
      const auto& g = run.shape.smoother;
      const Eigen::Vector3d& spring = run.shape.spring;
      table(r, c++) = g.delta(k);
      table(r, c++) = g.tau(k);
      table(r, c++) = solvers::DeadZoneTorque(g.delta(k), spring(0), spring(1), spring(2));
      table(r, c++) = g.delta(k) - spring(0);
    }
  }
  const std::string csv = name + "_series.csv";
  if (!stage->WriteText(csv, data::FormatCsv(header, table), error)) return false;
  if (!FLAGS_figures) return true;

  const std::string title = run.config.description;
  {
    data::Figure figure;
    figure.title = title + ": tau_K against Δ = x1 − x2 (Hovland et al. (2002) Figs. 7, 12)";
    figure.columns = 2;
    figure.width_in = 13.0;
    figure.panel_height_in = 4.5;
    auto panel = [&](const std::string& label, const std::string& prefix, bool centered) {
      data::Panel p{label + (centered ? ": against Δ̂ − ĉ(t) (fitted drift removed)"
                                      : ": against the estimated Δ̂"),
                    centered ? "Δ̂ − ĉ(t) [rad]" : "Δ̂ = x̂1 − x̂2 [rad]",
                    "tau_K [Nm]",
                    {},
                    {}};
      const std::string x = prefix + (centered ? "_delta_centered" : "_delta");
      p.series.push_back(data::PointSeries(csv, x, prefix + "_tau", label + " estimate"));
      if (truth) {
        p.series.push_back(data::PointSeries(csv, "delta", "tau_true", "true tau_K(Δ)"));
      }
      p.series.push_back(data::PointSeries(csv, x, prefix + "_fit_tau", "dead-zone fit"));
      return p;
    };
    const data::Panel saekf = panel("SAEKF", "saekf", false);
    const data::Panel smoother = panel("smoother", "smoother", false);
    const data::Panel saekf_centered = panel("SAEKF", "saekf", true);
    const data::Panel smoother_centered = panel("smoother", "smoother", true);
    figure.panels = {saekf, smoother, saekf_centered, smoother_centered};
    if (run.has_q0) {
      figure.panels.push_back(panel("smoother, Q_xx = 0", "smoother_q0", false));
      figure.panels.push_back(panel("smoother, Q_xx = 0", "smoother_q0", true));
    }
    if (run.has_shape) {
      figure.panels.push_back(panel("shape-constrained smoother", "smoother_shape", false));
      figure.panels.push_back(panel("shape-constrained smoother", "smoother_shape", true));
    }
    if (!data::RenderFigure(figure, stage->Path(""), name + "_tau_vs_delta", error)) return false;
  }
  {
    data::Figure figure;
    figure.title = title + ": tau_K against time (Hovland et al. (2002) Fig. 8)";
    data::Panel tau{"transmission torque", "t [s]", "tau_K [Nm]", {}, {}};
    if (truth) tau.series.push_back(data::LineSeries(csv, "t", "tau_true", "true"));
    tau.series.push_back(data::LineSeries(csv, "t", "saekf_tau", "SAEKF (±2σ)", "saekf_tau_std"));
    tau.series.push_back(data::LineSeries(csv, "t", "smoother_tau", "smoother"));
    if (run.has_q0) {
      tau.series.push_back(data::LineSeries(csv, "t", "smoother_q0_tau", "smoother, Q_xx = 0"));
    }
    if (run.has_shape) {
      tau.series.push_back(
          data::LineSeries(csv, "t", "smoother_shape_tau", "shape-constrained smoother"));
    }
    data::Panel delta{"position difference", "t [s]", "Δ [rad]", {}, {}};
    if (truth) delta.series.push_back(data::LineSeries(csv, "t", "delta", "true"));
    delta.series.push_back(data::LineSeries(csv, "t", "saekf_delta", "SAEKF"));
    delta.series.push_back(data::LineSeries(csv, "t", "smoother_delta", "smoother"));
    if (run.has_q0) {
      delta.series.push_back(data::LineSeries(csv, "t", "smoother_q0_delta", "smoother, Q_xx = 0"));
    }
    data::Panel input{"motor torque input", "t [s]", "u [Nm]", {}, {}};
    input.series.push_back(data::LineSeries(csv, "t", "u", "u"));
    figure.panels = {tau, delta, input};
    figure.width_in = 12.0;
    figure.panel_height_in = 3.0;
    if (!data::RenderFigure(figure, stage->Path(""), name + "_tau_vs_time", error)) return false;
  }
  {
    data::Figure figure;
    figure.title =
        title + (truth ? ": prediction errors and state errors (Hovland et al. (2002) Fig. 11)"
                       : ": prediction errors and residuals (Hovland et al. (2002) Fig. 11)");
    figure.columns = 2;
    figure.width_in = 13.0;
    data::Panel innovation{
        "SAEKF measurement prediction errors y − ŷ(t⁻)", "t [s]", "rad/s", {}, {}};
    innovation.series.push_back(data::LineSeries(csv, "t", "saekf_innovation_x3", "x3"));
    data::Panel residual{"smoother measurement residuals y − x̂", "t [s]", "rad/s", {}, {}};
    residual.series.push_back(data::LineSeries(csv, "t", "smoother_residual_x3", "x3"));
    if (l == 2) {
      innovation.series.push_back(data::LineSeries(csv, "t", "saekf_innovation_x4", "x4"));
      residual.series.push_back(data::LineSeries(csv, "t", "smoother_residual_x4", "x4"));
    }
    data::Panel filter_state{"SAEKF state errors x − x̂", "t [s]", "rad/s", {}, {}};
    filter_state.series.push_back(data::LineSeries(csv, "t", "saekf_error_x3", "x3"));
    filter_state.series.push_back(data::LineSeries(csv, "t", "saekf_error_x4", "x4"));
    data::Panel smoother_state{"smoother state errors x − x̂", "t [s]", "rad/s", {}, {}};
    smoother_state.series.push_back(data::LineSeries(csv, "t", "smoother_error_x3", "x3"));
    smoother_state.series.push_back(data::LineSeries(csv, "t", "smoother_error_x4", "x4"));
    figure.panels = {innovation, residual};
    if (truth) figure.panels.insert(figure.panels.end(), {filter_state, smoother_state});
    if (!data::RenderFigure(figure, stage->Path(""), name + "_errors", error)) return false;
  }
  return true;
}

// One case's Q_pp scan in wide form for the figure: per Q_pp value, per estimator the relative
// errors of b and K in % with the distances to their interval ends, and the tau_K RMS error.
struct ScanTable {
  std::vector<std::string> estimators;
  std::vector<std::vector<double>> rows;
};

void AddScanRow(const CaseRun& run, double qpp, ScanTable* table) {
  const auto outcomes = run.Outcomes();
  if (table->estimators.empty()) {
    for (const auto& entry : outcomes) table->estimators.push_back(entry.first);
  }
  const bool truth = !run.config.measured;
  const double b_true = TrueBacklash(run.config);
  const double k_true = run.config.parameters.stiffness_nm_per_rad;
  // Relative errors in % (b = 0: the estimate in mrad); for a measured record the estimates
  // themselves, b in mrad and K in N m/rad. A missing interval end draws no bar.
  auto b_value = [&](double b) {
    return truth && b_true != 0.0 ? 100.0 * (b - b_true) / b_true : 1000.0 * b;
  };
  auto k_value = [&](double k) { return truth ? 100.0 * (k - k_true) / k_true : k; };
  auto distance = [](double a, double b) { return std::isfinite(a - b) ? std::abs(a - b) : 0.0; };
  std::vector<double> row = {qpp};
  for (const auto& entry : outcomes) {
    const solvers::DeadZoneFit& fit = entry.second->fit;
    const double b = b_value(fit.backlash_rad), k = k_value(fit.stiffness_nm_per_rad);
    row.insert(
        row.end(),
        {b, distance(b, b_value(fit.backlash_lower)), distance(b_value(fit.backlash_upper), b), k,
         distance(k, k_value(fit.stiffness_lower)), distance(k_value(fit.stiffness_upper), k)});
    if (truth) row.push_back(entry.second->tau_rms_error);
  }
  table->rows.push_back(row);
}

// D/qpp_sweep_<case>.csv and D/qpp_sweep_<case>.png: b and K errors and the tau_K RMS error
// against Q_pp, one series per estimator, with the acceptance band (10 % sim2, 20 % sim1); for
// a measured record b [mrad] and K [N m/rad] themselves.
bool WriteScanFigure(const Case& config, const ScanTable& table, data::OutputStage* stage,
                     std::string* error) {
  const bool truth = !config.measured;
  const std::string b_column = truth ? "_b_pct" : "_b_mrad";
  const std::string k_column = truth ? "_K_pct" : "_K_nm_per_rad";
  std::vector<std::string> header = {"qpp"};
  for (const std::string& e : table.estimators) {
    header.insert(header.end(), {e + b_column, e + "_b_minus", e + "_b_plus", e + k_column,
                                 e + "_K_minus", e + "_K_plus"});
    if (truth) header.push_back(e + "_tau_rms");
  }
  Eigen::MatrixXd values(table.rows.size(), header.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    for (size_t c = 0; c < header.size(); ++c) values(r, c) = table.rows[r][c];
  }
  const std::string csv = "qpp_sweep_" + config.name + ".csv";
  if (!stage->WriteText(csv, data::FormatCsv(header, values), error)) return false;
  if (!FLAGS_figures) return true;
  const bool b_as_value =
      !truth || config.parameters.shape == models::SpringShape::kLinear;  // mrad, no band
  const double band = config.name == "sim1" ? 20.0 : 10.0;
  data::Panel b_panel{b_as_value ? "b estimate (95 % interval)"
                                 : "b relative error (95 % interval); dashed: acceptance",
                      "Q_pp [(Nm)²/s]",
                      b_as_value ? "b [mrad]" : "b error [%]",
                      {},
                      {}};
  data::Panel k_panel{
      truth ? "K relative error (95 % interval); dashed: acceptance" : "K estimate (95 % interval)",
      "Q_pp [(Nm)²/s]",
      truth ? "K error [%]" : "K [Nm/rad]",
      {},
      {}};
  data::Panel tau_panel{"tau_K RMS error", "Q_pp [(Nm)²/s]", "Nm", {}, {}};
  b_panel.log_x = k_panel.log_x = tau_panel.log_x = true;
  tau_panel.log_y = true;
  if (!b_as_value) b_panel.hlines = {-band, band};
  if (truth) k_panel.hlines = {-band, band};
  for (const std::string& e : table.estimators) {
    data::Series b{csv, "qpp", e + b_column, e + "_b_minus", e + "_b_plus", e, "errorbar", "", 2.0};
    data::Series k{csv, "qpp", e + k_column, e + "_K_minus", e + "_K_plus", e, "errorbar", "", 2.0};
    b_panel.series.push_back(b);
    k_panel.series.push_back(k);
    if (truth) tau_panel.series.push_back(data::LineSeries(csv, "qpp", e + "_tau_rms", e));
  }
  char seed_qpp[32];
  std::snprintf(seed_qpp, sizeof(seed_qpp), "%g", config.tau_noise_intensity);
  data::Figure figure;
  figure.title = config.description + ": sensitivity to Q_pp (" +
                 (truth ? "seed value " : "--qpp = ") + seed_qpp + ")";
  figure.columns = truth ? 3 : 2;
  figure.width_in = truth ? 14.0 : 10.0;
  figure.panel_height_in = 4.0;
  figure.panels = {b_panel, k_panel};
  if (truth) figure.panels.push_back(tau_panel);
  if (!data::RenderFigure(figure, stage->Path(""), "qpp_sweep_" + config.name, error)) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(
      &argc, &argv,
      "backlash_study [--cases=sim1,sim2,linear] [--samples=N] [--seed=S] [--out_dir=D] "
      "[--qpp_factors=0.1,1,10]");
  FLAGS_logtostderr = true;

  // Flags of one source only: a flag that would be ignored is an error.
  const bool measured = !FLAGS_measurements_csv.empty();
  const std::vector<const char*> simulation_only = {
      "cases",          "sweep_cases", "seed",          "simulation_substeps",
      "prbs_amplitude", "prbs_clock",  "sine_amplitude"};
  const std::vector<const char*> measured_only = {"motor_inertia",
                                                  "arm_inertia",
                                                  "damping",
                                                  "position_gain",
                                                  "viscous_friction",
                                                  "coulomb_friction",
                                                  "friction_sharpness",
                                                  "qpp",
                                                  "measurement_variance",
                                                  "qxx"};
  for (const char* flag : measured ? simulation_only : measured_only) {
    if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
      return Fail(2, std::string("--") + flag +
                         (measured ? " is not used with --measurements_csv (the record is the "
                                     "only case)"
                                   : " is used only with --measurements_csv"));
    }
  }
  std::vector<Case> cases;
  if (measured) {
    Case record;
    std::string why;
    if (!MakeMeasuredCase(FLAGS_measurements_csv, &record, &why)) return Fail(2, why);
    if (FLAGS_samples > record.default_samples) {
      return Fail(2, "--samples=" + std::to_string(FLAGS_samples) + " exceeds the " +
                         std::to_string(record.default_samples) + " rows of " +
                         FLAGS_measurements_csv);
    }
    cases.push_back(record);
  }
  for (const std::string& name :
       measured ? std::vector<std::string>() : data::SplitList(FLAGS_cases)) {
    if (name != "sim1" && name != "sim2" && name != "linear") {
      return Fail(2, "--cases: unknown case '" + name + "' (sim1, sim2, linear)");
    }
    cases.push_back(MakeCase(name));
  }
  if (cases.empty()) return Fail(2, "--cases: give at least one case");
  std::vector<double> qpp_factors;
  for (const std::string& text : data::SplitList(FLAGS_qpp_factors)) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value > 0.0) || !std::isfinite(value)) {
      return Fail(2, "--qpp_factors: '" + text + "' is not a positive number");
    }
    qpp_factors.push_back(value);
  }
  // The Q_pp scan's cases (the measured record, if there is one).
  std::vector<Case> scan_cases;
  if (measured) scan_cases.push_back(cases.front());
  for (const std::string& name :
       measured ? std::vector<std::string>() : data::SplitList(FLAGS_sweep_cases)) {
    if (name != "sim1" && name != "sim2" && name != "linear") {
      return Fail(2, "--sweep_cases: unknown case '" + name + "'");
    }
    scan_cases.push_back(MakeCase(name));
  }
  if (FLAGS_samples != 0 && FLAGS_samples < 100) {
    return Fail(
        2, "--samples must be 0 (case default) or >= 100, got " + std::to_string(FLAGS_samples));
  }
  if (FLAGS_smoother_iterations < 1) return Fail(2, "--smoother_iterations must be >= 1");
  if (FLAGS_bootstrap < 20) return Fail(2, "--bootstrap must be >= 20");
  if (FLAGS_fit_threads < 0) return Fail(2, "--fit_threads must be >= 0 (0: all cores)");
  if (FLAGS_max_fit_pairs < 20) return Fail(2, "--max_fit_pairs must be >= 20");
  if (FLAGS_max_plot_rows < 10) return Fail(2, "--max_plot_rows must be >= 10");
  if (!(FLAGS_trust_region_radius > 0.0)) return Fail(2, "--trust_region_radius must be > 0");
  if (!(FLAGS_refine_radius >= 0.0)) return Fail(2, "--refine_radius must be >= 0 (0: one phase)");
  if (!(FLAGS_shape_function_tolerance > 0.0) || !(FLAGS_shape_function_tolerance < 1.0)) {
    return Fail(2, "--shape_function_tolerance must be in (0, 1)");
  }
  {
    std::string why;
    const Case prbs_case = MakeCase("sim2"), sine_case = MakeCase("sim1");
    if (!prbs_case.prbs_options.IsValid(prbs_case.sample_period_s, &why)) {
      return Fail(2, "--prbs_amplitude/--prbs_clock: " + why);
    }
    if (!sine_case.sine_options.IsValid(sine_case.sample_period_s, &why) ||
        !(FLAGS_sine_amplitude > 0.0)) {
      return Fail(2, "--sine_amplitude: must be a positive number" +
                         (why.empty() ? std::string() : " (" + why + ")"));
    }
  }
  if (!(FLAGS_center_window_s >= 0.0)) return Fail(2, "--center_window_s must be >= 0");
  {
    problems::ShapeCurvePoint point;
    std::string why;
    if (!problems::ParseShapeCurvePoint(FLAGS_shape_curve, &point, &why)) {
      return Fail(2, "--shape_curve: " + why);
    }
  }
  if (!(FLAGS_progress_period >= 0.0)) return Fail(2, "--progress_period must be >= 0");
  if (FLAGS_threads < 1) return Fail(2, "--threads must be >= 1");
  if (FLAGS_rk4_steps < 1) return Fail(2, "--rk4_steps must be >= 1");
  if (FLAGS_simulation_substeps < 1) return Fail(2, "--simulation_substeps must be >= 1");

  std::string error;
  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error)) return Fail(1, error);

  nlohmann::json summary;
  summary["flags"] = {{"measurements_csv", FLAGS_measurements_csv},
                      {"cases", FLAGS_cases},
                      {"samples", FLAGS_samples},
                      {"seed", FLAGS_seed},
                      {"qpp_factors", FLAGS_qpp_factors},
                      {"sweep_cases", FLAGS_sweep_cases},
                      {"smoother_iterations", FLAGS_smoother_iterations},
                      {"trust_region_radius", FLAGS_trust_region_radius},
                      {"refine_radius", FLAGS_refine_radius},
                      {"shape_function_tolerance", FLAGS_shape_function_tolerance},
                      {"bootstrap", FLAGS_bootstrap},
                      {"fit_threads", FLAGS_fit_threads},
                      {"max_fit_pairs", FLAGS_max_fit_pairs},
                      {"rk4_steps", FLAGS_rk4_steps},
                      {"simulation_substeps", FLAGS_simulation_substeps},
                      {"center_window_s", FLAGS_center_window_s},
                      {"smoother_q0", FLAGS_smoother_q0},
                      {"shape_refinement", FLAGS_shape_refinement},
                      {"shape_std", FLAGS_shape_std},
                      {"shape_curve", FLAGS_shape_curve},
                      {"shape_free_backlash", FLAGS_shape_free_backlash},
                      {"prbs_amplitude", FLAGS_prbs_amplitude},
                      {"prbs_clock", FLAGS_prbs_clock},
                      {"sine_amplitude", FLAGS_sine_amplitude},
                      {"qpp", FLAGS_qpp},
                      {"measurement_variance", FLAGS_measurement_variance},
                      {"qxx", FLAGS_qxx}};
  std::vector<std::string> result_header = {
      "case",       "estimator",     "b_true",
      "b_estimate", "b_lower",       "b_upper",
      "K_true",     "K_estimate",    "K_lower",
      "K_upper",    "tau_rms_error", "backlash_detected",
      "time_s",     "cpu_s",         "tau_rms_error_interval"};
  std::string results_csv;
  for (size_t i = 0; i < result_header.size(); ++i) {
    results_csv += (i ? "," : "") + result_header[i];
  }
  results_csv += "\n";

  std::printf("backlash_study: %zu case(s)\n", cases.size());
  std::printf("%-7s %-14s %7s %7s %17s %6s %7s %17s %8s %8s %7s %7s %s\n", "case", "estimator",
              "b_true", "b_est", "b 95% CI", "K_true", "K_est", "K 95% CI", "tauK_RMS", "RMS_int",
              "time_s", "cpu_s", "verdict");
  for (size_t index = 0; index < cases.size(); ++index) {
    const Case& config = cases[index];
    const int samples = FLAGS_samples > 0 ? FLAGS_samples : config.default_samples;
    CaseRun run;
    if (!RunCase(config, samples, config.tau_noise_intensity, NoiseSeed(config.name), &run,
                 &error)) {
      return Fail(1, config.name + ": " + error);
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double b_true = config.measured ? nan : TrueBacklash(config);
    const double k_true = config.measured ? nan : config.parameters.stiffness_nm_per_rad;
    const models::TwoMassTransmissionParameters& p = config.parameters;
    nlohmann::json case_json;
    case_json["description"] = config.description;
    case_json["samples"] = samples;
    case_json["sample_period_s"] = config.sample_period_s;
    case_json["known_parameters"] = {
        {"motor_inertia_kgm2", p.motor_inertia_kgm2},
        {"arm_inertia_kgm2", p.arm_inertia_kgm2},
        {"damping_nms_per_rad", p.damping_nms_per_rad},
        {"position_gain_nm_per_rad", p.position_gain_nm_per_rad},
        {"viscous_friction_nms_per_rad", p.viscous_friction_nms_per_rad},
        {"coulomb_friction_nm", p.coulomb_friction_nm},
        {"friction_sharpness_s_per_rad", p.friction_sharpness_s_per_rad}};
    case_json["arm_velocity_measured"] = config.measure_arm_velocity;
    if (config.measured) {
      case_json["measurements_csv"] = config.source;
      case_json["true"] = nullptr;  // no true system for a measured record
    } else {
      case_json["noise_seed"] = NoiseSeed(config.name);
      case_json["true"] = {{"backlash_rad", b_true},
                           {"stiffness_nm_per_rad", k_true},
                           {"shape", models::SpringShapeName(config.parameters.shape)}};
    }
    case_json["covariances"] = {
        {"Q_xx_diag",
         {config.state_noise_intensity(0), config.state_noise_intensity(1),
          config.state_noise_intensity(2), config.state_noise_intensity(3)}},
        {"Q_pp", config.tau_noise_intensity},
        {"R", config.measurement_variance}};
    case_json["input"] =
        config.measured ? nlohmann::json{{"type", "measured"}}
        : config.prbs   ? nlohmann::json{{"type", "prbs"},
                                       {"amplitude_nm", config.prbs_options.amplitude},
                                       {"clock_period_s", config.prbs_options.clock_period_s},
                                       {"register_bits", config.prbs_options.register_bits},
                                       {"lfsr_seed", config.prbs_options.seed}}
                        : nlohmann::json{{"type", "swept_sine"},
                                       {"amplitude_nm", config.sine_options.amplitude},
                                       {"start_hz", config.sine_options.start_frequency_hz},
                                       {"end_hz", config.sine_options.end_frequency_hz}};
    case_json["smoother_summary"] = {
        {"converged", run.smoother.summary.converged},
        {"iterations", run.smoother.summary.iterations},
        {"initial_cost", run.smoother.summary.initial_cost},
        {"final_cost", run.smoother.summary.final_cost},
        {"time_s", run.smoother.summary.time_s},
        {"linear_solver_time_s", run.smoother.summary.linear_solver_time_s},
        {"jacobian_time_s", run.smoother.summary.jacobian_time_s},
        {"message", run.smoother.summary.message}};
    if (run.has_q0) {
      case_json["smoother_q0_summary"] = {{"converged", run.smoother_q0.summary.converged},
                                          {"iterations", run.smoother_q0.summary.iterations},
                                          {"final_cost", run.smoother_q0.summary.final_cost},
                                          {"time_s", run.smoother_q0.summary.time_s},
                                          {"message", run.smoother_q0.summary.message}};
    }
    if (run.has_shape) {
      case_json["smoother_shape_summary"] = {
          {"converged", run.shape.smoother.summary.converged},
          {"iterations", run.shape.smoother.summary.iterations},
          {"final_cost", run.shape.smoother.summary.final_cost},
          {"time_s", run.shape.smoother.summary.time_s},
          {"linear_solver_time_s", run.shape.smoother.summary.linear_solver_time_s},
          {"jacobian_time_s", run.shape.smoother.summary.jacobian_time_s},
          {"message", run.shape.smoother.summary.message},
          {"shape_std_nm", FLAGS_shape_std},
          {"spring_center_b_K", {run.shape.spring(0), run.shape.spring(1), run.shape.spring(2)}},
          {"spring_std",
           {run.shape.spring_std(0), run.shape.spring_std(1), run.shape.spring_std(2)}},
          {"covariance_valid", run.shape.covariance_valid},
          {"covariance_note", run.shape.covariance_note},
          {"posterior_variance_factor", run.shape.posterior_variance_factor},
          {"covariance_time_s", run.shape.covariance_time_s}};
    }
    case_json["saekf_summary"] = {{"converged", run.saekf.filter.converged},
                                  {"time_s", run.saekf.filter.time_s},
                                  {"log_likelihood", run.saekf.filter.log_likelihood}};
    for (const auto& [label, outcome] : run.Outcomes()) {
      const solvers::DeadZoneFit& fit = outcome->fit;
      nlohmann::json estimator = FitJson(fit);
      estimator["tau_rms_error_nm"] = outcome->tau_rms_error;
      estimator["tau_rms_error_interval_nm"] = outcome->tau_rms_error_interval;
      estimator["time_s"] = outcome->time_s;
      estimator["cpu_s"] = outcome->cpu_s;
      estimator["fit_cpu_s"] = outcome->fit_cpu_s;
      if (!config.measured) {
        estimator["backlash_relative_error"] = RelativeError(fit.backlash_rad, b_true);
        estimator["stiffness_relative_error"] = RelativeError(fit.stiffness_nm_per_rad, k_true);
      }
      case_json[label] = estimator;
      char ci_b[64], ci_k[64];
      std::snprintf(ci_b, sizeof(ci_b), "[%.4f, %.4f]", fit.backlash_lower, fit.backlash_upper);
      std::snprintf(ci_k, sizeof(ci_k), "[%.2f, %.2f]", fit.stiffness_lower, fit.stiffness_upper);
      std::printf("%-7s %-14s %7.4f %7.4f %17s %6.2f %7.2f %17s %8.4f %8.4f %7.2f %7.2f %s\n",
                  config.name.c_str(), label.c_str(), b_true, fit.backlash_rad, ci_b, k_true,
                  fit.stiffness_nm_per_rad, ci_k, outcome->tau_rms_error,
                  outcome->tau_rms_error_interval, outcome->time_s, outcome->cpu_s,
                  fit.backlash_detected ? "backlash" : "no backlash detected");
      char line[512];
      std::snprintf(line, sizeof(line),
                    "%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                    "%.17g,%d,%.6g,%.6g,%.17g\n",
                    config.name.c_str(), label.c_str(), b_true, fit.backlash_rad,
                    fit.backlash_lower, fit.backlash_upper, k_true, fit.stiffness_nm_per_rad,
                    fit.stiffness_lower, fit.stiffness_upper, outcome->tau_rms_error,
                    fit.backlash_detected ? 1 : 0, outcome->time_s, outcome->cpu_s,
                    outcome->tau_rms_error_interval);
      results_csv += line;
    }
    std::fflush(stdout);
    summary["cases"][config.name] = case_json;
    if (!WriteCaseOutputs(run, &stage, &error)) return Fail(1, error);
  }

  // Q_pp scan: the paper's main tuning knob.
  if (!qpp_factors.empty() && !scan_cases.empty()) {
    std::string scan_csv =
        "case,qpp,estimator,b_estimate,b_lower,b_upper,K_estimate,K_lower,K_upper,"
        "tau_rms_error,backlash_detected\n";
    std::printf("\nQ_pp scan\n%-7s %10s %-14s %9s %9s %10s %s\n", "case", "Q_pp", "estimator",
                "b_est", "K_est", "tauK_RMS", "verdict");
    for (const Case& config : scan_cases) {
      const std::string& name = config.name;
      const int samples = FLAGS_samples > 0 ? FLAGS_samples : config.default_samples;
      ScanTable table;
      for (double factor : qpp_factors) {
        const double qpp = factor * config.tau_noise_intensity;
        CaseRun run;
        if (!RunCase(config, samples, qpp, NoiseSeed(name), &run, &error)) {
          return Fail(1, "Q_pp scan " + name + ": " + error);
        }
        AddScanRow(run, qpp, &table);
        for (const auto& [label, outcome] : run.Outcomes()) {
          const solvers::DeadZoneFit& fit = outcome->fit;
          char line[512];
          std::snprintf(line, sizeof(line),
                        "%s,%.17g,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d\n", name.c_str(),
                        qpp, label.c_str(), fit.backlash_rad, fit.backlash_lower,
                        fit.backlash_upper, fit.stiffness_nm_per_rad, fit.stiffness_lower,
                        fit.stiffness_upper, outcome->tau_rms_error, fit.backlash_detected ? 1 : 0);
          scan_csv += line;
          std::printf("%-7s %10.4g %-14s %9.4f %9.2f %10.4f %s\n", name.c_str(), qpp, label.c_str(),
                      fit.backlash_rad, fit.stiffness_nm_per_rad, outcome->tau_rms_error,
                      fit.backlash_detected ? "backlash" : "no backlash detected");
          summary["qpp_sweep"].push_back({{"case", name},
                                          {"qpp", qpp},
                                          {"estimator", label},
                                          {"fit", FitJson(fit)},
                                          {"tau_rms_error_nm", outcome->tau_rms_error}});
        }
        std::fflush(stdout);
      }
      if (!WriteScanFigure(config, table, &stage, &error)) return Fail(1, error);
    }
    if (!stage.WriteText("qpp_sweep.csv", scan_csv, &error)) return Fail(1, error);
  }
  if (!stage.WriteText("results.csv", results_csv, &error) ||
      !stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("backlash_study: wrote %s\n", FLAGS_out_dir.c_str());
  return 0;
}
