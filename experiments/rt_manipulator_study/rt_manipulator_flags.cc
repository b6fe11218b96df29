// experiments/rt_manipulator_study/rt_manipulator_flags — the flags of rt_manipulator_study and
// their checks (see rt_manipulator_flags.h).
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dynid/models/rt_manipulator.h"
#include "experiments/common/cli.h"

DEFINE_string(out_dir, "out/rt_manipulator_study", "output folder");
DEFINE_double(sample_period_s, 1e-3, "sampling interval of the measurements (s)");
DEFINE_double(duration_s, 1.0, "length of the record (s); the motion itself lasts 1 s");
DEFINE_double(stiffness, 2000.0, "joint stiffness k of the true (flexible) system, N m/rad");
DEFINE_double(noise_scale, 0.0,
              "measurement noise, in units of (1e-5 m, 1e-5 rad, 1e-3 m/s², 1e-3 m/s², 1e-2 N, "
              "1e-2 N m); 0 = noise-free as in the thesis");
DEFINE_int32(seed, 1, "noise seed");
DEFINE_double(deweight, 1e-2, "weight of the 2nd equation of motion and of phi in weighting 2");
DEFINE_string(measurements_csv, "",
              "measured record t,r,phi,radial_acceleration,tangential_acceleration,F,T (see the "
              "header comment); empty = simulate the flexible manipulator");
DEFINE_double(link_mass, 10.0, "measured record: link mass ml of the rigid model (kg)");
DEFINE_double(link_length, 1.0, "measured record: link length l of the rigid model (m)");
DEFINE_double(joint_inertia, 5.0, "measured record: joint inertia J of the rigid model (kg m²)");
DEFINE_string(
    covariance, "hac",
    "the smoother's reported payload sd: hac (default; the sandwich with the terms' "
    "residuals correlated over time, Bartlett weights, fixed-b interval), sandwich (a white "
    "variance factor per term of the functional, estimated from its residuals) or "
    "variance_factor (one factor, 2 cost / (m - u), on the inverse information)");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");
DEFINE_double(model_link_mass_scale, 1.0,
              "model mismatch (simulation): the estimators' rigid model takes the link mass ml as "
              "this factor times the true one, which the simulator keeps (1 = the exact value)");
DEFINE_double(model_joint_inertia_scale, 1.0,
              "model mismatch (simulation): the estimators' joint inertia J as a factor of the "
              "true one");
namespace dynid::rt_manipulator_study {

bool ValidateFlags(std::string* error) {
  // Flags of one source only: a flag that would be ignored is an error.
  const bool measured = !FLAGS_measurements_csv.empty();
  const std::vector<const char*> simulation_only = {"sample_period_s",
                                                    "duration_s",
                                                    "stiffness",
                                                    "noise_scale",
                                                    "seed",
                                                    "model_link_mass_scale",
                                                    "model_joint_inertia_scale"};
  const std::vector<const char*> measured_only = {"link_mass", "link_length", "joint_inertia"};
  for (const char* flag : measured ? simulation_only : measured_only) {
    if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
      *error = std::string("--") + flag +
               (measured ? " is not used with --measurements_csv"
                         : " is used only with --measurements_csv");
      return false;
    }
  }
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  if (FLAGS_monte_carlo > 0 && measured) {
    *error = "--monte_carlo needs the simulation (a measured record has no truth to cover)";
    return false;
  }
  if (FLAGS_monte_carlo > 0 && !(FLAGS_noise_scale > 0.0)) {
    *error = "--monte_carlo needs --noise_scale > 0 (without noise every seed gives the same run)";
    return false;
  }
  if (!(FLAGS_sample_period_s > 0.0 && FLAGS_sample_period_s <= 0.01)) {
    *error = "--sample_period_s must be in (0, 0.01]";
    return false;
  }
  if (!(FLAGS_duration_s >= 0.2 && FLAGS_duration_s <= 10.0)) {
    *error = "--duration_s must be in [0.2, 10]";
    return false;
  }
  if (!(FLAGS_stiffness > 0.0)) {
    *error = "--stiffness must be > 0";
    return false;
  }
  if (!(FLAGS_noise_scale >= 0.0)) {
    *error = "--noise_scale must be >= 0";
    return false;
  }
  solvers::CovarianceScaling covariance;
  if (!CovarianceFromFlags(&covariance)) {
    *error =
        "--covariance must be hac, sandwich or variance_factor, got '" + FLAGS_covariance + "'";
    return false;
  }
  if (!(FLAGS_deweight > 0.0)) {
    *error = "--deweight must be > 0";
    return false;
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, double>{"link_mass", FLAGS_link_mass},
        {"link_length", FLAGS_link_length},
        {"joint_inertia", FLAGS_joint_inertia},
        {"model_link_mass_scale", FLAGS_model_link_mass_scale},
        {"model_joint_inertia_scale", FLAGS_model_joint_inertia_scale}}) {
    if (!(value > 0.0) || !std::isfinite(value)) {
      *error = std::string("--") + flag + " must be a number > 0";
      return false;
    }
  }
  return true;
}

bool CovarianceFromFlags(solvers::CovarianceScaling* covariance) {
  return cli::ParseNamed(FLAGS_covariance,
                         {solvers::CovarianceScaling::kHac, solvers::CovarianceScaling::kSandwich,
                          solvers::CovarianceScaling::kVarianceFactor},
                         solvers::CovarianceScalingName, covariance);
}

models::RtManipulatorParameters ModelParameters() {
  models::RtManipulatorParameters parameters;
  parameters.joint_stiffness_nm_per_rad = FLAGS_stiffness;
  parameters.link_mass_kg = FLAGS_link_mass;
  parameters.link_length_m = FLAGS_link_length;
  parameters.joint_inertia_kg_m2 = FLAGS_joint_inertia;
  return parameters;
}

models::RtManipulatorParameters EstimatorParameters(const models::RtManipulatorParameters& truth) {
  models::RtManipulatorParameters known = truth;
  known.link_mass_kg *= FLAGS_model_link_mass_scale;
  known.joint_inertia_kg_m2 *= FLAGS_model_joint_inertia_scale;
  return known;
}

std::string ModelMismatchDescription() {
  std::string text;
  char part[120];
  for (const auto& [name, scale] :
       {std::pair<const char*, double>{"link mass ml", FLAGS_model_link_mass_scale},
        {"joint inertia J", FLAGS_model_joint_inertia_scale}}) {
    if (scale == 1.0) continue;
    std::snprintf(part, sizeof(part), "%sthe estimators' %s x%g of the true (%+.0f %%)",
                  text.empty() ? "" : ", ", name, scale, 100.0 * (scale - 1.0));
    text += part;
  }
  return text;
}

nlohmann::json FlagsJson() {
  return {{"measurements_csv", FLAGS_measurements_csv},
          {"link_mass", FLAGS_link_mass},
          {"link_length", FLAGS_link_length},
          {"joint_inertia", FLAGS_joint_inertia},
          {"sample_period_s", FLAGS_sample_period_s},
          {"duration_s", FLAGS_duration_s},
          {"stiffness", FLAGS_stiffness},
          {"noise_scale", FLAGS_noise_scale},
          {"seed", FLAGS_seed},
          {"deweight", FLAGS_deweight},
          {"covariance", FLAGS_covariance},
          {"model_link_mass_scale", FLAGS_model_link_mass_scale},
          {"model_joint_inertia_scale", FLAGS_model_joint_inertia_scale},
          {"model_mismatch", ModelMismatchDescription()}};
}

}  // namespace dynid::rt_manipulator_study
