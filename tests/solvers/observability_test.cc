// Tests of solvers/observability.h: the rank tests of eqs. 2.26 and 2.28 on the mass–spring
// example of van de Molengraft (1990) §2.9 (one tone: only the eigenfrequency k/m is determined
// pointwise; two tones: full rank), and the global identifiability test on a model with a
// deliberately unidentifiable parameter combination, cross-checked by a dense SVD of the whole
// Jacobian.
#include "dynid/solvers/observability.h"

#include <ceres/crs_matrix.h>
#include <ceres/problem.h>
#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <cmath>

#include "dynid/models/mass_spring_damper.h"

// GCC 12 reports a false -Warray-bounds inside models::Simulate for 1 × 1 Eigen vectors.
#pragma GCC diagnostic ignored "-Warray-bounds"

namespace {

// The mass–spring of van de Molengraft (1990) §2.9: r = m a + k s − u, z = [s, u]; theta = [m, k].
class MassSpring : public dynid::models::MechanicalModelBase<1, 1, 2, 2> {
 public:
  template <class T>
  void EquationsOfMotion(const T* s, const T* /*v*/, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    r[0] = theta[0] * a[0] + theta[1] * s[0] - u[0];
  }
  template <class T>
  void Measurements(const T* s, const T* /*v*/, const T* /*a*/, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    z[0] = s[0];
    z[1] = u[0];
  }
  dynid::models::ModelInfo Info() const {
    dynid::models::ModelInfo info;
    info.name = "mass_spring";
    info.positions = {{"s", "m"}};
    info.inputs = {{"f", "N"}};
    info.parameters = {{"mass", "kg"}, {"stiffness", "N/m"}};
    info.measurements = {{"s_measured", "m"}, {"f_measured", "N"}};
    info.equations = {{"force_balance", "N"}};
    return info;
  }
  ParameterVector NominalParameters() const { return ParameterVector(2.0, 50.0); }
};

// A mass split in two parameters that only their sum enters: r = (m1 + m2) a + c v + k s − u,
// z = [s, a, u]; theta = [m1, m2, c, k]. The direction (1, −1, 0, 0) is never determined.
class SplitMass : public dynid::models::MechanicalModelBase<1, 1, 4, 3> {
 public:
  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    r[0] = (theta[0] + theta[1]) * a[0] + theta[2] * v[0] + theta[3] * s[0] - u[0];
  }
  template <class T>
  void Measurements(const T* s, const T* /*v*/, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    z[0] = s[0];
    z[1] = a[0];
    z[2] = u[0];
  }
  dynid::models::ModelInfo Info() const {
    dynid::models::ModelInfo info;
    info.name = "split_mass";
    info.positions = {{"s", "m"}};
    info.inputs = {{"f", "N"}};
    info.parameters = {
        {"mass_a", "kg"}, {"mass_b", "kg"}, {"damping", "N s/m"}, {"stiffness", "N/m"}};
    info.measurements = {{"s_measured", "m"}, {"a_measured", "m/s^2"}, {"f_measured", "N"}};
    info.equations = {{"force_balance", "N"}};
    return info;
  }
  ParameterVector NominalParameters() const {
    return (ParameterVector() << 0.5, 0.5, 0.4, 40.0).finished();
  }
};

}  // namespace

template void dynid::models::LinearizeModelInto<MassSpring>(
    const MassSpring&, const double*, const double*, const double*, const double*,
    const double*, double, const dynid::models::LinearizationTarget&);
template void dynid::models::LinearizeModelInto<SplitMass>(
    const SplitMass&, const double*, const double*, const double*, const double*,
    const double*, double, const dynid::models::LinearizationTarget&);

