// Robot descriptions: URDF chains (TX40 against the hand-written model, a random chain with
// prismatic joints, a tree merged into its chain, the TIAGo arm, bad files), DH tables and drive
// descriptions.
#include "dynid/models/robot_description.h"

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dynid/models/base_parameters.h"
#include "dynid/models/dh_table.h"
#include "dynid/models/drive_description.h"
#include "dynid/models/tx40.h"
#include "dynid/models/urdf_reader.h"

namespace dynid::models {
namespace {

using ::testing::HasSubstr;

const std::string kTx40Urdf =
    std::string(DYNID_SOURCE_DIR) + "/data/robots/tx40/tx40_mdh_modified.urdf";
const std::string kTx40Drives =
    std::string(DYNID_SOURCE_DIR) + "/data/robots/tx40/tx40_drives.yaml";
const std::string kTiagoUrdf =
    std::string(DYNID_SOURCE_DIR) + "/data/robots/tiago/tiago_48_schunk.urdf";

struct States {
  Eigen::MatrixXd q, qd, qdd;
};

States RandomStates(int n, int count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  States s{Eigen::MatrixXd(count, n), Eigen::MatrixXd(count, n), Eigen::MatrixXd(count, n)};
  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < n; ++j) {
      s.q(k, j) = 2.5 * unit(rng);
      s.qd(k, j) = 2.0 * unit(rng);
      s.qdd(k, j) = 5.0 * unit(rng);
    }
  }
  return s;
}

SerialRobot BuildRobot(const ChainDescription& chain, const DriveDescription& drives) {
  std::optional<SerialRobot> robot;
  std::string error;
  EXPECT_TRUE(MakeSerialRobot(chain, drives, &robot, &error)) << error;
  return *robot;
}

// ---------------------------------------------------------------------------------------------
// TX40: URDF + drive file = MakeTx40()

