// Tests of solvers/idim: the IDIM pipeline pieces against independent computations, and the
// acceptance criteria on a shortened simulated TX40 experiment (fixed seed).
#include "dynid/solvers/idim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "dynid/data/signal.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_experiment.h"
#include "dynid/models/tx40.h"

namespace dynid::solvers {
namespace {

using experiments::KnowledgePreprocessing;
using experiments::ParsePriorKnowledge;
using experiments::PriorKnowledge;
using experiments::PriorKnowledgeName;

// One shortened experiment shared by all tests (5 s at 5 kHz; seed 2018).
struct Fixture {
  tx40_study::Tx40Experiment experiment;
  IdimModel model;  // all 55 base parameters, the 28 essential ones first
  Eigen::MatrixXd q_measured, tau_measured;
  Eigen::VectorXd theta_true, theta0;
  std::unique_ptr<SampledTrajectory> reference;
  data::RobotSimulatorOptions controller;
  std::vector<int> essential;  // indices of the 28 essential parameters in the model
};

const Fixture& GetFixture() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture;
    tx40_study::Tx40ExperimentOptions options;
    options.duration_s = 5.0;
    std::string error;
    CHECK(tx40_study::SimulateTx40Experiment(options, &f->experiment, &error)) << error;
    const models::SerialRobot robot = models::MakeTx40();
    std::vector<std::string> names = models::Tx40EssentialNames();
    for (const std::string& name : f->experiment.base.names) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    CHECK(IdimModel::Create(robot, f->experiment.base, names, &f->model, &error)) << error;
    const data::RobotSimulation& sim = f->experiment.simulation;
    models::Tx40MotorToJoint(sim.q_motor, sim.tau_motor, &f->q_measured, &f->tau_measured);
    f->theta_true = f->model.FromStandard(f->experiment.theta_standard);
    f->theta0 = f->theta_true;
    for (int i = 0; i < f->model.num_parameters(); ++i) {
      if (f->model.IsFrictionOrOffset(i)) f->theta0[i] = 0.0;
    }
    f->reference = std::make_unique<SampledTrajectory>(sim.q_reference, sim.qd_reference,
                                                       sim.qdd_reference, 5000.0);
    f->controller.gains = data::TunePidGains(
        robot, 0.5 * (models::Tx40JointLowerLimitRad() + models::Tx40JointUpperLimitRad()),
        options.pid_bandwidth_hz);
    f->controller.duration_s = options.duration_s;
    for (int i = 0; i < 28; ++i) f->essential.push_back(i);
    return f;
  }();
  return *fixture;
}

IdimSystem Build(PriorKnowledge knowledge, IdimDifferentiator differentiator) {
  const Fixture& f = GetFixture();
  IdimPreprocessingOptions options = KnowledgePreprocessing(knowledge, differentiator, 5000.0);
  options.select_samples = true;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.05);
  IdimSystem system;
  std::string error;
  EXPECT_TRUE(BuildIdimSystem(f.model, f.q_measured, f.tau_measured, options, &system, &error))
      << error;
  return system;
}

IdimResult RunMethod(const IdimSystem& system, IdimEstimator estimator,
               ClosedLoopAuxiliaryModel* auxiliary, bool common_path = false) {
  const Fixture& f = GetFixture();
  IdimRunOptions options;
  options.estimator = estimator;
  options.iv_common_path = common_path;
  IdimResult result;
  std::string error;
  EXPECT_TRUE(RunIdim(f.model, system, options, f.theta0, auxiliary, &result, &error)) << error;
  return result;
}

// Essential parameters whose truth lies more than 3 σ from the estimate (σ of the estimator's
// covariance, or of the HAC covariance).
std::vector<std::string> Outside3Sigma(const IdimResult& result, bool hac = false) {
  const Fixture& f = GetFixture();
  const Eigen::VectorXd& sigma = hac ? result.hac.standard_deviation
                                     : result.fit.standard_deviation;
  std::vector<std::string> outside;
  for (int i : f.essential) {
    if (std::abs(result.fit.theta[i] - f.theta_true[i]) > 3.0 * sigma[i]) {
      char text[96];
      std::snprintf(text, sizeof(text), "%s(%.1fσ)", f.model.names()[i].c_str(),
                    std::abs(result.fit.theta[i] - f.theta_true[i]) / sigma[i]);
      outside.push_back(text);
    }
  }
  return outside;
}

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + " ";
  return text;
}

