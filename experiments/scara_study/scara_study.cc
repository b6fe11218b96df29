// scara_study — parameter estimation of the 3-DOF RRP SCARA compared across estimators
// (Urrea & Agramonte (2022) §3): least squares, Hopfield neural network, EKF (as published and
// re-tuned, discrete and continuous–discrete), square-root UKF, the RTS smoothing pass of both
// filters and the project's batch weighted-residual smoother (after van de Molengraft (1990)), on
// one closed-loop record; validation by closed-loop tracking with every estimated set.
//
// Record: models::MakeScara3 (generic serial-robot model) tracks a multisine reference under a
// PID per joint (data::SimulateClosedLoop, control and sampling at 1/Δt = 100 Hz, torque held
// between samples). The recursive filters see the six joint positions and velocities with
// Gaussian noise of the published R and the applied torques; LS and HNN use the noise-free joint
// kinematics of the record and measured torques (applied torque + Gaussian noise). All
// recursive estimators run on models::Scara3Model (the closed form) through
// solvers::AugmentedMechanicalSystem, so the record comes from an independent implementation of
// the dynamics.
//
// Validation: the same PID loop (replicated here for the closed-form model, checked against
// data::SimulateClosedLoop with the true parameters) is run with each estimated parameter set as
// the plant; per link RMSE, IAE = ∫|e| dt and ISE = ∫ e² dt of e = q_ref − q.
//
// EKF diagnosis: a factorial over the published settings (process noise on the parameters,
// process noise on the joint states, forward Euler vs RK4) shows which one drives IZZ2 away, and
// sign statistics over --seed_repeats sensor-noise realisations (EKF from the published and from
// the tuned start, square-root UKF from the tuned start) count how often IZZ2 ends negative.
//
// Acceptance (summary.json "acceptance"): LS and the smoothers within 1 % of the truth, the UKF
// within 3 %, and the square-root UKF positive definite on every run (a UKF run that loses
// positive definiteness makes the study fail with exit code 1; a failed UKF run of the sign
// statistics makes the verdict false).
//
// Measured record (--measurements_csv=F): a CSV whose header holds the columns
// t,q1,q2,d3,tau1,tau2,f3 (s; rad, rad, m; N m, N m, N) in any order, extra columns ignored, and
// optionally dq1,dq2,dd3 (rad/s, rad/s, m/s); at least 200 rows, time strictly increasing with a
// uniform step (within 1 % of the record's mean step, which replaces --dt: the filters
// discretise with one step). The q, q', q'' of the LS and HNN regressors come from IRWSM2
// (solvers/irw_smoother.h) with each joint's NVR fitted by maximum likelihood
// (solvers/nvr_fit.h). The filters and the weighted-residual smoother see the measured
// positions, the measured velocities (the IRWSM2 velocities when the CSV has none) and the
// measured torques as input; they assume the std of --measurement_std (default: the published R
// scaled by --noise_scale), and --torque_noise_std weights LS and the smoother. The simulation
// flags (--duration_s, --dt, --seed, --pid_bandwidth_hz, --seed_repeats) are errors with a
// record, and --measurement_std is one without a record. There is no truth: the
// sign statistics (they redraw the sensor noise of a simulation) and the tracking validation
// (true plant and PID gains) are left out, whatever compares with the truth is NaN (null in
// summary.json), and validation.csv holds instead the torque prediction tau_hat = Y(q, q', q'') p
// of every estimate against the measured torques (RMS error per joint, also in % of the joint's
// RMS torque).
//
// Outputs in --out_dir: record.csv, estimates.csv, table7.csv, evolution.csv, validation.csv,
// ekf_diagnosis.csv, ekf_seed_statistics.csv, summary.json and figures (*.png with their
// *.figure.json); with a measured record also torque_prediction.csv and its figure (the measured
// torques against those LS, UKF + RTS and the weighted-residual smoother predict).
#include <ceres/problem.h>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/model_closed_loop.h"
#include "dynid/data/output.h"
#include "dynid/data/robot_simulator.h"
#include "dynid/data/trajectory.h"
#include "dynid/models/scara3.h"
#include "dynid/models/scara3_model.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/extended_kalman_filter.h"
#include "dynid/solvers/hopfield_estimator.h"
#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/kalman_smoother.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/mechanical_state_space.h"
#include "dynid/solvers/nvr_fit.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/unscented_kalman_filter.h"
#include "dynid/solvers/weighted_residual_smoother.h"
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