namespace dynid::solvers {
namespace {

// The analytic motion s = sum_i A_i sin(w_i t) of the mass–spring and the force that makes it.
models::Trajectory MassSpringMotion(const std::vector<double>& amplitudes,
                                    const std::vector<double>& frequencies, int num_nodes) {
  const MassSpring model;
  const double m = model.NominalParameters()(0), k = model.NominalParameters()(1);
  models::Trajectory t;
  t.time = Eigen::VectorXd::LinSpaced(num_nodes, 0.05, 3.0);
  t.positions.setZero(num_nodes, 1);
  t.velocities.setZero(num_nodes, 1);
  t.accelerations.setZero(num_nodes, 1);
  t.inputs.setZero(num_nodes, 1);
  t.measurements.setZero(num_nodes, 2);
  for (int j = 0; j < num_nodes; ++j) {
    for (size_t i = 0; i < amplitudes.size(); ++i) {
      const double w = frequencies[i], x = t.time(j);
      t.positions(j, 0) += amplitudes[i] * std::sin(w * x);
      t.velocities(j, 0) += amplitudes[i] * w * std::cos(w * x);
      t.accelerations(j, 0) -= amplitudes[i] * w * w * std::sin(w * x);
    }
    t.inputs(j, 0) = m * t.accelerations(j, 0) + k * t.positions(j, 0);
    t.measurements(j, 0) = t.positions(j, 0);
    t.measurements(j, 1) = t.inputs(j, 0);
  }
  return t;
}

TEST(ObservabilityTest, OneToneDeterminesOnlyTheEigenfrequency) {
  // van de Molengraft (1990) §2.9: rank Q(2.26) = 3 < n + p + m = 4; rank Q(2.28) = 5 < 2n + p + 2m
  // = 6 for a single sinusoidal response; the undetermined direction lies in (mass, stiffness) and
  // keeps k/m (delta k = w² delta m before column scaling).
  const models::Trajectory motion = MassSpringMotion({0.1}, {3.0}, 200);
  ObservabilityReport report;
  std::string error;
  ASSERT_TRUE(AnalyzeObservability(MassSpring(), motion, MassSpring().NominalParameters(),
                                   ObservabilityOptions(), &report, &error))
      << error;
  EXPECT_EQ(report.required_rank_226, 4);
  EXPECT_EQ(report.required_rank_228, 6);
  EXPECT_EQ(report.rank_226.maxCoeff(), 3);
  EXPECT_EQ(report.rank_228.maxCoeff(), 5);
  EXPECT_EQ(report.fraction_full_228, 0.0);
  ASSERT_EQ(report.null_directions_228.size(), 1u);
  EXPECT_NE(report.null_directions_228[0].find("theta.mass"), std::string::npos)
      << report.null_directions_228[0];
  EXPECT_NE(report.null_directions_228[0].find("theta.stiffness"), std::string::npos)
      << report.null_directions_228[0];
  EXPECT_EQ(report.null_directions_228[0].find("u.f"), std::string::npos)
      << report.null_directions_228[0];
}

TEST(ObservabilityTest, TwoTonesGiveFullRankOfEq228) {
  const models::Trajectory motion = MassSpringMotion({0.1, 0.05}, {3.0, 7.0}, 200);
  ObservabilityReport report;
  std::string error;
  ASSERT_TRUE(AnalyzeObservability(MassSpring(), motion, MassSpring().NominalParameters(),
                                   ObservabilityOptions(), &report, &error))
      << error;
  EXPECT_EQ(report.rank_226.maxCoeff(), 3);  // eq. 2.26 cannot see both parameters
  EXPECT_GT(report.fraction_full_228, 0.95);
  EXPECT_TRUE(report.null_directions_228.empty());
}

TEST(ObservabilityTest, RankTestsRejectInconsistentSizes) {
  ObservabilityReport report;
  std::string error;
  std::vector<Eigen::MatrixXd> C(3, Eigen::MatrixXd::Zero(3, 4)), D(3, Eigen::MatrixXd::Zero(3, 2));
  C[1].resize(2, 4);
  EXPECT_FALSE(ObservabilityRankTests(MassSpring().Info(), Eigen::Vector3d(0, 1, 2), C, D,
                                      ObservabilityOptions(), &report, &error));
  EXPECT_NE(error.find("node 1"), std::string::npos) << error;
}

models::Trajectory SplitMassMotion(int num_nodes) {
  const SplitMass model;
  auto force = [](double t, double* u) {
    u[0] = 2.0 * std::sin(2.0 * M_PI * 0.7 * t) + std::sin(2.0 * M_PI * 2.3 * t + 1.0);
  };
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_nodes, 0.0, 4.0);
  const Eigen::Matrix<double, 1, 1> rest(0.1);
  return models::Simulate(model, model.NominalParameters(), rest, rest, force, times, 4);
}

problems::WeightedResidualWeights SplitMassWeights(double h) {
  problems::WeightedResidualWeights w;
  w.kinematic = Eigen::Vector2d(1e6, 1e2).asDiagonal();
  w.residual = Eigen::Vector4d(1e4 / h, 1e8 / h, 4e2 / h, 1e4 / h).asDiagonal();
  return w;
}

TEST(ObservabilityTest, UnidentifiableCombinationIsNamed) {
  const SplitMass model;
  const models::Trajectory motion = SplitMassMotion(201);
  IdentifiabilityReport report;
  std::string error;
  ASSERT_TRUE(ParameterIdentifiabilityAlongTrajectory(
      model, motion, model.NominalParameters(), SplitMassWeights(0.02),
      problems::Transcription::kShooting, 1e-10, &report, &error))
      << error;
  EXPECT_FALSE(report.identifiable) << report.message;
  ASSERT_EQ(report.undetermined.size(), 1u) << report.message;
  const std::string& sentence = report.undetermined[0];
  EXPECT_NE(sentence.find("mass_a"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find("mass_b"), std::string::npos) << sentence;
  EXPECT_EQ(sentence.find("damping"), std::string::npos) << sentence;
  EXPECT_EQ(sentence.find("stiffness"), std::string::npos) << sentence;
  // Eigenvector of the smallest relative information: ±(1, −1, 0, 0)/√2.
  const Eigen::VectorXd direction = report.eigenvectors.col(0);
  EXPECT_NEAR(std::abs(direction(0)), std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(direction(0) + direction(1), 0.0, 1e-6);
  EXPECT_NEAR(direction.tail(2).norm(), 0.0, 1e-6);

  // The pointwise rank tests see it too: theta.mass_a and theta.mass_b in one null direction.
  ObservabilityReport ranks;
  ASSERT_TRUE(AnalyzeObservability(model, motion, model.NominalParameters(), ObservabilityOptions(),
                                   &ranks, &error))
      << error;
  EXPECT_LT(ranks.rank_228.maxCoeff(), ranks.required_rank_228);
  bool named = false;
  for (const std::string& d : ranks.null_directions_228) {
    named = named || (d.find("theta.mass_a") != std::string::npos &&
                      d.find("theta.mass_b") != std::string::npos);
  }
  EXPECT_TRUE(named);
}

TEST(ObservabilityTest, SchurNullDirectionMatchesDenseSvdOfTheJacobian) {
  // Independent check of the global test: the right singular vector of the smallest singular
  // value of the whole (trajectory + theta) Jacobian has its theta part along (1, −1, 0, 0) and
  // nothing on the trajectory, and that singular value is zero to rounding.
  const SplitMass model;
  const int num_nodes = 41;
  const models::Trajectory motion = SplitMassMotion(num_nodes);
  problems::WeightedResidualData data{motion.time, motion.measurements};
  problems::WeightedResidualVariables variables;
  problems::ResizeVariables(1, 1, model.NominalParameters(), num_nodes,
                            problems::ParameterMode::kConstant, &variables);
  variables.states.row(0) = motion.positions.transpose();
  variables.states.row(1) = motion.velocities.transpose();
  variables.inputs.row(0) = motion.accelerations.transpose();
  variables.inputs.row(1) = motion.inputs.transpose();
  ceres::Problem problem;
  std::string error;
  ASSERT_TRUE(problems::BuildWeightedResidualProblem(model, data, SplitMassWeights(0.1),
                                                     problems::WeightedResidualOptions(),
                                                     &variables, &problem, &error))
      << error;
  ceres::Problem::EvaluateOptions options;
  options.parameter_blocks = variables.TrajectoryBlocks();
  options.parameter_blocks.push_back(variables.ConstantParameterBlock());
  ceres::CRSMatrix crs;
  ASSERT_TRUE(problem.Evaluate(options, nullptr, nullptr, nullptr, &crs));
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(crs.num_rows, crs.num_cols);
  for (int i = 0; i < crs.num_rows; ++i) {
    for (int k = crs.rows[i]; k < crs.rows[i + 1]; ++k) J(i, crs.cols[k]) = crs.values[k];
  }
  ASSERT_EQ(J.cols(), 4 * num_nodes + 4);
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeFullV);
  const Eigen::VectorXd& sigma = svd.singularValues();
  EXPECT_LT(sigma(sigma.size() - 1), 1e-9 * sigma(0));
  EXPECT_GT(sigma(sigma.size() - 2), 1e-9 * sigma(0));  // only one null direction
  const Eigen::VectorXd null = svd.matrixV().col(J.cols() - 1);
  EXPECT_LT(null.head(4 * num_nodes).norm(), 1e-6);
  EXPECT_NEAR(std::abs(null(4 * num_nodes)), std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(null(4 * num_nodes) + null(4 * num_nodes + 1), 0.0, 1e-6);

  // A model without the defect (MassSpringDamper) is reported identifiable.
  const models::MassSpringDamper msd;
  auto force = [](double t, double* u) {
    u[0] = 2.0 * std::sin(2.0 * M_PI * 0.7 * t) + std::sin(2.0 * M_PI * 2.3 * t + 1.0);
  };
  const Eigen::Matrix<double, 1, 1> rest(0.1);
  const models::Trajectory msd_motion =
      models::Simulate(msd, msd.NominalParameters(), rest, rest, force,
                       Eigen::VectorXd::LinSpaced(201, 0.0, 4.0), 4);
  problems::WeightedResidualWeights w;
  w.kinematic = Eigen::Vector2d(1e6, 1e2).asDiagonal();
  w.residual = Eigen::Vector4d(5e5, 5e9, 2e4, 5e5).asDiagonal();
  IdentifiabilityReport report;
  ASSERT_TRUE(ParameterIdentifiabilityAlongTrajectory(msd, msd_motion, msd.NominalParameters(), w,
                                                      problems::Transcription::kShooting, 1e-10,
                                                      &report, &error))
      << error;
  EXPECT_TRUE(report.identifiable) << report.message;
}

}  // namespace
}  // namespace dynid::solvers
