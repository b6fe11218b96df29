// experiments/weight_sweep/weight_sweep_run — the sweep's computation: the journal's signature,
// resuming what earlier runs finished, sharing the pending estimates out over the MPI ranks
// (weight_sweep_mpi) and the threads, a progress bar, and the merge of every estimate on rank 0.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_RUN_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_RUN_H_

#include <string>
#include <vector>

#include "dynid/solvers/weight_grid.h"
#include "experiments/weight_sweep/weight_sweep_flags.h"

namespace dynid::experiments {

// This process's place in an MPI job (rank 0 of 1 without MPI).
struct Ranks {
  int rank = 0;
  int size = 1;
};

struct SweepRun {
  std::vector<solvers::GridPointResult> results;  // rank 0: every estimate, by (point, seed)
  std::string journal_dir;
  std::string signature;   // of everything that changes an estimate
  size_t resumed = 0;      // estimates read back from the journal
  int skipped_lines = 0;   // cut-short journal lines ignored
  size_t computed = 0;     // estimates pending before this run (over all ranks)
  double compute_s = 0.0;  // wall time of this run's estimates
};

// Runs the pending estimates of `setup` (journalled in OUT_DIR/.weight_sweep_journal/ as they
// finish). False with the reason; *exit_code is 2 for a journal of other settings, 1 otherwise.
bool RunSweep(const SweepSetup& setup, const Ranks& ranks, SweepRun* run, int* exit_code,
              std::string* error);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_RUN_H_
