#include "dynid/data/sample_selection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace dynid::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 10 samples × 2 joints: both joints rest at samples 0–1 and 9; joint 1 (index 0) also
// pauses at samples 4–5; joint 2 only moves from sample 3 on.
Eigen::MatrixXd Velocities() {
  Eigen::MatrixXd v(10, 2);
  v << 0.0, 0.0,      //
      0.001, -0.002,  //
      0.5, 0.0,       //
      0.6, 0.3,       //
      0.005, 0.4,     //
      -0.001, 0.5,    //
      -0.7, 0.6,      //
      -0.8, -0.2,     //
      -0.3, -0.1,     //
      0.0, 0.0;
  return v;
}

TEST(SampleSelectionTest, TrimsRestAndExcludesSlowRowsPerJoint) {
  SampleSelectionOptions options;
  options.velocity_threshold = Eigen::VectorXd::Constant(1, 0.01);
  SampleSelection selection;
  std::string error;
  ASSERT_TRUE(SelectSamples(Velocities(), StackOrder::kJointMajor, options, &selection, &error))
      << error;
  EXPECT_EQ(selection.first_sample, 2);
  EXPECT_EQ(selection.last_sample, 8);
  EXPECT_THAT(selection.kept_samples[0], ElementsAre(2, 3, 6, 7, 8));
  EXPECT_THAT(selection.kept_samples[1], ElementsAre(3, 4, 5, 6, 7, 8));
  // Joint-major rows: joint 0 → k, joint 1 → 10 + k.
  EXPECT_THAT(selection.kept_rows, ElementsAre(2, 3, 6, 7, 8, 13, 14, 15, 16, 17, 18));
  EXPECT_THAT(selection.kept_row_joint, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1));
  EXPECT_THAT(selection.report, HasSubstr("kept samples 2–8"));
  EXPECT_THAT(selection.report, HasSubstr("joint 1: 5 of 10 rows kept; 2 excluded"));
  EXPECT_THAT(selection.report, HasSubstr("4–5"));
  EXPECT_THAT(selection.report, HasSubstr("total: 11 of 20 rows used"));
}

TEST(SampleSelectionTest, SampleMajorOrderAndPerJointThresholds) {
  SampleSelectionOptions options;
  options.velocity_threshold = Eigen::Vector2d(0.01, 0.25);
  SampleSelection selection;
  std::string error;
  ASSERT_TRUE(SelectSamples(Velocities(), StackOrder::kSampleMajor, options, &selection, &error));
  EXPECT_THAT(selection.kept_samples[1], ElementsAre(3, 4, 5, 6));
  // Sample-major rows: 2k + j, sorted.
  EXPECT_THAT(selection.kept_rows, ElementsAre(4, 6, 7, 9, 11, 12, 13, 14, 16));
  EXPECT_THAT(selection.kept_row_joint, ElementsAre(0, 0, 1, 1, 1, 0, 1, 0, 0));
  const Eigen::VectorXd rows = Eigen::VectorXd::LinSpaced(20, 0, 19);
  const Eigen::VectorXd kept = KeepRows(rows, selection.kept_rows);
  EXPECT_EQ(kept(2), 7.0);
}

TEST(SampleSelectionTest, OptionsOffKeepsEverything) {
  SampleSelectionOptions options;
  options.exclude_slow_rows = false;
  options.trim_rest = false;
  SampleSelection selection;
  std::string error;
  ASSERT_TRUE(SelectSamples(Velocities(), StackOrder::kJointMajor, options, &selection, &error));
  EXPECT_EQ(selection.kept_rows.size(), 20u);
}

TEST(SampleSelectionTest, BadInputIsReported) {
  SampleSelectionOptions options;
  SampleSelection selection;
  std::string error;
  options.velocity_threshold = Eigen::Vector3d(0.1, 0.1, 0.1);
  EXPECT_FALSE(SelectSamples(Velocities(), StackOrder::kJointMajor, options, &selection, &error));
  EXPECT_THAT(error, HasSubstr("has 3 values; expected 1 or one per joint (2)"));
  options.velocity_threshold = Eigen::VectorXd::Constant(1, -1.0);
  EXPECT_FALSE(SelectSamples(Velocities(), StackOrder::kJointMajor, options, &selection, &error));
  EXPECT_THAT(error, HasSubstr("must be finite and >= 0"));
  options.velocity_threshold = Eigen::VectorXd::Constant(1, 10.0);
  EXPECT_FALSE(SelectSamples(Velocities(), StackOrder::kJointMajor, options, &selection, &error));
  EXPECT_THAT(error, HasSubstr("no joint ever moves"));
  Eigen::MatrixXd bad = Velocities();
  bad(3, 1) = NAN;
  options.velocity_threshold = Eigen::VectorXd::Constant(1, 0.01);
  EXPECT_FALSE(SelectSamples(bad, StackOrder::kJointMajor, options, &selection, &error));
  EXPECT_THAT(error, HasSubstr("NaN"));
}

TEST(SampleSelectionTest, FormatRangesAbbreviates) {
  EXPECT_EQ(FormatRanges({1, 2, 3, 7, 9, 10}, 10), "1–3, 7, 9–10");
  EXPECT_EQ(FormatRanges({1, 3, 5, 7}, 2), "1, 3, … (2 more runs)");
  EXPECT_EQ(FormatRanges({}, 3), "");
}

}  // namespace
}  // namespace dynid::data
