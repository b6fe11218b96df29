#include "dynid/solvers/observability.h"

#include <glog/logging.h>

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace dynid::solvers {

bool ObservabilityOptions::IsValid(std::string* why) const {
  if (!(relative_tolerance > 0.0 && relative_tolerance < 1.0)) {
    if (why) *why = "relative_tolerance must be in (0, 1)";
    return false;
  }
  return true;
}

std::string DescribeDirection(const Eigen::VectorXd& direction,
                              const std::vector<std::string>& names) {
  CHECK_EQ(direction.size(), static_cast<int>(names.size()))
      << "direction: expected " << names.size() << " entries, got " << direction.size();
  std::vector<int> order(direction.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return std::abs(direction(a)) > std::abs(direction(b)); });
  if (order.empty()) return "";
  const double largest = std::abs(direction(order[0]));
  const double sign = direction(order[0]) < 0.0 ? -1.0 : 1.0;
  std::ostringstream out;
  out << std::setprecision(3);
  bool first = true;
  for (int i : order) {
    const double c = sign * direction(i);
    if (std::abs(c) < 0.05 * largest) continue;
    out << (first ? (c < 0 ? "-" : "+") : (c < 0 ? " - " : " + ")) << std::abs(c) << " "
        << names[i];
    first = false;
  }
  return out.str();
}

namespace {

// Numerical rank of Q with columns divided by `scale`, and the null directions (in the scaled
// coordinates) when `null_space` is non-null.
int ScaledRank(const Eigen::MatrixXd& Q, const Eigen::VectorXd& scale, double tolerance,
               Eigen::MatrixXd* null_space) {
  const Eigen::MatrixXd scaled = Q * scale.cwiseInverse().asDiagonal();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(scaled, Eigen::ComputeFullV);
  const Eigen::VectorXd& sigma = svd.singularValues();
  const double largest = sigma.size() > 0 ? sigma(0) : 0.0;
  int rank = 0;
  for (int i = 0; i < sigma.size(); ++i) {
    if (largest > 0.0 && sigma(i) > tolerance * largest) ++rank;
  }
  if (null_space) *null_space = svd.matrixV().rightCols(Q.cols() - rank);
  return rank;
}

}  // namespace

