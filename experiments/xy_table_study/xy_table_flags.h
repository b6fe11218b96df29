// experiments/xy_table_study/xy_table_flags — the flags of xy_table_study (defined in
// xy_table_flags.cc, in the program's folder, so that --help lists them as the program's own),
// their checks (exit code 2 on any failure) with the acceleration weights of the scan they
// select, and the flags as summary.json records them.
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_FLAGS_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_FLAGS_H_

#include <gflags/gflags.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/common/monte_carlo_cli.h"
#include "experiments/xy_table_study/xy_table_solve.h"

DECLARE_string(out_dir);
DECLARE_string(measurements_csv);
DECLARE_string(circle_csv);
DECLARE_double(interval_start_s);
DECLARE_double(interval_end_s);
DECLARE_double(duration_s);
DECLARE_double(sample_period_s);
DECLARE_double(noise_scale);
DECLARE_int32(seed);
DECLARE_double(measurement_emphasis);
DECLARE_double(acceleration_weight);
DECLARE_string(acceleration_weight_sweep);
DECLARE_bool(evaluation);
DECLARE_string(transcription);
DECLARE_int32(max_iterations);
DECLARE_string(trust_region);
DECLARE_string(covariance);
DECLARE_string(smoothing_continuation);
DECLARE_double(first_order_r0_factor);
DECLARE_double(first_order_damping);
DECLARE_double(friction_smoothing);
DECLARE_bool(figures);
DECLARE_string(truth);
DECLARE_int32(truth_seed);
DECLARE_double(truth_spread);
DECLARE_double(model_transverse_mass_scale);
DECLARE_double(viscous_friction);
DECLARE_string(coverage_csv);
DECLARE_string(monte_carlo_acceleration_weights);

namespace dynid::xy_table_study {

// Every flag checked, with a message naming the flag; scan receives
// --acceleration_weight_sweep parsed, monte_carlo_weights --monte_carlo_acceleration_weights.
bool ValidateFlags(std::vector<double>* scan, std::vector<double>* monte_carlo_weights,
                   std::string* error);

// The flags as summary.json "flags" records them (the sample period only for a simulated record).
nlohmann::json FlagsJson(bool simulated);

// The smoother's settings the flags select (--transcription, --trust_region, --max_iterations,
// --smoothing_continuation, --covariance; checked by ValidateFlags).
XyTableSolveSettings SolveSettingsFromFlags();

// The reference speed of --viscous_friction: at this motor speed (0.5 m/s of belt) the viscous
// torque c_i w equals --viscous_friction times the dry friction w_i of axis i.
inline constexpr double kViscousReferenceSpeedRadPerS = 50.0;

// The model mismatch and the unmodelled effect the flags select (--model_transverse_mass_scale,
// --viscous_friction), e.g. "estimators' transverse slideway mass x 1.1, unmodelled viscous
// friction 0.3"; empty for the exact model constants and no unmodelled effect beyond the belt
// springs and damping every simulated run has.
std::string ModelMismatchDescription();

// The scenario column of a Monte Carlo's coverage.csv for the flags: "" for the exact model
// constants without an unmodelled effect, else e.g. "mass1.1_viscous0.3".
std::string MismatchScenarioName();

// {"description", "model_transverse_mass_scale", "viscous_friction"} for summary.json.
nlohmann::json ModelMismatchJson();

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_FLAGS_H_
