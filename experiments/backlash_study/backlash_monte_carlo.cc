// experiments/backlash_study/backlash_monte_carlo — the study's Monte Carlo (see
// backlash_monte_carlo.h).
#include "experiments/backlash_study/backlash_monte_carlo.h"

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/backlash_study/backlash_case.h"
#include "experiments/backlash_study/backlash_estimators.h"
#include "experiments/backlash_study/backlash_flags.h"
#include "experiments/common/monte_carlo_cli.h"

namespace dynid::backlash_study {
namespace {

// b and K of one estimator of one run.
void AddEstimates(const Case& config, const std::string& estimator, const solvers::DeadZoneFit& fit,
                  bool converged, std::vector<solvers::MonteCarloEstimate>* out) {
  solvers::MonteCarloEstimate b;
  b.estimator = estimator;
  b.parameter = "b_rad";
  b.truth = TrueBacklash(config);
  b.estimate = fit.backlash_rad;
  b.reported_std = fit.backlash_std;
  b.lower = fit.backlash_lower;
  b.upper = fit.backlash_upper;
  b.converged = converged;
  out->push_back(b);
  solvers::MonteCarloEstimate k = b;
  k.parameter = "K_nm_per_rad";
  k.truth = config.parameters.stiffness_nm_per_rad;
  k.estimate = fit.stiffness_nm_per_rad;
  k.reported_std = fit.stiffness_std;
  k.lower = fit.stiffness_lower;
  k.upper = fit.stiffness_upper;
  out->push_back(k);
}

bool Trial(const Case& config, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
           std::string* error) {
  const int samples = FLAGS_samples > 0 ? FLAGS_samples : config.default_samples;
  CaseRun run;
  if (!RunCase(config, samples, config.tau_noise_intensity, NoiseSeed(config.name, seed), &run,
               error)) {
    *error = config.name + ": " + *error;
    return false;
  }
  for (const auto& [label, outcome] : run.Outcomes()) {
    AddEstimates(config, label, outcome->fit, outcome->converged, out);
  }
  return true;
}

}  // namespace

bool RunMonteCarloStudy(const std::vector<Case>& cases, std::string* error) {
  std::vector<std::string> names;
  for (const Case& c : cases) names.push_back(c.name);
  const solvers::MonteCarloTrial trial =
      [&cases](int scenario, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
               std::string* why) { return Trial(cases[scenario], seed, out, why); };
  cli::MonteCarloJob job;
  if (!cli::RunMonteCarloFromFlags(FLAGS_out_dir, FLAGS_seed, static_cast<int>(cases.size()), trial,
                                   &job, error)) {
    return false;
  }
  if (!job.reporting) return true;
  const std::vector<solvers::MonteCarloRun>& runs = job.runs;

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  const std::string mismatch = ModelMismatchDescription();
  char title[160];
  std::snprintf(title, sizeof(title), "backlash and stiffness: %d noise seeds from %llu%s",
                FLAGS_monte_carlo, static_cast<unsigned long long>(FLAGS_seed),
                mismatch.empty() ? "" : " (model mismatch)");
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, names, title, FLAGS_figures, &stage, &rows, error,
                                     job.settings)) {
    return false;
  }
  std::printf("backlash_study Monte Carlo: %s (per case)\n", cli::MonteCarloJobLine(job).c_str());
  std::printf("model mismatch: %s\n",
              ModelMismatchJson()["description"].get<std::string>().c_str());
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  nlohmann::json summary;
  summary["flags"] = FlagsJson();
  summary["model_mismatch"] = ModelMismatchJson();
  summary["monte_carlo"] = cli::MonteCarloJobJson(job, FLAGS_out_dir);
  summary["monte_carlo"]["coverage"] = solvers::CoverageJson(rows);
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::backlash_study
