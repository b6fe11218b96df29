#include "experiments/xy_table_study/xy_table_case.h"

#include <glog/logging.h>

#include <cmath>
#include <string>

namespace dynid::xy_table_study {

using problems::ParameterMode;
using problems::WeightedResidualData;
using problems::WeightedResidualVariables;
using problems::WeightedResidualWeights;

const char* XyStageName(XyStage stage) {
  switch (stage) {
    case XyStage::kRigid:
      return "rigid";
    case XyStage::kFlexible:
      return "flexible";
    case XyStage::kFlexibleWithAccelerations:
      return "flexible_with_accelerations";
  }
  return "unknown";
}

double ThesisRuleWeight(double magnitude) {
  CHECK(std::isfinite(magnitude) && magnitude > 0.0)
      << "expected a positive finite magnitude, got " << magnitude;
  const double order = std::pow(10.0, std::round(std::log10(magnitude)));
  return 1.0 / (order * order);
}

Eigen::VectorXd XyTableThesisInitialGuess(bool flexible) {
  Eigen::VectorXd theta(flexible ? 5 : 4);
  theta.head<4>() << 1.280e-3, 0.600e-4, 0.370, 0.080;
  if (flexible) theta(4) = 0.460;
  return theta;
}

Eigen::VectorXd XyTablePublishedEstimate(XyStage stage) {
  switch (stage) {
    case XyStage::kRigid:
      return (Eigen::VectorXd(4) << 2.207e-3, 1.582e-4, 0.477, 0.154).finished();
    case XyStage::kFlexible:
      return (Eigen::VectorXd(5) << 2.187e-3, 1.380e-4, 0.465, 0.152, 0.210).finished();
    case XyStage::kFlexibleWithAccelerations:
      return (Eigen::VectorXd(5) << 2.099e-3, 1.437e-4, 0.461, 0.151, 0.245).finished();
  }
  return Eigen::VectorXd();
}

bool XyTableWeightOptions::IsValid(std::string* why) const {
  if (!(measurement_emphasis > 0.0) || !std::isfinite(measurement_emphasis)) {
    if (why) *why = "measurement_emphasis must be positive";
    return false;
  }
  if (!(kinematic_emphasis > 0.0) || !std::isfinite(kinematic_emphasis) ||
      !(equation_emphasis > 0.0) || !std::isfinite(equation_emphasis)) {
    if (why) *why = "kinematic_emphasis and equation_emphasis must be positive";
    return false;
  }
  if (!(acceleration_weight >= 0.0) || !std::isfinite(acceleration_weight)) {
    if (why) *why = "acceleration_weight must be >= 0";
    return false;
  }
  return true;
}

namespace {

double MaxAbs(const Eigen::VectorXd& x) {
  const double m = x.cwiseAbs().maxCoeff();
  return m > 0.0 ? m : 1.0;
}

// Central difference over ±2 samples (one-sided at the ends).
Eigen::VectorXd Differentiate(const Eigen::VectorXd& t, const Eigen::VectorXd& x) {
  const int N = static_cast<int>(t.size());
  Eigen::VectorXd dx(N);
  for (int k = 0; k < N; ++k) {
    const int a = std::max(0, k - 2), b = std::min(N - 1, k + 2);
    dx(k) = (x(b) - x(a)) / (t(b) - t(a));
  }
  return dx;
}

}  // namespace

WeightedResidualWeights XyTableWeights(XyStage stage, const WeightedResidualData& data,
                                       const models::XyTableParameters& parameters,
                                       const XyTableWeightOptions& options) {
  std::string why;
  CHECK(options.IsValid(&why)) << why;
  CHECK_EQ(data.measurements.cols(), 8) << "xy-table measurements";
  const bool flexible = stage != XyStage::kRigid;
  const double radius = parameters.wheel_radius_m;
  const Eigen::MatrixXd& z = data.measurements;
  // Typical sizes of the terms.
  const double velocity = std::max(MaxAbs(Differentiate(data.time, z.col(4))),
                                   MaxAbs(Differentiate(data.time, z.col(5))));
  const double acceleration = std::max(MaxAbs(z.col(2)), MaxAbs(z.col(3))) / radius;
  const double torque1 = parameters.torque_constant1_nm_per_a * MaxAbs(z.col(6));
  const double torque2 = parameters.torque_constant2_nm_per_a * MaxAbs(z.col(7));

  // Every entry by its name in the model's description (problems/weighted_residual_weights.h).
  const models::ModelInfo info = flexible ? models::XyTableFlexible(parameters).Info()
                                          : models::XyTableRigid(parameters).Info();
  WeightedResidualWeights w;
  w.parameter = Eigen::MatrixXd::Identity(flexible ? 5 : 4, flexible ? 5 : 4);
  auto set = [&](const std::string& name, double weight) {
    std::string error;
    CHECK(w.Set(info, name, weight, &error)) << error;
  };
  for (const models::VariableInfo& position : info.positions) {
    set("W.s." + position.name, options.kinematic_emphasis * ThesisRuleWeight(velocity));
    set("W.v." + position.name, options.kinematic_emphasis * ThesisRuleWeight(acceleration));
  }
  // The motor torque balances, and the spindle's, which carries motor-1-sized torques.
  set("V.eom." + info.equations[0].name, ThesisRuleWeight(torque1) * options.equation_emphasis);
  set("V.eom." + info.equations[1].name, ThesisRuleWeight(torque2) * options.equation_emphasis);
  if (flexible) {
    set("V.eom." + info.equations[2].name, ThesisRuleWeight(torque1) * options.equation_emphasis);
  }
  const double emphasis = options.measurement_emphasis;
  auto set_measurement = [&](int j, double weight) {
    set("V.z." + info.measurements[j].name, weight);
  };
  // Encoders and currents; the end-effector positions only where the model resolves them.
  for (int j : {4, 5, 6, 7}) set_measurement(j, emphasis * ThesisRuleWeight(MaxAbs(z.col(j))));
  if (flexible) {
    for (int j : {0, 1}) set_measurement(j, emphasis * ThesisRuleWeight(MaxAbs(z.col(j))));
  }
  if (stage == XyStage::kFlexibleWithAccelerations) {
    set_measurement(2, options.acceleration_weight);
    set_measurement(3, options.acceleration_weight);
  }
  return w;
}

void InitializeXyTableVariables(XyStage stage, const WeightedResidualData& data,
                                const models::XyTableParameters& parameters,
                                const Eigen::VectorXd& theta0,
                                WeightedResidualVariables* variables) {
  const bool flexible = stage != XyStage::kRigid;
  const int n = flexible ? 3 : 2, m = 2;
  CHECK_EQ(theta0.size(), flexible ? 5 : 4) << "theta0 for the " << XyStageName(stage) << " stage";
  const int N = static_cast<int>(data.time.size());
  ResizeVariables(n, m, theta0, N, ParameterMode::kConstant, variables);
  const Eigen::MatrixXd& z = data.measurements;
  const double radius = parameters.wheel_radius_m;
  const Eigen::VectorXd w1 = Differentiate(data.time, z.col(4));
  const Eigen::VectorXd w2 = Differentiate(data.time, z.col(5));
  // phi3 from x_e = r phi1 + beta r (phi3 − phi1) where the lever beta = y_e/d is not small
  // (phi3 = phi1 elsewhere); its acceleration starts equal to phi1's.
  const double d = parameters.slideway_distance_m;
  Eigen::VectorXd phi3(N);
  for (int k = 0; k < N; ++k) {
    const double beta = z(k, 1) / d;
    const bool lever = beta > 0.2;
    phi3(k) = lever ? z(k, 4) + (z(k, 0) - radius * z(k, 4)) / (beta * radius) : z(k, 4);
  }
  const Eigen::VectorXd w3 = Differentiate(data.time, phi3);
  for (int k = 0; k < N; ++k) {
    Eigen::VectorXd s(n), v(n), a(n);
    s(0) = z(k, 4), s(1) = z(k, 5);
    v(0) = w1(k), v(1) = w2(k);
    a(0) = z(k, 3) / radius, a(1) = z(k, 2) / radius;
    if (flexible) s(2) = phi3(k), v(2) = w3(k), a(2) = a(0);
    variables->states.col(k) << s, v;
    variables->inputs.col(k) << a, z(k, 6), z(k, 7);
  }
}

void SelectInterval(const Eigen::VectorXd& time, double start, double end, int* first, int* count) {
  *first = -1;
  *count = 0;
  for (int k = 0; k < time.size(); ++k) {
    if (time(k) >= start - 1e-9 && time(k) <= end + 1e-9) {
      if (*first < 0) *first = k;
      ++*count;
    }
  }
  if (*first < 0) *first = 0;
}

XyTableCase MakeXyTableCase(const XyTableCaseOptions& options) {
  XyTableCase c;
  c.parameters = options.system.table;
  c.rigid = models::XyTableRigid(c.parameters);
  c.flexible = models::XyTableFlexible(c.parameters);
  c.record = SimulateXyTable(options.system, options.experiment);
  int count = 0;
  SelectInterval(c.record.time, options.interval_start_s, options.interval_end_s, &c.first_sample,
                 &count);
  CHECK_GE(count, 2) << "identification interval [" << options.interval_start_s << ", "
                     << options.interval_end_s << "] holds fewer than 2 samples";
  c.data.time = c.record.time.segment(c.first_sample, count);
  c.data.measurements = c.record.measurements.middleRows(c.first_sample, count);
  for (XyStage stage : {XyStage::kRigid, XyStage::kFlexible, XyStage::kFlexibleWithAccelerations}) {
    c.weights[static_cast<int>(stage)] =
        XyTableWeights(stage, c.data, c.parameters, options.weights);
  }
  c.rigid_theta0 = XyTableThesisInitialGuess(false);
  c.flexible_theta0 = XyTableThesisInitialGuess(true);
  return c;
}

}  // namespace dynid::xy_table_study
