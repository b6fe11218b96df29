// experiments/weight_sweep/weight_sweep_flags — see weight_sweep_flags.h.
#include "experiments/weight_sweep/weight_sweep_flags.h"

#include <algorithm>
#include <thread>

#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/weight_sweep/grid_cases.h"
#include "experiments/weight_sweep/grid_text.h"

DEFINE_string(case_name, "msd", "case: msd, friction_mass, rt_rigid, rt_flexible, xy_flexible");
DEFINE_string(grid, "V.z.a_measured:4e2:4e6:10,W.v.s:1:1e4:10",
              "grid axes NAME:LOW:HIGH:COUNT, comma-separated (log-spaced values; "
              "--list_weights prints the names)");
DEFINE_bool(relative, false, "grid values multiply the case's base weights instead of replacing");
DEFINE_int32(seeds, 10, "Monte Carlo noise realisations per grid point");
DEFINE_int32(first_seed, 1, "noise seed of the first realisation (then +1, +2, ...)");
DEFINE_int32(threads, 0, "worker threads per process (0 = all cores)");
DEFINE_int32(nodes, 0, "nodes of the case's record (0 = the case's default)");
DEFINE_double(noise_scale, 1.0, "multiplies the case's measurement noise");
DEFINE_double(theta_start_factor, 1.2, "theta starts at this factor times the truth");
DEFINE_int32(max_iterations, 50, "solver iterations per point");
DEFINE_string(transcription, "shooting", "shooting or collocation");
DEFINE_string(trust_region, "levenberg_marquardt",
              "the smoother's trust region: levenberg_marquardt (default) or dogleg (on "
              "xy_flexible it converges where Levenberg-Marquardt stops at the iteration cap)");
DEFINE_string(out_dir, "out/weight_sweep", "output folder");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");
DEFINE_bool(list_weights, false, "print the case's weight names and base values, then exit");
DEFINE_bool(observability, true, "run the observability / identifiability analysis");
DEFINE_string(coverage_csv, "",
              "the measured coverage quoted beside the predicted sd of the grid points it "
              "measured: a coverage.csv written by --monte_carlo (empty: a shipped one, if any)");

namespace dynid::experiments {

std::unique_ptr<solvers::WeightGridCase> MakeCaseFromFlags(std::string* error) {
  GridCaseOptions case_options;
  case_options.num_nodes = FLAGS_nodes;
  std::unique_ptr<solvers::WeightGridCase> grid_case =
      MakeGridCase(FLAGS_case_name, case_options, error);
  if (!grid_case) *error = "--case_name / --nodes: " + *error;
  return grid_case;
}

bool SetupFromFlags(SweepSetup* setup, std::string* error) {
  setup->grid_case = MakeCaseFromFlags(error);
  if (!setup->grid_case) return false;
  const models::ModelInfo& info = setup->grid_case->info();
  if (!ParseWeightGrid(FLAGS_grid, info, "--grid", &setup->axes, error)) return false;
  // --monte_carlo: at the base weights unless a grid is given, then at every grid point; its
  // seeds and threads are the shared flags'.
  const auto given = [](const char* flag) {
    return !gflags::GetCommandLineFlagInfoOrDie(flag).is_default;
  };
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  if (FLAGS_monte_carlo > 0) {
    if (!given("grid")) setup->axes.clear();
    if (given("seeds")) {
      *error = "--seeds is the sweep's; --monte_carlo=N runs N seeds from --first_seed";
      return false;
    }
    if (given("threads")) {
      *error = "--threads is the sweep's; --monte_carlo runs on --monte_carlo_threads";
      return false;
    }
    if (given("coverage_csv")) {
      *error = "--coverage_csv is quoted by a sweep, not used with --monte_carlo";
      return false;
    }
  } else if (given("monte_carlo_threads")) {
    *error = "--monte_carlo_threads is used with --monte_carlo only";
    return false;
  }
  if (FLAGS_seeds < 1 || FLAGS_seeds > 100000) {
    *error = "--seeds must be in [1, 100000]";
    return false;
  }
  if (FLAGS_first_seed < 0) {
    *error = "--first_seed must be >= 0";
    return false;
  }
  if (FLAGS_threads < 0 || FLAGS_threads > 1024) {
    *error = "--threads must be in [0, 1024]";
    return false;
  }
  if (FLAGS_out_dir.empty()) {
    *error = "--out_dir must not be empty";
    return false;
  }
  solvers::WeightGridSettings& settings = setup->settings;
  settings.max_iterations = FLAGS_max_iterations;
  settings.theta_start_factor = FLAGS_theta_start_factor;
  settings.noise_scale = FLAGS_noise_scale;
  if (FLAGS_transcription == "shooting") {
    settings.transcription = problems::Transcription::kShooting;
  } else if (FLAGS_transcription == "collocation") {
    settings.transcription = problems::Transcription::kCollocation;
  } else {
    *error = "--transcription: expected shooting or collocation, got '" + FLAGS_transcription + "'";
    return false;
  }
  using TrustRegion = solvers::WeightedResidualSmootherOptions::TrustRegion;
  if (!cli::ParseNamed(FLAGS_trust_region, {TrustRegion::kLevenbergMarquardt, TrustRegion::kDogleg},
                       solvers::TrustRegionName, &settings.trust_region)) {
    *error =
        "--trust_region: expected levenberg_marquardt or dogleg, got '" + FLAGS_trust_region + "'";
    return false;
  }
  if (!settings.IsValid(error)) {
    // Name the flag: the settings mirror --max_iterations, --theta_start_factor, --noise_scale.
    *error = "--" + *error;
    return false;
  }
  setup->num_points = solvers::NumGridPoints(setup->axes);
  setup->num_seeds = FLAGS_monte_carlo > 0 ? FLAGS_monte_carlo : FLAGS_seeds;
  setup->num_tasks = static_cast<long long>(setup->num_points) * setup->num_seeds;
  if (setup->num_tasks > 10000000) {
    *error = "--grid × --seeds: more than 1e7 estimates";
    return false;
  }
  // Every grid point's weights checked once (a relative grid on a zero base weight fails).
  const int p = static_cast<int>(info.parameters.size());
  for (int point = 0; point < setup->num_points; ++point) {
    problems::WeightedResidualWeights weights = setup->grid_case->base_weights();
    if (!solvers::ApplyGridPoint(setup->axes, solvers::GridPointValues(setup->axes, point),
                                 FLAGS_relative, p, &weights, error)) {
      *error = "--grid: " + *error;
      return false;
    }
  }
  setup->threads =
      FLAGS_threads > 0 ? FLAGS_threads : std::max(1u, std::thread::hardware_concurrency());
  setup->axis_names.clear();
  for (const solvers::WeightAxis& a : setup->axes) setup->axis_names.push_back(a.entry.name);
  return true;
}

nlohmann::json FlagsJson(int threads, int ranks) {
  return {{"case_name", FLAGS_case_name},
          {"grid", FLAGS_grid},
          {"relative", FLAGS_relative},
          {"seeds", FLAGS_seeds},
          {"first_seed", FLAGS_first_seed},
          {"threads", threads},
          {"ranks", ranks},
          {"nodes", FLAGS_nodes},
          {"noise_scale", FLAGS_noise_scale},
          {"theta_start_factor", FLAGS_theta_start_factor},
          {"max_iterations", FLAGS_max_iterations},
          {"transcription", FLAGS_transcription},
          {"trust_region", FLAGS_trust_region}};
}

}  // namespace dynid::experiments
