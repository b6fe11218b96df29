// experiments/benchmarks/bench_timing — the timer every bench_* program reports with: the best
// of several runs, in wall time or in CPU time (on a shared machine the CPU time of one thread is
// far less sensitive to other processes).
#ifndef DYNID_EXPERIMENTS_BENCHMARKS_BENCH_TIMING_H_
#define DYNID_EXPERIMENTS_BENCHMARKS_BENCH_TIMING_H_

#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>

namespace dynid::benchmarks {

enum class BenchClock { kWall, kThreadCpu };

// CPU seconds used so far by the calling thread.
inline double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// The shortest of `repeats` (>= 1) runs of `work`, in seconds of `clock`.
inline double BestSeconds(const std::function<void()>& work, int repeats,
                          BenchClock clock = BenchClock::kWall) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuSeconds();
    work();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, clock == BenchClock::kThreadCpu ? ThreadCpuSeconds() - cpu_start : wall);
  }
  return best;
}

}  // namespace dynid::benchmarks

#endif  // DYNID_EXPERIMENTS_BENCHMARKS_BENCH_TIMING_H_
