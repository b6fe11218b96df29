#include "dynid/problems/physically_consistent_problem.h"

#include <ceres/cost_function.h>
#include <ceres/problem.h>
#include <glog/logging.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <utility>

#include "dynid/models/inertia_parameterization.h"

namespace dynid::problems {
namespace {

using models::ParameterKind;

class PhysicalLinearCost : public ceres::CostFunction {
 public:
  PhysicalLinearCost(const PhysicalParameterization* parameterization, Eigen::MatrixXd matrix,
                     Eigen::VectorXd target)
      : parameterization_(parameterization),
        matrix_(std::move(matrix)),
        target_(std::move(target)) {
    CHECK(parameterization_ != nullptr);
    CHECK_EQ(matrix_.cols(), parameterization_->size());
    CHECK_EQ(matrix_.rows(), target_.size());
    set_num_residuals(static_cast<int>(matrix_.rows()));
    mutable_parameter_block_sizes()->push_back(parameterization_->size());
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const int p = parameterization_->size();
    const Eigen::VectorXd phi = Eigen::Map<const Eigen::VectorXd>(parameters[0], p);
    Eigen::VectorXd theta;
    const bool want_jacobian = jacobians != nullptr && jacobians[0] != nullptr;
    Eigen::MatrixXd d;
    parameterization_->ToStandard(phi, &theta, want_jacobian ? &d : nullptr);
    // A trial step far along a log coordinate overflows: report it as failed, and Ceres shrinks
    // the step.
    if (!theta.allFinite()) return false;
    Eigen::Map<Eigen::VectorXd>(residuals, matrix_.rows()) = matrix_ * theta - target_;
    if (want_jacobian) {
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
          jacobians[0], matrix_.rows(), p) = matrix_ * d;
    }
    return true;
  }

 private:
  const PhysicalParameterization* parameterization_;
  const Eigen::MatrixXd matrix_;
  const Eigen::VectorXd target_;
};

// vech of a symmetric 4 × 4 with the off-diagonal entries × √2 (||vech||² = ||·||_F²).
models::Vector10d ScaledVech(const Eigen::Matrix4d& s) {
  models::Vector10d v;
  int k = 0;
  for (int r = 0; r < 4; ++r) {
    for (int c = r; c < 4; ++c) v[k++] = r == c ? s(r, c) : std::sqrt(2.0) * s(r, c);
  }
  return v;
}

}  // namespace

