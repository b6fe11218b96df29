#include "dynid/models/xy_table.h"

#include <sstream>

#include <ceres/jet.h>

#include "dynid/models/model_linearization.h"

namespace dynid::models {

bool XyTableParameters::IsValid(std::string* why) const {
  const std::pair<const char*, double> positive[] = {
      {"slide_mass_kg", slide_mass_kg},
      {"transverse_mass_kg", transverse_mass_kg},
      {"effector_mass_kg", effector_mass_kg},
      {"transverse_length_m", transverse_length_m},
      {"slideway_distance_m", slideway_distance_m},
      {"wheel_radius_m", wheel_radius_m},
      {"torque_constant1_nm_per_a", torque_constant1_nm_per_a},
      {"torque_constant2_nm_per_a", torque_constant2_nm_per_a},
      {"friction_smoothing_rad_per_s", friction_smoothing_rad_per_s},
      {"inertia1_kg_m2", inertia1_kg_m2},
      {"inertia2_kg_m2", inertia2_kg_m2},
      {"spindle_stiffness_nm_per_rad", spindle_stiffness_nm_per_rad}};
  for (const auto& [name, value] : positive) {
    if (!(value > 0.0) || !std::isfinite(value)) {
      if (why) *why = std::string(name) + " must be positive and finite";
      return false;
    }
  }
  if (!(friction1_nm >= 0.0) || !(friction2_nm >= 0.0)) {
    if (why) *why = "friction torques must be non-negative";
    return false;
  }
  return true;
}

double XyTableParameters::A11() const {
  const double q = transverse_length_m / slideway_distance_m;
  return 1.0 - q + q * q / 3.0;
}
double XyTableParameters::A13() const {
  const double q = transverse_length_m / slideway_distance_m;
  return 0.5 * q - q * q / 3.0;
}
double XyTableParameters::A33() const {
  const double q = transverse_length_m / slideway_distance_m;
  return q * q / 3.0;
}

namespace {

ModelInfo XyInfo(bool flexible) {
  ModelInfo info;
  info.name = flexible ? "xy_table_flexible" : "xy_table_rigid";
  info.positions = {{"phi1", "rad"}, {"phi2", "rad"}};
  if (flexible) info.positions.push_back({"phi3", "rad"});
  info.inputs = {{"i1", "A"}, {"i2", "A"}};
  info.parameters = {{"J1", "kg m^2"}, {"J2", "kg m^2"}, {"w1", "N m"}, {"w2", "N m"}};
  if (flexible) info.parameters.push_back({"k", "N m/rad"});
  info.measurements = {{"x_effector", "m"},        {"y_effector", "m"},
                       {"acceleration_along", "m/s^2"}, {"acceleration_orthogonal", "m/s^2"},
                       {"phi1_measured", "rad"},   {"phi2_measured", "rad"},
                       {"i1_measured", "A"},       {"i2_measured", "A"}};
  info.equations = {{"motor1_torque_balance", "N m"}, {"motor2_torque_balance", "N m"}};
  if (flexible) info.equations.push_back({"spindle_end_torque_balance", "N m"});
  return info;
}

}  // namespace

ModelInfo XyTableRigid::Info() const { return XyInfo(false); }
ModelInfo XyTableFlexible::Info() const { return XyInfo(true); }

XyTableRigid::ParameterVector XyTableRigid::NominalParameters() const {
  const XyTableParameters& p = parameters_;
  return ParameterVector(p.inertia1_kg_m2, p.inertia2_kg_m2, p.friction1_nm, p.friction2_nm);
}

XyTableFlexible::ParameterVector XyTableFlexible::NominalParameters() const {
  const XyTableParameters& p = parameters_;
  ParameterVector theta;
  theta << p.inertia1_kg_m2, p.inertia2_kg_m2, p.friction1_nm, p.friction2_nm,
      p.spindle_stiffness_nm_per_rad;
  return theta;
}

namespace {

// M(q) of the body model described in the header, any scalar type.
template <class T>
Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> LagrangianMass(const XyTableParameters& p,
                                                                int size, const T* q, double J1,
                                                                double J2) {
  using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;
  const double radius = p.wheel_radius_m, d = p.slideway_distance_m;
  Row jA = Row::Zero(size), jB = Row::Zero(size), e2 = Row::Zero(size);
  jA(0) = T(radius);
  jB(2) = T(radius);
  e2(1) = T(1.0);
  T xA = radius * q[0], xB = radius * q[2];
  if (size == 5) {
    jA(3) = T(1.0);
    jB(4) = T(1.0);
    xA += q[3];
    xB += q[4];
  }
  const T beta = radius * q[1] / d;
  const Row jEx = (T(1.0) - beta) * jA + beta * jB + ((xB - xA) / d) * radius * e2;
  const Row jEy = radius * e2;
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> M =
      p.slide_mass_kg * (jA.transpose() * jA + jB.transpose() * jB) +
      p.transverse_mass_kg * (p.A11() * jA.transpose() * jA +
                              p.A13() * (jA.transpose() * jB + jB.transpose() * jA) +
                              p.A33() * jB.transpose() * jB) +
      p.effector_mass_kg * (jEx.transpose() * jEx + jEy.transpose() * jEy);
  M(0, 0) += J1;
  M(1, 1) += J2;
  return M;
}

}  // namespace

Eigen::MatrixXd XyTableLagrangian::MassMatrix(const Eigen::VectorXd& q, double J1,
                                              double J2) const {
  CHECK_EQ(q.size(), size_) << "q for the xy-table Lagrangian";
  Eigen::MatrixXd M = LagrangianMass<double>(parameters_, size_, q.data(), J1, J2);
  M(2, 2) += spindle_end_inertia_;
  return M;
}

Eigen::VectorXd XyTableLagrangian::Coriolis(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                            double J1, double J2) const {
  CHECK_EQ(q.size(), size_) << "q for the xy-table Lagrangian";
  CHECK_EQ(v.size(), size_) << "v for the xy-table Lagrangian";
  using Jet = ceres::Jet<double, 5>;
  Jet qj[5];
  for (int i = 0; i < size_; ++i) qj[i] = Jet(q(i), i);
  const auto M = LagrangianMass<Jet>(parameters_, size_, qj, J1, J2);
  // dM[k](i, j) = ∂M_ij/∂q_k.
  Eigen::VectorXd c = Eigen::VectorXd::Zero(size_);
  for (int i = 0; i < size_; ++i) {
    for (int j = 0; j < size_; ++j) {
      for (int k = 0; k < size_; ++k) {
        c(i) += (M(i, j).v(k) - 0.5 * M(j, k).v(i)) * v(j) * v(k);
      }
    }
  }
  return c;
}

Eigen::Vector2d XyTableLagrangian::EffectorPosition(const Eigen::VectorXd& q) const {
  const double radius = parameters_.wheel_radius_m, d = parameters_.slideway_distance_m;
  const double xA = radius * q(0) + (size_ == 5 ? q(3) : 0.0);
  const double xB = radius * q(2) + (size_ == 5 ? q(4) : 0.0);
  const double beta = radius * q(1) / d;
  return Eigen::Vector2d(xA + beta * (xB - xA), radius * q(1));
}

Eigen::Vector2d XyTableLagrangian::EffectorAcceleration(const Eigen::VectorXd& q,
                                                        const Eigen::VectorXd& v,
                                                        const Eigen::VectorXd& a) const {
  const double radius = parameters_.wheel_radius_m, d = parameters_.slideway_distance_m;
  const bool belts = size_ == 5;
  const double xA = radius * q(0) + (belts ? q(3) : 0.0);
  const double xB = radius * q(2) + (belts ? q(4) : 0.0);
  const double vA = radius * v(0) + (belts ? v(3) : 0.0);
  const double vB = radius * v(2) + (belts ? v(4) : 0.0);
  const double aA = radius * a(0) + (belts ? a(3) : 0.0);
  const double aB = radius * a(2) + (belts ? a(4) : 0.0);
  const double beta = radius * q(1) / d, dbeta = radius * v(1) / d, ddbeta = radius * a(1) / d;
  return Eigen::Vector2d(
      (1.0 - beta) * aA + beta * aB + 2.0 * dbeta * (vB - vA) + ddbeta * (xB - xA),
      radius * a(1));
}

template void LinearizeModelInto<XyTableRigid>(
    const XyTableRigid&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);
template void LinearizeModelInto<XyTableFlexible>(
    const XyTableFlexible&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models
