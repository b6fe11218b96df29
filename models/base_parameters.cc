// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's Householder code (trmv, in
// Eigen/Core's headers); it is attributed to the header, so it must be silenced before the first
// Eigen include of this translation unit.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "dynid/models/base_parameters.h"

#include <glog/logging.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>

namespace dynid::models {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using Vector10d = Eigen::Matrix<double, 10, 1>;

constexpr double kCoefficientZero = 1e-12;
constexpr double kAxisTolerance = 1e-9;

double SnapCoefficient(double x) { return std::abs(x) < kCoefficientZero ? 0.0 : x; }

// Inertial parameters, in frame j−1 about O_{j−1}, of a body given in frame j about O_j
// (parallel-axis theorem with a first moment): J' = R J Rᵀ + 2(P·h')I − P h'ᵀ − h' Pᵀ
// + m(|P|²I − P Pᵀ), h' = R h + m P with R h the first moment re-expressed. Khalil's grouping
// formulas are this transform applied to the rotationally symmetric part of link j.
Vector10d ShiftToParent(const Matrix3d& r, const Vector3d& p, const Matrix3d& j, const Vector3d& h,
                        double m) {
  const Vector3d hr = r * h;
  const Matrix3d jp = r * j * r.transpose() + 2.0 * p.dot(hr) * Matrix3d::Identity() -
                      p * hr.transpose() - hr * p.transpose() +
                      m * (p.squaredNorm() * Matrix3d::Identity() - p * p.transpose());
  const Vector3d hp = hr + m * p;
  Vector10d out;
  out << jp(0, 0), jp(0, 1), jp(0, 2), jp(1, 1), jp(1, 2), jp(2, 2), hp.x(), hp.y(), hp.z(), m;
  for (int k = 0; k < 10; ++k) out[k] = SnapCoefficient(out[k]);
  return out;
}

bool Parallel(const Vector3d& a, const Vector3d& b) { return a.cross(b).norm() < kAxisTolerance; }
bool Perpendicular(const Vector3d& a, const Vector3d& b) {
  return std::abs(a.dot(b)) < kAxisTolerance;
}

void FinishNames(const SerialRobot& robot, BaseParameterSet* base) {
  base->names.clear();
  for (int row = 0; row < base->size(); ++row) {
    const int self = base->kept[row];
    bool regrouped = false;
    for (int col = 0; col < base->grouping.cols(); ++col) {
      if (col != self && base->grouping(row, col) != 0.0) regrouped = true;
    }
    base->names.push_back(robot.parameter_names()[self] + (regrouped ? "r" : ""));
  }
  base->descriptions.clear();
  for (int row = 0; row < base->size(); ++row) {
    const int self = base->kept[row];
    std::string text;
    auto term = [&](int col) {
      const double c = base->grouping(row, col);
      if (c == 0.0) return;
      const std::string& name = robot.parameter_names()[col];
      char number[32];
      std::snprintf(number, sizeof(number), "%.6g", std::abs(c));
      const bool unit = std::abs(std::abs(c) - 1.0) < 5e-7;
      if (text.empty()) {
        text = (c < 0 ? "−" : "") + (unit ? name : std::string(number) + "·" + name);
      } else {
        text += (c < 0 ? " − " : " + ") + (unit ? name : std::string(number) + "·" + name);
      }
    };
    term(self);
    for (int col = 0; col < base->grouping.cols(); ++col) {
      if (col != self) term(col);
    }
    base->descriptions.push_back(text.empty() ? "0" : text);
  }
}

}  // namespace

int BaseParameterSet::Index(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (names[i] == name) return i;
  }
  return -1;
}

void BaseParameterSet::SelectColumns(const Eigen::MatrixXd& phi, Eigen::MatrixXd* phi_base) const {
  CHECK_EQ(phi.cols(), grouping.cols()) << "regressor columns (standard parameters)";
  CHECK(phi_base != nullptr);
  phi_base->resize(phi.rows(), size());
  for (int i = 0; i < size(); ++i) phi_base->col(i) = phi.col(kept[i]);
}

