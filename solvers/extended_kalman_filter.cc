#include "dynid/solvers/extended_kalman_filter.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <vector>

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

// Central differences of a Jacobian callback about x: d[m] = ∂J/∂x_m (r × n).
template <class Jacobian>
void JacobianDerivatives(const Jacobian& jacobian, const Eigen::VectorXd& x, double step,
                         std::vector<Eigen::MatrixXd>* d) {
  const int n = static_cast<int>(x.size());
  d->resize(n);
  Eigen::MatrixXd j_plus, j_minus;
  for (int m = 0; m < n; ++m) {
    const double delta = step * std::max(1.0, std::abs(x(m)));
    Eigen::VectorXd xp = x, xm = x;
    xp(m) += delta;
    xm(m) -= delta;
    jacobian(xp, &j_plus);
    jacobian(xm, &j_minus);
    (*d)[m] = (j_plus - j_minus) / (2.0 * delta);
  }
}

// The second-order terms of Gelb (1974) §6.1 from d[m] = ∂J/∂x_m: the mean correction
// ½ Σ_i e_i tr(∇²g_i P) = ½ Σ_m d[m] P e_m and the covariance term
// ½ Σ_ij e_i e_jᵀ tr(∇²g_i P ∇²g_j P), with (∇²g_i)_{jm} = d[m](i, j) symmetrised.
void SecondOrderTerms(const std::vector<Eigen::MatrixXd>& d, const Eigen::MatrixXd& p,
                      Eigen::VectorXd* mean, Eigen::MatrixXd* covariance) {
  const int n = static_cast<int>(d.size());
  const int r = static_cast<int>(d[0].rows());
  mean->setZero(r);
  for (int m = 0; m < n; ++m) *mean += 0.5 * d[m] * p.col(m);
  std::vector<Eigen::MatrixXd> hp(r);  // ∇²g_i P
  for (int i = 0; i < r; ++i) {
    Eigen::MatrixXd hessian(n, n);
    for (int m = 0; m < n; ++m) hessian.col(m) = d[m].row(i).transpose();
    hp[i] = 0.5 * (hessian + hessian.transpose()) * p;
  }
  covariance->resize(r, r);
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j <= i; ++j) {
      (*covariance)(i, j) = (*covariance)(j, i) =
          0.5 * (hp[i].array() * hp[j].transpose().array()).sum();
    }
  }
}

}  // namespace

bool EkfOptions::IsValid(const DiscreteStateSpaceSystem& system, std::string* why) const {
  if (!filter.IsValid(system, why)) return false;
  if (second_order && !(hessian_step > 0.0)) {
    if (why != nullptr) *why = "hessian_step must be > 0";
    return false;
  }
  return true;
}

bool RunExtendedKalmanFilter(const DiscreteStateSpaceSystem& system,
                             const Eigen::MatrixXd& measurements, const EkfOptions& ekf_options,
                             KalmanFilterRecord* record, std::string* error) {
  const auto start = std::chrono::steady_clock::now();
  *record = KalmanFilterRecord();
  std::string why;
  if (!ekf_options.IsValid(system, &why)) {
    *error = "invalid EKF options: " + why;
    return false;
  }
  const KalmanFilterOptions& options = ekf_options.filter;
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
  const bool second_order = ekf_options.second_order;
  std::vector<Eigen::MatrixXd> derivatives;
  Eigen::VectorXd mean_term;
  Eigen::MatrixXd cov_term;
  for (int k = 0; k < num; ++k) {
    if (k > 0) {
      f_jac.setZero();
      system.transition(k - 1, x, &x_next, &f_jac);
      if (!x_next.allFinite() || !f_jac.allFinite()) {
        return Fail(k, "non-finite prediction", record, error);
      }
      record->cross_covariances.push_back(p * f_jac.transpose());
      Eigen::MatrixXd pp = f_jac * p * f_jac.transpose() + options.process_noise;
      if (second_order) {
        JacobianDerivatives(
            [&](const Eigen::VectorXd& xx, Eigen::MatrixXd* jac) {
              Eigen::VectorXd unused(n);
              jac->setZero(n, n);
              system.transition(k - 1, xx, &unused, jac);
            },
            x, ekf_options.hessian_step, &derivatives);
        SecondOrderTerms(derivatives, p, &mean_term, &cov_term);
        x_next += mean_term;
        pp += cov_term;
        if (!x_next.allFinite() || !pp.allFinite()) {
          return Fail(k, "non-finite second-order prediction", record, error);
        }
      }
      p = 0.5 * (pp + pp.transpose());
      x = x_next;
    }
    record->predicted_states.row(k) = x.transpose();
    record->predicted_covariances.push_back(p);
    h_jac.setZero();
    system.measurement(k, x, &y_hat, &h_jac);
    // R, plus the second-order measurement term when asked.
    Eigen::MatrixXd r = options.measurement_covariance;
    if (second_order) {
      JacobianDerivatives(
          [&](const Eigen::VectorXd& xx, Eigen::MatrixXd* jac) {
            Eigen::VectorXd unused(l);
            jac->setZero(l, n);
            system.measurement(k, xx, &unused, jac);
          },
          x, ekf_options.hessian_step, &derivatives);
      SecondOrderTerms(derivatives, p, &mean_term, &cov_term);
      y_hat += mean_term;
      r += cov_term;
    }
    const Eigen::VectorXd e = measurements.row(k).transpose() - y_hat;
    const Eigen::MatrixXd pht = p * h_jac.transpose();
    Eigen::MatrixXd a = h_jac * pht + r;
    a = 0.5 * (a + a.transpose());
    Eigen::LLT<Eigen::MatrixXd> llt(a);
    if (!e.allFinite() || llt.info() != Eigen::Success) {
      return Fail(k, "innovation covariance not positive definite", record, error);
    }
    const Eigen::MatrixXd gain = llt.solve(pht.transpose()).transpose();  // P Hᵀ A⁻¹
    x += gain * e;
    const Eigen::MatrixXd ikh = identity - gain * h_jac;
    Eigen::MatrixXd pf = ikh * p * ikh.transpose() + gain * r * gain.transpose();
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
