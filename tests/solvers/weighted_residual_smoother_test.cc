#include "dynid/solvers/weighted_residual_smoother.h"

#include <ceres/covariance.h>
#include <ceres/problem.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "dynid/models/friction_mass.h"
#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/parameter_covariance.h"
#include "tests/solvers/weighted_residual_fixtures.h"

namespace dynid::solvers {
namespace {

using problems::ParameterMode;
using problems::Transcription;
using testing_fixtures::MakeMsdExperiment;
using testing_fixtures::MsdExperiment;
using testing_fixtures::StartFromMeasurements;
using testing_fixtures::TightOptions;

TEST(WeightedResidualSmootherTest, EstimatesMassSpringDamperParametersWithinTheirUncertainty) {
  const MsdExperiment e = MakeMsdExperiment(401, 4.0, false, 11, ParameterMode::kConstant);
  problems::WeightedResidualVariables variables =
      StartFromMeasurements(e, Eigen::Vector3d(1.3, 0.3, 35.0), ParameterMode::kConstant);
  for (Transcription transcription : {Transcription::kShooting, Transcription::kCollocation}) {
    problems::WeightedResidualOptions problem_options;
    problem_options.transcription = transcription;
    ceres::Problem problem;
    std::string error;
    ASSERT_TRUE(problems::BuildWeightedResidualProblem(e.model, e.data, e.weights,
                                                       problem_options, &variables, &problem,
                                                       &error))
        << error;
    int calls = 0;
    WeightedResidualSmootherOptions options = TightOptions();
    options.progress.callback = [&](const IterationProgress& progress) {
      ++calls;
      EXPECT_GE(progress.cost, 0.0);
    };
    const SolverSummary summary =
        SolveWeightedResidual(&problem, &variables, options);
    EXPECT_TRUE(summary.converged) << summary.message;
    EXPECT_EQ(calls, summary.iterations + 1);  // iteration 0 is reported too
    Eigen::MatrixXd information;
    ASSERT_TRUE(ConstantParameterInformation(&problem, &variables, &information, &error)) << error;
    const IdentifiabilityReport report =
        AnalyzeIdentifiability(information, variables.parameters.col(0),
                               {"mass [kg]", "damping [N s/m]", "stiffness [N/m]"});
    EXPECT_TRUE(report.identifiable) << report.message;
    // The weights are inverse noise intensities, so the covariance is in physical units; the
    // estimates lie within 4 standard deviations (plus the discretisation bias) of the truth.
    const Eigen::Vector3d truth = e.model.NominalParameters();
    for (int i = 0; i < 3; ++i) {
      EXPECT_LT(std::abs(variables.parameters(i, 0) - truth(i)),
                4.0 * report.standard_deviation(i) + 0.01 * std::abs(truth(i)))
          << problems::TranscriptionName(transcription) << " parameter " << i;
      // Damping (0.4 N s/m) is the weakly excited parameter.
      EXPECT_LT(report.relative_standard_deviation(i), i == 1 ? 0.3 : 0.05);
    }
  }
}

// The dogleg trust region reaches the Levenberg–Marquardt optimum of a well-posed problem, by its
// own path: the costs of the first iterations differ (so the option reaches Ceres), the
// estimates agree.
TEST(WeightedResidualSmootherTest, DoglegReachesTheLevenbergMarquardtOptimum) {
  const MsdExperiment e = MakeMsdExperiment(401, 4.0, false, 11, ParameterMode::kConstant);
  Eigen::Vector3d estimates[2];
  std::vector<double> costs[2];
  for (int strategy = 0; strategy < 2; ++strategy) {
    problems::WeightedResidualVariables variables =
        StartFromMeasurements(e, Eigen::Vector3d(1.3, 0.3, 35.0), ParameterMode::kConstant);
    ceres::Problem problem;
    std::string error;
    ASSERT_TRUE(problems::BuildWeightedResidualProblem(e.model, e.data, e.weights, {}, &variables,
                                                       &problem, &error))
        << error;
    WeightedResidualSmootherOptions options = TightOptions();
    options.trust_region = strategy == 0
                               ? WeightedResidualSmootherOptions::TrustRegion::kLevenbergMarquardt
                               : WeightedResidualSmootherOptions::TrustRegion::kDogleg;
    options.progress.callback = [&](const IterationProgress& progress) {
      costs[strategy].push_back(progress.cost);
    };
    const SolverSummary summary = SolveWeightedResidual(&problem, &variables, options);
    EXPECT_TRUE(summary.converged) << summary.message;
    estimates[strategy] = variables.parameters.col(0);
  }
  ASSERT_GE(costs[0].size(), 2u);
  ASSERT_GE(costs[1].size(), 2u);
  EXPECT_EQ(costs[0][0], costs[1][0]);  // the same start
  EXPECT_GT(std::abs(costs[0][1] - costs[1][1]), 1e-9 * costs[0][0]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(estimates[1](i), estimates[0](i), 1e-6 * std::abs(estimates[0](i))) << i;
  }
}

TEST(WeightedResidualSmootherTest, SchurCovarianceEqualsCeresCovariance) {
  const MsdExperiment e = MakeMsdExperiment(101, 2.0, false, 5, ParameterMode::kConstant);
  for (Transcription transcription : {Transcription::kShooting, Transcription::kCollocation}) {
    problems::WeightedResidualVariables variables =
        StartFromMeasurements(e, Eigen::Vector3d(1.1, 0.35, 38.0), ParameterMode::kConstant);
    problems::WeightedResidualOptions problem_options;
    problem_options.transcription = transcription;
    ceres::Problem problem;
    std::string error;
    ASSERT_TRUE(problems::BuildWeightedResidualProblem(e.model, e.data, e.weights,
                                                       problem_options, &variables, &problem,
                                                       &error));
    ASSERT_TRUE(SolveWeightedResidual(&problem, &variables, TightOptions()).converged);
    Eigen::MatrixXd information, covariance;
    ASSERT_TRUE(ConstantParameterInformation(&problem, &variables, &information, &error)) << error;
    ASSERT_TRUE(ParameterCovarianceByCeres(&problem, {variables.ConstantParameterBlock()},
                                           &covariance, &error))
        << error;
    const Eigen::MatrixXd schur = information.inverse();
    EXPECT_LT((schur - covariance).norm(), 1e-8 * covariance.norm())
        << "schur\n" << schur << "\nceres\n" << covariance;
    // Node marginals by banded selected inversion against ceres::Covariance's diagonal blocks.
    Eigen::VectorXd variance;
    ASSERT_TRUE(ParameterInformationBySchur(&problem, variables.TrajectoryBlocks(),
                                            {variables.ConstantParameterBlock()}, &information,
                                            &error, &variance));
    ASSERT_EQ(variance.size(), 101 * 4);  // [s, v] and [a, u] per node
    ceres::Covariance::Options covariance_options;
    covariance_options.algorithm_type = ceres::SPARSE_QR;
    ceres::Covariance node_covariance(covariance_options);
    std::vector<std::pair<const double*, const double*>> blocks;
    for (int k : {0, 37, 100}) {
      blocks.emplace_back(variables.state(k), variables.state(k));
      blocks.emplace_back(variables.input(k), variables.input(k));
    }
    ASSERT_TRUE(node_covariance.Compute(blocks, &problem));
    for (int k : {0, 37, 100}) {
      double state_block[4], input_block[4];
      node_covariance.GetCovarianceBlock(variables.state(k), variables.state(k), state_block);
      node_covariance.GetCovarianceBlock(variables.input(k), variables.input(k), input_block);
      const double expected[4] = {state_block[0], state_block[3], input_block[0], input_block[3]};
      for (int i = 0; i < 4; ++i) {
        EXPECT_NEAR(variance(4 * k + i), expected[i], 1e-8 * expected[i]) << "node " << k;
      }
    }
  }
}

// Full node covariance blocks (banded selected inversion + rank-p correction) against
// ceres::Covariance, entry by entry, including the cross-covariances between a node's state and
// input, with constant theta, and with time-varying theta (no constant block).
TEST(WeightedResidualSmootherTest, NodeCovarianceBlocksEqualCeresCovariance) {
  struct Case {
    Transcription transcription;
    ParameterMode mode;
  };
  for (const Case& c : {Case{Transcription::kShooting, ParameterMode::kConstant},
                        Case{Transcription::kCollocation, ParameterMode::kConstant},
                        Case{Transcription::kShooting, ParameterMode::kTimeVarying}}) {
    const int num_nodes = 41;
    const MsdExperiment e = MakeMsdExperiment(num_nodes, 1.0, false, 12, c.mode);
    problems::WeightedResidualVariables variables =
        StartFromMeasurements(e, Eigen::Vector3d(1.1, 0.35, 38.0), c.mode);
    problems::WeightedResidualOptions problem_options;
    problem_options.transcription = c.transcription;
    problem_options.parameter_mode = c.mode;
    ceres::Problem problem;
    std::string error;
    ASSERT_TRUE(problems::BuildWeightedResidualProblem(e.model, e.data, e.weights,
                                                       problem_options, &variables, &problem,
                                                       &error))
        << error;
    ASSERT_TRUE(SolveWeightedResidual(&problem, &variables, TightOptions()).converged);
    TrajectoryCovariance covariance;
    ASSERT_TRUE(NodeCovarianceBlocks(&problem, &variables, &covariance, &error)) << error;
    ASSERT_EQ(static_cast<int>(covariance.blocks.size()), num_nodes);
    const bool varying = c.mode == ParameterMode::kTimeVarying;
    const int node_size = varying ? 7 : 4;
    double* theta = variables.ConstantParameterBlock();
    EXPECT_EQ(covariance.parameter_covariance.rows(), theta != nullptr ? 3 : 0);

    ceres::Covariance::Options covariance_options;
    covariance_options.algorithm_type = ceres::SPARSE_QR;
    ceres::Covariance ceres_covariance(covariance_options);
    std::vector<std::pair<const double*, const double*>> pairs;
    const std::vector<int> checked = {0, 17, num_nodes - 1};
    auto node_blocks = [&](int k) {
      std::vector<std::pair<double*, int>> blocks = {{variables.state(k), 2},
                                                     {variables.input(k), 2}};
      if (varying) blocks.push_back({variables.parameter(k), 3});
      return blocks;
    };
    for (int k : checked) {
      for (const auto& a : node_blocks(k)) {
        for (const auto& b : node_blocks(k)) pairs.emplace_back(a.first, b.first);
        if (theta != nullptr) pairs.emplace_back(a.first, theta);
      }
    }
    if (theta != nullptr) pairs.emplace_back(theta, theta);
    ASSERT_TRUE(ceres_covariance.Compute(pairs, &problem));
    for (int k : checked) {
      Eigen::MatrixXd expected(node_size, node_size), expected_cross(node_size, 3);
      int row = 0;
      for (const auto& a : node_blocks(k)) {
        int col = 0;
        for (const auto& b : node_blocks(k)) {
          Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> block(a.second,
                                                                                      b.second);
          ceres_covariance.GetCovarianceBlock(a.first, b.first, block.data());
          expected.block(row, col, a.second, b.second) = block;
          col += b.second;
        }
        if (theta != nullptr) {
          Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> block(a.second,
                                                                                      3);
          ceres_covariance.GetCovarianceBlock(a.first, theta, block.data());
          expected_cross.middleRows(row, a.second) = block;
        }
        row += a.second;
      }
      const Eigen::MatrixXd& actual = covariance.blocks[k];
      ASSERT_EQ(actual.rows(), node_size);
      // Entry-wise, relative to the scale of the entry's row and column variances.
      for (int i = 0; i < node_size; ++i) {
        for (int j = 0; j < node_size; ++j) {
          const double scale = std::sqrt(expected(i, i) * expected(j, j));
          EXPECT_NEAR(actual(i, j), expected(i, j), 1e-8 * scale)
              << problems::TranscriptionName(c.transcription) << " "
              << problems::ParameterModeName(c.mode) << " node " << k << " (" << i << ", " << j
              << ")";
        }
      }
      if (theta != nullptr) {
        Eigen::Matrix3d theta_expected;
        Eigen::Matrix<double, 3, 3, Eigen::RowMajor> block;
        ceres_covariance.GetCovarianceBlock(theta, theta, block.data());
        theta_expected = block;
        EXPECT_LT((covariance.parameter_covariance - theta_expected).norm(),
                  1e-8 * theta_expected.norm());
        for (int i = 0; i < node_size; ++i) {
          for (int j = 0; j < 3; ++j) {
            const double scale = std::sqrt(expected(i, i) * theta_expected(j, j));
            EXPECT_NEAR(covariance.parameter_cross[k](i, j), expected_cross(i, j), 1e-8 * scale)
                << "cross, node " << k << " (" << i << ", " << j << ")";
          }
        }
      }
    }
  }
}

// Steady-state response to a single sine of frequency w: a = −w² s along the whole motion, so
// the data determine k − m w² but not m and k separately. The report must name that direction,
// and a second frequency must remove it.
TEST(WeightedResidualSmootherTest, IdentifiabilityReportNamesUndeterminedCombination) {
  const models::MassSpringDamper model;
  const double w = 3.0, amplitude = 2.0;
  const Eigen::Vector3d theta = model.NominalParameters();
  const std::complex<double> response =
      amplitude / std::complex<double>(theta(2) - theta(0) * w * w, theta(1) * w);
  for (int excitation = 1; excitation <= 2; ++excitation) {
    auto input = [&](double t, double* u) {
      u[0] = amplitude * std::sin(w * t) + (excitation == 2 ? std::sin(7.0 * t) : 0.0);
    };
    // Start on the steady state of the first sine (the second one adds a transient).
    const double s0 = std::imag(response);           // Im(R e^{i0})
    const double v0 = w * std::real(response);
    const int num_nodes = 201;
    const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_nodes, 0.0, 4.0);
    const models::Trajectory truth = models::Simulate(
        model, theta, Eigen::Matrix<double, 1, 1>(s0), Eigen::Matrix<double, 1, 1>(v0), input,
        times, 20);
    problems::WeightedResidualData data{times, truth.measurements};
    problems::WeightedResidualWeights weights;
    weights.kinematic = Eigen::Vector2d(1e6, 1e4).asDiagonal();
    weights.residual = Eigen::Vector4d(1e4, 1e8, 1e4, 1e4).asDiagonal();
    problems::WeightedResidualVariables variables;
    problems::ResizeVariables(1, 1, theta, num_nodes, ParameterMode::kConstant, &variables);
    for (int k = 0; k < num_nodes; ++k) {
      variables.states.col(k) << truth.positions(k, 0), truth.velocities(k, 0);
      variables.inputs.col(k) << truth.accelerations(k, 0), truth.inputs(k, 0);
    }
    ceres::Problem problem;
    std::string error;
    problems::WeightedResidualOptions options;
    ASSERT_TRUE(problems::BuildWeightedResidualProblem(model, data, weights, options, &variables,
                                                       &problem, &error));
    // The information at the true motion answers the experiment-design question (solving first
    // would let theta drift along the undetermined direction).
    Eigen::MatrixXd information;
    ASSERT_TRUE(ConstantParameterInformation(&problem, &variables, &information, &error));
    const IdentifiabilityReport report =
        AnalyzeIdentifiability(information, variables.parameters.col(0),
                               {"mass [kg]", "damping [N s/m]", "stiffness [N/m]"}, 1e-6);
    if (excitation == 1) {
      ASSERT_EQ(report.undetermined.size(), 1u) << report.message;
      // Absolute null direction (dm, dc, dk) ∝ (1, 0, w²); in relative coordinates divide by D.
      Eigen::Vector3d expected(1.0 / theta(0), 0.0, w * w / theta(2));
      expected.normalize();
      EXPECT_GT(std::abs(report.eigenvectors.col(0).dot(expected)), 0.999) << report.message;
      EXPECT_NE(report.message.find("mass [kg]"), std::string::npos);
      EXPECT_NE(report.message.find("stiffness [N/m]"), std::string::npos);
      // Ceres' own covariance refuses or is meaningless here; the report does not fail.
      EXPECT_FALSE(report.identifiable);
    } else {
      EXPECT_TRUE(report.identifiable) << report.message;
      EXPECT_LT(report.condition_number, 1e5);
    }
  }
}

// Noise-free rigid RT manipulator data, payload started at 0.5 kg: both transcriptions recover
// the 2 kg payload up to their discretisation bias, which is first order in h for shooting
// (piecewise-constant accelerations) and second order for collocation (linear elements).
double RtPayloadEstimate(int num_nodes, Transcription transcription) {
  const models::RtManipulatorRigid model;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_nodes, 0.0, 1.0);
  const models::Trajectory truth = models::Simulate(
      model, model.NominalParameters(), Eigen::Vector2d(0.25, 0.0), Eigen::Vector2d::Zero(),
      [](double t, double* u) {
        const Eigen::Vector2d f =
            models::RtManipulatorReferenceInputs(models::RtManipulatorParameters(), t);
        u[0] = f(0), u[1] = f(1);
      },
      times, 20);
  problems::WeightedResidualData data{times, truth.measurements};
  problems::WeightedResidualWeights weights;
  weights.kinematic = Eigen::Vector4d(1e6, 1e6, 1e4, 1e4).asDiagonal();
  Eigen::VectorXd v(8);
  v << 1e4, 1e4, 1e8, 1e8, 1e4, 1e4, 1e2, 1e2;
  weights.residual = v.asDiagonal();
  problems::WeightedResidualVariables variables;
  problems::ResizeVariables(2, 2, Eigen::VectorXd::Constant(1, 0.5), num_nodes,
                            ParameterMode::kConstant, &variables);
  for (int k = 0; k < num_nodes; ++k) {  // start from the measurements, velocities zero
    variables.states.col(k) << truth.measurements(k, 0), truth.measurements(k, 1), 0.0, 0.0;
    variables.inputs.col(k) << 0.0, 0.0, truth.measurements(k, 4), truth.measurements(k, 5);
  }
  ceres::Problem problem;
  std::string error;
  problems::WeightedResidualOptions options;
  options.transcription = transcription;
  EXPECT_TRUE(problems::BuildWeightedResidualProblem(model, data, weights, options, &variables,
                                                     &problem, &error));
  const SolverSummary summary =
      SolveWeightedResidual(&problem, &variables, TightOptions());
  EXPECT_TRUE(summary.converged) << summary.message;
  return variables.parameters(0, 0);
}

