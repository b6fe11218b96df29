#include "dynid/models/tx40.h"

#include <algorithm>
#include <random>

#include <Eigen/Eigenvalues>
#include <gtest/gtest.h>

#include "dynid/models/base_parameters.h"

namespace dynid::models {
namespace {

int CountInertial(const SerialRobot& robot, const BaseParameterSet& base) {
  int count = 0;
  for (int index : base.kept) {
    if (static_cast<int>(robot.parameter_info()[index].kind) <= static_cast<int>(ParameterKind::kM))
      ++count;
  }
  return count;
}

TEST(Tx40Test, BaseParameterCountAndEssentialNames) {
  for (CouplingForm form : {CouplingForm::kGautier, CouplingForm::kPhysical}) {
    for (bool offsets : {false, true}) {
      Tx40Options options;
      options.coupling_form = form;
      options.torque_offsets = offsets;
      const SerialRobot robot = MakeTx40(options);
      EXPECT_EQ(robot.num_parameters(), offsets ? 87 : 81);
      BaseParameterSet base;
      std::string error;
      ASSERT_TRUE(ComputeKhalilBaseParameters(robot, &base, &error)) << error;
      EXPECT_EQ(base.size(), offsets ? 61 : 55);
      EXPECT_EQ(CountInertial(robot, base), 36);
      for (const std::string& name : Tx40EssentialNames()) {
        EXPECT_GE(base.Index(name), 0) << name << " is not a base parameter";
      }
    }
  }
  EXPECT_EQ(Tx40EssentialNames().size(), 28u);
}

TEST(Tx40Test, CadLinksArePhysicallyConsistent) {
  const SerialRobot robot = MakeTx40();
  for (int j = 0; j < 6; ++j) {
    const LinkInertia link = robot.GetLinkInertia(j);
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> pseudo(link.PseudoInertia());
    EXPECT_GT(pseudo.eigenvalues().minCoeff(), 0.0) << "link " << j + 1;
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 6, 6>> spatial(link.SpatialInertia());
    EXPECT_GT(spatial.eigenvalues().minCoeff(), 0.0) << "link " << j + 1;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const Eigen::VectorXd lower = Tx40JointLowerLimitRad(), upper = Tx40JointUpperLimitRad();
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::VectorXd q(6);
    for (int j = 0; j < 6; ++j) q[j] = lower[j] + unit(rng) * (upper[j] - lower[j]);
    Eigen::MatrixXd mass;
    robot.MassMatrix(q, &mass);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(mass);
    EXPECT_GT(eig.eigenvalues().minCoeff(), 0.0);
  }
}

TEST(Tx40Test, TransmissionConservesPower) {
  const Eigen::MatrixXd r = Tx40MotorFromJoint();
  EXPECT_EQ(r(5, 4), 32.0);
  EXPECT_EQ(r(3, 3), -48.0);
  std::mt19937 rng(2);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd qd(4, 6), tau_m(4, 6);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 6; ++j) {
      qd(i, j) = normal(rng);
      tau_m(i, j) = normal(rng);
    }
  }
  const Eigen::MatrixXd qd_m = qd * r.transpose();  // rows: q_mᵀ = qᵀ Rᵀ
  Eigen::MatrixXd qd_back, tau;
  Tx40MotorToJoint(qd_m, tau_m, &qd_back, &tau);
  EXPECT_LE((qd_back - qd).norm(), 1e-12);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(tau.row(i).dot(qd.row(i)), tau_m.row(i).dot(qd_m.row(i)), 1e-10);
  }
  // Motor 6 torque reaches joints 5 and 6 with N6 (T(5,6) = N6, 1-based).
  EXPECT_EQ(Tx40JointTorqueFromMotorTorque()(4, 5), 32.0);
}

}  // namespace
}  // namespace dynid::models
