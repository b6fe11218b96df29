// experiments/rt_manipulator_study/rt_manipulator_flags — the flags of rt_manipulator_study
// (defined in rt_manipulator_flags.cc, in the program's folder, so that --help lists them as the
// program's own), their checks (exit code 2 on any failure), the rigid and flexible models'
// parameters they give, and the flags as summary.json records them.
#ifndef DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_FLAGS_H_
#define DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_FLAGS_H_

#include <gflags/gflags.h>

#include <nlohmann/json.hpp>
#include <string>

#include "dynid/models/rt_manipulator.h"
#include "dynid/solvers/parameter_covariance.h"
#include "experiments/common/monte_carlo_cli.h"

DECLARE_string(out_dir);
DECLARE_double(sample_period_s);
DECLARE_double(duration_s);
DECLARE_double(stiffness);
DECLARE_double(noise_scale);
DECLARE_int32(seed);
DECLARE_double(deweight);
DECLARE_string(measurements_csv);
DECLARE_double(link_mass);
DECLARE_double(link_length);
DECLARE_double(joint_inertia);
DECLARE_string(covariance);
DECLARE_bool(figures);
DECLARE_double(model_link_mass_scale);
DECLARE_double(model_joint_inertia_scale);

namespace dynid::rt_manipulator_study {

// Every flag checked, with a message naming the flag; flags of one source only (simulation or
// --measurements_csv): a flag that would be ignored is an error.
bool ValidateFlags(std::string* error);

// The reported covariance form of --covariance; false when the flag names none.
bool CovarianceFromFlags(solvers::CovarianceScaling* covariance);

// The manipulator's parameters from --stiffness, --link_mass, --link_length, --joint_inertia.
models::RtManipulatorParameters ModelParameters();

// What the estimators' rigid model knows of the true system: its parameters with the link mass
// and joint inertia scaled by --model_link_mass_scale and --model_joint_inertia_scale (model
// mismatch; the payload is what they estimate).
models::RtManipulatorParameters EstimatorParameters(const models::RtManipulatorParameters& truth);

// "the estimators' link mass ml x1.1 of the true (+10 %)", or empty for the exact model.
std::string ModelMismatchDescription();

// The flags as summary.json "flags" records them.
nlohmann::json FlagsJson();

}  // namespace dynid::rt_manipulator_study

#endif  // DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_FLAGS_H_
