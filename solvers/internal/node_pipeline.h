// solvers::NodePipeline — runs the per-node work that does not depend on the recursion (the
// linearisation of a node and the elimination of its inputs, in the Riccati sweeps) on a worker
// thread ahead of the sequential sweep that consumes it, with the consumer's thread helping.
//
// Nodes are claimed in increasing order from one shared counter and produced into a ring of
// `capacity` slots by produce(k, &slot, &error, producer): the worker (producer 0) claims the
// next node whenever the ring has room; the consumer takes the nodes in order with Wait(k) and
// hands each back with Release(k), and while node k is not ready yet it claims and produces
// the next unclaimed node itself (producer 1), so that neither thread idles when producing a
// node costs more than consuming it. A node's slot is published by a per-slot "ready" stamp.
// A side that has nothing to do spins briefly, then sleeps on a condition variable (on a
// machine busy with other work, spinning would take the core its partner needs), waking at
// least every 0.5 ms to look again. If produce()
// fails at node k, Wait(k) returns nullptr and error() gives the message of the lowest failing
// node; the destructor stops and joins the worker (also when the consumer gives up early).
#ifndef DYNID_SOLVERS_INTERNAL_NODE_PIPELINE_H_
#define DYNID_SOLVERS_INTERNAL_NODE_PIPELINE_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <functional>
#include <memory>
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
  // produce(int k, Slot* slot, std::string* error, int producer) -> bool.
  using Produce = std::function<bool(int, Slot*, std::string*, int)>;

  NodePipeline(int num_nodes, int capacity)
      : num_nodes_(num_nodes),
        capacity_(capacity),
        slots_(capacity),
        ready_(new Stamp[capacity]) {
    CHECK_GE(capacity, 1);
    for (int i = 0; i < capacity; ++i) ready_[i].node.store(-1);
  }
  NodePipeline(const NodePipeline&) = delete;
  NodePipeline& operator=(const NodePipeline&) = delete;
  ~NodePipeline() {
    stop_.store(true);
    Notify(producer_waiting_);
    if (worker_.joinable()) worker_.join();
  }

  // Starts the worker. With help = false the consumer only waits (the worker produces all).
  void Start(Produce produce, bool help = true) {
    CHECK(!worker_.joinable()) << "the pipeline runs once";
    produce_ = std::move(produce);
    help_ = help;
    worker_ = std::thread([this]() { RunWorker(); });
  }

  // The slot of node k once it is produced (k increasing), or nullptr if production failed.
  const Slot* Wait(int k) {
    const int slot = k % capacity_;
    for (;;) {
      if (ready_[slot].node.load(std::memory_order_acquire) == k) return &slots_[slot];
      if (failed_node_.load(std::memory_order_acquire) <= k) return nullptr;
      int consumed = consumed_.load(std::memory_order_relaxed);  // (this thread writes it)
      if (help_ && ProduceNext(1, &consumed)) continue;
      SpinThenSleep(consumer_waiting_, [&] {
        return ready_[slot].node.load(std::memory_order_acquire) == k ||
               failed_node_.load(std::memory_order_acquire) <= k ||
               (help_ && CanClaim());
      });
    }
  }

  // Asks the cache for node k's slot (read soon; it may still be in production).
  void Prefetch(int k) const {
    const char* begin = reinterpret_cast<const char*>(&slots_[k % capacity_]);
    for (size_t offset = 0; offset < sizeof(Slot); offset += 64) {
      __builtin_prefetch(begin + offset);
    }
  }

  // The consumer is done with node k's slot (k increasing).
  void Release(int k) {
    consumed_.store(k + 1, std::memory_order_release);
    Notify(producer_waiting_);
  }

  // The message of the lowest failing node.
  const std::string& error() const {
    return fail_node_[0].load() <= fail_node_[1].load() ? errors_[0] : errors_[1];
  }

 private:
  // Whether the next unclaimed node exists and fits the ring.
  bool CanClaim() const {
    const int next = next_claim_.load(std::memory_order_relaxed);
    return next < num_nodes_ && next - consumed_.load(std::memory_order_acquire) < capacity_ &&
           failed_node_.load(std::memory_order_relaxed) == INT_MAX;
  }

  // Claims and produces the next node as `producer`; false when there was none to claim.
  // *known_consumed is the caller's copy of consumed_, re-read only when the ring looks full
  // (so that the consumer's counter line does not travel between the cores at every node).
  bool ProduceNext(int producer, int* known_consumed) {
    int next = next_claim_.load(std::memory_order_relaxed);
    do {
      if (next >= num_nodes_ || failed_node_.load(std::memory_order_relaxed) != INT_MAX) {
        return false;
      }
      if (next - *known_consumed >= capacity_) {
        *known_consumed = consumed_.load(std::memory_order_acquire);
        if (next - *known_consumed >= capacity_) return false;
      }
    } while (!next_claim_.compare_exchange_weak(next, next + 1));
    const int slot = next % capacity_;
    if (!produce_(next, &slots_[slot], &errors_[producer], producer)) {
      fail_node_[producer].store(next);
      int failed = failed_node_.load();
      while (next < failed && !failed_node_.compare_exchange_weak(failed, next)) {
      }
    } else {
      ready_[slot].node.store(next, std::memory_order_release);
    }
    Notify(consumer_waiting_);
    return true;
  }

  void RunWorker() {
    int known_consumed = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      if (ProduceNext(0, &known_consumed)) continue;
      if (next_claim_.load() >= num_nodes_ || failed_node_.load() != INT_MAX) return;
      SpinThenSleep(producer_waiting_, [&] { return CanClaim() || stop_.load(); });
    }
  }

  // Waits until ready() is true: spins first, then sleeps until the other side notifies. The
  // progress a side waits for is published with release stores (a full barrier per node would
  // stall the producer behind its slot's stores), so a notification can be lost when the other
  // side publishes just as this one goes to sleep; the sleeper therefore also looks again every
  // kSleepCheck.
  template <class Ready>
  void SpinThenSleep(std::atomic<bool>& waiting, const Ready& ready) {
    for (int spin = 0; spin < kSpins; ++spin) {
      if (ready()) return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    waiting.store(true);
    while (!wake_.wait_for(lock, kSleepCheck, ready)) {
    }
    waiting.store(false);
  }

  // Wakes the other side if it sleeps.
  void Notify(const std::atomic<bool>& waiting) {
    if (waiting.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
  }

  static constexpr int kSpins = 4096;
  static constexpr std::chrono::microseconds kSleepCheck{500};
  const int num_nodes_;
  const int capacity_;
  std::vector<Slot> slots_;
  // Per slot: the node it holds (−1: none yet), one cache line each (a shared line would travel
  // between the cores twice per node).
  struct alignas(64) Stamp {
    std::atomic<int> node;
  };
  std::unique_ptr<Stamp[]> ready_;
  Produce produce_;
  bool help_ = true;
  std::string errors_[2];  // per producer, written before failed_node_ is lowered
  std::atomic<int> fail_node_[2] = {INT_MAX, INT_MAX};  // per producer, its failing node
  // One cache line per writer: the claim counter (claimers), the consumer's progress, the
  // rarely written failure and stop flags, and the sleep flags.
  alignas(64) std::atomic<int> next_claim_{0};
  alignas(64) std::atomic<int> consumed_{0};
  alignas(64) std::atomic<int> failed_node_{INT_MAX};
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<bool> producer_waiting_{false};
  std::atomic<bool> consumer_waiting_{false};
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

#endif  // DYNID_SOLVERS_INTERNAL_NODE_PIPELINE_H_
