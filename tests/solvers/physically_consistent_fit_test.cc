#include "dynid/solvers/physically_consistent_fit.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dynid/models/inertia_parameterization.h"
#include "dynid/problems/physically_consistent_problem.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/residual_analysis.h"
#include "dynid/solvers/torque_validation.h"
#include "tests/solvers/physically_consistent_fixtures.h"

namespace dynid::solvers {
namespace {

using dynid::testing::ChainRecord;
using dynid::testing::MakeRandomChain4;
using dynid::testing::SimulateChain;

problems::PhysicallyConsistentData BaseData(const ChainRecord& record) {
  problems::PhysicallyConsistentData data;
  data.x = record.x_base;
  data.y = record.tau;
  data.column_map = record.base.grouping;
  return data;
}

// The starting point of the tests is the truth itself, as a description (CAD) value would be;
// the fit must then move to the data's optimum. (A start far from the data, e.g. 1 kg links with
// the centre of mass at the origin, can stall on the boundary: solvers/README.md.)
Eigen::VectorXd Description(const models::SerialRobot& robot) {
  return robot.standard_parameters();
}

TEST(PhysicallyConsistentFitTest, RecoversTheTruthWithinItsSigmaOverSeeds) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const models::SerialRobot robot = MakeRandomChain4(seed);
    const ChainRecord record = SimulateChain(robot, 0.3, seed);
    PhysicallyConsistentSummary fit;
    std::string error;
    ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot),
                                        PhysicallyConsistentOptions(), record.base.names, &fit,
                                        &error))
        << error;
    ASSERT_TRUE(fit.success) << fit.message;
    EXPECT_TRUE(fit.undetermined.empty()) << fit.Report();
    EXPECT_EQ(fit.rank, record.base.size());
    EXPECT_TRUE(CheckStandardConsistency(robot, fit.theta).consistent);
    // The fit's σ̂ is the noise: sqrt(σ̂²) within 5 % of 0.3.
    EXPECT_NEAR(std::sqrt(fit.sigma2), 0.3, 0.015) << seed;
    const Eigen::VectorXd truth = record.base.Reduce(robot.standard_parameters());
    const Eigen::VectorXd z = (fit.columns - truth).cwiseQuotient(fit.column_standard_deviation);
    EXPECT_LT(z.cwiseAbs().maxCoeff(), 4.0) << "seed " << seed << "\n" << z.transpose();
    // Roughly standard normal (the z are correlated, so the band is wide): a σ off by a factor
    // of 2 either way would leave it.
    EXPECT_GT(z.squaredNorm() / z.size(), 0.3) << seed;
    EXPECT_LT(z.squaredNorm() / z.size(), 2.5) << seed;
  }
}

TEST(PhysicallyConsistentFitTest, AgreesWithLeastSquaresWhenLeastSquaresIsConsistent) {
  const models::SerialRobot robot = MakeRandomChain4(7);
  const ChainRecord record = SimulateChain(robot, 0.02, 7);
  LinearLeastSquaresOptions ls_options;
  const LinearLeastSquaresSummary ls = SolveLeastSquares(record.x_base, record.tau, ls_options);
  ASSERT_TRUE(ls.success) << ls.message;
  for (bool compress : {true, false}) {
    PhysicallyConsistentOptions options;
    options.problem.compress_rows = compress;
    PhysicallyConsistentSummary fit;
    std::string error;
    ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot), options,
                                        record.base.names, &fit, &error))
        << error;
    ASSERT_TRUE(fit.success && fit.solver.converged) << fit.Report();
    EXPECT_TRUE(fit.at_bound.empty()) << fit.Report();
    // Same estimate to solver tolerance (in units of the LS σ), same σ̂² and covariance.
    const EstimateDistance distance = CompareEstimates(ls.theta, ls.covariance, fit.columns);
    EXPECT_LT(distance.max_abs_z, 1e-5) << "compress " << compress;
    EXPECT_LT(distance.mahalanobis, 1e-5);
    EXPECT_NEAR(fit.sigma2, ls.sigma2, 1e-8 * ls.sigma2);
    EXPECT_LT((fit.column_covariance - ls.covariance).norm(), 1e-6 * ls.covariance.norm());
    EXPECT_NEAR(fit.relative_error, ls.relative_error, 1e-9);
  }
}

