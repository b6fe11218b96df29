// The resumable journal of the weight_sweep program: a finished (grid point, seed) is appended as
// one line with a checksum and flushed, so a killed run resumes where it stopped and never
// records a point twice or half. Every number round-trips exactly (%.17g).
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_JOURNAL_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_JOURNAL_H_

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "dynid/solvers/weight_grid.h"

namespace dynid::experiments {

// A journal line: "P <point> <seed_index> <count> <count values> <checksum>", formatted from
// `result`.
std::string FormatJournalLine(const solvers::GridPointResult& result);
// Parses a journal line into `result`. False when the line is incomplete, has the wrong sizes for
// (p, n + l, 2n) or a bad checksum.
bool ParseJournalLine(const std::string& line, int p, int num_zeta, int num_xi,
                      solvers::GridPointResult* result);

// Append-only per-process journal files in a folder. Every file starts with a signature line of
// the run's configuration; loading refuses files of another configuration.
class GridJournal {
 public:
  // Loads every "journal-*.txt" in `directory` (which need not exist) with the given signature.
  // Invalid lines (a point cut short by a kill) are skipped and counted; the first record of a
  // (point, seed) wins.
  bool Load(const std::string& directory, const std::string& signature, int p, int num_zeta,
            int num_xi, std::string* error);
  // Opens "journal-<rank>.txt" in `directory` (created if needed) for appending.
  bool OpenForAppend(const std::string& directory, const std::string& signature, int rank,
                     std::string* error);
  // Appends one line and flushes it to the file system (one caller at a time).
  bool Append(const solvers::GridPointResult& result, std::string* error);
  // Closes the file opened for appending (if any).
  void Close();
  ~GridJournal() { Close(); }

  const std::map<std::pair<int, int>, solvers::GridPointResult>& loaded() const { return loaded_; }
  int skipped_lines() const { return skipped_lines_; }

 private:
  std::map<std::pair<int, int>, solvers::GridPointResult> loaded_;
  int skipped_lines_ = 0;
  std::FILE* file_ = nullptr;
  std::string path_;
};

// The 64-bit FNV-1a hash of `text` in 16 hex digits (journal signatures and line checksums).
std::string HashHex(const std::string& text);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_JOURNAL_H_
