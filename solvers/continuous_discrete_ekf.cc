#include "dynid/solvers/continuous_discrete_ekf.h"

#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "dynid/models/integrator.h"

namespace dynid::solvers {

namespace {

// The joint state of the prediction, integrated by the library's RK4 (models/integrator.h):
// the mean and the covariance of the continuous–discrete filter.
struct MeanAndCovariance {
  Eigen::VectorXd x;
  Eigen::MatrixXd P;
};
MeanAndCovariance operator+(const MeanAndCovariance& a, const MeanAndCovariance& b) {
  return {a.x + b.x, a.P + b.P};
}
MeanAndCovariance operator*(double s, const MeanAndCovariance& a) { return {s * a.x, s * a.P}; }

bool IsSymmetric(const Eigen::MatrixXd& a) {
  return (a - a.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * (1.0 + a.cwiseAbs().maxCoeff());
}

bool IsPositiveSemiDefinite(const Eigen::MatrixXd& a) {
  if (!a.allFinite() || !IsSymmetric(a)) return false;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(a, Eigen::EigenvaluesOnly);
  return eig.eigenvalues().minCoeff() >= -1e-12 * (1.0 + a.cwiseAbs().maxCoeff());
}

}  // namespace

bool ContinuousDiscreteEkfOptions::IsValid(const ContinuousDiscreteSystem& system,
                                           std::string* why) const {
  const int n = system.state_size, l = system.measurement_size;
  std::ostringstream out;
  if (n < 1 || l < 1) {
    out << "system sizes must be >= 1, got n = " << n << ", l = " << l;
  } else if (!system.dynamics || !system.measurement) {
    out << "system needs both a dynamics and a measurement function";
  } else if (process_noise_intensity.rows() != n || process_noise_intensity.cols() != n) {
    out << "Q must be " << n << " × " << n << ", got " << process_noise_intensity.rows() << " × "
        << process_noise_intensity.cols();
  } else if (!IsPositiveSemiDefinite(process_noise_intensity)) {
    out << "Q must be symmetric positive semi-definite";
  } else if (measurement_covariance.rows() != l || measurement_covariance.cols() != l) {
    out << "R must be " << l << " × " << l << ", got " << measurement_covariance.rows() << " × "
        << measurement_covariance.cols();
  } else if (!IsSymmetric(measurement_covariance) ||
             Eigen::LLT<Eigen::MatrixXd>(measurement_covariance).info() != Eigen::Success) {
    out << "R must be symmetric positive definite";
  } else if (initial_state.size() != n || !initial_state.allFinite()) {
    out << "initial state must have " << n << " finite values, got " << initial_state.size();
  } else if (initial_covariance.rows() != n || initial_covariance.cols() != n ||
             !IsPositiveSemiDefinite(initial_covariance)) {
    out << "P0 must be a " << n << " × " << n << " symmetric positive semi-definite matrix";
  } else if (steps_per_sample < 1) {
    out << "steps_per_sample must be >= 1, got " << steps_per_sample;
  }
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

bool RunContinuousDiscreteEkf(const ContinuousDiscreteSystem& system, const Eigen::VectorXd& times,
                              const Eigen::MatrixXd& measurements,
                              const ContinuousDiscreteEkfOptions& options,
                              ContinuousDiscreteEkfResult* result, std::string* error) {
  CHECK(result != nullptr) << "expected a result, got nullptr";
  const auto start = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& message) {
    result->message = message;
    result->converged = false;
    result->time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (error) *error = message;
    return false;
  };
  std::string why;
  if (!options.IsValid(system, &why)) return fail("continuous-discrete EKF options: " + why);
  const int n = system.state_size, l = system.measurement_size;
  const int num_samples = static_cast<int>(times.size());
  if (num_samples < 1) return fail("expected at least one sample, got 0");
  if (measurements.rows() != num_samples || measurements.cols() != l) {
    std::ostringstream out;
    out << "measurements must be " << num_samples << " × " << l << ", got " << measurements.rows()
        << " × " << measurements.cols();
    return fail(out.str());
  }
  for (int k = 1; k < num_samples; ++k) {
    if (!(times(k) > times(k - 1))) {
      return fail("times must be strictly increasing (sample " + std::to_string(k) + ")");
    }
  }
  if (!measurements.allFinite()) return fail("measurements contain NaN or Inf");

  result->states.resize(num_samples, n);
  result->state_std.resize(num_samples, n);
  result->predicted_measurements.resize(num_samples, l);
  result->prediction_errors.resize(num_samples, l);
  result->prediction_error_std.resize(num_samples, l);
  result->log_likelihood = 0.0;
  result->iterations = 0;
  result->max_steps_per_sample = 0;

  const Eigen::MatrixXd& Q = options.process_noise_intensity;
  const Eigen::MatrixXd& R = options.measurement_covariance;
  Eigen::VectorXd x = options.initial_state;
  Eigen::MatrixXd P = options.initial_covariance;
  Eigen::VectorXd f(n), y_hat(l);
  Eigen::MatrixXd F(n, n), F_frozen(n, n), H(l, n);

  // Derivative of the joint (x, P) system at one RK4 stage.
  auto stage = [&](int k, double t, const Eigen::VectorXd& xs, const Eigen::MatrixXd& Ps,
                   Eigen::VectorXd* dxs, Eigen::MatrixXd* dPs) {
    if (options.freeze_jacobian) {
      system.dynamics(k, t, xs, dxs, nullptr);
      F = F_frozen;
    } else {
      system.dynamics(k, t, xs, dxs, &F);
    }
    *dPs = F * Ps;
    *dPs += dPs->transpose().eval();
    *dPs += Q;
  };

  const double log_two_pi = std::log(2.0 * M_PI);
  for (int k = 0; k < num_samples; ++k) {
    if (k > 0) {
      const int interval = k - 1;
      const double t0 = times(k - 1);
      int steps = options.steps_per_sample;
      if (options.freeze_jacobian || options.stable_steps) {
        system.dynamics(interval, t0, x, &f, &F_frozen);
      }
      if (options.stable_steps) {
        const double norm = F_frozen.cwiseAbs().rowwise().sum().maxCoeff();
        const double needed = std::ceil(2.0 * norm * (times(k) - t0) / 2.5);
        if (needed > steps) steps = static_cast<int>(std::min(needed, 1e6));
      }
      result->max_steps_per_sample = std::max(result->max_steps_per_sample, steps);
      const double h = (times(k) - t0) / steps;
      auto derivative = [&](double t, const MeanAndCovariance& s) {
        MeanAndCovariance d;
        stage(interval, t, s.x, s.P, &d.x, &d.P);
        return d;
      };
      MeanAndCovariance state{x, P};
      for (int i = 0; i < steps; ++i) {
        state = models::Rk4Step(derivative, t0 + i * h, h, state);
        state.P = 0.5 * (state.P + state.P.transpose()).eval();
      }
      x = state.x;
      P = state.P;
    }
    // Update with y_k.
    system.measurement(k, x, &y_hat, &H);
    const Eigen::VectorXd e = measurements.row(k).transpose() - y_hat;
    const Eigen::MatrixXd PHt = P * H.transpose();
    Eigen::MatrixXd A = H * PHt + R;
    A = 0.5 * (A + A.transpose()).eval();
    Eigen::LLT<Eigen::MatrixXd> llt(A);
    if (llt.info() != Eigen::Success || !x.allFinite() || !P.allFinite()) {
      result->states.conservativeResize(k, n);
      result->state_std.conservativeResize(k, n);
      result->predicted_measurements.conservativeResize(k, l);
      result->prediction_errors.conservativeResize(k, l);
      result->prediction_error_std.conservativeResize(k, l);
      return fail("continuous-discrete EKF diverged at sample " + std::to_string(k) +
                  " (t = " + std::to_string(times(k)) + " s): " +
                  (x.allFinite() && P.allFinite()
                       ? "innovation covariance not positive definite (P lost definiteness; "
                         "increase Q or the steps per sample)"
                       : "non-finite state or covariance"));
    }
    const Eigen::MatrixXd gain = llt.solve(PHt.transpose()).transpose();  // P Hᵀ A⁻¹
    x += gain * e;
    P -= gain * A * gain.transpose();
    P = 0.5 * (P + P.transpose()).eval();
    const Eigen::MatrixXd L = llt.matrixL();
    result->log_likelihood -=
        0.5 * (e.dot(llt.solve(e)) + 2.0 * L.diagonal().array().log().sum() + l * log_two_pi);
    result->states.row(k) = x.transpose();
    result->state_std.row(k) = P.diagonal().cwiseMax(0.0).cwiseSqrt().transpose();
    result->predicted_measurements.row(k) = y_hat.transpose();
    result->prediction_errors.row(k) = e.transpose();
    result->prediction_error_std.row(k) = A.diagonal().cwiseSqrt().transpose();
    result->iterations = k + 1;
  }
  result->final_covariance = P;
  result->converged = true;
  result->message = "processed " + std::to_string(num_samples) + " samples";
  result->time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

bool SaekfOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (!(state_noise_intensity.array() >= 0.0).all() || !state_noise_intensity.allFinite()) {
    out << "Q_xx must be finite and >= 0";
  } else if (!(tau_noise_intensity > 0.0) || !std::isfinite(tau_noise_intensity)) {
    out << "Q_pp must be > 0, got " << tau_noise_intensity;
  } else if (!(measurement_variance > 0.0) || !std::isfinite(measurement_variance)) {
    out << "R must be > 0, got " << measurement_variance;
  } else if (!initial_state.allFinite() || !std::isfinite(initial_tau)) {
    out << "initial state must be finite";
  } else if (!(initial_std.array() >= 0.0).all() || !initial_std.allFinite()) {
    out << "initial standard deviations must be finite and >= 0";
  } else if (steps_per_sample < 1) {
    out << "steps_per_sample must be >= 1, got " << steps_per_sample;
  }
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

bool RunSaekf(const models::TwoMassTransmission& model, const Eigen::VectorXd& input,
              double sample_period_s, const Eigen::MatrixXd& measurements,
              const SaekfOptions& options, SaekfResult* result, std::string* error) {
  CHECK(result != nullptr) << "expected a result, got nullptr";
  std::string why;
  if (!options.IsValid(&why)) {
    if (error) *error = "SAEKF options: " + why;
    return false;
  }
  const int l = options.measure_arm_velocity ? 2 : 1;
  const int num_samples = static_cast<int>(input.size());
  if (measurements.rows() != num_samples || measurements.cols() != l) {
    if (error) {
      *error = "SAEKF: measurements must be " + std::to_string(num_samples) + " × " +
               std::to_string(l) + ", got " + std::to_string(measurements.rows()) + " × " +
               std::to_string(measurements.cols());
    }
    return false;
  }
  if (!(sample_period_s > 0.0)) {
    if (error) *error = "SAEKF: sample period must be > 0";
    return false;
  }
  ContinuousDiscreteSystem system;
  system.state_size = 5;
  system.measurement_size = l;
  system.dynamics = [&](int k, double /*t*/, const Eigen::VectorXd& X, Eigen::VectorXd* f,
                        Eigen::MatrixXd* F) {
    f->resize(5);
    model.StateDerivative(X.data(), input(k), X(4), f->data());
    (*f)(4) = 0.0;  // p' = v5: the random walk has no drift
    if (F != nullptr) {
      Eigen::Matrix4d J_x;
      Eigen::Vector4d J_tau;
      model.StateJacobians(X.head<4>(), &J_x, &J_tau);
      F->setZero(5, 5);
      F->topLeftCorner<4, 4>() = J_x;
      F->topRightCorner<4, 1>() = J_tau;
    }
  };
  system.measurement = [l](int /*k*/, const Eigen::VectorXd& X, Eigen::VectorXd* y,
                           Eigen::MatrixXd* H) {
    y->resize(l);
    H->setZero(l, 5);
    for (int j = 0; j < l; ++j) {
      (*y)(j) = X(2 + j);
      (*H)(j, 2 + j) = 1.0;
    }
  };
  ContinuousDiscreteEkfOptions ekf;
  ekf.process_noise_intensity = Eigen::MatrixXd::Zero(5, 5);
  ekf.process_noise_intensity.topLeftCorner<4, 4>() = options.state_noise_intensity.asDiagonal();
  ekf.process_noise_intensity(4, 4) = options.tau_noise_intensity;
  ekf.measurement_covariance = options.measurement_variance * Eigen::MatrixXd::Identity(l, l);
  ekf.initial_state.resize(5);
  ekf.initial_state << options.initial_state, options.initial_tau;
  ekf.initial_covariance = options.initial_std.array().square().matrix().asDiagonal();
  ekf.steps_per_sample = options.steps_per_sample;
  ekf.freeze_jacobian = options.freeze_jacobian;
  ekf.stable_steps = options.stable_steps;
  const Eigen::VectorXd times =
      Eigen::VectorXd::LinSpaced(num_samples, 0.0, (num_samples - 1) * sample_period_s);
  const bool ok =
      RunContinuousDiscreteEkf(system, times, measurements, ekf, &result->filter, error);
  const Eigen::MatrixXd& X = result->filter.states;
  result->states = X.leftCols<4>();
  result->tau = X.col(4);
  result->tau_std = result->filter.state_std.col(4);
  result->delta = X.col(0) - X.col(1);
  if (!ok && error) *error = "SAEKF: " + *error;
  return ok;
}

}  // namespace dynid::solvers
