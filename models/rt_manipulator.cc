#include "dynid/models/rt_manipulator.h"

#include <cmath>

#include "dynid/models/model_linearization.h"

namespace dynid::models {

namespace {

ModelInfo RtInfo(bool flexible) {
  ModelInfo info;
  info.name = flexible ? "rt_manipulator_flexible" : "rt_manipulator_rigid";
  info.positions = {{"r", "m"}, {"phi", "rad"}};
  if (flexible) info.positions.push_back({"eta", "rad"});
  info.inputs = {{"F", "N"}, {"T", "N m"}};
  info.parameters = {{"payload_mass", "kg"}};
  info.measurements = {{"r_measured", "m"},           {"phi_measured", "rad"},
                       {"radial_acceleration", "m/s^2"}, {"tangential_acceleration", "m/s^2"},
                       {"F_measured", "N"},           {"T_measured", "N m"}};
  info.equations = {{"radial_force_balance", "N"}, {"joint_torque_balance", "N m"}};
  if (flexible) info.equations.push_back({"link_torque_balance", "N m"});
  return info;
}

}  // namespace

ModelInfo RtManipulatorRigid::Info() const { return RtInfo(false); }
ModelInfo RtManipulatorFlexible::Info() const { return RtInfo(true); }

RtManipulatorRigid::ParameterVector RtManipulatorRigid::NominalParameters() const {
  return ParameterVector(parameters_.payload_mass_kg);
}
RtManipulatorFlexible::ParameterVector RtManipulatorFlexible::NominalParameters() const {
  return ParameterVector(parameters_.payload_mass_kg);
}

RtReference RtManipulatorReference(double t, double epsilon) {
  double lambda = 0.0, dlambda = 0.0, ddlambda = 0.0;
  if (t >= 1.0) {
    lambda = 1.0;
  } else if (t > 0.0) {
    lambda = t * t * t * (6.0 * t * t - 15.0 * t + 10.0);
    dlambda = 30.0 * t * t * (t - 1.0) * (t - 1.0);
    ddlambda = 60.0 * t * (t - 1.0) * (2.0 * t - 1.0);
  }
  // r = 0.25 sqrt(q), q = 10 lambda² − 2 lambda + 1.
  const double q = 10.0 * lambda * lambda - 2.0 * lambda + 1.0;
  const double dq = (20.0 * lambda - 2.0) * dlambda;
  const double ddq = 20.0 * dlambda * dlambda + (20.0 * lambda - 2.0) * ddlambda;
  const double sq = std::sqrt(q);
  RtReference ref;
  ref.position(0) = 0.25 * sq;
  ref.velocity(0) = 0.25 * dq / (2.0 * sq);
  ref.acceleration(0) = 0.25 * (ddq / (2.0 * sq) - dq * dq / (4.0 * q * sq));
  // phi = atan2(y, x), y = 0.75 lambda, x = 0.25 (1 − lambda) + eps;
  // phi' = (x y' − y x') / rho² = c lambda' / rho² with c = 0.75 (0.25 + eps).
  const double x = 0.25 * (1.0 - lambda) + epsilon, y = 0.75 * lambda;
  const double dx = -0.25 * dlambda, dy = 0.75 * dlambda;
  const double rho2 = x * x + y * y;
  const double drho2 = 2.0 * (x * dx + y * dy);
  const double c = 0.75 * (0.25 + epsilon);
  ref.position(1) = std::atan2(y, x);
  ref.velocity(1) = c * dlambda / rho2;
  ref.acceleration(1) = c * (ddlambda * rho2 - dlambda * drho2) / (rho2 * rho2);
  return ref;
}

Eigen::Vector2d RtManipulatorReferenceInputs(const RtManipulatorParameters& parameters, double t,
                                             double epsilon) {
  const RtManipulatorRigid rigid(parameters);
  const RtReference ref = RtManipulatorReference(t, epsilon);
  const double theta = parameters.payload_mass_kg;
  const Eigen::Vector2d zero_input = Eigen::Vector2d::Zero();
  Eigen::Vector2d r;
  // With H = −I, r(u = 0) = M a + h is exactly the input that makes r vanish.
  rigid.EquationsOfMotion(ref.position.data(), ref.velocity.data(), ref.acceleration.data(),
                          zero_input.data(), &theta, t, r.data());
  return r;
}

template void LinearizeModelInto<RtManipulatorRigid>(
    const RtManipulatorRigid&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);
template void LinearizeModelInto<RtManipulatorFlexible>(
    const RtManipulatorFlexible&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models
