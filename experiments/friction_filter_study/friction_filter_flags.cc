// experiments/friction_filter_study/friction_filter_flags — the flags of friction_filter_study
// and their checks (see friction_filter_flags.h).
#include "experiments/friction_filter_study/friction_filter_flags.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/solvers/sliding_surface_filter.h"
#include "experiments/common/cli.h"

DEFINE_string(out_dir, "out/friction_filter_study", "output folder");
DEFINE_double(duration_s, 4.0, "length of the record (s)");
DEFINE_double(sample_period_s, 1e-3, "sampling interval (s)");
DEFINE_double(force_amplitude, 4.0, "amplitude of f = A sin(2 pi F t) (N)");
DEFINE_double(force_frequency_hz, 1.0, "frequency F of the force (Hz)");
DEFINE_double(static_friction, 2.0, "w_s (N), >= dynamic friction");
DEFINE_double(dynamic_friction, 2.0, "w_d (N)");
DEFINE_double(filter_mass, 1.0, "m_f of both filters (kg)");
DEFINE_string(true_masses, "1,2", "true masses to simulate (kg), comma-separated");
DEFINE_double(lambda, 15.0, "sliding-surface filter: Lambda (all components), 1/s");
DEFINE_double(omega, 15.0, "sliding-surface filter: Omega (all components)");
DEFINE_double(sigma_demo, 5.0, "sliding-surface filter: the nonzero sigma of the velocity figure");
DEFINE_double(boundary_layer, 0.0, "sliding-surface filter: boundary layer (0 = sign)");
DEFINE_string(initial_state, "0.3,0,4", "initial estimate [s, v, e] of both filters");
DEFINE_string(initial_input, "8,4", "sliding-surface filter: initial [a, f]");
// Optimal-filter weights by the 1/(order of magnitude)² rule of van de Molengraft (1990) §5.5: the
// measurement weights are 1/sd² of the --noise_scale=1 noise (1e-4 m, 1e-2 m/s², 1e-2 N), the
// equation of motion is trusted like the force measurement, and e' is of order 4 N / 10 ms = 400
// N/s at a friction reversal, so W_theta = 1/400² ≈ 1e-5.
DEFINE_double(optimal_parameter_weight, 1e-5, "optimal filter: W_theta of the friction force");
// Empty with --sensors=realistic: the sensors' noise as intensities, V = 1/(sd² h) for samples h
// apart (per-sample weight 1/sd²; problems::WeightedResidualWeights::FromStandardDeviations), sd
// of the accelerometer and the force sensor, resolution/√12 of the encoder, the equation of motion
// like the force sensor. Empty with --sensors=ideal: 1e4,1e8,1e4,1e4 (1/sd² of the noise_scale = 1
// levels, as intensities per second).
DEFINE_string(optimal_residual_weights, "",
              "optimal filter: V for [equation of motion, s, a, f]; empty = from the sensors' "
              "noise (realistic: 1/(sd² h), h the sample period; ideal: 1e4,1e8,1e4,1e4)");
DEFINE_string(optimal_kinematic_weights, "1e6,1e4", "optimal filter: W for [xi_s, xi_v]");
DEFINE_string(sensors, "realistic",
              "'realistic': an encoder (--encoder_resolution_m), an accelerometer and a force "
              "sensor with white noise (--accelerometer_noise, --force_sensor_noise); 'ideal': "
              "the true s, a, f plus noise of --noise_scale");
DEFINE_double(encoder_resolution_m, 1e-5, "--sensors=realistic: one encoder count (m)");
DEFINE_double(accelerometer_noise, 0.05,
              "--sensors=realistic: accelerometer noise standard deviation (m/s²)");
DEFINE_double(force_sensor_noise, 0.02,
              "--sensors=realistic: force sensor noise standard deviation (N)");
DEFINE_double(force_delay_s, 0.0,
              "--sensors=realistic: the force sensor reads f(t - delay), an effect the filters' "
              "model lacks (s)");
DEFINE_double(prefilter_hz, 0.0,
              "cut-off of the causal 2nd-order Butterworth low-pass applied to s, a, f before "
              "both filters (the sliding-surface filter differentiates its output); 0 = none");
