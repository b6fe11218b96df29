// solvers:: Monte Carlo runs (see monte_carlo.h).
#include "dynid/solvers/monte_carlo.h"

#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "dynid/data/parallel_for.h"

namespace dynid::solvers {
namespace {

bool IsCsvSafe(const std::string& name) {
  return name.find_first_of(",\"\r\n") == std::string::npos;
}

std::string Number(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

}  // namespace

void ReportedInterval(const MonteCarloEstimate& estimate, double* lower, double* upper) {
  if (std::isfinite(estimate.lower) && std::isfinite(estimate.upper)) {
    *lower = estimate.lower;
    *upper = estimate.upper;
  } else if (std::isfinite(estimate.reported_std) && estimate.reported_std > 0.0) {
    *lower = estimate.estimate - kNormalQuantile975 * estimate.reported_std;
    *upper = estimate.estimate + kNormalQuantile975 * estimate.reported_std;
  } else {
    *lower = *upper = std::nan("");
  }
}

bool MonteCarloOptions::IsValid(std::string* why) const {
  if (num_seeds < 1) {
    *why = "num_seeds must be >= 1, got " + std::to_string(num_seeds);
    return false;
  }
  return true;
}

bool RunMonteCarlo(int num_scenarios, const MonteCarloTrial& trial,
                   const MonteCarloOptions& options, std::vector<MonteCarloRun>* runs,
                   std::string* error) {
  CHECK(runs != nullptr) << "expected a runs vector, got nullptr";
  CHECK_GE(num_scenarios, 1) << "expected at least one scenario";
  std::string why;
  if (!options.IsValid(&why)) {
    *error = "Monte Carlo options: " + why;
    return false;
  }
  const int total = num_scenarios * options.num_seeds;
  runs->assign(total, MonteCarloRun());
  std::mutex mutex;
  bool failed = false;
  int finished = 0;
  std::string first_error;
  // Each index writes only its own run, so the vector does not depend on which thread ran it or
  // when; the mutex guards only the failure flag and the progress callback.
  data::ParallelFor(0, total, options.num_threads, [&](int index) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (failed) return;
    }
    MonteCarloRun& run = (*runs)[index];
    run.scenario = index / options.num_seeds;
    run.seed = options.first_seed + static_cast<std::uint64_t>(index % options.num_seeds);
    std::string message;
    const bool ok = trial(run.scenario, run.seed, &run.estimates, &message);
    std::lock_guard<std::mutex> lock(mutex);
    if (!ok) {
      if (!failed) {
        first_error = "scenario " + std::to_string(run.scenario) + ", seed " +
                      std::to_string(run.seed) + ": " + message;
      }
      failed = true;
      return;
    }
    for (const MonteCarloEstimate& e : run.estimates) {
      CHECK(IsCsvSafe(e.estimator) && IsCsvSafe(e.parameter))
          << "estimator and parameter names must not contain a comma, a quote or a line break: '"
          << e.estimator << "', '" << e.parameter << "'";
    }
    ++finished;
    if (options.on_run) options.on_run(run, finished, total);
  });
  if (failed) *error = first_error;
  return !failed;
}

std::string FormatMonteCarloRunsCsv(const std::vector<MonteCarloRun>& runs,
                                    const std::vector<std::string>& scenario_names) {
  std::string csv =
      "scenario,seed,estimator,parameter,truth,estimate,reported_std,lower,upper,converged\n";
  for (const MonteCarloRun& run : runs) {
    CHECK(run.scenario >= 0 && run.scenario < static_cast<int>(scenario_names.size()))
        << "scenario " << run.scenario << " has no name (" << scenario_names.size() << " names)";
    const std::string& scenario = scenario_names[run.scenario];
    CHECK(IsCsvSafe(scenario)) << "scenario name '" << scenario << "' is not a CSV cell";
    for (const MonteCarloEstimate& e : run.estimates) {
      double lower, upper;
      ReportedInterval(e, &lower, &upper);
      csv += scenario + "," + std::to_string(run.seed) + "," + e.estimator + "," + e.parameter +
             "," + Number(e.truth) + "," + Number(e.estimate) + "," + Number(e.reported_std) + "," +
             Number(lower) + "," + Number(upper) + "," + (e.converged ? "1" : "0") + "\n";
    }
  }
  return csv;
}

}  // namespace dynid::solvers
