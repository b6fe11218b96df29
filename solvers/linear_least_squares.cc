// Eigen 3.4's blocked Householder code (HouseholderQR, applying Q to a matrix) trips GCC 12's
// -Wmaybe-uninitialized inside Eigen's own headers (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "dynid/solvers/linear_least_squares.h"

#include <ceres/ceres.h>
#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "dynid/solvers/parameter_covariance.h"

namespace dynid::solvers {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string ColumnName(const std::vector<std::string>& names, int column) {
  if (column < static_cast<int>(names.size()) && !names[column].empty()) return names[column];
  return "column " + std::to_string(column);
}

// Common input checks of every solver: sizes are programmer errors (CHECK), content is data.
bool CheckProblem(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                  const LinearLeastSquaresOptions& options, LinearLeastSquaresSummary* summary) {
  CHECK_EQ(X.rows(), y.size()) << "observations: expected " << X.rows()
                               << " values (rows of X), got " << y.size();
  CHECK_GT(X.cols(), 0) << "X has no columns";
  summary->num_rows = static_cast<int>(X.rows());
  summary->num_parameters = static_cast<int>(X.cols());
  std::string why;
  if (!options.IsValid(&why) || !options.row_blocks.IsValid(static_cast<int>(X.rows()), &why)) {
    summary->message = "invalid options: " + why;
    return false;
  }
  if (!options.column_names.empty() && static_cast<int>(options.column_names.size()) != X.cols()) {
    summary->message = "column_names has " + std::to_string(options.column_names.size()) +
                       " names for " + std::to_string(X.cols()) + " columns";
    return false;
  }
  if (X.rows() <= X.cols()) {
    summary->message = "needs more rows than parameters: " + std::to_string(X.rows()) +
                       " rows for " + std::to_string(X.cols()) + " parameters";
    return false;
  }
  if (!X.allFinite() || !y.allFinite()) {
    summary->message = "X or y contains NaN or Inf";
    return false;
  }
  return true;
}

// Residual-based diagnostics shared by all paths (unweighted).
// From summary->residual.
void FillResidualNorms(const Eigen::VectorXd& y, const RowBlocks& blocks,
                       LinearLeastSquaresSummary* summary);

void FillResidualDiagnostics(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                             const RowBlocks& blocks, LinearLeastSquaresSummary* summary) {
  summary->residual = y - X * summary->theta;
  FillResidualNorms(y, blocks, summary);
}

void FillResidualNorms(const Eigen::VectorXd& y, const RowBlocks& blocks,
                       LinearLeastSquaresSummary* summary) {
  summary->residual_norm = summary->residual.norm();
  const double y_norm = y.norm();
  summary->relative_error = y_norm > 0.0 ? summary->residual_norm / y_norm : kNaN;
  const int num_blocks = blocks.num_blocks();
  Eigen::VectorXd sum_squares = Eigen::VectorXd::Zero(num_blocks);
  Eigen::VectorXd counts = Eigen::VectorXd::Zero(num_blocks);
  for (Eigen::Index i = 0; i < summary->residual.size(); ++i) {
    const int block = blocks.BlockOf(static_cast<int>(i));
    sum_squares(block) += summary->residual(i) * summary->residual(i);
    counts(block) += 1.0;
  }
  summary->block_rms.resize(num_blocks);
  for (int j = 0; j < num_blocks; ++j) {
    summary->block_rms(j) = counts(j) > 0 ? std::sqrt(sum_squares(j) / counts(j)) : kNaN;
  }
}

void FillStandardDeviations(LinearLeastSquaresSummary* summary) {
  const Eigen::Index b = summary->theta.size();
  summary->standard_deviation.resize(b);
  summary->relative_std_percent.resize(b);
  for (Eigen::Index k = 0; k < b; ++k) {
    const double variance = summary->covariance(k, k);
    summary->standard_deviation(k) =
        std::isnan(variance) ? kNaN : std::sqrt(std::max(variance, 0.0));
    const double magnitude = std::abs(summary->theta(k));
    summary->relative_std_percent(k) = magnitude > 0.0
                                           ? 100.0 * summary->standard_deviation(k) / magnitude
                                           : std::numeric_limits<double>::infinity();
  }
}

double ConditionNumberOfTriangular(const Eigen::MatrixXd& R) {
  const Eigen::VectorXd singular_values = Eigen::JacobiSVD<Eigen::MatrixXd>(R).singularValues();
  const double smallest = singular_values(singular_values.size() - 1);
  return smallest > 0.0 ? singular_values(0) / smallest : std::numeric_limits<double>::infinity();
}

// The pivoted QR solution and covariance, shared by LS, WLS and the IV covariance.
struct PivotedSolution {
  int rank = 0;
  Eigen::VectorXd theta;                // basic solution, zero on dependent columns
  Eigen::MatrixXd unscaled_covariance;  // P R11^{-1} R11^{-T} Pᵀ, NaN on dependent columns
  std::vector<int> dependent_columns;
  std::string dependence_report;
  double condition_number = 0.0;
};

// Rows of A above which SolvePivoted first reduces A to a triangular factor, and the row blocks
// of that reduction.
constexpr Eigen::Index kReduceBlockRows = 4096;

PivotedSolution SolvePivoted(const Eigen::MatrixXd& A, const Eigen::VectorXd* rhs,
                             const LinearLeastSquaresOptions& options) {
  const Eigen::Index b = A.cols();
  if (A.rows() > 2 * kReduceBlockRows && A.rows() > 2 * b) {
    // A tall A is reduced to its b × b triangular factor R (and rhs to the head of Qᵀ rhs) by a
    // tall-skinny QR: Householder QR of each block of rows stacked under the factor so far. The
    // pivoted QR then runs on R, whose columns have the norms of A's columns (and so do the
    // trailing parts at every pivoting step: Q is orthogonal), so it picks the same pivots, rank
    // and solution up to round-off, while the pivoted QR of A itself works on a copy of A (75 MB
    // for an undecimated 7 s TX40 system) with level-2 operations.
    Eigen::MatrixXd factor(0, b);
    Eigen::VectorXd head(0);
    Eigen::MatrixXd stacked;
    Eigen::VectorXd stacked_rhs;
    for (Eigen::Index start = 0; start < A.rows(); start += kReduceBlockRows) {
      const Eigen::Index m = std::min(kReduceBlockRows, A.rows() - start);
      stacked.resize(factor.rows() + m, b);
      stacked << factor, A.middleRows(start, m);
      const Eigen::HouseholderQR<Eigen::MatrixXd> qr(stacked);
      const Eigen::Index kept = std::min(b, stacked.rows());
      factor = qr.matrixQR().topRows(kept).triangularView<Eigen::Upper>();
      if (rhs != nullptr) {
        stacked_rhs.resize(stacked.rows());
        stacked_rhs << head, rhs->segment(start, m);
        stacked_rhs.applyOnTheLeft(qr.householderQ().adjoint());
        head = stacked_rhs.head(kept);
      }
    }
    return SolvePivoted(factor, rhs != nullptr ? &head : nullptr, options);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr;
  qr.setThreshold(options.rank_tolerance);
  qr.compute(A);
  PivotedSolution solution;
  const int rank = static_cast<int>(qr.rank());
  solution.rank = rank;
  const Eigen::MatrixXd R = qr.matrixQR().topLeftCorner(b, b).triangularView<Eigen::Upper>();
  const auto& permutation = qr.colsPermutation().indices();
  const Eigen::MatrixXd R11 = R.topLeftCorner(rank, rank);
  const auto R11_upper = R11.triangularView<Eigen::Upper>();
  if (rhs != nullptr) {
    Eigen::VectorXd qty = *rhs;
    qty.applyOnTheLeft(qr.householderQ().adjoint());
    const Eigen::VectorXd z = R11_upper.solve(qty.head(rank));
    solution.theta = Eigen::VectorXd::Zero(b);
    for (int k = 0; k < rank; ++k) solution.theta(permutation(k)) = z(k);
  }
  const Eigen::MatrixXd R11_inverse = R11_upper.solve(Eigen::MatrixXd::Identity(rank, rank));
  const Eigen::MatrixXd covariance_pivoted = R11_inverse * R11_inverse.transpose();
  solution.unscaled_covariance = Eigen::MatrixXd::Constant(b, b, kNaN);
  for (int i = 0; i < rank; ++i) {
    for (int k = 0; k < rank; ++k) {
      solution.unscaled_covariance(permutation(i), permutation(k)) = covariance_pivoted(i, k);
    }
  }
  if (rank < b) {
    // Column at pivoted position k >= rank: A_k ≈ Σ_i c_i A_{p(i)} with c = R11^{-1} R12_k.
    const Eigen::MatrixXd coefficients = R11_upper.solve(R.topRightCorner(rank, b - rank));
    std::ostringstream report;
    for (Eigen::Index k = rank; k < b; ++k) {
      const int column = permutation(k);
      solution.dependent_columns.push_back(column);
      report << ColumnName(options.column_names, column) << " =";
      const Eigen::VectorXd c = coefficients.col(k - rank);
      const double largest = c.cwiseAbs().maxCoeff();
      bool first = true;
      for (int i = 0; i < rank; ++i) {
        if (std::abs(c(i)) <= 1e-8 * largest) continue;
        report << (first ? " " : (c(i) < 0 ? " - " : " + ")) << (first ? c(i) : std::abs(c(i)))
               << "·" << ColumnName(options.column_names, permutation(i));
        first = false;
      }
      if (first) report << " 0 (zero column)";
      report << "\n";
    }
    solution.dependence_report = report.str();
    std::sort(solution.dependent_columns.begin(), solution.dependent_columns.end());
  }
  if (options.compute_condition_number) solution.condition_number = ConditionNumberOfTriangular(R);
  return solution;
}

std::string RankDeficiencyMessage(int rank, int b, const std::vector<int>& dependent,
                                  const std::vector<std::string>& names) {
  std::ostringstream message;
  message << "rank-deficient: rank " << rank << " of " << b
          << " columns; the data do not determine: ";
  for (size_t i = 0; i < dependent.size(); ++i) {
    message << (i ? ", " : "") << ColumnName(names, dependent[i]);
  }
  message << " (see dependence_report)";
  return message.str();
}

// Applies a PivotedSolution (computed on possibly row-scaled data) to a summary.
void AcceptSolution(const PivotedSolution& solution, double sigma2,
                    const LinearLeastSquaresOptions& options, LinearLeastSquaresSummary* summary) {
  summary->rank = solution.rank;
  summary->sigma2 = sigma2;
  summary->covariance = sigma2 * solution.unscaled_covariance;
  summary->dependent_columns = solution.dependent_columns;
  summary->dependence_report = solution.dependence_report;
  summary->condition_number = solution.condition_number;
  FillStandardDeviations(summary);
  if (solution.rank < summary->num_parameters) {
    summary->success = false;
    summary->message = RankDeficiencyMessage(solution.rank, summary->num_parameters,
                                             solution.dependent_columns, options.column_names);
  } else {
    summary->success = true;
  }
}

// --- Ceres path ------------------------------------------------------------------------------

// r = X_rows θ − y_rows for a block of rows; the Jacobian is X_rows itself.
class LinearRowsCost : public ceres::CostFunction {
 public:
  LinearRowsCost(RowMajorMatrix rows, Eigen::VectorXd observations)
      : rows_(std::move(rows)), observations_(std::move(observations)) {
    set_num_residuals(static_cast<int>(rows_.rows()));
    mutable_parameter_block_sizes()->push_back(static_cast<int>(rows_.cols()));
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const Eigen::Map<const Eigen::VectorXd> theta(parameters[0], rows_.cols());
    Eigen::Map<Eigen::VectorXd>(residuals, rows_.rows()).noalias() = rows_ * theta;
    Eigen::Map<Eigen::VectorXd>(residuals, rows_.rows()) -= observations_;
    if (jacobians != nullptr && jacobians[0] != nullptr) {
      Eigen::Map<RowMajorMatrix>(jacobians[0], rows_.rows(), rows_.cols()) = rows_;
    }
    return true;
  }

 private:
  RowMajorMatrix rows_;
  Eigen::VectorXd observations_;
};

}  // namespace

// cond(X) from the singular values of the triangular factor of an unpivoted (blocked, fast)
// Householder QR: X = Q R with Q orthonormal, so X and R share singular values.
double ConditionNumber(const Eigen::MatrixXd& X, bool normalise_columns) {
  CHECK_GE(X.rows(), X.cols()) << "ConditionNumber: expected at least as many rows as columns";
  Eigen::MatrixXd scaled;
  if (normalise_columns) {
    scaled = X;
    for (Eigen::Index c = 0; c < X.cols(); ++c) {
      const double norm = X.col(c).norm();
      if (norm > 0.0) scaled.col(c) /= norm;
    }
  }
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(normalise_columns ? scaled : X);
  const Eigen::Index b = X.cols();
  return ConditionNumberOfTriangular(
      qr.matrixQR().topLeftCorner(b, b).triangularView<Eigen::Upper>());
}

// --- RowBlocks ---------------------------------------------------------------------------------

int RowBlocks::num_blocks() const {
  if (block_of_row.empty()) return std::max<int>(1, static_cast<int>(block_names.size()));
  const int largest = *std::max_element(block_of_row.begin(), block_of_row.end());
  return std::max<int>(largest + 1, static_cast<int>(block_names.size()));
}

std::string RowBlocks::BlockName(int block) const {
  if (block < static_cast<int>(block_names.size()) && !block_names[block].empty()) {
    return block_names[block];
  }
  return "block " + std::to_string(block + 1);
}

RowBlocks RowBlocks::FromSizes(const std::vector<int>& sizes) {
  RowBlocks blocks;
  for (size_t j = 0; j < sizes.size(); ++j) {
    CHECK_GE(sizes[j], 0) << "block size " << j << ": expected >= 0, got " << sizes[j];
    for (int k = 0; k < sizes[j]; ++k) {
      blocks.block_of_row.push_back(static_cast<int>(j));
      blocks.sample_of_row.push_back(k);
    }
  }
  return blocks;
}

RowBlocks RowBlocks::Stacked(data::StackOrder order, int num_joints, int num_samples) {
  CHECK_GE(num_joints, 1) << "num_joints: expected >= 1, got " << num_joints;
  CHECK_GE(num_samples, 0) << "num_samples: expected >= 0, got " << num_samples;
  RowBlocks blocks;
  const int rows = num_joints * num_samples;
  blocks.block_of_row.resize(rows);
  blocks.sample_of_row.resize(rows);
  for (int j = 0; j < num_joints; ++j) {
    for (int k = 0; k < num_samples; ++k) {
      const int row = data::StackedRow(order, num_joints, num_samples, j, k);
      blocks.block_of_row[row] = j;
      blocks.sample_of_row[row] = k;
    }
    blocks.block_names.push_back("joint " + std::to_string(j + 1));
  }
  return blocks;
}

RowBlocks RowBlocks::Subset(const std::vector<int>& rows) const {
  RowBlocks subset;
  subset.block_names = block_names;
  if (block_of_row.empty() && sample_of_row.empty()) return subset;
  for (int row : rows) {
    if (!block_of_row.empty()) subset.block_of_row.push_back(block_of_row.at(row));
    if (!sample_of_row.empty()) subset.sample_of_row.push_back(sample_of_row.at(row));
  }
  return subset;
}

bool RowBlocks::IsValid(int num_rows, std::string* why) const {
  auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (!block_of_row.empty() && static_cast<int>(block_of_row.size()) != num_rows) {
    return fail("row_blocks.block_of_row has " + std::to_string(block_of_row.size()) +
                " entries for " + std::to_string(num_rows) + " rows");
  }
  if (!sample_of_row.empty() && static_cast<int>(sample_of_row.size()) != num_rows) {
    return fail("row_blocks.sample_of_row has " + std::to_string(sample_of_row.size()) +
                " entries for " + std::to_string(num_rows) + " rows");
  }
  for (int block : block_of_row) {
    if (block < 0) return fail("row_blocks.block_of_row has a negative block index");
  }
  return true;
}

bool LinearLeastSquaresOptions::IsValid(std::string* why) const {
  auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (!(rank_tolerance >= 0.0 && rank_tolerance < 1.0)) {
    return fail("rank_tolerance must lie in [0, 1), got " + std::to_string(rank_tolerance));
  }
  if (ceres_rows_per_residual_block < 1) {
    return fail("ceres_rows_per_residual_block must be >= 1, got " +
                std::to_string(ceres_rows_per_residual_block));
  }
  if (ceres_num_threads < 1) {
    return fail("ceres_num_threads must be >= 1, got " + std::to_string(ceres_num_threads));
  }
  if (iv_full_error_covariance && row_blocks.sample_of_row.empty()) {
    return fail("iv_full_error_covariance needs row_blocks.sample_of_row");
  }
  return true;
}

std::string LinearLeastSquaresSummary::Report(const std::vector<std::string>& column_names) const {
  std::ostringstream text;
  text << method << ": " << (success ? "ok" : "FAILED") << (message.empty() ? "" : " — ") << message
       << "\n";
  text << "  rows " << num_rows << ", parameters " << num_parameters << ", rank " << rank
       << ", cond(X) " << condition_number << ", relative error " << 100.0 * relative_error
       << " %, sigma " << std::sqrt(sigma2) << ", time " << time_s << " s\n";
  if (theta.size() == 0) return text.str();
  text << "  " << std::left << std::setw(14) << "parameter" << std::right << std::setw(14)
       << "estimate" << std::setw(14) << "std" << std::setw(10) << "%std"
       << "\n";
  for (Eigen::Index k = 0; k < theta.size(); ++k) {
    text << "  " << std::left << std::setw(14) << ColumnName(column_names, static_cast<int>(k))
         << std::right << std::setw(14) << std::setprecision(6) << theta(k) << std::setw(14)
         << standard_deviation(k) << std::setw(10) << std::setprecision(3)
         << relative_std_percent(k) << "\n";
  }
  if (!dependence_report.empty()) text << "  dependent columns:\n" << dependence_report;
  return text.str();
}

LinearLeastSquaresSummary SolveLeastSquares(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                            const LinearLeastSquaresOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method = "LS (QR)";
  if (!CheckProblem(X, y, options, &summary)) return summary;
  const PivotedSolution solution = SolvePivoted(X, &y, options);
  summary.theta = solution.theta;
  summary.iterations = 1;
  FillResidualDiagnostics(X, y, options.row_blocks, &summary);
  // σ² by the one degrees-of-freedom rule (residuals minus free unknowns: the rank).
  const double sigma2 = ResidualVarianceFactor(0.5 * summary.residual_norm * summary.residual_norm,
                                               static_cast<int>(X.rows()), solution.rank);
  AcceptSolution(solution, sigma2, options, &summary);
  if (summary.success) summary.message = "solved by pivoted Householder QR";
  summary.time_s = SecondsSince(start);
  return summary;
}

namespace {

// The b × b triangular factor R and the head of Qᵀy of a tall-skinny Householder QR fed piece
// by piece (each piece stacked under the factor so far), as SolveLeastSquaresFromRows forms it.
struct TallSkinnyQr {
  explicit TallSkinnyQr(Eigen::Index b) : factor(0, b), head(0) {}
  void Add(const Eigen::Ref<const Eigen::MatrixXd>& piece,
           const Eigen::Ref<const Eigen::VectorXd>& rhs) {
    const Eigen::Index b = factor.cols();
    stacked.resize(factor.rows() + piece.rows(), b);
    stacked << factor, piece;
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(stacked);
    const Eigen::Index kept = std::min<Eigen::Index>(b, stacked.rows());
    factor = qr.matrixQR().topRows(kept).triangularView<Eigen::Upper>();
    stacked_rhs.resize(stacked.rows());
    stacked_rhs << head, rhs;
    stacked_rhs.applyOnTheLeft(qr.householderQ().adjoint());
    head = stacked_rhs.head(kept);
  }
  Eigen::MatrixXd factor;
  Eigen::VectorXd head;
  Eigen::MatrixXd stacked;
  Eigen::VectorXd stacked_rhs;
};

// Calls visit(block, first_row, rows) for the runs of consecutive rows of one block in
// [first_row, first_row + count).
template <typename Visit>
void ForEachBlockRun(const RowBlocks& blocks, Eigen::Index first_row, Eigen::Index count,
                     const Visit& visit) {
  Eigen::Index start = 0;
  while (start < count) {
    const int block = blocks.BlockOf(static_cast<int>(first_row + start));
    Eigen::Index end = start + 1;
    while (end < count && blocks.BlockOf(static_cast<int>(first_row + end)) == block) ++end;
    visit(block, start, end - start);
    start = end;
  }
}

// The checks and counts shared by the solves over pieces of rows: false, with the summary's
// message, when the options, the column names or the number of rows do not fit b columns.
bool StartRowsSolve(int b, Eigen::Index rows, const LinearLeastSquaresOptions& options,
                    LinearLeastSquaresSummary* summary) {
  CHECK_GT(b, 0) << "X has no columns";
  summary->num_rows = static_cast<int>(rows);
  summary->num_parameters = b;
  std::string why;
  if (!options.IsValid(&why) || !options.row_blocks.IsValid(static_cast<int>(rows), &why)) {
    summary->message = "invalid options: " + why;
    return false;
  }
  if (!options.column_names.empty() && static_cast<int>(options.column_names.size()) != b) {
    summary->message = "column_names has " + std::to_string(options.column_names.size()) +
                       " names for " + std::to_string(b) + " columns";
    return false;
  }
  if (rows <= b) {
    summary->message = "needs more rows than parameters: " + std::to_string(rows) + " rows for " +
                       std::to_string(b) + " parameters";
    return false;
  }
  return true;
}

// residual = y − X theta, X's rows from `x_rows` (one more pass over the pieces).
bool ResidualFromRows(const RowSource& x_rows, const Eigen::VectorXd& y,
                      const Eigen::VectorXd& theta, Eigen::VectorXd* residual, std::string* why) {
  *residual = y;
  return x_rows(
      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
        residual->segment(first_row, piece.rows()).noalias() -= piece * theta;
      },
      why);
}

}  // namespace