TEST(WeightedResidualSmootherTest, RtPayloadBiasShrinksAtTheTranscriptionsOrder) {
  const double shooting_coarse = RtPayloadEstimate(101, Transcription::kShooting) - 2.0;
  const double shooting_fine = RtPayloadEstimate(201, Transcription::kShooting) - 2.0;
  const double collocation_coarse = RtPayloadEstimate(101, Transcription::kCollocation) - 2.0;
  const double collocation_fine = RtPayloadEstimate(201, Transcription::kCollocation) - 2.0;
  EXPECT_LT(std::abs(shooting_coarse), 0.2);
  EXPECT_LT(std::abs(collocation_coarse), 0.03);
  EXPECT_NEAR(shooting_coarse / shooting_fine, 2.0, 0.3);
  EXPECT_NEAR(collocation_coarse / collocation_fine, 4.0, 0.8);
}

}  // namespace
}  // namespace dynid::solvers

namespace dynid::solvers {
namespace {

// Stick–slip data (van de Molengraft (1990) §4.4: m = 1 kg, w_s = w_d = 2 N, f = 4 sin(2 pi t))
// explained by the smooth friction model: the smoother recovers mass and friction level, and
// explains the stuck phases with small velocities on the steep part of the smooth sign.
TEST(WeightedResidualSmootherTest, SmoothFrictionModelIdentifiesStickSlipData) {
  models::StickSlipParameters truth_parameters;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(501, 0.0, 2.0);
  models::Trajectory truth;
  Eigen::VectorXd friction;
  models::SimulateStickSlip(
      truth_parameters, [](double t, double* f) { f[0] = 4.0 * std::sin(2.0 * M_PI * t); }, times,
      0.0, 0.0, 1e-4, &truth, &friction);
  models::FrictionMass::Parameters smooth;
  smooth.smoothing_velocity_m_per_s = 1e-3;
  const models::FrictionMass model(smooth);
  problems::WeightedResidualData data{times, truth.measurements};
  problems::WeightedResidualWeights weights;
  weights.kinematic = Eigen::Vector2d(1e6, 1e4).asDiagonal();
  weights.residual = Eigen::Vector4d(1e2, 1e8, 1e4, 1e4).asDiagonal();
  problems::WeightedResidualVariables variables;
  problems::ResizeVariables(1, 1, Eigen::Vector2d(1.5, 1.0), 501, ParameterMode::kConstant,
                            &variables);
  for (int k = 0; k < 501; ++k) {
    variables.states(0, k) = truth.measurements(k, 0);
    variables.inputs.col(k) << truth.measurements(k, 1), truth.measurements(k, 2);
  }
  problems::WeightedResidualOptions options;
  options.transcription = Transcription::kCollocation;
  ceres::Problem problem;
  std::string error;
  ASSERT_TRUE(problems::BuildWeightedResidualProblem(model, data, weights, options, &variables,
                                                     &problem, &error));
  const SolverSummary summary =
      SolveWeightedResidual(&problem, &variables, TightOptions());
  EXPECT_TRUE(summary.converged) << summary.message;
  EXPECT_NEAR(variables.parameters(0, 0), 1.0, 0.05);
  EXPECT_NEAR(variables.parameters(1, 0), 2.0, 0.1);
}

}  // namespace
}  // namespace dynid::solvers
