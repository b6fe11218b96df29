#include "dynid/problems/weighted_residual_weights.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dynid/models/mass_spring_damper.h"

namespace dynid::problems {
namespace {

models::ModelInfo MassSpringDamperInfo() { return models::MassSpringDamper().Info(); }

TEST(WeightedResidualWeightsTest, NamesRoundTrip) {
  const models::ModelInfo info = MassSpringDamperInfo();
  const std::vector<WeightEntry> entries = ListWeightEntries(info);
  // n = 1, l = 3, p = 3: W 2, V 4, R0 5.
  ASSERT_EQ(entries.size(), 11u);
  EXPECT_EQ(entries[0].name, "W.s.s");
  EXPECT_EQ(entries[2].name, "V.eom.force_balance");
  EXPECT_EQ(entries[4].name, "V.z.a_measured");
  EXPECT_EQ(entries[10].name, "R0.theta.stiffness");
  for (const WeightEntry& e : entries) {
    WeightEntry parsed;
    std::string error;
    ASSERT_TRUE(ParseWeightEntry(e.name, info, &parsed, &error)) << error;
    EXPECT_EQ(parsed.name, e.name);
    EXPECT_EQ(parsed.matrix, e.matrix);
    EXPECT_EQ(parsed.index, e.index);
  }
  WeightEntry by_index;
  std::string error;
  ASSERT_TRUE(ParseWeightEntry("V[2]", info, &by_index, &error)) << error;
  EXPECT_EQ(by_index.name, "V.z.a_measured");
}

TEST(WeightedResidualWeightsTest, GetAndSetByEntryAndName) {
  const models::ModelInfo info = MassSpringDamperInfo();
  WeightedResidualWeights w;
  std::string error;
  ASSERT_TRUE(w.Set(info, "V.z.a_measured", 3.5, &error)) << error;
  ASSERT_EQ(w.residual.rows(), 4);
  EXPECT_EQ(w.residual(2, 2), 3.5);
  EXPECT_EQ(w.residual(0, 0), 0.0);
  ASSERT_TRUE(w.Set(info, "W.v.s", 1e2, &error)) << error;
  EXPECT_EQ(w.kinematic(1, 1), 1e2);
  // R0 is created as zero of size 2n + p with q0 = 0.
  WeightEntry mass;
  ASSERT_TRUE(ParseWeightEntry("R0.theta.mass", info, &mass, &error)) << error;
  EXPECT_EQ(w.Get(mass), 0.0);
  ASSERT_TRUE(w.Set(info, "R0.theta.mass", 1e-2, &error)) << error;
  ASSERT_EQ(w.initial.rows(), 5);
  ASSERT_EQ(w.initial_guess.size(), 5);
  EXPECT_EQ(w.Get(mass), 1e-2);
  EXPECT_EQ(w.initial(2, 2), 1e-2);
  for (const WeightEntry& e : ListWeightEntries(info)) {
    w.Set(e, 1.0 + e.index);
    EXPECT_EQ(w.Get(e), 1.0 + e.index) << e.name;
  }
}

TEST(WeightedResidualWeightsTest, SetByUnknownNameFailsListingValidNames) {
  const models::ModelInfo info = MassSpringDamperInfo();
  WeightedResidualWeights w;
  std::string error;
  EXPECT_FALSE(w.Set(info, "V.z.no_such_sensor", 1.0, &error));
  EXPECT_NE(error.find("V.z.no_such_sensor"), std::string::npos) << error;
  for (const WeightEntry& e : ListWeightEntries(info)) {
    EXPECT_NE(error.find(e.name), std::string::npos) << error;
  }
  EXPECT_EQ(w.residual.size(), 0);  // untouched
}

TEST(WeightedResidualWeightsTest, SetRejectsMatrixOfTheWrongSize) {
  const models::ModelInfo info = MassSpringDamperInfo();
  WeightedResidualWeights w;
  w.residual = Eigen::MatrixXd::Identity(2, 2);
  std::string error;
  EXPECT_FALSE(w.Set(info, "V.z.f_measured", 1.0, &error));
  EXPECT_NE(error.find("V.z.f_measured"), std::string::npos) << error;
}

TEST(WeightedResidualWeightsTest, FromStandardDeviationsIsTheIntensity) {
  NoiseStandardDeviations sigma;
  sigma.kinematic_weights = Eigen::Vector2d(1e6, 1e2);
  sigma.equations = Eigen::VectorXd::Constant(1, 1e-2);
  sigma.measurements = Eigen::Vector3d(1e-4, 0.05, 0.01);
  const double h = 0.003;
  const WeightedResidualWeights w = WeightedResidualWeights::FromStandardDeviations(sigma, h);
  ASSERT_EQ(w.kinematic.rows(), 2);
  ASSERT_EQ(w.residual.rows(), 4);
  EXPECT_EQ(w.kinematic(0, 0), 1e6);
  EXPECT_EQ(w.kinematic(1, 1), 1e2);
  EXPECT_EQ(w.kinematic(0, 1), 0.0);
  EXPECT_EQ(w.residual(0, 0), 1.0 / (1e-2 * 1e-2) / h);
  EXPECT_EQ(w.residual(1, 1), 1.0 / (1e-4 * 1e-4) / h);
  EXPECT_EQ(w.residual(2, 2), 1.0 / (0.05 * 0.05) / h);
  EXPECT_EQ(w.residual(3, 3), 1.0 / (0.01 * 0.01) / h);
  EXPECT_EQ(w.residual(1, 2), 0.0);
  EXPECT_EQ(w.parameter.size(), 0);
  EXPECT_EQ(w.initial.size(), 0);
  // Bit-identical to the vector form σ.cwiseAbs2().cwiseInverse() / h.
  const Eigen::VectorXd expected = sigma.measurements.cwiseAbs2().cwiseInverse() / h;
  for (int j = 0; j < 3; ++j) EXPECT_EQ(w.residual(1 + j, 1 + j), expected(j));

  // h = 1: per-sample weights 1/σ²; kinematic couplings from standard deviations.
  NoiseStandardDeviations per_sample;
  per_sample.kinematic = Eigen::Vector2d(1e-3, 1e-1);
  per_sample.equation_weights = Eigen::VectorXd::Constant(1, 7.0);
  per_sample.measurement_weights = Eigen::Vector3d(1.0, 2.0, 3.0);
  const WeightedResidualWeights u =
      WeightedResidualWeights::FromStandardDeviations(per_sample, 1.0);
  EXPECT_EQ(u.kinematic(0, 0), 1.0 / (1e-3 * 1e-3));
  EXPECT_EQ(u.kinematic(1, 1), 1.0 / (1e-1 * 1e-1));
  EXPECT_EQ(u.residual(0, 0), 7.0);
  EXPECT_EQ(u.residual(3, 3), 3.0);
}

TEST(WeightedResidualWeightsDeathTest, FromStandardDeviationsNeedsExactlyOneOfEachPair) {
  NoiseStandardDeviations sigma;
  sigma.kinematic = Eigen::Vector2d(1.0, 1.0);
  sigma.kinematic_weights = Eigen::Vector2d(1.0, 1.0);
  sigma.equations = Eigen::VectorXd::Constant(1, 1.0);
  sigma.measurements = Eigen::VectorXd::Constant(1, 1.0);
  EXPECT_DEATH(WeightedResidualWeights::FromStandardDeviations(sigma, 1.0), "exactly one");
}

}  // namespace
}  // namespace dynid::problems
