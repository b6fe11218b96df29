#include "dynid/data/model_closed_loop.h"

#include <cmath>

#include <gtest/gtest.h>

#include "dynid/data/robot_simulator.h"
#include "dynid/models/scara3.h"
#include "dynid/models/scara3_model.h"

namespace dynid::data {
namespace {

// q_j(t) = a_j sin(w_j t) (+ 0.15 m on the prismatic joint).
class SineReference : public JointTrajectory {
 public:
  int num_joints() const override { return 3; }
  double duration() const override { return 4.0; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override {
    const Eigen::Vector3d a(0.8, 1.0, 0.05), w(1.3, 2.1, 3.0);
    *q = a.cwiseProduct((w * t).array().sin().matrix());
    (*q)(2) += 0.15;
    *qd = a.cwiseProduct(w).cwiseProduct((w * t).array().cos().matrix());
    *qdd = -a.cwiseProduct(w).cwiseProduct(w).cwiseProduct((w * t).array().sin().matrix());
  }
};

// The closed-form SCARA in the generic loop follows the same motion as the serial-robot SCARA in
// data::SimulateClosedLoop (same control law, same RK4 substeps, independent dynamics).
TEST(ModelClosedLoopTest, AgreesWithTheRobotSimulator) {
  const models::SerialRobot robot = models::MakeScara3();
  const SineReference reference;
  RobotSimulatorOptions options;
  options.control_rate_hz = 100.0;
  options.integration_substeps = 10;
  options.gains = TunePidGains(robot, Eigen::Vector3d(0.0, 0.0, 0.15), 2.0);
  options.preload_integrator = true;
  options.velocity_from_encoder = true;
  RobotSimulation sim;
  std::string error;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &sim, &error)) << error;
  const int num = static_cast<int>(sim.time.size());

  const models::Scara3Model model(models::Scara3BaseParametersFromLinks());
  const ModelTracking tracking = SimulateModelClosedLoop(
      model, model.NominalParameters(), reference, options.gains, 0.01, num, 10);
  ASSERT_TRUE(tracking.ok) << tracking.message;
  ASSERT_EQ(tracking.q.rows(), num);
  EXPECT_LT((tracking.q - sim.q).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((tracking.q_reference - sim.q_reference).cwiseAbs().maxCoeff(), 1e-15);
  // The PID tracks: errors of a few 0.1 rad at most for this 2 Hz loop.
  EXPECT_LT((tracking.q_reference - tracking.q).cwiseAbs().maxCoeff(), 0.5);
}

// A plant whose mass matrix is not positive definite stops the loop with a message.
TEST(ModelClosedLoopTest, ReportsAnIndefiniteMassMatrix) {
  const models::Scara3Model model(models::Scara3BaseParametersFromLinks());
  models::Scara3Model::ParameterVector theta = model.NominalParameters();
  theta(0) = -theta(0);
  PidGains gains;
  gains.kp = gains.ki = gains.kd = Eigen::Vector3d::Ones();
  const ModelTracking tracking =
      SimulateModelClosedLoop(model, theta, SineReference(), gains, 0.01, 50, 2);
  EXPECT_FALSE(tracking.ok);
  EXPECT_NE(tracking.message.find("not positive definite"), std::string::npos);
}

}  // namespace
}  // namespace dynid::data
