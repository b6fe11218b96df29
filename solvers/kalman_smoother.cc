#include "dynid/solvers/kalman_smoother.h"

#include <chrono>
#include <cmath>
#include <sstream>

#include <Eigen/Cholesky>
#include <Eigen/LU>

namespace dynid::solvers {

namespace {

bool IsSymmetric(const Eigen::MatrixXd& m) {
  if (m.rows() != m.cols() || !m.allFinite()) return false;
  return (m - m.transpose()).cwiseAbs().maxCoeff() <= 1e-9 * (1.0 + m.cwiseAbs().maxCoeff());
}

bool IsPositiveSemiDefinite(const Eigen::MatrixXd& m) {
  if (!IsSymmetric(m)) return false;
  Eigen::LDLT<Eigen::MatrixXd> ldlt(m);
  return ldlt.info() == Eigen::Success && ldlt.isPositive();
}

}  // namespace

bool IsPositiveDefinite(const Eigen::MatrixXd& matrix) {
  if (matrix.rows() != matrix.cols() || matrix.rows() == 0 || !matrix.allFinite()) return false;
  Eigen::LLT<Eigen::MatrixXd> llt(matrix);
  return llt.info() == Eigen::Success;
}

bool KalmanFilterOptions::IsValid(const DiscreteStateSpaceSystem& system,
                                  std::string* why) const {
  const int n = system.state_size;
  const int l = system.measurement_size;
  std::ostringstream os;
  if (n < 1 || l < 1) {
    os << "system sizes must be positive (state " << n << ", measurement " << l << ")";
  } else if (!system.transition || !system.measurement) {
    os << "system needs both a transition and a measurement function";
  } else if (process_noise.rows() != n || process_noise.cols() != n) {
    os << "process_noise must be " << n << " x " << n;
  } else if (!IsPositiveSemiDefinite(process_noise)) {
    os << "process_noise must be symmetric positive semi-definite";
  } else if (measurement_covariance.rows() != l || measurement_covariance.cols() != l) {
    os << "measurement_covariance must be " << l << " x " << l;
  } else if (!IsSymmetric(measurement_covariance) || !IsPositiveDefinite(measurement_covariance)) {
    os << "measurement_covariance must be symmetric positive definite";
  } else if (initial_state.size() != n || !initial_state.allFinite()) {
    os << "initial_state must hold " << n << " finite values";
  } else if (initial_covariance.rows() != n || initial_covariance.cols() != n ||
             !IsSymmetric(initial_covariance) || !IsPositiveDefinite(initial_covariance)) {
    os << "initial_covariance must be " << n << " x " << n << " symmetric positive definite";
  }
  if (os.str().empty()) return true;
  if (why != nullptr) *why = os.str();
  return false;
}

Eigen::MatrixXd KalmanFilterRecord::FilteredStd() const {
  Eigen::MatrixXd out(filtered_states.rows(), filtered_states.cols());
  for (int k = 0; k < static_cast<int>(filtered_covariances.size()); ++k) {
    out.row(k) = filtered_covariances[k].diagonal().cwiseMax(0.0).cwiseSqrt().transpose();
  }
  return out;
}

bool RunRtsSmoother(const KalmanFilterRecord& record, RtsSmootherResult* result,
                    std::string* error) {
  const auto start = std::chrono::steady_clock::now();
  *result = RtsSmootherResult();
  const int num = static_cast<int>(record.filtered_states.rows());
  const int n = static_cast<int>(record.filtered_states.cols());
  if (!record.converged || num < 1 || n < 1 ||
      static_cast<int>(record.filtered_covariances.size()) != num ||
      static_cast<int>(record.predicted_covariances.size()) != num ||
      record.predicted_states.rows() != num ||
      static_cast<int>(record.cross_covariances.size()) != num - 1) {
    *error = "RTS smoother needs a complete, converged filter record";
    return false;
  }
  result->states.resize(num, n);
  result->covariances.assign(num, Eigen::MatrixXd());
  result->state_std.resize(num, n);
  result->states.row(num - 1) = record.filtered_states.row(num - 1);
  result->covariances[num - 1] = record.filtered_covariances[num - 1];
  for (int k = num - 2; k >= 0; --k) {
    const Eigen::MatrixXd& pp = record.predicted_covariances[k + 1];
    Eigen::LLT<Eigen::MatrixXd> llt(pp);
    if (llt.info() != Eigen::Success) {
      std::ostringstream os;
      os << "RTS smoother: predicted covariance at sample " << k + 1
         << " is not positive definite";
      *error = os.str();
      result->message = *error;
      return false;
    }
    // G = C P⁻⁻¹  ⇔  Gᵀ = P⁻⁻¹ Cᵀ (P⁻ symmetric).
    const Eigen::MatrixXd gain = llt.solve(record.cross_covariances[k].transpose()).transpose();
    result->states.row(k) =
        record.filtered_states.row(k) +
        (gain * (result->states.row(k + 1) - record.predicted_states.row(k + 1)).transpose())
            .transpose();
    Eigen::MatrixXd ps = record.filtered_covariances[k] +
                         gain * (result->covariances[k + 1] - pp) * gain.transpose();
    result->covariances[k] = 0.5 * (ps + ps.transpose());
    ++result->iterations;
  }
  for (int k = 0; k < num; ++k) {
    result->state_std.row(k) =
        result->covariances[k].diagonal().cwiseMax(0.0).cwiseSqrt().transpose();
  }
  if (!result->states.allFinite()) {
    *error = "RTS smoother produced non-finite states";
    result->message = *error;
    return false;
  }
  result->converged = true;
  result->message = "smoothed " + std::to_string(num) + " samples";
  result->time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
