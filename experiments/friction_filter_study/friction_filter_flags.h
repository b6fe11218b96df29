// experiments/friction_filter_study/friction_filter_flags — the flags of friction_filter_study
// (defined in friction_filter_flags.cc, in the program's folder, so that --help lists them as the
// program's own), their checks (exit code 2 on any failure), the list flags parsed with the
// sliding-surface filter's options, and the flags as summary.json records them.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_FLAGS_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_FLAGS_H_

#include <gflags/gflags.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/sliding_surface_filter.h"
#include "experiments/common/monte_carlo_cli.h"

DECLARE_string(out_dir);
DECLARE_double(duration_s);
DECLARE_double(sample_period_s);
DECLARE_double(force_amplitude);
DECLARE_double(force_frequency_hz);
DECLARE_double(static_friction);
DECLARE_double(dynamic_friction);
DECLARE_double(filter_mass);
DECLARE_string(true_masses);
DECLARE_double(lambda);
DECLARE_double(omega);
DECLARE_double(sigma_demo);
DECLARE_double(boundary_layer);
DECLARE_string(initial_state);
DECLARE_string(initial_input);
DECLARE_double(optimal_parameter_weight);
DECLARE_string(optimal_residual_weights);
DECLARE_string(optimal_kinematic_weights);
DECLARE_string(sensors);
DECLARE_double(encoder_resolution_m);
DECLARE_double(accelerometer_noise);
DECLARE_double(force_sensor_noise);
DECLARE_double(force_delay_s);
DECLARE_double(prefilter_hz);
DECLARE_double(jump_threshold_n);
DECLARE_double(jump_window_s);
DECLARE_string(coverage_times_s);
DECLARE_string(coverage_csv);
DECLARE_double(noise_scale);
DECLARE_int32(seed);
DECLARE_double(transient_s);
DECLARE_bool(figures);
DECLARE_string(measurements_csv);

namespace dynid::friction_filter_study {

// The list flags parsed and the sliding-surface filter's options.
struct Settings {
  std::vector<double> true_masses, initial_state, initial_input, residual_weights,
      kinematic_weights;
  std::vector<double> coverage_times_s;
  solvers::SlidingSurfaceFilterOptions sliding_options;
};

// The scalar flags checked (and, with --measurements_csv, that no simulation flag is set), with a
// message naming the flag. The transient against a measured record is checked by LoadRecord.
bool ValidateFlags(std::string* error);

// The list flags parsed and checked (the optimal filter's default V for a record sampled
// `sample_period_s` apart), and the sliding-surface filter's options built and checked.
bool ParseSettings(double sample_period_s, Settings* settings, std::string* error);

// The flags as summary.json "flags" records them.
nlohmann::json FlagsJson(const Settings& settings);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_FLAGS_H_
