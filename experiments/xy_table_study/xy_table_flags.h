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
DECLARE_double(first_order_r0_factor);
DECLARE_double(first_order_damping);
DECLARE_double(friction_smoothing);
DECLARE_bool(figures);

namespace dynid::xy_table_study {

// Every flag checked, with a message naming the flag; scan receives
// --acceleration_weight_sweep parsed.
bool ValidateFlags(std::vector<double>* scan, std::string* error);

// The flags as summary.json "flags" records them (the sample period only for a simulated record).
nlohmann::json FlagsJson(bool simulated);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_FLAGS_H_