PhysicalParameterization::PhysicalParameterization(const models::SerialRobot& robot,
                                                   PhysicalCoordinates coordinates)
    : coordinates_(coordinates) {
  const bool log = coordinates == PhysicalCoordinates::kLogCholesky;
  const int p = robot.num_parameters();
  standard_names_ = robot.parameter_names();
  names_.resize(p);
  non_negative_.assign(p, 0);
  kind_.assign(p, -1);
  link_index_.assign(robot.num_joints(), -1);
  std::vector<int> coupled_ia(robot.coupled_motors().size(), -1);
  std::vector<int> coupled_fv(robot.coupled_motors().size(), -1);
  for (int i = 0; i < p; ++i) {
    const models::ParameterInfo& info = robot.parameter_info()[i];
    switch (info.kind) {
      case ParameterKind::kXX:
        link_index_[info.joint] = i;
        for (int k = 0; k < 10; ++k) {
          names_[i + k] =
              std::string(log ? models::LogCholeskyNames()[k] : models::CholeskyNames()[k]) + "_" +
              std::to_string(info.joint + 1);
        }
        break;
      case ParameterKind::kIa:
      case ParameterKind::kCoupledIa:
      case ParameterKind::kFv:
      case ParameterKind::kCoupledFv:
      case ParameterKind::kFc:
      case ParameterKind::kCoupledFc:
      case ParameterKind::kFs:  // the Stribeck excess: static minus Coulomb friction, >= 0
        non_negative_[i] = 1;
        names_[i] = (log ? "ln_" : "sqrt_") + info.name;
        kind_[i] = (info.kind == ParameterKind::kIa || info.kind == ParameterKind::kCoupledIa) ? 0
                   : (info.kind == ParameterKind::kFv || info.kind == ParameterKind::kCoupledFv)
                       ? 1
                       : 2;
        if (info.kind == ParameterKind::kCoupledIa) coupled_ia[info.joint] = i;
        if (info.kind == ParameterKind::kCoupledFv) coupled_fv[info.joint] = i;
        break;
      case ParameterKind::kOffset:
        names_[i] = info.name;
        break;
      case ParameterKind::kXY:
      case ParameterKind::kXZ:
      case ParameterKind::kYY:
      case ParameterKind::kYZ:
      case ParameterKind::kZZ:
      case ParameterKind::kMX:
      case ParameterKind::kMY:
      case ParameterKind::kMZ:
      case ParameterKind::kM:
        break;  // named with their link above
    }
  }
  for (int j = 0; j < robot.num_joints(); ++j) CHECK_GE(link_index_[j], 0) << "link " << j + 1;
  if (robot.parameterization().coupling_form == models::CouplingForm::kGautier) {
    for (size_t m = 0; m < robot.coupled_motors().size(); ++m) {
      const Eigen::VectorXd& c = robot.coupled_motors()[m].coupling;
      for (int j = 0; j < robot.num_joints(); ++j) {
        if (c[j] == 0.0) continue;
        if (coupled_ia[m] >= 0) {
          coupling_.push_back(
              {coupled_ia[m], robot.DriveIndex(j, ParameterKind::kIa), c[j] * c[j]});
        }
        if (coupled_fv[m] >= 0) {
          coupling_.push_back(
              {coupled_fv[m], robot.DriveIndex(j, ParameterKind::kFv), c[j] * c[j]});
        }
      }
    }
  }
}

double PhysicalParameterization::Positive(double phi) const {
  return coordinates_ == PhysicalCoordinates::kLogCholesky ? std::exp(phi) : phi * phi;
}

double PhysicalParameterization::PositiveDerivative(double phi) const {
  return coordinates_ == PhysicalCoordinates::kLogCholesky ? std::exp(phi) : 2.0 * phi;
}

void PhysicalParameterization::ToStandard(const Eigen::VectorXd& phi, Eigen::VectorXd* theta,
                                          Eigen::MatrixXd* jacobian) const {
  const int p = size();
  CHECK_EQ(phi.size(), p);
  CHECK(theta != nullptr);
  *theta = phi;
  if (jacobian != nullptr) jacobian->setIdentity(p, p);
  models::Matrix10d link_jacobian;
  for (int i : link_index_) {
    models::Matrix10d* link_jacobian_or_null = jacobian != nullptr ? &link_jacobian : nullptr;
    theta->segment<10>(i) =
        coordinates_ == PhysicalCoordinates::kLogCholesky
            ? models::LinkInertiaFromLogCholesky(phi.segment<10>(i), link_jacobian_or_null)
            : models::LinkInertiaFromCholesky(phi.segment<10>(i), link_jacobian_or_null);
    if (jacobian != nullptr) jacobian->block<10, 10>(i, i) = link_jacobian;
  }
  for (int i = 0; i < p; ++i) {
    if (!non_negative_[i]) continue;
    (*theta)[i] = Positive(phi[i]);
    if (jacobian != nullptr) (*jacobian)(i, i) = PositiveDerivative(phi[i]);
  }
  // Gautier's form: the joint-side columns also carry the coupled motors' physical terms.
  for (const CouplingTerm& term : coupling_) {
    (*theta)[term.joint_index] += term.c2 * Positive(phi[term.motor_index]);
    if (jacobian != nullptr) {
      (*jacobian)(term.joint_index, term.motor_index) +=
          term.c2 * PositiveDerivative(phi[term.motor_index]);
    }
  }
}

Eigen::VectorXd PhysicalParameterization::PhysicalValues(const Eigen::VectorXd& theta) const {
  CHECK_EQ(theta.size(), size());
  Eigen::VectorXd physical = theta;
  for (const CouplingTerm& term : coupling_) {
    physical[term.joint_index] -= term.c2 * theta[term.motor_index];
  }
  return physical;
}

