#include "dynid/data/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace dynid::data {

int ParallelForThreads(int num_threads, int count) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(num_threads, count));
}

void ParallelForWithThreadId(int begin, int end, int num_threads,
                             const std::function<void(int thread_id, int i)>& function) {
  if (end <= begin) return;
  const int used = ParallelForThreads(num_threads, end - begin);
  if (used == 1) {
    for (int i = begin; i < end; ++i) function(0, i);
    return;
  }
  std::atomic<int> next{begin};
  const auto worker = [&](int thread_id) {
    for (int i = next++; i < end; i = next++) function(thread_id, i);
  };
  std::vector<std::thread> threads;
  threads.reserve(used - 1);
  for (int t = 1; t < used; ++t) threads.emplace_back(worker, t);
  worker(0);
  for (std::thread& thread : threads) thread.join();
}

void ParallelFor(int begin, int end, int num_threads, const std::function<void(int)>& function) {
  ParallelForWithThreadId(begin, end, num_threads, [&function](int, int i) { function(i); });
}

}  // namespace dynid::data