TEST(IdimTest, KnowledgeLevelsFollowBrunot2018) {
  const IdimPreprocessingOptions good =
      KnowledgePreprocessing(PriorKnowledge::kGood, IdimDifferentiator::kConventional, 5000.0);
  EXPECT_DOUBLE_EQ(good.position_cutoff_hz, 50.0);
  EXPECT_EQ(good.butterworth_order, 4);
  EXPECT_EQ(good.decimation_factor, 100);  // 0.8 · 2500 / 100 = 20 Hz
  const IdimPreprocessingOptions poor =
      KnowledgePreprocessing(PriorKnowledge::kPoor, IdimDifferentiator::kConventional, 5000.0);
  EXPECT_DOUBLE_EQ(poor.position_cutoff_hz, 180.0);
  EXPECT_EQ(poor.decimation_factor, 13);  // 153.8 Hz ≈ 150 Hz
  const IdimPreprocessingOptions none =
      KnowledgePreprocessing(PriorKnowledge::kNone, IdimDifferentiator::kIrw1, 5000.0);
  EXPECT_LE(none.position_cutoff_hz, 0.0);
  EXPECT_EQ(none.decimation_factor, 1);
  PriorKnowledge parsed;
  std::string error;
  EXPECT_TRUE(ParsePriorKnowledge("poor", &parsed, &error));
  EXPECT_EQ(parsed, PriorKnowledge::kPoor);
  EXPECT_FALSE(ParsePriorKnowledge("some", &parsed, &error));
  EXPECT_NE(error.find("unknown prior-knowledge level 'some'"), std::string::npos);
}

TEST(IdimTest, RegressorAndAuxiliaryRobotReproduceInverseDynamics) {
  const Fixture& f = GetFixture();
  const models::SerialRobot truth = models::MakeTx40();
  const models::SerialRobot rebuilt = f.model.RobotWithParameters(f.theta_true);
  Eigen::MatrixXd q = f.experiment.simulation.q.topRows(40);
  Eigen::MatrixXd qd = f.experiment.simulation.qd.topRows(40) * 3.0;
  Eigen::MatrixXd qdd = Eigen::MatrixXd::Random(40, 6) * 5.0;
  Eigen::MatrixXd x;
  f.model.Regressor(q, qd, qdd, &x);
  const Eigen::VectorXd stacked = x * f.theta_true;
  for (int k = 0; k < 40; ++k) {
    Eigen::VectorXd tau, tau_rebuilt;
    truth.InverseDynamics(q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose(),
                          &tau);
    rebuilt.InverseDynamics(q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose(),
                            &tau_rebuilt);
    for (int j = 0; j < 6; ++j) {
      EXPECT_NEAR(stacked[j * 40 + k], tau[j], 1e-9 * (1.0 + std::abs(tau[j])));
      EXPECT_NEAR(tau_rebuilt[j], tau[j], 1e-9 * (1.0 + std::abs(tau[j])));
    }
  }
  IdimModel bad;
  std::string error;
  EXPECT_FALSE(IdimModel::Create(truth, f.experiment.base, {"zz1r", "nope"}, &bad, &error));
  EXPECT_NE(error.find("'nope' is not a base parameter"), std::string::npos);
}

TEST(IdimTest, RegressorRowsAreTheRowsOfTheWholeStack) {
  // More samples than one chunk (2048), rows of every joint, the first and the last.
  const Fixture& f = GetFixture();
  const int ns = 5000;
  const Eigen::MatrixXd q = f.experiment.simulation.q.topRows(ns);
  const Eigen::MatrixXd qd = f.experiment.simulation.qd.topRows(ns);
  const Eigen::MatrixXd qdd = f.experiment.simulation.qdd.topRows(ns);
  Eigen::MatrixXd whole, selected;
  f.model.Regressor(q, qd, qdd, &whole);
  std::vector<int> rows;
  for (int r = 0; r < 6 * ns; r += (r % 7 == 0 ? 1 : 13)) rows.push_back(r);
  rows.push_back(6 * ns - 1);
  f.model.Regressor(q, qd, qdd, &selected, &rows);
  ASSERT_EQ(selected.rows(), static_cast<Eigen::Index>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_TRUE(selected.row(static_cast<Eigen::Index>(i)) == whole.row(rows[i])) << rows[i];
  }
}

TEST(IdimTest, SampledTrajectoryIsExactAtSamplesAndLinearBetween) {
  Eigen::MatrixXd q(3, 1), qd(3, 1), qdd(3, 1);
  q << 0, 1, 4;
  qd << 1, 2, 3;
  qdd << 0, 0, 1;
  const SampledTrajectory trajectory(q, qd, qdd, 10.0);
  EXPECT_DOUBLE_EQ(trajectory.duration(), 0.2);
  Eigen::VectorXd a, b, c;
  trajectory.Evaluate(0.1, &a, &b, &c);
  EXPECT_DOUBLE_EQ(a[0], 1.0);
  trajectory.Evaluate(0.15, &a, &b, &c);
  EXPECT_NEAR(a[0], 2.5, 1e-12);
  EXPECT_NEAR(c[0], 0.5, 1e-12);
  trajectory.Evaluate(1.0, &a, &b, &c);  // clamped
  EXPECT_DOUBLE_EQ(a[0], 4.0);
}

// Exact states and applied torques satisfy tau = X θ sample by sample, and the decimation is
// linear: LS on them must return the true base parameters (independent of any noise model).
TEST(IdimTest, ExactStatesThroughThePipelineRecoverTheTruth) {
  const Fixture& f = GetFixture();
  const IdimSystem system = Build(PriorKnowledge::kGood, IdimDifferentiator::kConventional);
  const data::RobotSimulation& sim = f.experiment.simulation;
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::string error;
  ASSERT_TRUE(ProcessLikeSystem(f.model, system, sim.q, sim.qd, sim.qdd, sim.tau, &x, &y, &error))
      << error;
  ASSERT_EQ(x.rows(), system.x.rows());
  LinearLeastSquaresOptions options;
  const LinearLeastSquaresSummary fit = SolveLeastSquares(x, y, options);
  ASSERT_TRUE(fit.success) << fit.message;
  EXPECT_LT(fit.relative_error, 1e-9);
  for (int i = 0; i < f.model.num_parameters(); ++i) {
    EXPECT_NEAR(fit.theta[i], f.theta_true[i], 1e-6 * (1.0 + std::abs(f.theta_true[i])))
        << f.model.names()[i];
  }
}