DEFINE_double(noise_scale, 0.0,
              "--sensors=ideal: measurement noise in units of (1e-4 m, 1e-2 m/s², 1e-2 N); 0 = "
              "noise-free");
DEFINE_int32(seed, 1, "noise seed (with --monte_carlo: the first seed)");
DEFINE_double(jump_threshold_n, 0.5,
              "a friction jump is a change of the true friction by more than this between two "
              "samples (N)");
DEFINE_double(jump_window_s, 0.1, "window after each friction jump for its lag and error (s)");
DEFINE_string(coverage_times_s, "1.35,1.62,1.85",
              "times (s) of the optimal filter's intervals of the friction and velocity, within "
              "the record: quoted with their measured coverage by a single run, checked against "
              "the truth by --monte_carlo (within [--transient_s, --duration_s])");
DEFINE_string(coverage_csv, "",
              "the measured coverage quoted beside a single run's intervals: a coverage.csv "
              "written by --monte_carlo (empty: the shipped one, at the default settings only)");
DEFINE_double(transient_s, 1.0, "RMS errors 'after transient' use t >= this (s)");
DEFINE_bool(figures, true, "render PNG figures (python3 + matplotlib)");
DEFINE_string(measurements_csv, "",
              "measured record t,s,a,f (see the header comment); empty = simulate the stick-slip "
              "mass for each of --true_masses");