namespace {

using dynid::cli::Fail;

namespace models = dynid::models;
namespace problems = dynid::problems;
namespace solvers = dynid::solvers;
namespace data = dynid::data;
using Model = models::Scara3Model;
using System = solvers::AugmentedMechanicalSystem<Model>;

const char* kParamNames[4] = {"IZZ1", "IZZ2", "mr", "m3"};

// Published values (Urrea & Agramonte (2022), Tables 7–10).
struct Published {
  std::string method;
  double p[4];
};
const Published kPublishedTable7[] = {
    {"real", {4.9680, 0.6480, 1.2000, 2.0000}},  {"LS", {4.7825, 0.6305, 1.1243, 1.9999}},
    {"HNN", {4.0126, 0.3605, 0.9774, 1.9991}},   {"EKF", {4.6792, -0.9285, 1.0965, 1.9965}},
    {"UKF", {4.7620, 0.48600, 1.1800, 1.9968}}};
// [method][link][rmse, iae, ise]
const std::map<std::string, std::array<std::array<double, 3>, 3>> kPublishedTracking = {
    {"real", {{{0.1246, 0.7822, 0.4564}, {0.1059, 0.2737, 0.2842}, {0.0102, 0.0567, 0.0029}}}},
    {"LS", {{{0.1244, 0.7802, 0.4550}, {0.1071, 0.2803, 0.2917}, {0.0102, 0.0568, 0.0029}}}},
    {"HNN", {{{0.1209, 0.7701, 0.4289}, {0.0908, 0.1721, 0.1953}, {0.0102, 0.0568, 0.0029}}}},
    {"EKF", {{{0.1242, 0.7789, 0.4538}, {0.1074, 0.2818, 0.2935}, {0.0102, 0.0568, 0.0029}}}},
    {"UKF", {{{0.1229, 0.7792, 0.4442}, {0.0960, 0.2081, 0.2240}, {0.0102, 0.0568, 0.0029}}}}};

// Multisine reference exciting the four base parameters: q2 swings about ±1.6 rad so cos q2 and
// sin q2 both vary, both revolute joints accelerate independently, and the stroke accelerates
// (d3'' − g changes) — the regressor has full column rank with a moderate condition number.
class MultisineReference : public data::JointTrajectory {
 public:
  explicit MultisineReference(double duration) : duration_(duration) {}
  int num_joints() const override { return 3; }
  double duration() const override { return duration_; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override {
    t = std::clamp(t, 0.0, duration_);
    q->setZero(3);
    qd->setZero(3);
    qdd->setZero(3);
    for (const Term& term : kTerms) {
      const double w = 2.0 * M_PI * term.f;
      (*q)(term.joint) += term.a * std::sin(w * t + term.phi);
      (*qd)(term.joint) += term.a * w * std::cos(w * t + term.phi);
      (*qdd)(term.joint) -= term.a * w * w * std::sin(w * t + term.phi);
    }
    (*q)(2) += 0.15;
  }

 private:
  struct Term {
    int joint;
    double a, f, phi;
  };
  static constexpr Term kTerms[6] = {{0, 1.0, 0.10, 0.0}, {0, 0.4, 0.37, 1.0},
                                     {1, 1.2, 0.13, 0.5}, {1, 0.5, 0.41, 0.0},
                                     {2, 0.1, 0.25, 0.0}, {2, 0.03, 0.9, 0.3}};
  double duration_;
};

// Closed-loop PID tracking of the reference with the closed-form plant of parameters theta
// (data::SimulateModelClosedLoop: the control law of data::SimulateClosedLoop).
using Tracking = data::ModelTracking;

Tracking SimulateTracking(const Eigen::Vector4d& theta, const data::JointTrajectory& reference,
                          const data::PidGains& gains, double dt, int num_samples,
                          int substeps) {
  return data::SimulateModelClosedLoop(Model(), theta, reference, gains, dt, num_samples,
                                       substeps);
}

struct TrackingIndexes {
  double rmse[3], iae[3], ise[3];
};

TrackingIndexes Indexes(const Tracking& tr, double dt) {
  TrackingIndexes ix;
  const Eigen::MatrixXd e = tr.q_reference - tr.q;
  for (int j = 0; j < 3; ++j) {
    ix.rmse[j] = std::sqrt(e.col(j).squaredNorm() / e.rows());
    ix.iae[j] = e.col(j).cwiseAbs().sum() * dt;
    ix.ise[j] = e.col(j).squaredNorm() * dt;
  }
  return ix;
}

// One parameter estimate with its covariance (4 × 4; empty when the method gives none).
struct Estimate {
  std::string method;
  std::string description;
  Eigen::Vector4d p = Eigen::Vector4d::Zero();
  Eigen::Matrix4d cov = Eigen::Matrix4d::Zero();
  bool has_cov = false;
};

nlohmann::json EstimateJson(const Estimate& e, const Eigen::Vector4d& truth) {
  nlohmann::json j;
  j["method"] = e.method;
  j["description"] = e.description;
  for (int i = 0; i < 4; ++i) {
    j["estimate"][kParamNames[i]] = e.p(i);
    j["relative_error_percent"][kParamNames[i]] = 100.0 * (e.p(i) - truth(i)) / truth(i);
    if (e.has_cov) j["std"][kParamNames[i]] = std::sqrt(std::max(0.0, e.cov(i, i)));
  }
  if (e.has_cov) {
    std::vector<std::vector<double>> c(4, std::vector<double>(4));
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) c[a][b] = e.cov(a, b);
    j["covariance"] = c;
  }
  return j;
}

template <int N>
bool ParseVector(const std::string& text, const std::string& flag, Eigen::Matrix<double, N, 1>* out,
                 std::string* error) {
  const std::vector<std::string> parts = data::SplitList(text);
  if (parts.size() != N) {
    *error =
        flag + ": expected " + std::to_string(N) + " comma-separated numbers, got '" + text + "'";
    return false;
  }
  for (int i = 0; i < N; ++i) {
    char* end = nullptr;
    (*out)(i) = std::strtod(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0' || !std::isfinite((*out)(i)) || (*out)(i) < 0.0) {
      *error = flag + ": '" + parts[i] + "' is not a non-negative number";
      return false;
    }
  }
  return true;
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

using Vector6d = Eigen::Matrix<double, 6, 1>;

solvers::UkfOptions UkfOptionsFromFlags(const solvers::KalmanFilterOptions& filter) {
  solvers::UkfOptions options;
  options.filter = filter;
  options.alpha = FLAGS_ukf_alpha;
  options.beta = FLAGS_ukf_beta;
  options.kappa = FLAGS_ukf_kappa;
  return options;
}

// Diagonal: q_state on the six joint states, q_param on the four parameters.
Eigen::MatrixXd ProcessNoise(double q_state, double q_param) {
  Eigen::VectorXd q(10);
  q << Eigen::VectorXd::Constant(6, q_state), Eigen::VectorXd::Constant(4, q_param);
  return q.asDiagonal();
}

// ---- Flags.

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
bool ValidateFlags(Eigen::Vector3d* torque_noise, std::string* error) {
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
  if (!ParseVector<3>(FLAGS_torque_noise_std, "--torque_noise_std", torque_noise, error)) {
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

// ---- Closed-loop record.

// The record and what the estimators see of it.
struct Record {
  Eigen::Vector4d truth;         // IZZ1, IZZ2, mr, m3 of the simulated robot
  Eigen::Vector3d torque_noise;  // std of the measured torques [N m, N m, N]
  data::PidGains gains;
  data::RobotSimulation sim;
  int num = 0;              // samples
  Vector6d r_std;           // measurement noise std: the published R, scaled by --noise_scale
  Eigen::MatrixXd r_paper;  // diag(r_std²)
  Eigen::MatrixXd y_clean;  // Ns × 6 joint positions and velocities [q1, q1', q2, q2', d3, d3']
  Eigen::MatrixXd y;        // y_clean with sensor noise: what the recursive filters see
  double dt = 0.0;          // sample period [s]
  double duration_s = 0.0;  // record length [s]
  std::string kinematics;   // where the q, q', q'' of the LS and HNN regressors come from
  // A measured record (--measurements_csv): truth NaN, no PID gains, no y_clean; y holds the
  // measured positions and velocities, sim.q_measured the measured positions, sim.q, qd, qdd the
  // IRWSM2 kinematics and sim.tau = sim.tau_measured the measured torques.
  bool measured = false;
  nlohmann::json source;  // file, velocity source, fitted NVRs
};

// The published R (std) scaled by --noise_scale.
Vector6d PublishedMeasurementStd() {
  Vector6d r_std;
  r_std << 5.0 * M_PI / 180.0, M_PI / 180.0, 5.0 * M_PI / 180.0, M_PI / 180.0, 0.02, 0.01;
  r_std *= FLAGS_noise_scale;
  return r_std;
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
  if (!ParseVector<6>(FLAGS_measurement_std, "--measurement_std", r_std, error)) return false;
  if (!(r_std->minCoeff() > 0.0)) {
    *error = "--measurement_std: every std must be > 0 (the filters invert R)";
    return false;
  }
  return true;
}

// One draw per entry in row order: the record and the sign statistics draw their noise alike.
Eigen::MatrixXd AddMeasurementNoise(const Eigen::MatrixXd& y_clean, const Vector6d& r_std,
                                    std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd y(y_clean.rows(), 6);
  for (int k = 0; k < y_clean.rows(); ++k) {
    for (int i = 0; i < 6; ++i) y(k, i) = y_clean(k, i) + r_std(i) * g(rng);
  }
  return y;
}

bool SimulateRecord(const data::JointTrajectory& reference, const Eigen::Vector3d& torque_noise,
                    Record* record, std::string* error) {
  const models::SerialRobot robot = models::MakeScara3();
  record->truth = models::Scara3BaseParametersFromLinks().AsVector();
  record->torque_noise = torque_noise;
  data::RobotSimulatorOptions sim_options;
  sim_options.control_rate_hz = 1.0 / FLAGS_dt;
  sim_options.integration_substeps = 10;
  sim_options.gains =
      data::TunePidGains(robot, Eigen::Vector3d(0.0, 0.0, 0.15), FLAGS_pid_bandwidth_hz);
  sim_options.torque_noise_std = torque_noise;
  sim_options.seed = static_cast<std::uint32_t>(FLAGS_seed);
  record->gains = sim_options.gains;
  if (!data::SimulateClosedLoop(robot, reference, sim_options, &record->sim, error)) {
    *error = "closed-loop simulation: " + *error;
    return false;
  }
  const data::RobotSimulation& sim = record->sim;
  const int num = static_cast<int>(sim.time.size());
  record->num = num;
  record->dt = FLAGS_dt;
  record->duration_s = FLAGS_duration_s;
  record->kinematics = "noise-free q, q', q'' of the record";
  record->r_std = PublishedMeasurementStd();
  record->r_paper = record->r_std.array().square().matrix().asDiagonal();
  record->y_clean.resize(num, 6);
  for (int k = 0; k < num; ++k) {
    for (int j = 0; j < 3; ++j) {
      record->y_clean(k, 2 * j) = sim.q(k, j);
      record->y_clean(k, 2 * j + 1) = sim.qd(k, j);
    }
  }
  record->y = AddMeasurementNoise(record->y_clean, record->r_std,
                                  static_cast<std::uint32_t>(FLAGS_seed) + 17u);
  return true;
}

// ---- Measured record (--measurements_csv).

// Flags that set up the simulation: errors with a record.
const char* const kSimulationOnlyFlags[] = {"duration_s", "dt", "seed", "pid_bandwidth_hz",
                                            "seed_repeats"};
// The required columns in the order used below, and the optional velocities.
const std::vector<std::string> kMeasuredColumns = {"t", "q1", "q2", "d3", "tau1", "tau2", "f3"};
const std::vector<std::string> kVelocityColumns = {"dq1", "dq2", "dd3"};
constexpr int kMinMeasuredRows = 200;

// The checked CSV, before any smoothing.
struct MeasuredColumns {
  std::string path;
  Eigen::VectorXd time;        // N [s]
  Eigen::MatrixXd positions;   // N × 3 [rad, rad, m]
  Eigen::MatrixXd torques;     // N × 3 [N m, N m, N]
  Eigen::MatrixXd velocities;  // N × 3 [rad/s, rad/s, m/s]; empty without dq1,dq2,dd3
  double step = 0.0;           // the record's mean step [s]
};

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

// 0-based index of `name` in the header, -1 when absent.
int ColumnIndex(const data::CsvTable& table, const std::string& name) {
  const auto it = std::find(table.header.begin(), table.header.end(), name);
  return it == table.header.end() ? -1 : static_cast<int>(it - table.header.begin());
}

// The indexes of the required columns, then those of the velocity columns when all three are
// there; false naming the first missing column, or the missing part of the velocities.
bool FindMeasuredColumns(const data::CsvTable& table, const std::string& path,
                         std::vector<int>* indexes, std::string* error) {
  indexes->clear();
  for (const std::string& name : kMeasuredColumns) {
    indexes->push_back(ColumnIndex(table, name));
    if (indexes->back() < 0) {
      *error = path + ":1: missing column '" + name +
               "' (the header needs t,q1,q2,d3,tau1,tau2,f3, optionally dq1,dq2,dd3)";
      return false;
    }
  }
  std::string missing;
  for (const std::string& name : kVelocityColumns) {
    const int index = ColumnIndex(table, name);
    if (index < 0) missing += (missing.empty() ? "" : ",") + name;
    if (index >= 0) indexes->push_back(index);
  }
  const size_t velocities_found = indexes->size() - kMeasuredColumns.size();
  if (velocities_found != 0 && velocities_found != kVelocityColumns.size()) {
    *error = path + ":1: missing column(s) " + missing +
             " (give the velocities dq1,dq2,dd3 all three or none)";
    return false;
  }
  return true;
}

// Time strictly increasing and uniform to 1 % of the mean step per line (the step goes to
// *step); `time_column` is the 0-based column of t in the file, named in the messages.
bool CheckMeasuredTime(const data::CsvTable& table, const std::string& path, int time_column,
                       double* step, std::string* error) {
  return data::CheckTimeColumnIncreasing(table, path, error, time_column, true) &&
         data::CheckUniformTimeStep(table, path, time_column, true, 0.01,
                                    "the filters discretise with one step", step, error);
}

// Reads and checks --measurements_csv; false with a message naming the file, line and column.
bool ReadMeasuredColumns(const std::string& path, MeasuredColumns* columns, std::string* error) {
  data::CsvTable table;
  if (!data::ReadCsv(path, &table, error)) return false;
  std::vector<int> indexes;
  if (!FindMeasuredColumns(table, path, &indexes, error)) return false;
  const int rows = static_cast<int>(table.values.rows());
  if (rows < kMinMeasuredRows) {
    *error = path + ": expected at least " + std::to_string(kMinMeasuredRows) + " data rows, got " +
             std::to_string(rows);
    return false;
  }
  if (!CheckMeasuredTime(table, path, indexes[0], &columns->step, error)) return false;
  const auto pick = [&table, &indexes](int first) {
    Eigen::MatrixXd m(table.values.rows(), 3);
    for (int j = 0; j < 3; ++j) m.col(j) = table.values.col(indexes[first + j]);
    return m;
  };
  columns->path = path;
  columns->time = table.values.col(indexes[0]);
  columns->positions = pick(1);
  columns->torques = pick(4);
  if (indexes.size() > kMeasuredColumns.size()) columns->velocities = pick(7);
  return true;
}

// IRWSM2 of each joint position with its NVR fitted by maximum likelihood: sim.q, qd, qdd of
// the record (the kinematics of the regressors); the fits go to record->source.
bool SmoothJointPositions(const MeasuredColumns& columns, Record* record, std::string* error) {
  const char* names[3] = {"q1", "q2", "d3"};
  std::vector<solvers::IrwSmootherOptions> options(3);
  std::vector<solvers::NvrFitSummary> fits(3);
  for (int j = 0; j < 3; ++j) {
    if (!solvers::FitNvrMaximumLikelihood(columns.positions.col(j), solvers::IrwModel::kIrw2,
                                          &fits[j], error)) {
      *error = std::string("NVR fit of ") + names[j] + ": " + *error;
      return false;
    }
    if (fits[j].at_bound) {
      std::cerr << "scara_study: warning: the NVR of " << names[j] << " (" << fits[j].nvr
                << ") lies at the edge of the search interval\n";
    }
    options[j].model = solvers::IrwModel::kIrw2;
    options[j].nvr = fits[j].nvr;
    options[j].compute_standard_deviations = false;
  }
  std::vector<solvers::IrwSmootherResult> smoothed;
  if (!solvers::SmoothIrwColumns(columns.positions, columns.step, options, &smoothed, error)) {
    *error = "IRWSM2 smoothing: " + *error;
    return false;
  }
  data::RobotSimulation& sim = record->sim;
  const int num = static_cast<int>(columns.time.size());
  sim.q.resize(num, 3);
  sim.qd.resize(num, 3);
  sim.qdd.resize(num, 3);
  for (int j = 0; j < 3; ++j) {
    sim.q.col(j) = smoothed[j].position;
    sim.qd.col(j) = smoothed[j].velocity;
    sim.qdd.col(j) = smoothed[j].acceleration;
    record->source["irw"][names[j]] = {{"model", "irwsm2"},
                                       {"nvr", fits[j].nvr},
                                       {"nvr_at_search_bound", fits[j].at_bound},
                                       {"sigma", std::sqrt(smoothed[j].sigma2)},
                                       {"log_likelihood", fits[j].log_likelihood}};
  }
  return true;
}

// The record the stages see, from the checked CSV (see the header comment).
bool MakeMeasuredRecord(const MeasuredColumns& columns, const Eigen::Vector3d& torque_noise,
                        const Vector6d& r_std, Record* record, std::string* error) {
  const int num = static_cast<int>(columns.time.size());
  const bool has_velocities = columns.velocities.size() > 0;
  record->measured = true;
  record->truth.setConstant(std::numeric_limits<double>::quiet_NaN());
  record->torque_noise = torque_noise;
  record->num = num;
  record->dt = columns.step;
  record->duration_s = columns.time(num - 1) - columns.time(0);
  record->kinematics = "IRWSM2 q, q', q'' of the measured positions (NVR by maximum likelihood)";
  record->r_std = r_std;
  record->r_paper = record->r_std.array().square().matrix().asDiagonal();
  record->source = {{"measurements_csv", columns.path},
                    {"sample_period_s", columns.step},
                    {"duration_s", record->duration_s},
                    {"regressor_kinematics", "irwsm2"},
                    {"filter_velocities", has_velocities ? "measured" : "irwsm2"}};
  if (!SmoothJointPositions(columns, record, error)) return false;
  data::RobotSimulation& sim = record->sim;
  sim.time = columns.time;
  sim.q_measured = columns.positions;
  sim.tau = columns.torques;
  sim.tau_measured = columns.torques;
  const Eigen::MatrixXd& velocities = has_velocities ? columns.velocities : sim.qd;
  record->y.resize(num, 6);
  for (int j = 0; j < 3; ++j) {
    record->y.col(2 * j) = columns.positions.col(j);
    record->y.col(2 * j + 1) = velocities.col(j);
  }
  return true;
}

// What the stages accumulate for --out_dir.
struct CsvFiles {
  std::string record, evolution, estimates, table7, validation, ekf_diagnosis, ekf_seed_statistics;
  std::string torque_prediction;                       // a measured record only
  std::vector<std::string> torque_prediction_methods;  // the estimates it shows
};
struct Results {
  std::vector<Estimate> estimates;
  nlohmann::json summary;
  CsvFiles csv;
};

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
          {"wr_max_iterations", FLAGS_wr_max_iterations}};
}

void DescribeRecord(const Record& record, nlohmann::json* summary) {
  nlohmann::json& s = *summary;
  s["flags"] = EstimatorFlags();
  s["flags"]["duration_s"] = FLAGS_duration_s;
  s["flags"]["dt"] = FLAGS_dt;
  s["flags"]["seed"] = FLAGS_seed;
  s["flags"]["pid_bandwidth_hz"] = FLAGS_pid_bandwidth_hz;
  s["flags"]["seed_repeats"] = FLAGS_seed_repeats;
  const int num = record.num;
  const data::RobotSimulation& sim = record.sim;
  s["samples"] = num;
  for (int j = 0; j < 3; ++j) {
    s["pid_gains"].push_back({{"joint", j + 1},
                              {"kp", record.gains.kp[j]},
                              {"ki", record.gains.ki[j]},
                              {"kd", record.gains.kd[j]}});
  }
  for (int i = 0; i < 6; ++i) s["measurement_std"].push_back(record.r_std(i));
  const Eigen::Vector4d& truth = record.truth;
  s["true_parameters"] = {
      {"IZZ1", truth(0)}, {"IZZ2", truth(1)}, {"mr", truth(2)}, {"m3", truth(3)}};
  Eigen::Vector3d rms_tau;
  for (int j = 0; j < 3; ++j) rms_tau(j) = std::sqrt(sim.tau.col(j).squaredNorm() / num);
  s["torque_rms"] = {rms_tau(0), rms_tau(1), rms_tau(2)};
  s["tracking_error_rms_identification_run"] = {
      std::sqrt((sim.q_reference - sim.q).col(0).squaredNorm() / num),
      std::sqrt((sim.q_reference - sim.q).col(1).squaredNorm() / num),
      std::sqrt((sim.q_reference - sim.q).col(2).squaredNorm() / num)};
}

// RMS of each column of an Ns × 3 signal.
Eigen::Vector3d RmsPerJoint(const Eigen::MatrixXd& signal) {
  return (signal.colwise().squaredNorm().transpose() / signal.rows()).cwiseSqrt();
}

void DescribeMeasuredRecord(const Record& record, nlohmann::json* summary) {
  nlohmann::json& s = *summary;
  s["flags"] = EstimatorFlags();
  s["flags"]["measurements_csv"] = FLAGS_measurements_csv;
  s["flags"]["measurement_std"] = FLAGS_measurement_std;
  s["samples"] = record.num;
  s["record"] = record.source;
  s["record"]["left_out"] = {"true_parameters and errors against them",
                             "EKF sign statistics (they redraw the sensor noise of a simulation)",
                             "closed-loop tracking validation (true plant and PID gains)"};
  for (int i = 0; i < 6; ++i) s["measurement_std"].push_back(record.r_std(i));
  s["measurement_std_source"] =
      FLAGS_measurement_std.empty() ? "published R scaled by --noise_scale" : "--measurement_std";
  s["true_parameters"] = nullptr;
  const Eigen::Vector3d rms_tau = RmsPerJoint(record.sim.tau_measured);
  s["torque_rms"] = {rms_tau(0), rms_tau(1), rms_tau(2)};
}

// ---- LS and the Hopfield network: the stacked regression of the record.

struct Regression {
  Eigen::MatrixXd phi;  // 3 Ns × 4, from the noise-free q, q', q'' of the record
  Eigen::VectorXd tau;  // 3 Ns, measured torques
};

Regression StackRegression(const Record& record) {
  const data::RobotSimulation& sim = record.sim;
  Regression regression;
  regression.phi.resize(3 * record.num, 4);
  regression.tau.resize(3 * record.num);
  for (int k = 0; k < record.num; ++k) {
    regression.phi.middleRows(3 * k, 3) = models::Scara3ClosedFormRegressor(
        sim.q.row(k).transpose(), sim.qd.row(k).transpose(), sim.qdd.row(k).transpose());
    regression.tau.segment(3 * k, 3) = sim.tau_measured.row(k).transpose();
  }
  return regression;
}

// Weighted by the torque noise of each joint when it is known.
void EstimateLeastSquares(const Record& record, const Regression& regression, Results* results) {
  const int num = record.num;
  Eigen::VectorXd w(3 * num);
  for (int k = 0; k < num; ++k) {
    for (int j = 0; j < 3; ++j) {
      w(3 * k + j) = record.torque_noise(j) > 0.0 ? 1.0 / record.torque_noise(j) : 1.0;
    }
  }
  const Eigen::MatrixXd a = w.asDiagonal() * regression.phi;
  const Eigen::VectorXd b = w.asDiagonal() * regression.tau;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  Estimate ls;
  ls.method = "LS";
  ls.description = "weighted least squares, " + record.kinematics + ", measured torques";
  ls.p = qr.solve(b);
  const double dof = std::max(1, 3 * num - 4);
  const double sigma2 = (b - a * ls.p).squaredNorm() / dof;
  ls.cov = sigma2 * (a.transpose() * a).inverse();
  ls.has_cov = true;
  results->estimates.push_back(ls);
  results->summary["regressor_condition_number"] = solvers::ConditionNumber(a);
}

bool RunHopfield(const Record& record, const Regression& regression, solvers::HopfieldResult* hnn,
                 Results* results, std::string* error) {
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

// Joint states start at the first measurement of y with the measurement variances, parameters
// at the published x0 with std prior_std_fraction · |x0| (P0 = 10 puts UKF sigma points at
// negative masses and inertias, where the mass matrix is indefinite); process noise q_state on
// the joint states and q_param on the parameters. The adapter's state order is [s; v; theta] =
// [q1, q2, d3, q1', q2', d3', IZZ1, IZZ2, mr, m3]; the measurement order (Scara3Model) is the
// published [q1, q1', q2, q2', d3, d3'], so y and R are used as they are. (The published x0, P0
// and Q have equal joint entries, so the ordering does not change them.)
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

// What the filter runs share: the closed-form model over the record in both discretisations,
// and the published and tuned settings.
struct FilterSetup {
  System euler;  // forward Euler, one step per sample (as published)
  System rk4;    // RK4, --rk4_substeps steps per sample
  solvers::KalmanFilterOptions paper;
  solvers::KalmanFilterOptions tuned;
};

FilterSetup MakeFilterSetup(const Record& record) {
  const Model model;
  return {System(model, record.sim.time, record.sim.tau, solvers::Discretization::kForwardEuler, 1),
          System(model, record.sim.time, record.sim.tau, solvers::Discretization::kRk4,
                 FLAGS_rk4_substeps),
          PaperFilterOptions(record), TunedFilterOptions(record, record.y)};
}

struct FilterRun {
  std::string name;
  std::string description;
  solvers::KalmanFilterRecord record;
  bool is_ukf = false;
  solvers::UkfResult ukf;
};

// Positions in FilterResults::runs.
constexpr int kEkfPaperRun = 0;
constexpr int kEkfRun = 1;
constexpr int kUkfRun = 2;

struct FilterResults {
  std::vector<FilterRun> runs;  // EKF_paper, EKF, UKF, UKF_paper
  solvers::ContinuousDiscreteEkfResult cd;
  solvers::RtsSmootherResult ekf_rts, ukf_rts;        // over the tuned EKF and UKF
  nlohmann::json ukf_json = nlohmann::json::array();  // per UKF run, for summary.json
};

bool RunEkf(const std::string& name, const std::string& description, const System& system,
            const solvers::KalmanFilterOptions& o, const Eigen::MatrixXd& y, FilterResults* filters,
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
              setup.euler, setup.paper, y, filters, error) ||
      !RunEkf("EKF", "discrete EKF, RK4, tuned x0, P0, Q (constant parameters)", setup.rk4,
              setup.tuned, y, filters, error) ||
      !RunUkf("UKF", "square-root UKF, RK4, tuned x0, P0, Q", setup.rk4, setup.tuned, y, filters,
              error) ||
      !RunUkf("UKF_paper", "square-root UKF, forward Euler, published x0, P0 = Q = 10 I, R",
              setup.euler, setup.paper, y, filters, error)) {
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
  problems::WeightedResidualWeights weights;
  Eigen::VectorXd w_kin(6), v_res(12);
  w_kin << Eigen::Vector3d::Constant(1.0 / FLAGS_wr_position_intensity),
      Eigen::Vector3d::Constant(1.0 / FLAGS_wr_velocity_intensity);
  weights.kinematic = w_kin.asDiagonal();
  weights.parameter = Eigen::Matrix4d::Identity();
  v_res.head(3).setConstant(1.0 / (FLAGS_wr_equation_std * FLAGS_wr_equation_std));
  for (int i = 0; i < 6; ++i) v_res(3 + i) = 1.0 / (record.r_std(i) * record.r_std(i));
  for (int j = 0; j < 3; ++j) {
    // A torque channel without noise gets the weight of a 1e-3 std.
    const double sd = record.torque_noise(j) > 0.0 ? record.torque_noise(j) : 1e-3;
    v_res(9 + j) = 1.0 / (sd * sd);
  }
  weights.residual = v_res.asDiagonal();
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
  const models::Scara3TorqueModel wr_model;
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
  const solvers::WeightedResidualSmootherSummary ws =
      solvers::SolveWeightedResidual(&problem, &variables, so);
  Estimate e;
  e.method = "WR_smoother";
  e.description =
      "batch weighted-residual smoother (shooting, constant parameters) over "
      "positions, velocities and measured torques";
  e.p = variables.parameters.col(0);
  Eigen::MatrixXd information;
  std::string why;
  if (solvers::ConstantParameterInformation(&problem, &variables, &information, &why)) {
    const solvers::IdentifiabilityReport report = solvers::AnalyzeIdentifiability(
        information, variables.parameters.col(0), {"IZZ1", "IZZ2", "mr", "m3"});
    e.cov = report.covariance;
    e.has_cov = true;
  }
  results->estimates.push_back(e);
  results->summary["wr_smoother"] = {{"converged", ws.converged},
                                     {"iterations", ws.iterations},
                                     {"initial_cost", ws.initial_cost},
                                     {"final_cost", ws.final_cost},
                                     {"time_s", ws.time_s},
                                     {"message", ws.message},
                                     {"covariance_message", why}};
  return true;
}

// ---- EKF diagnosis: which published setting drives IZZ2 away.

void DiagnoseEkfSettings(const Record& record, const FilterSetup& setup, Results* results) {
  std::string& diag_csv = results->csv.ekf_diagnosis;
  diag_csv =
      "q_param,q_state,discretization,IZZ2_final,IZZ2_std_final,IZZ2_mean,IZZ2_min,IZZ2_max,"
      "fraction_IZZ2_negative,IZZ1_final,mr_final,m3_final\n";
  nlohmann::json diag_json = nlohmann::json::array();
  for (double qp : {10.0, 1e-4, 0.0}) {
    for (double qs : {10.0, FLAGS_q_state}) {
      for (int disc = 0; disc < 2; ++disc) {
        solvers::KalmanFilterOptions o = setup.paper;
        o.process_noise = ProcessNoise(qs, qp);
        const System& sys = disc == 0 ? setup.euler : setup.rk4;
        solvers::KalmanFilterRecord rec;
        std::string why;
        const bool ok = solvers::RunExtendedKalmanFilter(sys.Discrete(), record.y, o, &rec, &why);
        const char* dname = disc == 0 ? "euler" : "rk4";
        if (!ok) {
          diag_json.push_back(
              {{"q_param", qp}, {"q_state", qs}, {"discretization", dname}, {"failed", why}});
          continue;
        }
        const Eigen::VectorXd izz2 = rec.filtered_states.col(7);
        const double frac_neg = (izz2.array() < 0.0).cast<double>().mean();
        const Eigen::Vector4d fin = FinalParameters(rec.filtered_states);
        const double sd = std::sqrt(rec.filtered_covariances.back()(7, 7));
        const double mean = TimeMean(rec.filtered_states.rightCols(4))(1);
        char line[512];
        std::snprintf(line, sizeof(line), "%g,%g,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.6g,%.6g,%.6g\n",
                      qp, qs, dname, fin(1), sd, mean, izz2.minCoeff(), izz2.maxCoeff(), frac_neg,
                      fin(0), fin(2), fin(3));
        diag_csv += line;
        diag_json.push_back({{"q_param", qp},
                             {"q_state", qs},
                             {"discretization", dname},
                             {"IZZ2_final", fin(1)},
                             {"IZZ2_std_final", sd},
                             {"IZZ2_time_mean", mean},
                             {"IZZ2_min", izz2.minCoeff()},
                             {"IZZ2_max", izz2.maxCoeff()},
                             {"fraction_IZZ2_negative", frac_neg},
                             {"final", {fin(0), fin(1), fin(2), fin(3)}}});
      }
    }
  }
  results->summary["ekf_diagnosis"] = diag_json;
}

// The information the record carries about IZZ2 per sample under the published settings: the
// EKF_paper filtered std of IZZ2 against |IZZ2|.
nlohmann::json Izz2StdOverRecord(const FilterRun& run) {
  const Eigen::MatrixXd sd = run.record.FilteredStd();
  std::vector<double> v(sd.rows());
  for (int k = 0; k < sd.rows(); ++k) v[k] = sd(k, 7);
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return {{"median", v[v.size() / 2]}, {"final", sd(sd.rows() - 1, 7)}};
}

// ---- Sign statistics of IZZ2 over noise realisations (same closed-loop record, new sensor
// noise).

// "published": x0 = (1 … 1 5 0.5 1 1.5), P0 = 10 I; "tuned": joint states at the first
// measurement with P0 = R, parameter prior std prior_std_fraction · |x0| (the EKF and UKF rows
// of the table); "states_only": the published joint-state x0 and P0 = 10 with the tuned
// parameter prior, and "params_only": the tuned joint states with the published parameter
// P0 = 10 (which of the two halves of the start matters).
enum Start { kPublished, kTuned, kPublishedStates, kPublishedParameterP0 };

struct SignSetting {
  double qp, qs;
  int disc;  // 0: forward Euler, 1: RK4
  Start start;
  bool ukf;
};

// The square-root UKF runs only from the tuned start (from P0 = 10 I its sigma points sit at
// negative inertias).
std::vector<SignSetting> SignSettings() {
  return {{10.0, 10.0, 0, kPublished, false},
          {10.0, FLAGS_q_state, 0, kPublished, false},
          {0.0, 10.0, 0, kPublished, false},
          {1e-4, FLAGS_q_state, 0, kPublished, false},
          {0.0, FLAGS_q_state, 1, kPublished, false},
          {0.0, FLAGS_q_state, 1, kPublishedStates, false},
          {0.0, FLAGS_q_state, 1, kPublishedParameterP0, false},
          {FLAGS_q_param, FLAGS_q_state, 1, kTuned, false},
          {FLAGS_q_param, FLAGS_q_state, 1, kTuned, true}};
}

struct SignCounts {
  std::vector<double> finals, sds;  // final IZZ2 and its filter std, per finished run
  // "Published signature": a moderate negative IZZ2 at the end (−5 IZZ2_true <= IZZ2 < 0)
  // while m3 is within 1 %, as the published EKF (IZZ2 = −0.93, m3 = 1.9965): a wrong sign
  // that is not part of a divergence of the whole filter.
  int neg_final = 0, neg_mean = 0, failed = 0, signature = 0;
  int ukf_failures = 0;  // UKF runs that failed or lost positive definiteness
  std::string first_failure;
};

SignCounts CountIzz2Signs(const Record& record, const FilterSetup& setup, const SignSetting& st) {
  const int num = record.num;
  const Eigen::Vector4d& truth = record.truth;
  SignCounts counts;
  for (int rep = 0; rep < FLAGS_seed_repeats; ++rep) {
    const Eigen::MatrixXd yr = AddMeasurementNoise(
        record.y_clean, record.r_std, static_cast<std::uint32_t>(FLAGS_seed) + 1000u + rep);
    solvers::KalmanFilterOptions o =
        st.start == kPublished ? setup.paper : TunedFilterOptions(record, yr);
    if (st.start == kPublishedStates) {
      o.initial_state.head(6) = setup.paper.initial_state.head(6);
      o.initial_covariance.topLeftCorner(6, 6) = setup.paper.initial_covariance.topLeftCorner(6, 6);
    } else if (st.start == kPublishedParameterP0) {
      o.initial_covariance.bottomRightCorner(4, 4) =
          setup.paper.initial_covariance.bottomRightCorner(4, 4);
    }
    o.process_noise = ProcessNoise(st.qs, st.qp);
    solvers::KalmanFilterRecord rec;
    std::string why;
    const System& sys = st.disc == 0 ? setup.euler : setup.rk4;
    if (st.ukf) {
      solvers::UkfResult ur;
      if (!solvers::RunSquareRootUkf(sys.Discrete(), yr, UkfOptionsFromFlags(o), &ur, &why)) {
        if (counts.first_failure.empty()) {
          counts.first_failure = "realisation " + std::to_string(rep) + ": " + why;
        }
        ++counts.failed;
        ++counts.ukf_failures;
        continue;
      }
      if (!ur.positive_definite_throughout) ++counts.ukf_failures;
      rec = std::move(ur.record);
    } else if (!solvers::RunExtendedKalmanFilter(sys.Discrete(), yr, o, &rec, &why)) {
      if (counts.first_failure.empty()) {
        counts.first_failure = "realisation " + std::to_string(rep) + ": " + why;
      }
      ++counts.failed;
      continue;
    }
    const double fin = rec.filtered_states(num - 1, 7);
    counts.finals.push_back(fin);
    counts.sds.push_back(std::sqrt(rec.filtered_covariances.back()(7, 7)));
    if (fin < 0.0) ++counts.neg_final;
    if (fin < 0.0 && fin >= -5.0 * truth(1) &&
        std::abs(rec.filtered_states(num - 1, 9) - truth(3)) <= 0.01 * truth(3)) {
      ++counts.signature;
    }
    if (TimeMean(rec.filtered_states.rightCols(4))(1) < 0.0) ++counts.neg_mean;
  }
  return counts;
}

// Appends the row of one setting to the CSV and to the JSON list.
void AppendSignStatistics(const SignSetting& st, SignCounts counts, std::string* csv,
                          nlohmann::json* rows) {
  const int ok = static_cast<int>(counts.finals.size());
  double mean = 0.0, var = 0.0, mn = NAN, mx = NAN, sd_med = NAN;
  if (ok > 0) {
    const Eigen::Map<const Eigen::VectorXd> f(counts.finals.data(), ok);
    mean = f.mean();
    var = ok > 1 ? (f.array() - mean).square().sum() / (ok - 1) : 0.0;
    mn = f.minCoeff();
    mx = f.maxCoeff();
    std::nth_element(counts.sds.begin(), counts.sds.begin() + ok / 2, counts.sds.end());
    sd_med = counts.sds[ok / 2];
  }
  const int neg_final = counts.neg_final, neg_mean = counts.neg_mean;
  const int failed = counts.failed, signature = counts.signature;
  const char* dname = st.disc == 0 ? "euler" : "rk4";
  const char* fname = st.ukf ? "UKF" : "EKF";
  const char* sname = st.start == kPublished         ? "published"
                      : st.start == kTuned           ? "tuned"
                      : st.start == kPublishedStates ? "states_only"
                                                     : "params_only";
  char line[512];
  std::snprintf(line, sizeof(line),
                "%s,%s,%g,%g,%s,%d,%d,%.4f,%.4f,%.4f,%.6g,%.6g,%.6g,%.6g,%.6g\n", fname, sname,
                st.qp, st.qs, dname, FLAGS_seed_repeats, failed, ok ? double(neg_final) / ok : NAN,
                ok ? double(neg_mean) / ok : NAN, ok ? double(signature) / ok : NAN, mean,
                std::sqrt(var), mn, mx, sd_med);
  *csv += line;
  rows->push_back({{"filter", fname},
                   {"start", sname},
                   {"q_param", st.qp},
                   {"q_state", st.qs},
                   {"discretization", dname},
                   {"runs", FLAGS_seed_repeats},
                   {"first_failure", counts.first_failure},
                   {"failed", failed},
                   {"fraction_final_IZZ2_negative", ok ? double(neg_final) / ok : NAN},
                   {"fraction_mean_IZZ2_negative", ok ? double(neg_mean) / ok : NAN},
                   {"fraction_published_signature", ok ? double(signature) / ok : NAN},
                   {"final_IZZ2_mean", mean},
                   {"final_IZZ2_std", std::sqrt(var)},
                   {"final_IZZ2_min", mn},
                   {"final_IZZ2_max", mx},
                   {"filter_std_IZZ2_median", sd_med}});
}

// Returns the number of UKF runs that failed or lost positive definiteness.
int RunSignStatistics(const Record& record, const FilterSetup& setup, Results* results) {
  results->csv.ekf_seed_statistics =
      "filter,start,q_param,q_state,discretization,runs,failed,fraction_final_IZZ2_negative,"
      "fraction_mean_IZZ2_negative,fraction_published_signature,final_IZZ2_mean,final_IZZ2_std,"
      "final_IZZ2_min,final_IZZ2_max,filter_std_IZZ2_median\n";
  // Without realisations summary.json has no "ekf_seed_statistics" at all; nor with a measured
  // record, whose sensor noise cannot be redrawn.
  if (FLAGS_seed_repeats == 0 || record.measured) return 0;
  int ukf_failures = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (const SignSetting& st : SignSettings()) {
    SignCounts counts = CountIzz2Signs(record, setup, st);
    ukf_failures += counts.ukf_failures;
    AppendSignStatistics(st, std::move(counts), &results->csv.ekf_seed_statistics, &rows);
  }
  results->summary["ekf_seed_statistics"] = rows;
  return ukf_failures;
}

// ---- Validation by closed-loop tracking.

std::map<std::string, const Estimate*> EstimatesByName(const std::vector<Estimate>& estimates) {
  std::map<std::string, const Estimate*> by_name;
  for (const Estimate& e : estimates) by_name[e.method] = &e;
  return by_name;
}

bool ValidateByTracking(const Record& record, const data::JointTrajectory& reference,
                        Results* results, std::string* error) {
  const int num = record.num;
  std::string& val_csv = results->csv.validation;
  val_csv =
      "method,link,rmse,iae,ise,rms_deviation_from_real,published_rmse,published_iae,"
      "published_ise,note\n";
  nlohmann::json val_json = nlohmann::json::array();
  const Tracking real = SimulateTracking(record.truth, reference, record.gains, FLAGS_dt, num, 10);
  if (!real.ok) {
    *error = "validation with the true parameters: " + real.message;
    return false;
  }
  results->summary["validation_crosscheck_max_abs_q_difference"] =
      (real.q - record.sim.q).cwiseAbs().maxCoeff();
  std::vector<std::pair<std::string, Eigen::Vector4d>> sets = {{"real", record.truth}};
  const std::map<std::string, const Estimate*> by_name = EstimatesByName(results->estimates);
  for (const char* name : {"LS", "HNN", "EKF_paper", "EKF_paper_mean", "EKF", "CD_EKF", "UKF",
                           "UKF_paper", "EKF_RTS", "UKF_RTS", "WR_smoother"}) {
    if (by_name.count(name)) sets.push_back({name, by_name.at(name)->p});
  }
  for (const auto& [name, estimate] : sets) {
    std::string note;
    Eigen::Vector4d p = estimate;
    // The mass matrix of the closed form is positive definite only when IZZ2 > 0 and
    // IZZ1 IZZ2 > mr²-like terms; the published study replaced a negative EKF IZZ2 by the LS
    // value for the validation. The same is done here, and flagged.
    Tracking tr = SimulateTracking(p, reference, record.gains, FLAGS_dt, num, 10);
    if (!tr.ok) {
      p(1) = by_name.at("LS")->p(1);
      note = "IZZ2 replaced by the LS value (" + tr.message + ")";
      tr = SimulateTracking(p, reference, record.gains, FLAGS_dt, num, 10);
      if (!tr.ok) note = "diverged: " + tr.message;
    }
    const std::string pub_key = name == "EKF_paper" ? std::string("EKF") : name;
    nlohmann::json entry = {{"method", name}, {"note", note}};
    for (int j = 0; j < 3; ++j) {
      TrackingIndexes ix{};
      if (tr.ok) ix = Indexes(tr, FLAGS_dt);
      std::array<double, 3> pub = {NAN, NAN, NAN};
      if (kPublishedTracking.count(pub_key)) pub = kPublishedTracking.at(pub_key)[j];
      const double dev = tr.ok ? std::sqrt((tr.q.col(j) - real.q.col(j)).squaredNorm() / num) : NAN;
      char line[512];
      std::snprintf(line, sizeof(line), "%s,%d,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.4g,\"%s\"\n",
                    name.c_str(), j + 1, tr.ok ? ix.rmse[j] : NAN, tr.ok ? ix.iae[j] : NAN,
                    tr.ok ? ix.ise[j] : NAN, dev, pub[0], pub[1], pub[2], note.c_str());
      val_csv += line;
      entry["links"].push_back({{"link", j + 1},
                                {"rmse", tr.ok ? ix.rmse[j] : NAN},
                                {"iae", tr.ok ? ix.iae[j] : NAN},
                                {"ise", tr.ok ? ix.ise[j] : NAN},
                                {"rms_deviation_from_real", dev}});
    }
    val_json.push_back(entry);
  }
  results->summary["validation"] = val_json;
  return true;
}

// ---- Validation of a measured record by torque prediction.

// tau_hat = Y(q, q', q'') p of every estimate against the measured torques, with the regressor
// of the record: RMS error per joint, also in % of the joint's RMS measured torque.
void ValidateByTorquePrediction(const Regression& regression, Results* results) {
  using JointRows = Eigen::Map<const Eigen::Matrix<double, 3, Eigen::Dynamic>>;
  const int num = static_cast<int>(regression.tau.size() / 3);
  const Eigen::Vector3d rms_tau =
      (JointRows(regression.tau.data(), 3, num).rowwise().squaredNorm() / num).cwiseSqrt();
  std::string& val_csv = results->csv.validation;
  val_csv = "method,joint,rms_error,rms_torque,rms_error_percent\n";
  nlohmann::json val_json = nlohmann::json::array();
  for (const Estimate& e : results->estimates) {
    const Eigen::VectorXd residual = regression.tau - regression.phi * e.p;
    const JointRows r(residual.data(), 3, num);
    nlohmann::json entry = {{"method", e.method}};
    for (int j = 0; j < 3; ++j) {
      const double rms = std::sqrt(r.row(j).squaredNorm() / num);
      const double percent = 100.0 * rms / rms_tau(j);
      char line[256];
      std::snprintf(line, sizeof(line), "%s,%d,%.6g,%.6g,%.4g\n", e.method.c_str(), j + 1, rms,
                    rms_tau(j), percent);
      val_csv += line;
      entry["joints"].push_back({{"joint", j + 1},
                                 {"rms_error", rms},
                                 {"rms_torque", rms_tau(j)},
                                 {"rms_error_percent", percent}});
    }
    val_json.push_back(entry);
  }
  results->summary["validation"] = val_json;
}

// The estimates whose predicted torques torque_prediction.csv and its figure show.
const char* const kTorquePredictionMethods[] = {"LS", "UKF_RTS", "WR_smoother"};

// The measured torques and those predicted by kTorquePredictionMethods over time, decimated to at
// most --max_plot_rows rows: t, tau_measured1..3, <method>_tau1..3 for the *methods present.
std::string TorquePredictionCsv(const Record& record, const Regression& regression,
                                const std::vector<Estimate>& estimates,
                                std::vector<std::string>* methods) {
  const std::map<std::string, const Estimate*> by_name = EstimatesByName(estimates);
  std::vector<std::string> header = {"t", "tau_measured1", "tau_measured2", "tau_measured3"};
  std::vector<Eigen::VectorXd> predicted;
  for (const char* method : kTorquePredictionMethods) {
    if (!by_name.count(method)) continue;
    methods->push_back(method);
    for (int j = 1; j <= 3; ++j) header.push_back(std::string(method) + "_tau" + std::to_string(j));
    predicted.push_back(regression.phi * by_name.at(method)->p);
  }
  const int num = record.num;
  const int stride = std::max(1, (num + FLAGS_max_plot_rows - 1) / FLAGS_max_plot_rows);
  const int rows = (num + stride - 1) / stride;
  Eigen::MatrixXd table(rows, header.size());
  for (int r = 0; r < rows; ++r) {
    const int k = r * stride;
    int c = 0;
    table(r, c++) = record.sim.time(k);
    for (int j = 0; j < 3; ++j) table(r, c++) = regression.tau(3 * k + j);
    for (const Eigen::VectorXd& tau : predicted) {
      for (int j = 0; j < 3; ++j) table(r, c++) = tau(3 * k + j);
    }
  }
  return data::FormatCsv(header, table);
}

// ---- Tables.

std::string EstimatesCsv(const std::vector<Estimate>& estimates, const Eigen::Vector4d& truth) {
  std::string est_csv = "method";
  for (const char* n : kParamNames) est_csv += std::string(",") + n;
  for (const char* n : kParamNames) est_csv += std::string(",std_") + n;
  for (const char* n : kParamNames) est_csv += std::string(",err_percent_") + n;
  est_csv += ",description\n";
  for (const Estimate& e : estimates) {
    std::ostringstream os;
    os.precision(8);
    os << e.method;
    for (int i = 0; i < 4; ++i) os << "," << e.p(i);
    for (int i = 0; i < 4; ++i) {
      if (e.has_cov) {
        os << "," << std::sqrt(std::max(0.0, e.cov(i, i)));
      } else {
        os << ",nan";
      }
    }
    for (int i = 0; i < 4; ++i) os << "," << 100.0 * (e.p(i) - truth(i)) / truth(i);
    os << ",\"" << e.description << "\"\n";
    est_csv += os.str();
  }
  return est_csv;
}

// Table 7 side by side.
std::string Table7Csv(const std::vector<Estimate>& estimates, const Eigen::Vector4d& truth) {
  std::string t7_csv = "method";
  for (const char* n : kParamNames) t7_csv += std::string(",published_") + n;
  for (const char* n : kParamNames) t7_csv += std::string(",ours_") + n;
  for (const char* n : kParamNames) t7_csv += std::string(",ours_std_") + n;
  for (const char* n : kParamNames) t7_csv += std::string(",truth_") + n;
  t7_csv += ",ours_method\n";
  const std::map<std::string, const Estimate*> by_name = EstimatesByName(estimates);
  std::vector<std::pair<std::string, std::string>> rows = {
      {"real", ""},         {"LS", "LS"},    {"HNN", "HNN"}, {"EKF", "EKF_paper_mean"},
      {"EKF", "EKF_paper"}, {"EKF", "EKF"},  {"UKF", "UKF"}, {"UKF", "UKF_paper"},
      {"", "CD_EKF"},       {"", "EKF_RTS"}, {"", "UKF_RTS"}};
  if (by_name.count("WR_smoother")) rows.push_back({"", "WR_smoother"});
  for (const auto& [pub, ours] : rows) {
    std::ostringstream os;
    os.precision(8);
    os << (pub.empty() ? "-" : pub);
    const Published* pp = nullptr;
    for (const Published& q : kPublishedTable7) {
      if (q.method == pub) pp = &q;
    }
    for (int i = 0; i < 4; ++i) {
      if (pp) {
        os << "," << pp->p[i];
      } else {
        os << ",nan";
      }
    }
    const Estimate* e = ours.empty() ? nullptr : by_name.at(ours);
    for (int i = 0; i < 4; ++i) os << "," << (e ? e->p(i) : truth(i));
    for (int i = 0; i < 4; ++i) {
      os << "," << (e && e->has_cov ? std::sqrt(std::max(0.0, e->cov(i, i))) : 0.0);
    }
    for (int i = 0; i < 4; ++i) os << "," << truth(i);
    os << "," << (ours.empty() ? "truth" : ours) << "\n";
    t7_csv += os.str();
  }
  return t7_csv;
}

void TabulateEstimates(const Eigen::Vector4d& truth, Results* results) {
  results->csv.estimates = EstimatesCsv(results->estimates, truth);
  for (const Estimate& e : results->estimates) {
    results->summary["estimates"].push_back(EstimateJson(e, truth));
  }
  results->csv.table7 = Table7Csv(results->estimates, truth);
}

// Decimated to at most --max_plot_rows rows, for the figures.
std::string EvolutionCsv(const Record& record, const solvers::HopfieldResult& hnn,
                         const FilterResults& filters) {
  const int num = record.num;
  const std::vector<FilterRun>& runs = filters.runs;
  const int stride = std::max(1, (num + FLAGS_max_plot_rows - 1) / FLAGS_max_plot_rows);
  std::vector<std::string> ev_header = {"t"};
  auto add_cols = [&](const std::string& prefix, bool with_std) {
    for (const char* n : kParamNames) ev_header.push_back(prefix + "_" + n);
    if (with_std) {
      for (const char* n : kParamNames) ev_header.push_back(prefix + "_std_" + n);
    }
  };
  add_cols("hnn", false);
  for (const FilterRun& run : runs) add_cols(run.name, true);
  add_cols("CD_EKF", true);
  add_cols("EKF_RTS", true);
  add_cols("UKF_RTS", true);
  if (!record.measured) {
    for (const char* n : kParamNames) ev_header.push_back(std::string("true_") + n);
  }
  std::vector<Eigen::MatrixXd> stds;
  for (const FilterRun& run : runs) stds.push_back(run.record.FilteredStd());
  const int rows = (num + stride - 1) / stride;
  Eigen::MatrixXd ev(rows, ev_header.size());
  for (int r = 0; r < rows; ++r) {
    const int k = r * stride;
    int c = 0;
    ev(r, c++) = record.sim.time(k);
    for (int i = 0; i < 4; ++i) ev(r, c++) = hnn.parameters(k, i);
    for (size_t f = 0; f < runs.size(); ++f) {
      for (int i = 0; i < 4; ++i) ev(r, c++) = runs[f].record.filtered_states(k, 6 + i);
      for (int i = 0; i < 4; ++i) ev(r, c++) = stds[f](k, 6 + i);
    }
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.cd.states(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.cd.state_std(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ekf_rts.states(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ekf_rts.state_std(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ukf_rts.states(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ukf_rts.state_std(k, 6 + i);
    if (record.measured) continue;
    for (int i = 0; i < 4; ++i) ev(r, c++) = record.truth(i);
  }
  return data::FormatCsv(ev_header, ev);
}

std::string RecordCsv(const Record& record) {
  const data::RobotSimulation& sim = record.sim;
  std::vector<std::string> rec_header = {"t"};
  for (const char* q : {"q_ref", "q", "qd", "qdd", "tau", "tau_measured"}) {
    for (int j = 1; j <= 3; ++j) rec_header.push_back(std::string(q) + std::to_string(j));
  }
  for (const char* yname : {"y_q1", "y_qd1", "y_q2", "y_qd2", "y_d3", "y_dd3"}) {
    rec_header.push_back(yname);
  }
  Eigen::MatrixXd rec(record.num, rec_header.size());
  rec << sim.time, sim.q_reference, sim.q, sim.qd, sim.qdd, sim.tau, sim.tau_measured, record.y;
  return data::FormatCsv(rec_header, rec);
}

// A measured record: the CSV's time, positions and torques, the IRWSM2 kinematics of the
// regressors (q, qd, qdd) and what the filters see (y_*).
std::string MeasuredRecordCsv(const Record& record) {
  const data::RobotSimulation& sim = record.sim;
  std::vector<std::string> rec_header = {"t"};
  for (const char* q : {"q_measured", "q", "qd", "qdd", "tau_measured"}) {
    for (int j = 1; j <= 3; ++j) rec_header.push_back(std::string(q) + std::to_string(j));
  }
  for (const char* yname : {"y_q1", "y_qd1", "y_q2", "y_qd2", "y_d3", "y_dd3"}) {
    rec_header.push_back(yname);
  }
  Eigen::MatrixXd rec(record.num, rec_header.size());
  rec << sim.time, sim.q_measured, sim.q, sim.qd, sim.qdd, sim.tau_measured, record.y;
  return data::FormatCsv(rec_header, rec);
}

// ---- Acceptance.

double MaxRelativeError(const std::vector<Estimate>& estimates, const std::string& method,
                        const Eigen::Vector4d& truth) {
  for (const Estimate& e : estimates) {
    if (e.method == method) return (e.p - truth).cwiseQuotient(truth).cwiseAbs().maxCoeff();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Every recursive estimate (and the batch smoother's) must come with a finite, symmetric
// positive semi-definite 4 × 4 parameter covariance.
bool FiltersCarryCovariance(const std::vector<Estimate>& estimates) {
  bool filters_carry_covariance = true;
  for (const Estimate& e : estimates) {
    const bool is_filter = e.method.rfind("EKF", 0) == 0 || e.method.rfind("UKF", 0) == 0 ||
                           e.method.rfind("CD_EKF", 0) == 0 || e.method == "WR_smoother";
    if (!is_filter) continue;
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eig(e.cov);
    const bool ok = e.has_cov && e.cov.allFinite() &&
                    (e.cov - e.cov.transpose()).cwiseAbs().maxCoeff() <=
                        1e-9 * (1.0 + e.cov.cwiseAbs().maxCoeff()) &&
                    eig.eigenvalues().minCoeff() >= -1e-12 * (1.0 + e.cov.cwiseAbs().maxCoeff());
    if (!ok) {
      std::cerr << "scara_study: warning: " << e.method << " has no valid parameter covariance\n";
      filters_carry_covariance = false;
    }
  }
  return filters_carry_covariance;
}

// Why the published EKF can end with a negative IZZ2: its own covariance under the published
// P0 = Q = 10 I, where the published value lies in it, and the sign statistics per setting.
nlohmann::json ExplainPublishedEkf(const Record& record, const FilterResults& filters,
                                   const nlohmann::json& summary) {
  const int num = record.num;
  const Eigen::Vector4d& truth = record.truth;
  const FilterRun& paper = filters.runs[kEkfPaperRun];
  const FilterRun& tuned = filters.runs[kEkfRun];
  nlohmann::json ekf_why;
  const Eigen::MatrixXd sd = paper.record.FilteredStd();
  const double izz2 = paper.record.filtered_states(num - 1, 7);
  const double sd_izz2 = sd(num - 1, 7);
  const double published = kPublishedTable7[3].p[1];
  ekf_why["published_settings_final_IZZ2"] = izz2;
  ekf_why["published_settings_final_std_IZZ2"] = sd_izz2;
  ekf_why["published_settings_std_over_truth"] = {{"IZZ1", sd(num - 1, 6) / truth(0)},
                                                  {"IZZ2", sd_izz2 / truth(1)},
                                                  {"mr", sd(num - 1, 8) / truth(2)},
                                                  {"m3", sd(num - 1, 9) / truth(3)}};
  ekf_why["published_IZZ2_deviation_in_filter_std"] = (published - truth(1)) / sd_izz2;
  ekf_why["tuned_final_IZZ2"] = tuned.record.filtered_states(num - 1, 7);
  ekf_why["tuned_final_std_IZZ2"] = tuned.record.FilteredStd()(num - 1, 7);
  ekf_why["sign_statistics"] = summary.contains("ekf_seed_statistics")
                                   ? summary.at("ekf_seed_statistics")
                                   : nlohmann::json::array();
  return ekf_why;
}

void JudgeAcceptance(const Record& record, const solvers::HopfieldResult& hnn,
                     const FilterResults& filters, int ukf_seed_failures, Results* results) {
  const int num = record.num;
  const std::vector<Estimate>& estimates = results->estimates;
  nlohmann::json& summary = results->summary;
  auto max_rel = [&](const std::string& method) {
    return MaxRelativeError(estimates, method, record.truth);
  };
  const bool filters_carry_covariance = FiltersCarryCovariance(estimates);
  bool ukf_pd = true;
  for (const auto& u : filters.ukf_json) {
    ukf_pd = ukf_pd && u["positive_definite_throughout"].get<bool>();
  }
  // The UKF runs of the sign statistics count too (a failure there does not stop the study, so
  // that its outputs show where; the verdict is false).
  ukf_pd = ukf_pd && ukf_seed_failures == 0;
  summary["ukf_seed_statistics_failures"] = ukf_seed_failures;
  summary["ukf_runs"] = filters.ukf_json;
  summary["ekf_explanation"] = ExplainPublishedEkf(record, filters, summary);
  summary["acceptance"] = {
      {"ls_max_relative_error", max_rel("LS")},
      {"ekf_rts_max_relative_error", max_rel("EKF_RTS")},
      {"ukf_rts_max_relative_error", max_rel("UKF_RTS")},
      {"wr_smoother_max_relative_error", max_rel("WR_smoother")},
      {"ukf_max_relative_error", max_rel("UKF")},
      {"ls_within_1_percent", max_rel("LS") <= 0.01},
      {"smoother_within_1_percent",
       max_rel("WR_smoother") <= 0.01 && max_rel("UKF_RTS") <= 0.01 && max_rel("EKF_RTS") <= 0.01},
      {"ukf_within_3_percent", max_rel("UKF") <= 0.03},
      {"filters_carry_covariance", filters_carry_covariance},
      {"ukf_positive_definite_throughout", ukf_pd}};
  if (record.measured) {
    // No truth: the verdicts against it are undefined (their errors are NaN, null in JSON).
    for (const char* key :
         {"ls_within_1_percent", "smoother_within_1_percent", "ukf_within_3_percent"}) {
      summary["acceptance"][key] = nullptr;
    }
  }
  const solvers::KalmanFilterRecord& ekf = filters.runs[kEkfRun].record;
  const solvers::KalmanFilterRecord& ukf = filters.runs[kUkfRun].record;
  summary["time_s"] = {{"EKF", ekf.time_s},
                       {"UKF", ukf.time_s},
                       {"CD_EKF", filters.cd.time_s},
                       {"EKF_RTS", filters.ekf_rts.time_s},
                       {"UKF_RTS", filters.ukf_rts.time_s},
                       {"HNN", hnn.time_s}};
  summary["throughput_samples_per_s"] = {{"EKF", num / ekf.time_s},
                                         {"UKF", num / ukf.time_s},
                                         {"CD_EKF", num / filters.cd.time_s},
                                         {"HNN", num / hnn.time_s}};
}

// ---- Outputs.

bool WriteCsvFiles(const CsvFiles& csv, data::OutputStage* stage, std::string* error) {
  return stage->WriteText("record.csv", csv.record, error) &&
         stage->WriteText("evolution.csv", csv.evolution, error) &&
         stage->WriteText("estimates.csv", csv.estimates, error) &&
         stage->WriteText("table7.csv", csv.table7, error) &&
         stage->WriteText("validation.csv", csv.validation, error) &&
         stage->WriteText("ekf_diagnosis.csv", csv.ekf_diagnosis, error) &&
         stage->WriteText("ekf_seed_statistics.csv", csv.ekf_seed_statistics, error) &&
         (csv.torque_prediction.empty() ||
          stage->WriteText("torque_prediction.csv", csv.torque_prediction, error));
}

// The first figure that could not be rendered; it fails the run (main checks it after
// RenderFigures), and the figures after it are not attempted.
std::string g_figure_error;

void RenderOrRecord(const data::Figure& figure, const data::OutputStage& stage,
                    const std::string& stem) {
  if (!g_figure_error.empty()) return;
  std::string why;
  if (!data::RenderFigure(figure, stage.Path(""), stem, &why)) g_figure_error = why;
}

// The four parameters of one estimator over time, against the truth when there is one.
void RenderParameterFigure(const data::OutputStage& stage, const std::string& prefix,
                           const std::string& title, const std::string& stem, bool with_std,
                           bool with_truth) {
  data::Figure f;
  f.title = title;
  f.columns = 2;
  for (const char* n : kParamNames) {
    data::Panel p{n, "t [s]", n, {}, {}};
    p.series.push_back(data::LineSeries("evolution.csv", "t", prefix + "_" + n, prefix,
                                        with_std ? prefix + "_std_" + n : ""));
    if (with_truth) {
      p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("true_") + n, "true"));
    }
    f.panels.push_back(p);
  }
  RenderOrRecord(f, stage, stem);
}

// A measured record: the measured torques of each joint against those the estimates predict
// (torque_prediction.csv).
void RenderTorquePrediction(const data::OutputStage& stage,
                            const std::vector<std::string>& methods) {
  data::Figure f;
  f.title = "Measured and predicted joint torques, tau_hat = Y(q, q', q'') p";
  f.columns = 1;
  const char* units[3] = {"tau1 [N m]", "tau2 [N m]", "f3 [N]"};
  for (int j = 1; j <= 3; ++j) {
    const std::string joint = std::to_string(j);
    data::Panel p{"joint " + joint, "t [s]", units[j - 1], {}, {}};
    p.series.push_back(
        data::LineSeries("torque_prediction.csv", "t", "tau_measured" + joint, "measured"));
    for (const std::string& method : methods) {
      p.series.push_back(
          data::LineSeries("torque_prediction.csv", "t", method + "_tau" + joint, method));
    }
    f.panels.push_back(p);
  }
  RenderOrRecord(f, stage, "torque_prediction");
}

// Like the published Figs. 7–12; the "true" series only with a truth, the torque prediction
// only without (for the estimates in torque_methods).
void RenderFigures(const data::OutputStage& stage, bool with_truth,
                   const std::vector<std::string>& torque_methods) {
  RenderParameterFigure(stage, "hnn",
                        "Hopfield network: parameter evolution (cf. published Fig. 7)",
                        "params_hnn", false, with_truth);
  RenderParameterFigure(stage, "EKF_paper", "EKF, published settings (±2σ) (cf. Fig. 8)",
                        "params_ekf_paper", true, with_truth);
  RenderParameterFigure(stage, "EKF", "EKF, tuned settings (±2σ)", "params_ekf", true, with_truth);
  RenderParameterFigure(stage, "UKF", "square-root UKF, tuned settings (±2σ) (cf. Fig. 9)",
                        "params_ukf", true, with_truth);
  RenderParameterFigure(stage, "UKF_paper", "square-root UKF, published P0, Q (±2σ)",
                        "params_ukf_paper", true, with_truth);
  data::Figure cmp;
  cmp.title = "Parameter estimates over time: EKF, HNN, UKF (cf. Figs. 10–12)";
  cmp.columns = 2;
  for (const char* n : kParamNames) {
    data::Panel p{n, "t [s]", n, {}, {}};
    p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("hnn_") + n, "HNN"));
    p.series.push_back(
        data::LineSeries("evolution.csv", "t", std::string("EKF_paper_") + n, "EKF (published)"));
    p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("EKF_") + n, "EKF"));
    p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("UKF_") + n, "UKF"));
    p.series.push_back(
        data::LineSeries("evolution.csv", "t", std::string("UKF_RTS_") + n, "UKF + RTS"));
    if (with_truth) {
      p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("true_") + n, "true"));
    }
    cmp.panels.push_back(p);
  }
  RenderOrRecord(cmp, stage, "params_comparison");
  if (!with_truth) RenderTorquePrediction(stage, torque_methods);
}