bool ObservabilityRankTests(const models::ModelInfo& info, const Eigen::VectorXd& time,
                            const std::vector<Eigen::MatrixXd>& C,
                            const std::vector<Eigen::MatrixXd>& D,
                            const ObservabilityOptions& options, ObservabilityReport* report,
                            std::string* error) {
  CHECK(report != nullptr && error != nullptr) << "expected outputs, got nullptr";
  std::string why;
  if (!options.IsValid(&why)) {
    *error = "observability options: " + why;
    return false;
  }
  const int n = static_cast<int>(info.positions.size());
  const int m = static_cast<int>(info.inputs.size());
  const int p = static_cast<int>(info.parameters.size());
  const int l = static_cast<int>(info.measurements.size());
  const int num_nodes = static_cast<int>(time.size());
  if (num_nodes < 2 || static_cast<int>(C.size()) != num_nodes ||
      static_cast<int>(D.size()) != num_nodes) {
    *error = "observability: expected at least 2 nodes and one C, D per node";
    return false;
  }
  for (int k = 0; k < num_nodes; ++k) {
    if (C[k].rows() != n + l || C[k].cols() != 2 * n + p || D[k].rows() != n + l ||
        D[k].cols() != n + m) {
      std::ostringstream out;
      out << "observability: node " << k << ": expected C " << n + l << " × " << 2 * n + p
          << " and D " << n + l << " × " << n + m << ", got " << C[k].rows() << " × " << C[k].cols()
          << " and " << D[k].rows() << " × " << D[k].cols();
      *error = out.str();
      return false;
    }
  }
  *report = ObservabilityReport();
  report->required_rank_226 = n + p + m;
  report->required_rank_228 = 2 * n + p + 2 * m;
  for (const auto& q : info.positions) report->columns_226.push_back("s." + q.name);
  for (const auto& q : info.parameters) report->columns_226.push_back("theta." + q.name);
  for (const auto& q : info.inputs) report->columns_226.push_back("u." + q.name);
  for (const auto& q : info.positions) report->columns_228.push_back("s." + q.name);
  for (const auto& q : info.positions) report->columns_228.push_back("v." + q.name);
  for (const auto& q : info.parameters) report->columns_228.push_back("theta." + q.name);
  for (const auto& q : info.inputs) report->columns_228.push_back("u." + q.name);
  for (const auto& q : info.inputs) report->columns_228.push_back("du." + q.name);

  // Q matrices at every node.
  const int rows = n + l;
  std::vector<Eigen::MatrixXd> Q226(num_nodes), Q228(num_nodes);
  for (int k = 0; k < num_nodes; ++k) {
    const int k0 = std::max(k - 1, 0), k1 = std::min(k + 1, num_nodes - 1);
    const double dt = time(k1) - time(k0);
    const Eigen::MatrixXd dC = (C[k1] - C[k0]) / dt;
    const Eigen::MatrixXd dD = (D[k1] - D[k0]) / dt;
    Eigen::MatrixXd& q = Q226[k];
    q.resize(rows, n + p + m);
    q << C[k].leftCols(n), C[k].rightCols(p), D[k].rightCols(m);
    Eigen::MatrixXd& r = Q228[k];
    r.setZero(2 * rows, 2 * n + p + 2 * m);
    r.block(0, 0, rows, n) = C[k].leftCols(n);
    r.block(0, 2 * n, rows, p) = C[k].rightCols(p);
    r.block(0, 2 * n + p, rows, m) = D[k].rightCols(m);
    r.block(rows, 0, rows, n) = dC.leftCols(n);
    r.block(rows, n, rows, n) = C[k].leftCols(n);
    r.block(rows, 2 * n, rows, p) = dC.rightCols(p);
    r.block(rows, 2 * n + p, rows, m) = dD.rightCols(m);
    r.block(rows, 2 * n + p + m, rows, m) = D[k].rightCols(m);
  }
  // Column scales: RMS over the trajectory (1 for a column that is zero everywhere).
  auto column_scale = [&](const std::vector<Eigen::MatrixXd>& Q) {
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(Q[0].cols());
    for (const auto& q : Q) sum += q.colwise().squaredNorm().transpose();
    Eigen::VectorXd scale = (sum / num_nodes).cwiseSqrt();
    for (int j = 0; j < scale.size(); ++j) {
      if (!(scale(j) > 0.0)) scale(j) = 1.0;
    }
    return scale;
  };
  const Eigen::VectorXd scale226 = column_scale(Q226), scale228 = column_scale(Q228);
  report->rank_226.resize(num_nodes);
  report->rank_228.resize(num_nodes);
  int full226 = 0, full228 = 0;
  for (int k = 0; k < num_nodes; ++k) {
    report->rank_226(k) = ScaledRank(Q226[k], scale226, options.relative_tolerance, nullptr);
    report->rank_228(k) = ScaledRank(Q228[k], scale228, options.relative_tolerance, nullptr);
    if (report->rank_226(k) == report->required_rank_226) ++full226;
    if (report->rank_228(k) == report->required_rank_228) ++full228;
    if (report->rank_226(k) < report->rank_226(report->worst_node_226)) {
      report->worst_node_226 = k;
    }
    if (report->rank_228(k) < report->rank_228(report->worst_node_228)) {
      report->worst_node_228 = k;
    }
    if (report->rank_226(k) > report->rank_226(report->best_node_226)) report->best_node_226 = k;
    if (report->rank_228(k) > report->rank_228(report->best_node_228)) report->best_node_228 = k;
  }
  report->fraction_full_226 = static_cast<double>(full226) / num_nodes;
  report->fraction_full_228 = static_cast<double>(full228) / num_nodes;
  Eigen::MatrixXd null_space;
  ScaledRank(Q226[report->best_node_226], scale226, options.relative_tolerance, &null_space);
  for (int j = 0; j < null_space.cols(); ++j) {
    report->null_directions_226.push_back(
        DescribeDirection(null_space.col(j), report->columns_226));
  }
  ScaledRank(Q228[report->best_node_228], scale228, options.relative_tolerance, &null_space);
  for (int j = 0; j < null_space.cols(); ++j) {
    report->null_directions_228.push_back(
        DescribeDirection(null_space.col(j), report->columns_228));
  }
  std::ostringstream out;
  out << "eq. 2.26: full rank " << report->required_rank_226 << " at "
      << 100.0 * report->fraction_full_226 << " % of nodes (lowest "
      << report->rank_226(report->worst_node_226) << ", highest "
      << report->rank_226(report->best_node_226) << "); eq. 2.28: full rank "
      << report->required_rank_228 << " at " << 100.0 * report->fraction_full_228
      << " % of nodes (lowest " << report->rank_228(report->worst_node_228) << ", highest "
      << report->rank_228(report->best_node_228) << ")";
  report->message = out.str();
  return true;
}

}  // namespace dynid::solvers
