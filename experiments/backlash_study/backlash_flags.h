// experiments/backlash_study/backlash_flags — the flags of backlash_study (defined in
// backlash_flags.cc, in the program's folder, so that --help lists them as the program's own),
// their checks (exit code 2 on any failure) with the cases and Q_pp factors they select, and the
// flags as summary.json records them.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_FLAGS_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_FLAGS_H_

#include <gflags/gflags.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/backlash_study/backlash_case.h"
#include "experiments/common/monte_carlo_cli.h"

DECLARE_string(cases);
DECLARE_int32(samples);
DECLARE_uint64(seed);
DECLARE_string(out_dir);
DECLARE_string(qpp_factors);
DECLARE_string(sweep_cases);
DECLARE_int32(smoother_iterations);
DECLARE_int32(bootstrap);
DECLARE_int32(fit_threads);
DECLARE_int32(max_fit_pairs);
DECLARE_int32(max_plot_rows);
DECLARE_int32(rk4_steps);
DECLARE_int32(simulation_substeps);
DECLARE_double(prbs_amplitude);
DECLARE_double(prbs_clock);
DECLARE_double(sine_amplitude);
DECLARE_bool(shape_refinement);
DECLARE_string(shape_curve);
DECLARE_string(shape_hold);
DECLARE_bool(shape_free_backlash);
DECLARE_double(shape_std);
DECLARE_bool(smoother_q0);
DECLARE_double(center_window_s);
DECLARE_bool(eigen_sparse);
DECLARE_double(trust_region_radius);
DECLARE_double(refine_radius);
DECLARE_double(shape_function_tolerance);
DECLARE_int32(threads);
DECLARE_string(measurements_csv);
DECLARE_double(motor_inertia);
DECLARE_double(arm_inertia);
DECLARE_double(damping);
DECLARE_double(position_gain);
DECLARE_double(viscous_friction);
DECLARE_double(coulomb_friction);
DECLARE_double(friction_sharpness);
DECLARE_double(qpp);
DECLARE_double(measurement_variance);
DECLARE_string(qxx);
DECLARE_bool(figures);
DECLARE_bool(log_progress);
DECLARE_double(progress_period);
DECLARE_string(coverage_csv);
DECLARE_double(model_arm_inertia_scale);
DECLARE_double(model_motor_inertia_scale);
DECLARE_double(model_damping_scale);
DECLARE_double(model_friction_scale);
DECLARE_int32(encoder_counts);

namespace dynid::backlash_study {

// Every flag checked, with a message naming the flag (or the measured record's file and line):
// flags of one source only (simulated cases or --measurements_csv), then the values. cases
// receives the cases of the main table (the measured record, or --cases), scan_cases those of
// the Q_pp scan (the measured record, or --sweep_cases), qpp_factors --qpp_factors parsed.
bool ValidateFlags(std::vector<Case>* cases, std::vector<Case>* scan_cases,
                   std::vector<double>* qpp_factors, std::string* error);

// The flags as summary.json "flags" records them.
nlohmann::json FlagsJson();

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_FLAGS_H_
