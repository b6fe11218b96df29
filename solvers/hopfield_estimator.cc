#include "dynid/solvers/hopfield_estimator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "dynid/models/integrator.h"

namespace dynid::solvers {

bool HopfieldOptions::IsValid(int num_parameters, std::string* why) const {
  std::ostringstream os;
  if (!(gain > 0.0) || !std::isfinite(gain)) {
    os << "gain must be > 0, got " << gain;
  } else if (initial_parameters.size() != num_parameters || !initial_parameters.allFinite()) {
    os << "initial_parameters must hold " << num_parameters << " finite values";
  } else if (min_steps_per_sample < 1) {
    os << "min_steps_per_sample must be >= 1, got " << min_steps_per_sample;
  } else if (activation == HopfieldActivation::kTanh) {
    if (!(beta > 0.0) || !std::isfinite(beta)) {
      os << "beta must be > 0, got " << beta;
    } else if (amplitude.size() != num_parameters || !(amplitude.array() > 0.0).all()) {
      os << "amplitude must hold " << num_parameters << " positive values";
    } else if (!(initial_parameters.array().abs() < amplitude.array()).all()) {
      os << "|initial_parameters| must be below amplitude for the tanh activation";
    }
  }
  if (os.str().empty()) return true;
  if (why != nullptr) *why = os.str();
  return false;
}

bool RunHopfieldEstimator(const Eigen::VectorXd& times, const Eigen::MatrixXd& regressor,
                          const Eigen::VectorXd& torques, const HopfieldOptions& options,
                          HopfieldResult* result, std::string* error) {
  const auto start = std::chrono::steady_clock::now();
  *result = HopfieldResult();
  const int num = static_cast<int>(times.size());
  const int np = static_cast<int>(regressor.cols());
  std::string why;
  if (num < 2 || np < 1 || regressor.rows() % num != 0 || regressor.rows() == 0 ||
      torques.size() != regressor.rows() || !regressor.allFinite() || !torques.allFinite() ||
      !times.allFinite()) {
    *error = "Hopfield estimator needs N >= 2 samples, a finite (N·m) × p regressor and N·m torques";
    return false;
  }
  for (int k = 1; k < num; ++k) {
    if (!(times(k) > times(k - 1))) {
      *error = "Hopfield estimator: times must increase strictly (sample " + std::to_string(k) +
               ")";
      return false;
    }
  }
  if (!options.IsValid(np, &why)) {
    *error = "invalid Hopfield options: " + why;
    return false;
  }
  const int m = static_cast<int>(regressor.rows() / num);
  const bool is_tanh = options.activation == HopfieldActivation::kTanh;
  // Neuron states s from outputs p.
  auto to_state = [&](const Eigen::VectorXd& p) -> Eigen::VectorXd {
    if (!is_tanh) return p;
    Eigen::VectorXd s(np);
    for (int i = 0; i < np; ++i) s(i) = options.beta * std::atanh(p(i) / options.amplitude(i));
    return s;
  };
  auto to_output = [&](const Eigen::VectorXd& s) -> Eigen::VectorXd {
    if (!is_tanh) return s;
    Eigen::VectorXd p(np);
    for (int i = 0; i < np; ++i) p(i) = options.amplitude(i) * std::tanh(s(i) / options.beta);
    return p;
  };
  const double slope = is_tanh ? options.amplitude.maxCoeff() / options.beta : 1.0;

  result->parameters.resize(num, np);
  result->energy.resize(num);
  Eigen::VectorXd s = to_state(options.initial_parameters);
  for (int k = 0; k < num; ++k) {
    const Eigen::MatrixXd phi = regressor.middleRows(k * m, m);
    const Eigen::VectorXd tau = torques.segment(k * m, m);
    const Eigen::VectorXd p_now = to_output(s);
    result->parameters.row(k) = p_now.transpose();
    result->energy(k) = 0.5 * (tau - phi * p_now).squaredNorm();
    result->iterations = k + 1;
    if (k == num - 1) break;
    const Eigen::MatrixXd w = -options.gain * phi.transpose() * phi;
    const Eigen::VectorXd b = options.gain * phi.transpose() * tau;
    const double dt = times(k + 1) - times(k);
    const double stiffness = w.cwiseAbs().rowwise().sum().maxCoeff() * slope;  // ||W||∞ max σ'
    const int steps = std::max(options.min_steps_per_sample,
                               static_cast<int>(std::ceil(stiffness * dt / 2.5)));
    result->max_steps_per_sample = std::max(result->max_steps_per_sample, steps);
    const double h = dt / steps;
    auto rhs = [&](double, const Eigen::VectorXd& state) -> Eigen::VectorXd {
      return w * to_output(state) + b;
    };
    s = models::IntegrateRk4(rhs, 0.0, h, steps, s);
    if (!s.allFinite()) {
      *error = "Hopfield network diverged at sample " + std::to_string(k + 1);
      result->message = *error;
      return false;
    }
  }
  // Time mean and spread of p(t) (trapezoid rule) over the averaging window.
  int first = 0;
  while (first < num - 1 && times(first) < options.mean_start_s) ++first;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(np);
  Eigen::VectorXd second = Eigen::VectorXd::Zero(np);
  double span = 0.0;
  for (int k = first; k + 1 < num; ++k) {
    const double dt = times(k + 1) - times(k);
    const Eigen::VectorXd a = result->parameters.row(k).transpose();
    const Eigen::VectorXd c = result->parameters.row(k + 1).transpose();
    mean += 0.5 * dt * (a + c);
    second += 0.5 * dt * (a.cwiseProduct(a) + c.cwiseProduct(c));
    span += dt;
  }
  if (span > 0.0) {
    mean /= span;
    second /= span;
  } else {
    mean = result->parameters.row(num - 1).transpose();
    second = mean.cwiseProduct(mean);
  }
  result->mean_estimate = mean;
  result->mean_std = (second - mean.cwiseProduct(mean)).cwiseMax(0.0).cwiseSqrt();
  result->final_estimate = result->parameters.row(num - 1).transpose();
  result->cost = 0.5 * (torques - [&] {
                   Eigen::VectorXd pred(torques.size());
                   for (int k = 0; k < num; ++k) {
                     pred.segment(k * m, m) =
                         regressor.middleRows(k * m, m) * result->final_estimate;
                   }
                   return pred;
                 }()).squaredNorm();
  result->converged = true;
  std::ostringstream os;
  os << "integrated " << num << " samples, up to " << result->max_steps_per_sample
     << " RK4 steps per sample";
  result->message = os.str();
  result->time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
