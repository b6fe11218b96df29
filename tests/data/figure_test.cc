#include "dynid/data/figure.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dynid::data {
namespace {

TEST(FigureTest, ShortSeriesAreDrawnWhole) {
  const std::vector<double> y = {3.0, 1.0, 2.0};
  const std::vector<double> error = {0.5, 0.25, 0.0};
  std::vector<std::vector<double>> lo;
  std::vector<std::vector<double>> hi;
  const std::vector<Eigen::Index> kept = MinMaxEnvelope(
      {y.data(), 1}, 3, 10, {{{y.data(), 1}, {y.data(), 1}, {error.data(), 1}, 2.0}}, &lo, &hi);
  EXPECT_THAT(kept, ::testing::ElementsAre(0, 1, 2));
  EXPECT_THAT(lo[0], ::testing::ElementsAre(2.0, 0.5, 2.0));
  EXPECT_THAT(hi[0], ::testing::ElementsAre(4.0, 1.5, 2.0));
}

TEST(FigureTest, EnvelopeKeepsEachBucketsExtremesSoSpikesStayVisible) {
  // 1e6 samples of a slow sine, one spike up and one down, and a stretch of NaN.
  const Eigen::Index n = 1000000;
  std::vector<double> y(n);
  for (Eigen::Index k = 0; k < n; ++k) y[k] = std::sin(1e-5 * static_cast<double>(k));
  y[123457] = 50.0;
  y[765433] = -50.0;
  for (Eigen::Index k = 500000; k < 500400; ++k) y[k] = std::nan("");
  const std::vector<double> lower(n, -1.0);
  std::vector<double> upper(n, 1.0);
  upper[654321] = 7.0;
  std::vector<std::vector<double>> lo;
  std::vector<std::vector<double>> hi;
  const std::vector<Eigen::Index> kept = MinMaxEnvelope(
      {y.data(), 1}, n, 10000, {{{lower.data(), 1}, {upper.data(), 1}, {}, 0.0}}, &lo, &hi);
  ASSERT_LE(kept.size(), 10000u);
  EXPECT_GE(kept.size(), 9000u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_NE(std::find(kept.begin(), kept.end(), 123457), kept.end());
  EXPECT_NE(std::find(kept.begin(), kept.end(), 765433), kept.end());
  // The bucket of NaNs (samples 500000..500199) keeps one index, a gap in the line.
  EXPECT_NE(std::find(kept.begin(), kept.end(), 500000), kept.end());
  ASSERT_EQ(lo[0].size(), kept.size());
  EXPECT_EQ(*std::max_element(hi[0].begin(), hi[0].end()), 7.0);
  EXPECT_EQ(*std::min_element(lo[0].begin(), lo[0].end()), -1.0);
}

TEST(FigureTest, EnvelopeOfStridedColumns) {
  // Column 1 of a row-major n × 2 block.
  const Eigen::Index n = 30001;
  std::vector<double> block(2 * n);
  for (Eigen::Index k = 0; k < n; ++k) {
    block[2 * k] = static_cast<double>(k);
    block[2 * k + 1] = k == 17 ? 9.0 : 0.0;
  }
  std::vector<std::vector<double>> lo;
  std::vector<std::vector<double>> hi;
  const std::vector<Eigen::Index> kept = MinMaxEnvelope({block.data() + 1, 2}, n, 100, {}, &lo, &hi);
  EXPECT_LE(kept.size(), 100u);
  EXPECT_NE(std::find(kept.begin(), kept.end(), 17), kept.end());
  EXPECT_TRUE(lo.empty());
}

}  // namespace
}  // namespace dynid::data
