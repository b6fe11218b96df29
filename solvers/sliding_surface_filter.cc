#include "dynid/solvers/sliding_surface_filter.h"

#include <Eigen/SVD>
#include <sstream>

namespace dynid::solvers {

namespace {

bool AllFinite(const Eigen::MatrixXd& a) { return a.allFinite(); }

}  // namespace

bool SlidingSurfaceFilterOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (lambda.size() == 0) {
    out << "lambda is empty (give one positive value per component of zeta)";
  } else if (omega.size() != lambda.size()) {
    out << "omega has " << omega.size() << " entries, lambda " << lambda.size();
  } else if (sigma.size() != 0 && sigma.size() != lambda.size()) {
    out << "sigma has " << sigma.size() << " entries, lambda " << lambda.size();
  } else if (!AllFinite(lambda) || (lambda.array() <= 0.0).any()) {
    out << "lambda must be finite and > 0";
  } else if (!AllFinite(omega) || (omega.array() <= 0.0).any()) {
    out << "omega must be finite and > 0";
  } else if (!AllFinite(sigma)) {
    out << "sigma must be finite";
  } else if (xi_weight.rows() == 0 || xi_weight.rows() != xi_weight.cols()) {
    out << "xi_weight must be a non-empty square matrix, got " << xi_weight.rows() << " x "
        << xi_weight.cols();
  } else if (!AllFinite(xi_weight) || (xi_weight - xi_weight.transpose()).cwiseAbs().maxCoeff() >
                                          1e-12 * xi_weight.cwiseAbs().maxCoeff()) {
    out << "xi_weight must be finite and symmetric";
  } else if (xi_weight.llt().info() != Eigen::Success) {
    out << "xi_weight must be positive definite";
  } else if (!(boundary_layer >= 0.0) || !std::isfinite(boundary_layer)) {
    out << "boundary_layer must be finite and >= 0, got " << boundary_layer;
  } else if (!(rank_tolerance > 0.0 && rank_tolerance < 1.0)) {
    out << "rank_tolerance must be in (0, 1), got " << rank_tolerance;
  }
  if (out.str().empty()) return true;
  if (why != nullptr) *why = out.str();
  return false;
}

namespace internal {

bool ValidateSlidingSurfaceInputs(int n, int m, int p, int l,
                                  const SlidingSurfaceFilterOptions& options,
                                  const SlidingSurfaceFilterData& data, const Eigen::VectorXd& x0,
                                  const Eigen::VectorXd& pbar0, std::string* error) {
  std::string why;
  std::ostringstream out;
  const int nz = n + l, nx = 2 * n + p;
  if (!options.IsValid(&why)) {
    out << "invalid options: " << why;
  } else if (options.lambda.size() != nz) {
    out << "invalid options: lambda, omega, sigma need n + l = " << nz << " entries, got "
        << options.lambda.size();
  } else if (options.xi_weight.rows() != nx) {
    out << "invalid options: xi_weight must be (2n + p) x (2n + p) = " << nx << " x " << nx
        << ", got " << options.xi_weight.rows() << " x " << options.xi_weight.cols();
  } else if (l <= m) {
    out << "the model has l = " << l << " measurements and m = " << m
        << " inputs; the sliding-surface filter needs l > m";
  } else if (data.time.size() < 2) {
    out << "expected at least 2 samples, got " << data.time.size();
  } else if (data.measurements.rows() != data.time.size() || data.measurements.cols() != l) {
    out << "measurements must be " << data.time.size() << " x " << l << ", got "
        << data.measurements.rows() << " x " << data.measurements.cols();
  } else if (data.measurement_rates.size() != 0 &&
             (data.measurement_rates.rows() != data.time.size() ||
              data.measurement_rates.cols() != l)) {
    out << "measurement_rates must be empty or " << data.time.size() << " x " << l << ", got "
        << data.measurement_rates.rows() << " x " << data.measurement_rates.cols();
  } else if (!AllFinite(data.time) || !AllFinite(data.measurements) ||
             !AllFinite(data.measurement_rates)) {
    out << "time, measurements and rates must be finite";
  } else if (x0.size() != nx || pbar0.size() != n + m || !AllFinite(x0) || !AllFinite(pbar0)) {
    out << "initial state must have 2n + p = " << nx << " and initial input n + m = " << n + m
        << " finite entries, got " << x0.size() << " and " << pbar0.size();
  } else {
    for (int k = 1; k < data.time.size(); ++k) {
      if (!(data.time(k) > data.time(k - 1))) {
        out << "time must be strictly increasing; sample " << k << " (t = " << data.time(k)
            << ") follows t = " << data.time(k - 1);
        break;
      }
    }
  }
  if (out.str().empty()) return true;
  if (error != nullptr) *error = out.str();
  return false;
}

bool SlidingSurfaceGains(const Eigen::MatrixXd& C, const Eigen::MatrixXd& F,
                         const Eigen::MatrixXd& W_inverse, double rank_tolerance,
                         Eigen::MatrixXd* K_x, Eigen::MatrixXd* K_p, std::string* error) {
  const int nz = static_cast<int>(F.rows()), np = static_cast<int>(F.cols());
  // Full SVD of F: the last nz − np left singular vectors span null(Fᵀ).
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(F, Eigen::ComputeFullU);
  const Eigen::VectorXd& singular = svd.singularValues();
  if (singular.size() < np || singular(np - 1) <= rank_tolerance * singular(0)) {
    std::ostringstream out;
    out << "F = [M H; G R] (" << nz << " x " << np << ") lacks full column rank (singular values "
        << singular.transpose() << ")";
    *error = out.str();
    return false;
  }
  const Eigen::MatrixXd N = svd.matrixU().rightCols(nz - np);
  const Eigen::MatrixXd CN = C.transpose() * N;               // (nx) × (nz − np)
  const Eigen::MatrixXd S = CN.transpose() * W_inverse * CN;  // Nᵀ C W⁻¹ Cᵀ N
  Eigen::JacobiSVD<Eigen::MatrixXd> s_svd(S);
  const Eigen::VectorXd& s_singular = s_svd.singularValues();
  if (s_singular(0) <= 0.0 || s_singular(s_singular.size() - 1) <= rank_tolerance * s_singular(0)) {
    std::ostringstream out;
    out << "N^T C W^-1 C^T N is singular (singular values " << s_singular.transpose()
        << "): the non-input measurements do not see the state";
    *error = out.str();
    return false;
  }
  *K_x = W_inverse * CN * S.ldlt().solve(N.transpose());
  const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(nz, nz);
  *K_p = (F.transpose() * F).ldlt().solve(F.transpose() * (I - C * *K_x));
  return true;
}

}  // namespace internal

}  // namespace dynid::solvers
