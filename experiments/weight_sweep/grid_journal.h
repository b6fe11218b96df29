// The resumable journal of the weight_sweep program: a finished (grid point, seed) is appended as
// one line with a checksum and flushed, so a killed run resumes where it stopped and never
// records a point twice or half. Every number round-trips exactly (%.17g).
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_JOURNAL_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_JOURNAL_H_

#include <map>
#include <string>
#include <utility>

#include "dynid/data/run_journal.h"
#include "dynid/solvers/weight_grid.h"

namespace dynid::experiments {

// A journal record's body: "P <point> <seed_index> <count> <count values>" (data::RunJournal adds
// the checksum).
std::string FormatJournalBody(const solvers::GridPointResult& result);
// Parses a body into `result`. False when it is incomplete or has the wrong sizes for
// (p, n + l, 2n).
bool ParseJournalBody(const std::string& body, int p, int num_zeta, int num_xi,
                      solvers::GridPointResult* result);

// The sweep's journal (data::RunJournal of kind "weight_sweep") with its records parsed.
class GridJournal {
 public:
  // Loads every journal file in `directory` (which need not exist) with the given signature.
  // Invalid lines (a point cut short by a kill) are skipped and counted; the first record of a
  // (point, seed) wins.
  bool Load(const std::string& directory, const std::string& signature, int p, int num_zeta,
            int num_xi, std::string* error);
  // Opens this rank's journal file in `directory` (created if needed) for appending.
  bool OpenForAppend(const std::string& directory, const std::string& signature, int rank,
                     std::string* error) {
    return journal_.OpenForAppend(directory, signature, rank, error);
  }
  // Appends one record and flushes it to the file system.
  bool Append(const solvers::GridPointResult& result, std::string* error);
  void Close() { journal_.Close(); }

  const std::map<std::pair<int, int>, solvers::GridPointResult>& loaded() const { return loaded_; }
  int skipped_lines() const { return journal_.skipped_lines(); }

 private:
  data::RunJournal journal_{"weight_sweep"};
  std::map<std::pair<int, int>, solvers::GridPointResult> loaded_;
};

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_JOURNAL_H_
