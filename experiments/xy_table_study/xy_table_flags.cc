// experiments/xy_table_study/xy_table_flags — the flags of xy_table_study and their checks (see
// xy_table_flags.h).
#include "experiments/xy_table_study/xy_table_flags.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"

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
DEFINE_int32(max_iterations, 300, "smoother iterations per stage (per solve of the continuation)");
DEFINE_string(trust_region, "dogleg",
              "trust-region strategy of the smoother: dogleg (default) or levenberg_marquardt");
DEFINE_string(
    smoothing_continuation, "10,4,2",
    "each stage first solves with the models' friction smoothing eps (--friction_smoothing) "
    "times these factors, each from the previous solution, then with eps itself: a "
    "homotopy from a smooth problem to the sharp one (factors > 1, decreasing; empty = "
    "solve with eps from the initial guess)");
DEFINE_string(covariance, "hac",
              "reported covariance of the estimates: hac (default; the sandwich with the terms' "
              "residuals correlated over time, Bartlett weights, fixed-b intervals), sandwich (a "
              "white variance factor per term of the functional, estimated from its residuals) "
              "or variance_factor (one factor, 2 cost / (m - u), on the inverse information)");
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
DEFINE_string(truth, "drawn",
              "the simulated true system: 'drawn' (default: J1, J2, w1, w2, spindle stiffness and "
              "damping, belt stiffness and damping and far-wheel inertia each drawn uniformly "
              "within +-(--truth_spread) of the thesis-centred values, seeded by --truth_seed) or "
              "'thesis' (the thesis's stage-3 estimates themselves, the published comparison)");
DEFINE_int32(truth_seed, 1,
             "seed of the drawn true system (--truth=drawn) at the default --seed=4; the run of "
             "noise seed s (a single run's --seed, a Monte Carlo's seeds) draws its table with "
             "--truth_seed + s - 4");
DEFINE_double(truth_spread, 0.2,
              "half-width of the drawn truth's uniform factors, in [0, 0.5] (0.2: +-20 %)");
DEFINE_double(model_transverse_mass_scale, 1.0,
              "model mismatch (simulated records): the estimators' transverse slideway mass mt "
              "(a constant of the models, not estimated) is this factor times the true 8.5 kg, "
              "in [0.5, 1.5]");
DEFINE_double(viscous_friction, 0.0,
              "unmodelled effect (simulated records): viscous friction c_i w on both motor axes, "
              "c_i = this factor x w_i / (50 rad/s), i.e. at 0.5 m/s of belt the viscous torque "
              "is this fraction of the dry friction; in [0, 2] (0 = none)");
DEFINE_string(monte_carlo_acceleration_weights, "0.0025,0.25",
              "Monte Carlo: stage 3 also with these acceleration weights (estimators "
              "flexible_with_accelerations_w<weight>, from the same start as stage 3; empty = "
              "none); the effect of the accelerations is reported for each");
DEFINE_string(coverage_csv, "",
              "coverage.csv of a --monte_carlo run quoted beside the single run's intervals "
              "(empty = the study's shipped measurement at the default flags, withheld under a "
              "model mismatch or unmodelled effect)");

namespace dynid::xy_table_study {

namespace {

namespace data = dynid::data;

// Records a failed check's message; false.
bool Invalid(std::string* error, const std::string& message) {
  *error = message;
  return false;
}

// The smoother's settings of --transcription, --max_iterations, --trust_region,
// --smoothing_continuation and --covariance; false with a message naming the flag when one is
// bad.
bool ParseSolveSettings(XyTableSolveSettings* settings, std::string* error) {
  using TrustRegion = solvers::WeightedResidualSmootherOptions::TrustRegion;
  if (!cli::ParseNamed(FLAGS_transcription,
                       {problems::Transcription::kShooting, problems::Transcription::kCollocation},
                       problems::TranscriptionName, &settings->transcription)) {
    return Invalid(error, "--transcription must be shooting or collocation, got '" +
                              FLAGS_transcription + "'");
  }
  if (FLAGS_max_iterations < 1) return Invalid(error, "--max_iterations must be >= 1");
  settings->max_iterations = FLAGS_max_iterations;
  if (!cli::ParseNamed(FLAGS_trust_region, {TrustRegion::kDogleg, TrustRegion::kLevenbergMarquardt},
                       solvers::TrustRegionName, &settings->trust_region)) {
    return Invalid(error, "--trust_region must be dogleg or levenberg_marquardt, got '" +
                              FLAGS_trust_region + "'");
  }
  if (!cli::ParseNamed(FLAGS_covariance,
                       {solvers::CovarianceScaling::kHac, solvers::CovarianceScaling::kSandwich,
                        solvers::CovarianceScaling::kVarianceFactor},
                       solvers::CovarianceScalingName, &settings->covariance)) {
    return Invalid(error, "--covariance must be hac, sandwich or variance_factor, got '" +
                              FLAGS_covariance + "'");
  }
  std::vector<double>& factors = settings->continuation_factors;
  factors.clear();
  if (FLAGS_smoothing_continuation.empty()) return true;
  if (!cli::ParseNumberList("smoothing_continuation", FLAGS_smoothing_continuation, 0, 1.0,
                            &factors, error)) {
    return false;
  }
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!(factors[i] > 1.0) || (i > 0 && !(factors[i] < factors[i - 1]))) {
      return Invalid(error,
                     "--smoothing_continuation: the factors must be > 1 and decreasing, "
                     "got '" +
                         FLAGS_smoothing_continuation + "'");
    }
  }
  return true;
}

}  // namespace