LinearLeastSquaresSummary SolveLeastSquaresFromRows(const RowSource& x_rows, int b,
                                                    const Eigen::VectorXd& y,
                                                    const LinearLeastSquaresOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method = "LS (QR)";
  const Eigen::Index rows = y.size();
  if (!StartRowsSolve(b, rows, options, &summary)) return summary;
  std::string why;
  // Tall-skinny QR over the pieces, as SolvePivoted over its blocks of rows.
  TallSkinnyQr qr(b);
  Eigen::Index seen = 0;
  bool finite = y.allFinite();
  const bool formed = x_rows(
      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
        CHECK(piece.cols() == b && first_row >= 0 && first_row + piece.rows() <= rows)
            << "X rows: a piece outside " << rows << " × " << b;
        finite = finite && piece.allFinite();
        seen += piece.rows();
        qr.Add(piece, y.segment(first_row, piece.rows()));
      },
      &why);
  if (!formed) {
    summary.message = "X rows: " + why;
    return summary;
  }
  CHECK_EQ(seen, rows) << "X rows: the pieces hold " << seen << " rows, expected " << rows;
  if (!finite) {
    summary.message = "X or y contains NaN or Inf";
    return summary;
  }
  const PivotedSolution solution = SolvePivoted(qr.factor, &qr.head, options);
  summary.theta = solution.theta;
  summary.iterations = 1;
  if (!ResidualFromRows(x_rows, y, summary.theta, &summary.residual, &why)) {
    summary.message = "X rows: " + why;
    return summary;
  }
  FillResidualNorms(y, options.row_blocks, &summary);
  const double sigma2 = ResidualVarianceFactor(0.5 * summary.residual_norm * summary.residual_norm,
                                               static_cast<int>(rows), solution.rank);
  AcceptSolution(solution, sigma2, options, &summary);
  if (summary.success) summary.message = "solved by pivoted Householder QR";
  summary.time_s = SecondsSince(start);
  return summary;
}