TEST(IdimTest, RejectsBadInput) {
  const Fixture& f = GetFixture();
  IdimPreprocessingOptions options =
      KnowledgePreprocessing(PriorKnowledge::kGood, IdimDifferentiator::kConventional, 5000.0);
  IdimSystem system;
  std::string error;
  EXPECT_FALSE(BuildIdimSystem(f.model, f.q_measured.topRows(500), f.tau_measured.topRows(500),
                               options, &system, &error));
  EXPECT_NE(error.find("too few for decimation by 100"), std::string::npos) << error;
  EXPECT_FALSE(BuildIdimSystem(f.model, f.q_measured, f.tau_measured.leftCols(5), options,
                               &system, &error));
  EXPECT_NE(error.find("expected 6 position and torque columns"), std::string::npos) << error;
  options.position_cutoff_hz = 3000.0;
  EXPECT_FALSE(BuildIdimSystem(f.model, f.q_measured, f.tau_measured, options, &system, &error));
  EXPECT_NE(error.find("Nyquist"), std::string::npos) << error;
  // IV without an auxiliary model.
  const IdimSystem good = Build(PriorKnowledge::kGood, IdimDifferentiator::kConventional);
  IdimRunOptions run;
  run.estimator = IdimEstimator::kInstrumentalVariables;
  IdimResult result;
  EXPECT_FALSE(RunIdim(f.model, good, run, f.theta0, nullptr, &result, &error));
  EXPECT_NE(error.find("needs a closed-loop auxiliary model"), std::string::npos);
}

// The second cause: the instruments' accelerations are central differences of the simulated
// velocities, which follow the motion, not the recorded sample-instant q''(t_k).
// Two callers of one θ at the same time share one simulation (the IV runs that start together
// from θ^0); motion_only keeps time, q, q' and tau with the same numbers and drops the rest.
TEST(IdimTest, AuxiliaryModelSimulatesEachThetaOnceAndKeepsTheMotion) {
  const Fixture& f = GetFixture();
  ClosedLoopAuxiliaryModel slim(f.reference.get(), f.controller, /*cache_capacity=*/1,
                                /*motion_only=*/true);
  std::shared_ptr<const data::RobotSimulation> a, b, full_simulation;
  std::string error_a, error_b, error;
  bool ok_b = false;
  std::thread other([&] { ok_b = slim.Simulate(f.model, f.theta0, &b, &error_b); });
  const bool ok_a = slim.Simulate(f.model, f.theta0, &a, &error_a);
  other.join();
  ASSERT_TRUE(ok_a && ok_b) << error_a << error_b;
  EXPECT_EQ(slim.num_simulations(), 1);
  EXPECT_EQ(a.get(), b.get());
  ClosedLoopAuxiliaryModel full(f.reference.get(), f.controller, /*cache_capacity=*/1);
  ASSERT_TRUE(full.Simulate(f.model, f.theta0, &full_simulation, &error)) << error;
  EXPECT_EQ(a->time, full_simulation->time);
  EXPECT_EQ(a->q, full_simulation->q);
  EXPECT_EQ(a->qd, full_simulation->qd);
  EXPECT_EQ(a->tau, full_simulation->tau);
  EXPECT_EQ(a->qdd.size(), 0);
  EXPECT_EQ(a->q_reference.size(), 0);
  EXPECT_EQ(a->tau_motor.size(), 0);
  EXPECT_EQ(full_simulation->qdd.rows(), full_simulation->q.rows());
}

TEST(IdimTest, MotionAccelerationsAreCentralDifferencesOfVelocity) {
  Eigen::MatrixXd qd(5, 2);
  qd << 0, 1, 1, 1, 4, 2, 9, 3, 16, 5;
  const Eigen::MatrixXd qdd = MotionAccelerations(qd, 10.0);
  EXPECT_DOUBLE_EQ(qdd(0, 0), 10.0);   // one-sided at the ends
  EXPECT_DOUBLE_EQ(qdd(2, 0), 40.0);   // (9 − 1) / (2 · 0.1)
  EXPECT_DOUBLE_EQ(qdd(4, 1), 20.0);
  // On the simulated record the recorded accelerations and the motion's differ where motor 6
  // is held by Coulomb friction while joints 5 and 6 turn (q5' ≈ −q6'): measured, the
  // decimated recorded q5'' deviates from the decimated motion acceleration by far more than
  // the motion-consistent one does.
  const Fixture& f = GetFixture();
  const data::RobotSimulation& sim = f.experiment.simulation;
  const Eigen::MatrixXd motion = MotionAccelerations(sim.qd, 5000.0);
  Eigen::MatrixXd second_difference(sim.q.rows(), 6);
  for (int j = 0; j < 6; ++j) {
    second_difference.col(j) = data::CentralDifference(data::CentralDifference(sim.q.col(j),
                                                                              2e-4), 2e-4);
  }
  Eigen::MatrixXd d_recorded, d_motion, d_reference;
  std::string error;
  ASSERT_TRUE(data::DecimateColumns(sim.qdd, 100, 1, &d_recorded, &error)) << error;
  ASSERT_TRUE(data::DecimateColumns(motion, 100, 1, &d_motion, &error)) << error;
  ASSERT_TRUE(data::DecimateColumns(second_difference, 100, 1, &d_reference, &error)) << error;
  const Eigen::Index inner = d_reference.rows() - 10;
  auto deviation = [&](const Eigen::MatrixXd& m) {
    return (m.col(4).segment(5, inner) - d_reference.col(4).segment(5, inner)).norm() /
           d_reference.col(4).segment(5, inner).norm();
  };
  EXPECT_LT(deviation(d_motion), 0.02);
  EXPECT_GT(deviation(d_recorded), 0.2);
}

