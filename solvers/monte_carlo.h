// solvers:: Monte Carlo runs of a study's "simulate → estimate" (solvers/README.md, "Monte Carlo
// evidence").
//
// An interval an estimator reports is honest when, over repeated experiments, it contains the
// truth as often as it claims (95 % of the time for a 95 % interval). A single run cannot show
// this; repeating the experiment with independent noise can. The harness takes the experiment as
// a function of a scenario and a seed — simulate the record with that noise seed, run every
// estimator on it — that returns, per estimator and parameter, the estimate, the standard
// deviation or 95 % interval the estimator reported, the truth and whether the estimator
// converged. RunMonteCarlo calls it for num_seeds seeds of every scenario on threads
// (data::ParallelFor); solvers/coverage.h turns the runs into bias, spread, coverage and z-score
// statistics.
//
// Long Monte Carlos can be resumed and shared out: with a journal folder every finished run is
// appended to a data::RunJournal as it finishes, and a later call with the same settings reads
// those runs back and computes only the rest (a killed run continues, a longer one adds seeds);
// with several ranks (the processes of an MPI job) each computes its share of the pending runs
// and a gather callback hands rank 0 the others' runs.
//
// Determinism: the runs are stored per (scenario, seed), never in completion order, so the
// result is the same for every thread count as long as the trial itself depends only on its
// scenario and seed (no shared random generator, no thread-count-dependent algorithm inside).
#ifndef DYNID_SOLVERS_MONTE_CARLO_H_
#define DYNID_SOLVERS_MONTE_CARLO_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace dynid::solvers {

// The 0.975 quantile of the standard normal distribution: a 95 % interval is estimate ± z σ.
inline constexpr double kNormalQuantile975 = 1.959963984540054;

// One parameter of one estimator in one run. Names must not contain a comma, a double quote or a
// line break (they become CSV cells).
struct MonteCarloEstimate {
  std::string estimator;  // e.g. "smoother_weighting2"
  std::string parameter;  // e.g. "payload_kg"
  double truth = std::numeric_limits<double>::quiet_NaN();
  double estimate = std::numeric_limits<double>::quiet_NaN();
  // What the estimator reported: a standard deviation σ and/or a 95 % interval [lower, upper].
  // Without an interval (NaN bounds) the interval is estimate ± kNormalQuantile975 σ; an interval
  // without σ (e.g. a bootstrap percentile interval) gives no z-score. Both NaN: nothing reported
  // (the run counts for bias and spread, not for coverage).
  double reported_std = std::numeric_limits<double>::quiet_NaN();
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  // False when the estimator stopped before its convergence test held (iteration limit); such a
  // run is counted, not used in the statistics.
  bool converged = true;
  // A per-run measure the study summarises itself (a relative error, an iteration count): kept
  // with the run (journalled, listed in monte_carlo_runs.csv with its truth NaN) but left out of
  // the coverage statistics. Only `estimate` (and `converged`) carry meaning.
  bool measure = false;
};

// The 95 % interval of an estimate: [lower, upper] when both are finite, else
// estimate ± kNormalQuantile975 σ when σ is finite and > 0, else NaN bounds.
void ReportedInterval(const MonteCarloEstimate& estimate, double* lower, double* upper);

// One (scenario, seed): every estimate the trial returned, in its order.
struct MonteCarloRun {
  int scenario = 0;
  std::uint64_t seed = 0;
  std::vector<MonteCarloEstimate> estimates;
};

// simulate → estimate for scenario `scenario` with noise seed `seed`, appending to `estimates`.
// Returns false with a message only for a failure that invalidates the study (bad input, a
// solver error); an estimator that does not converge is a valid outcome (converged = false).
// Called concurrently from several threads: it must not share mutable state between calls.
using MonteCarloTrial =
    std::function<bool(int scenario, std::uint64_t seed, std::vector<MonteCarloEstimate>* estimates,
                       std::string* error)>;

struct MonteCarloOptions {
  int num_seeds = 20;            // runs per scenario (>= 1)
  std::uint64_t first_seed = 1;  // seeds first_seed, first_seed + 1, ..., for every scenario
  int num_threads = 0;           // worker threads; <= 0: all cores (data::ParallelForThreads)
  // Called after each run this process finished, one call at a time (progress lines; `total`
  // counts this process's pending runs); may be empty.
  std::function<void(const MonteCarloRun& run, int finished, int total)> on_run;

  // Resumable runs: when not empty, runs are journalled in this folder (data::RunJournal of kind
  // "monte_carlo", file journal-<rank>.txt) and runs journalled there before under the same
  // `signature` are reused. Runs are keyed by (scenario, seed), so the signature must digest
  // every setting that changes a run except the seed (and must not depend on num_seeds).
  std::string journal_dir;
  std::string signature;

  // Distributed runs: this process is rank `rank` of `num_ranks`; it computes the pending runs
  // whose position in the pending list is rank modulo num_ranks. With num_ranks > 1, `barrier`
  // (every rank waits for all) separates reading the journals from appending to them, and
  // `gather` (collective, e.g. cli::MpiJob) passes each rank's finished runs as text lines and
  // leaves every rank's lines, concatenated, on rank 0, returning false everywhere when any rank
  // failed. Resuming a distributed run needs a journal folder every rank sees.
  int rank = 0;
  int num_ranks = 1;
  std::function<void()> barrier;
  std::function<bool(bool ok, std::string* lines, std::string* error)> gather;

  // True when num_seeds >= 1, a journal has a signature, 0 <= rank < num_ranks and several ranks
  // have a barrier and a gather; otherwise false with the reason in `why`.
  bool IsValid(std::string* why) const;
};

// What a journalled or distributed Monte Carlo did.
struct MonteCarloTally {
  int resumed = 0;        // runs read back from the journal
  int computed = 0;       // runs computed by this call, over all ranks
  int skipped_lines = 0;  // journal lines cut short by a kill (or not understood), ignored
  // True when the failure was a journal of other settings in journal_dir (a usage error).
  bool journal_of_other_settings = false;
};

// Runs `trial` for every scenario in [0, num_scenarios) and seed first_seed + i, i < num_seeds,
// on options.num_threads threads: (*runs)[scenario × num_seeds + i] holds that run (on rank 0;
// other ranks return with *runs empty). False with the first trial error (remaining runs are
// skipped), a journal error or for invalid options. Every estimate's names are checked (CHECK:
// no comma, quote or line break). `tally` may be null.
bool RunMonteCarlo(int num_scenarios, const MonteCarloTrial& trial,
                   const MonteCarloOptions& options, std::vector<MonteCarloRun>* runs,
                   std::string* error, MonteCarloTally* tally = nullptr);

// Every estimate of every run as CSV, one row per (run, estimate):
//   scenario,seed,estimator,parameter,truth,estimate,reported_std,lower,upper,converged
// with the scenario's name from `scenario_names` (indexed by MonteCarloRun::scenario; empty
// names allowed) and the bounds of ReportedInterval. Numbers round-trip (%.17g).
std::string FormatMonteCarloRunsCsv(const std::vector<MonteCarloRun>& runs,
                                    const std::vector<std::string>& scenario_names);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_MONTE_CARLO_H_
