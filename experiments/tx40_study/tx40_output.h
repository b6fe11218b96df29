// experiments/tx40_study/tx40_output — the study's outputs: the tables (Tables 2–6 of Brunot et
// al. (2018) beside the estimates, diagnostics, essential parameters of the data, rows used),
// estimates.csv and summary.json, then the per-scenario CSVs, figures and the measurements.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_OUTPUT_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_OUTPUT_H_

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/idim.h"
#include "experiments/common/progress.h"
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

// The per-scenario CSVs (torques_*, autocorrelation_*, estimates_*) and figures of each
// knowledge level, written into the output stage as soon as the level's last run has finished,
// on a thread of their own: the renderer draws a level's figures while the other levels' runs
// compute, rather than every figure after the runs (the default run: 6 of its 9 figures, the
// "none" and "good" levels, during the runs). Nothing reaches settings.out_dir before
// WriteOutputs commits (the stage folder inside it is removed when the run fails).
class LevelOutputs {
 public:
  // `runs`: planned (PlanJobs), outliving this object; hook RunDone into runs.job_done.
  LevelOutputs(const Settings& settings, const solvers::IdimModel& model, const Record& record,
               const Runs& runs);
  ~LevelOutputs();  // stops after the level being written; the stage is not committed
  LevelOutputs(const LevelOutputs&) = delete;
  LevelOutputs& operator=(const LevelOutputs&) = delete;

  // A job has finished (any thread): the last of its level queues the level's outputs.
  void RunDone(const Job& job);
  // Writes the levels not written yet and waits for all (the stage is opened if no level was);
  // false with the first failure (a figure that cannot be rendered fails the run).
  bool Finish(std::string* error);
  data::OutputStage& stage() { return stage_; }

 private:
  void Work();

  const Settings& settings_;
  const solvers::IdimModel& model_;
  const Record& record_;
  const Runs& runs_;
  data::OutputStage stage_;
  bool opened_ = false;  // the stage (used by the thread only, until Finish joins it)
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<int> remaining_;  // unfinished jobs per level (index in settings.levels)
  std::vector<bool> queued_;
  std::vector<int> queue_;
  bool stopping_ = false;
  std::string error_;              // the first failure
  cli::Stage* drawing_ = nullptr;  // Finish's progress of the figures drawn after the runs
  std::thread thread_;
};

// Writes tables.md, estimates.csv, the per-scenario CSVs and figures (those of `levels` not yet
// written), the measurements (when asked) and summary.json (with total_seconds) to
// settings.out_dir, all at once at the end (the stage of `levels`, committed).
bool WriteOutputs(const Settings& settings, const solvers::IdimModel& model, const Record& record,
                  const Runs& runs, const std::string& markdown, const std::string& estimates,
                  const Elapsed& elapsed, LevelOutputs* levels, nlohmann::json* summary,
                  std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_OUTPUT_H_
