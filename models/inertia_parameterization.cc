#include "dynid/models/inertia_parameterization.h"

#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace dynid::models {
namespace {

using Eigen::Matrix3d;
using Eigen::Matrix4d;

// Positions in U of η_1..η_9 (η_0 = α scales the whole factor).
constexpr int kRow[10] = {-1, 0, 1, 2, 0, 1, 0, 0, 1, 2};
constexpr int kCol[10] = {-1, 0, 1, 2, 1, 2, 2, 3, 3, 3};

// Slot k of u (and of η) in U: (3, 3) for k = 0, else (kRow[k], kCol[k]).
int SlotRow(int k) { return k == 0 ? 3 : kRow[k]; }
int SlotColumn(int k) { return k == 0 ? 3 : kCol[k]; }

Matrix4d FactorOfCholeskyCoordinates(const Vector10d& u) {
  Matrix4d factor = Matrix4d::Zero();
  for (int k = 0; k < 10; ++k) factor(SlotRow(k), SlotColumn(k)) = u[k];
  return factor;
}

// U Uᵀ = J with U upper triangular and a positive diagonal: the lower Cholesky factor of the
// reversed J, reversed. False with a message when J is not positive definite.
bool UpperCholeskyFactor(const Vector10d& values, Matrix4d* factor, std::string* error);

// U / e^α.
Matrix4d UnitScaleFactor(const Vector10d& eta) {
  Matrix4d v = Matrix4d::Zero();
  for (int k = 1; k <= 9; ++k) v(kRow[k], kCol[k]) = k <= 3 ? std::exp(eta[k]) : eta[k];
  v(3, 3) = 1.0;
  return v;
}

}  // namespace

Vector10d LinkInertiaVector(const LinkInertia& link) {
  Vector10d v;
  link.ToValues(v.data());
  return v;
}

LinkInertia LinkInertiaFromVector(const Vector10d& values) {
  return LinkInertia::FromValues(values.data());
}

Matrix4d PseudoInertiaOfVector(const Vector10d& values) {
  return LinkInertiaFromVector(values).PseudoInertia();
}

Vector10d VectorOfPseudoInertia(const Matrix4d& pseudo_inertia) {
  const Matrix3d sigma = pseudo_inertia.topLeftCorner<3, 3>();
  const Matrix3d inertia = sigma.trace() * Matrix3d::Identity() - sigma;
  Vector10d v;
  v << inertia(0, 0), inertia(0, 1), inertia(0, 2), inertia(1, 1), inertia(1, 2), inertia(2, 2),
      pseudo_inertia(0, 3), pseudo_inertia(1, 3), pseudo_inertia(2, 3), pseudo_inertia(3, 3);
  return v;
}

const std::array<const char*, 10>& LogCholeskyNames() {
  static const std::array<const char*, 10> names = {"alpha", "d1",  "d2", "d3", "s12",
                                                    "s23",   "s13", "t1", "t2", "t3"};
  return names;
}

Matrix4d LogCholeskyFactor(const Vector10d& eta) { return std::exp(eta[0]) * UnitScaleFactor(eta); }

Vector10d LinkInertiaFromLogCholesky(const Vector10d& eta, Matrix10d* jacobian) {
  const Matrix4d v = UnitScaleFactor(eta);
  const double scale = std::exp(2.0 * eta[0]);
  const Vector10d values = VectorOfPseudoInertia(scale * v * v.transpose());
  if (jacobian != nullptr) {
    jacobian->col(0) = 2.0 * values;
    for (int k = 1; k <= 9; ++k) {
      // ∂V/∂η_k has one entry: e^{d_i} on the diagonal, 1 elsewhere.
      Matrix4d dv = Matrix4d::Zero();
      dv(kRow[k], kCol[k]) = k <= 3 ? v(kRow[k], kCol[k]) : 1.0;
      const Matrix4d product = dv * v.transpose();
      jacobian->col(k) = VectorOfPseudoInertia(scale * (product + product.transpose()));
    }
  }
  return values;
}

const std::array<const char*, 10>& CholeskyNames() {
  static const std::array<const char*, 10> names = {"u44", "u11", "u22", "u33", "u12",
                                                    "u23", "u13", "u14", "u24", "u34"};
  return names;
}

Vector10d LinkInertiaFromCholesky(const Vector10d& u, Matrix10d* jacobian) {
  const Matrix4d factor = FactorOfCholeskyCoordinates(u);
  const Vector10d values = VectorOfPseudoInertia(factor * factor.transpose());
  if (jacobian != nullptr) {
    for (int k = 0; k < 10; ++k) {
      // ∂J/∂u_k = E_k Uᵀ + U E_kᵀ, E_k the unit matrix of u_k's slot.
      Matrix4d product = Matrix4d::Zero();
      product.row(SlotRow(k)) = factor.col(SlotColumn(k)).transpose();
      jacobian->col(k) = VectorOfPseudoInertia(product + product.transpose());
    }
  }
  return values;
}

