#include "solvers/parameter_covariance.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>

#include <Eigen/Eigenvalues>
#include <Eigen/Cholesky>
#include <ceres/covariance.h>
#include <ceres/crs_matrix.h>
#include <ceres/problem.h>
#include <glog/logging.h>

#include "solvers/banded.h"

namespace dynid::solvers {

bool ParameterInformationBySchur(ceres::Problem* problem, const std::vector<double*>& banded_blocks,
                                 const std::vector<double*>& parameter_blocks,
                                 Eigen::MatrixXd* information, std::string* error,
                                 Eigen::VectorXd* trajectory_variance) {
  CHECK(problem != nullptr && information != nullptr && error != nullptr)
      << "expected problem and outputs, got nullptr";
  CHECK(!parameter_blocks.empty()) << "expected at least one parameter block";
  ceres::Problem::EvaluateOptions options;
  options.parameter_blocks = banded_blocks;
  options.parameter_blocks.insert(options.parameter_blocks.end(), parameter_blocks.begin(),
                                  parameter_blocks.end());
  int num_banded = 0;
  for (double* block : banded_blocks) num_banded += problem->ParameterBlockSize(block);
  ceres::CRSMatrix crs;
  if (!problem->Evaluate(options, nullptr, nullptr, nullptr, &crs)) {
    *error = "the residuals could not be evaluated at the current estimate";
    return false;
  }
  const int p = crs.num_cols - num_banded;
  CHECK_GT(p, 0) << "expected parameter columns after the banded blocks";

  // Bandwidth of H_yy = J_yᵀ J_y: the widest column span of a Jacobian row.
  int bandwidth = 0;
  for (int row = 0; row < crs.num_rows; ++row) {
    int lo = num_banded, hi = -1;
    for (int idx = crs.rows[row]; idx < crs.rows[row + 1]; ++idx) {
      const int col = crs.cols[idx];
      if (col < num_banded) lo = std::min(lo, col), hi = std::max(hi, col);
    }
    if (hi >= lo) bandwidth = std::max(bandwidth, hi - lo);
  }
  // Accumulate H = JᵀJ row by row: banded H_yy, dense H_yθ (num_banded × p) and H_θθ.
  BandedSpdMatrix H_yy(num_banded, bandwidth);
  Eigen::MatrixXd H_ytheta = Eigen::MatrixXd::Zero(num_banded, p);
  Eigen::MatrixXd H_thetatheta = Eigen::MatrixXd::Zero(p, p);
  std::vector<int> y_cols, theta_cols;
  std::vector<double> y_values, theta_values;
  for (int row = 0; row < crs.num_rows; ++row) {
    y_cols.clear(), theta_cols.clear(), y_values.clear(), theta_values.clear();
    for (int idx = crs.rows[row]; idx < crs.rows[row + 1]; ++idx) {
      const int col = crs.cols[idx];
      if (col < num_banded) {
        y_cols.push_back(col), y_values.push_back(crs.values[idx]);
      } else {
        theta_cols.push_back(col - num_banded), theta_values.push_back(crs.values[idx]);
      }
    }
    for (size_t a = 0; a < y_cols.size(); ++a) {
      for (size_t b = 0; b < y_cols.size(); ++b) {
        if (y_cols[a] >= y_cols[b]) H_yy.At(y_cols[a], y_cols[b]) += y_values[a] * y_values[b];
      }
      for (size_t t = 0; t < theta_cols.size(); ++t) {
        H_ytheta(y_cols[a], theta_cols[t]) += y_values[a] * theta_values[t];
      }
    }
    for (size_t a = 0; a < theta_cols.size(); ++a) {
      for (size_t b = 0; b < theta_cols.size(); ++b) {
        H_thetatheta(theta_cols[a], theta_cols[b]) += theta_values[a] * theta_values[b];
      }
    }
  }
  BandedCholesky cholesky;
  int failed_pivot = -1;
  if (!cholesky.Factorize(H_yy, &failed_pivot)) {
    *error =
        "the trajectory block of the Gauss-Newton matrix is not positive definite (first "
        "failing pivot: trajectory unknown " +
        std::to_string(failed_pivot) +
        "): the trajectory is not determined by the data and weights (check V, W and R0)";
    return false;
  }
  Eigen::MatrixXd X = H_ytheta;  // becomes H_yy⁻¹ H_yθ
  for (int j = 0; j < p; ++j) {
    Eigen::VectorXd column = X.col(j);
    cholesky.SolveInPlace(&column);
    X.col(j) = column;
  }
  *information = H_thetatheta - H_ytheta.transpose() * X;
  *information = 0.5 * (*information + information->transpose()).eval();
  if (trajectory_variance != nullptr) {
    trajectory_variance->resize(0);
    // diag[(JᵀJ)⁻¹]_yy = diag(H_yy⁻¹) + diag(X S⁻¹ Xᵀ): selected inversion of the band plus the
    // rank-p correction for the uncertainty of theta (only when S is invertible).
    Eigen::LLT<Eigen::MatrixXd> s(*information);
    if (s.info() == Eigen::Success) {
      const BandedSpdMatrix inverse_band = cholesky.InverseBand();
      const Eigen::MatrixXd Y = s.matrixL().solve(X.transpose());  // p × num_banded
      *trajectory_variance = inverse_band.band().row(0).transpose() +
                             Y.colwise().squaredNorm().transpose();
    }
  }
  return true;
}

bool ParameterCovarianceByCeres(ceres::Problem* problem,
                                const std::vector<double*>& parameter_blocks,
                                Eigen::MatrixXd* covariance, std::string* error) {
  CHECK(problem != nullptr && covariance != nullptr && error != nullptr)
      << "expected problem and outputs, got nullptr";
  ceres::Covariance::Options options;
  options.algorithm_type = ceres::SPARSE_QR;
  options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  ceres::Covariance covariance_estimator(options);
  std::vector<std::pair<const double*, const double*>> pairs;
  std::vector<int> offsets;
  int p = 0;
  for (double* a : parameter_blocks) {
    offsets.push_back(p);
    p += problem->ParameterBlockSize(a);
    for (double* b : parameter_blocks) pairs.emplace_back(a, b);
  }
  if (!covariance_estimator.Compute(pairs, problem)) {
    *error = "ceres::Covariance failed (rank-deficient Jacobian?)";
    return false;
  }
  covariance->resize(p, p);
  for (size_t i = 0; i < parameter_blocks.size(); ++i) {
    for (size_t j = 0; j < parameter_blocks.size(); ++j) {
      const int rows = problem->ParameterBlockSize(parameter_blocks[i]);
      const int cols = problem->ParameterBlockSize(parameter_blocks[j]);
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> block(rows, cols);
      covariance_estimator.GetCovarianceBlock(parameter_blocks[i], parameter_blocks[j],
                                              block.data());
      covariance->block(offsets[i], offsets[j], rows, cols) = block;
    }
  }
  return true;
}

IdentifiabilityReport AnalyzeIdentifiability(const Eigen::MatrixXd& information,
                                             const Eigen::VectorXd& theta,
                                             const std::vector<std::string>& names,
                                             double relative_tolerance) {
  const int p = static_cast<int>(information.rows());
  CHECK_EQ(information.cols(), p) << "expected a square information matrix";
  CHECK_EQ(theta.size(), p) << "theta: expected " << p << " values, got " << theta.size();
  CHECK_EQ(static_cast<int>(names.size()), p) << "names: expected " << p << ", got "
                                              << names.size();
  IdentifiabilityReport report;
  Eigen::VectorXd scale(p);
  for (int i = 0; i < p; ++i) scale(i) = std::abs(theta(i)) > 0.0 ? std::abs(theta(i)) : 1.0;
  const Eigen::MatrixXd relative = scale.asDiagonal() * information * scale.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(relative);
  report.eigenvalues = eig.eigenvalues();
  report.eigenvectors = eig.eigenvectors();
  const double largest = std::max(report.eigenvalues.maxCoeff(), 0.0);
  const double smallest = report.eigenvalues.minCoeff();
  report.condition_number =
      smallest > 0.0 ? largest / smallest : std::numeric_limits<double>::infinity();

  // Relative covariance on the determined subspace, mapped back to absolute units.
  Eigen::MatrixXd relative_covariance = Eigen::MatrixXd::Zero(p, p);
  for (int j = 0; j < p; ++j) {
    const double lambda = report.eigenvalues(j);
    const Eigen::VectorXd direction = report.eigenvectors.col(j);
    if (largest > 0.0 && lambda > relative_tolerance * largest) {
      relative_covariance += direction * direction.transpose() / lambda;
      continue;
    }
    // Undetermined: describe the combination, largest coefficients first.
    std::vector<int> order(p);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return std::abs(direction(a)) > std::abs(direction(b)); });
    const int lead = order[0];
    const double sign = direction(lead) < 0.0 ? -1.0 : 1.0;
    std::ostringstream out;
    out << std::setprecision(3);
    bool first = true;
    for (int i : order) {
      const double c = sign * direction(i);
      if (std::abs(c) < 0.05) continue;
      out << (first ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ")) << std::abs(c) << " d("
          << names[i] << ")/" << std::abs(scale(i));
      first = false;
    }
    out << "  (relative information " << lambda << " vs largest " << largest << ")";
    report.undetermined.push_back(out.str());
  }
  report.identifiable = report.undetermined.empty();
  report.covariance = scale.asDiagonal() * relative_covariance * scale.asDiagonal();
  report.standard_deviation = report.covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  report.relative_standard_deviation = report.standard_deviation.cwiseQuotient(scale);

  std::ostringstream message;
  message << std::setprecision(4);
  if (report.identifiable) {
    message << "all " << p << " parameters determined; condition number of the relative "
            << "information " << report.condition_number;
  } else {
    message << report.undetermined.size() << " of " << p
            << " parameter combinations are not determined by the data:";
    for (const std::string& line : report.undetermined) message << "\n  " << line;
  }
  report.message = message.str();
  return report;
}

}  // namespace dynid::solvers
