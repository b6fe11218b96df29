#include "dynid/data/parallel_for.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace dynid::data {
namespace {

// Every index of [begin, end) is visited exactly once, for any thread count (0 = all cores).
TEST(ParallelForTest, VisitsEveryIndexOnce) {
  for (int threads : {0, 1, 2, 3, 8, 100}) {
    std::vector<std::atomic<int>> visits(57);
    ParallelFor(5, 57, threads, [&visits](int i) { ++visits[i]; });
    for (int i = 0; i < 57; ++i) EXPECT_EQ(visits[i].load(), i >= 5 ? 1 : 0) << i;
  }
}

TEST(ParallelForTest, EmptyRangeCallsNothing) {
  int calls = 0;
  ParallelFor(3, 3, 4, [&calls](int) { ++calls; });
  ParallelFor(4, 2, 4, [&calls](int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

// Thread ids lie in [0, ParallelForThreads) so that per-thread scratch space can be indexed.
TEST(ParallelForTest, ThreadIdsIndexPerThreadScratch) {
  EXPECT_EQ(ParallelForThreads(4, 2), 2);
  EXPECT_EQ(ParallelForThreads(3, 0), 1);
  EXPECT_GE(ParallelForThreads(0, 1000), 1);
  const int used = ParallelForThreads(3, 40);
  std::vector<long> sums(used, 0);
  ParallelForWithThreadId(0, 40, 3, [&](int thread_id, int i) {
    ASSERT_GE(thread_id, 0);
    ASSERT_LT(thread_id, used);
    sums[thread_id] += i;
  });
  long total = 0;
  for (long s : sums) total += s;
  EXPECT_EQ(total, 40 * 39 / 2);
}

}  // namespace
}  // namespace dynid::data