// The HAC covariance of the fit against an independent formula: in the interior, without prior,
// it must be the least-squares sandwich (XᵀW²X)^{-1} Ω (XᵀW²X)^{-1} of the fit's weighted residuals
// (ComputeHacCovariance with Z = X = W X), with white and with AR(1) noise, weights per joint, rows
// compressed or not; and with white noise close to the delta-method σ.
TEST(PhysicallyConsistentFitTest, HacCovarianceIsTheLeastSquaresSandwichInTheInterior) {
  const models::SerialRobot robot = MakeRandomChain4(7);
  const int num_states = 1000;
  ChainRecord record = SimulateChain(robot, 0.02, 7, -1, num_states);
  const RowBlocks blocks = RowBlocks::Stacked(data::StackOrder::kJointMajor, 4, num_states);
  problems::PhysicallyConsistentData data = BaseData(record);
  data.row_weights.resize(data.x.rows());
  for (Eigen::Index i = 0; i < data.x.rows(); ++i) {
    data.row_weights[i] = 1.0 + 0.5 * blocks.BlockOf(static_cast<int>(i));
  }
  for (const double rho : {0.0, 0.8}) {
    // AR(1) noise of coefficient rho along each joint's samples (joint-major rows), of standard
    // deviation 1/w_j in the joint's innovations, so that the weights are right.
    std::mt19937 rng(11);
    std::normal_distribution<double> normal(0.0, 0.02);
    data.y = record.tau_exact;
    for (int joint = 0; joint < 4; ++joint) {
      double e = 0.0;
      for (int t = 0; t < num_states; ++t) {
        e = rho * e + normal(rng) / (1.0 + 0.5 * joint);
        data.y[joint * num_states + t] += e;
      }
    }
    for (bool compress : {true, false}) {
      PhysicallyConsistentOptions options;
      options.problem.compress_rows = compress;
      options.hac = true;
      options.hac_blocks = blocks;
      PhysicallyConsistentSummary fit;
      std::string error;
      ASSERT_TRUE(FitPhysicallyConsistent(robot, data, Description(robot), options,
                                          record.base.names, &fit, &error))
          << error;
      ASSERT_TRUE(fit.success && fit.solver.converged && fit.at_bound.empty()) << fit.Report();
      ASSERT_TRUE(fit.column_hac.success) << fit.column_hac.message;
      const Eigen::MatrixXd wx = data.row_weights.asDiagonal() * data.x;
      const Eigen::VectorXd we = data.row_weights.cwiseProduct(data.y - data.x * fit.columns);
      const HacCovariance expected = ComputeHacCovariance(wx, wx, we, blocks);
      ASSERT_TRUE(expected.success) << expected.message;
      EXPECT_EQ(fit.column_hac.lags, expected.lags);
      EXPECT_LT((fit.column_hac.covariance - expected.covariance).norm(),
                1e-6 * expected.covariance.norm())
          << "rho " << rho << " compress " << compress;
      const Eigen::ArrayXd ratio =
          fit.column_hac.standard_deviation.array() / fit.column_standard_deviation.array();
      if (rho == 0.0) {
        // White noise: the sandwich and σ̂² (XᵀW²X)^{-1} estimate the same thing.
        EXPECT_GT(ratio.minCoeff(), 0.8) << ratio.transpose();
        EXPECT_LT(ratio.maxCoeff(), 1.25) << ratio.transpose();
      }
    }
  }
  // A layout that does not match the rows is an error, not a silent covariance.
  PhysicallyConsistentOptions options;
  options.hac = true;
  options.hac_blocks = RowBlocks::Stacked(data::StackOrder::kJointMajor, 4, num_states - 1);
  PhysicallyConsistentSummary fit;
  std::string error;
  EXPECT_FALSE(FitPhysicallyConsistent(robot, data, Description(robot), options, record.base.names,
                                       &fit, &error));
  EXPECT_NE(error.find("hac_blocks"), std::string::npos) << error;
}