// The fast IV solve (normal products) and the common pivoted-QR path give the same estimate,
// covariance (Brunot et al. (2018) eq. 8) and diagnostics for the same instruments; the iteration
// built on the fast solve converges like the common one.
TEST(IdimTest, FastIvPathAgreesWithCommonPath) {
  const Fixture& f = GetFixture();
  const IdimSystem system = Build(PriorKnowledge::kGood, IdimDifferentiator::kIrw1);
  ClosedLoopAuxiliaryModel auxiliary(f.reference.get(), f.controller);
  std::shared_ptr<const data::RobotSimulation> sim;
  std::string error;
  ASSERT_TRUE(auxiliary.Simulate(f.model, f.theta0, &sim, &error)) << error;
  Eigen::MatrixXd z;
  Eigen::VectorXd tau_s;
  ASSERT_TRUE(ProcessLikeSystem(f.model, system, sim->q, sim->qd, sim->qdd, sim->tau, &z, &tau_s,
                                &error))
      << error;
  LinearLeastSquaresOptions options;
  options.row_blocks = system.blocks;
  const LinearLeastSquaresSummary common = SolveInstrumentalVariables(z, system.x, system.y,
                                                                      options);
  const LinearLeastSquaresSummary fast =
      SolveIdimIvNormalProducts(z, system.x, system.y, system.blocks, common.condition_number);
  ASSERT_TRUE(common.success && fast.success) << common.message << fast.message;
  EXPECT_LT((fast.theta - common.theta).norm(), 1e-9 * common.theta.norm());
  EXPECT_LT((fast.covariance - common.covariance).norm(), 1e-7 * common.covariance.norm());
  EXPECT_NEAR(fast.relative_error, common.relative_error, 1e-12);
  EXPECT_LT((fast.block_sigma - common.block_sigma).norm(), 1e-9 * common.block_sigma.norm());
  // Whole iterations differ only through the solve (1e-9 above); they are not compared here
  // because the common path's pivoted QR makes that too slow for a unit test. Measured once
  // (good knowledge, IRWSM1, this record): both converge in the same number of iterations and
  // the essential parameters differ by at most 0.03σ (tiny solve differences are amplified a
  // little by the Coulomb sign switches of the auxiliary simulation).
}