LinearLeastSquaresSummary SolveWeightedLeastSquares(const Eigen::MatrixXd& X,
                                                    const Eigen::VectorXd& y,
                                                    const LinearLeastSquaresOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method = "WLS (QR)";
  if (!CheckProblem(X, y, options, &summary)) return summary;
  const RowBlocks& blocks = options.row_blocks;
  const int num_blocks = blocks.num_blocks();
  const Eigen::Index rows = X.rows(), b = X.cols();
  std::vector<std::vector<int>> rows_of_block(num_blocks);
  for (Eigen::Index i = 0; i < rows; ++i) {
    rows_of_block[blocks.BlockOf(static_cast<int>(i))].push_back(static_cast<int>(i));
  }

  Eigen::VectorXd sigma(num_blocks);
  if (options.block_sigma_estimate == BlockSigmaEstimate::kGlobalResidual) {
    const LinearLeastSquaresSummary ordinary = SolveLeastSquares(X, y, options);
    if (!ordinary.success) {
      summary.message = "ordinary LS for the weights failed: " + ordinary.message;
      return summary;
    }
    const double dof_factor = static_cast<double>(rows) / static_cast<double>(rows - b);
    for (int j = 0; j < num_blocks; ++j) {
      double sum_squares = 0.0;
      for (int i : rows_of_block[j]) sum_squares += ordinary.residual(i) * ordinary.residual(i);
      const double n_j = static_cast<double>(rows_of_block[j].size());
      sigma(j) = n_j > 0 ? std::sqrt(sum_squares / n_j * dof_factor) : kNaN;
    }
  } else {
    // Gautier: LS on joint j's own equations, restricted to the columns that appear in them.
    for (int j = 0; j < num_blocks; ++j) {
      const std::vector<int>& block_rows = rows_of_block[j];
      if (block_rows.empty()) {  // a joint without measured rows carries no weight
        sigma(j) = kNaN;
        continue;
      }
      std::vector<int> columns;
      for (Eigen::Index c = 0; c < b; ++c) {
        for (int i : block_rows) {
          if (X(i, c) != 0.0) {
            columns.push_back(static_cast<int>(c));
            break;
          }
        }
      }
      Eigen::MatrixXd X_j(block_rows.size(), columns.size());
      Eigen::VectorXd y_j(block_rows.size());
      for (size_t r = 0; r < block_rows.size(); ++r) {
        y_j(r) = y(block_rows[r]);
        for (size_t c = 0; c < columns.size(); ++c) X_j(r, c) = X(block_rows[r], columns[c]);
      }
      double sum_squares = y_j.squaredNorm();
      int rank_j = 0;
      if (!columns.empty()) {
        LinearLeastSquaresOptions block_options;
        block_options.rank_tolerance = options.rank_tolerance;
        block_options.compute_condition_number = false;
        const PivotedSolution block_solution = SolvePivoted(X_j, &y_j, block_options);
        rank_j = block_solution.rank;
        sum_squares = (y_j - X_j * block_solution.theta).squaredNorm();
      }
      const int dof = static_cast<int>(block_rows.size()) - rank_j;
      if (dof <= 0) {
        summary.message = blocks.BlockName(j) + " has " + std::to_string(block_rows.size()) +
                          " rows for " + std::to_string(rank_j) +
                          " independent columns: its sigma cannot be estimated";
        return summary;
      }
      sigma(j) = std::sqrt(sum_squares / dof);
    }
  }
  for (int j = 0; j < num_blocks; ++j) {
    if (!(sigma(j) > 0.0) && !rows_of_block[j].empty()) {
      std::ostringstream message;
      message << "sigma of " << blocks.BlockName(j) << " is " << sigma(j)
              << " (a perfect fit): weights 1/sigma are undefined";
      summary.message = message.str();
      return summary;
    }
  }

  Eigen::MatrixXd X_weighted = X;
  Eigen::VectorXd y_weighted = y;
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double weight = 1.0 / sigma(blocks.BlockOf(static_cast<int>(i)));
    X_weighted.row(i) *= weight;
    y_weighted(i) *= weight;
  }
  const PivotedSolution solution = SolvePivoted(X_weighted, &y_weighted, options);
  summary.theta = solution.theta;
  summary.iterations = 1;
  const double weighted_residual2 = (y_weighted - X_weighted * solution.theta).squaredNorm();
  FillResidualDiagnostics(X, y, blocks, &summary);
  AcceptSolution(solution, weighted_residual2 / (rows - solution.rank), options, &summary);
  summary.block_sigma = sigma;
  if (summary.success) summary.message = "weighted by per-block sigma, pivoted Householder QR";
  summary.time_s = SecondsSince(start);
  return summary;
}

