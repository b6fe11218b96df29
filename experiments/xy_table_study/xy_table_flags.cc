// experiments/xy_table_study/xy_table_flags — the flags of xy_table_study and their checks (see
// xy_table_flags.h).
#include "experiments/xy_table_study/xy_table_flags.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "experiments/common/cli.h"

DEFINE_string(out_dir, "out/xy_table_study", "output folder");
DEFINE_string(measurements_csv, "", "measured record (see header comment); empty = simulate");
DEFINE_string(circle_csv, "", "measured circular-path record for validation (with real data)");
DEFINE_double(interval_start_s, 3.33, "identification interval start (s)");
DEFINE_double(interval_end_s, 4.99, "identification interval end (s)");
DEFINE_double(duration_s, 9.96, "simulated record length (s)");
DEFINE_double(sample_period_s, 0.002, "simulated sampling interval (s)");
DEFINE_double(noise_scale, 1.0, "factor on the simulated noise levels (0 = noise-free)");
DEFINE_int32(seed, 4, "noise seed of the simulation");
DEFINE_double(measurement_emphasis, 100.0, "relative weight of measurements over the rule");
DEFINE_double(acceleration_weight, 2.5e-5, "V entry of the accelerations in stage 3");
DEFINE_string(acceleration_weight_sweep, "2.5e-5,2.5e-4,2.5e-3,2.5e-2,2.5e-1,2.5,25",
              "acceleration weights for the overflow scan (empty = skip)");
DEFINE_bool(evaluation, true, "simulate the identified model (three intervals, circle)");
DEFINE_string(transcription, "shooting",
              "shooting (default; the transcription of the acceptance test) or collocation "
              "(converges in ~10x fewer iterations here, but J2 biased by 6 % on "
              "model-structure data)");
DEFINE_int32(max_iterations, 300, "smoother iterations per stage");
DEFINE_double(first_order_r0_factor, 1e-2,
              "R0 of the first-order approximation in the acceleration-weight scan, as a factor "
              "on the rule weight of each initial state and parameter (the thesis: 'small')");
DEFINE_double(first_order_damping, 1.0,
              "numerical damping alpha in (0, 1] of the first-order approximation in the scan "
              "(van de Molengraft (1990) eq. 3.23)");
DEFINE_double(friction_smoothing, 0.05,
              "eps (rad/s) of the models' smooth dry friction w / sqrt(w² + eps²); smaller = "
              "sharper (the simulated true system keeps its own 0.02 rad/s)");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");

namespace dynid::xy_table_study {

namespace {

namespace data = dynid::data;

// Records a failed check's message; false.
bool Invalid(std::string* error, const std::string& message) {
  *error = message;
  return false;
}

}  // namespace

bool ValidateFlags(std::vector<double>* scan, std::string* error) {
  if (!(FLAGS_interval_end_s > FLAGS_interval_start_s) || FLAGS_interval_start_s < 0.0) {
    return Invalid(error, "--interval_start_s/--interval_end_s: need 0 <= start < end");
  }
  if (!(FLAGS_sample_period_s > 0.0 && FLAGS_sample_period_s <= 0.01)) {
    return Invalid(error, "--sample_period_s must be in (0, 0.01]");
  }
  if (!(FLAGS_duration_s > FLAGS_interval_end_s && FLAGS_duration_s <= 60.0) &&
      FLAGS_measurements_csv.empty()) {
    return Invalid(error, "--duration_s must exceed --interval_end_s and be <= 60");
  }
  if (!(FLAGS_noise_scale >= 0.0)) return Invalid(error, "--noise_scale must be >= 0");
  if (!(FLAGS_measurement_emphasis > 0.0))
    return Invalid(error, "--measurement_emphasis must be > 0");
  if (!(FLAGS_acceleration_weight >= 0.0))
    return Invalid(error, "--acceleration_weight must be >= 0");
  if (FLAGS_transcription != "shooting" && FLAGS_transcription != "collocation") {
    return Invalid(error, "--transcription must be shooting or collocation, got '" +
                              FLAGS_transcription + "'");
  }
  if (FLAGS_max_iterations < 1) return Invalid(error, "--max_iterations must be >= 1");
  if (!(FLAGS_first_order_r0_factor > 0.0 && std::isfinite(FLAGS_first_order_r0_factor))) {
    return Invalid(error, "--first_order_r0_factor must be a number > 0");
  }
  if (!(FLAGS_first_order_damping > 0.0 && FLAGS_first_order_damping <= 1.0)) {
    return Invalid(error, "--first_order_damping must be in (0, 1]");
  }
  if (!(FLAGS_friction_smoothing > 0.0 && std::isfinite(FLAGS_friction_smoothing))) {
    return Invalid(error, "--friction_smoothing must be a number > 0");
  }
  if (!FLAGS_circle_csv.empty() && FLAGS_measurements_csv.empty()) {
    return Invalid(error, "--circle_csv needs --measurements_csv");
  }
  if (!FLAGS_acceleration_weight_sweep.empty() &&  // empty: no scan
      !cli::ParseNumberList("acceleration_weight_sweep", FLAGS_acceleration_weight_sweep, 0, 0.0,
                            scan, error)) {
    return false;
  }
  return true;
}

nlohmann::json FlagsJson(bool simulated) {
  return {{"measurements_csv", FLAGS_measurements_csv},
          {"interval_start_s", FLAGS_interval_start_s},
          {"interval_end_s", FLAGS_interval_end_s},
          {"sample_period_s", simulated ? FLAGS_sample_period_s : NAN},
          {"noise_scale", FLAGS_noise_scale},
          {"seed", FLAGS_seed},
          {"measurement_emphasis", FLAGS_measurement_emphasis},
          {"acceleration_weight", FLAGS_acceleration_weight},
          {"transcription", FLAGS_transcription},
          {"max_iterations", FLAGS_max_iterations},
          {"friction_smoothing", FLAGS_friction_smoothing},
          {"first_order_r0_factor", FLAGS_first_order_r0_factor},
          {"first_order_damping", FLAGS_first_order_damping}};
}

}  // namespace dynid::xy_table_study
