// experiments/scara_study/scara_flags — the flags of scara_study and their checks (see
// scara_flags.h).
#include "experiments/scara_study/scara_flags.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/solvers/kalman_smoother.h"
#include "experiments/common/cli.h"

DEFINE_double(duration_s, 30.0, "record length [s]");
DEFINE_double(dt, 0.01, "sample and control period [s]");
DEFINE_uint64(seed, 3003, "noise seed");
DEFINE_string(out_dir, "out/scara_study", "output folder");
DEFINE_double(noise_scale, 1.0, "scale of the published measurement noise R (std)");
DEFINE_string(torque_noise_std, "0.05,0.02,0.1",
              "std of the measured torques used by LS and HNN [N m, N m, N]");
DEFINE_double(pid_bandwidth_hz, 2.0, "PID tuning: triple closed-loop pole at this frequency");
DEFINE_double(q_state, 1e-8, "tuned filters: process noise per sample on the joint states");
DEFINE_double(q_param, 0.0, "tuned filters: process noise per sample on the parameters");
// 0.3, not larger: the UKF's first sigma points lie ±1.58 prior std (alpha = 0.5) along each
// parameter, and the SCARA mass matrix is indefinite when IZZ1 IZZ2 − IZZ2² < mr² cos² q2; with
// 0.5 the point IZZ1 = 5 − 1.58 · 2.5 did that in 3 of 20 noise realisations.
DEFINE_double(prior_std_fraction, 0.3,
              "tuned filters: prior std of each parameter as a fraction of its initial guess");
DEFINE_double(ukf_alpha, 0.5, "UKF sigma-point spread alpha, (0, 1]");
DEFINE_double(ukf_beta, 2.0, "UKF beta, >= 0");
DEFINE_double(ukf_kappa, 0.0, "UKF kappa, >= 0");
DEFINE_double(hnn_gain, 2.0, "Hopfield network gain");
DEFINE_string(hnn_activation, "linear", "Hopfield network activation: linear or tanh");
DEFINE_double(hnn_amplitude, 10.0, "tanh activation: output bound A for every parameter");
DEFINE_double(hnn_beta, 10.0, "tanh activation: slope parameter beta");
DEFINE_int32(seed_repeats, 20,
             "EKF diagnosis: noise realisations per setting for the sign statistics of IZZ2");
DEFINE_int32(rk4_substeps, 1, "tuned filters: RK4 steps per sample");
DEFINE_int32(max_plot_rows, 3000, "evolution.csv rows used by the figures (every k-th sample)");
DEFINE_bool(wr_smoother, true, "run the batch weighted-residual smoother over the record");
DEFINE_double(wr_position_intensity, 1e-8,
              "weighted-residual smoother: intensity of the kinematic residual s' - v");
DEFINE_double(wr_velocity_intensity, 1e-4,
              "weighted-residual smoother: intensity of the kinematic residual v' - a");
DEFINE_double(wr_equation_std, 0.1,
              "weighted-residual smoother: std of the equation-of-motion residual [N m, N]");
DEFINE_string(wr_initial_trajectory, "ukf_rts",
              "weighted-residual smoother: initial states, 'ukf_rts' (RTS-smoothed UKF) or "
              "'measurements' (the noisy measurements, zero accelerations)");
DEFINE_int32(wr_max_iterations, 100, "weighted-residual smoother: Ceres iteration limit");
DEFINE_bool(figures, true, "render figures (python3 + matplotlib)");
DEFINE_string(measurements_csv, "",
              "measured record instead of the simulation: CSV with the columns t,q1,q2,d3,tau1,"
              "tau2,f3 [s, rad, rad, m, N m, N m, N] in any order, optional dq1,dq2,dd3");
DEFINE_string(measurement_std, "",
              "with --measurements_csv: the std of q1, q1', q2, q2', d3, d3' the filters and the "
              "smoother assume [rad, rad/s, rad, rad/s, m, m/s] (default: the published R scaled "
              "by --noise_scale)");
DEFINE_string(mismatch, "none",
              "model mismatch of a simulation: 'none'; 'gravity' (the estimators' model -- the "
              "LS/HNN regressor, the filters' and the smoothers' equations of motion -- uses "
              "g = 1.1 x 9.81 m/s^2 while the simulated robot keeps 9.81); or 'friction' (the "
              "simulated robot has unmodelled viscous joint friction fv = 1.7 N m s/rad, "
              "0.28 N m s/rad, 12 N s/m, about 10 % of each joint's RMS torque)");
DEFINE_string(coverage_csv, "",
              "the measured coverage quoted beside every reported std: a coverage.csv written by "
              "--monte_carlo (empty = the study's shipped measurement at the default flags, "
              "share/dynid/scara_study/coverage.csv)");

