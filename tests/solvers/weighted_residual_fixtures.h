// Shared test fixtures for the weighted-residual estimators: a simulated, noisy mass–spring–damper
// experiment with weights chosen as inverse noise intensities.
#ifndef DYNID_TESTS_SOLVERS_WEIGHTED_RESIDUAL_FIXTURES_H_
#define DYNID_TESTS_SOLVERS_WEIGHTED_RESIDUAL_FIXTURES_H_

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <random>

#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/mechanical_model.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/weighted_residual_smoother.h"

namespace dynid::testing_fixtures {

struct MsdExperiment {
  models::MassSpringDamper model;
  models::Trajectory truth;
  problems::WeightedResidualData data;
  problems::WeightedResidualWeights weights;
};

inline void MsdInput(double t, double* u) {
  u[0] = 3.0 * std::sin(2.0 * t) + 1.5 * std::cos(7.3 * t) + 0.5;
}

// Noise standard deviations of the discrete samples; the weights are the matching inverse
// intensities V = 1 / (sigma² h) so that the trapezoidal weights V w_k ≈ 1 / sigma².
struct MsdNoise {
  double position_m = 1e-3;
  double acceleration_m_per_s2 = 5e-2;
  double force_n = 2e-2;
};

// N samples over [0, duration]. `smooth_noise`: the "noise" is a fixed smooth function of time
// (so that data at different N sample the same continuous signal), else Gaussian (seed).
inline MsdExperiment MakeMsdExperiment(int num_samples, double duration, bool smooth_noise,
                                       unsigned seed, problems::ParameterMode mode) {
  MsdExperiment e;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_samples, 0.0, duration);
  e.truth = models::Simulate(e.model, e.model.NominalParameters(),
                             Eigen::Matrix<double, 1, 1>(0.05), Eigen::Matrix<double, 1, 1>(0.0),
                             &MsdInput, times, 10);
  const MsdNoise noise;
  const Eigen::Vector3d sigma(noise.position_m, noise.acceleration_m_per_s2, noise.force_n);
  e.data.time = times;
  e.data.measurements = e.truth.measurements;
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int k = 0; k < num_samples; ++k) {
    for (int j = 0; j < 3; ++j) {
      const double t = times(k);
      const double unit = smooth_noise ? std::sin(11.0 * t + 2.0 * j) * std::cos(5.0 * t - j)
                                       : normal(rng);
      e.data.measurements(k, j) += sigma(j) * unit;
    }
  }
  const double h = duration / (num_samples - 1);
  e.weights.kinematic = Eigen::Vector2d(1e3, 1e1).asDiagonal();
  e.weights.residual = Eigen::Vector4d(1e2, 1.0 / (sigma(0) * sigma(0) * h),
                                       1.0 / (sigma(1) * sigma(1) * h),
                                       1.0 / (sigma(2) * sigma(2) * h))
                           .asDiagonal();
  e.weights.parameter = Eigen::Vector3d(1.0, 1.0, 1.0).asDiagonal();
  const bool estimated = mode != problems::ParameterMode::kFixed;
  const int nx = estimated ? 5 : 2;
  e.weights.initial = Eigen::MatrixXd::Identity(nx, nx);
  e.weights.initial(0, 0) = 1e4;
  e.weights.initial(1, 1) = 1e2;
  e.weights.initial_guess = Eigen::VectorXd::Zero(nx);
  e.weights.initial_guess(0) = e.data.measurements(0, 0);
  if (estimated) {
    e.weights.initial.bottomRightCorner(3, 3) = Eigen::Vector3d(1e-2, 1e-2, 1e-4).asDiagonal();
    e.weights.initial_guess.tail(3) = Eigen::Vector3d(1.3, 0.3, 35.0);
  }
  return e;
}

// Solver options tight enough that the estimate is the optimum to round-off.
inline solvers::WeightedResidualSmootherOptions TightOptions() {
  solvers::WeightedResidualSmootherOptions options;
  options.function_tolerance = 1e-15;
  options.gradient_tolerance = 1e-15;
  options.parameter_tolerance = 1e-14;
  options.max_iterations = 200;
  return options;
}

// Variables at a start: states/inputs from the measurements (s measured, v = 0, a measured,
// u measured) and theta = `theta`.
inline problems::WeightedResidualVariables StartFromMeasurements(const MsdExperiment& e,
                                                                 const Eigen::Vector3d& theta,
                                                                 problems::ParameterMode mode) {
  problems::WeightedResidualVariables variables;
  const int num_nodes = static_cast<int>(e.data.time.size());
  problems::ResizeVariables(1, 1, theta, num_nodes, mode, &variables);
  for (int k = 0; k < num_nodes; ++k) {
    variables.states(0, k) = e.data.measurements(k, 0);
    variables.inputs(0, k) = e.data.measurements(k, 1);
    variables.inputs(1, k) = e.data.measurements(k, 2);
  }
  return variables;
}

// max_ij |a_ij − b_ij| / max(max_j |a_ij|, 1e-12): the largest difference relative to the size
// of each row of a (rows hold one variable over time, so each is compared at its own scale).
inline double MaxRelativeDifference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  double worst = 0.0;
  for (int i = 0; i < a.rows(); ++i) {
    const double scale = std::max(a.row(i).cwiseAbs().maxCoeff(), 1e-12);
    worst = std::max(worst, (a.row(i) - b.row(i)).cwiseAbs().maxCoeff() / scale);
  }
  return worst;
}

}  // namespace dynid::testing_fixtures

#endif  // DYNID_TESTS_SOLVERS_WEIGHTED_RESIDUAL_FIXTURES_H_
