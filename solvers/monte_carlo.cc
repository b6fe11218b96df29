// solvers:: Monte Carlo runs (see monte_carlo.h).
#include "dynid/solvers/monte_carlo.h"

#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/data/parallel_for.h"
#include "dynid/data/run_journal.h"

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

// A run as one journal record body: "R " + JSON {"scenario", "seed", "estimates": [[estimator,
// parameter, truth, estimate, reported_std, lower, upper, converged, measure], ...]}, the numbers
// as
// %.17g strings (exact round trip, NaN and infinities included).
std::string FormatRunRecord(const MonteCarloRun& run) {
  nlohmann::json estimates = nlohmann::json::array();
  for (const MonteCarloEstimate& e : run.estimates) {
    estimates.push_back({e.estimator, e.parameter, Number(e.truth), Number(e.estimate),
                         Number(e.reported_std), Number(e.lower), Number(e.upper), e.converged,
                         e.measure});
  }
  const nlohmann::json record = {
      {"scenario", run.scenario}, {"seed", run.seed}, {"estimates", estimates}};
  return "R " + record.dump();
}

bool ParseNumber(const nlohmann::json& cell, double* value) {
  if (!cell.is_string()) return false;
  const std::string& text = cell.get_ref<const std::string&>();
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

bool ParseRunRecord(const std::string& body, MonteCarloRun* run) {
  if (body.size() < 3 || body.compare(0, 2, "R ") != 0) return false;
  const nlohmann::json record = nlohmann::json::parse(body.substr(2), nullptr, false);
  if (record.is_discarded() || !record.is_object() || !record.contains("scenario") ||
      !record.contains("seed") || !record.contains("estimates") ||
      !record["scenario"].is_number_integer() || !record["seed"].is_number_unsigned() ||
      !record["estimates"].is_array()) {
    return false;
  }
  MonteCarloRun parsed;
  parsed.scenario = record["scenario"].get<int>();
  parsed.seed = record["seed"].get<std::uint64_t>();
  for (const nlohmann::json& cells : record["estimates"]) {
    if (!cells.is_array() || cells.size() != 9 || !cells[0].is_string() || !cells[1].is_string() ||
        !cells[7].is_boolean() || !cells[8].is_boolean()) {
      return false;
    }
    MonteCarloEstimate e;
    e.estimator = cells[0].get<std::string>();
    e.parameter = cells[1].get<std::string>();
    if (!ParseNumber(cells[2], &e.truth) || !ParseNumber(cells[3], &e.estimate) ||
        !ParseNumber(cells[4], &e.reported_std) || !ParseNumber(cells[5], &e.lower) ||
        !ParseNumber(cells[6], &e.upper)) {
      return false;
    }
    e.converged = cells[7].get<bool>();
    e.measure = cells[8].get<bool>();
    parsed.estimates.push_back(std::move(e));
  }
  *run = std::move(parsed);
  return true;
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
  if (!journal_dir.empty() && signature.empty()) {
    *why = "a journal folder needs the settings' signature";
    return false;
  }
  if (num_ranks < 1 || rank < 0 || rank >= num_ranks) {
    *why = "rank " + std::to_string(rank) + " of " + std::to_string(num_ranks) + " ranks";
    return false;
  }
  if (num_ranks > 1 && (!barrier || !gather)) {
    *why = "several ranks need a barrier and a gather";
    return false;
  }
  return true;
}

bool RunMonteCarlo(int num_scenarios, const MonteCarloTrial& trial,
                   const MonteCarloOptions& options, std::vector<MonteCarloRun>* runs,
                   std::string* error, MonteCarloTally* tally) {
  CHECK(runs != nullptr) << "expected a runs vector, got nullptr";
  CHECK_GE(num_scenarios, 1) << "expected at least one scenario";
  MonteCarloTally local_tally;
  if (tally == nullptr) tally = &local_tally;
  *tally = MonteCarloTally();
  std::string why;
  if (!options.IsValid(&why)) {
    *error = "Monte Carlo options: " + why;
    return false;
  }
  const int total = num_scenarios * options.num_seeds;
  // The position of (scenario, seed) in *runs, or -1 for a run of another request.
  auto index_of = [&](int scenario, std::uint64_t seed) {
    if (scenario < 0 || scenario >= num_scenarios || seed < options.first_seed ||
        seed - options.first_seed >= static_cast<std::uint64_t>(options.num_seeds)) {
      return -1;
    }
    return scenario * options.num_seeds + static_cast<int>(seed - options.first_seed);
  };
  runs->assign(total, MonteCarloRun());
  std::vector<char> done(total, 0);

  // Resume: runs journalled by earlier calls with the same settings (the first record wins).
  data::RunJournal journal("monte_carlo");
  const bool journalled = !options.journal_dir.empty();
  if (journalled) {
    const bool loaded = journal.Load(
        options.journal_dir, options.signature,
        [&](const std::string& body) {
          MonteCarloRun run;
          if (!ParseRunRecord(body, &run)) return false;
          const int index = index_of(run.scenario, run.seed);
          if (index >= 0 && !done[index]) {
            (*runs)[index] = std::move(run);
            done[index] = 1;
            ++tally->resumed;
          }
          return true;
        },
        error);
    if (!loaded) {
      tally->journal_of_other_settings =
          error->find("journal of other settings") != std::string::npos;
      return false;
    }
    tally->skipped_lines = journal.skipped_lines();
  }
  std::vector<int> pending, mine;
  for (int index = 0; index < total; ++index) {
    if (!done[index]) pending.push_back(index);
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    if (static_cast<int>(i % options.num_ranks) == options.rank) mine.push_back(pending[i]);
  }
  tally->computed = static_cast<int>(pending.size());
  if (options.num_ranks > 1) options.barrier();  // all have read before any appends
  if (journalled &&
      !journal.OpenForAppend(options.journal_dir, options.signature, options.rank, error)) {
    return false;
  }

  std::mutex mutex;
  bool failed = false;
  int finished = 0;
  std::string first_error;
  const int my_total = static_cast<int>(mine.size());
  // Each index writes only its own run, so the vector does not depend on which thread ran it or
  // when; the mutex guards only the failure flag and the progress callback.
  data::ParallelFor(0, my_total, options.num_threads, [&](int position) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (failed) return;
    }
    const int index = mine[position];
    MonteCarloRun& run = (*runs)[index];
    run.scenario = index / options.num_seeds;
    run.seed = options.first_seed + static_cast<std::uint64_t>(index % options.num_seeds);
    std::string message;
    bool ok = trial(run.scenario, run.seed, &run.estimates, &message);
    if (ok) {
      for (const MonteCarloEstimate& e : run.estimates) {
        CHECK(IsCsvSafe(e.estimator) && IsCsvSafe(e.parameter))
            << "estimator and parameter names must not contain a comma, a quote or a line "
               "break: '"
            << e.estimator << "', '" << e.parameter << "'";
      }
      if (journalled) ok = journal.Append(FormatRunRecord(run), &message);
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (!ok) {
      if (!failed) {
        first_error = "scenario " + std::to_string(run.scenario) + ", seed " +
                      std::to_string(run.seed) + ": " + message;
      }
      failed = true;
      return;
    }
    done[index] = 1;
    ++finished;
    if (options.on_run) options.on_run(run, finished, my_total);
  });
  journal.Close();
  if (failed) *error = first_error;
  if (options.num_ranks == 1) return !failed;

  // Distributed: rank 0 receives every rank's runs of this call.
  std::string lines;
  if (!failed) {
    for (int index : mine) lines += FormatRunRecord((*runs)[index]) + "\n";
  }
  if (!options.gather(!failed, &lines, error)) return false;
  if (options.rank != 0) {
    runs->clear();
    return true;
  }
  std::istringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    MonteCarloRun run;
    if (!ParseRunRecord(line, &run)) {
      *error = "internal: a gathered Monte Carlo run did not parse back";
      return false;
    }
    const int index = index_of(run.scenario, run.seed);
    if (index >= 0 && !done[index]) {
      (*runs)[index] = std::move(run);
      done[index] = 1;
    }
  }
  for (int index = 0; index < total; ++index) {
    if (!done[index]) {
      *error = "internal: Monte Carlo run " + std::to_string(index) + " missing after the gather";
      return false;
    }
  }
  return true;
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
             "," + Number(e.measure ? std::nan("") : e.truth) + "," + Number(e.estimate) + "," +
             Number(e.reported_std) + "," + Number(lower) + "," + Number(upper) + "," +
             (e.converged ? "1" : "0") + "\n";
    }
  }
  return csv;
}

}  // namespace dynid::solvers
