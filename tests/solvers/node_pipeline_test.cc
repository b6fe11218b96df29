#include "dynid/solvers/internal/node_pipeline.h"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dynid::solvers {
namespace {

// Every node arrives once, in order, with what the worker wrote for it, through a ring much
// smaller than the number of nodes (slots are reused).
TEST(NodePipelineTest, DeliversEveryNodeInOrder) {
  constexpr int kNodes = 5000;
  NodePipeline<long> pipeline(kNodes, 3);
  pipeline.Start([](int k, long* slot, std::string*, int) {
    *slot = static_cast<long>(k) * k;
    return true;
  });
  for (int k = 0; k < kNodes; ++k) {
    const long* slot = pipeline.Wait(k);
    ASSERT_NE(slot, nullptr) << k;
    ASSERT_EQ(*slot, static_cast<long>(k) * k);
    pipeline.Release(k);
  }
}

// A failure at node 700 delivers nodes 0..699, then nullptr with the worker's message.
TEST(NodePipelineTest, StopsAtTheFailingNode) {
  NodePipeline<int> pipeline(2000, 16);
  pipeline.Start([](int k, int* slot, std::string* error, int) {
    if (k == 700) {
      *error = "node 700: bad";
      return false;
    }
    *slot = k;
    return true;
  });
  for (int k = 0; k < 700; ++k) {
    const int* slot = pipeline.Wait(k);
    ASSERT_NE(slot, nullptr) << k;
    EXPECT_EQ(*slot, k);
    pipeline.Release(k);
  }
  EXPECT_EQ(pipeline.Wait(700), nullptr);
  EXPECT_EQ(pipeline.error(), "node 700: bad");
}

// The consumer may give up early: the worker, blocked on the full ring, is stopped and joined.
TEST(NodePipelineTest, ConsumerMayStopEarly) {
  std::atomic<int> produced{0};
  {
    NodePipeline<int> pipeline(100000, 4);
    pipeline.Start([&produced](int k, int* slot, std::string*, int) {
      *slot = k;
      ++produced;
      return true;
    });
    for (int k = 0; k < 10; ++k) {
      ASSERT_NE(pipeline.Wait(k), nullptr);
      pipeline.Release(k);
    }
  }
  EXPECT_LE(produced.load(), 10 + 4);
}

// Both threads produce (the consumer helps while its next node is not ready), each node exactly
// once; without help the worker produces every node.
TEST(NodePipelineTest, ConsumerHelpsProduce) {
  for (const bool help : {true, false}) {
    constexpr int kNodes = 20000;
    std::vector<std::atomic<int>> made(kNodes);
    std::atomic<int> by_consumer{0};
    NodePipeline<int> pipeline(kNodes, 8);
    pipeline.Start(
        [&](int k, int* slot, std::string*, int producer) {
          volatile double sink = 0.0;  // a node that costs more to make than to use
          for (int i = 0; i < 200; ++i) sink = sink + i;
          ++made[k];
          if (producer == 1) ++by_consumer;
          *slot = k;
          return true;
        },
        help);
    for (int k = 0; k < kNodes; ++k) {
      const int* slot = pipeline.Wait(k);
      ASSERT_NE(slot, nullptr) << k;
      ASSERT_EQ(*slot, k);
      pipeline.Release(k);
    }
    for (int k = 0; k < kNodes; ++k) ASSERT_EQ(made[k].load(), 1) << k;
    if (help) {
      EXPECT_GT(by_consumer.load(), 0);
    } else {
      EXPECT_EQ(by_consumer.load(), 0);
    }
  }
}

// When both producers fail, the message is that of the lowest failing node.
TEST(NodePipelineTest, ReportsTheLowestFailingNode) {
  NodePipeline<int> pipeline(3000, 64);
  pipeline.Start([](int k, int* slot, std::string* error, int) {
    if (k >= 1500) {
      *error = "node " + std::to_string(k) + ": bad";
      return false;
    }
    *slot = k;
    return true;
  });
  for (int k = 0; k < 1500; ++k) {
    ASSERT_NE(pipeline.Wait(k), nullptr) << k;
    pipeline.Release(k);
  }
  EXPECT_EQ(pipeline.Wait(1500), nullptr);
  EXPECT_EQ(pipeline.error(), "node 1500: bad");
}

TEST(NodePipelineTest, ParallelForVisitsEveryIndexOnce) {
  for (int threads : {1, 2, 3, 7}) {
    std::vector<std::atomic<int>> visits(1001);
    ParallelFor(1001, threads, [&visits](int k) { ++visits[k]; });
    for (int k = 0; k < 1001; ++k) EXPECT_EQ(visits[k].load(), 1) << threads << " " << k;
  }
}

}  // namespace
}  // namespace dynid::solvers