namespace dynid::scara_study {

namespace {

// N comma-separated numbers >= 0 (cli::ParseNumberList).
template <int N>
bool ParseVector(const std::string& flag, const std::string& text, Eigen::Matrix<double, N, 1>* out,
                 std::string* error) {
  std::vector<double> values;
  if (!cli::ParseNumberList(flag, text, N, 0.0, &values, error)) return false;
  *out = Eigen::Map<const Eigen::Matrix<double, N, 1>>(values.data());
  return true;
}

// The UKF flags are checked by the UKF itself, on a dummy system of the study's size, so that
// they fail before the output folder is opened.
bool ValidateUkfFlags(std::string* error) {
  solvers::DiscreteStateSpaceSystem dummy;
  dummy.state_size = 10;
  dummy.measurement_size = 6;
  dummy.transition = [](int, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd*) {
    *y = x;
  };
  dummy.measurement = [](int, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd*) {
    *y = x.head(6);
  };
  solvers::KalmanFilterOptions filter;
  filter.process_noise = Eigen::MatrixXd::Identity(10, 10);
  filter.measurement_covariance = Eigen::MatrixXd::Identity(6, 6);
  filter.initial_state = Eigen::VectorXd::Zero(10);
  filter.initial_covariance = Eigen::MatrixXd::Identity(10, 10);
  std::string why;
  if (!UkfOptionsFromFlags(filter).IsValid(dummy, &why)) {
    *error = "--ukf_alpha/--ukf_beta/--ukf_kappa: " + why;
    return false;
  }
  return true;
}

// Exit code 2 for any failure; torque_noise receives --torque_noise_std parsed.
bool CheckFlagValues(Eigen::Vector3d* torque_noise, std::string* error) {
  const auto reject = [error](const std::string& message) {
    *error = message;
    return false;
  };
  if (!(FLAGS_dt > 0.0) || !(FLAGS_dt <= 0.1)) return reject("--dt must be in (0, 0.1]");
  if (!(FLAGS_duration_s >= 20 * FLAGS_dt) || !(FLAGS_duration_s <= 600.0)) {
    return reject("--duration_s must be between 20 samples and 600 s");
  }
  if (!(FLAGS_noise_scale > 0.0) || !std::isfinite(FLAGS_noise_scale)) {
    return reject("--noise_scale must be > 0");
  }
  if (!ParseVector<3>("torque_noise_std", FLAGS_torque_noise_std, torque_noise, error)) {
    return false;
  }
  if (!(FLAGS_pid_bandwidth_hz > 0.0) || !(FLAGS_pid_bandwidth_hz < 0.1 / FLAGS_dt)) {
    return reject("--pid_bandwidth_hz must be in (0, 0.1/dt)");
  }
  if (!(FLAGS_q_state > 0.0) || !std::isfinite(FLAGS_q_state)) {
    return reject("--q_state must be > 0");
  }
  if (!(FLAGS_q_param >= 0.0) || !std::isfinite(FLAGS_q_param)) {
    return reject("--q_param must be >= 0");
  }
  if (!(FLAGS_hnn_gain > 0.0)) return reject("--hnn_gain must be > 0");
  if (FLAGS_hnn_activation != "linear" && FLAGS_hnn_activation != "tanh") {
    return reject("--hnn_activation must be 'linear' or 'tanh', got '" + FLAGS_hnn_activation +
                  "'");
  }
  if (!(FLAGS_hnn_amplitude > 0.0) || !(FLAGS_hnn_beta > 0.0)) {
    return reject("--hnn_amplitude and --hnn_beta must be > 0");
  }
  if (FLAGS_rk4_substeps < 1) return reject("--rk4_substeps must be >= 1");
  if (!(FLAGS_wr_position_intensity > 0.0) || !(FLAGS_wr_velocity_intensity > 0.0) ||
      !(FLAGS_wr_equation_std > 0.0)) {
    return reject(
        "--wr_position_intensity, --wr_velocity_intensity and --wr_equation_std "
        "must be > 0");
  }
  if (FLAGS_wr_initial_trajectory != "ukf_rts" && FLAGS_wr_initial_trajectory != "measurements") {
    return reject("--wr_initial_trajectory must be 'ukf_rts' or 'measurements', got '" +
                  FLAGS_wr_initial_trajectory + "'");
  }
  if (FLAGS_wr_max_iterations < 1) return reject("--wr_max_iterations must be >= 1");
  if (FLAGS_seed_repeats < 0 || FLAGS_seed_repeats > 1000) {
    return reject("--seed_repeats must be in [0, 1000]");
  }
  if (!(FLAGS_prior_std_fraction > 0.0) || !std::isfinite(FLAGS_prior_std_fraction)) {
    return reject("--prior_std_fraction must be > 0");
  }
  if (FLAGS_max_plot_rows < 10) return reject("--max_plot_rows must be >= 10");
  return ValidateUkfFlags(error);
}

// Flags that set up the simulation: errors with a record.
const char* const kSimulationOnlyFlags[] = {"duration_s", "dt", "seed", "pid_bandwidth_hz",
                                            "seed_repeats"};

bool RejectSimulationFlags(std::string* error) {
  for (const char* flag : kSimulationOnlyFlags) {
    if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
      *error = std::string("--") + flag +
               " is not used with --measurements_csv (it sets up the simulation)";
      return false;
    }
  }
  return true;
}

// The measurement std a measured record's filters assume: --measurement_std, or the published
// R scaled by --noise_scale; false naming the flag.
bool MeasuredRecordStd(Vector6d* r_std, std::string* error) {
  if (FLAGS_measurement_std.empty()) {
    *r_std = PublishedMeasurementStd();
    return true;
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("noise_scale").is_default) {
    *error = "--noise_scale does not apply with --measurement_std (give the std themselves)";
    return false;
  }
  if (!ParseVector<6>("measurement_std", FLAGS_measurement_std, r_std, error)) return false;
  if (!(r_std->minCoeff() > 0.0)) {
    *error = "--measurement_std: every std must be > 0 (the filters invert R)";
    return false;
  }
  return true;
}

}  // namespace