LinearLeastSquaresSummary SolveWeightedLeastSquaresFromRows(
    const RowSource& x_rows, int b, const Eigen::VectorXd& y,
    const LinearLeastSquaresOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method = "WLS (QR)";
  const Eigen::Index rows = y.size();
  if (!StartRowsSolve(b, rows, options, &summary)) return summary;
  std::string why;
  const RowBlocks& blocks = options.row_blocks;
  const int num_blocks = blocks.num_blocks();
  std::vector<Eigen::Index> block_rows(num_blocks, 0);
  for (Eigen::Index i = 0; i < rows; ++i) ++block_rows[blocks.BlockOf(static_cast<int>(i))];
  bool finite = y.allFinite();
  auto fail = [&](const std::string& message) {
    summary.message = message;
    return summary;
  };

  // σ_j as SolveWeightedLeastSquares forms it, from passes over the rows.
  Eigen::VectorXd sigma(num_blocks);
  if (options.block_sigma_estimate == BlockSigmaEstimate::kGlobalResidual) {
    const LinearLeastSquaresSummary ordinary = SolveLeastSquaresFromRows(x_rows, b, y, options);
    if (!ordinary.success) return fail("ordinary LS for the weights failed: " + ordinary.message);
    const double dof_factor = static_cast<double>(rows) / static_cast<double>(rows - b);
    Eigen::VectorXd sum_squares = Eigen::VectorXd::Zero(num_blocks);
    for (Eigen::Index i = 0; i < rows; ++i) {
      sum_squares(blocks.BlockOf(static_cast<int>(i))) +=
          ordinary.residual(i) * ordinary.residual(i);
    }
    for (int j = 0; j < num_blocks; ++j) {
      const double n_j = static_cast<double>(block_rows[j]);
      sigma(j) = n_j > 0 ? std::sqrt(sum_squares(j) / n_j * dof_factor) : kNaN;
    }
  } else {
    // Gautier: LS on joint j's own rows and the columns that appear in them. A tall-skinny QR per
    // block over all b columns keeps the columns that are zero in the block's rows exactly zero
    // in its factor (a Householder reflection maps a zero column to zero), so the factor's other
    // columns are the triangular reduction of the block's own subsystem.
    std::vector<TallSkinnyQr> qr(num_blocks, TallSkinnyQr(b));
    std::vector<std::vector<bool>> appears(num_blocks, std::vector<bool>(b, false));
    if (!x_rows(
            [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
              CHECK(piece.cols() == b && first_row >= 0 && first_row + piece.rows() <= rows)
                  << "X rows: a piece outside " << rows << " × " << b;
              finite = finite && piece.allFinite();
              ForEachBlockRun(blocks, first_row, piece.rows(),
                              [&](int j, Eigen::Index offset, Eigen::Index count) {
                                const auto run = piece.middleRows(offset, count);
                                for (Eigen::Index c = 0; c < b; ++c) {
                                  if (!appears[j][c] && (run.col(c).array() != 0.0).any()) {
                                    appears[j][c] = true;
                                  }
                                }
                                qr[j].Add(run, y.segment(first_row + offset, count));
                              });
            },
            &why)) {
      return fail("X rows: " + why);
    }
    if (!finite) return fail("X or y contains NaN or Inf");
    // θ_j over all b columns (zero where a column does not appear), then the residuals' sums of
    // squares by one more pass.
    std::vector<Eigen::VectorXd> theta_j(num_blocks, Eigen::VectorXd::Zero(b));
    std::vector<int> rank_j(num_blocks, 0);
    for (int j = 0; j < num_blocks; ++j) {
      std::vector<int> columns;
      for (int c = 0; c < b; ++c) {
        if (appears[j][c]) columns.push_back(c);
      }
      if (block_rows[j] == 0 || columns.empty()) continue;
      Eigen::MatrixXd factor_j(qr[j].factor.rows(), columns.size());
      for (size_t c = 0; c < columns.size(); ++c) factor_j.col(c) = qr[j].factor.col(columns[c]);
      LinearLeastSquaresOptions block_options;
      block_options.rank_tolerance = options.rank_tolerance;
      block_options.compute_condition_number = false;
      const PivotedSolution block_solution = SolvePivoted(factor_j, &qr[j].head, block_options);
      rank_j[j] = block_solution.rank;
      for (size_t c = 0; c < columns.size(); ++c) {
        theta_j[j](columns[c]) = block_solution.theta(c);
      }
    }
    qr.clear();
    Eigen::VectorXd sum_squares = Eigen::VectorXd::Zero(num_blocks);
    Eigen::VectorXd residual;
    if (!x_rows(
            [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
              ForEachBlockRun(blocks, first_row, piece.rows(),
                              [&](int j, Eigen::Index offset, Eigen::Index count) {
                                residual = y.segment(first_row + offset, count);
                                residual.noalias() -= piece.middleRows(offset, count) * theta_j[j];
                                sum_squares(j) += residual.squaredNorm();
                              });
            },
            &why)) {
      return fail("X rows: " + why);
    }
    for (int j = 0; j < num_blocks; ++j) {
      if (block_rows[j] == 0) {  // a joint without measured rows carries no weight
        sigma(j) = kNaN;
        continue;
      }
      const Eigen::Index dof = block_rows[j] - rank_j[j];
      if (dof <= 0) {
        return fail(blocks.BlockName(j) + " has " + std::to_string(block_rows[j]) + " rows for " +
                    std::to_string(rank_j[j]) +
                    " independent columns: its sigma cannot be estimated");
      }
      sigma(j) = std::sqrt(sum_squares(j) / static_cast<double>(dof));
    }
  }
  for (int j = 0; j < num_blocks; ++j) {
    if (!(sigma(j) > 0.0) && block_rows[j] > 0) {
      std::ostringstream message;
      message << "sigma of " << blocks.BlockName(j) << " is " << sigma(j)
              << " (a perfect fit): weights 1/sigma are undefined";
      return fail(message.str());
    }
  }

  // The weighted solve: rows of block j divided by σ_j, piece by piece.
  TallSkinnyQr weighted(b);
  Eigen::MatrixXd piece_weighted;
  Eigen::VectorXd y_weighted;
  Eigen::Index seen = 0;
  if (!x_rows(
          [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
            CHECK(piece.cols() == b && first_row >= 0 && first_row + piece.rows() <= rows)
                << "X rows: a piece outside " << rows << " × " << b;
            finite = finite && piece.allFinite();
            seen += piece.rows();
            piece_weighted = piece;
            y_weighted = y.segment(first_row, piece.rows());
            for (Eigen::Index r = 0; r < piece.rows(); ++r) {
              const double weight = 1.0 / sigma(blocks.BlockOf(static_cast<int>(first_row + r)));
              piece_weighted.row(r) *= weight;
              y_weighted(r) *= weight;
            }
            weighted.Add(piece_weighted, y_weighted);
          },
          &why)) {
    return fail("X rows: " + why);
  }
  CHECK_EQ(seen, rows) << "X rows: the pieces hold " << seen << " rows, expected " << rows;
  if (!finite) return fail("X or y contains NaN or Inf");
  const PivotedSolution solution = SolvePivoted(weighted.factor, &weighted.head, options);
  summary.theta = solution.theta;
  summary.iterations = 1;
  if (!ResidualFromRows(x_rows, y, summary.theta, &summary.residual, &why)) {
    return fail("X rows: " + why);
  }
  double weighted_residual2 = 0.0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double r = summary.residual(i) / sigma(blocks.BlockOf(static_cast<int>(i)));
    weighted_residual2 += r * r;
  }
  FillResidualNorms(y, blocks, &summary);
  AcceptSolution(solution, weighted_residual2 / (rows - solution.rank), options, &summary);
  summary.block_sigma = sigma;
  if (summary.success) summary.message = "weighted by per-block sigma, pivoted Householder QR";
  summary.time_s = SecondsSince(start);
  return summary;
}