// The runs of a sign-statistics row, and how many of them matched a fraction of the row.
int RunsWith(const nlohmann::json& row, const char* fraction) {
  const int finished = row["runs"].get<int>() - row["failed"].get<int>();
  return static_cast<int>(std::lround(row[fraction].get<double>() * finished));
}

// A measured record: the estimates without errors (there is no truth) and the torque-prediction
// error of each.
void PrintMeasuredDigest(const Record& record, const Results& results) {
  const nlohmann::json& summary = results.summary;
  const nlohmann::json& ekf_why = summary["ekf_explanation"];
  std::printf("scara_study: measured record %s, %d samples every %.6g s, filter velocities %s\n",
              FLAGS_measurements_csv.c_str(), record.num, record.dt,
              record.source["filter_velocities"].get<std::string>().c_str());
  std::printf("%-22s %10s %10s %10s %10s   (torque RMS error, %% of RMS torque: joint 1 2 3)\n",
              "method", "IZZ1", "IZZ2", "mr", "m3");
  for (size_t i = 0; i < results.estimates.size(); ++i) {
    const Estimate& e = results.estimates[i];
    const nlohmann::json& joints = summary["validation"][i]["joints"];
    std::printf("%-22s %10.5f %10.5f %10.5f %10.5f   %.3g %.3g %.3g\n", e.method.c_str(), e.p(0),
                e.p(1), e.p(2), e.p(3), joints[0]["rms_error_percent"].get<double>(),
                joints[1]["rms_error_percent"].get<double>(),
                joints[2]["rms_error_percent"].get<double>());
  }
  std::printf("UKF positive definite on every run: %s\n",
              summary["acceptance"]["ukf_positive_definite_throughout"].get<bool>() ? "yes" : "NO");
  std::printf(
      "EKF, published P0 = Q = 10 I: IZZ2 = %.4g, filter std %.4g; tuned: IZZ2 = %.6g, std %.3g\n",
      ekf_why["published_settings_final_IZZ2"].get<double>(),
      ekf_why["published_settings_final_std_IZZ2"].get<double>(),
      ekf_why["tuned_final_IZZ2"].get<double>(), ekf_why["tuned_final_std_IZZ2"].get<double>());
  std::printf("scara_study: wrote %s\n", FLAGS_out_dir.c_str());
}

