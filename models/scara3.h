// models/scara3 — the 3-DOF RRP SCARA of Urrea & Agramonte (2022) §2.4.
//
// Closed form of the paper (q3 = d3, the prismatic stroke, positive downwards):
//     tau1 = IZZ1 q1'' + IZZ2 q2'' + mr((2 q1'' + q2'') cos q2 − (q2'² + 2 q1' q2') sin q2)
//     tau2 = IZZ2 (q1'' + q2'') + mr (q1'' cos q2 + q1'² sin q2)
//     F3   = m3 (d3'' − g)
// with IZZ1 = m1 lc1² + I1 + m2 l1² + m2 lc2² + I2 + m3 l1² + m3 l2² + I3,
// IZZ2 = m2 lc2² + I2 + m3 l2² + I3, mr = m2 l1 lc2 + m3 l1 l2.
//
// The same robot as a generic modified-DH SerialRobot: alpha = [0, 0, pi], d = [0, l1, l2],
// joints R, R, P (z3 points down, so the stroke q3 grows downwards and gravity pulls along +z3).
// Links 1 and 2 are slender bodies with their centre of mass on the x axis at lc (inertia about
// the centre of mass diag(0.1 I, I, I)); link 3 is a rod along z3 with its centre of mass at O3
// (diag(0.05, 0.05, I3)). No rotor, friction or offset columns. Its base parameters (ZZ1r, ZZ2r,
// MX2r, MY2r, M3) span the closed form's (IZZ1, IZZ2, mr, m3) when MY2 = 0 (tests).
// With joint viscous friction in the link data (fv1, fv2, fv3 not all zero) the robot carries
// friction columns (fv and fc of every joint, fc = 0): its torques are the closed form's plus
// fv_j q_j' — an effect outside the closed form's four parameters (a model mismatch for
// estimators of the closed form).
#ifndef DYNID_MODELS_SCARA3_H_
#define DYNID_MODELS_SCARA3_H_

#include <Eigen/Core>

#include "dynid/models/serial_robot.h"

namespace dynid::models {

// Link data of Urrea & Agramonte (2022) Table 1 (with I3 = 0.008 kg m², the value that reproduces
// the paper's true base parameters; the table prints 0.08).
struct Scara3LinkData {
  double m1_kg = 12.0, m2_kg = 6.0, m3_kg = 2.0;
  double l1_m = 0.6, l2_m = 0.4;
  double lc1_m = 0.3, lc2_m = 0.2;
  double i1_kgm2 = 0.36, i2_kgm2 = 0.08, i3_kgm2 = 0.008;
  // Viscous joint friction [N m s/rad, N m s/rad, N s/m]; 0 (the paper's robot) by default, and
  // not part of the four base parameters.
  double fv1 = 0.0, fv2 = 0.0, fv3 = 0.0;
};

// The paper's four base parameters.
struct Scara3Parameters {
  double izz1 = 0.0, izz2 = 0.0, mr = 0.0, m3 = 0.0;
  Eigen::Vector4d AsVector() const { return Eigen::Vector4d(izz1, izz2, mr, m3); }
};

// IZZ1 = 4.968, IZZ2 = 0.648, mr = 1.2, m3 = 2 for the default data.
Scara3Parameters Scara3BaseParametersFromLinks(const Scara3LinkData& data = Scara3LinkData());

SerialRobot MakeScara3(const Scara3LinkData& data = Scara3LinkData());

// The closed form: torques (N m, N m, N) and its 3 × 4 regressor (columns IZZ1, IZZ2, mr, m3).
Eigen::Vector3d Scara3ClosedFormTorques(const Eigen::Vector3d& q, const Eigen::Vector3d& qd,
                                        const Eigen::Vector3d& qdd,
                                        const Scara3Parameters& parameters, double g = 9.81);
Eigen::Matrix<double, 3, 4> Scara3ClosedFormRegressor(const Eigen::Vector3d& q,
                                                      const Eigen::Vector3d& qd,
                                                      const Eigen::Vector3d& qdd, double g = 9.81);

}  // namespace dynid::models

#endif  // DYNID_MODELS_SCARA3_H_