bool ValidateFlags(std::vector<double>* scan, std::vector<double>* monte_carlo_weights,
                   std::string* error) {
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
  XyTableSolveSettings solve_settings;
  if (!ParseSolveSettings(&solve_settings, error)) return false;
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
  if (FLAGS_truth != "drawn" && FLAGS_truth != "thesis") {
    return Invalid(error, "--truth must be drawn or thesis, got '" + FLAGS_truth + "'");
  }
  if (FLAGS_truth_seed < 0) return Invalid(error, "--truth_seed must be >= 0");
  if (!(FLAGS_truth_spread >= 0.0 && FLAGS_truth_spread <= 0.5)) {
    return Invalid(error, "--truth_spread must be in [0, 0.5]");
  }
  if (!(FLAGS_model_transverse_mass_scale >= 0.5 && FLAGS_model_transverse_mass_scale <= 1.5)) {
    return Invalid(error, "--model_transverse_mass_scale must be in [0.5, 1.5]");
  }
  if (!(FLAGS_viscous_friction >= 0.0 && FLAGS_viscous_friction <= 2.0)) {
    return Invalid(error, "--viscous_friction must be in [0, 2]");
  }
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  if (FLAGS_monte_carlo > 0 && FLAGS_seed < 0) {
    return Invalid(error, "--seed must be >= 0 with --monte_carlo (the first of the seeds)");
  }
  if (!FLAGS_measurements_csv.empty()) {
    // A measured record has no truth to draw, perturb or repeat.
    for (const char* name : {"truth", "truth_seed", "truth_spread", "model_transverse_mass_scale",
                             "viscous_friction", "monte_carlo", "coverage_csv"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(name).is_default) {
        return Invalid(error, std::string("--") + name +
                                  " applies to a simulated record, not to --measurements_csv");
      }
    }
  }
  if (FLAGS_monte_carlo > 0 && !FLAGS_coverage_csv.empty()) {
    return Invalid(error, "--coverage_csv is read by the single run, not by --monte_carlo");
  }
  if (!FLAGS_monte_carlo_acceleration_weights.empty() &&
      !cli::ParseNumberList("monte_carlo_acceleration_weights",
                            FLAGS_monte_carlo_acceleration_weights, 0, 0.0, monte_carlo_weights,
                            error)) {
    return false;
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
          {"trust_region", FLAGS_trust_region},
          {"covariance", FLAGS_covariance},
          {"smoothing_continuation", SolveSettingsFromFlags().continuation_factors},
          {"friction_smoothing", FLAGS_friction_smoothing},
          {"first_order_r0_factor", FLAGS_first_order_r0_factor},
          {"first_order_damping", FLAGS_first_order_damping},
          {"truth", simulated ? nlohmann::json(FLAGS_truth) : nlohmann::json()},
          {"truth_seed", FLAGS_truth_seed},
          {"truth_spread", FLAGS_truth_spread},
          {"model_transverse_mass_scale", FLAGS_model_transverse_mass_scale},
          {"viscous_friction", FLAGS_viscous_friction}};
}

XyTableSolveSettings SolveSettingsFromFlags() {
  XyTableSolveSettings settings;
  std::string error;
  ParseSolveSettings(&settings, &error);  // checked by ValidateFlags
  return settings;
}

std::string ModelMismatchDescription() {
  std::string text;
  char part[120];
  if (FLAGS_model_transverse_mass_scale != 1.0) {
    std::snprintf(part, sizeof(part), "estimators' transverse slideway mass x %g",
                  FLAGS_model_transverse_mass_scale);
    text += part;
  }
  if (FLAGS_viscous_friction > 0.0) {
    std::snprintf(part, sizeof(part), "%sunmodelled viscous friction %g x dry at 50 rad/s",
                  text.empty() ? "" : ", ", FLAGS_viscous_friction);
    text += part;
  }
  return text;
}

std::string MismatchScenarioName() {
  std::string name;
  char part[64];
  if (FLAGS_model_transverse_mass_scale != 1.0) {
    std::snprintf(part, sizeof(part), "mass%g", FLAGS_model_transverse_mass_scale);
    name += part;
  }
  if (FLAGS_viscous_friction > 0.0) {
    std::snprintf(part, sizeof(part), "%sviscous%g", name.empty() ? "" : "_",
                  FLAGS_viscous_friction);
    name += part;
  }
  return name;
}

nlohmann::json ModelMismatchJson() {
  const std::string description = ModelMismatchDescription();
  return {{"description", description.empty() ? "none (exact model constants)" : description},
          {"model_transverse_mass_scale", FLAGS_model_transverse_mass_scale},
          {"viscous_friction", FLAGS_viscous_friction}};
}

}  // namespace dynid::xy_table_study