ceres::CostFunction* NewLinearRowsCost(const Eigen::MatrixXd& rows,
                                       const Eigen::VectorXd& observations) {
  CHECK_EQ(rows.rows(), observations.size())
      << "observations: expected " << rows.rows() << " values, got " << observations.size();
  CHECK_GT(rows.rows(), 0) << "a residual block needs at least one row";
  return new LinearRowsCost(rows, observations);
}

LinearLeastSquaresSummary SolveLeastSquaresCeres(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                                 const LinearLeastSquaresOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method =
      options.ceres_dense_qr ? "LS (Ceres DENSE_QR)" : "LS (Ceres DENSE_NORMAL_CHOLESKY)";
  if (!CheckProblem(X, y, options, &summary)) return summary;
  const int rows = static_cast<int>(X.rows()), b = static_cast<int>(X.cols());
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(b);
  ceres::Problem problem;
  const int chunk = options.ceres_rows_per_residual_block;
  for (int first = 0; first < rows; first += chunk) {
    const int count = std::min(chunk, rows - first);
    problem.AddResidualBlock(NewLinearRowsCost(X.middleRows(first, count), y.segment(first, count)),
                             nullptr, theta.data());
  }
  ceres::Solver::Options solver_options;
  solver_options.linear_solver_type =
      options.ceres_dense_qr ? ceres::DENSE_QR : ceres::DENSE_NORMAL_CHOLESKY;
  // A huge trust region makes the first Levenberg–Marquardt step the Gauss–Newton step, which
  // solves a linear problem exactly; the next iteration detects convergence.
  solver_options.initial_trust_region_radius = 1e16;
  solver_options.max_trust_region_radius = 1e16;
  solver_options.function_tolerance = 1e-15;
  solver_options.parameter_tolerance = 1e-10;
  solver_options.gradient_tolerance = 1e-20;
  solver_options.max_num_iterations = 20;
  solver_options.num_threads = options.ceres_num_threads;
  solver_options.logging_type = ceres::SILENT;
  ceres::Solver::Summary ceres_summary;
  ceres::Solve(solver_options, &problem, &ceres_summary);
  summary.iterations = static_cast<int>(ceres_summary.iterations.size()) - 1;
  summary.theta = theta;
  FillResidualDiagnostics(X, y, options.row_blocks, &summary);
  summary.rank = b;
  summary.sigma2 = ResidualVarianceFactor(0.5 * summary.residual_norm * summary.residual_norm,
                                          static_cast<int>(rows), static_cast<int>(b));
  if (options.compute_condition_number) summary.condition_number = ConditionNumber(X);
  summary.covariance = Eigen::MatrixXd::Constant(b, b, kNaN);
  if (!ceres_summary.IsSolutionUsable()) {
    summary.message = "Ceres failed: " + ceres_summary.message;
    FillStandardDeviations(&summary);
    summary.time_s = SecondsSince(start);
    return summary;
  }
  ceres::Covariance::Options covariance_options;
  covariance_options.algorithm_type =
      options.ceres_covariance_dense_svd ? ceres::DENSE_SVD : ceres::SPARSE_QR;
  covariance_options.num_threads = options.ceres_num_threads;
  ceres::Covariance covariance(covariance_options);
  std::vector<std::pair<const double*, const double*>> blocks = {{theta.data(), theta.data()}};
  if (!covariance.Compute(blocks, &problem)) {
    summary.message =
        "ceres::Covariance failed (rank-deficient Jacobian?); Ceres: " + ceres_summary.message;
    FillStandardDeviations(&summary);
    summary.time_s = SecondsSince(start);
    return summary;
  }
  RowMajorMatrix inverse_normal(b, b);
  covariance.GetCovarianceBlock(theta.data(), theta.data(), inverse_normal.data());
  summary.covariance = summary.sigma2 * inverse_normal;
  FillStandardDeviations(&summary);
  summary.success = ceres_summary.termination_type == ceres::CONVERGENCE;
  summary.message = "Ceres: " + ceres_summary.message;
  summary.time_s = SecondsSince(start);
  return summary;
}

