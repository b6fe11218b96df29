// The study's simulated TX40 experiment (experiments/tx40_study/tx40_experiment.h): its size,
// tracking and condition number, and the essential parameters the whole chain selects; and the
// substitute reference of real records without one (tx40_record.h: SmoothedReference).
#include "experiments/tx40_study/tx40_experiment.h"

#include <glog/logging.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "dynid/models/base_parameters.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/essential_parameters.h"
#include "dynid/solvers/linear_least_squares.h"
#include "experiments/tx40_study/tx40_record.h"

namespace dynid::tx40_study {
namespace {

using data::RobotSimulation;

// The substitute reference of a record without one: a 1 Hz motion with quantisation-sized noise,
// smoothed at 50 Hz, gives back the motion, its velocity and its acceleration.
TEST(Tx40SubstituteReferenceTest, SmoothsMeasuredPositions) {
  const double fs = 5000.0, pi = std::acos(-1.0), w = 2.0 * pi;
  const int ns = 10001;
  std::mt19937 random(7);
  std::normal_distribution<double> noise(0.0, 1e-4);
  Eigen::MatrixXd q(ns, 2);
  for (int k = 0; k < ns; ++k) {
    const double t = k / fs;
    q(k, 0) = std::sin(w * t) + noise(random);
    q(k, 1) = 0.5 * std::cos(w * t) + noise(random);
  }
  std::unique_ptr<data::JointTrajectory> reference;
  std::string error;
  ASSERT_TRUE(SmoothedReference(q, fs, 50.0, &reference, &error)) << error;
  ASSERT_EQ(reference->num_joints(), 2);
  EXPECT_NEAR(reference->duration(), (ns - 1) / fs, 1e-9);
  Eigen::VectorXd p, v, a;
  for (double t : {0.3, 0.9, 1.55}) {
    reference->Evaluate(t, &p, &v, &a);
    EXPECT_NEAR(p[0], std::sin(w * t), 1e-4) << t;
    EXPECT_NEAR(v[0], w * std::cos(w * t), 0.01 * w) << t;
    EXPECT_NEAR(a[1], -0.5 * w * w * std::cos(w * t), 0.05 * w * w) << t;
  }
  // A cut-off at or above Nyquist is refused with a message.
  EXPECT_FALSE(SmoothedReference(q, fs, 2500.0, &reference, &error));
  EXPECT_FALSE(error.empty());
}

TEST(Tx40ExperimentTest, ShortDefaultExperiment) {
  Tx40ExperimentOptions options;
  options.duration_s = 0.8;
  Tx40Experiment experiment;
  std::string error;
  ASSERT_TRUE(SimulateTx40Experiment(options, &experiment, &error)) << error;
  EXPECT_EQ(experiment.simulation.time.size(), 4001);
  EXPECT_EQ(experiment.base.size(), 55);
  EXPECT_LT(experiment.max_tracking_error_rad, 0.05);
  EXPECT_GT(experiment.base_regressor_condition, 1.0);
  EXPECT_TRUE(std::isfinite(experiment.base_regressor_condition_normalised));
  // The options actually used are recorded (for re-simulation by IDIM-IV).
  EXPECT_EQ(experiment.simulator_options.gains.kp.size(), 6);
  EXPECT_EQ(experiment.simulator_options.control_rate_hz, 5000.0);
}

// The condition numbers, formed from the base regressor in chunks of samples and (normalised) in
// place, equal solvers::ConditionNumber of the whole base regressor bitwise (2.5 s: 1 251 samples
// of every 10th, two chunks).
TEST(Tx40ExperimentTest, ChunkedConditionNumbersEqualTheWholeRegressors) {
  Tx40ExperimentOptions options;
  options.duration_s = 2.5;
  Tx40Experiment experiment;
  std::string error;
  ASSERT_TRUE(SimulateTx40Experiment(options, &experiment, &error)) << error;
  const RobotSimulation& sim = experiment.simulation;
  const int every = options.condition_decimation;
  const int decimated = static_cast<int>((sim.time.size() + every - 1) / every);
  ASSERT_GT(decimated, 1024);
  Eigen::MatrixXd q(decimated, 6), qd(decimated, 6), qdd(decimated, 6);
  for (int k = 0; k < decimated; ++k) {
    q.row(k) = sim.q.row(k * every);
    qd.row(k) = sim.qd.row(k * every);
    qdd.row(k) = sim.qdd.row(k * every);
  }
  models::Tx40Options tx40_options;
  tx40_options.coupling_form = options.coupling_form;
  const models::SerialRobot robot = models::MakeTx40(tx40_options);
  Eigen::MatrixXd x, x_base;
  robot.StackedRegressor(q, qd, qdd, &x);
  experiment.base.SelectColumns(x, &x_base);
  EXPECT_EQ(experiment.base_regressor_condition, solvers::ConditionNumber(x_base, false));
  EXPECT_EQ(experiment.base_regressor_condition_normalised, solvers::ConditionNumber(x_base, true));
  EXPECT_GT(experiment.base_regressor_condition, 1.0);
}

// The realistic imperfections: options checked; the motor torques are multiples of the LSB; the
// friction the model does not carry changes the applied torques (same seed, same reference) and
// the excess vanishes when switched off; the IV auxiliary options never carry it.
TEST(Tx40ExperimentTest, RealisticImperfections) {
  Tx40ExperimentOptions options;
  std::string why;
  options.friction_asymmetry = 1.0;
  EXPECT_FALSE(options.IsValid(&why));
  EXPECT_NE(why.find("friction_asymmetry"), std::string::npos) << why;
  options.friction_asymmetry = 0.0;
  options.stribeck_velocity_rad_s = 0.0;
  EXPECT_FALSE(options.IsValid(&why));
  options.stribeck_velocity_rad_s = 0.05;
  options.motor_torque_lsb_nm = -1.0;
  EXPECT_FALSE(options.IsValid(&why));

  Tx40ExperimentOptions ideal;
  ideal.duration_s = 0.6;
  ideal.torque_noise_std_nm = 0.0;
  Tx40ExperimentOptions realistic = ideal;
  ApplyImperfections(DefaultRealisticImperfections(), &realistic);
  EXPECT_EQ(realistic.torque_noise_std_nm, 0.0);
  EXPECT_GT(realistic.motor_torque_noise_std_nm, 0.0);
  realistic.motor_torque_lsb_nm = 0.01;
  Tx40Experiment a, b;
  std::string error;
  ASSERT_TRUE(SimulateTx40Experiment(ideal, &a, &error)) << error;
  ASSERT_TRUE(SimulateTx40Experiment(realistic, &b, &error)) << error;
  const Eigen::MatrixXd steps = b.simulation.tau_motor / 0.01;
  EXPECT_LT((steps - steps.array().round().matrix()).cwiseAbs().maxCoeff(), 1e-6);
  // The joint-side measured torque follows the quantised motor torque (tau = Rᵀ tau_m).
  EXPECT_LT((b.simulation.tau_measured - b.simulation.tau_motor * models::Tx40MotorFromJoint())
                .cwiseAbs()
                .maxCoeff(),
            1e-9);
  // Joint 1 moves forwards and backwards: the asymmetry (0.2 fc1 = 1.4 N m) and the Stribeck
  // excess change the torque the controller applies.
  EXPECT_GT((b.simulation.tau - a.simulation.tau).col(0).cwiseAbs().maxCoeff(), 0.5);
  EXPECT_FALSE(static_cast<bool>(b.simulator_options.unmodelled_torque));
  // Without them (and without the measurement effects) the ideal record comes back exactly.
  Tx40ExperimentOptions off = realistic;
  off.stribeck_ratio = 0.0;
  off.friction_asymmetry = 0.0;
  off.motor_torque_noise_std_nm = 0.0;
  off.motor_torque_lsb_nm = 0.0;
  Tx40Experiment c;
  ASSERT_TRUE(SimulateTx40Experiment(off, &c, &error)) << error;
  EXPECT_EQ(c.simulation.tau, a.simulation.tau);
  EXPECT_EQ(c.simulation.tau_motor, a.simulation.tau_motor);
}

// The whole chain on the default 7 s experiment: true (q, q', q'') decimated by 10, measured
// (noisy) torques, closed-form base regressor, IDIM-LS and essential-parameter elimination. The
// published essential set of Brunot et al. (2018) Table 2 must survive (the selection may keep a
// few more).
TEST(Tx40ExperimentTest, EssentialParametersContainPublishedSet) {
  Tx40ExperimentOptions options;
  Tx40Experiment experiment;
  std::string error;
  ASSERT_TRUE(SimulateTx40Experiment(options, &experiment, &error)) << error;
  const models::SerialRobot robot = models::MakeTx40();
  const RobotSimulation& sim = experiment.simulation;
  const int decimation = 10;
  const int ns = static_cast<int>((sim.time.size() + decimation - 1) / decimation);
  Eigen::MatrixXd q(ns, 6), qd(ns, 6), qdd(ns, 6);
  Eigen::VectorXd y(6 * ns);
  for (int k = 0; k < ns; ++k) {
    q.row(k) = sim.q.row(k * decimation);
    qd.row(k) = sim.qd.row(k * decimation);
    qdd.row(k) = sim.qdd.row(k * decimation);
    for (int j = 0; j < 6; ++j) y[j * ns + k] = sim.tau_measured(k * decimation, j);
  }
  Eigen::MatrixXd x, x_base;
  robot.StackedRegressor(q, qd, qdd, &x);
  experiment.base.SelectColumns(x, &x_base);
  // Essential selection with the relative error allowed to grow by 2 % of the full model's.
  const solvers::LinearLeastSquaresSummary full =
      solvers::SolveLeastSquares(x_base, y, solvers::LinearLeastSquaresOptions());
  ASSERT_TRUE(full.success) << full.message;
  solvers::EssentialParametersOptions essential_options;
  essential_options.max_relative_error_increase = 0.02 * full.relative_error;
  const solvers::EssentialParametersSummary result =
      solvers::SelectEssentialParameters(x_base, y, experiment.base.names, essential_options);
  ASSERT_TRUE(result.success) << result.message;
  EXPECT_LE(result.final_fit.relative_error, 1.02 * result.full_relative_error + 1e-12);
  EXPECT_LT(result.essential_columns.size(), 40u);
  RecordProperty("essential_parameters", static_cast<int>(result.essential_columns.size()));
  for (const std::string& name : models::Tx40EssentialNames()) {
    EXPECT_NE(std::find(result.essential_names.begin(), result.essential_names.end(), name),
              result.essential_names.end())
        << name;
  }
  // Estimates of the kept parameters are close to the simulated base values.
  for (size_t i = 0; i < result.essential_columns.size(); ++i) {
    const double truth = experiment.theta_base[result.essential_columns[i]];
    if (result.essential_names[i] == "zz1r" || result.essential_names[i] == "fv1") {
      EXPECT_NEAR(result.final_fit.theta[i], truth, 0.01 * std::abs(truth))
          << result.essential_names[i];
    }
  }
}

}  // namespace
}  // namespace dynid::tx40_study
