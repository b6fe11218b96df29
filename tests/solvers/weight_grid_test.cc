// Tests of solvers/weight_grid.h: weight names, grid points, applying a point to the weights,
// the parallel evaluation (every task once, with its weights and seed; failures stop it) and the
// per-point summary against a hand computation.
#include "dynid/solvers/weight_grid.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "dynid/models/mass_spring_damper.h"

namespace dynid::solvers {
namespace {

models::ModelInfo MsdInfo() { return models::MassSpringDamper().Info(); }

TEST(WeightGridTest, WeightNamesCoverEveryDiagonalEntry) {
  const std::vector<WeightEntry> entries = ListWeightEntries(MsdInfo());
  // W: 2n = 2, V: n + l = 4, R0: 2n + p = 5.
  ASSERT_EQ(entries.size(), 11u);
  EXPECT_EQ(entries[0].name, "W.s.s");
  EXPECT_EQ(entries[2].name, "V.eom.force_balance");
  EXPECT_EQ(entries[4].name, "V.z.a_measured");
  EXPECT_EQ(entries[4].index, 2);
  EXPECT_EQ(entries[10].name, "R0.theta.stiffness");
  EXPECT_EQ(entries[10].index, 4);
  WeightEntry e;
  std::string error;
  ASSERT_TRUE(ParseWeightEntry("V[2]", MsdInfo(), &e, &error)) << error;
  EXPECT_EQ(e.name, "V.z.a_measured");
  EXPECT_FALSE(ParseWeightEntry("V[4]", MsdInfo(), &e, &error));
  EXPECT_FALSE(ParseWeightEntry("Q.z.a", MsdInfo(), &e, &error));
  EXPECT_NE(error.find("unknown weight 'Q.z.a'"), std::string::npos) << error;
  EXPECT_NE(error.find("V.z.f_measured"), std::string::npos) << error;
}

TEST(WeightGridTest, GridPointsVaryTheFirstAxisSlowest) {
  WeightEntry a, b;
  std::string error;
  ASSERT_TRUE(ParseWeightEntry("V.z.a_measured", MsdInfo(), &a, &error)) << error;
  ASSERT_TRUE(ParseWeightEntry("W[1]", MsdInfo(), &b, &error)) << error;
  const std::vector<WeightAxis> axes = {{a, 1e-2, 1e2, 5}, {b, 1.0, 100.0, 3}};
  EXPECT_EQ(NumGridPoints(axes), 15);
  const std::vector<double> v = axes[0].Values();
  ASSERT_EQ(v.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(std::log10(v[i]), -2.0 + i, 1e-12);
  EXPECT_EQ(GridPointValues(axes, 0), (std::vector<double>{1e-2, 1.0}));
  EXPECT_EQ(GridPointValues(axes, 4), (std::vector<double>{1e-1, 10.0}));
  EXPECT_EQ(GridPointValues(axes, 14), (std::vector<double>{1e2, 100.0}));
}

TEST(WeightGridTest, ApplyGridPointSetsOrScalesEntries) {
  WeightEntry a, b;
  std::string error;
  ASSERT_TRUE(ParseWeightEntry("V.z.a_measured", MsdInfo(), &a, &error)) << error;
  ASSERT_TRUE(ParseWeightEntry("R0.theta.mass", MsdInfo(), &b, &error)) << error;
  std::vector<WeightAxis> axes = {{a, 10.0, 10.0, 1}, {b, 5.0, 5.0, 1}};
  problems::WeightedResidualWeights w;
  w.kinematic = Eigen::Vector2d(1, 2).asDiagonal();
  w.residual = Eigen::Vector4d(1, 2, 3, 4).asDiagonal();
  problems::WeightedResidualWeights absolute = w;
  ASSERT_TRUE(ApplyGridPoint(axes, {10.0, 5.0}, false, 3, &absolute, &error)) << error;
  EXPECT_EQ(absolute.residual(2, 2), 10.0);
  ASSERT_EQ(absolute.initial.rows(), 5);
  EXPECT_EQ(absolute.initial(2, 2), 5.0);
  EXPECT_EQ(absolute.initial.sum(), 5.0);
  EXPECT_EQ(absolute.initial_guess.size(), 5);
  problems::WeightedResidualWeights relative = w;
  EXPECT_FALSE(ApplyGridPoint(axes, {10.0, 5.0}, true, 3, &relative, &error));
  EXPECT_NE(error.find("R0.theta.mass"), std::string::npos) << error;
  axes.pop_back();
  relative = w;
  ASSERT_TRUE(ApplyGridPoint(axes, {10.0}, true, 3, &relative, &error)) << error;
  EXPECT_EQ(relative.residual(2, 2), 30.0);
}

// A stand-in estimator on the mass-spring-damper's names: theta = truth × (1 + 0.01 × seed) ×
// the V.z.a_measured weight; seed 13 fails.
class FakeCase : public WeightGridCase {
 public:
  FakeCase() : info_(models::MassSpringDamper().Info()), truth_(Eigen::Vector3d(1, 2, 3)) {
    noise_ = Eigen::VectorXd::Ones(2);
    weights_.kinematic = Eigen::Matrix2d::Identity();
    weights_.residual = Eigen::Matrix4d::Identity();
  }
  std::string name() const override { return "fake"; }
  std::string description() const override { return "stand-in"; }
  const models::ModelInfo& info() const override { return info_; }
  const Eigen::VectorXd& true_parameters() const override { return truth_; }
  const Eigen::VectorXd& noise_standard_deviation() const override { return noise_; }
  const problems::WeightedResidualWeights& base_weights() const override { return weights_; }
  int num_nodes() const override { return 10; }
  bool Run(const problems::WeightedResidualWeights& weights, int seed, const WeightGridSettings&,
           GridPointResult* result, std::string* error) const override {
    if (seed == 13) {
      *error = "seed 13 failed";
      return false;
    }
    result->seed = seed;
    result->converged = true;
    result->theta = truth_ * (1.0 + 0.01 * seed) * weights.residual(2, 2);
    result->scaled_standard_deviation = Eigen::Vector3d::Zero();
    return true;
  }
  bool Observability(const problems::WeightedResidualWeights&, ObservabilityReport*,
                     std::string* error) const override {
    *error = "not analysed";
    return false;
  }

 private:
  models::ModelInfo info_;
  Eigen::VectorXd truth_, noise_;
  problems::WeightedResidualWeights weights_;
};

TEST(WeightGridTest, EvaluationRunsEveryTaskOnceWithItsWeightsAndSeed) {
  const FakeCase fake;
  WeightEntry entry;
  std::string error;
  ASSERT_TRUE(ParseWeightEntry("V.z.a_measured", fake.info(), &entry, &error)) << error;
  const std::vector<WeightAxis> axes = {{entry, 1.0, 100.0, 3}};
  WeightGridOptions options;
  options.num_seeds = 4;
  options.first_seed = 1;  // seeds 1..4: none fails
  options.num_threads = 3;
  std::vector<int> tasks;
  for (int task = 0; task < 12; task += 1) tasks.push_back(task);
  tasks.erase(tasks.begin() + 5);  // task 5 is not asked for
  std::vector<GridPointResult> results(12);
  std::multiset<int> seen;
  ASSERT_TRUE(EvaluateWeightGrid(
      fake, axes, options, tasks,
      [&](const GridPointResult& r, std::string*) {
        seen.insert(r.point * options.num_seeds + r.seed_index);
        return true;
      },
      &results, &error))
      << error;
  EXPECT_EQ(seen, std::multiset<int>(tasks.begin(), tasks.end()));
  EXPECT_EQ(results[5].theta.size(), 0);   // untouched
  const GridPointResult& r = results[11];  // point 2 (weight 100), seed index 3 (seed 4)
  EXPECT_EQ(r.point, 2);
  EXPECT_EQ(r.seed_index, 3);
  EXPECT_EQ(r.seed, 4);
  EXPECT_NEAR(r.theta(1), 2.0 * 1.04 * 100.0, 1e-12);

  // A failing estimate, and a failing callback, stop the evaluation with their message.
  options.first_seed = 10;  // seed index 3 is seed 13
  EXPECT_FALSE(EvaluateWeightGrid(
      fake, axes, options, tasks, [](const GridPointResult&, std::string*) { return true; },
      &results, &error));
  EXPECT_EQ(error, "seed 13 failed");
  options.first_seed = 1;
  EXPECT_FALSE(EvaluateWeightGrid(
      fake, axes, options, tasks,
      [](const GridPointResult&, std::string* why) {
        *why = "journal full";
        return false;
      },
      &results, &error));
  EXPECT_EQ(error, "journal full");
}

TEST(WeightGridTest, SummaryMatchesHandComputation) {
  const Eigen::Vector2d truth(2.0, -4.0);
  std::vector<GridPointResult> results(3);
  const double estimates[3][2] = {{2.2, -4.0}, {1.8, -3.0}, {2.0, -5.0}};
  for (int i = 0; i < 3; ++i) {
    results[i].point = i < 2 ? 0 : 1;
    results[i].seed_index = i < 2 ? i : 0;
    results[i].converged = i != 1;
    results[i].theta = Eigen::Vector2d(estimates[i][0], estimates[i][1]);
    results[i].scaled_standard_deviation = Eigen::Vector2d(0.2, 0.4);
    results[i].sandwich_standard_deviation = Eigen::Vector2d(0.6, 0.4 * (i + 1));
    if (i != 1) results[i].hac_standard_deviation = Eigen::Vector2d(1.0, 2.0);
  }
  const std::vector<GridPointSummary> s = SummarizeWeightGrid(results, 2, truth);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].num_seeds, 2);
  EXPECT_EQ(s[0].num_converged, 1);
  // Relative errors (theta − truth)/|truth| at point 0: (0.1, 0) and (−0.1, +0.25); point 1:
  // (0, −0.25).
  EXPECT_NEAR(s[0].bias(0), 0.0, 1e-15);
  EXPECT_NEAR(s[0].bias(1), 0.125, 1e-15);
  EXPECT_NEAR(s[0].spread(0), std::sqrt(0.02), 1e-15);
  EXPECT_NEAR(s[0].spread(1), std::sqrt(2 * 0.125 * 0.125), 1e-15);
  EXPECT_NEAR(s[0].rms_error(1), std::sqrt(0.25 * 0.25 / 2), 1e-15);
  EXPECT_NEAR(s[0].predicted_rsd(0), 0.1, 1e-15);
  EXPECT_NEAR(s[0].sandwich_rsd(0), 0.3, 1e-15);
  EXPECT_NEAR(s[0].sandwich_rsd(1), 0.15, 1e-15);  // (0.4 + 0.8) / 2 / 4
  EXPECT_TRUE(std::isnan(s[0].hac_rsd(0)));        // seed 1 has no HAC σ
  EXPECT_NEAR(s[1].hac_rsd(0), 0.5, 1e-15);
  EXPECT_NEAR(s[1].hac_rsd(1), 0.5, 1e-15);
  EXPECT_NEAR(s[1].bias(1), -0.25, 1e-15);
  EXPECT_EQ(s[1].spread(1), 0.0);
}

}  // namespace
}  // namespace dynid::solvers