// ------------------------------------------------------------------------------------------
// Closed-form rules

bool ComputeKhalilBaseParameters(const SerialRobot& robot, BaseParameterSet* base,
                                 std::string* error) {
  CHECK(base != nullptr);
  CHECK(error != nullptr);
  const int n = robot.num_joints();
  const int p = robot.num_parameters();
  const auto& joints = robot.joints();
  auto revolute = [&](int j) { return joints[j].type == JointType::kRevolute; };
  for (int j = 0; j < n; ++j) {
    const Vector3d& u = joints[j].axis;
    if (u.x() != 0.0 || u.y() != 0.0) {
      *error = robot.name() + ": the closed-form rules need every joint axis along z of its " +
               "link frame; " + robot.JointName(j) + " is not (use the numerical method)";
      return false;
    }
  }
  if (!revolute(0)) {
    *error = robot.name() +
             ": the closed-form rules implemented here need joint 1 revolute (use the numerical "
             "method for chains that start with a prismatic joint)";
    return false;
  }
  // Joint axes in frame 0 at q = 0. Angles between axes separated only by prismatic joints or
  // parallel revolute joints do not depend on q, which is all the tests below rely on.
  const std::vector<Eigen::Isometry3d> poses = robot.ForwardKinematics(Eigen::VectorXd::Zero(n));
  std::vector<Vector3d> axis(n);
  for (int j = 0; j < n; ++j) axis[j] = poses[j].linear().col(2);
  // only_parallel_rotations[j]: every revolute joint i ≤ j (i < j for prismatic j) is parallel
  // to the first one, so link j rotates about one fixed direction.
  std::vector<bool> single_rotation_axis(n);
  int second_revolute = -1;
  {
    bool all_parallel = true;
    for (int j = 0; j < n; ++j) {
      if (revolute(j)) {
        if (j > 0 && second_revolute < 0) second_revolute = j;
        if (!Parallel(axis[j], axis[0])) all_parallel = false;
      }
      single_rotation_axis[j] = all_parallel;
    }
  }
  for (int j = 1; j < n; ++j) {
    if (!revolute(j) && single_rotation_axis[j] && !Parallel(axis[j], axis[0])) {
      *error = robot.name() + ": prismatic joint " + std::to_string(j + 1) +
               " moves a link that rotates about a single axis not parallel to it; this special "
               "case is not covered by the implemented rules (use the numerical method)";
      return false;
    }
  }

  Eigen::MatrixXd g = Eigen::MatrixXd::Identity(p, p);  // row i: regrouped parameter i
  std::vector<bool> eliminated(p, false), no_effect(p, false);
  const Vector3d ez = Vector3d::UnitZ();
  for (int j = n - 1; j >= 0; --j) {
    const int base_index = robot.InertialIndex(j);
    auto idx = [&](int k) { return base_index + k; };  // 0 xx 1 xy 2 xz 3 yy 4 yz 5 zz 6 mx ...
    const Eigen::Isometry3d t = robot.LinkTransform(j, 0.0);
    const Matrix3d r = t.linear();
    const Vector3d pos = t.translation();
    if (revolute(j)) {
      // YYj·diag(1,1,0), MZj z and Mj are invariant under the joint rotation: they move to
      // link j−1 (for j = 1 to the fixed base, where they have no effect).
      const Eigen::RowVectorXd row_yy = g.row(idx(3));
      const Eigen::RowVectorXd row_mz = g.row(idx(8));
      const Eigen::RowVectorXd row_m = g.row(idx(9));
      g.row(idx(0)) -= row_yy;  // XXjr = XXj − YYj
      if (j > 0) {
        const int parent = robot.InertialIndex(j - 1);
        const Vector10d c_yy = ShiftToParent(r, pos, Vector3d(1, 1, 0).asDiagonal().toDenseMatrix(),
                                             Vector3d::Zero(), 0.0);
        const Vector10d c_mz = ShiftToParent(r, pos, Matrix3d::Zero(), ez, 0.0);
        const Vector10d c_m = ShiftToParent(r, pos, Matrix3d::Zero(), Vector3d::Zero(), 1.0);
        for (int k = 0; k < 10; ++k) {
          g.row(parent + k) += c_yy[k] * row_yy + c_mz[k] * row_mz + c_m[k] * row_m;
        }
        eliminated[idx(3)] = eliminated[idx(8)] = eliminated[idx(9)] = true;
      } else {
        no_effect[idx(3)] = no_effect[idx(8)] = no_effect[idx(9)] = true;
      }
    } else {
      // Prismatic: link j rotates with link j−1, so its inertia tensor joins link j−1.
      const int parent = robot.InertialIndex(j - 1);
      const int pairs[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
      Eigen::MatrixXd rows_j(6, p);
      for (int k = 0; k < 6; ++k) rows_j.row(k) = g.row(idx(k));
      for (int k = 0; k < 6; ++k) {
        Matrix3d unit = Matrix3d::Zero();
        unit(pairs[k][0], pairs[k][1]) = 1.0;
        unit(pairs[k][1], pairs[k][0]) = 1.0;
        const Vector10d c = ShiftToParent(r, pos, unit, Vector3d::Zero(), 0.0);
        for (int m = 0; m < 6; ++m) g.row(parent + m) += c[m] * rows_j.row(k);
        eliminated[idx(k)] = true;
      }
      if (single_rotation_axis[j]) {
        // Link j only turns about its own (fixed-direction) axis: MXj, MYj act like first
        // moments of link j−1, and MZj has no effect (constant potential, no kinetic term).
        const Eigen::RowVectorXd row_mx = g.row(idx(6));
        const Eigen::RowVectorXd row_my = g.row(idx(7));
        const Vector10d c_mx = ShiftToParent(r, pos, Matrix3d::Zero(), Vector3d::UnitX(), 0.0);
        const Vector10d c_my = ShiftToParent(r, pos, Matrix3d::Zero(), Vector3d::UnitY(), 0.0);
        for (int k = 0; k < 10; ++k) g.row(parent + k) += c_mx[k] * row_mx + c_my[k] * row_my;
        eliminated[idx(6)] = eliminated[idx(7)] = true;
        no_effect[idx(8)] = true;
      }
    }
  }
  // Near the base: a link turning about a single fixed axis only shows ZZ.
  for (int j = 0; j < n; ++j) {
    if (!revolute(j) || !single_rotation_axis[j]) continue;
    const int b = robot.InertialIndex(j);
    for (int k : {0, 1, 2, 4}) no_effect[b + k] = true;
  }
  // First moments of link 1 do not act when its axis is vertical (gravity along −z0).
  if (Parallel(axis[0], Vector3d::UnitZ())) {
    no_effect[robot.InertialIndex(0) + 6] = no_effect[robot.InertialIndex(0) + 7] = true;
  }
  // Rotor inertia of r1, and of r2 when perpendicular to r1: its column equals that of ZZ.
  if (robot.parameterization().rotor_inertia) {
    std::vector<int> rotor_to_zz = {0};
    if (second_revolute >= 0 && Perpendicular(axis[second_revolute], axis[0])) {
      rotor_to_zz.push_back(second_revolute);
    }
    for (int j : rotor_to_zz) {
      const int ia = robot.DriveIndex(j, ParameterKind::kIa);
      g.row(robot.InertialIndex(j) + 5) += g.row(ia);
      eliminated[ia] = true;
    }
  }

  base->kept.clear();
  base->no_effect.clear();
  for (int i = 0; i < p; ++i) {
    if (no_effect[i]) {
      base->no_effect.push_back(i);
    } else if (!eliminated[i]) {
      base->kept.push_back(i);
    }
  }
  base->grouping.resize(base->size(), p);
  for (int row = 0; row < base->size(); ++row) {
    base->grouping.row(row) = g.row(base->kept[row]);
  }
  base->grouping = base->grouping.unaryExpr([](double x) { return SnapCoefficient(x); });
  base->closed_form = true;
  FinishNames(robot, base);
  return true;
}

// ------------------------------------------------------------------------------------------
// Numerical method

bool NumericalBaseOptions::IsValid(std::string* why) const {
  if (num_states < 1) {
    *why = "num_states must be >= 1, got " + std::to_string(num_states);
    return false;
  }
  if (!(rank_tolerance > 0.0 && rank_tolerance < 1.0)) {
    *why = "rank_tolerance must be in (0, 1), got " + std::to_string(rank_tolerance);
    return false;
  }
  if (!(velocity_scale > 0.0 && acceleration_scale > 0.0 && prismatic_range_m > 0.0)) {
    *why = "velocity_scale, acceleration_scale and prismatic_range_m must be > 0";
    return false;
  }
  if (!measured_joints.empty() &&
      std::find(measured_joints.begin(), measured_joints.end(), true) == measured_joints.end()) {
    *why = "measured_joints: no joint is measured";
    return false;
  }
  return true;
}

void RandomRobotStates(const SerialRobot& robot, int num_states, std::uint32_t seed,
                       double velocity_scale, double acceleration_scale, double prismatic_range_m,
                       Eigen::MatrixXd* q, Eigen::MatrixXd* qd, Eigen::MatrixXd* qdd) {
  const int n = robot.num_joints();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  q->resize(num_states, n);
  qd->resize(num_states, n);
  qdd->resize(num_states, n);
  for (int k = 0; k < num_states; ++k) {
    for (int j = 0; j < n; ++j) {
      const bool rev = robot.joints()[j].type == JointType::kRevolute;
      (*q)(k, j) = unit(rng) * (rev ? M_PI : prismatic_range_m);
      (*qd)(k, j) = unit(rng) * velocity_scale;
      (*qdd)(k, j) = unit(rng) * acceleration_scale;
    }
  }
}

int NumericalRank(const Eigen::MatrixXd& w, double relative_tolerance) {
  // Columns at rounding level (e.g. a first moment whose every effect cancels analytically but
  // leaves 1e-17 residues) would become unit vectors after normalisation: zero them instead.
  Eigen::MatrixXd normalised = w;
  const double largest = w.colwise().norm().maxCoeff();
  for (Eigen::Index c = 0; c < w.cols(); ++c) {
    const double norm = w.col(c).norm();
    if (norm > 1e-12 * largest) {
      normalised.col(c) /= norm;
    } else {
      normalised.col(c).setZero();
    }
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(normalised);
  qr.setThreshold(relative_tolerance);
  return static_cast<int>(qr.rank());
}

bool ComputeNumericalBaseParameters(const SerialRobot& robot, const NumericalBaseOptions& options,
                                    BaseParameterSet* base, std::string* error) {
  CHECK(base != nullptr);
  CHECK(error != nullptr);
  if (!options.IsValid(error)) return false;
  Eigen::MatrixXd q, qd, qdd, w;
  RandomRobotStates(robot, options.num_states, options.seed, options.velocity_scale,
                    options.acceleration_scale, options.prismatic_range_m, &q, &qd, &qdd);
  const int n = robot.num_joints();
  if (!options.measured_joints.empty() && static_cast<int>(options.measured_joints.size()) != n) {
    *error = "measured_joints has " + std::to_string(options.measured_joints.size()) +
             " flags for " + std::to_string(n) + " joints";
    return false;
  }
  SerialRobotData data(robot);
  robot.StackedRegressor(q, qd, qdd, &data, &w);
  if (!options.measured_joints.empty()) {
    // Joint-major stack: joint j's rows are the block j·Ns .. (j+1)·Ns − 1.
    const int ns = options.num_states;
    int kept_joints = 0;
    for (int j = 0; j < n; ++j) {
      if (!options.measured_joints[j]) continue;
      w.middleRows(kept_joints * ns, ns) = w.middleRows(j * ns, ns);
      ++kept_joints;
    }
    w.conservativeResize(kept_joints * ns, Eigen::NoChange);
  }
  const int p = robot.num_parameters();
  if (w.rows() < p) {
    *error = "too few random states: " + std::to_string(w.rows()) + " rows for " +
             std::to_string(p) + " standard parameters";
    return false;
  }
  Eigen::VectorXd norms(p);
  for (int c = 0; c < p; ++c) norms[c] = w.col(c).norm();
  const double largest = norms.maxCoeff();
  Eigen::MatrixXd normalised = w;
  for (int c = 0; c < p; ++c) {
    if (norms[c] > 1e-12 * largest) {
      normalised.col(c) /= norms[c];
    } else {
      normalised.col(c).setZero();
    }
  }

  base->kept.clear();
  base->no_effect.clear();
  for (int c = 0; c < p; ++c) {
    if (norms[c] <= 1e-12 * largest) base->no_effect.push_back(c);
  }
  if (options.choice == NumericalBaseOptions::ColumnChoice::kPivoted) {
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(normalised);
    qr.setThreshold(options.rank_tolerance);
    const int rank = static_cast<int>(qr.rank());
    for (int i = 0; i < rank; ++i) base->kept.push_back(qr.colsPermutation().indices()[i]);
    std::sort(base->kept.begin(), base->kept.end());
  } else {
    // Greedy Gram–Schmidt (twice, for orthogonality) in the standard order: a column is kept
    // when it is not in the span of the columns kept before it.
    Eigen::MatrixXd basis(w.rows(), 0);
    for (int c = 0; c < p; ++c) {
      if (norms[c] <= 1e-12 * largest) continue;
      Eigen::VectorXd v = normalised.col(c);
      for (int pass = 0; pass < 2; ++pass) v -= basis * (basis.transpose() * v);
      const double residual = v.norm();
      if (residual > options.rank_tolerance * 100.0) {
        basis.conservativeResize(Eigen::NoChange, basis.cols() + 1);
        basis.col(basis.cols() - 1) = v / residual;
        base->kept.push_back(c);
      }
    }
    const int rank = NumericalRank(w, options.rank_tolerance);
    if (rank != base->size()) {
      *error = "greedy column selection found " + std::to_string(base->size()) +
               " independent columns but the pivoted QR rank is " + std::to_string(rank) +
               " (ill-conditioned random states; change seed or tolerance)";
      return false;
    }
  }
  // K from W = W_kept K (exact up to rounding since the other columns are in the span).
  Eigen::MatrixXd w_kept(w.rows(), base->size());
  for (int i = 0; i < base->size(); ++i) w_kept.col(i) = w.col(base->kept[i]);
  base->grouping = w_kept.colPivHouseholderQr().solve(w);
  for (int i = 0; i < base->size(); ++i) {
    const double kept_norm = norms[base->kept[i]];
    for (int c = 0; c < p; ++c) {
      double& value = base->grouping(i, c);
      if (norms[c] <= 1e-12 * largest || std::abs(value) * kept_norm < 1e-9 * norms[c]) {
        value = 0.0;
      }
    }
  }
  base->closed_form = false;
  FinishNames(robot, base);
  return true;
}

bool ComputeBaseParameters(const SerialRobot& robot, const NumericalBaseOptions& options,
                           BaseParameterSet* base, std::string* error) {
  CHECK(base != nullptr);
  CHECK(error != nullptr);
  BaseParameterSet numerical;
  if (!ComputeNumericalBaseParameters(robot, options, &numerical, error)) return false;
  const bool all_measured =
      std::find(options.measured_joints.begin(), options.measured_joints.end(), false) ==
      options.measured_joints.end();
  BaseParameterSet closed;
  std::string why_not;
  if (all_measured && ComputeKhalilBaseParameters(robot, &closed, &why_not) &&
      closed.kept == numerical.kept && closed.grouping.rows() == numerical.grouping.rows()) {
    // Same kept columns: the groupings must then be equal (K is unique given the kept columns).
    const double scale = std::max(1.0, numerical.grouping.cwiseAbs().maxCoeff());
    if ((closed.grouping - numerical.grouping).cwiseAbs().maxCoeff() <= 1e-6 * scale) {
      *base = std::move(closed);
      return true;
    }
  }
  *base = std::move(numerical);
  return true;
}

}  // namespace dynid::models
