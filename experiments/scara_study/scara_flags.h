// experiments/scara_study/scara_flags — the flags of scara_study (defined in scara_flags.cc, in the
// program's folder, so that --help lists them as the program's own), their checks (exit code 2 on
// any failure) and what the study derives from them alone: the UKF options, the published
// measurement noise scaled by --noise_scale, the estimators' flags for summary.json.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_FLAGS_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_FLAGS_H_

#include <gflags/gflags.h>

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <string>

#include "dynid/models/scara3.h"
#include "dynid/solvers/unscented_kalman_filter.h"
#include "experiments/common/monte_carlo_cli.h"

DECLARE_double(duration_s);
DECLARE_double(dt);
DECLARE_uint64(seed);
DECLARE_string(out_dir);
DECLARE_double(noise_scale);
DECLARE_string(torque_noise_std);
DECLARE_double(pid_bandwidth_hz);
DECLARE_double(q_state);
DECLARE_double(q_param);
DECLARE_double(prior_std_fraction);
DECLARE_double(ukf_alpha);
DECLARE_double(ukf_beta);
DECLARE_double(ukf_kappa);
DECLARE_double(hnn_gain);
DECLARE_string(hnn_activation);
DECLARE_double(hnn_amplitude);
DECLARE_double(hnn_beta);
DECLARE_int32(seed_repeats);
DECLARE_int32(rk4_substeps);
DECLARE_int32(max_plot_rows);
DECLARE_bool(wr_smoother);
DECLARE_double(wr_position_intensity);
DECLARE_double(wr_velocity_intensity);
DECLARE_double(wr_equation_std);
DECLARE_string(wr_initial_trajectory);
DECLARE_int32(wr_max_iterations);
DECLARE_bool(figures);
DECLARE_string(measurements_csv);
DECLARE_string(measurement_std);
DECLARE_string(mismatch);
DECLARE_string(coverage_csv);

namespace dynid::scara_study {

using Vector6d = Eigen::Matrix<double, 6, 1>;

// Every flag checked, with a message naming the flag; `measured` (--measurements_csv given)
// rejects the simulation flags and reads --measurement_std. torque_noise receives
// --torque_noise_std parsed, measured_std (a measured record only) the std of q1, q1', q2, q2',
// d3, d3' the filters assume: --measurement_std, or the published R scaled by --noise_scale.
bool ValidateFlags(bool measured, Eigen::Vector3d* torque_noise, Vector6d* measured_std,
                   std::string* error);

// The gravity of the simulated robot (models::MakeScara3, models::Scara3Model) [m/s²], and the
// factor of --mismatch=gravity.
inline constexpr double kGravity = 9.81;
inline constexpr double kMismatchFactor = 1.1;

// The gravity of the estimators' model: kGravity, times kMismatchFactor with --mismatch=gravity
// (the simulated robot keeps kGravity).
double EstimatorGravity();

// --mismatch=friction: the simulated robot's viscous joint friction [N m s/rad, N m s/rad, N s/m],
// about 10 % of each joint's RMS torque on the default 30 s record (RMS velocities 0.80 rad/s,
// 1.16 rad/s, 0.17 m/s; RMS torques 13.8 N m, 3.2 N m, 19.7 N). The estimators' model has no
// friction.
inline constexpr double kMismatchViscousFriction[3] = {1.7, 0.28, 12.0};

// The link data of the simulated robot: the paper's, with kMismatchViscousFriction under
// --mismatch=friction.
models::Scara3LinkData SimulatedLinkData();

// The published R (std) scaled by --noise_scale.
Vector6d PublishedMeasurementStd();

// --ukf_alpha, --ukf_beta, --ukf_kappa around the filter settings `filter`.
solvers::UkfOptions UkfOptionsFromFlags(const solvers::KalmanFilterOptions& filter);

// The flags of the estimators, used with either source (summary.json "flags").
nlohmann::json EstimatorFlags();

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_FLAGS_H_
