#include "dynid/solvers/unscented_kalman_filter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "dynid/solvers/internal/filter_measurements.h"

namespace dynid::solvers {

namespace {

constexpr double kLog2Pi = 1.8378770664093453;

// Symmetric square root of a positive semi-definite matrix (zero eigenvalues allowed).
Eigen::MatrixXd PsdSquareRoot(const Eigen::MatrixXd& m) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m);
  const Eigen::VectorXd d = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  return eig.eigenvectors() * d.asDiagonal() * eig.eigenvectors().transpose();
}

// Lower-triangular S with S Sᵀ = A Aᵀ, positive diagonal (QR of Aᵀ).
Eigen::MatrixXd TriangularFactor(const Eigen::MatrixXd& a) {
  const int n = static_cast<int>(a.rows());
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(a.transpose());
  Eigen::MatrixXd r = qr.matrixQR().topRows(n).triangularView<Eigen::Upper>();
  for (int i = 0; i < n; ++i) {
    if (r(i, i) < 0.0) r.row(i) *= -1.0;
  }
  return r.transpose();
}

double MinAbsDiagonal(const Eigen::MatrixXd& s) { return s.diagonal().cwiseAbs().minCoeff(); }

}  // namespace

bool CholeskyRankOneUpdate(Eigen::MatrixXd* lower, Eigen::VectorXd x, double sign) {
  Eigen::MatrixXd& l = *lower;
  const int n = static_cast<int>(l.rows());
  for (int k = 0; k < n; ++k) {
    const double lkk = l(k, k);
    const double r2 = lkk * lkk + sign * x(k) * x(k);
    if (!(r2 > 0.0) || !std::isfinite(r2) || lkk == 0.0) return false;
    const double r = std::sqrt(r2);
    const double c = r / lkk;
    const double s = x(k) / lkk;
    l(k, k) = r;
    for (int i = k + 1; i < n; ++i) {
      l(i, k) = (l(i, k) + sign * s * x(i)) / c;
      x(i) = c * x(i) - s * l(i, k);
    }
  }
  return true;
}

bool UkfOptions::IsValid(const DiscreteStateSpaceSystem& system, std::string* why) const {
  if (!filter.IsValid(system, why)) return false;
  std::ostringstream os;
  const double big_l = system.state_size;
  if (!(alpha > 0.0 && alpha <= 1.0)) {
    os << "alpha must be in (0, 1], got " << alpha;
  } else if (!(beta >= 0.0) || !std::isfinite(beta)) {
    os << "beta must be >= 0, got " << beta;
  } else if (!(kappa >= 0.0) || !std::isfinite(kappa) || !(big_l + kappa > 0.0)) {
    os << "kappa must be >= 0, got " << kappa;
  }
  if (os.str().empty()) return true;
  if (why != nullptr) *why = os.str();
  return false;
}