TEST(UrdfReaderTest, Tx40FromUrdfAndDrivesHasTheRegressorAndBaseParametersOfMakeTx40) {
  ChainDescription chain;
  std::string error;
  ASSERT_TRUE(ReadChainDescription(kTx40Urdf, "base_link", "tool0", &chain, &error)) << error;
  ASSERT_EQ(chain.num_joints(), 6);
  EXPECT_EQ(chain.joints[0].name, "joint_1");
  EXPECT_EQ(chain.link_names[5], "link_6");
  EXPECT_THAT(chain.merged_links[5], ::testing::ElementsAre("tool0"));
  DriveDescription drives;
  ASSERT_TRUE(ReadDriveDescription(kTx40Drives, chain, &drives, &error)) << error;
  const SerialRobot robot = BuildRobot(chain, drives);
  const SerialRobot reference = MakeTx40();
  ASSERT_EQ(robot.parameter_names(), reference.parameter_names());
  ASSERT_EQ(robot.coupled_motors().size(), 1u);
  EXPECT_EQ(robot.coupled_motors()[0].name, "m6");

  const States s = RandomStates(6, 50, 3);
  Eigen::MatrixXd phi, phi_ref;
  double worst = 0.0;
  for (int k = 0; k < 50; ++k) {
    robot.Regressor(s.q.row(k).transpose(), s.qd.row(k).transpose(), s.qdd.row(k).transpose(),
                    &phi);
    reference.Regressor(s.q.row(k).transpose(), s.qd.row(k).transpose(), s.qdd.row(k).transpose(),
                        &phi_ref);
    worst = std::max(worst, (phi - phi_ref).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-10);

  BaseParameterSet base, base_ref;
  ASSERT_TRUE(ComputeBaseParameters(robot, NumericalBaseOptions(), &base, &error)) << error;
  ASSERT_TRUE(ComputeKhalilBaseParameters(reference, &base_ref, &error)) << error;
  EXPECT_TRUE(base.closed_form);
  EXPECT_EQ(base.size(), 55);
  EXPECT_EQ(base.names, base_ref.names);
  EXPECT_LT((base.grouping - base_ref.grouping).cwiseAbs().maxCoeff(), 1e-10);
  // Descriptions name the grouped parameters, e.g. zz1r = zz1 + ia1 + yy2 + ...
  EXPECT_THAT(base.descriptions[base.Index("zz1r")], HasSubstr("ia1"));
  EXPECT_EQ(base.descriptions[base.Index("xx2r")].rfind("xx2 − yy2", 0), 0u)
      << base.descriptions[base.Index("xx2r")];

  // Motor-side data convert like the hand-written TX40 interface.
  const Eigen::MatrixXd motor_q = Eigen::MatrixXd::Random(5, 6),
                        motor_tau = Eigen::MatrixXd::Random(5, 6);
  Eigen::MatrixXd q, tau, q_ref, tau_ref;
  JointPositionsFromData(drives, motor_q, &q);
  JointTorquesFromData(drives, motor_tau, &tau);
  Tx40MotorToJoint(motor_q, motor_tau, &q_ref, &tau_ref);
  EXPECT_LT((q - q_ref).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((tau - tau_ref).cwiseAbs().maxCoeff(), 1e-12);

  const std::vector<std::string> terms = DescribeDriveTerms(robot);
  ASSERT_EQ(terms.size(), 7u);
  EXPECT_EQ(terms[0], "joint_1: ia1 fv1 fc1");
  EXPECT_EQ(terms[6], "motor m6 (joint_5 + joint_6): iam6 fvm6 fcm6");
}

// ---------------------------------------------------------------------------------------------
// A random 7-joint URDF chain with prismatic joints, checked against the test's own kinematics.

struct UrdfJointSpec {
  std::string type;
  Eigen::Vector3d xyz, rpy, axis;
};
struct UrdfLinkSpec {
  double mass;
  Eigen::Vector3d com_xyz, com_rpy;
  double ixx, ixy, ixz, iyy, iyz, izz;
};

// URDF rotation convention: R = R_z(yaw) R_y(pitch) R_x(roll).
Eigen::Matrix3d Rpy(const Eigen::Vector3d& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Eigen::Vector3d::UnitZ()) *
          Eigen::AngleAxisd(rpy.y(), Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

std::string Vec(const Eigen::Vector3d& v) {
  std::ostringstream out;
  out.precision(17);
  out << v.x() << " " << v.y() << " " << v.z();
  return out.str();
}

std::string InertialXml(const UrdfLinkSpec& l) {
  std::ostringstream out;
  out.precision(17);
  out << "<inertial><origin xyz=\"" << Vec(l.com_xyz) << "\" rpy=\"" << Vec(l.com_rpy)
      << "\"/><mass value=\"" << l.mass << "\"/><inertia ixx=\"" << l.ixx << "\" ixy=\"" << l.ixy
      << "\" ixz=\"" << l.ixz << "\" iyy=\"" << l.iyy << "\" iyz=\"" << l.iyz << "\" izz=\""
      << l.izz << "\"/></inertial>";
  return out.str();
}

std::string JointXml(const std::string& name, const std::string& type, const std::string& parent,
                     const std::string& child, const Eigen::Vector3d& xyz,
                     const Eigen::Vector3d& rpy, const Eigen::Vector3d& axis,
                     const std::string& extra = "") {
  std::ostringstream out;
  out << "<joint name=\"" << name << "\" type=\"" << type << "\"><parent link=\"" << parent
      << "\"/><child link=\"" << child << "\"/><origin xyz=\"" << Vec(xyz) << "\" rpy=\""
      << Vec(rpy) << "\"/><axis xyz=\"" << Vec(axis) << "\"/>"
      << (type == "revolute" || type == "prismatic"
              ? "<limit lower=\"-3\" upper=\"3\" effort=\"100\" velocity=\"5\"/>"
              : "")
      << extra << "</joint>";
  return out.str();
}

struct RandomUrdf {
  std::string xml;
  std::vector<UrdfJointSpec> joints;
  std::vector<UrdfLinkSpec> links;
};

RandomUrdf MakeRandomUrdf(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), pos(0.0, 1.0);
  std::normal_distribution<double> normal;
  const char* types[7] = {"revolute",  "prismatic", "continuous", "revolute",
                          "prismatic", "revolute",  "revolute"};
  RandomUrdf out;
  std::ostringstream xml;
  xml << "<robot name=\"random7\"><link name=\"base\"/>";
  for (int j = 0; j < 7; ++j) {
    UrdfJointSpec joint{types[j],
                        Eigen::Vector3d(0.3 * unit(rng), 0.3 * unit(rng), 0.3 * unit(rng)),
                        Eigen::Vector3d(M_PI * unit(rng), 1.5 * unit(rng), M_PI * unit(rng)),
                        Eigen::Vector3d(normal(rng), normal(rng), normal(rng))};
    joint.axis *= 2.0;  // not normalised in the file: the reader normalises
    UrdfLinkSpec link;
    link.mass = 0.5 + 3.0 * pos(rng);
    link.com_xyz = Eigen::Vector3d(0.2 * unit(rng), 0.2 * unit(rng), 0.2 * unit(rng));
    link.com_rpy = Eigen::Vector3d(unit(rng), unit(rng), unit(rng));
    const Eigen::Vector3d principal(0.02 + 0.05 * pos(rng), 0.02 + 0.05 * pos(rng),
                                    0.02 + 0.05 * pos(rng));
    const Eigen::Matrix3d r = Rpy(Eigen::Vector3d(unit(rng), unit(rng), unit(rng)));
    const Eigen::Matrix3d i = r * principal.asDiagonal() * r.transpose();
    link.ixx = i(0, 0);
    link.ixy = i(0, 1);
    link.ixz = i(0, 2);
    link.iyy = i(1, 1);
    link.iyz = i(1, 2);
    link.izz = i(2, 2);
    const std::string parent = j == 0 ? "base" : "l" + std::to_string(j);
    const std::string child = "l" + std::to_string(j + 1);
    xml << "<link name=\"" << child << "\">" << InertialXml(link) << "</link>"
        << JointXml("j" + std::to_string(j + 1), joint.type, parent, child, joint.xyz, joint.rpy,
                    joint.axis);
    out.joints.push_back(joint);
    out.links.push_back(link);
  }
  xml << "</robot>";
  out.xml = xml.str();
  return out;
}

// Potential energy from the URDF numbers with the test's own forward kinematics.
double UrdfPotentialEnergy(const RandomUrdf& urdf, const Eigen::VectorXd& q, double g) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  double energy = 0.0;
  for (size_t j = 0; j < urdf.joints.size(); ++j) {
    const UrdfJointSpec& joint = urdf.joints[j];
    Eigen::Isometry3d origin = Eigen::Isometry3d::Identity();
    origin.linear() = Rpy(joint.rpy);
    origin.translation() = joint.xyz;
    Eigen::Isometry3d motion = Eigen::Isometry3d::Identity();
    const Eigen::Vector3d u = joint.axis.normalized();
    if (joint.type == "prismatic") {
      motion.translation() = q[j] * u;
    } else {
      motion.linear() = Eigen::AngleAxisd(q[j], u).toRotationMatrix();
    }
    t = t * origin * motion;
    const Eigen::Vector3d com = t * urdf.links[j].com_xyz;
    energy += urdf.links[j].mass * g * com.z();
  }
  return energy;
}

TEST(UrdfReaderTest, RandomSevenJointChainWithPrismaticJointsSatisfiesTheDynamicIdentities) {
  const RandomUrdf urdf = MakeRandomUrdf(5);
  ChainDescription chain;
  std::string error;
  ASSERT_TRUE(ParseUrdfChain(urdf.xml, "random7.urdf", "base", "l7", &chain, &error)) << error;
  ASSERT_EQ(chain.num_joints(), 7);
  EXPECT_EQ(chain.joints[1].type, JointType::kPrismatic);
  EXPECT_EQ(chain.joints[2].type, JointType::kRevolute);  // continuous
  SerialRobot robot = BuildRobot(chain, DefaultDrives(chain));
  // Drive terms: any values.
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> pos(0.0, 1.0);
  for (int j = 0; j < 7; ++j) {
    JointDrive drive{0.05 * pos(rng), pos(rng), pos(rng), 0.0, pos(rng) - 0.5};
    robot.SetJointDrive(j, drive);
  }
  const States s = RandomStates(7, 20, 4);
  for (int k = 0; k < 20; ++k) {
    const Eigen::VectorXd q = s.q.row(k).transpose(), qd = s.qd.row(k).transpose(),
                          qdd = s.qdd.row(k).transpose();
    // Regressor · theta = Newton–Euler.
    Eigen::VectorXd tau;
    Eigen::MatrixXd phi;
    robot.InverseDynamics(q, qd, qdd, &tau);
    robot.Regressor(q, qd, qdd, &phi);
    EXPECT_LT((phi * robot.standard_parameters() - tau).norm(), 1e-10 * (1.0 + tau.norm()));
    // Mass matrix (CRBA) = Newton–Euler columns: tau(q, q', e_i) − tau(q, q', 0).
    Eigen::MatrixXd mass;
    robot.MassMatrix(q, &mass);
    Eigen::VectorXd bias;
    robot.NonlinearEffects(q, qd, &bias);
    for (int i = 0; i < 7; ++i) {
      Eigen::VectorXd column;
      robot.InverseDynamics(q, qd, Eigen::VectorXd::Unit(7, i), &column);
      EXPECT_LT((column - bias - mass.col(i)).norm(), 1e-10 * (1.0 + mass.norm()));
    }
    EXPECT_LT((mass - mass.transpose()).norm(), 1e-12 * mass.norm());
    EXPECT_GT(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(mass).eigenvalues().minCoeff(), 0.0);
    // Potential energy from the URDF numbers (rpy convention, placements, axes, inertial
    // origins) equals the robot's; its gradient is the gravity torque.
    const double g = robot.gravity_mps2();
    EXPECT_NEAR(robot.PotentialEnergy(q), UrdfPotentialEnergy(urdf, q, g), 1e-10);
    Eigen::VectorXd gravity;
    robot.GravityTorques(q, &gravity);
    for (int i = 0; i < 7; ++i) {
      const double h = 1e-6;
      const Eigen::VectorXd e = Eigen::VectorXd::Unit(7, i) * h;
      const double derivative =
          (UrdfPotentialEnergy(urdf, q + e, g) - UrdfPotentialEnergy(urdf, q - e, g)) / (2 * h);
      EXPECT_NEAR(gravity[i], derivative, 1e-6 * (1.0 + std::abs(derivative)));
    }
    // Kinetic energy from the link twists equals ½ q'ᵀ M q' (rotor inertias included).
    EXPECT_NEAR(robot.KineticEnergy(q, qd), 0.5 * qd.dot(mass * qd), 1e-10 * (1.0 + mass.norm()));
    // Power balance without friction: d/dt (T + V) along q(t) = q + q' t + ½ q'' t² equals
    // q'ᵀ tau (velocity-dependent terms, e.g. the Coriolis force of the prismatic joints).
    SerialRobot frictionless = robot;
    for (int j = 0; j < 7; ++j) {
      frictionless.SetJointDrive(j, JointDrive{robot.GetJointDrive(j).ia, 0, 0, 0, 0});
    }
    Eigen::VectorXd tau_frictionless;
    frictionless.InverseDynamics(q, qd, qdd, &tau_frictionless);
    auto energy = [&](double t) {
      const Eigen::VectorXd qt = q + qd * t + 0.5 * qdd * t * t, qdt = qd + qdd * t;
      return frictionless.KineticEnergy(qt, qdt) + frictionless.PotentialEnergy(qt);
    };
    const double h = 1e-5;
    const double power = (energy(h) - energy(-h)) / (2 * h);
    EXPECT_NEAR(power, qd.dot(tau_frictionless), 1e-5 * (1.0 + std::abs(power)));
  }
  // Base parameters of a chain the closed form does not cover: numerical, consistent.
  BaseParameterSet base;
  ASSERT_TRUE(ComputeBaseParameters(robot, NumericalBaseOptions(), &base, &error)) << error;
  EXPECT_FALSE(base.closed_form);
  EXPECT_EQ(base.size(), NumericalRank([&] {
              Eigen::MatrixXd w;
              robot.StackedRegressor(s.q, s.qd, s.qdd, &w);
              return w;
            }()));
  Eigen::MatrixXd w, w_base;
  robot.StackedRegressor(s.q, s.qd, s.qdd, &w);
  base.SelectColumns(w, &w_base);
  const Eigen::VectorXd tau_std = w * robot.standard_parameters();
  EXPECT_LT((w_base * base.Reduce(robot.standard_parameters()) - tau_std).norm(),
            1e-9 * tau_std.norm());
  ASSERT_EQ(base.descriptions.size(), base.names.size());
}

// ---------------------------------------------------------------------------------------------
// A tree: head (revolute, off the chain) and camera (fixed) on the torso, gripper with a finger
// beyond the tip. Merged by hand into a two-link URDF, the robot must be the same.

struct Body {
  double mass;
  Eigen::Vector3d com;      // in the frame the merge is written in
  Eigen::Matrix3d inertia;  // about com, that frame's axes
};

Body Merge(const std::vector<Body>& parts) {
  Body total{0.0, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Zero()};
  for (const Body& b : parts) {
    total.mass += b.mass;
    total.com += b.mass * b.com;
  }
  total.com /= total.mass;
  for (const Body& b : parts) {
    const Eigen::Vector3d d = b.com - total.com;
    total.inertia +=
        b.inertia + b.mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
  }
  return total;
}

TEST(UrdfReaderTest, BranchesFixedLinksAndLinksBeyondTheTipAreMergedIntoTheirCarrier) {
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ(), x = Eigen::Vector3d::UnitX();
  auto diag = [](double a, double b, double c) {
    return Eigen::Vector3d(a, b, c).asDiagonal().toDenseMatrix();
  };
  // Parts in their own link frames.
  const Body torso{10.0, Eigen::Vector3d(0, 0, 0.2), diag(1.0, 1.0, 0.5)};
  const Body head{2.0, Eigen::Vector3d(0.1, 0, 0), diag(0.01, 0.02, 0.03)};
  const Body camera{0.3, Eigen::Vector3d(0, 0.02, 0), diag(1e-3, 2e-3, 3e-3)};
  const Body arm{3.0, Eigen::Vector3d(0.2, 0, 0), diag(0.01, 0.05, 0.05)};
  const Body gripper{0.8, Eigen::Vector3d(0, 0, 0.05), diag(2e-3, 2e-3, 1e-3)};
  const Body finger{0.1, Eigen::Vector3d(0.01, 0, 0), diag(1e-5, 1e-5, 1e-5)};
  // Poses: head on torso at (0, 0, 0.5) turned 90° about z; camera on head at (0.05, 0, 0.1)
  // turned 90° about x; gripper on arm at (0.4, 0, 0) turned 90° about y; finger on gripper at
  // (0, 0.02, 0.1) (prismatic, held at zero).
  auto pose = [](const Eigen::Vector3d& t, const Eigen::Vector3d& rpy) {
    Eigen::Isometry3d p = Eigen::Isometry3d::Identity();
    p.linear() = Rpy(rpy);
    p.translation() = t;
    return p;
  };
  const Eigen::Isometry3d head_in_torso =
      pose(Eigen::Vector3d(0, 0, 0.5), Eigen::Vector3d(0, 0, M_PI / 2));
  const Eigen::Isometry3d camera_in_head =
      pose(Eigen::Vector3d(0.05, 0, 0.1), Eigen::Vector3d(M_PI / 2, 0, 0));
  const Eigen::Isometry3d gripper_in_arm =
      pose(Eigen::Vector3d(0.4, 0, 0), Eigen::Vector3d(0, M_PI / 2, 0));
  const Eigen::Isometry3d finger_in_gripper =
      pose(Eigen::Vector3d(0, 0.02, 0.1), Eigen::Vector3d::Zero());
  auto moved = [](const Body& b, const Eigen::Isometry3d& p) {
    return Body{b.mass, p * b.com, p.linear() * b.inertia * p.linear().transpose()};
  };
  const Body torso_total =
      Merge({torso, moved(head, head_in_torso), moved(camera, head_in_torso * camera_in_head)});
  const Body arm_total = Merge(
      {arm, moved(gripper, gripper_in_arm), moved(finger, gripper_in_arm * finger_in_gripper)});

  auto link = [](const std::string& name, const Body& b) {
    UrdfLinkSpec l{b.mass,          b.com,           Eigen::Vector3d::Zero(),
                   b.inertia(0, 0), b.inertia(0, 1), b.inertia(0, 2),
                   b.inertia(1, 1), b.inertia(1, 2), b.inertia(2, 2)};
    return "<link name=\"" + name + "\">" + InertialXml(l) + "</link>";
  };
  const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
  const std::string lift =
      JointXml("lift", "prismatic", "base", "torso", Eigen::Vector3d(0.1, 0, 0.3), zero, z);
  const std::string shoulder =
      JointXml("shoulder", "revolute", "torso", "arm", Eigen::Vector3d(0, 0.2, 0.4),
               Eigen::Vector3d(M_PI / 2, 0, 0), z);
  const std::string tree =
      "<robot name=\"tree\"><link name=\"world\"/><link name=\"base\"><inertial><mass "
      "value=\"50\"/>"
      "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>" +
      JointXml("world_joint", "fixed", "world", "base", zero, zero, x) + link("torso", torso) +
      link("head", head) + link("camera", camera) + link("arm", arm) + link("gripper", gripper) +
      link("finger", finger) + lift +
      JointXml("head_pan", "revolute", "torso", "head", head_in_torso.translation(),
               Eigen::Vector3d(0, 0, M_PI / 2), z) +
      JointXml("camera_mount", "fixed", "head", "camera", camera_in_head.translation(),
               Eigen::Vector3d(M_PI / 2, 0, 0), x) +
      shoulder +
      JointXml("wrist_mount", "fixed", "arm", "gripper", gripper_in_arm.translation(),
               Eigen::Vector3d(0, M_PI / 2, 0), x) +
      JointXml("finger_joint", "prismatic", "gripper", "finger", finger_in_gripper.translation(),
               zero, x, "<mimic joint=\"head_pan\"/>") +
      "</robot>";
  const std::string by_hand = "<robot name=\"merged\"><link name=\"base\"/>" +
                              link("torso", torso_total) + link("arm", arm_total) + lift +
                              shoulder + "</robot>";
  ChainDescription chain_tree, chain_hand;
  std::string error;
  ASSERT_TRUE(ParseUrdfChain(tree, "tree.urdf", "world", "arm", &chain_tree, &error)) << error;
  ASSERT_TRUE(ParseUrdfChain(by_hand, "merged.urdf", "base", "arm", &chain_hand, &error)) << error;
  ASSERT_EQ(chain_tree.num_joints(), 2);
  EXPECT_THAT(chain_tree.merged_links[0], ::testing::UnorderedElementsAre("head", "camera"));
  EXPECT_THAT(chain_tree.merged_links[1], ::testing::UnorderedElementsAre("gripper", "finger"));
  const SerialRobot robot_tree = BuildRobot(chain_tree, DefaultDrives(chain_tree));
  const SerialRobot robot_hand = BuildRobot(chain_hand, DefaultDrives(chain_hand));
  EXPECT_LT(
      (robot_tree.standard_parameters() - robot_hand.standard_parameters()).cwiseAbs().maxCoeff(),
      1e-12);
  EXPECT_NEAR(robot_tree.GetLinkInertia(0).m, 12.3, 1e-12);
  EXPECT_NEAR(robot_tree.GetLinkInertia(1).m, 3.9, 1e-12);
  const States s = RandomStates(2, 5, 8);
  for (int k = 0; k < 5; ++k) {
    Eigen::VectorXd tau_tree, tau_hand;
    robot_tree.InverseDynamics(s.q.row(k).transpose(), s.qd.row(k).transpose(),
                               s.qdd.row(k).transpose(), &tau_tree);
    robot_hand.InverseDynamics(s.q.row(k).transpose(), s.qd.row(k).transpose(),
                               s.qdd.row(k).transpose(), &tau_hand);
    EXPECT_LT((tau_tree - tau_hand).norm(), 1e-10 * (1.0 + tau_tree.norm()));
  }
}

// ---------------------------------------------------------------------------------------------
// TIAGo: torso lift + 7 revolute arm joints from base_footprint to arm_7_link.

TEST(UrdfReaderTest, TiagoArmChainLoadsWithTorsoLiftAndSevenRevoluteJoints) {
  std::string root, tip, error;
  ASSERT_TRUE(ParseChainSpec("base_footprint:arm_7_link", &root, &tip, &error)) << error;
  ChainDescription chain;
  ASSERT_TRUE(ReadChainDescription(kTiagoUrdf, root, tip, &chain, &error)) << error;
  ASSERT_EQ(chain.num_joints(), 8);
  EXPECT_EQ(chain.joints[0].name, "torso_lift_joint");
  EXPECT_EQ(chain.joints[0].type, JointType::kPrismatic);
  for (int j = 1; j < 8; ++j) {
    EXPECT_EQ(chain.joints[j].name, "arm_" + std::to_string(j) + "_joint");
    EXPECT_EQ(chain.joints[j].type, JointType::kRevolute);
  }
  EXPECT_TRUE(chain.has_inertia);
  // The head hangs off the torso; the gripper beyond arm_7_link joins link 8.
  EXPECT_THAT(chain.merged_links[0], ::testing::Contains("head_2_link"));
  EXPECT_FALSE(chain.merged_links[7].empty());
  const SerialRobot robot = BuildRobot(chain, DefaultDrives(chain));
  EXPECT_GT(robot.GetLinkInertia(7).m, 0.5);  // wrist + gripper
  const States s = RandomStates(8, 10, 6);
  for (int k = 0; k < 10; ++k) {
    Eigen::VectorXd tau;
    Eigen::MatrixXd phi;
    robot.InverseDynamics(s.q.row(k).transpose(), s.qd.row(k).transpose(), s.qdd.row(k).transpose(),
                          &tau);
    robot.Regressor(s.q.row(k).transpose(), s.qd.row(k).transpose(), s.qdd.row(k).transpose(),
                    &phi);
    EXPECT_LT((phi * robot.standard_parameters() - tau).norm(), 1e-10 * (1.0 + tau.norm()));
  }
  BaseParameterSet base;
  ASSERT_TRUE(ComputeBaseParameters(robot, NumericalBaseOptions(), &base, &error)) << error;
  EXPECT_GT(base.size(), 40);
  EXPECT_LT(base.size(), robot.num_parameters());
}

// ---------------------------------------------------------------------------------------------
// Bad URDFs.

std::string TwoJointUrdf(const std::string& type2, const std::string& extra2 = "") {
  const Eigen::Vector3d zero = Eigen::Vector3d::Zero(), z = Eigen::Vector3d::UnitZ();
  return "<robot name=\"bad\"><link name=\"a\"/><link name=\"b\"/><link name=\"c\"/>" +
         JointXml("j1", "revolute", "a", "b", zero, zero, z) +
         JointXml("j2", type2, "b", "c", zero, zero, z, extra2) + "</robot>";
}

TEST(UrdfReaderTest, BadUrdfsAreRejectedWithTheFileAndTheElement) {
  ChainDescription chain;
  std::string error;
  EXPECT_FALSE(ParseUrdfChain(TwoJointUrdf("floating"), "bad.urdf", "a", "c", &chain, &error));
  EXPECT_THAT(error, HasSubstr("bad.urdf"));
  EXPECT_THAT(error, HasSubstr("joint 'j2'"));
  EXPECT_THAT(error, HasSubstr("floating"));
  EXPECT_FALSE(ParseUrdfChain(TwoJointUrdf("planar"), "bad.urdf", "a", "c", &chain, &error));
  EXPECT_THAT(error, HasSubstr("joint 'j2' on the chain is planar"));
  EXPECT_FALSE(ParseUrdfChain(TwoJointUrdf("revolute", "<mimic joint=\"j1\"/>"), "bad.urdf", "a",
                              "c", &chain, &error));
  EXPECT_THAT(error, HasSubstr("joint 'j2' on the chain mimics joint 'j1'"));
  EXPECT_FALSE(ParseUrdfChain(TwoJointUrdf("revolute"), "bad.urdf", "c", "a", &chain, &error));
  EXPECT_THAT(error, HasSubstr("link 'a' is not below link 'c'"));
  EXPECT_FALSE(ParseUrdfChain(TwoJointUrdf("revolute"), "bad.urdf", "a", "nope", &chain, &error));
  EXPECT_THAT(error, HasSubstr("link 'nope' (tip of the chain) is not in the URDF"));
  EXPECT_FALSE(ParseUrdfChain(TwoJointUrdf("fixed"), "bad.urdf", "b", "c", &chain, &error));
  EXPECT_THAT(error, HasSubstr("no revolute, continuous or prismatic joint"));
  EXPECT_FALSE(ParseUrdfChain("<robot name=\"x\"><link name=\"a\">", "broken.urdf", "a", "a",
                              &chain, &error));
  EXPECT_THAT(error, HasSubstr("broken.urdf: not a valid URDF"));
  EXPECT_FALSE(ReadUrdfChain("/nonexistent/robot.urdf", "a", "b", &chain, &error));
  EXPECT_THAT(error, HasSubstr("/nonexistent/robot.urdf: cannot open file"));
  const std::string negative_mass =
      "<robot name=\"m\"><link name=\"a\"/><link name=\"b\"><inertial><mass value=\"-1\"/>"
      "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>" +
      JointXml("j1", "revolute", "a", "b", Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(),
               Eigen::Vector3d::UnitZ()) +
      "</robot>";
  EXPECT_FALSE(ParseUrdfChain(negative_mass, "m.urdf", "a", "b", &chain, &error));
  EXPECT_THAT(error, HasSubstr("m.urdf: link 'b': negative <mass>"));
  std::string root, tip;
  EXPECT_FALSE(ParseChainSpec("base_footprint", &root, &tip, &error));
  EXPECT_THAT(error, HasSubstr("expected ROOT:TIP"));
}

// ---------------------------------------------------------------------------------------------
// DH tables.

const char kTx40MdhYaml[] = R"(name: tx40_table
convention: modified
joints:
  - {name: joint_1, type: revolute, alpha: 0, d: 0, theta: 0, r: 0}
  - {name: joint_2, type: revolute, alpha: -1.5707963267948966, d: 0, theta: -1.5707963267948966, r: 0}
  - {name: joint_3, type: revolute, alpha: 0, d: 0.225, theta: 1.5707963267948966, r: 0.035}
  - {name: joint_4, type: revolute, alpha: 1.5707963267948966, d: 0, theta: 0, r: 0.225}
  - {name: joint_5, type: revolute, alpha: -1.5707963267948966, d: 0, theta: 0, r: 0}
  - {name: joint_6, type: revolute, alpha: 1.5707963267948966, d: 0, theta: 3.141592653589793, r: 0}
)";