TEST(PhysicallyConsistentFitTest, RankDeficientExcitationStaysConsistentAndNamesTheGap) {
  const models::SerialRobot robot = MakeRandomChain4(5);
  const ChainRecord record = SimulateChain(robot, 0.05, 5, /*still_joint=*/3);
  const LinearLeastSquaresSummary ls =
      SolveLeastSquares(record.x_base, record.tau, LinearLeastSquaresOptions());
  ASSERT_FALSE(ls.success);  // LS cannot: some columns depend on others
  ASSERT_GT(record.base.size() - ls.rank, 0);
  PhysicallyConsistentSummary fit;
  std::string error;
  ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot),
                                      PhysicallyConsistentOptions(), record.base.names, &fit,
                                      &error))
      << error;
  ASSERT_TRUE(fit.success) << fit.message;
  EXPECT_TRUE(CheckStandardConsistency(robot, fit.theta).consistent);
  EXPECT_EQ(fit.rank, ls.rank);
  ASSERT_EQ(static_cast<int>(fit.undetermined.size()), record.base.size() - ls.rank)
      << fit.Report();
  // Every reported direction is invisible in the data: X_b u ≈ 0 (independent check).
  for (Eigen::Index k = 0; k < fit.undetermined_directions.cols(); ++k) {
    const Eigen::VectorXd u = fit.undetermined_directions.col(k);
    const Eigen::VectorXd scaled = u.cwiseProduct(record.x_base.colwise().norm().transpose());
    EXPECT_LE((record.x_base * u).norm(), 1e-6 * scaled.norm()) << fit.undetermined[k];
  }
  // Those columns have no finite σ; the fit still explains the data as well as LS does.
  int infinite = 0;
  for (Eigen::Index i = 0; i < fit.column_standard_deviation.size(); ++i) {
    infinite += std::isinf(fit.column_standard_deviation[i]);
  }
  EXPECT_GT(infinite, 0);
  EXPECT_LT(infinite, record.base.size());
  EXPECT_NEAR(fit.relative_error, ls.relative_error, 1e-6);
  // A prior toward the truth determines the rest: every σ finite.
  PhysicallyConsistentOptions with_prior;
  with_prior.problem.prior_weight = 1.0;
  with_prior.problem.prior_theta = robot.standard_parameters();
  ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot), with_prior,
                                      record.base.names, &fit, &error))
      << error;
  EXPECT_EQ(static_cast<int>(fit.undetermined.size()), record.base.size() - ls.rank);
  // The prior acts on the links: their σ are all finite; the drive terms of the still joint have
  // no prior and stay undetermined.
  for (int j = 0; j < 4; ++j) {
    const int first = robot.InertialIndex(j);
    EXPECT_TRUE(fit.standard_deviation.segment(first, 10).allFinite()) << "link " << j + 1;
  }
  for (const char* name : {"ia4", "fv4", "fc4"}) {
    EXPECT_TRUE(std::isinf(fit.standard_deviation[robot.ParameterIndex(name)])) << name;
  }
  EXPECT_GT(fit.prior_cost, 0.0);
}

TEST(PhysicallyConsistentFitTest, InconsistentLeastSquaresIsReportedAndTheFitStopsAtTheBound) {
  const models::SerialRobot robot = MakeRandomChain4(3);
  ChainRecord record = SimulateChain(robot, 0.05, 3);
  const int fc2 = record.base.Index("fc2");
  ASSERT_GE(fc2, 0);
  // Torques whose Coulomb friction of joint 2 is 3 N m lower: the LS fc2 is negative.
  record.tau -= 3.0 * record.x_base.col(fc2);
  const LinearLeastSquaresSummary ls =
      SolveLeastSquares(record.x_base, record.tau, LinearLeastSquaresOptions());
  ASSERT_TRUE(ls.success);
  ASSERT_LT(ls.theta[fc2], -1.0);
  const StandardConsistencyReport report = CheckStandardConsistency(
      robot, StandardFromBase(record.base, ls.theta, robot.num_parameters()));
  EXPECT_FALSE(report.consistent);
  ASSERT_FALSE(report.negative_drive_terms.empty());
  bool named = false;
  for (const std::string& v : report.violations) named |= v.rfind("fc2 = ", 0) == 0;
  EXPECT_TRUE(named);

  PhysicallyConsistentSummary fit;
  std::string error;
  ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot),
                                      PhysicallyConsistentOptions(), record.base.names, &fit,
                                      &error))
      << error;
  ASSERT_TRUE(fit.success) << fit.message;
  EXPECT_GE(fit.columns[fc2], 0.0);
  EXPECT_LT(fit.columns[fc2], 1e-3);
  bool at_bound = false;
  for (const std::string& b : fit.at_bound) at_bound |= b.rfind("fc2 at its bound", 0) == 0;
  EXPECT_TRUE(at_bound) << fit.Report();
  // The nearest consistent estimate is many σ away from LS, mostly along fc2.
  const EstimateDistance distance = CompareEstimates(ls.theta, ls.covariance, fit.columns);
  EXPECT_GT(distance.mahalanobis, 10.0);
  EXPECT_EQ(distance.worst, fc2);
  // The cost above the LS minimum is ½ Δᵀ X_bᵀX_b Δ = ½ σ̂²_LS d² (the cost is quadratic).
  const double ls_cost = 0.5 * ls.residual.squaredNorm();
  EXPECT_NEAR(fit.data_cost - ls_cost,
              0.5 * ls.sigma2 * distance.mahalanobis * distance.mahalanobis,
              1e-4 * (fit.data_cost - ls_cost));
}