void PrintDigest(const Record& record, const Results& results) {
  if (record.measured) {
    PrintMeasuredDigest(record, results);
    return;
  }
  const nlohmann::json& summary = results.summary;
  const nlohmann::json& ekf_why = summary["ekf_explanation"];
  std::printf("scara_study: %d samples, PID bandwidth %.3g Hz\n", record.num,
              FLAGS_pid_bandwidth_hz);
  std::printf("%-22s %10s %10s %10s %10s   (max |rel err|)\n", "method", "IZZ1", "IZZ2", "mr",
              "m3");
  for (const Estimate& e : results.estimates) {
    std::printf("%-22s %10.5f %10.5f %10.5f %10.5f   %.3g %%\n", e.method.c_str(), e.p(0), e.p(1),
                e.p(2), e.p(3),
                100.0 * (e.p - record.truth).cwiseQuotient(record.truth).cwiseAbs().maxCoeff());
  }
  std::printf("UKF positive definite on every run: %s\n",
              summary["acceptance"]["ukf_positive_definite_throughout"].get<bool>() ? "yes" : "NO");
  std::printf(
      "EKF, published P0 = Q = 10 I: IZZ2 = %.4g, filter std %.4g (published %.4g is "
      "%.2f std from the truth); tuned: IZZ2 = %.6g, std %.3g\n",
      ekf_why["published_settings_final_IZZ2"].get<double>(),
      ekf_why["published_settings_final_std_IZZ2"].get<double>(), kPublishedTable7[3].p[1],
      ekf_why["published_IZZ2_deviation_in_filter_std"].get<double>(),
      ekf_why["tuned_final_IZZ2"].get<double>(), ekf_why["tuned_final_std_IZZ2"].get<double>());
  if (summary.contains("ekf_seed_statistics")) {
    for (const auto& st : summary["ekf_seed_statistics"]) {
      std::printf(
          "  %s %-11s start, Q_theta = %-6g Q_state = %-6g %-5s: IZZ2 < 0 at the end in "
          "%d of %d noise realisations (published signature: %d)\n",
          st["filter"].get<std::string>().c_str(), st["start"].get<std::string>().c_str(),
          st["q_param"].get<double>(), st["q_state"].get<double>(),
          st["discretization"].get<std::string>().c_str(),
          RunsWith(st, "fraction_final_IZZ2_negative"),
          st["runs"].get<int>() - st["failed"].get<int>(),
          RunsWith(st, "fraction_published_signature"));
    }
  }
  std::printf("scara_study: wrote %s\n", FLAGS_out_dir.c_str());
}

