// Progress of a program's long stages on stderr (README.md, "Command-line contract").
//
// On by default when stderr is a terminal, off otherwise; --progress / --progress=false force it.
// A stage that lasts longer than a second shows "<program>: <stage>: 45 % (450 of 1000), 3.2 s"
// (a count without a total: "<program>: <stage>: 450, 3.2 s"; a stage without a count: its
// elapsed time), refreshed in place on a terminal and as a new line every 5 s otherwise, and ends
// with "<program>: <stage>: done in 7.3 s". Shorter stages print nothing. Stages may nest (the
// newest open one is shown) and be updated from any thread. The library's solvers report
// through solvers::ProgressCallback (solvers/solver_summary.h); Stage::Callback() turns those
// reports into the stage's count.
#ifndef DYNID_EXPERIMENTS_COMMON_PROGRESS_H_
#define DYNID_EXPERIMENTS_COMMON_PROGRESS_H_

#include <gflags/gflags.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "dynid/solvers/solver_summary.h"

DECLARE_bool(progress);

namespace dynid::cli {

// Whether progress is shown: --progress when given, else whether stderr is a terminal.
bool ProgressEnabled();

class Stage {
 public:
  // Opens a stage of `total` work items (0: not counted, or not known yet).
  explicit Stage(std::string name, int64_t total = 0);
  ~Stage();  // End()
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  void Set(int64_t done) { done_.store(done, std::memory_order_relaxed); }
  void Add(int64_t count = 1) { done_.fetch_add(count, std::memory_order_relaxed); }
  void SetTotal(int64_t total) { total_.store(total, std::memory_order_relaxed); }

  // For a stage of consecutive steps (total = their number): the step now running, shown beside
  // the count ("...: 40 % (2 of 5: the weight scan), 3.2 s"); each call but the first counts
  // the previous step as done.
  void Next(const std::string& step);
  std::string step() const;

  // A callback for a library solver: each report sets the count to its `iteration` (and the
  // total to its `total` when that is known).
  solvers::ProgressCallback Callback();

  // Closes the stage (its last line says how long it took, if it was shown). Idempotent.
  void End();

  const std::string& name() const { return name_; }
  int64_t done() const { return done_.load(std::memory_order_relaxed); }
  int64_t total() const { return total_.load(std::memory_order_relaxed); }
  double ElapsedSeconds() const;

 private:
  std::string name_;
  std::atomic<int64_t> done_{0};
  std::atomic<int64_t> total_{0};
  int64_t start_ns_ = 0;
  bool open_ = false;
  mutable std::mutex step_mutex_;
  std::string step_;
  bool stepped_ = false;
};

}  // namespace dynid::cli

#endif  // DYNID_EXPERIMENTS_COMMON_PROGRESS_H_