// An independent solver of the same convex problem: min ½||X_b K θ − y||² over the consistent
// set, by accelerated projected gradient (FISTA) in coordinates where the projection is exact —
// per link the pseudo-inertia entries (off-diagonal × √2, so that the Euclidean norm is the
// Frobenius norm of J and the projection clips J's eigenvalues at 0), rotor inertias and friction
// clipped at 0, offsets free. Returns the data cost at its solution.
double ProjectedGradientCost(const models::SerialRobot& robot, const ChainRecord& record,
                             int iterations) {
  const problems::PhysicalParameterization layout(robot);
  const int p = robot.num_parameters();
  // θ = T⁻¹ x: the linear map from the isometric coordinates x to the standard values.
  Eigen::MatrixXd to_theta = Eigen::MatrixXd::Identity(p, p);
  auto vech = [](const Eigen::Matrix4d& j) {
    models::Vector10d x;
    int k = 0;
    for (int a = 0; a < 4; ++a) {
      for (int b = a; b < 4; ++b) x[k++] = a == b ? j(a, b) : std::sqrt(2.0) * j(a, b);
    }
    return x;
  };
  auto unvech = [](const models::Vector10d& x) {
    Eigen::Matrix4d j;
    int k = 0;
    for (int a = 0; a < 4; ++a) {
      for (int b = a; b < 4; ++b, ++k) j(a, b) = j(b, a) = a == b ? x[k] : x[k] / std::sqrt(2.0);
    }
    return j;
  };
  for (int l = 0; l < layout.num_links(); ++l) {
    const int i = layout.LinkIndex(l);
    for (int k = 0; k < 10; ++k) {
      models::Vector10d unit = models::Vector10d::Zero();
      unit[k] = 1.0;
      to_theta.block<10, 1>(i, i + k) = models::VectorOfPseudoInertia(unvech(unit));
    }
  }
  const Eigen::MatrixXd m = record.x_base * record.base.grouping * to_theta;
  const Eigen::MatrixXd g = m.transpose() * m;
  const Eigen::VectorXd h = m.transpose() * record.tau;
  const double lipschitz =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(g).eigenvalues().maxCoeff();
  auto project = [&](Eigen::VectorXd* x) {
    for (int l = 0; l < layout.num_links(); ++l) {
      const int i = layout.LinkIndex(l);
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eigen(unvech(x->segment<10>(i)));
      const Eigen::Vector4d clipped = eigen.eigenvalues().cwiseMax(0.0);
      x->segment<10>(i) =
          vech(eigen.eigenvectors() * clipped.asDiagonal() * eigen.eigenvectors().transpose());
    }
    for (int k = 0; k < p; ++k) {
      if (layout.IsNonNegative(k)) (*x)[k] = std::max((*x)[k], 0.0);
    }
  };
  Eigen::VectorXd x = Eigen::VectorXd::Zero(p), previous = x, y = x;
  double t = 1.0;
  for (int it = 0; it < iterations; ++it) {
    x = y - (g * y - h) / lipschitz;
    project(&x);
    const double t_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t * t));
    y = x + ((t - 1.0) / t_next) * (x - previous);
    previous = x;
    t = t_next;
  }
  return 0.5 * (m * x - record.tau).squaredNorm();
}

