#include "dynid/solvers/extended_kalman_filter.h"

#include <chrono>
#include <cmath>
#include <sstream>

#include <Eigen/Cholesky>

#include "dynid/solvers/internal/filter_measurements.h"

namespace dynid::solvers {

namespace {

constexpr double kLog2Pi = 1.8378770664093453;

bool Fail(int k, const std::string& what, KalmanFilterRecord* record, std::string* error) {
  std::ostringstream os;
  os << "EKF diverged at sample " << k << ": " << what;
  *error = os.str();
  record->message = *error;
  return false;
}

}  // namespace

bool RunExtendedKalmanFilter(const DiscreteStateSpaceSystem& system,
                             const Eigen::MatrixXd& measurements,
                             const KalmanFilterOptions& options, KalmanFilterRecord* record,
                             std::string* error) {
  const auto start = std::chrono::steady_clock::now();
  *record = KalmanFilterRecord();
  std::string why;
  if (!options.IsValid(system, &why)) {
    *error = "invalid EKF options: " + why;
    return false;
  }
  const int n = system.state_size;
  const int l = system.measurement_size;
  const int num = static_cast<int>(measurements.rows());
  if (!internal::CheckFilterMeasurements("EKF", l, measurements, error)) return false;
  record->filtered_states.resize(num, n);
  record->predicted_states.resize(num, n);
  record->innovations.resize(num, l);
  record->filtered_covariances.reserve(num);
  record->predicted_covariances.reserve(num);
  record->cross_covariances.reserve(num > 0 ? num - 1 : 0);

  Eigen::VectorXd x = options.initial_state;
  Eigen::MatrixXd p = options.initial_covariance;
  Eigen::VectorXd x_next(n), y_hat(l);
  Eigen::MatrixXd f_jac(n, n), h_jac(l, n);
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  for (int k = 0; k < num; ++k) {
    if (k > 0) {
      f_jac.setZero();
      system.transition(k - 1, x, &x_next, &f_jac);
      if (!x_next.allFinite() || !f_jac.allFinite()) {
        return Fail(k, "non-finite prediction", record, error);
      }
      record->cross_covariances.push_back(p * f_jac.transpose());
      Eigen::MatrixXd pp = f_jac * p * f_jac.transpose() + options.process_noise;
      p = 0.5 * (pp + pp.transpose());
      x = x_next;
    }
    record->predicted_states.row(k) = x.transpose();
    record->predicted_covariances.push_back(p);
    h_jac.setZero();
    system.measurement(k, x, &y_hat, &h_jac);
    const Eigen::VectorXd e = measurements.row(k).transpose() - y_hat;
    const Eigen::MatrixXd pht = p * h_jac.transpose();
    Eigen::MatrixXd a = h_jac * pht + options.measurement_covariance;
    a = 0.5 * (a + a.transpose());
    Eigen::LLT<Eigen::MatrixXd> llt(a);
    if (!e.allFinite() || llt.info() != Eigen::Success) {
      return Fail(k, "innovation covariance not positive definite", record, error);
    }
    const Eigen::MatrixXd gain = llt.solve(pht.transpose()).transpose();  // P Hᵀ A⁻¹
    x += gain * e;
    const Eigen::MatrixXd ikh = identity - gain * h_jac;
    Eigen::MatrixXd pf = ikh * p * ikh.transpose() +
                         gain * options.measurement_covariance * gain.transpose();
    p = 0.5 * (pf + pf.transpose());
    if (!x.allFinite() || !p.allFinite()) return Fail(k, "non-finite update", record, error);
    const Eigen::VectorXd ae = llt.solve(e);
    double log_det = 0.0;
    for (int i = 0; i < l; ++i) log_det += 2.0 * std::log(llt.matrixL()(i, i));
    record->log_likelihood += -0.5 * (e.dot(ae) + log_det + l * kLog2Pi);
    record->innovations.row(k) = e.transpose();
    record->filtered_states.row(k) = x.transpose();
    record->filtered_covariances.push_back(p);
    record->iterations = k + 1;
  }
  record->converged = true;
  record->message = "filtered " + std::to_string(num) + " samples";
  record->time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
