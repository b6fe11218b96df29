// experiments/common/monte_carlo_cli — the command line of every study's Monte Carlo
// (solvers/monte_carlo.h): the shared flags, the run with its journal, threads, MPI ranks and
// progress, and the lines and JSON that report how it ran.
//
//   <study> --monte_carlo=N [--seed=S] [--monte_carlo_threads=T] [--monte_carlo_resume]
//   mpirun -np K <study>_mpi --monte_carlo=N ...
//
// Runs are journalled in OUT_DIR/.monte_carlo_journal/ as they finish. A new run starts afresh
// (the old journal is removed); --monte_carlo_resume instead reuses the runs journalled under
// the same settings (a digest of every flag of the program except --out_dir, --seed,
// --monte_carlo, --monte_carlo_threads, --monte_carlo_resume, --figures and --progress), so a
// killed Monte Carlo continues and a longer one adds only the new seeds. The *_mpi programs
// share the pending runs out over the MPI ranks; rank 0 gathers them and writes the outputs.
// (weight_sweep's first seed, --first_seed, is left out of the digest like --seed.)
#ifndef DYNID_EXPERIMENTS_COMMON_MONTE_CARLO_CLI_H_
#define DYNID_EXPERIMENTS_COMMON_MONTE_CARLO_CLI_H_

#include <gflags/gflags.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"

DECLARE_int32(monte_carlo);
DECLARE_int32(monte_carlo_threads);
DECLARE_bool(monte_carlo_resume);

namespace dynid::cli {

// Makes this process rank `rank` of `size` for the Monte Carlo; `barrier` and `gather` are the
// MPI job's collectives (cli::MpiJob). A *_mpi program's main calls this before any run; without
// it the process is the only rank.
void SetMonteCarloRanks(int rank, int size, std::function<void()> barrier,
                        std::function<bool(bool, std::string*, std::string*)> gather);
// This process's rank (0 without MPI) and the number of ranks.
int MonteCarloRank();
int MonteCarloRanks();

// The shared flags' checks (false with a message naming the flag; exit 2): --monte_carlo >= 0,
// --monte_carlo_threads >= 0, --monte_carlo_resume only with --monte_carlo and only onto a
// journal of the same settings in `out_dir`; several MPI ranks only with --monte_carlo.
// A study whose Monte Carlo cannot be journalled (per-run results outside the runs' estimates,
// or runs not defined by their seed alone) runs it through solvers::RunMonteCarlo itself and
// passes why in `not_resumable`: --monte_carlo_resume is then refused with that reason.
bool ValidateMonteCarloFlags(const std::string& out_dir, std::string* error,
                             const std::string& not_resumable = "");

// How a Monte Carlo ran.
struct MonteCarloJob {
  std::vector<solvers::MonteCarloRun> runs;  // on the reporting rank: every run
  solvers::MonteCarloTally tally;
  std::uint64_t first_seed = 0;
  int threads = 1;         // worker threads per rank
  int ranks = 1;           // MPI ranks
  double elapsed_s = 0.0;  // wall time of this run's share
  // False on MPI ranks other than 0, which print and write nothing.
  bool reporting = true;
  std::string settings;  // MonteCarloSettings(), for coverage.csv's "# settings:" line
};

// Runs `trial` for `num_scenarios` scenarios × --monte_carlo seeds from `first_seed` on
// --monte_carlo_threads threads (and the MPI ranks), journalled in OUT_DIR/.monte_carlo_journal,
// with a progress stage. False with the first failure.
// A study whose runs cannot be journalled (it validated the flags with a `not_resumable` reason)
// passes journalled = false: the runs are neither journalled nor shared out over MPI ranks.
bool RunMonteCarloFromFlags(const std::string& out_dir, std::uint64_t first_seed, int num_scenarios,
                            const solvers::MonteCarloTrial& trial, MonteCarloJob* job,
                            std::string* error, bool journalled = true);

// Flags that the settings lines record at every value, their default too (MonteCarloSettings,
// SameMonteCarloSettings). A program names here a flag whose default has changed: its lines
// written before recorded nothing at the old default, so they read as measured at the new one.
// A line that records the flag is compared by its value; a line without it is measured at an
// unknown value and describes no run of this program. A program's main calls this before its
// Monte Carlo or its quoted coverage.
void RecordFlagsAlways(const std::vector<std::string>& names);

// How this Monte Carlo runs, as one line: the program, --monte_carlo, --seed and every flag that
// may change a run and is not at its default or is recorded always (RecordFlagsAlways)
// ("scara_study --monte_carlo=50 --seed=1 --duration_s=6"). A string flag that names a regular file
// (a record, a robot description) has the file's size and checksum appended to the path as given
// ("--data=data/log.csv#bytes=812345,fnv1a64=<16 hex digits>", FNV-1a of the content).
std::string MonteCarloSettings();

// Whether one of `settings` (a coverage.csv's "# settings:" lines) describes a Monte Carlo of
// this program at the flags of this run, leaving out `ignored` (flags of the single run that do
// not change a Monte Carlo run, or that select rows of the file, such as a scenario). Files are
// compared by content: a file flag recorded with its size and checksum matches this run's file
// of the same size and checksum wherever it lies and however its path is written (absolute,
// relative to any working folder), and does not match a changed file at the same path. Lines
// written without the checksums compare the path as given. A line without a flag recorded always
// (RecordFlagsAlways) matches no run. Otherwise false with what differs in *difference
// ("measured by P at FLAGS without a recorded --name, this run at FLAGS" for such a line).
bool SameMonteCarloSettings(const std::vector<std::string>& settings,
                            const std::vector<std::string>& ignored, std::string* difference);

// The measured coverage a single run quotes beside its intervals: solvers::LoadMeasuredCoverage of
// `given_path` (the study's --coverage_csv) or the shipped file, and whether it was measured at
// this run's flags (SameMonteCarloSettings with `ignored`): *other_settings is empty when it was
// (or when no file was found), else what differs. False with "--coverage_csv: " and the reader's
// message for a file that cannot be read.
bool LoadQuotedCoverage(const std::string& given_path, const std::string& shipped_relative_path,
                        const std::vector<std::string>& ignored,
                        std::vector<solvers::CoverageRow>* rows, std::string* source,
                        std::string* other_settings, std::string* error);

// "N seeds (S..E), elapsed T s on K thread(s) × R rank(s); M runs resumed from the journal"
std::string MonteCarloJobLine(const MonteCarloJob& job);
// {"seeds", "first_seed", "threads", "ranks", "elapsed_s", "resumed_runs", "computed_runs",
//  "journal"} for summary.json.
nlohmann::json MonteCarloJobJson(const MonteCarloJob& job, const std::string& out_dir);

// A per-run measure (solvers::MonteCarloEstimate::measure) over the runs: the finite values of
// `estimator`'s `parameter` in the runs where it converged, as {"runs", "median", "p10", "p90",
// "min", "max"} (quantiles interpolated between order statistics; only "runs": 0 without a
// value), and the same as the text "median [p10, p90]" with each number in `format`.
nlohmann::json MeasureSpread(const std::vector<solvers::MonteCarloRun>& runs,
                             const std::string& estimator, const std::string& parameter);
std::string MeasureSpreadText(const nlohmann::json& spread, const char* format);

}  // namespace dynid::cli

#endif  // DYNID_EXPERIMENTS_COMMON_MONTE_CARLO_CLI_H_