// The IV iteration forms the Gram blocks Z_jᵀZ_j of the covariance (Brunot et al. (2018) eq. 8)
// once, for the instruments of the final estimate, rather than at every solve: the covariance
// of a run equals that of the fast solve on the instruments of the estimate it stopped at
// (those of θ^0 after one iteration, of θ^1 after two), formed independently; with and without
// the HAC covariance (whose pass over the instruments then forms the blocks) it is bitwise the
// same. Decimated (instruments held whole: bitwise the solve's) and undecimated (products
// accumulated piece by piece, against the whole instruments: to round-off).
TEST(IdimTest, IvCovarianceFormedOnceEqualsThatOfTheFinalInstruments) {
  const Fixture& f = GetFixture();
  ClosedLoopAuxiliaryModel auxiliary(f.reference.get(), f.controller, /*cache_capacity=*/4,
                                     /*motion_only=*/true);
  for (PriorKnowledge knowledge : {PriorKnowledge::kGood, PriorKnowledge::kNone}) {
    const IdimSystem system = Build(knowledge, IdimDifferentiator::kConventional);
    const bool decimated = system.options.decimation_factor > 1;
    const std::string name = PriorKnowledgeName(knowledge);
    IdimRunOptions run;
    run.estimator = IdimEstimator::kInstrumentalVariables;
    std::string error;
    Eigen::VectorXd theta_start = f.theta0;
    for (int iterations : {1, 2}) {
      run.iv.max_iterations = iterations;
      run.hac = true;
      IdimResult with_hac, without_hac;
      ASSERT_TRUE(RunIdim(f.model, system, run, f.theta0, &auxiliary, &with_hac, &error)) << error;
      ASSERT_EQ(with_hac.iterations, iterations) << name;
      ASSERT_TRUE(with_hac.hac.success) << with_hac.hac.message;
      // The independent solve on the instruments of the last estimate's θ^(it−1).
      std::shared_ptr<const data::RobotSimulation> sim;
      ASSERT_TRUE(auxiliary.Simulate(f.model, theta_start, &sim, &error)) << error;
      const Eigen::MatrixXd qdd = MotionAccelerations(sim->qd, 5000.0);
      Eigen::MatrixXd z;
      ASSERT_TRUE(ProcessLikeSystem(f.model, system, sim->q, sim->qd, qdd, Eigen::MatrixXd(), &z,
                                    nullptr, &error))
          << error;
      const LinearLeastSquaresSummary direct = SolveIdimIvNormalProducts(
          z, system.x, system.y, system.blocks, with_hac.fit.condition_number);
      ASSERT_TRUE(direct.success) << direct.message;
      ASSERT_EQ(with_hac.fit.covariance.rows(), direct.covariance.rows()) << name;
      if (decimated) {
        EXPECT_EQ((with_hac.fit.theta - direct.theta).cwiseAbs().maxCoeff(), 0.0) << name;
        EXPECT_EQ((with_hac.fit.covariance - direct.covariance).cwiseAbs().maxCoeff(), 0.0)
            << name << ", " << iterations << " iterations";
      } else {
        EXPECT_LE((with_hac.fit.theta - direct.theta).norm(), 1e-9 * direct.theta.norm()) << name;
        EXPECT_LE((with_hac.fit.covariance - direct.covariance).norm(),
                  1e-9 * direct.covariance.norm())
            << name << ", " << iterations << " iterations";
      }
      EXPECT_EQ((with_hac.fit.standard_deviation - with_hac.fit.covariance.diagonal().cwiseSqrt())
                    .cwiseAbs()
                    .maxCoeff(),
                0.0);
      if (iterations == 2) {
        run.hac = false;
        ASSERT_TRUE(RunIdim(f.model, system, run, f.theta0, &auxiliary, &without_hac, &error))
            << error;
        EXPECT_FALSE(without_hac.hac.success);
        EXPECT_EQ((without_hac.fit.theta - with_hac.fit.theta).cwiseAbs().maxCoeff(), 0.0) << name;
        EXPECT_EQ((without_hac.fit.covariance - with_hac.fit.covariance).cwiseAbs().maxCoeff(), 0.0)
            << name;
      }
      theta_start = with_hac.fit.theta;
    }
  }
}

