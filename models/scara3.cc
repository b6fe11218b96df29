#include "dynid/models/scara3.h"

#include <cmath>

namespace dynid::models {

Scara3Parameters Scara3BaseParametersFromLinks(const Scara3LinkData& d) {
  Scara3Parameters p;
  p.izz2 = d.m2_kg * d.lc2_m * d.lc2_m + d.i2_kgm2 + d.m3_kg * d.l2_m * d.l2_m + d.i3_kgm2;
  p.izz1 = d.m1_kg * d.lc1_m * d.lc1_m + d.i1_kgm2 + d.m2_kg * d.l1_m * d.l1_m +
           d.m3_kg * d.l1_m * d.l1_m + p.izz2;
  p.mr = d.m2_kg * d.l1_m * d.lc2_m + d.m3_kg * d.l1_m * d.l2_m;
  p.m3 = d.m3_kg;
  return p;
}

SerialRobot MakeScara3(const Scara3LinkData& d) {
  std::vector<JointGeometry> joints(3);
  joints[0].type = JointType::kRevolute;
  joints[1].type = JointType::kRevolute;
  joints[1].d_m = d.l1_m;
  joints[2].type = JointType::kPrismatic;
  joints[2].alpha_rad = M_PI;
  joints[2].d_m = d.l2_m;
  Parameterization parameterization;
  parameterization.rotor_inertia = false;
  const bool friction = d.fv1 != 0.0 || d.fv2 != 0.0 || d.fv3 != 0.0;
  parameterization.friction = friction;
  parameterization.torque_offset = false;
  SerialRobot robot("scara3", joints, parameterization);
  const Eigen::Vector3d inertia1(0.1 * d.i1_kgm2, d.i1_kgm2, d.i1_kgm2);
  const Eigen::Vector3d inertia2(0.1 * d.i2_kgm2, d.i2_kgm2, d.i2_kgm2);
  const Eigen::Vector3d inertia3(0.05, 0.05, d.i3_kgm2);
  robot.SetLinkInertia(0, LinkInertia::FromCenterOfMass(d.m1_kg, Eigen::Vector3d(d.lc1_m, 0, 0),
                                                        inertia1.asDiagonal()));
  robot.SetLinkInertia(1, LinkInertia::FromCenterOfMass(d.m2_kg, Eigen::Vector3d(d.lc2_m, 0, 0),
                                                        inertia2.asDiagonal()));
  robot.SetLinkInertia(
      2, LinkInertia::FromCenterOfMass(d.m3_kg, Eigen::Vector3d::Zero(), inertia3.asDiagonal()));
  if (friction) {
    const double fv[3] = {d.fv1, d.fv2, d.fv3};
    for (int j = 0; j < 3; ++j) {
      JointDrive drive;
      drive.fv = fv[j];
      robot.SetJointDrive(j, drive);
    }
  }
  return robot;
}

Eigen::Matrix<double, 3, 4> Scara3ClosedFormRegressor(const Eigen::Vector3d& q,
                                                      const Eigen::Vector3d& qd,
                                                      const Eigen::Vector3d& qdd, double g) {
  const double c2 = std::cos(q[1]), s2 = std::sin(q[1]);
  Eigen::Matrix<double, 3, 4> phi = Eigen::Matrix<double, 3, 4>::Zero();
  phi(0, 0) = qdd[0];
  phi(0, 1) = qdd[1];
  phi(0, 2) = (2.0 * qdd[0] + qdd[1]) * c2 - (qd[1] * qd[1] + 2.0 * qd[0] * qd[1]) * s2;
  phi(1, 1) = qdd[0] + qdd[1];
  phi(1, 2) = qdd[0] * c2 + qd[0] * qd[0] * s2;
  phi(2, 3) = qdd[2] - g;
  return phi;
}

Eigen::Vector3d Scara3ClosedFormTorques(const Eigen::Vector3d& q, const Eigen::Vector3d& qd,
                                        const Eigen::Vector3d& qdd,
                                        const Scara3Parameters& parameters, double g) {
  return Scara3ClosedFormRegressor(q, qd, qdd, g) * parameters.AsVector();
}

}  // namespace dynid::models