bool CholeskyFromLinkInertia(const Vector10d& values, Vector10d* u, std::string* error) {
  CHECK(u != nullptr);
  Matrix4d factor;
  if (!UpperCholeskyFactor(values, &factor, error)) return false;
  for (int k = 0; k < 10; ++k) (*u)[k] = factor(SlotRow(k), SlotColumn(k));
  return true;
}

bool LogCholeskyFromLinkInertia(const Vector10d& values, Vector10d* eta, std::string* error) {
  CHECK(eta != nullptr);
  Matrix4d u;
  if (!UpperCholeskyFactor(values, &u, error)) return false;
  const double alpha = std::log(u(3, 3));
  const Matrix4d v = u / u(3, 3);
  (*eta)[0] = alpha;
  for (int k = 1; k <= 9; ++k) {
    (*eta)[k] = k <= 3 ? std::log(v(kRow[k], kCol[k])) : v(kRow[k], kCol[k]);
  }
  return true;
}

namespace {

bool UpperCholeskyFactor(const Vector10d& values, Matrix4d* factor, std::string* error) {
  const Matrix4d j = PseudoInertiaOfVector(values);
  // U Uᵀ with U upper triangular is the lower Cholesky factor of the reversed matrix, reversed.
  const Matrix4d reversed = j.reverse();
  Eigen::LLT<Matrix4d> llt(reversed);
  const Matrix4d lower = llt.matrixL();
  if (llt.info() != Eigen::Success || !(lower.diagonal().minCoeff() > 0.0)) {
    if (error != nullptr) {
      std::ostringstream out;
      out << "the pseudo-inertia is not positive definite (smallest eigenvalue "
          << Eigen::SelfAdjointEigenSolver<Matrix4d>(j).eigenvalues()[0] << " kg m²)";
      *error = out.str();
    }
    return false;
  }
  *factor = lower.reverse();
  return true;
}

}  // namespace

std::string LinkConsistency::Describe() const {
  std::ostringstream out;
  if (consistent) {
    out << "consistent (mass " << mass_kg << " kg, smallest pseudo-inertia eigenvalue "
        << pseudo_inertia_min_eigenvalue << " kg m²)";
    return out.str();
  }
  out << "inconsistent:";
  if (!(mass_kg > 0.0)) out << " mass " << mass_kg << " kg <= 0;";
  out << " smallest pseudo-inertia eigenvalue " << pseudo_inertia_min_eigenvalue
      << " kg m² (largest " << pseudo_inertia_max_eigenvalue << ")";
  if (mass_kg > 0.0) {
    if (!(principal_moments[0] > 0.0)) {
      out << "; inertia about the centre of mass not positive definite (smallest principal moment "
          << principal_moments[0] << " kg m²)";
    }
    if (!(triangle_margin > 0.0)) {
      out << "; triangle inequality violated: λ1 + λ2 − λ3 = " << triangle_margin << " kg m²";
    }
  }
  return out.str();
}

LinkConsistency CheckLinkConsistency(const Vector10d& values, double relative_tolerance) {
  CHECK_GE(relative_tolerance, 0.0);
  LinkConsistency c;
  const Eigen::Vector4d lambda =
      Eigen::SelfAdjointEigenSolver<Matrix4d>(PseudoInertiaOfVector(values)).eigenvalues();
  c.mass_kg = values[9];
  c.pseudo_inertia_min_eigenvalue = lambda[0];
  c.pseudo_inertia_max_eigenvalue = lambda[3];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (c.mass_kg > 0.0) {
    const Eigen::Vector3d com = values.segment<3>(6) / c.mass_kg;
    const LinkInertia link = LinkInertiaFromVector(values);
    const Matrix3d at_com =
        link.InertiaTensor() -
        c.mass_kg * (com.squaredNorm() * Matrix3d::Identity() - com * com.transpose());
    c.center_of_mass_m = com;
    c.principal_moments = Eigen::SelfAdjointEigenSolver<Matrix3d>(at_com).eigenvalues();
    c.triangle_margin = c.principal_moments[0] + c.principal_moments[1] - c.principal_moments[2];
  } else {
    c.center_of_mass_m.setConstant(nan);
    c.principal_moments.setConstant(nan);
    c.triangle_margin = nan;
  }
  c.consistent = lambda[0] > relative_tolerance * lambda.cwiseAbs().maxCoeff() && lambda[0] > 0.0;
  return c;
}

Vector10d ProjectToConsistent(const Vector10d& values, double relative_floor) {
  CHECK(relative_floor > 0.0 && relative_floor < 1.0) << "relative_floor " << relative_floor;
  Eigen::SelfAdjointEigenSolver<Matrix4d> eigen(PseudoInertiaOfVector(values));
  Eigen::Vector4d lambda = eigen.eigenvalues();
  double floor = relative_floor * std::max(lambda[3], 0.0);
  if (!(floor > 0.0)) floor = 1e-12;
  lambda = lambda.cwiseMax(floor);
  return VectorOfPseudoInertia(eigen.eigenvectors() * lambda.asDiagonal() *
                               eigen.eigenvectors().transpose());
}

}  // namespace dynid::models