bool PhysicalParameterization::FromStandard(const Eigen::VectorXd& theta, Eigen::VectorXd* phi,
                                            std::string* error) const {
  CHECK(phi != nullptr);
  const Eigen::VectorXd physical = PhysicalValues(theta);
  *phi = theta;
  for (int j = 0; j < num_links(); ++j) {
    models::Vector10d eta;
    std::string why;
    const models::Vector10d values = theta.segment<10>(link_index_[j]);
    const bool ok = coordinates_ == PhysicalCoordinates::kLogCholesky
                        ? models::LogCholeskyFromLinkInertia(values, &eta, &why)
                        : models::CholeskyFromLinkInertia(values, &eta, &why);
    if (!ok) {
      if (error != nullptr) *error = "link " + std::to_string(j + 1) + ": " + why;
      return false;
    }
    phi->segment<10>(link_index_[j]) = eta;
  }
  for (int i = 0; i < size(); ++i) {
    if (!non_negative_[i]) continue;
    if (!(physical[i] > 0.0)) {
      if (error != nullptr) {
        std::ostringstream out;
        out << standard_names_[i] << ": physical value " << physical[i] << " is not positive";
        *error = out.str();
      }
      return false;
    }
    (*phi)[i] = coordinates_ == PhysicalCoordinates::kLogCholesky ? std::log(physical[i])
                                                                  : std::sqrt(physical[i]);
  }
  return true;
}

Eigen::VectorXd PhysicalParameterization::ProjectToConsistent(const Eigen::VectorXd& theta,
                                                              double relative_floor) const {
  CHECK(relative_floor > 0.0 && relative_floor < 1.0) << "relative_floor " << relative_floor;
  Eigen::VectorXd physical = PhysicalValues(theta);
  for (int i : link_index_) {
    const models::Vector10d values = physical.segment<10>(i);
    if (!models::CheckLinkConsistency(values, relative_floor).consistent) {
      physical.segment<10>(i) = models::ProjectToConsistent(values, relative_floor);
    }
  }
  double largest[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < size(); ++i) {
    if (non_negative_[i]) largest[kind_[i]] = std::max(largest[kind_[i]], physical[i]);
  }
  for (int i = 0; i < size(); ++i) {
    if (!non_negative_[i]) continue;
    const double lower = largest[kind_[i]] > 0.0 ? relative_floor * largest[kind_[i]] : 1e-9;
    physical[i] = std::max(physical[i], lower);
  }
  Eigen::VectorXd projected = physical;
  for (const CouplingTerm& term : coupling_) {
    projected[term.joint_index] += term.c2 * physical[term.motor_index];
  }
  return projected;
}

bool ValidatePhysicallyConsistentData(const PhysicalParameterization& parameterization,
                                      const PhysicallyConsistentData& data, std::string* error) {
  auto fail = [&](const std::string& message) {
    if (error != nullptr) *error = "physically consistent data: " + message;
    return false;
  };
  const Eigen::Index rows = data.x.rows(), c = data.x.cols();
  const int p = parameterization.size();
  if (data.y.size() != rows) {
    return fail("y has " + std::to_string(data.y.size()) + " rows, x has " + std::to_string(rows));
  }
  if (data.column_map.size() == 0) {
    if (c != p) {
      return fail("x has " + std::to_string(c) + " columns but the robot " + std::to_string(p) +
                  " standard parameters and no column map was given");
    }
  } else if (data.column_map.rows() != c || data.column_map.cols() != p) {
    return fail("the column map must be " + std::to_string(c) + " × " + std::to_string(p));
  }
  if (rows <= c) {
    return fail(std::to_string(rows) + " rows for " + std::to_string(c) +
                " columns (more rows than columns are needed)");
  }
  if (data.row_weights.size() != 0 && data.row_weights.size() != rows) {
    return fail("row_weights has " + std::to_string(data.row_weights.size()) + " entries, x has " +
                std::to_string(rows) + " rows");
  }
  if (!data.x.allFinite() || !data.y.allFinite() || !data.column_map.allFinite() ||
      !data.row_weights.allFinite()) {
    return fail("x, y, the column map and the row weights must be finite");
  }
  if (data.row_weights.size() != 0 && data.row_weights.minCoeff() < 0.0) {
    return fail("row weights must be non-negative");
  }
  return true;
}