// The decimated instruments of θ^0 formed once and shared by the runs on systems of the same
// decimation (ClosedLoopAuxiliaryModel::SharedDecimatedInstruments): each system's kept rows of
// them are bitwise the instruments ProcessLikeSystem forms for it, and an IV run with them is
// bitwise the run of an auxiliary model that shares nothing (no cached simulation).
TEST(IdimTest, SharedFirstInstrumentsEqualIndependentOnes) {
  const Fixture& f = GetFixture();
  ClosedLoopAuxiliaryModel sharing(f.reference.get(), f.controller, /*cache_capacity=*/1,
                                   /*motion_only=*/true);
  ClosedLoopAuxiliaryModel alone(f.reference.get(), f.controller, /*cache_capacity=*/0,
                                 /*motion_only=*/true);
  std::string error;
  const IdimSystem conventional = Build(PriorKnowledge::kPoor, IdimDifferentiator::kConventional);
  std::shared_ptr<const Eigen::MatrixXd> shared;
  // Not before θ^0 is simulated (cached), nor for another θ, nor without decimation.
  ASSERT_TRUE(sharing.SharedDecimatedInstruments(f.model, conventional, f.theta0, &shared, &error));
  EXPECT_EQ(shared, nullptr);
  std::shared_ptr<const data::RobotSimulation> sim;
  ASSERT_TRUE(sharing.Simulate(f.model, f.theta0, &sim, &error)) << error;
  ASSERT_TRUE(
      sharing.SharedDecimatedInstruments(f.model, conventional, f.theta_true, &shared, &error));
  EXPECT_EQ(shared, nullptr);
  const IdimSystem undecimated = Build(PriorKnowledge::kNone, IdimDifferentiator::kConventional);
  ASSERT_TRUE(sharing.SharedDecimatedInstruments(f.model, undecimated, f.theta0, &shared, &error));
  EXPECT_EQ(shared, nullptr);
  // Another differentiator and a selection with other rows (a higher velocity threshold).
  IdimPreprocessingOptions options =
      KnowledgePreprocessing(PriorKnowledge::kPoor, IdimDifferentiator::kIrw1, 5000.0);
  options.select_samples = true;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.2);
  IdimSystem irw1;
  ASSERT_TRUE(BuildIdimSystem(f.model, f.q_measured, f.tau_measured, options, &irw1, &error))
      << error;
  ASSERT_LT(irw1.kept_rows.size(), conventional.kept_rows.size());
  const Eigen::MatrixXd qdd = MotionAccelerations(sim->qd, 5000.0);
  const Eigen::MatrixXd* first = nullptr;
  const std::vector<const IdimSystem*> systems = {&conventional, &irw1};
  for (const IdimSystem* system : systems) {
    ASSERT_TRUE(sharing.SharedDecimatedInstruments(f.model, *system, f.theta0, &shared, &error))
        << error;
    ASSERT_NE(shared, nullptr);
    if (first == nullptr) first = shared.get();
    EXPECT_EQ(shared.get(), first);  // formed once
    ASSERT_EQ(shared->rows(), 6 * system->num_samples);
    Eigen::MatrixXd z;
    ASSERT_TRUE(ProcessLikeSystem(f.model, *system, sim->q, sim->qd, qdd, Eigen::MatrixXd(), &z,
                                  nullptr, &error))
        << error;
    ASSERT_EQ(z.rows(), static_cast<Eigen::Index>(system->kept_rows.size()));
    double largest = 0.0;
    for (size_t p = 0; p < system->kept_rows.size(); ++p) {
      largest =
          std::max(largest, (z.row(p) - shared->row(system->kept_rows[p])).cwiseAbs().maxCoeff());
    }
    EXPECT_EQ(largest, 0.0);
  }
  IdimRunOptions run;
  run.estimator = IdimEstimator::kInstrumentalVariables;
  run.iv.max_iterations = 2;
  IdimResult with_sharing, without;
  ASSERT_TRUE(RunIdim(f.model, irw1, run, f.theta0, &sharing, &with_sharing, &error)) << error;
  ASSERT_TRUE(RunIdim(f.model, irw1, run, f.theta0, &alone, &without, &error)) << error;
  EXPECT_EQ((with_sharing.fit.theta - without.fit.theta).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ((with_sharing.fit.covariance - without.fit.covariance).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(with_sharing.torque_change, without.torque_change);
  ASSERT_TRUE(with_sharing.hac.success && without.hac.success);
  EXPECT_EQ((with_sharing.hac.covariance - without.hac.covariance).cwiseAbs().maxCoeff(), 0.0);
}

// Acceptance, good prior knowledge: every essential parameter's true value within 3
// standard deviations of each method's estimate — with the σ of σ²(XᵀX)^{-1} / Brunot et al. (2018)
// eq. 8 AND with the HAC σ. Measured on this 5 s record (build/bin/tx40_bias
// --duration_s=5): largest normalised errors 2.4σ (LS), 2.1σ (IV conv.), 1.9σ (IV IRWSM1),
// 2.7σ (IV IRWSM2); with the HAC σ 2.4, 2.5, 2.0, 2.2σ. Before the selection guard band and
// the motion-consistent instrument accelerations, the IV variants had 2–5 of the 28 beyond 3σ
// (up to 9σ on ia5/ia6/fc4).
TEST(IdimAcceptanceTest, GoodKnowledgeEveryMethodWithinThreeSigma) {
  const Fixture& f = GetFixture();
  ClosedLoopAuxiliaryModel auxiliary(f.reference.get(), f.controller);
  const IdimSystem conventional = Build(PriorKnowledge::kGood, IdimDifferentiator::kConventional);
  const IdimSystem irw1 = Build(PriorKnowledge::kGood, IdimDifferentiator::kIrw1);
  const IdimSystem irw2 = Build(PriorKnowledge::kGood, IdimDifferentiator::kIrw2);
  const IdimResult ls = RunMethod(conventional, IdimEstimator::kLeastSquares, nullptr);
  const IdimResult iv = RunMethod(conventional, IdimEstimator::kInstrumentalVariables, &auxiliary);
  const IdimResult iv1 = RunMethod(irw1, IdimEstimator::kInstrumentalVariables, &auxiliary);
  const IdimResult iv2 = RunMethod(irw2, IdimEstimator::kInstrumentalVariables, &auxiliary);
  for (const IdimResult* r : {&ls, &iv, &iv1, &iv2}) {
    EXPECT_TRUE(Outside3Sigma(*r).empty()) << Join(Outside3Sigma(*r));
    ASSERT_TRUE(r->hac.success) << r->hac.message;
    EXPECT_TRUE(Outside3Sigma(*r, /*hac=*/true).empty()) << Join(Outside3Sigma(*r, true));
    EXPECT_LT(r->fit.relative_error, 0.0466);  // within the order of Table 3 (4.66 %)
  }
  for (const IdimResult* r : {&iv, &iv1, &iv2}) {
    EXPECT_TRUE(r->converged) << r->message;
    EXPECT_LE(r->iterations, 5);
  }
}

// The first cause of the former bias: without the guard band, the rows next to the excluded
// (rest) rows carry the stiction that the decimation filter smears out of the rest phases; the
// residual at the true θ on the rows the guard band drops is several times that on the rows it
// keeps.
TEST(IdimAcceptanceTest, GuardBandRemovesTheRowsNextToRest) {
  const Fixture& f = GetFixture();
  IdimPreprocessingOptions options =
      KnowledgePreprocessing(PriorKnowledge::kGood, IdimDifferentiator::kConventional, 5000.0);
  options.select_samples = true;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.05);
  options.selection_guard_rows = 0;
  options.selection_guard_s = 0.0;
  IdimSystem plain;
  std::string error;
  ASSERT_TRUE(BuildIdimSystem(f.model, f.q_measured, f.tau_measured, options, &plain, &error))
      << error;
  const IdimSystem guarded = Build(PriorKnowledge::kGood, IdimDifferentiator::kConventional);
  EXPECT_LT(guarded.x.rows(), plain.x.rows());
  EXPECT_NE(guarded.selection_report.find("guard band:"), std::string::npos);
  // Every guarded row is a plain row, and none lies within 5 rows of an excluded one.
  std::vector<char> plain_kept(6 * plain.num_samples, 0);
  for (int r : plain.kept_rows) plain_kept[r] = 1;
  for (int r : guarded.kept_rows) {
    ASSERT_TRUE(plain_kept[r]);
    const int j = r / plain.num_samples, k = r % plain.num_samples;
    for (int d = -5; d <= 5; ++d) {
      if (k + d >= 0 && k + d < plain.num_samples) {
        EXPECT_TRUE(plain_kept[j * plain.num_samples + k + d]) << "row " << r;
      }
    }
  }
  // Residual at the true θ: rows dropped by the guard band vs rows kept.
  const Eigen::VectorXd r_plain = plain.y - plain.x * f.theta_true;
  std::vector<char> guarded_kept(6 * plain.num_samples, 0);
  for (int r : guarded.kept_rows) guarded_kept[r] = 1;
  double dropped = 0, kept = 0;
  int n_dropped = 0, n_kept = 0;
  for (size_t i = 0; i < plain.kept_rows.size(); ++i) {
    if (guarded_kept[plain.kept_rows[i]]) {
      kept += r_plain[i] * r_plain[i];
      ++n_kept;
    } else {
      dropped += r_plain[i] * r_plain[i];
      ++n_dropped;
    }
  }
  EXPECT_GT(std::sqrt(dropped / n_dropped), 4.0 * std::sqrt(kept / n_kept));
}