// Every estimator over the record, the EKF diagnosis, the sign statistics and the validation
// (torque prediction for a measured record, closed-loop tracking for the simulated one); false
// with a message.
bool RunStages(const Record& record, const data::JointTrajectory& reference,
               solvers::HopfieldResult* hnn, FilterResults* filters, int* ukf_seed_failures,
               Results* results, std::string* error) {
  const Regression regression = StackRegression(record);
  EstimateLeastSquares(record, regression, results);
  if (!RunHopfield(record, regression, hnn, results, error)) return false;

  const FilterSetup setup = MakeFilterSetup(record);
  if (!RunFilters(record, setup, filters, error)) return false;
  AddFilterEstimates(record, *filters, &results->estimates);
  if (!RunWeightedResidualSmoother(record, *filters, results, error)) return false;

  DiagnoseEkfSettings(record, setup, results);
  results->summary["ekf_paper_izz2_std"] = Izz2StdOverRecord(filters->runs[kEkfPaperRun]);
  *ukf_seed_failures = RunSignStatistics(record, setup, results);
  if (record.measured) {
    ValidateByTorquePrediction(regression, results);
    results->csv.torque_prediction = TorquePredictionCsv(record, regression, results->estimates,
                                                         &results->csv.torque_prediction_methods);
    return true;
  }
  return ValidateByTracking(record, reference, results, error);
}