int CountWeightedRows(const PhysicallyConsistentData& data) {
  if (data.row_weights.size() == 0) return static_cast<int>(data.x.rows());
  return static_cast<int>((data.row_weights.array() != 0.0).count());
}

bool PhysicallyConsistentProblemOptions::IsValid(std::string* why) const {
  auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (rows_per_residual_block < 1) return fail("rows_per_residual_block must be >= 1");
  if (!(regularization >= 0.0) || !std::isfinite(regularization)) {
    return fail("regularization must be finite and >= 0");
  }
  if (!(prior_weight >= 0.0) || !std::isfinite(prior_weight)) {
    return fail("prior_weight must be finite and >= 0");
  }
  if (prior_weight > 0.0 && (prior_theta.size() == 0 || !prior_theta.allFinite())) {
    return fail("a prior weight needs finite prior_theta values");
  }
  return true;
}

bool PhysicallyConsistentResidualRows(const PhysicalParameterization& parameterization,
                                      const PhysicallyConsistentData& data,
                                      const PhysicallyConsistentProblemOptions& options,
                                      PhysicallyConsistentRows* rows, std::string* error) {
  CHECK(rows != nullptr);
  std::string why;
  if (!options.IsValid(&why)) {
    if (error != nullptr) *error = "physically consistent problem options: " + why;
    return false;
  }
  if (!ValidatePhysicallyConsistentData(parameterization, data, error)) return false;
  const int p = parameterization.size();
  const Eigen::Index n = data.x.rows(), c = data.x.cols();
  Eigen::MatrixXd weighted(n, c + 1);
  weighted.leftCols(c) = data.x;
  weighted.col(c) = data.y;
  if (data.row_weights.size() != 0) weighted = data.row_weights.asDiagonal() * weighted;
  if (options.compress_rows) {
    // R of [diag(w) X, diag(w) y]: the last row holds the part of y outside the range of X, a
    // constant residual kept so that the problem's cost is the full data cost.
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(weighted);
    const Eigen::MatrixXd r =
        qr.matrixQR().topRows(c + 1).triangularView<Eigen::Upper>().toDenseMatrix();
    const Eigen::MatrixXd left = r.leftCols(c);
    rows->data_matrix =
        data.column_map.size() == 0 ? left : Eigen::MatrixXd(left * data.column_map);
    rows->data_target = r.col(c);
    rows->column_information = left.topRows(c).transpose() * left.topRows(c);
  } else {
    rows->data_matrix = data.column_map.size() == 0
                            ? Eigen::MatrixXd(weighted.leftCols(c))
                            : Eigen::MatrixXd(weighted.leftCols(c) * data.column_map);
    rows->data_target = weighted.col(c);
    rows->column_information = weighted.leftCols(c).transpose() * weighted.leftCols(c);
  }
  rows->prior_matrix.resize(0, p);
  rows->prior_target.resize(0);
  if (options.prior_weight > 0.0) {
    if (options.prior_theta.size() != p) {
      if (error != nullptr) {
        *error = "prior_theta has " + std::to_string(options.prior_theta.size()) +
                 " values, the robot " + std::to_string(p) + " standard parameters";
      }
      return false;
    }
    const int links = parameterization.num_links();
    rows->prior_matrix = Eigen::MatrixXd::Zero(10 * links, p);
    rows->prior_target.resize(10 * links);
    const double scale = std::sqrt(options.prior_weight);
    for (int j = 0; j < links; ++j) {
      const int i = parameterization.LinkIndex(j);
      const models::Vector10d values = options.prior_theta.segment<10>(i);
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eigen(models::PseudoInertiaOfVector(values));
      if (!(eigen.eigenvalues()[0] > 0.0)) {
        if (error != nullptr) {
          std::ostringstream out;
          out << "the prior of link " << j + 1
              << " is not physically consistent (smallest pseudo-inertia eigenvalue "
              << eigen.eigenvalues()[0] << " kg m²)";
          *error = out.str();
        }
        return false;
      }
      const Eigen::Matrix4d whitening =
          eigen.eigenvectors() * eigen.eigenvalues().cwiseInverse().cwiseSqrt().asDiagonal() *
          eigen.eigenvectors().transpose();
      models::Matrix10d block;
      for (int k = 0; k < 10; ++k) {
        const Eigen::Matrix4d unit = models::PseudoInertiaOfVector(models::Vector10d::Unit(k));
        block.col(k) = scale * ScaledVech(whitening * unit * whitening);
      }
      rows->prior_matrix.block<10, 10>(10 * j, i) = block;
      rows->prior_target.segment<10>(10 * j) = block * values;
    }
  }
  return true;
}