LinearLeastSquaresSummary SolveInstrumentalVariables(const Eigen::MatrixXd& Z,
                                                     const Eigen::MatrixXd& X,
                                                     const Eigen::VectorXd& y,
                                                     const LinearLeastSquaresOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearLeastSquaresSummary summary;
  summary.method = "IV";
  CHECK_EQ(Z.rows(), X.rows()) << "instruments: expected " << X.rows() << " rows, got " << Z.rows();
  CHECK_EQ(Z.cols(), X.cols()) << "instruments: expected " << X.cols() << " columns, got "
                               << Z.cols();
  if (!CheckProblem(X, y, options, &summary)) return summary;
  if (!Z.allFinite()) {
    summary.message = "instruments Z contain NaN or Inf";
    return summary;
  }
  const Eigen::Index rows = X.rows(), b = X.cols();

  // Z P = Q R; (ZᵀX) θ = Zᵀ y  ⇔  (QᵀX) θ = Qᵀ y when R is invertible.
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> z_qr;
  z_qr.setThreshold(options.rank_tolerance);
  z_qr.compute(Z);
  if (z_qr.rank() < b) {
    const PivotedSolution z_solution = SolvePivoted(Z, nullptr, options);
    summary.rank = static_cast<int>(z_qr.rank());
    summary.dependent_columns = z_solution.dependent_columns;
    summary.dependence_report = z_solution.dependence_report;
    summary.message =
        "instruments: " + RankDeficiencyMessage(summary.rank, static_cast<int>(b),
                                                z_solution.dependent_columns, options.column_names);
    return summary;
  }
  Eigen::MatrixXd qt_x = X;
  qt_x.applyOnTheLeft(z_qr.householderQ().adjoint());
  Eigen::VectorXd qt_y = y;
  qt_y.applyOnTheLeft(z_qr.householderQ().adjoint());
  const Eigen::MatrixXd system = qt_x.topRows(b);
  const Eigen::VectorXd system_rhs = qt_y.head(b);
  LinearLeastSquaresOptions system_options = options;
  system_options.compute_condition_number = false;
  system_options.row_blocks = RowBlocks();
  const PivotedSolution solution = SolvePivoted(system, &system_rhs, system_options);
  summary.theta = solution.theta;
  summary.iterations = 1;
  summary.rank = solution.rank;
  FillResidualDiagnostics(X, y, options.row_blocks, &summary);
  summary.sigma2 = ResidualVarianceFactor(0.5 * summary.residual_norm * summary.residual_norm,
                                          static_cast<int>(rows), static_cast<int>(b));
  if (options.compute_condition_number) summary.condition_number = ConditionNumber(X);
  if (solution.rank < b) {
    summary.dependent_columns = solution.dependent_columns;
    summary.dependence_report = solution.dependence_report;
    summary.covariance = Eigen::MatrixXd::Constant(b, b, kNaN);
    FillStandardDeviations(&summary);
    summary.message = "ZᵀX is singular: " +
                      RankDeficiencyMessage(solution.rank, static_cast<int>(b),
                                            solution.dependent_columns, options.column_names);
    summary.time_s = SecondsSince(start);
    return summary;
  }

  // Λ from the IV residuals, then P = (Σ_i ζ_iᵀ Λ^{-1} ζ_i)^{-1} = (Z_wᵀ Z_w)^{-1} with the
  // rows of every sample whitened by Λ^{-1/2}.
  const RowBlocks& blocks = options.row_blocks;
  const int num_blocks = blocks.num_blocks();
  const double dof_factor = static_cast<double>(rows) / static_cast<double>(rows - b);
  Eigen::MatrixXd Z_whitened = Z;
  if (!options.iv_full_error_covariance) {
    Eigen::VectorXd sum_squares = Eigen::VectorXd::Zero(num_blocks);
    Eigen::VectorXd counts = Eigen::VectorXd::Zero(num_blocks);
    for (Eigen::Index i = 0; i < rows; ++i) {
      const int block = blocks.BlockOf(static_cast<int>(i));
      sum_squares(block) += summary.residual(i) * summary.residual(i);
      counts(block) += 1.0;
    }
    summary.error_covariance = Eigen::MatrixXd::Zero(num_blocks, num_blocks);
    for (int j = 0; j < num_blocks; ++j) {
      summary.error_covariance(j, j) =
          counts(j) > 0 ? sum_squares(j) / counts(j) * dof_factor : kNaN;
    }
    for (Eigen::Index i = 0; i < rows; ++i) {
      const int block = blocks.BlockOf(static_cast<int>(i));
      Z_whitened.row(i) /= std::sqrt(summary.error_covariance(block, block));
    }
  } else {
    // Rows of each sample, in block order; every block must be present exactly once.
    std::map<int, std::vector<int>> rows_of_sample;
    for (Eigen::Index i = 0; i < rows; ++i) {
      rows_of_sample[blocks.sample_of_row[i]].push_back(static_cast<int>(i));
    }
    for (auto& [sample, sample_rows] : rows_of_sample) {
      std::sort(sample_rows.begin(), sample_rows.end(),
                [&](int a, int c) { return blocks.BlockOf(a) < blocks.BlockOf(c); });
      bool complete = static_cast<int>(sample_rows.size()) == num_blocks;
      for (int j = 0; complete && j < num_blocks; ++j) {
        complete = blocks.BlockOf(sample_rows[j]) == j;
      }
      if (!complete) {
        summary.message = "iv_full_error_covariance: sample " + std::to_string(sample) +
                          " does not have exactly one row per block (after sample selection "
                          "use the diagonal Λ)";
        summary.covariance = Eigen::MatrixXd::Constant(b, b, kNaN);
        FillStandardDeviations(&summary);
        return summary;
      }
    }
    Eigen::MatrixXd lambda = Eigen::MatrixXd::Zero(num_blocks, num_blocks);
    Eigen::VectorXd v(num_blocks);
    for (const auto& [sample, sample_rows] : rows_of_sample) {
      for (int j = 0; j < num_blocks; ++j) v(j) = summary.residual(sample_rows[j]);
      lambda.noalias() += v * v.transpose();
    }
    lambda *= dof_factor / static_cast<double>(rows_of_sample.size());
    summary.error_covariance = lambda;
    const Eigen::LLT<Eigen::MatrixXd> cholesky(lambda);
    if (cholesky.info() != Eigen::Success) {
      summary.message = "the error covariance Λ is not positive definite";
      summary.covariance = Eigen::MatrixXd::Constant(b, b, kNaN);
      FillStandardDeviations(&summary);
      return summary;
    }
    Eigen::MatrixXd zeta(num_blocks, b);
    for (const auto& [sample, sample_rows] : rows_of_sample) {
      for (int j = 0; j < num_blocks; ++j) zeta.row(j) = Z.row(sample_rows[j]);
      cholesky.matrixL().solveInPlace(zeta);
      for (int j = 0; j < num_blocks; ++j) Z_whitened.row(sample_rows[j]) = zeta.row(j);
    }
  }
  summary.block_sigma = summary.error_covariance.diagonal().cwiseSqrt();
  LinearLeastSquaresOptions covariance_options = options;
  covariance_options.compute_condition_number = false;
  const PivotedSolution whitened = SolvePivoted(Z_whitened, nullptr, covariance_options);
  summary.covariance = whitened.unscaled_covariance;
  FillStandardDeviations(&summary);
  summary.success = true;
  summary.message = "instrumental variables; covariance by Brunot et al. (2018) eq. 8";
  summary.time_s = SecondsSince(start);
  return summary;
}

}  // namespace dynid::solvers