const char kTx40DrivesJson[] = R"({
  "coupling_form": "gautier",
  "joints": {
    "joint_1": {"friction": {"offset": false}}, "joint_2": {"friction": {"offset": false}},
    "joint_3": {"friction": {"offset": false}}, "joint_4": {"friction": {"offset": false}},
    "joint_5": {"friction": {"offset": false}}, "joint_6": {"friction": {"offset": false}}
  },
  "transmission": [[32, 0, 0, 0, 0, 0], [0, 32, 0, 0, 0, 0], [0, 0, 45, 0, 0, 0],
                   [0, 0, 0, -48, 0, 0], [0, 0, 0, 0, 45, 0], [0, 0, 0, 0, 32, 32]],
  "coupled_motors": {"m6": {"ia": 0.0114, "fv": 0.8, "fc": 1.6}}
})";

TEST(DhTableTest, ModifiedDhTableOfTheTx40GivesTheRegressorOfMakeTx40) {
  ChainDescription chain;
  std::string error;
  ASSERT_TRUE(ParseDhTable(kTx40MdhYaml, "yaml", "tx40.yaml", &chain, &error)) << error;
  EXPECT_FALSE(chain.has_inertia);
  DriveDescription drives;
  ASSERT_TRUE(ParseDriveDescription(kTx40DrivesJson, "json", "tx40.json", chain, &drives, &error))
      << error;
  const SerialRobot robot = BuildRobot(chain, drives);
  EXPECT_TRUE(robot.is_modified_dh());
  EXPECT_EQ(robot.JointName(3), "joint_4");
  EXPECT_EQ(robot.standard_parameters()[robot.ParameterIndex("fvm6")], 0.8);
  const SerialRobot reference = MakeTx40();
  ASSERT_EQ(robot.parameter_names(), reference.parameter_names());
  const States s = RandomStates(6, 10, 12);
  for (int k = 0; k < 10; ++k) {
    Eigen::MatrixXd phi, phi_ref;
    robot.Regressor(s.q.row(k).transpose(), s.qd.row(k).transpose(), s.qdd.row(k).transpose(),
                    &phi);
    reference.Regressor(s.q.row(k).transpose(), s.qd.row(k).transpose(), s.qdd.row(k).transpose(),
                        &phi_ref);
    EXPECT_LT((phi - phi_ref).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(DhTableTest, ClassicDhTableMatchesTheClassicForwardKinematicsAndMasses) {
  const char json[] = R"({"name": "classic3", "convention": "classic", "joints": [
    {"type": "revolute", "theta": 0.3, "d": 0.4, "a": 0.1, "alpha": 1.5707963267948966,
     "inertial": {"mass": 2.0, "com": [-0.05, 0.1, 0.02], "inertia": [0.02, 0.001, 0, 0.03, 0, 0.01]}},
    {"type": "prismatic", "theta": -0.4, "d": 0.2, "a": 0.05, "alpha": -0.7,
     "inertial": {"mass": 1.5, "com": [0.0, 0.03, -0.1], "inertia": [0.01, 0, 0.002, 0.01, 0, 0.005]}},
    {"type": "revolute", "theta": 0.0, "d": 0.0, "a": 0.3, "alpha": 0.0,
     "inertial": {"standard": [0.01, 0, 0, 0.02, 0, 0.02, 0.15, 0.0, 0.01, 1.0]}}]})";
  ChainDescription chain;
  std::string error;
  ASSERT_TRUE(ParseDhTable(json, "json", "classic3.json", &chain, &error)) << error;
  ASSERT_TRUE(chain.has_inertia);
  const SerialRobot robot = BuildRobot(chain, DefaultDrives(chain));
  const double theta[3] = {0.3, -0.4, 0.0}, d[3] = {0.4, 0.2, 0.0}, a[3] = {0.1, 0.05, 0.3},
               alpha[3] = {M_PI / 2, -0.7, 0.0};
  const bool prismatic[3] = {false, true, false};
  // Centres of mass and masses in the classic frames (link 3 from its first moments).
  const Eigen::Vector3d com[3] = {Eigen::Vector3d(-0.05, 0.1, 0.02), Eigen::Vector3d(0, 0.03, -0.1),
                                  Eigen::Vector3d(0.15, 0.0, 0.01)};
  const double mass[3] = {2.0, 1.5, 1.0};
  const States s = RandomStates(3, 5, 14);
  for (int k = 0; k < 5; ++k) {
    const Eigen::VectorXd q = s.q.row(k).transpose();
    Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
    double energy = 0.0;
    for (int j = 0; j < 3; ++j) {
      const double th = theta[j] + (prismatic[j] ? 0.0 : q[j]);
      const double dd = d[j] + (prismatic[j] ? q[j] : 0.0);
      Eigen::Isometry3d step = Eigen::Isometry3d::Identity();
      step.rotate(Eigen::AngleAxisd(th, Eigen::Vector3d::UnitZ()));
      step.translate(Eigen::Vector3d(0, 0, dd));
      step.translate(Eigen::Vector3d(a[j], 0, 0));
      step.rotate(Eigen::AngleAxisd(alpha[j], Eigen::Vector3d::UnitX()));
      t = t * step;
      energy += mass[j] * robot.gravity_mps2() * (t * com[j]).z();
    }
    EXPECT_NEAR(robot.PotentialEnergy(q), energy, 1e-12);
    Eigen::VectorXd tau;
    Eigen::MatrixXd phi;
    robot.InverseDynamics(q, s.qd.row(k).transpose(), s.qdd.row(k).transpose(), &tau);
    robot.Regressor(q, s.qd.row(k).transpose(), s.qdd.row(k).transpose(), &phi);
    EXPECT_LT((phi * robot.standard_parameters() - tau).norm(), 1e-10 * (1.0 + tau.norm()));
  }
}