namespace dynid::friction_filter_study {

bool ValidateFlags(std::string* error) {
  const bool measured = !FLAGS_measurements_csv.empty();
  if (measured) {
    // The simulation's flags would be ignored: an error, not a silent skip. (--sensors and the
    // sensors' levels state the recording's noise: they set the optimal filter's weights.)
    for (const char* flag : {"duration_s", "sample_period_s", "force_amplitude",
                             "force_frequency_hz", "static_friction", "dynamic_friction",
                             "true_masses", "noise_scale", "seed", "force_delay_s", "monte_carlo",
                             "monte_carlo_threads", "jump_threshold_n", "jump_window_s"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        *error = std::string("--") + flag + " is not used with --measurements_csv";
        return false;
      }
    }
  }
  if (!(FLAGS_duration_s >= 0.1 && FLAGS_duration_s <= 100.0)) {
    *error = "--duration_s must be in [0.1, 100]";
    return false;
  }
  if (!(FLAGS_sample_period_s > 0.0 && FLAGS_sample_period_s <= 0.01)) {
    *error = "--sample_period_s must be in (0, 0.01]";
    return false;
  }
  if (!(FLAGS_dynamic_friction >= 0.0)) {
    *error = "--dynamic_friction must be >= 0";
    return false;
  }
  if (!(FLAGS_static_friction >= FLAGS_dynamic_friction)) {
    *error = "--static_friction must be >= --dynamic_friction";
    return false;
  }
  if (!std::isfinite(FLAGS_force_amplitude)) {
    *error = "--force_amplitude must be finite";
    return false;
  }
  if (!(FLAGS_force_frequency_hz > 0.0)) {
    *error = "--force_frequency_hz must be > 0";
    return false;
  }
  if (!(FLAGS_filter_mass > 0.0)) {
    *error = "--filter_mass must be > 0";
    return false;
  }
  if (!(FLAGS_optimal_parameter_weight > 0.0)) {
    *error = "--optimal_parameter_weight must be > 0";
    return false;
  }
  if (!(FLAGS_noise_scale >= 0.0)) {
    *error = "--noise_scale must be >= 0";
    return false;
  }
  if (FLAGS_sensors != "realistic" && FLAGS_sensors != "ideal") {
    *error = "--sensors must be 'realistic' or 'ideal', got '" + FLAGS_sensors + "'";
    return false;
  }
  const bool realistic = FLAGS_sensors == "realistic";
  if (realistic && !gflags::GetCommandLineFlagInfoOrDie("noise_scale").is_default) {
    *error =
        "--noise_scale is used with --sensors=ideal only (the realistic sensors' levels are "
        "--encoder_resolution_m, --accelerometer_noise, --force_sensor_noise)";
    return false;
  }
  if (!realistic) {
    for (const char* flag :
         {"encoder_resolution_m", "accelerometer_noise", "force_sensor_noise", "force_delay_s"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        *error = std::string("--") + flag + " is used with --sensors=realistic only";
        return false;
      }
    }
  }
  if (!(FLAGS_encoder_resolution_m > 0.0 && FLAGS_encoder_resolution_m <= 1e-2)) {
    *error = "--encoder_resolution_m must be in (0, 0.01]";
    return false;
  }
  if (!(FLAGS_accelerometer_noise > 0.0 && std::isfinite(FLAGS_accelerometer_noise))) {
    *error = "--accelerometer_noise must be finite and > 0";
    return false;
  }
  if (!(FLAGS_force_sensor_noise > 0.0 && std::isfinite(FLAGS_force_sensor_noise))) {
    *error = "--force_sensor_noise must be finite and > 0";
    return false;
  }
  if (!(FLAGS_force_delay_s >= 0.0 && FLAGS_force_delay_s <= 0.1)) {
    *error = "--force_delay_s must be in [0, 0.1]";
    return false;
  }
  if (!(FLAGS_prefilter_hz >= 0.0 && std::isfinite(FLAGS_prefilter_hz))) {
    *error = "--prefilter_hz must be >= 0 (0 = no pre-filter)";
    return false;
  }
  if (!measured && FLAGS_prefilter_hz > 0.0 &&
      !(FLAGS_prefilter_hz < 0.5 / FLAGS_sample_period_s)) {
    *error = "--prefilter_hz must be below the Nyquist frequency 1 / (2 --sample_period_s)";
    return false;
  }
  if (!(FLAGS_jump_threshold_n > 0.0 && std::isfinite(FLAGS_jump_threshold_n))) {
    *error = "--jump_threshold_n must be finite and > 0";
    return false;
  }
  if (!(FLAGS_jump_window_s > 0.0 && std::isfinite(FLAGS_jump_window_s))) {
    *error = "--jump_window_s must be finite and > 0";
    return false;
  }
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  if (FLAGS_monte_carlo > 0 && FLAGS_seed < 0) {
    *error = "--seed must be >= 0 with --monte_carlo (the first of the seeds)";
    return false;
  }
  if (FLAGS_monte_carlo > 0 && !FLAGS_coverage_csv.empty()) {
    *error = "--coverage_csv is quoted by a single run, not used with --monte_carlo";
    return false;
  }
  if (FLAGS_monte_carlo == 0) {
    for (const char* flag : {"monte_carlo_threads"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        *error = std::string("--") + flag + " is used with --monte_carlo only";
        return false;
      }
    }
  }
  if (!measured && !(FLAGS_transient_s >= 0.0 && FLAGS_transient_s < FLAGS_duration_s)) {
    *error = "--transient_s must be in [0, --duration_s)";
    return false;
  }
  return true;
}

bool ParseSettings(double sample_period_s, Settings* settings, std::string* error) {
  if (!cli::ParseNumberList("true_masses", FLAGS_true_masses, 0, cli::kAnyNumber,
                            &settings->true_masses, error) ||
      !cli::ParseNumberList("initial_state", FLAGS_initial_state, 3, cli::kAnyNumber,
                            &settings->initial_state, error) ||
      !cli::ParseNumberList("initial_input", FLAGS_initial_input, 2, cli::kAnyNumber,
                            &settings->initial_input, error) ||
      (!FLAGS_optimal_residual_weights.empty() &&
       !cli::ParseNumberList("optimal_residual_weights", FLAGS_optimal_residual_weights, 4,
                             cli::kAnyNumber, &settings->residual_weights, error)) ||
      !cli::ParseNumberList("optimal_kinematic_weights", FLAGS_optimal_kinematic_weights, 2,
                            cli::kAnyNumber, &settings->kinematic_weights, error)) {
    return false;
  }
  if (FLAGS_optimal_residual_weights.empty()) {
    // The 1/(order of magnitude)² rule on the sensors' noise (van de Molengraft (1990) §5.5).
    if (FLAGS_sensors == "ideal") {
      settings->residual_weights = {1e4, 1e8, 1e4, 1e4};
    } else {
      const double h = sample_period_s;
      const double force = 1.0 / (FLAGS_force_sensor_noise * FLAGS_force_sensor_noise * h);
      settings->residual_weights = {
          force, 12.0 / (FLAGS_encoder_resolution_m * FLAGS_encoder_resolution_m * h),
          1.0 / (FLAGS_accelerometer_noise * FLAGS_accelerometer_noise * h), force};
    }
  }
  if (!cli::ParseNumberList("coverage_times_s", FLAGS_coverage_times_s, 0, cli::kAnyNumber,
                            &settings->coverage_times_s, error)) {
    return false;
  }
  if (FLAGS_monte_carlo > 0) {
    for (double t : settings->coverage_times_s) {
      if (!(t >= FLAGS_transient_s && t <= FLAGS_duration_s)) {
        *error = "--coverage_times_s: times must be in [--transient_s, --duration_s]";
        return false;
      }
    }
  }
  for (double mass : settings->true_masses) {
    if (!(mass > 0.0)) {
      *error = "--true_masses: masses must be > 0";
      return false;
    }
  }
  for (double w : settings->residual_weights) {
    if (!(w > 0.0)) {
      *error = "--optimal_residual_weights: weights must be > 0";
      return false;
    }
  }
  for (double w : settings->kinematic_weights) {
    if (!(w > 0.0)) {
      *error = "--optimal_kinematic_weights: weights must be > 0";
      return false;
    }
  }
  solvers::SlidingSurfaceFilterOptions& sliding_options = settings->sliding_options;
  sliding_options.lambda = Eigen::Vector4d::Constant(FLAGS_lambda);
  sliding_options.omega = Eigen::Vector4d::Constant(FLAGS_omega);
  sliding_options.xi_weight = Eigen::Matrix3d::Identity();
  sliding_options.boundary_layer = FLAGS_boundary_layer;
  if (!sliding_options.IsValid(error)) {
    *error = "--lambda/--omega/--boundary_layer: " + *error;
    return false;
  }
  if (!std::isfinite(FLAGS_sigma_demo)) {
    *error = "--sigma_demo must be finite";
    return false;
  }
  return true;
}

nlohmann::json FlagsJson(const Settings& settings) {
  return {{"measurements_csv", FLAGS_measurements_csv},
          {"duration_s", FLAGS_duration_s},
          {"sample_period_s", FLAGS_sample_period_s},
          {"force_amplitude", FLAGS_force_amplitude},
          {"force_frequency_hz", FLAGS_force_frequency_hz},
          {"static_friction", FLAGS_static_friction},
          {"dynamic_friction", FLAGS_dynamic_friction},
          {"filter_mass", FLAGS_filter_mass},
          {"true_masses", settings.true_masses},
          {"lambda", FLAGS_lambda},
          {"omega", FLAGS_omega},
          {"sigma_demo", FLAGS_sigma_demo},
          {"boundary_layer", FLAGS_boundary_layer},
          {"initial_state", settings.initial_state},
          {"initial_input", settings.initial_input},
          {"optimal_parameter_weight", FLAGS_optimal_parameter_weight},
          {"optimal_residual_weights", settings.residual_weights},
          {"optimal_kinematic_weights", settings.kinematic_weights},
          {"optimal_initial_weights", {1e2, 1e2, 1e-2}},
          {"sensors", FLAGS_sensors},
          {"encoder_resolution_m", FLAGS_encoder_resolution_m},
          {"accelerometer_noise", FLAGS_accelerometer_noise},
          {"force_sensor_noise", FLAGS_force_sensor_noise},
          {"force_delay_s", FLAGS_force_delay_s},
          {"prefilter_hz", FLAGS_prefilter_hz},
          {"jump_threshold_n", FLAGS_jump_threshold_n},
          {"jump_window_s", FLAGS_jump_window_s},
          {"noise_scale", FLAGS_noise_scale},
          {"seed", FLAGS_seed},
          {"transient_s", FLAGS_transient_s}};
}

}  // namespace dynid::friction_filter_study