namespace dynid::solvers {

bool IvIterationOptions::IsValid(std::string* why) const {
  auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (max_iterations < 1) return fail("max_iterations must be >= 1");
  if (!(torque_tolerance >= 0.0)) return fail("torque_tolerance must be >= 0");
  if (!(parameter_tolerance >= 0.0)) return fail("parameter_tolerance must be >= 0");
  if (stall_iterations < 0) return fail("stall_iterations must be >= 0 (0 = off)");
  return true;
}

namespace {

double RelativeChange(const Eigen::VectorXd& now, const Eigen::VectorXd& before) {
  const double scale = before.norm() > 0.0 ? before.norm() : now.norm();
  return scale > 0.0 ? (now - before).norm() / scale : 0.0;
}

// The iteration of both overloads. instruments_like_x: the instruments must have X's shape
// (otherwise they are whatever the solve reads, e.g. their products, and the generator must
// return the torques).
IvIterationSummary Iterate(Eigen::Index x_rows, Eigen::Index x_cols, const Eigen::VectorXd& theta0,
                           const InstrumentGenerator& generator,
                           const IvIterationOptions& iteration_options, const IvSolve& solve,
                           Eigen::MatrixXd* final_instruments, bool instruments_like_x) {
  const auto start = std::chrono::steady_clock::now();
  CHECK_EQ(theta0.size(), x_cols) << "theta0: expected " << x_cols << " values, got "
                                  << theta0.size();
  CHECK(generator) << "no instrument generator";
  CHECK(solve) << "no IV solve";
  IvIterationSummary summary;
  std::string why;
  if (!iteration_options.IsValid(&why)) {
    summary.message = "invalid iteration options: " + why;
    return summary;
  }
  // One simulation of the auxiliary model; its torques default to Z θ. Z keeps its storage (the
  // generator may reuse it when the shape is unchanged). Z == nullptr: the torques only
  // (torques_first).
  auto simulate = [&](const Eigen::VectorXd& theta, Eigen::MatrixXd* Z, Eigen::VectorXd* torque,
                      std::string* error) {
    torque->resize(0);
    if (!generator(theta, Z, torque, error)) return false;
    if (Z != nullptr && (instruments_like_x || torque->size() == 0) &&
        (Z->rows() != x_rows || Z->cols() != x_cols)) {
      *error = "the instrument generator returned " + std::to_string(Z->rows()) + " × " +
               std::to_string(Z->cols()) + " instruments, expected " + std::to_string(x_rows) +
               " × " + std::to_string(x_cols);
      return false;
    }
    if (torque->size() == 0 && Z != nullptr) *torque = *Z * theta;
    if (torque->size() != x_rows) {
      *error = "the instrument generator returned " + std::to_string(torque->size()) +
               " simulated torques, expected " + std::to_string(x_rows);
      return false;
    }
    return true;
  };

  const bool torques_first = iteration_options.torques_first;
  Eigen::VectorXd theta = theta0;
  summary.theta_history.push_back(theta);
  Eigen::MatrixXd Z, Z_new;  // swapped each iteration, so their storage is reused
  Eigen::VectorXd torque, torque_new;
  // Where the instruments of the last successful solve are (0: none, 1: Z, 2: Z_new after the
  // swap), moved to *final_instruments at the end rather than copied at every iteration.
  int solved_in = 0;
  std::string error;
  if (!simulate(theta, &Z, &torque, &error)) {
    summary.message = "auxiliary model failed for the initial estimate: " + error;
    return summary;
  }
  // Stall test: the iterations since either change last fell below its smallest earlier value,
  // and where those smallest values were reached.
  int without_decrease = 0;
  int best_torque_it = 0, best_parameter_it = 0;
  for (int it = 1; it <= iteration_options.max_iterations; ++it) {
    summary.estimate = solve(Z);
    summary.iterations = it;
    if (!summary.estimate.success) {
      summary.message =
          "IV solve failed at iteration " + std::to_string(it) + ": " + summary.estimate.message;
      break;
    }
    solved_in = 1;
    const Eigen::VectorXd theta_new = summary.estimate.theta;
    summary.theta_history.push_back(theta_new);
    summary.parameter_change.push_back(RelativeChange(theta_new, theta));
    if (!simulate(theta_new, torques_first ? nullptr : &Z_new, &torque_new, &error)) {
      summary.message = "auxiliary model failed at iteration " + std::to_string(it) + ": " + error;
      break;
    }
    summary.torque_change.push_back(RelativeChange(torque_new, torque));
    theta = theta_new;
    torque.swap(torque_new);
    if (!torques_first) {
      Z.swap(Z_new);
      solved_in = 2;
    }
    if (summary.torque_change.back() <= iteration_options.torque_tolerance &&
        summary.parameter_change.back() <= iteration_options.parameter_tolerance) {
      summary.converged = true;
      summary.message = "converged after " + std::to_string(it) + " iterations";
      break;
    }
    {
      const double torque_change = summary.torque_change.back();
      const double parameter_change = summary.parameter_change.back();
      const bool torque_lower =
          best_torque_it == 0 || torque_change < summary.torque_change[best_torque_it - 1];
      const bool parameter_lower =
          best_parameter_it == 0 ||
          parameter_change < summary.parameter_change[best_parameter_it - 1];
      if (torque_lower) best_torque_it = it;
      if (parameter_lower) best_parameter_it = it;
      without_decrease = torque_lower || parameter_lower ? 0 : without_decrease + 1;
    }
    if (iteration_options.stall_iterations > 0 &&
        without_decrease >= iteration_options.stall_iterations &&
        it < iteration_options.max_iterations) {
      summary.stalled = true;
      std::ostringstream message;
      message << "did NOT converge, stopped at iteration " << it
              << ": the relative changes stopped decreasing (for " << without_decrease
              << " iterations neither fell below its smallest value: torque "
              << summary.torque_change[best_torque_it - 1] << " at iteration " << best_torque_it
              << ", parameter " << summary.parameter_change[best_parameter_it - 1]
              << " at iteration " << best_parameter_it << "; tolerances "
              << iteration_options.torque_tolerance << ", " << iteration_options.parameter_tolerance
              << "); last torque change " << summary.torque_change.back() << ", parameter change "
              << summary.parameter_change.back();
      summary.message = message.str();
      break;
    }
    if (torques_first && it < iteration_options.max_iterations) {
      // The next solve needs the instruments of θ^it: they replace those of the last solve.
      solved_in = 0;
      Eigen::VectorXd unused;
      if (!simulate(theta, &Z, &unused, &error)) {
        summary.message =
            "auxiliary model failed at iteration " + std::to_string(it) + ": " + error;
        break;
      }
    }
  }
  if (!summary.converged && summary.message.empty()) {
    std::ostringstream message;
    message << "did NOT converge in " << iteration_options.max_iterations
            << " iterations: last relative torque change " << summary.torque_change.back()
            << " (tolerance " << iteration_options.torque_tolerance << "), parameter change "
            << summary.parameter_change.back() << " (tolerance "
            << iteration_options.parameter_tolerance << ")";
    summary.message = message.str();
  }
  if (final_instruments != nullptr && solved_in != 0) {
    *final_instruments = std::move(solved_in == 1 ? Z : Z_new);
  }
  summary.time_s = SecondsSince(start);
  return summary;
}

}  // namespace

IvIterationSummary IterateInstrumentalVariables(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                                const Eigen::VectorXd& theta0,
                                                const InstrumentGenerator& generator,
                                                const IvIterationOptions& iteration_options,
                                                const LinearLeastSquaresOptions& options) {
  return Iterate(
      X.rows(), X.cols(), theta0, generator, iteration_options,
      [&](const Eigen::MatrixXd& Z) { return SolveInstrumentalVariables(Z, X, y, options); },
      nullptr, /*instruments_like_x=*/true);
}

IvIterationSummary IterateInstrumentalVariables(const Eigen::MatrixXd& X,
                                                const Eigen::VectorXd& theta0,
                                                const InstrumentGenerator& generator,
                                                const IvIterationOptions& iteration_options,
                                                const IvSolve& solve,
                                                Eigen::MatrixXd* final_instruments) {
  return Iterate(X.rows(), X.cols(), theta0, generator, iteration_options, solve, final_instruments,
                 /*instruments_like_x=*/false);
}

IvIterationSummary IterateInstrumentalVariables(Eigen::Index num_rows,
                                                const Eigen::VectorXd& theta0,
                                                const InstrumentGenerator& generator,
                                                const IvIterationOptions& iteration_options,
                                                const IvSolve& solve,
                                                Eigen::MatrixXd* final_instruments) {
  return Iterate(num_rows, theta0.size(), theta0, generator, iteration_options, solve,
                 final_instruments, /*instruments_like_x=*/false);
}

}  // namespace dynid::solvers