// Poor knowledge: IDIM-LS degrades visibly (relative error ≥ 5× that of IDIM-IV IRWSM1; with
// the white-residual σ many essential parameters lie beyond 3σ), while IDIM-IV IRWSM1 stays
// within 3σ of the truth with the HAC σ. The residuals are not white here (lag-1
// autocorrelation ≈ 0.16), which makes eq. 8 optimistic: measured on this record, the largest
// normalised error (fc3) is 3.0σ with eq. 8 and 2.8σ with the HAC σ — the HAC σ is the one this
// check uses (README, TX40 study); eq. 8 is allowed one parameter beyond 3σ.
TEST(IdimAcceptanceTest, PoorKnowledgeLsDegradesIvIrwsm1DoesNot) {
  const Fixture& f = GetFixture();
  ClosedLoopAuxiliaryModel auxiliary(f.reference.get(), f.controller);
  const IdimResult ls =
      RunMethod(Build(PriorKnowledge::kPoor, IdimDifferentiator::kConventional),
          IdimEstimator::kLeastSquares, nullptr);
  const IdimResult iv1 = RunMethod(Build(PriorKnowledge::kPoor, IdimDifferentiator::kIrw1),
                             IdimEstimator::kInstrumentalVariables, &auxiliary);
  EXPECT_GE(Outside3Sigma(ls).size(), 5u) << Join(Outside3Sigma(ls));
  EXPECT_GT(ls.fit.relative_error, 5.0 * iv1.fit.relative_error);
  ASSERT_TRUE(iv1.hac.success) << iv1.hac.message;
  EXPECT_TRUE(Outside3Sigma(iv1, /*hac=*/true).empty()) << Join(Outside3Sigma(iv1, true));
  EXPECT_LE(Outside3Sigma(iv1).size(), 1u) << Join(Outside3Sigma(iv1));
  EXPECT_TRUE(iv1.converged) << iv1.message;
}

// The undecimated TX40 system without prior knowledge (IRW smoothing, rows below 0.05 rad/s
// left out), once with X held and once streamed (its pieces formed from the states on demand).
bool BuildHeldAndStreamed(const Fixture& f, IdimSystem* held, IdimSystem* streamed,
                          std::string* error) {
  IdimPreprocessingOptions options =
      KnowledgePreprocessing(PriorKnowledge::kNone, IdimDifferentiator::kIrw1, 5000.0);
  options.select_samples = true;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.05);
  if (!BuildIdimSystem(f.model, f.q_measured, f.tau_measured, options, held, error)) return false;
  options.stream_regressor = true;
  return BuildIdimSystem(f.model, f.q_measured, f.tau_measured, options, streamed, error);
}