bool BuildPhysicallyConsistentProblem(const PhysicalParameterization* parameterization,
                                      const PhysicallyConsistentData& data,
                                      const PhysicallyConsistentProblemOptions& options,
                                      Eigen::VectorXd* phi, ceres::Problem* problem,
                                      std::string* error, PhysicallyConsistentRows* rows_out) {
  CHECK(parameterization != nullptr && phi != nullptr && problem != nullptr);
  CHECK_EQ(phi->size(), parameterization->size()) << "phi must hold the starting point";
  PhysicallyConsistentRows local;
  PhysicallyConsistentRows& rows = rows_out != nullptr ? *rows_out : local;
  if (!PhysicallyConsistentResidualRows(*parameterization, data, options, &rows, error)) {
    return false;
  }
  const int p = parameterization->size();
  problem->AddParameterBlock(phi->data(), p);
  const Eigen::Index total = rows.data_matrix.rows();
  const Eigen::Index block = options.compress_rows ? total : options.rows_per_residual_block;
  for (Eigen::Index start = 0; start < total; start += block) {
    const Eigen::Index count = std::min(block, total - start);
    problem->AddResidualBlock(
        NewPhysicalLinearCost(parameterization, rows.data_matrix.middleRows(start, count),
                              rows.data_target.segment(start, count)),
        nullptr, phi->data());
  }
  if (rows.prior_matrix.rows() > 0) {
    problem->AddResidualBlock(
        NewPhysicalLinearCost(parameterization, rows.prior_matrix, rows.prior_target), nullptr,
        phi->data());
  }
  if (options.regularization > 0.0) {
    Eigen::VectorXd theta_start;
    parameterization->ToStandard(*phi, &theta_start);
    const Eigen::MatrixXd information = rows.data_matrix.transpose() * rows.data_matrix;
    Eigen::VectorXd scale(p);
    for (int i = 0; i < p; ++i) {
      scale[i] = information(i, i) > 0.0 ? 1.0 / std::sqrt(information(i, i)) : 1.0;
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(scale.asDiagonal() * information *
                                                         scale.asDiagonal());
    const double threshold = 1e-10 * std::max(eigen.eigenvalues().maxCoeff(), 0.0);
    int null = 0;
    while (null < p && eigen.eigenvalues()[null] <= threshold) ++null;
    if (null > 0) {
      const Eigen::MatrixXd pull = std::sqrt(options.regularization) *
                                   eigen.eigenvectors().leftCols(null).transpose() *
                                   scale.cwiseInverse().asDiagonal();
      problem->AddResidualBlock(NewPhysicalLinearCost(parameterization, pull, pull * theta_start),
                                nullptr, phi->data());
    }
  }
  return true;
}

ceres::CostFunction* NewPhysicalLinearCost(const PhysicalParameterization* parameterization,
                                           Eigen::MatrixXd matrix, Eigen::VectorXd target) {
  return new PhysicalLinearCost(parameterization, std::move(matrix), std::move(target));
}

}  // namespace dynid::problems
