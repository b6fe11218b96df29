// experiments::ThreeInertiaDrive — the benchmark model of xy-table size (n = 3, m = 2, p = 5,
// l = 8) shared by bench_weighted_residual and bench_first_order, and the benchmark's data:
// a simulated run under two multisine torques with Gaussian measurement noise, its weights, and
// the start of the estimators (theta 20 % off).
#ifndef DYNID_EXPERIMENTS_BENCHMARKS_THREE_INERTIA_DRIVE_H_
#define DYNID_EXPERIMENTS_BENCHMARKS_THREE_INERTIA_DRIVE_H_

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/models/mechanical_model.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/problems/weighted_residual_weights.h"

namespace dynid::experiments {

// Three inertias: J1 (motor 1) coupled by a torsion spring k to J3 (fixed, the far end of the
// spindle), J2 (motor 2) independent; smooth dry friction w tanh(v / 0.01) on both motors.
class ThreeInertiaDrive : public dynid::models::MechanicalModelBase<3, 2, 5, 8> {
 public:
  static constexpr double kFarInertia = 2e-3;   // J3 [kg m²]
  static constexpr double kFarDamping = 1e-3;   // [N m s/rad]
  static constexpr double kSmoothing = 1e-2;    // rad/s

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    using std::tanh;
    const T spring = theta[4] * (s[0] - s[2]);
    r[0] = theta[0] * a[0] + theta[2] * tanh(v[0] / kSmoothing) + spring - u[0];
    r[1] = theta[1] * a[1] + theta[3] * tanh(v[1] / kSmoothing) - u[1];
    r[2] = kFarInertia * a[2] + kFarDamping * v[2] - spring;
  }

  template <class T>
  void Measurements(const T* s, const T* /*v*/, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    for (int i = 0; i < 3; ++i) z[i] = s[i];
    for (int i = 0; i < 3; ++i) z[3 + i] = a[i];
    z[6] = u[0];
    z[7] = u[1];
  }

  dynid::models::ModelInfo Info() const {
    dynid::models::ModelInfo info;
    info.name = "three_inertia_drive";
    info.positions = {{"phi1", "rad"}, {"phi2", "rad"}, {"phi3", "rad"}};
    info.inputs = {{"T1", "N m"}, {"T2", "N m"}};
    info.parameters = {{"J1", "kg m^2"}, {"J2", "kg m^2"}, {"w1", "N m"}, {"w2", "N m"},
                       {"k", "N m/rad"}};
    for (const char* name : {"phi1_m", "phi2_m", "phi3_m"}) info.measurements.push_back({name, "rad"});
    for (const char* name : {"a1_m", "a2_m", "a3_m"}) info.measurements.push_back({name, "rad/s^2"});
    info.measurements.push_back({"T1_m", "N m"});
    info.measurements.push_back({"T2_m", "N m"});
    info.equations = {{"motor1", "N m"}, {"motor2", "N m"}, {"far_end", "N m"}};
    return info;
  }
  ParameterVector NominalParameters() const {
    ParameterVector theta;
    theta << 2.2e-3, 1.5e-4, 0.47, 0.15, 2.0;
    return theta;
  }
};

// The benchmark's problem at N nodes spaced h apart: data simulated with RK4 (4 substeps) under
// u1 = 0.8 sin(2π 1.3 t) + 0.4 sin(2π 3.7 t + 1), u2 = 0.3 sin(2π 0.9 t) + 0.2 sin(2π 5.1 t + 0.5),
// noise sigma = [1e-4 rad ×3, 0.5 rad/s² ×3, 1e-2 N m ×2] (seeded), V = diag(1e4 ×3, sigma⁻²/h),
// W = diag(1e6 ×3, 1e2 ×3); the start takes positions, accelerations and torques from the
// measurements, zero velocities and theta = 1.2 × true.
struct ThreeInertiaDriveProblem {
  problems::WeightedResidualData data;
  problems::WeightedResidualWeights weights;
  problems::WeightedResidualVariables start;
};

inline ThreeInertiaDriveProblem MakeThreeInertiaDriveProblem(int num_nodes, double h,
                                                             unsigned seed) {
  const ThreeInertiaDrive model;
  const ThreeInertiaDrive::ParameterVector theta_true = model.NominalParameters();
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_nodes, 0.0, h * (num_nodes - 1));
  auto input = [](double t, double* u) {
    u[0] = 0.8 * std::sin(2.0 * M_PI * 1.3 * t) + 0.4 * std::sin(2.0 * M_PI * 3.7 * t + 1.0);
    u[1] = 0.3 * std::sin(2.0 * M_PI * 0.9 * t) + 0.2 * std::sin(2.0 * M_PI * 5.1 * t + 0.5);
  };
  const models::Trajectory truth = models::Simulate(
      model, theta_true, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), input, times, 4);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::Matrix<double, 8, 1> sigma;
  sigma << 1e-4, 1e-4, 1e-4, 0.5, 0.5, 0.5, 1e-2, 1e-2;
  ThreeInertiaDriveProblem problem;
  problem.data = problems::WeightedResidualData{times, truth.measurements};
  for (int k = 0; k < num_nodes; ++k) {
    for (int j = 0; j < 8; ++j) problem.data.measurements(k, j) += sigma(j) * normal(rng);
  }
  problems::NoiseStandardDeviations noise;
  noise.kinematic_weights =
      (Eigen::Matrix<double, 6, 1>() << 1e6, 1e6, 1e6, 1e2, 1e2, 1e2).finished();
  noise.equation_weights = Eigen::Vector3d::Constant(1e4);
  noise.measurements = sigma;
  problem.weights = problems::WeightedResidualWeights::FromStandardDeviations(noise, h);
  problems::ResizeVariables(3, 2, 1.2 * theta_true, num_nodes, problems::ParameterMode::kConstant,
                            &problem.start);
  for (int k = 0; k < num_nodes; ++k) {
    const auto z = problem.data.measurements.row(k);
    problem.start.states.col(k).head(3) = z.head(3).transpose();
    problem.start.inputs.col(k).head(3) = z.segment(3, 3).transpose();
    problem.start.inputs.col(k).tail(2) = z.tail(2).transpose();
  }
  return problem;
}

// The benchmarks' --sizes: comma-separated node counts, each an integer >= 10; false with the
// offending item in *bad_item.
inline bool ParseNodeCounts(const std::string& text, std::vector<int>* sizes,
                            std::string* bad_item) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    errno = 0;
    const long size = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || size < 10 || size > 100000000) {
      *bad_item = item;
      return false;
    }
    sizes->push_back(static_cast<int>(size));
  }
  if (sizes->empty()) *bad_item = text;
  return !sizes->empty();
}

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_BENCHMARKS_THREE_INERTIA_DRIVE_H_
