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
DEFINE_double(duration_s, 2.0, "length of the record (s)");
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
DEFINE_string(optimal_residual_weights, "1e4,1e8,1e4,1e4",
              "optimal filter: V for [equation of motion, s, a, f]");
DEFINE_string(optimal_kinematic_weights, "1e6,1e4", "optimal filter: W for [xi_s, xi_v]");
DEFINE_double(noise_scale, 0.0,
              "measurement noise in units of (1e-4 m, 1e-2 m/s², 1e-2 N); 0 = noise-free");
DEFINE_int32(seed, 1, "noise seed");
DEFINE_double(transient_s, 1.0, "RMS errors 'after transient' use t >= this (s)");
DEFINE_bool(figures, true, "render PNG figures (python3 + matplotlib)");
DEFINE_string(measurements_csv, "",
              "measured record t,s,a,f (see the header comment); empty = simulate the stick-slip "
              "mass for each of --true_masses");

namespace dynid::friction_filter_study {

bool ValidateFlags(std::string* error) {
  const bool measured = !FLAGS_measurements_csv.empty();
  if (measured) {
    // The simulation's flags would be ignored: an error, not a silent skip.
    for (const char* flag :
         {"duration_s", "sample_period_s", "force_amplitude", "force_frequency_hz",
          "static_friction", "dynamic_friction", "true_masses", "noise_scale", "seed"}) {
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
  if (!measured && !(FLAGS_transient_s >= 0.0 && FLAGS_transient_s < FLAGS_duration_s)) {
    *error = "--transient_s must be in [0, --duration_s)";
    return false;
  }
  return true;
}

bool ParseSettings(Settings* settings, std::string* error) {
  if (!cli::ParseNumberList("true_masses", FLAGS_true_masses, 0, cli::kAnyNumber,
                            &settings->true_masses, error) ||
      !cli::ParseNumberList("initial_state", FLAGS_initial_state, 3, cli::kAnyNumber,
                            &settings->initial_state, error) ||
      !cli::ParseNumberList("initial_input", FLAGS_initial_input, 2, cli::kAnyNumber,
                            &settings->initial_input, error) ||
      !cli::ParseNumberList("optimal_residual_weights", FLAGS_optimal_residual_weights, 4,
                            cli::kAnyNumber, &settings->residual_weights, error) ||
      !cli::ParseNumberList("optimal_kinematic_weights", FLAGS_optimal_kinematic_weights, 2,
                            cli::kAnyNumber, &settings->kinematic_weights, error)) {
    return false;
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
          {"noise_scale", FLAGS_noise_scale},
          {"seed", FLAGS_seed},
          {"transient_s", FLAGS_transient_s}};
}

}  // namespace dynid::friction_filter_study