bool RunSquareRootUkf(const DiscreteStateSpaceSystem& system, const Eigen::MatrixXd& measurements,
                      const UkfOptions& options, UkfResult* result, std::string* error) {
  const auto start = std::chrono::steady_clock::now();
  *result = UkfResult();
  KalmanFilterRecord* record = &result->record;
  std::string why;
  if (!options.IsValid(system, &why)) {
    *error = "invalid UKF options: " + why;
    return false;
  }
  const int n = system.state_size;
  const int l = system.measurement_size;
  const int num = static_cast<int>(measurements.rows());
  if (!internal::CheckFilterMeasurements("UKF", l, measurements, error)) return false;
  const int num_points = 2 * n + 1;
  const double lambda = options.alpha * options.alpha * (n + options.kappa) - n;
  const double gamma = std::sqrt(n + lambda);
  const double wm0 = lambda / (n + lambda);
  const double wc0 = wm0 + 1.0 - options.alpha * options.alpha + options.beta;
  const double wi = 1.0 / (2.0 * (n + lambda));
  const double sqrt_wi = std::sqrt(wi);
  const double sqrt_wc0 = std::sqrt(std::abs(wc0));
  const double sign_wc0 = wc0 >= 0.0 ? 1.0 : -1.0;
  const Eigen::MatrixXd sqrt_q = PsdSquareRoot(options.filter.process_noise);
  const Eigen::MatrixXd sqrt_r = PsdSquareRoot(options.filter.measurement_covariance);

  record->filtered_states.resize(num, n);
  record->predicted_states.resize(num, n);
  record->innovations.resize(num, l);
  double min_diag = std::numeric_limits<double>::infinity();

  auto fail = [&](int k, const std::string& what) {
    std::ostringstream os;
    os << "square-root UKF stopped at sample " << k << ": " << what;
    *error = os.str();
    record->message = *error;
    result->min_sqrt_diagonal = std::isfinite(min_diag) ? min_diag : 0.0;
    return false;
  };

  Eigen::VectorXd x = options.filter.initial_state;
  Eigen::LLT<Eigen::MatrixXd> llt0(options.filter.initial_covariance);
  Eigen::MatrixXd s = llt0.matrixL();
  Eigen::MatrixXd sigma(n, num_points), propagated(n, num_points), y_points(l, num_points);
  Eigen::VectorXd tmp_x(n), tmp_y(l);

  auto draw = [&](const Eigen::VectorXd& mean, const Eigen::MatrixXd& factor) {
    sigma.col(0) = mean;
    for (int i = 0; i < n; ++i) {
      sigma.col(1 + i) = mean + gamma * factor.col(i);
      sigma.col(1 + n + i) = mean - gamma * factor.col(i);
    }
  };
  // Factor of Σ Wc_i (Z_i − z̄)(Z_i − z̄)ᵀ + N Nᵀ; false when the rank-one step fails.
  auto factor_of = [&](const Eigen::MatrixXd& points, const Eigen::VectorXd& mean,
                       const Eigen::MatrixXd& noise_root, Eigen::MatrixXd* out) {
    const int d = static_cast<int>(points.rows());
    Eigen::MatrixXd compound(d, 2 * n + noise_root.cols());
    for (int i = 1; i < num_points; ++i) compound.col(i - 1) = sqrt_wi * (points.col(i) - mean);
    compound.rightCols(noise_root.cols()) = noise_root;
    *out = TriangularFactor(compound);
    return CholeskyRankOneUpdate(out, sqrt_wc0 * (points.col(0) - mean), sign_wc0);
  };

  for (int k = 0; k < num; ++k) {
    if (k > 0) {
      // Predict from (x, s) at k−1.
      draw(x, s);
      for (int i = 0; i < num_points; ++i) {
        system.transition(k - 1, sigma.col(i), &tmp_x, nullptr);
        propagated.col(i) = tmp_x;
      }
      result->sigma_point_evaluations += num_points;
      if (!propagated.allFinite()) return fail(k, "non-finite sigma-point prediction");
      Eigen::VectorXd xp = wm0 * propagated.col(0);
      for (int i = 1; i < num_points; ++i) xp += wi * propagated.col(i);
      Eigen::MatrixXd cross = wc0 * (sigma.col(0) - x) * (propagated.col(0) - xp).transpose();
      for (int i = 1; i < num_points; ++i) {
        cross += wi * (sigma.col(i) - x) * (propagated.col(i) - xp).transpose();
      }
      record->cross_covariances.push_back(cross);
      Eigen::MatrixXd sp;
      if (!factor_of(propagated, xp, sqrt_q, &sp)) {
        return fail(k, "predicted covariance lost positive definiteness (rank-one step)");
      }
      x = xp;
      s = sp;
      min_diag = std::min(min_diag, MinAbsDiagonal(s));
      if (!(MinAbsDiagonal(s) > 0.0)) return fail(k, "predicted covariance singular");
    }
    record->predicted_states.row(k) = x.transpose();
    record->predicted_covariances.push_back(s * s.transpose());

    // Update at k.
    draw(x, s);
    for (int i = 0; i < num_points; ++i) {
      system.measurement(k, sigma.col(i), &tmp_y, nullptr);
      y_points.col(i) = tmp_y;
    }
    result->sigma_point_evaluations += num_points;
    if (!y_points.allFinite()) return fail(k, "non-finite sigma-point measurement");
    Eigen::VectorXd y_hat = wm0 * y_points.col(0);
    for (int i = 1; i < num_points; ++i) y_hat += wi * y_points.col(i);
    Eigen::MatrixXd sy;
    if (!factor_of(y_points, y_hat, sqrt_r, &sy)) {
      return fail(k, "innovation covariance lost positive definiteness");
    }
    Eigen::MatrixXd pxy = wc0 * (sigma.col(0) - x) * (y_points.col(0) - y_hat).transpose();
    for (int i = 1; i < num_points; ++i) {
      pxy += wi * (sigma.col(i) - x) * (y_points.col(i) - y_hat).transpose();
    }
    // K = Pxy (Sy Syᵀ)⁻¹: solve Sy Syᵀ Kᵀ = Pxyᵀ with two triangular solves.
    Eigen::MatrixXd kt = sy.triangularView<Eigen::Lower>().solve(pxy.transpose());
    kt = sy.transpose().triangularView<Eigen::Upper>().solve(kt);
    const Eigen::MatrixXd gain = kt.transpose();
    const Eigen::VectorXd e = measurements.row(k).transpose() - y_hat;
    x += gain * e;
    const Eigen::MatrixXd u = gain * sy;
    for (int j = 0; j < l; ++j) {
      if (!CholeskyRankOneUpdate(&s, u.col(j), -1.0)) {
        return fail(k, "filtered covariance lost positive definiteness (downdate)");
      }
    }
    min_diag = std::min(min_diag, MinAbsDiagonal(s));
    if (!x.allFinite() || !s.allFinite()) return fail(k, "non-finite update");
    const Eigen::VectorXd w = sy.triangularView<Eigen::Lower>().solve(e);
    double log_det = 0.0;
    for (int i = 0; i < l; ++i) log_det += 2.0 * std::log(std::abs(sy(i, i)));
    record->log_likelihood += -0.5 * (w.squaredNorm() + log_det + l * kLog2Pi);
    record->innovations.row(k) = e.transpose();
    record->filtered_states.row(k) = x.transpose();
    record->filtered_covariances.push_back(s * s.transpose());
    record->iterations = k + 1;
  }
  result->min_sqrt_diagonal = min_diag;
  result->positive_definite_throughout = min_diag > 0.0;
  record->converged = true;
  record->message = "filtered " + std::to_string(num) + " samples";
  record->time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