// The flags, and with a record (measured) the CSV and the filters' measurement std; false with
// a message naming the flag or the file:line:column.
bool ValidateInputs(bool measured, Eigen::Vector3d* torque_noise, Vector6d* measured_std,
                    MeasuredColumns* columns, std::string* error) {
  if ((measured && !RejectSimulationFlags(error)) || !ValidateFlags(torque_noise, error)) {
    return false;
  }
  if (!measured) {
    if (FLAGS_measurement_std.empty()) return true;
    *error =
        "--measurement_std is used only with --measurements_csv (the simulation draws its "
        "sensor noise from the published R scaled by --noise_scale)";
    return false;
  }
  return MeasuredRecordStd(measured_std, error) &&
         ReadMeasuredColumns(FLAGS_measurements_csv, columns, error);
}

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(
      &argc, &argv,
      "scara_study [--duration_s=30] [--seed=S] [--out_dir=D] [--noise_scale=1] "
      "[--q_param=0] [--ukf_alpha=1] ...\n"
      "scara_study --measurements_csv=F [--out_dir=D] [--measurement_std=6 values] "
      "[--q_param=0] ...");
  FLAGS_logtostderr = true;
  std::string error;
  Eigen::Vector3d torque_noise;
  const bool measured = !FLAGS_measurements_csv.empty();
  MeasuredColumns columns;
  Vector6d measured_std;
  if (!ValidateInputs(measured, &torque_noise, &measured_std, &columns, &error)) {
    return Fail(2, error);
  }

  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error)) return Fail(1, error);
  const auto wall_start = std::chrono::steady_clock::now();

  const MultisineReference reference(FLAGS_duration_s);
  Record record;
  if (measured ? !MakeMeasuredRecord(columns, torque_noise, measured_std, &record, &error)
               : !SimulateRecord(reference, torque_noise, &record, &error)) {
    return Fail(1, error);
  }
  Results results;
  if (measured) {
    DescribeMeasuredRecord(record, &results.summary);
  } else {
    DescribeRecord(record, &results.summary);
  }

  solvers::HopfieldResult hnn;
  FilterResults filters;
  int ukf_seed_failures = 0;
  if (!RunStages(record, reference, &hnn, &filters, &ukf_seed_failures, &results, &error)) {
    return Fail(1, error);
  }

  TabulateEstimates(record.truth, &results);
  results.csv.evolution = EvolutionCsv(record, hnn, filters);
  results.csv.record = measured ? MeasuredRecordCsv(record) : RecordCsv(record);
  JudgeAcceptance(record, hnn, filters, ukf_seed_failures, &results);
  if (!WriteCsvFiles(results.csv, &stage, &error)) return Fail(1, error);
  if (FLAGS_figures) {
    RenderFigures(stage, !measured, results.csv.torque_prediction_methods);
    if (!g_figure_error.empty()) return Fail(1, g_figure_error);
  }

  results.summary["wall_time_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!stage.WriteJson("summary.json", results.summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  PrintDigest(record, results);
  return 0;
}
