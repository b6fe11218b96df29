// experiments/tx40_study/tx40_output — the study's outputs: the tables (Tables 2–6 of Brunot et
// al. (2018) beside the estimates, diagnostics, essential parameters of the data, rows used),
// estimates.csv and summary.json, then the per-scenario CSVs, figures and the measurements.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_OUTPUT_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "dynid/solvers/idim.h"
#include "experiments/tx40_study/tx40_flags.h"
#include "experiments/tx40_study/tx40_monte_carlo.h"
#include "experiments/tx40_study/tx40_record.h"
#include "experiments/tx40_study/tx40_runs.h"

namespace dynid::tx40_study {

// tables.md (also printed), estimates.csv and summary.json without its total time.
// guard_comparison (may be null): the IDIM-LS conv. runs with settings.comparison_guard_rows/_s,
// reported per essential parameter as the relative change the guard band causes. coverage (may
// be null: real data): the Monte Carlo's measured coverage of the intervals, quoted per run.
void BuildTables(const Settings& settings, const solvers::IdimModel& model, const Record& record,
                 const Runs& runs, const Runs* guard_comparison, double compute_seconds,
                 const MeasuredCoverage* coverage, std::string* markdown, std::string* estimates,
                 nlohmann::json* summary);

// Writes tables.md, estimates.csv, the per-scenario CSVs and figures, the measurements (when
// asked) and summary.json (with total_seconds) to settings.out_dir, all at once at the end.
bool WriteOutputs(const Settings& settings, const solvers::IdimModel& model, const Record& record,
                  const Runs& runs, const std::string& markdown, const std::string& estimates,
                  const Elapsed& elapsed, nlohmann::json* summary, std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_OUTPUT_H_
