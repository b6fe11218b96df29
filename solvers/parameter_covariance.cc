#include "dynid/solvers/parameter_covariance.h"

#include <ceres/covariance.h>
#include <ceres/crs_matrix.h>
#include <ceres/problem.h>
#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

#include "dynid/solvers/internal/banded.h"
#include "dynid/solvers/internal/flat_top.h"

namespace dynid::solvers {

namespace {

// H = JᵀJ at the current values, split into the banded H_yy (factorised), H_yθ and H_θθ.
struct SchurParts {
  BandedCholesky cholesky;
  Eigen::MatrixXd H_ytheta;      // num_banded × p
  Eigen::MatrixXd H_thetatheta;  // p × p
  int bandwidth = 0;
};

// With `residual_blocks` non-empty only those residual blocks, in that order; the Jacobian and
// the residuals are returned when `jacobian` / `residuals` are non-null.
bool FactorTrajectoryBlock(ceres::Problem* problem, const std::vector<double*>& banded_blocks,
                           const std::vector<double*>& parameter_blocks, SchurParts* parts,
                           std::string* error,
                           const std::vector<ceres::ResidualBlockId>& residual_blocks = {},
                           ceres::CRSMatrix* jacobian = nullptr,
                           std::vector<double>* residuals = nullptr) {
  ceres::Problem::EvaluateOptions options;
  options.parameter_blocks = banded_blocks;
  options.parameter_blocks.insert(options.parameter_blocks.end(), parameter_blocks.begin(),
                                  parameter_blocks.end());
  options.residual_blocks = residual_blocks;
  int num_banded = 0;
  for (double* block : banded_blocks) num_banded += problem->ParameterBlockSize(block);
  ceres::CRSMatrix local;
  ceres::CRSMatrix& crs = jacobian != nullptr ? *jacobian : local;
  if (!problem->Evaluate(options, nullptr, residuals, nullptr, &crs)) {
    *error = "the residuals could not be evaluated at the current estimate";
    return false;
  }
  const int p = crs.num_cols - num_banded;
  CHECK_GE(p, 0) << "expected the banded columns first";

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
  parts->bandwidth = bandwidth;
  // Accumulate H = JᵀJ row by row: banded H_yy (into a local lower-band array, copied into
  // BandedSpdMatrix once per entry at the end), dense H_yθ (num_banded × p) and H_θθ.
  // band(i, j) = H(j + i, j)
  Eigen::MatrixXd band = Eigen::MatrixXd::Zero(bandwidth + 1, num_banded);
  parts->H_ytheta = Eigen::MatrixXd::Zero(num_banded, p);
  parts->H_thetatheta = Eigen::MatrixXd::Zero(p, p);
  Eigen::MatrixXd& H_ytheta = parts->H_ytheta;
  Eigen::MatrixXd& H_thetatheta = parts->H_thetatheta;
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
        if (y_cols[a] >= y_cols[b]) {
          band(y_cols[a] - y_cols[b], y_cols[b]) += y_values[a] * y_values[b];
        }
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
  BandedSpdMatrix H_yy(num_banded, bandwidth);
  for (int j = 0; j < num_banded; ++j) {
    for (int i = 0; i <= bandwidth && j + i < num_banded; ++i) H_yy.At(j + i, j) = band(i, j);
  }
  int failed_pivot = -1;
  if (!parts->cholesky.Factorize(H_yy, &failed_pivot)) {
    *error =
        "the trajectory block of the Gauss-Newton matrix is not positive definite (first "
        "failing pivot: trajectory unknown " +
        std::to_string(failed_pivot) +
        "): the trajectory is not determined by the data and weights (check V, W and R0)";
    return false;
  }
  return true;
}

// X = H_yy⁻¹ H_yθ, column by column.
Eigen::MatrixXd SolveTrajectory(const SchurParts& parts) {
  Eigen::MatrixXd X = parts.H_ytheta;
  for (int j = 0; j < X.cols(); ++j) {
    Eigen::VectorXd column = X.col(j);
    parts.cholesky.SolveInPlace(&column);
    X.col(j) = column;
  }
  return X;
}

// Andrews' (1991) automatic Bartlett bandwidth for the score series g_t (rows of `scores`, T of
// them): α = Σ_a Ĝ_a² / Σ_a ĝ_a² over the columns, ĝ and Ĝ their flat-top estimates from the
// centred column's autocorrelations (as ComputeHacScoreCovariance's kAutocorrelation rule does
// for residual blocks). Also returns the columns' mean lag-1 autocorrelation.
int ScoreBandwidth(const Eigen::MatrixXd& scores, double* alpha, double* rho) {
  const Eigen::Index t = scores.rows();
  double sum_big_g2 = 0.0, sum_g2 = 0.0, sum_rho = 0.0;
  int columns = 0;
  for (Eigen::Index a = 0; a < scores.cols(); ++a) {
    const Eigen::VectorXd x = scores.col(a).array() - scores.col(a).mean();
    internal::FlatTopEstimate flat_top;
    double lag1 = 0.0;
    if (!internal::FlatTopOfSeries(x, t, &flat_top, &lag1)) continue;
    sum_big_g2 += flat_top.big_g * flat_top.big_g;
    sum_g2 += flat_top.g * flat_top.g;
    sum_rho += lag1;
    ++columns;
  }
  *alpha = sum_g2 > 0.0 ? sum_big_g2 / sum_g2 : 0.0;
  *rho = columns > 0 ? sum_rho / columns : 0.0;
  return internal::AutomaticBartlettLags(*alpha, static_cast<double>(t));
}

}  // namespace

bool ParameterInformationBySchur(ceres::Problem* problem, const std::vector<double*>& banded_blocks,
                                 const std::vector<double*>& parameter_blocks,
                                 Eigen::MatrixXd* information, std::string* error,
                                 Eigen::VectorXd* trajectory_variance) {
  CHECK(problem != nullptr && information != nullptr && error != nullptr)
      << "expected problem and outputs, got nullptr";
  CHECK(!parameter_blocks.empty()) << "expected at least one parameter block";
  SchurParts parts;
  if (!FactorTrajectoryBlock(problem, banded_blocks, parameter_blocks, &parts, error)) {
    return false;
  }
  CHECK_GT(parts.H_thetatheta.rows(), 0) << "expected parameter columns after the banded blocks";
  const Eigen::MatrixXd X = SolveTrajectory(parts);  // H_yy⁻¹ H_yθ
  *information = parts.H_thetatheta - parts.H_ytheta.transpose() * X;
  *information = 0.5 * (*information + information->transpose()).eval();
  if (trajectory_variance != nullptr) {
    trajectory_variance->resize(0);
    // diag[(JᵀJ)⁻¹]_yy = diag(H_yy⁻¹) + diag(X S⁻¹ Xᵀ): selected inversion of the band plus the
    // rank-p correction for the uncertainty of theta (only when S is invertible).
    Eigen::LLT<Eigen::MatrixXd> s(*information);
    if (s.info() == Eigen::Success) {
      const BandedSpdMatrix inverse_band = parts.cholesky.InverseBand();
      const Eigen::MatrixXd Y = s.matrixL().solve(X.transpose());  // p × num_banded
      *trajectory_variance = inverse_band.band().row(0).transpose() +
                             Y.colwise().squaredNorm().transpose();
    }
  }
  return true;
}

bool TrajectoryCovarianceBySelectedInversion(ceres::Problem* problem,
                                             const std::vector<double*>& banded_blocks,
                                             const std::vector<double*>& parameter_blocks,
                                             int blocks_per_group, TrajectoryCovariance* result,
                                             std::string* error) {
  CHECK(problem != nullptr && result != nullptr && error != nullptr)
      << "expected problem and outputs, got nullptr";
  if (blocks_per_group < 1 || banded_blocks.size() % blocks_per_group != 0) {
    *error = "blocks_per_group must be >= 1 and divide the " +
             std::to_string(banded_blocks.size()) + " trajectory blocks, got " +
             std::to_string(blocks_per_group);
    return false;
  }
  SchurParts parts;
  if (!FactorTrajectoryBlock(problem, banded_blocks, parameter_blocks, &parts, error)) {
    return false;
  }
  const int p = static_cast<int>(parts.H_thetatheta.rows());
  const int num_groups = static_cast<int>(banded_blocks.size()) / blocks_per_group;
  // Group spans (in scalar unknowns); each must lie inside the band of H_yy.
  std::vector<int> offsets(num_groups + 1, 0);
  for (int g = 0; g < num_groups; ++g) {
    int size = 0;
    for (int b = 0; b < blocks_per_group; ++b) {
      size += problem->ParameterBlockSize(banded_blocks[g * blocks_per_group + b]);
    }
    if (size > parts.bandwidth + 1) {
      *error = "group " + std::to_string(g) + " spans " + std::to_string(size) +
               " unknowns, more than the band of the normal matrix (" +
               std::to_string(parts.bandwidth + 1) + "): its covariance is not in the band";
      return false;
    }
    offsets[g + 1] = offsets[g] + size;
  }
  // [(JᵀJ)⁻¹]_yy = H_yy⁻¹ + X S⁻¹ Xᵀ (X = H_yy⁻¹ H_yθ), cov(y, θ) = −X S⁻¹, cov(θ) = S⁻¹.
  Eigen::MatrixXd Y, XSinv;  // Y = L_S⁻¹ Xᵀ (p × num_banded); X S⁻¹
  if (p > 0) {
    const Eigen::MatrixXd X = SolveTrajectory(parts);
    Eigen::MatrixXd information = parts.H_thetatheta - parts.H_ytheta.transpose() * X;
    information = 0.5 * (information + information.transpose()).eval();
    const Eigen::LLT<Eigen::MatrixXd> s(information);
    if (s.info() != Eigen::Success) {
      *error = "the information matrix of theta is not positive definite: theta is not "
               "determined (see AnalyzeIdentifiability)";
      return false;
    }
    Y = s.matrixL().solve(X.transpose());
    XSinv = s.solve(X.transpose()).transpose();
    result->parameter_covariance = s.solve(Eigen::MatrixXd::Identity(p, p));
  } else {
    result->parameter_covariance.resize(0, 0);
  }
  const BandedSpdMatrix inverse_band = parts.cholesky.InverseBand();
  result->blocks.assign(num_groups, Eigen::MatrixXd());
  result->parameter_cross.assign(num_groups, Eigen::MatrixXd());
  for (int g = 0; g < num_groups; ++g) {
    const int offset = offsets[g], size = offsets[g + 1] - offsets[g];
    Eigen::MatrixXd& block = result->blocks[g];
    block.resize(size, size);
    for (int i = 0; i < size; ++i) {
      for (int j = 0; j < size; ++j) block(i, j) = inverse_band(offset + i, offset + j);
    }
    if (p > 0) {
      block += Y.middleCols(offset, size).transpose() * Y.middleCols(offset, size);
      result->parameter_cross[g] = -XSinv.middleRows(offset, size);
    } else {
      result->parameter_cross[g].resize(size, 0);
    }
  }
  return true;
}

bool ParameterSandwichCovarianceBySchur(ceres::Problem* problem,
                                        const std::vector<double*>& banded_blocks,
                                        const std::vector<double*>& parameter_blocks,
                                        const ResidualRowLayout& layout, SandwichCovariance* result,
                                        std::string* error, const SandwichOptions& options) {
  CHECK(problem != nullptr && result != nullptr && error != nullptr)
      << "expected problem and outputs, got nullptr";
  CHECK(!parameter_blocks.empty()) << "expected at least one parameter block";
  CHECK_GE(options.white_reference_draws, 0) << "expected white_reference_draws >= 0";
  const int num_groups = static_cast<int>(layout.group_names.size());
  if (layout.residual_blocks.empty()) {
    *error = "the sandwich covariance needs the residual blocks of the layout";
    return false;
  }
  SchurParts parts;
  ceres::CRSMatrix crs;
  std::vector<double> residuals;
  if (!FactorTrajectoryBlock(problem, banded_blocks, parameter_blocks, &parts, error,
                             layout.residual_blocks, &crs, &residuals)) {
    return false;
  }
  if (static_cast<int>(layout.group.size()) != crs.num_rows) {
    *error = "the layout has " + std::to_string(layout.group.size()) + " rows, the problem " +
             std::to_string(crs.num_rows);
    return false;
  }
  for (const int g : layout.group) {
    if (g < -1 || g >= num_groups) {
      *error = "the layout names group " + std::to_string(g) + " of " + std::to_string(num_groups);
      return false;
    }
  }
  const bool with_hac = !layout.sample.empty();
  int num_samples = 0;
  if (with_hac) {
    if (layout.sample.size() != layout.group.size()) {
      *error = "the layout has " + std::to_string(layout.sample.size()) + " samples for " +
               std::to_string(layout.group.size()) + " rows";
      return false;
    }
    for (size_t row = 0; row < layout.sample.size(); ++row) {
      if (layout.sample[row] < (layout.group[row] < 0 ? -1 : 0)) {
        *error = "row " + std::to_string(row) + " of group " + std::to_string(layout.group[row]) +
                 " has sample " + std::to_string(layout.sample[row]);
        return false;
      }
      num_samples = std::max(num_samples, layout.sample[row] + 1);
    }
  }
  const int p = static_cast<int>(parts.H_thetatheta.rows());
  const int num_banded = static_cast<int>(parts.H_ytheta.rows());
  const Eigen::MatrixXd X = SolveTrajectory(parts);
  Eigen::MatrixXd information = parts.H_thetatheta - parts.H_ytheta.transpose() * X;
  information = 0.5 * (information + information.transpose()).eval();
  const Eigen::LLT<Eigen::MatrixXd> s(information);
  if (s.info() != Eigen::Success) {
    *error =
        "the information matrix of theta is not positive definite: theta is not "
        "determined (see AnalyzeIdentifiability)";
    return false;
  }
  const BandedSpdMatrix inverse_band = parts.cholesky.InverseBand();

  // One pass over the rows: z_i, h_ii, and per group Σ r², Σ (1 − h), Σ z zᵀ.
  result->group_names = layout.group_names;
  result->group_variance = Eigen::VectorXd::Constant(num_groups, NAN);
  result->group_redundancy = Eigen::VectorXd::Zero(num_groups);
  result->group_rows = Eigen::VectorXi::Zero(num_groups);
  Eigen::VectorXd sum_squares = Eigen::VectorXd::Zero(num_groups);
  std::vector<Eigen::MatrixXd> outer(num_groups, Eigen::MatrixXd::Zero(p, p));
  Eigen::MatrixXd prior = Eigen::MatrixXd::Zero(p, p);
  Eigen::MatrixXd scores = Eigen::MatrixXd::Zero(with_hac ? num_samples : 0, p);  // g_t, rows
  std::vector<int> y_cols;
  std::vector<double> y_values;
  // z_i / sqrt(1 − h_ii) of the rows that enter the scores (zero for the others), kept for the
  // white-noise reference.
  const bool with_reference = with_hac && options.white_reference_draws > 0;
  Eigen::MatrixXd row_scores = Eigen::MatrixXd::Zero(with_reference ? crs.num_rows : 0, p);
  Eigen::VectorXd z(p);
  for (int row = 0; row < crs.num_rows; ++row) {
    y_cols.clear(), y_values.clear();
    z.setZero();
    bool nonzero = false;
    for (int idx = crs.rows[row]; idx < crs.rows[row + 1]; ++idx) {
      const int col = crs.cols[idx];
      const double value = crs.values[idx];
      if (value != 0.0) nonzero = true;
      if (col < num_banded) {
        y_cols.push_back(col), y_values.push_back(value);
      } else {
        z(col - num_banded) += value;
      }
    }
    if (!nonzero) continue;
    for (size_t a = 0; a < y_cols.size(); ++a) z -= y_values[a] * X.row(y_cols[a]).transpose();
    const int g = layout.group[row];
    if (g < 0) {
      prior += z * z.transpose();
      continue;
    }
    double leverage = s.matrixL().solve(z).squaredNorm();
    for (size_t a = 0; a < y_cols.size(); ++a) {
      for (size_t b = 0; b < y_cols.size(); ++b) {
        leverage += y_values[a] * inverse_band(y_cols[a], y_cols[b]) * y_values[b];
      }
    }
    sum_squares(g) += residuals[row] * residuals[row];
    result->group_redundancy(g) += std::max(0.0, 1.0 - leverage);
    result->group_rows(g) += 1;
    outer[g] += z * z.transpose();
    if (with_hac && 1.0 - leverage > 1e-9) {  // HC2: r_i / sqrt(1 − h_ii)
      scores.row(layout.sample[row]) += (residuals[row] / std::sqrt(1.0 - leverage)) * z;
      if (with_reference) row_scores.row(row) = z.transpose() / std::sqrt(1.0 - leverage);
    }
  }
  Eigen::MatrixXd middle = prior;
  for (int g = 0; g < num_groups; ++g) {
    if (result->group_redundancy(g) > 1e-9 * result->group_rows(g)) {
      result->group_variance(g) = sum_squares(g) / result->group_redundancy(g);
      middle += result->group_variance(g) * outer[g];
    }
  }
  const Eigen::MatrixXd s_inverse = s.solve(Eigen::MatrixXd::Identity(p, p));
  result->covariance = s_inverse * middle * s_inverse;
  result->covariance = 0.5 * (result->covariance + result->covariance.transpose()).eval();
  result->standard_deviation = result->covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  result->hac = HacScoreCovariance();
  result->hac_covariance.resize(0, 0);
  result->hac_standard_deviation.resize(0);
  result->hac_critical_value_95 = NAN;
  result->white_reference_draws = 0;
  result->hac_white_reference_covariance.resize(0, 0);
  result->hac_white_reference_standard_deviation.resize(0);
  result->hac_excess.resize(0);
  if (!with_hac) return true;
  if (num_samples <= p + 2) {
    *error = "the HAC sandwich needs more samples than parameters + 2, got " +
             std::to_string(num_samples);
    return false;
  }
  const int lags = ScoreBandwidth(scores, &result->hac.alpha, &result->hac.rho);
  const double alpha = result->hac.alpha, rho = result->hac.rho;
  const HacRowSource rows = [&scores](const HacRowConsumer& consume, std::string*) {
    consume(0, scores);
    return true;
  };
  result->hac =
      ComputeHacScoreCovariance(rows, p, Eigen::VectorXd::Ones(num_samples), RowBlocks(), lags);
  if (!result->hac.success) {
    *error = result->hac.message;
    return false;
  }
  result->hac.alpha = alpha, result->hac.rho = rho;
  result->hac_covariance = s_inverse * (result->hac.omega + prior) * s_inverse;
  result->hac_covariance =
      0.5 * (result->hac_covariance + result->hac_covariance.transpose()).eval();
  result->hac_standard_deviation = result->hac_covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  result->hac_critical_value_95 = HacCriticalValue95(result->hac, HacCriticalValue::kFixedB);
  if (!with_reference) return true;

  // The white-noise reference: e with each group's rows N(0, ŝ_g²) (prior rows N(0, 1), rows
  // without a Jacobian 0), the Gauss–Newton step δ = H⁻¹ Jᵀ e by the Schur complement
  // (δ_θ = S⁻¹ (b_θ − Xᵀ b_y), δ_y = H_yy⁻¹ (b_y − H_yθ δ_θ)), the fitted r = e − J δ, and the
  // HAC middle of r's scores at the data's L.
  std::mt19937 generator(options.white_reference_seed);
  std::normal_distribution<double> normal;
  Eigen::VectorXd row_sd = Eigen::VectorXd::Zero(crs.num_rows);
  for (int row = 0; row < crs.num_rows; ++row) {
    bool nonzero = false;
    for (int idx = crs.rows[row]; idx < crs.rows[row + 1]; ++idx) nonzero |= crs.values[idx] != 0.0;
    if (!nonzero) continue;
    const int g = layout.group[row];
    if (g < 0) {
      row_sd(row) = 1.0;
    } else if (std::isfinite(result->group_variance(g))) {
      row_sd(row) = std::sqrt(result->group_variance(g));
    }
  }
  Eigen::MatrixXd reference_middle = Eigen::MatrixXd::Zero(p, p);
  Eigen::VectorXd e(crs.num_rows), b(num_banded + p);
  Eigen::MatrixXd draw_scores(num_samples, p);
  const HacRowSource draw_rows = [&draw_scores](const HacRowConsumer& consume, std::string*) {
    consume(0, draw_scores);
    return true;
  };
  for (int draw = 0; draw < options.white_reference_draws; ++draw) {
    for (int row = 0; row < crs.num_rows; ++row) e(row) = row_sd(row) * normal(generator);
    b.setZero();
    for (int row = 0; row < crs.num_rows; ++row) {
      for (int idx = crs.rows[row]; idx < crs.rows[row + 1]; ++idx) {
        b(crs.cols[idx]) += crs.values[idx] * e(row);
      }
    }
    const Eigen::VectorXd b_y = b.head(num_banded);
    const Eigen::VectorXd step_theta = s.solve(b.tail(p) - X.transpose() * b_y);
    Eigen::VectorXd step_y = b_y - parts.H_ytheta * step_theta;
    parts.cholesky.SolveInPlace(&step_y);
    draw_scores.setZero();
    for (int row = 0; row < crs.num_rows; ++row) {
      if (layout.group[row] < 0) continue;
      double fitted = e(row);
      for (int idx = crs.rows[row]; idx < crs.rows[row + 1]; ++idx) {
        const int col = crs.cols[idx];
        fitted -= crs.values[idx] * (col < num_banded ? step_y(col) : step_theta(col - num_banded));
      }
      draw_scores.row(layout.sample[row]) += fitted * row_scores.row(row);
    }
    const HacScoreCovariance draw_hac = ComputeHacScoreCovariance(
        draw_rows, p, Eigen::VectorXd::Ones(num_samples), RowBlocks(), lags);
    if (!draw_hac.success) {
      *error = "the HAC white-noise reference: " + draw_hac.message;
      return false;
    }
    reference_middle += draw_hac.omega;
  }
  reference_middle /= options.white_reference_draws;
  result->white_reference_draws = options.white_reference_draws;
  result->hac_white_reference_covariance = s_inverse * (reference_middle + prior) * s_inverse;
  result->hac_white_reference_covariance =
      0.5 *
      (result->hac_white_reference_covariance + result->hac_white_reference_covariance.transpose())
          .eval();
  result->hac_white_reference_standard_deviation =
      result->hac_white_reference_covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  result->hac_excess =
      result->hac_standard_deviation.cwiseQuotient(result->hac_white_reference_standard_deviation);
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

const char* CovarianceScalingName(CovarianceScaling scaling) {
  switch (scaling) {
    case CovarianceScaling::kVarianceFactor:
      return "variance_factor";
    case CovarianceScaling::kSandwich:
      return "sandwich";
    case CovarianceScaling::kHac:
      return "hac";
  }
  return "unknown";
}

double ResidualVarianceFactor(double cost, int num_weighted_residuals, int num_unknowns) {
  const double dof = static_cast<double>(num_weighted_residuals) - num_unknowns;
  return dof > 0.0 ? 2.0 * cost / dof : std::numeric_limits<double>::quiet_NaN();
}

int CountFreeUnknowns(const ceres::Problem& problem) {
  std::vector<double*> blocks;
  problem.GetParameterBlocks(&blocks);
  int unknowns = 0;
  for (double* block : blocks) {
    if (!problem.IsParameterBlockConstant(block)) {
      unknowns += problem.ParameterBlockTangentSize(block);
    }
  }
  return unknowns;
}

double ResidualVarianceFactor(const ceres::Problem& problem, double cost,
                              int num_weighted_residuals) {
  return ResidualVarianceFactor(cost, num_weighted_residuals, CountFreeUnknowns(problem));
}

bool IsValidCovariance(const Eigen::MatrixXd& covariance, std::string* why) {
  const auto fail = [why](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (covariance.size() == 0 || covariance.rows() != covariance.cols()) {
    std::ostringstream os;
    os << "expected a non-empty square matrix, got " << covariance.rows() << " x "
       << covariance.cols();
    return fail(os.str());
  }
  if (!covariance.allFinite()) return fail("not finite");
  const double scale = 1.0 + covariance.cwiseAbs().maxCoeff();
  const double asymmetry = (covariance - covariance.transpose()).cwiseAbs().maxCoeff();
  if (asymmetry > 1e-9 * scale) {
    std::ostringstream os;
    os << "not symmetric (max |C - Cᵀ| = " << asymmetry << ")";
    return fail(os.str());
  }
  const Eigen::MatrixXd symmetric = 0.5 * (covariance + covariance.transpose());
  const double smallest =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(symmetric, Eigen::EigenvaluesOnly)
          .eigenvalues()
          .minCoeff();
  if (smallest < -1e-12 * scale) {
    std::ostringstream os;
    os << "not positive semi-definite (smallest eigenvalue " << smallest << ")";
    return fail(os.str());
  }
  return true;
}

}  // namespace dynid::solvers