TEST(PhysicallyConsistentFitTest, ReachesTheBoundaryOptimumOfAnIndependentSolver) {
  // Torques with 40 % less of link 4's mass and 3 N m less Coulomb friction on joint 2 than the
  // robot has: the LS estimate has an impossible link 4 and a negative fc2, and the consistent
  // optimum lies on the boundary of the consistent set, where the log-Cholesky unknowns alone
  // would only approach it. The fit's cost must equal that of the projected-gradient solver.
  const models::SerialRobot robot = MakeRandomChain4(5);
  ChainRecord record = SimulateChain(robot, 0.05, 5);
  const int m4 = robot.ParameterIndex("m4");
  const int fc2 = robot.ParameterIndex("fc2");
  ASSERT_GE(m4, 0);
  ASSERT_GE(fc2, 0);
  record.tau -= 0.4 * robot.standard_parameters()[m4] * record.x_standard.col(m4) +
                3.0 * record.x_standard.col(fc2);
  const LinearLeastSquaresSummary ls =
      SolveLeastSquares(record.x_base, record.tau, LinearLeastSquaresOptions());
  ASSERT_TRUE(ls.success);
  ASSERT_FALSE(CheckStandardConsistency(
                   robot, StandardFromBase(record.base, ls.theta, robot.num_parameters()))
                   .consistent);
  const double ls_cost = 0.5 * ls.residual.squaredNorm();
  const double reference = ProjectedGradientCost(robot, record, 20000);
  ASSERT_GT(reference - ls_cost, 1.0);  // the constraint is active

  PhysicallyConsistentSummary fit;
  std::string error;
  ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot),
                                      PhysicallyConsistentOptions(), record.base.names, &fit,
                                      &error))
      << error;
  ASSERT_TRUE(fit.success) << fit.message;
  EXPECT_TRUE(fit.solver.converged) << fit.Report();
  EXPECT_TRUE(CheckStandardConsistency(robot, fit.theta).consistent);
  // Equal optimal costs: within 1e-4 of the excess over LS (a fraction of a σ² unit).
  EXPECT_NEAR(fit.data_cost, reference, 1e-4 * (reference - ls_cost)) << fit.Report();

  // The log-Cholesky solve alone ends short of it (the finish is what reaches the boundary).
  PhysicallyConsistentOptions log_only;
  log_only.finish_in_cholesky_coordinates = false;
  PhysicallyConsistentSummary stalled;
  ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot), log_only,
                                      record.base.names, &stalled, &error))
      << error;
  EXPECT_GT(stalled.data_cost, fit.data_cost);
}

TEST(PhysicallyConsistentFitTest, StandardRegressorAndInvalidInput) {
  const models::SerialRobot robot = MakeRandomChain4(2);
  const ChainRecord record = SimulateChain(robot, 0.05, 2, -1, 500);
  problems::PhysicallyConsistentData data;
  data.x = record.x_standard;
  data.y = record.tau;
  PhysicallyConsistentSummary standard, base;
  std::string error;
  ASSERT_TRUE(FitPhysicallyConsistent(robot, data, Description(robot),
                                      PhysicallyConsistentOptions(), {}, &standard, &error))
      << error;
  ASSERT_TRUE(FitPhysicallyConsistent(robot, BaseData(record), Description(robot),
                                      PhysicallyConsistentOptions(), record.base.names, &base,
                                      &error))
      << error;
  // Same identifiable part; with the standard regressor the structural combinations are listed.
  const EstimateDistance between =
      CompareEstimates(base.columns, base.column_covariance, record.base.Reduce(standard.theta));
  EXPECT_LT(between.max_abs_z, 0.05);
  EXPECT_EQ(static_cast<int>(standard.undetermined.size()),
            robot.num_parameters() - record.base.size());
  EXPECT_EQ(standard.rank, base.rank);

  PhysicallyConsistentOptions bad;
  bad.start_floor = 2.0;
  EXPECT_FALSE(
      FitPhysicallyConsistent(robot, data, Description(robot), bad, {}, &standard, &error));
  EXPECT_NE(error.find("start_floor"), std::string::npos) << error;
  data.y.resize(3);
  EXPECT_FALSE(FitPhysicallyConsistent(robot, data, Description(robot),
                                       PhysicallyConsistentOptions(), {}, &standard, &error));
}

TEST(PhysicallyConsistentFitTest, CompareEstimatesIsTheMahalanobisDistance) {
  Eigen::Matrix2d covariance;
  covariance << 4.0, 1.0, 1.0, 1.0;
  const Eigen::Vector2d reference(1.0, 2.0), other(3.0, 1.0);
  const EstimateDistance d = CompareEstimates(reference, covariance, other);
  const Eigen::Vector2d delta = other - reference;
  EXPECT_NEAR(d.mahalanobis, std::sqrt(delta.dot(covariance.inverse() * delta)), 1e-12);
  EXPECT_NEAR(d.z[0], 1.0, 1e-15);
  EXPECT_NEAR(d.z[1], -1.0, 1e-15);
  EXPECT_EQ(d.num_compared, 2);
}

}  // namespace
}  // namespace dynid::solvers
