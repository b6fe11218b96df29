// solvers::NodePipeline — runs the per-node work that does not depend on the recursion (the
// linearisation of a node and the elimination of its inputs, in the Riccati sweeps) on a worker
// thread ahead of the sequential sweep that consumes it.
//
// The worker calls produce(k, &slot) for k = 0, 1, ..., N − 1 in order, writing into a ring of
// `capacity` slots; the consumer takes the slots in the same order with Wait(k) and hands each
// back with Release(k). Both sides publish their progress through one atomic counter each and
// re-read the other's counter only when their cached copy says they must wait, so the cache
// line holding a counter changes hands about once per ring's worth of nodes, not once per node.
// A side that must wait spins briefly, then sleeps on a condition variable (on a machine busy
// with other work, spinning would take the core its partner needs). If produce() fails at node
// k, Wait(k) returns nullptr and error() says why; the destructor stops and joins the worker
// (also when the consumer gives up early).
#ifndef DYNID_SOLVERS_NODE_PIPELINE_H_
#define DYNID_SOLVERS_NODE_PIPELINE_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <glog/logging.h>

namespace dynid::solvers {

// Callers run work on more than one thread only with at least this many nodes per thread
// (below it, starting threads costs more than they save).
constexpr int kMinNodesPerThread = 512;

template <class Slot>
class NodePipeline {
 public:
  NodePipeline(int num_nodes, int capacity) : num_nodes_(num_nodes), slots_(capacity) {
    CHECK_GE(capacity, 1);
  }
  NodePipeline(const NodePipeline&) = delete;
  NodePipeline& operator=(const NodePipeline&) = delete;
  ~NodePipeline() {
    stop_.store(true);
    Notify(producer_waiting_);
    if (worker_.joinable()) worker_.join();
  }

  // Starts the worker; produce(int k, Slot* slot, std::string* error) -> bool.
  template <class Produce>
  void Start(Produce produce) {
    CHECK(!worker_.joinable()) << "the pipeline runs once";
    worker_ = std::thread([this, produce = std::move(produce)]() mutable { Run(produce); });
  }

  // The slot of node k once it is produced (k increasing), or nullptr if production failed.
  const Slot* Wait(int k) {
    if (k >= known_produced_) {
      SpinThenSleep(consumer_waiting_, [&] {
        return (known_produced_ = produced_.load(std::memory_order_acquire)) > k ||
               failed_.load(std::memory_order_acquire);
      });
      known_produced_ = produced_.load(std::memory_order_acquire);
      if (known_produced_ <= k) return nullptr;  // failed before node k
    }
    return &slots_[k % static_cast<int>(slots_.size())];
  }

  // The consumer is done with node k's slot (k increasing).
  void Release(int k) {
    consumed_.store(k + 1);
    Notify(producer_waiting_);
  }

  const std::string& error() const { return error_; }

 private:
  // Waits until ready() is true: spins first, then sleeps until the other side notifies.
  template <class Ready>
  void SpinThenSleep(std::atomic<bool>& waiting, const Ready& ready) {
    for (int spin = 0; spin < kSpins; ++spin) {
      if (ready()) return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    waiting.store(true);  // seq_cst: ordered against the other side's publish-then-check
    wake_.wait(lock, ready);
    waiting.store(false);
  }

  // Wakes the other side if it sleeps (after a seq_cst publish of the progress it waits for).
  void Notify(const std::atomic<bool>& waiting) {
    if (waiting.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
  }

  template <class Produce>
  void Run(Produce& produce) {
    const int capacity = static_cast<int>(slots_.size());
    int known_consumed = 0;
    for (int k = 0; k < num_nodes_; ++k) {
      if (k - known_consumed >= capacity) {
        SpinThenSleep(producer_waiting_, [&] {
          return k - (known_consumed = consumed_.load(std::memory_order_acquire)) < capacity ||
                 stop_.load();
        });
      }
      if (stop_.load(std::memory_order_relaxed)) return;
      if (!produce(k, &slots_[k % capacity], &error_)) {
        failed_.store(true);
        Notify(consumer_waiting_);
        return;
      }
      produced_.store(k + 1);
      Notify(consumer_waiting_);
    }
  }

  static constexpr int kSpins = 4096;
  const int num_nodes_;
  std::vector<Slot> slots_;
  std::string error_;  // written by the worker before failed_ is set
  int known_produced_ = 0;  // consumer's copy of produced_
  alignas(64) std::atomic<int> produced_{0};
  std::atomic<bool> consumer_waiting_{false};
  alignas(64) std::atomic<int> consumed_{0};
  std::atomic<bool> producer_waiting_{false};
  alignas(64) std::atomic<bool> failed_{false};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread worker_;
};

// Calls f(t, begin, end) for num_threads contiguous ranges [begin, end) of about equal length
// covering [0, n), range t on its own thread (the calling thread takes the last one); f must be
// safe to call concurrently.
template <class F>
void ParallelRanges(int n, int num_threads, const F& f) {
  num_threads = std::max(1, std::min(num_threads, n));
  auto bound = [n, num_threads](int t) {
    return static_cast<int>(static_cast<long>(n) * t / num_threads);
  };
  std::vector<std::thread> threads;
  threads.reserve(num_threads - 1);
  for (int t = 0; t + 1 < num_threads; ++t) {
    threads.emplace_back([&f, t, begin = bound(t), end = bound(t + 1)]() { f(t, begin, end); });
  }
  f(num_threads - 1, bound(num_threads - 1), n);
  for (std::thread& thread : threads) thread.join();
}

// Calls f(k) for every k in [0, n) on num_threads threads (see ParallelRanges).
template <class F>
void ParallelFor(int n, int num_threads, const F& f) {
  ParallelRanges(n, num_threads, [&f](int, int begin, int end) {
    for (int k = begin; k < end; ++k) f(k);
  });
}

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_NODE_PIPELINE_H_