bool ValidateFlags(bool measured, Eigen::Vector3d* torque_noise, Vector6d* measured_std,
                   std::string* error) {
  if ((measured && !RejectSimulationFlags(error)) || !CheckFlagValues(torque_noise, error)) {
    return false;
  }
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  if (FLAGS_mismatch != "none" && FLAGS_mismatch != "gravity" && FLAGS_mismatch != "friction") {
    *error = "--mismatch must be 'none', 'gravity' or 'friction', got '" + FLAGS_mismatch + "'";
    return false;
  }
  if (FLAGS_mismatch != "none" && measured) {
    *error = "--mismatch perturbs a simulation (a measured record has no truth to keep)";
    return false;
  }
  for (const char* flag : {"seed_repeats", "coverage_csv"}) {
    if (FLAGS_monte_carlo > 0 && !gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
      *error = std::string("--") + flag +
               " is not used with --monte_carlo (it runs no sign statistics and measures the "
               "coverage itself)";
      return false;
    }
  }
  if (FLAGS_monte_carlo > 0 && measured) {
    *error = "--monte_carlo needs the simulation (a measured record has no truth to cover)";
    return false;
  }
  if (!measured) {
    if (FLAGS_measurement_std.empty()) return true;
    *error =
        "--measurement_std is used only with --measurements_csv (the simulation draws its "
        "sensor noise from the published R scaled by --noise_scale)";
    return false;
  }
  return MeasuredRecordStd(measured_std, error);
}

// The published R (std) scaled by --noise_scale.
Vector6d PublishedMeasurementStd() {
  Vector6d r_std;
  r_std << 5.0 * M_PI / 180.0, M_PI / 180.0, 5.0 * M_PI / 180.0, M_PI / 180.0, 0.02, 0.01;
  r_std *= FLAGS_noise_scale;
  return r_std;
}

models::Scara3LinkData SimulatedLinkData() {
  models::Scara3LinkData data;
  if (FLAGS_mismatch == "friction") {
    data.fv1 = kMismatchViscousFriction[0];
    data.fv2 = kMismatchViscousFriction[1];
    data.fv3 = kMismatchViscousFriction[2];
  }
  return data;
}

double EstimatorGravity() {
  return FLAGS_mismatch == "gravity" ? kMismatchFactor * kGravity : kGravity;
}

solvers::UkfOptions UkfOptionsFromFlags(const solvers::KalmanFilterOptions& filter) {
  solvers::UkfOptions options;
  options.filter = filter;
  options.alpha = FLAGS_ukf_alpha;
  options.beta = FLAGS_ukf_beta;
  options.kappa = FLAGS_ukf_kappa;
  return options;
}

// The flags of the estimators, used with either source.
nlohmann::json EstimatorFlags() {
  return {{"noise_scale", FLAGS_noise_scale},
          {"torque_noise_std", FLAGS_torque_noise_std},
          {"q_state", FLAGS_q_state},
          {"q_param", FLAGS_q_param},
          {"ukf_alpha", FLAGS_ukf_alpha},
          {"ukf_beta", FLAGS_ukf_beta},
          {"ukf_kappa", FLAGS_ukf_kappa},
          {"hnn_gain", FLAGS_hnn_gain},
          {"hnn_activation", FLAGS_hnn_activation},
          {"rk4_substeps", FLAGS_rk4_substeps},
          {"prior_std_fraction", FLAGS_prior_std_fraction},
          {"wr_initial_trajectory", FLAGS_wr_initial_trajectory},
          {"wr_max_iterations", FLAGS_wr_max_iterations},
          {"mismatch", FLAGS_mismatch},
          {"estimator_gravity", EstimatorGravity()}};
}

}  // namespace dynid::scara_study