TEST(DhTableTest, BadTablesAreRejectedWithFileLineAndKey) {
  ChainDescription chain;
  std::string error;
  EXPECT_FALSE(ParseDhTable("convention: modified\njoints:\n  - {type: revolute, alfa: 0}\n",
                            "yaml", "t.yaml", &chain, &error));
  EXPECT_THAT(error, HasSubstr("t.yaml:3:"));
  EXPECT_THAT(error, HasSubstr("unknown key 'alfa'"));
  EXPECT_FALSE(ParseDhTable("convention: modified\njoints:\n  - type: revolute\n    d: 1.5x\n",
                            "yaml", "t.yaml", &chain, &error));
  EXPECT_THAT(error, HasSubstr("t.yaml:4:8: 'joints[0].d': expected a finite number, got '1.5x'"));
  EXPECT_FALSE(
      ParseDhTable("convention: sideways\njoints: []\n", "yaml", "t.yaml", &chain, &error));
  EXPECT_THAT(error, HasSubstr("expected 'modified' or 'classic'"));
  EXPECT_FALSE(ParseDhTable("joints:\n  - {type: revolute}\n", "yaml", "t.yaml", &chain, &error));
  EXPECT_THAT(error, HasSubstr("missing key 'convention'"));
  EXPECT_FALSE(ParseDhTable(R"({"convention": "modified", "joints": [{"type": "helical"}]})",
                            "json", "t.json", &chain, &error));
  EXPECT_THAT(error,
              HasSubstr("t.json: 'joints[0].type': expected revolute, continuous or prismatic"));
  EXPECT_FALSE(
      ParseDhTable(R"({"convention": "modified", "joints": [{"type": "revolute", "d": "1"}]})",
                   "json", "t.json", &chain, &error));
  EXPECT_THAT(error, HasSubstr("'joints[0].d': expected a finite number"));
  EXPECT_FALSE(ParseDhTable("{\"convention\": \"modified\",\n \"joints\": [}", "json", "t.json",
                            &chain, &error));
  EXPECT_THAT(error, HasSubstr("line 2"));
  EXPECT_FALSE(ParseDhTable(R"({"convention": "modified", "convention": "classic", "joints": []})",
                            "json", "t.json", &chain, &error));
  EXPECT_THAT(error, HasSubstr("key 'convention' appears twice"));
  EXPECT_FALSE(
      ParseDhTable("convention: modified\njoints:\n  - {type: revolute, inertial: {mass: 1}}\n  - "
                   "{type: revolute}\n",
                   "yaml", "t.yaml", &chain, &error));
  EXPECT_THAT(error, HasSubstr("'inertial' is given for 1 of 2 joints"));
  EXPECT_FALSE(ReadDhTable("/nonexistent/table.yaml", &chain, &error));
  EXPECT_THAT(error, HasSubstr("/nonexistent/table.yaml: cannot open file"));
}

