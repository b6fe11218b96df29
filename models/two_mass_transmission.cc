#include "dynid/models/two_mass_transmission.h"

#include <glog/logging.h>

#include <cmath>
#include <random>
#include <sstream>

namespace dynid::models {

const char* SpringShapeName(SpringShape shape) {
  switch (shape) {
    case SpringShape::kDeadZone:
      return "dead_zone";
    case SpringShape::kSmoothDeadZone:
      return "smooth_dead_zone";
    case SpringShape::kLinear:
      return "linear";
  }
  return "unknown";
}

bool ParseSpringShape(const std::string& text, SpringShape* shape, std::string* error) {
  for (SpringShape s :
       {SpringShape::kDeadZone, SpringShape::kSmoothDeadZone, SpringShape::kLinear}) {
    if (text == SpringShapeName(s)) {
      *shape = s;
      return true;
    }
  }
  if (error) *error = "unknown spring shape '" + text + "' (dead_zone, smooth_dead_zone, linear)";
  return false;
}

bool TwoMassTransmissionParameters::IsValid(std::string* why) const {
  std::ostringstream out;
  if (!(motor_inertia_kgm2 > 0.0))
    out << "motor inertia must be > 0, got " << motor_inertia_kgm2;
  else if (!(arm_inertia_kgm2 > 0.0))
    out << "arm inertia must be > 0, got " << arm_inertia_kgm2;
  else if (!(damping_nms_per_rad >= 0.0))
    out << "damping must be >= 0";
  else if (!(position_gain_nm_per_rad >= 0.0))
    out << "position gain must be >= 0";
  else if (!(viscous_friction_nms_per_rad >= 0.0))
    out << "viscous friction must be >= 0";
  else if (!(coulomb_friction_nm >= 0.0))
    out << "Coulomb friction must be >= 0";
  else if (!(friction_sharpness_s_per_rad > 0.0))
    out << "friction sharpness must be > 0";
  else if (!(backlash_rad >= 0.0))
    out << "backlash must be >= 0, got " << backlash_rad;
  else if (!(stiffness_nm_per_rad >= 0.0))
    out << "stiffness must be >= 0";
  else if (!(smoothing_rad > 0.0))
    out << "smoothing must be > 0, got " << smoothing_rad;
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

TwoMassTransmissionParameters HovlandSimulation1Parameters() {
  TwoMassTransmissionParameters p;
  p.motor_inertia_kgm2 = 0.006442;
  p.arm_inertia_kgm2 = 0.023454;
  p.damping_nms_per_rad = 0.01;
  p.position_gain_nm_per_rad = 1.0;
  p.viscous_friction_nms_per_rad = 0.2;
  p.coulomb_friction_nm = 0.0;
  p.friction_sharpness_s_per_rad = 100.0;  // unused with Cc = 0
  p.backlash_rad = 0.2;
  p.stiffness_nm_per_rad = 37.0;
  return p;
}

TwoMassTransmissionParameters HovlandSimulation2Parameters() {
  TwoMassTransmissionParameters p;  // the defaults are Simulation 2
  return p;
}

TwoMassTransmission::TwoMassTransmission(const TwoMassTransmissionParameters& parameters)
    : parameters_(parameters) {
  std::string why;
  CHECK(parameters_.IsValid(&why)) << "two-mass transmission: " << why;
}

void TwoMassTransmission::StateJacobians(const State& x, Eigen::Matrix4d* J_f_x,
                                         Eigen::Vector4d* J_f_tau) const {
  const TwoMassTransmissionParameters& p = parameters_;
  const double m1 = p.motor_inertia_kgm2, m2 = p.arm_inertia_kgm2, d = p.damping_nms_per_rad;
  const double ax = p.friction_sharpness_s_per_rad * x(2);
  const double dfriction = p.viscous_friction_nms_per_rad + p.coulomb_friction_nm * (2.0 / M_PI) *
                                                                p.friction_sharpness_s_per_rad /
                                                                (1.0 + ax * ax);
  J_f_x->setZero();
  (*J_f_x)(0, 2) = 1.0;
  (*J_f_x)(1, 3) = 1.0;
  (*J_f_x)(2, 0) = -p.position_gain_nm_per_rad / m1;
  (*J_f_x)(2, 2) = -(d + dfriction) / m1;
  (*J_f_x)(2, 3) = d / m1;
  (*J_f_x)(3, 2) = d / m2;
  (*J_f_x)(3, 3) = -d / m2;
  *J_f_tau << 0.0, 0.0, -1.0 / m1, 1.0 / m2;
}

ModelInfo TwoMassTransmission::Info() const {
  ModelInfo info;
  info.name = std::string("two_mass_transmission_") + SpringShapeName(parameters_.shape);
  info.positions = {{"x1_motor", "rad"}, {"x2_arm", "rad"}};
  info.inputs = {{"u", "Nm"}};
  info.parameters = {{"m1", "kg m^2"},   {"m2", "kg m^2"},   {"D", "Nm s/rad"},
                     {"Kr", "Nm/rad"},   {"Cv", "Nm s/rad"}, {"Cc", "Nm"},
                     {"alpha", "s/rad"}, {"b", "rad"},       {"K", "Nm/rad"}};
  info.measurements = {{"x3_motor_velocity", "rad/s"}, {"x4_arm_velocity", "rad/s"}};
  info.equations = {{"motor_torque_balance", "Nm"}, {"arm_torque_balance", "Nm"}};
  return info;
}

TwoMassTransmission::ParameterVector TwoMassTransmission::NominalParameters() const {
  const TwoMassTransmissionParameters& p = parameters_;
  ParameterVector theta;
  theta << p.motor_inertia_kgm2, p.arm_inertia_kgm2, p.damping_nms_per_rad,
      p.position_gain_nm_per_rad, p.viscous_friction_nms_per_rad, p.coulomb_friction_nm,
      p.friction_sharpness_s_per_rad, p.backlash_rad, p.stiffness_nm_per_rad;
  return theta;
}

TransmissionRecord SimulateTransmission(const TwoMassTransmission& model,
                                        const Eigen::VectorXd& input, double sample_period_s,
                                        const TwoMassTransmission::State& x0, int substeps) {
  const int n = static_cast<int>(input.size());
  CHECK_GE(n, 1) << "expected at least one input sample, got " << n;
  CHECK_GT(sample_period_s, 0.0) << "expected a positive sample period, got " << sample_period_s;
  CHECK_GE(substeps, 1) << "expected substeps >= 1, got " << substeps;
  TransmissionRecord record;
  record.sample_period_s = sample_period_s;
  record.time = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * sample_period_s);
  record.input = input;
  record.states.resize(n, 4);
  record.delta.resize(n);
  record.spring_torque.resize(n);
  const double h = sample_period_s / substeps;
  // The true system: the same right-hand side as the estimator form, with tau_K = tau_K(Δ)
  // evaluated at every RK4 stage.
  TwoMassTransmission::State x = x0;
  for (int k = 0; k < n; ++k) {
    if (k > 0) {
      const double u = input(k - 1);
      const auto rhs = [&](double, const TwoMassTransmission::State& s) {
        TwoMassTransmission::State dx;
        model.StateDerivative(s.data(), u, model.TrueSpringTorque(s(0) - s(1)), dx.data());
        return dx;
      };
      x = IntegrateRk4(rhs, 0.0, h, substeps, x);
    }
    record.states.row(k) = x.transpose();
    record.delta(k) = x(0) - x(1);
    record.spring_torque(k) = model.TrueSpringTorque(record.delta(k));
  }
  return record;
}

Eigen::MatrixXd AddVelocityNoise(const TransmissionRecord& record, bool measure_arm_velocity,
                                 double variance, std::uint64_t seed) {
  CHECK_GE(variance, 0.0) << "expected a non-negative noise variance, got " << variance;
  const int n = static_cast<int>(record.states.rows());
  const int l = measure_arm_velocity ? 2 : 1;
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double sigma = std::sqrt(variance);
  Eigen::MatrixXd y(n, l);
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < l; ++j) y(k, j) = record.states(k, 2 + j) + sigma * normal(generator);
  }
  return y;
}

Eigen::MatrixXd EncoderVelocities(const TransmissionRecord& record, bool measure_arm_velocity,
                                  int counts_per_revolution) {
  CHECK_GT(counts_per_revolution, 0) << "expected a positive encoder count";
  const int n = static_cast<int>(record.states.rows());
  CHECK_GE(n, 2) << "expected at least 2 samples";
  CHECK_GT(record.sample_period_s, 0.0) << "expected a positive sample period";
  const int l = measure_arm_velocity ? 2 : 1;
  const double q = 2.0 * M_PI / counts_per_revolution;
  Eigen::MatrixXd v(n, l);
  for (int j = 0; j < l; ++j) {
    double previous = q * std::round(record.states(0, j) / q);
    for (int k = 1; k < n; ++k) {
      const double read = q * std::round(record.states(k, j) / q);
      v(k, j) = (read - previous) / record.sample_period_s;
      previous = read;
    }
    v(0, j) = v(1, j);
  }
  return v;
}

}  // namespace dynid::models