// On the undecimated TX40 system (5 s, 5 kHz), a streamed X gives the estimates of the held X:
// LS (tall-skinny QR over pieces formed from the states) and one IDIM-IV iteration (products of
// the instruments with X formed beside them, residual sums of squares from X's block products,
// HAC covariance from the instruments' pieces), up to round-off.
TEST(IdimTest, StreamedRegressorGivesTheEstimatesOfTheHeldOne) {
  const Fixture& f = GetFixture();
  IdimSystem held, streamed;
  std::string error;
  ASSERT_TRUE(BuildHeldAndStreamed(f, &held, &streamed, &error)) << error;
  ASSERT_TRUE(streamed.streamed);
  ASSERT_EQ(streamed.x.rows(), 0);
  ClosedLoopAuxiliaryModel auxiliary(f.reference.get(), f.controller);
  for (IdimEstimator estimator :
       {IdimEstimator::kLeastSquares, IdimEstimator::kInstrumentalVariables}) {
    IdimRunOptions run;
    run.estimator = estimator;
    run.iv.max_iterations = 1;
    IdimResult a, b;
    ASSERT_TRUE(RunIdim(f.model, held, run, f.theta0, &auxiliary, &a, &error)) << error;
    ASSERT_TRUE(RunIdim(f.model, streamed, run, f.theta0, &auxiliary, &b, &error)) << error;
    const std::string name = IdimEstimatorName(estimator);
    // In units of each parameter's standard deviation, and relative.
    EXPECT_LE(
        ((b.fit.theta - a.fit.theta).cwiseQuotient(a.fit.standard_deviation)).cwiseAbs().maxCoeff(),
        1e-7)
        << name;
    EXPECT_LE((b.fit.theta - a.fit.theta).norm(), 1e-9 * a.fit.theta.norm()) << name;
    EXPECT_LE((b.fit.covariance - a.fit.covariance).norm(), 1e-8 * a.fit.covariance.norm()) << name;
    EXPECT_LE((b.fit.residual - a.fit.residual).norm(), 1e-8 * a.fit.residual.norm()) << name;
    EXPECT_LE((b.fit.block_rms - a.fit.block_rms).norm(), 1e-8 * a.fit.block_rms.norm()) << name;
    EXPECT_NEAR(b.fit.condition_number, a.fit.condition_number, 1e-7 * a.fit.condition_number)
        << name;
    ASSERT_TRUE(a.hac.success && b.hac.success) << name << ": " << b.hac.message;
    EXPECT_LE((b.hac.covariance - a.hac.covariance).norm(), 1e-8 * a.hac.covariance.norm()) << name;
  }
}

// Gautier's WLS on a streamed X: per-joint σ, estimates, covariance and HAC of the held one.
TEST(IdimTest, StreamedRegressorGivesTheWlsEstimatesOfTheHeldOne) {
  const Fixture& f = GetFixture();
  IdimSystem held, streamed;
  std::string error;
  ASSERT_TRUE(BuildHeldAndStreamed(f, &held, &streamed, &error)) << error;
  ASSERT_TRUE(streamed.streamed);
  ASSERT_EQ(streamed.x.rows(), 0);
  IdimRunOptions run;
  run.estimator = IdimEstimator::kWeightedLeastSquares;
  IdimResult a, b;
  ASSERT_TRUE(RunIdim(f.model, held, run, f.theta0, nullptr, &a, &error)) << error;
  ASSERT_TRUE(RunIdim(f.model, streamed, run, f.theta0, nullptr, &b, &error)) << error;
  const auto relative = [](const Eigen::MatrixXd& x, const Eigen::MatrixXd& reference) {
    return (x - reference).norm() / reference.norm();
  };
  ASSERT_EQ(a.fit.block_sigma.size(), 6);
  EXPECT_LE(relative(b.fit.block_sigma, a.fit.block_sigma), 1e-12);
  EXPECT_LE(relative(b.fit.theta, a.fit.theta), 1e-12);
  EXPECT_LE(relative(b.fit.standard_deviation, a.fit.standard_deviation), 1e-12);
  EXPECT_LE(relative(b.fit.covariance, a.fit.covariance), 1e-12);
  EXPECT_LE(relative(b.fit.residual, a.fit.residual), 1e-12);
  EXPECT_NEAR(b.fit.condition_number, a.fit.condition_number, 1e-10 * a.fit.condition_number);
  ASSERT_TRUE(a.hac.success && b.hac.success) << b.hac.message;
  EXPECT_LE(relative(b.hac.covariance, a.hac.covariance), 1e-10);
}

// No knowledge: IDIM-IV IRWSM1 converges (and IDIM-LS without filters is unusable).
TEST(IdimAcceptanceTest, NoKnowledgeIvIrwsm1Converges) {
  const Fixture& f = GetFixture();
  ClosedLoopAuxiliaryModel auxiliary(f.reference.get(), f.controller);
  const IdimResult iv1 = RunMethod(Build(PriorKnowledge::kNone, IdimDifferentiator::kIrw1),
                             IdimEstimator::kInstrumentalVariables, &auxiliary);
  EXPECT_TRUE(iv1.converged) << iv1.message;
  EXPECT_LT(iv1.fit.relative_error, 0.10);
  EXPECT_TRUE(Outside3Sigma(iv1).empty()) << Join(Outside3Sigma(iv1));  // measured: max 2.0σ
  const int zz1r = 0;
  EXPECT_NEAR(iv1.fit.theta[zz1r], f.theta_true[zz1r], 0.02 * f.theta_true[zz1r]);
  const IdimResult ls = RunMethod(Build(PriorKnowledge::kNone, IdimDifferentiator::kConventional),
                            IdimEstimator::kLeastSquares, nullptr);
  EXPECT_GT(std::abs(ls.fit.theta[zz1r] - f.theta_true[zz1r]), 0.3 * f.theta_true[zz1r]);
}

}  // namespace
}  // namespace dynid::solvers