// ---------------------------------------------------------------------------------------------
// Drive descriptions.

TEST(DriveDescriptionTest, DefaultsCurrentsStribeckAndBadFiles) {
  ChainDescription chain;
  std::string error;
  ASSERT_TRUE(ParseDhTable(kTx40MdhYaml, "yaml", "tx40.yaml", &chain, &error)) << error;
  const SerialRobot defaults = BuildRobot(chain, DefaultDrives(chain));
  EXPECT_EQ(DescribeDriveTerms(defaults)[0], "joint_1: ia1 fv1 fc1 off1");
  EXPECT_EQ(defaults.num_parameters(), 6 * 14);

  const char yaml[] = R"(side: joint
joints:
  joint_2:
    gear_ratio: 100
    motor_constant: 0.136
    friction: {viscous: true, coulomb: true, offset: false, stribeck_velocity: 0.05}
    initial: {fs: 0.4, fc: 1.0}
)";
  DriveDescription drives;
  ASSERT_TRUE(ParseDriveDescription(yaml, "yaml", "d.yaml", chain, &drives, &error)) << error;
  const SerialRobot robot = BuildRobot(chain, drives);
  EXPECT_EQ(DescribeDriveTerms(robot)[1], "joint_2: ia2 fv2 fc2 fs2");
  EXPECT_EQ(robot.GetJointDrive(1).fs, 0.4);
  Eigen::MatrixXd currents = Eigen::MatrixXd::Zero(2, 6), tau;
  currents(0, 1) = 2.0;
  JointTorquesFromCurrents(drives, currents, &tau);
  EXPECT_NEAR(tau(0, 1), 2.0 * 0.136 * 100, 1e-12);
  EXPECT_EQ(tau(0, 0), 0.0);

  auto fails = [&](const std::string& text, const std::string& expected) {
    DriveDescription bad;
    std::string message;
    EXPECT_FALSE(ParseDriveDescription(text, "yaml", "d.yaml", chain, &bad, &message)) << text;
    EXPECT_THAT(message, HasSubstr(expected)) << text;
  };
  fails("joints:\n  elbow: {gear_ratio: 3}\n",
        "d.yaml:2:10: 'joints.elbow': 'elbow' is not a joint");
  fails("side: wrist\n", "expected 'joint' or 'motor'");
  fails("joints:\n  joint_1: {gear_ratio: 0}\n", "must be non-zero");
  fails("joints:\n  joint_1: {rotor_inertia: false, initial: {ia: 1}}\n",
        "initial value of a term this joint does not carry");
  fails("joints:\n  joint_1: {friction: {stribeck_velocity: -1}}\n", "must be >= 0");
  fails("transmission: [[1, 0], [0, 1]]\n", "expected 6 rows");
  fails(
      "joints:\n  joint_1: {gear_ratio: 30}\ntransmission:\n  - [32, 0, 0, 0, 0, 0]\n"
      "  - [0, 1, 0, 0, 0, 0]\n  - [0, 0, 1, 0, 0, 0]\n  - [0, 0, 0, 1, 0, 0]\n"
      "  - [0, 0, 0, 0, 1, 0]\n  - [0, 0, 0, 0, 1, 1]\n",
      "differs from the gear_ratio of joint 'joint_1'");
  fails("coupled_motors: {m6: {ia: 1}}\n", "the transmission couples no motor named 'm6'");
  fails("joints:\n  joint_1: {friction: {viscous: maybe}}\n", "expected true or false");
}

}  // namespace
}  // namespace dynid::models
