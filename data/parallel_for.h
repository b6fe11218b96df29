// data/parallel_for — the project's parallel loop over an index range (the shape of Ceres's
// internal ParallelFor): every index of [begin, end) is passed exactly once to the function, on
// up to num_threads threads (the calling thread is one of them). Indexes are handed out one at a
// time in increasing order (dynamic scheduling), so unequal costs balance; the function must
// make each index's work independent of the others (results stored per index), then the result
// is the same for every thread count.
#ifndef DYNID_DATA_PARALLEL_FOR_H_
#define DYNID_DATA_PARALLEL_FOR_H_

#include <functional>

namespace dynid::data {

// Number of threads ParallelFor uses for num_threads over `count` indexes: num_threads <= 0
// means std::thread::hardware_concurrency() (at least 1), and never more than count (at least 1).
int ParallelForThreads(int num_threads, int count);

// Calls function(i) for every i in [begin, end) (nothing when end <= begin) on
// ParallelForThreads(num_threads, end − begin) threads, and returns when all calls returned.
void ParallelFor(int begin, int end, int num_threads, const std::function<void(int)>& function);

// The same with the index of the calling worker, thread_id in [0, ParallelForThreads(...)), for
// per-thread scratch space: function(thread_id, i).
void ParallelForWithThreadId(int begin, int end, int num_threads,
                             const std::function<void(int thread_id, int i)>& function);

}  // namespace dynid::data

#endif  // DYNID_DATA_PARALLEL_FOR_H_
