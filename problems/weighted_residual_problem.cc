#include "dynid/problems/weighted_residual_problem.h"

#include <cmath>
#include <sstream>

#include <Eigen/Eigenvalues>

#include "dynid/models/friction_mass.h"
#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/rt_manipulator.h"

namespace dynid::problems {

const char* TranscriptionName(Transcription transcription) {
  return transcription == Transcription::kShooting ? "shooting" : "collocation";
}

const char* ParameterModeName(ParameterMode mode) {
  switch (mode) {
    case ParameterMode::kFixed:
      return "fixed";
    case ParameterMode::kConstant:
      return "constant";
    case ParameterMode::kTimeVarying:
      return "time_varying";
  }
  return "unknown";
}

std::vector<double*> WeightedResidualVariables::TrajectoryBlocks() {
  std::vector<double*> blocks;
  for (int k = 0; k < num_nodes(); ++k) {
    blocks.push_back(state(k));
    blocks.push_back(input(k));
    if (mode == ParameterMode::kTimeVarying) blocks.push_back(parameter(k));
  }
  return blocks;
}

double* WeightedResidualVariables::ConstantParameterBlock() {
  return mode == ParameterMode::kConstant ? parameters.col(0).data() : nullptr;
}

void ResizeVariables(int n, int m, const Eigen::VectorXd& theta, int num_nodes, ParameterMode mode,
                     WeightedResidualVariables* variables) {
  CHECK(variables != nullptr) << "expected variables, got nullptr";
  CHECK_GE(num_nodes, 2) << "expected at least 2 nodes, got " << num_nodes;
  variables->mode = mode;
  variables->states.setZero(2 * n, num_nodes);
  variables->inputs.setZero(n + m, num_nodes);
  const int columns = mode == ParameterMode::kTimeVarying ? num_nodes : 1;
  variables->parameters = theta.replicate(1, columns);
}

namespace {

bool CheckSquare(const Eigen::MatrixXd& A, int size, const char* what, std::string* error) {
  if (A.rows() != size || A.cols() != size) {
    std::ostringstream out;
    out << what << ": expected " << size << " × " << size << ", got " << A.rows() << " × "
        << A.cols();
    *error = out.str();
    return false;
  }
  if (!A.allFinite()) {
    *error = std::string(what) + ": not finite";
    return false;
  }
  return true;
}

}  // namespace

bool ValidateWeightedResidualInputs(int n, int m, int p, int l, const WeightedResidualData& data,
                                    const WeightedResidualWeights& weights,
                                    const WeightedResidualOptions& options,
                                    const WeightedResidualVariables& variables,
                                    std::string* error) {
  CHECK(error != nullptr) << "expected an error string, got nullptr";
  const int num_nodes = static_cast<int>(data.time.size());
  std::ostringstream out;
  if (num_nodes < 2) {
    out << "expected at least 2 nodes, got " << num_nodes;
  } else if (data.measurements.rows() != num_nodes || data.measurements.cols() != l) {
    out << "measurements: expected " << num_nodes << " × " << l << ", got "
        << data.measurements.rows() << " × " << data.measurements.cols();
  } else if (!data.measurements.allFinite() || !data.time.allFinite()) {
    out << "time or measurements contain NaN or Inf";
  }
  if (out.str().empty()) {
    for (int k = 0; k + 1 < num_nodes; ++k) {
      if (!(data.time(k + 1) > data.time(k))) {
        out << "time not strictly increasing at node " << k + 1;
        break;
      }
    }
  }
  if (out.str().empty()) {
    const int columns = options.parameter_mode == ParameterMode::kTimeVarying ? num_nodes : 1;
    if (variables.mode != options.parameter_mode) {
      out << "variables were sized for parameter mode " << ParameterModeName(variables.mode)
          << ", options ask for " << ParameterModeName(options.parameter_mode);
    } else if (variables.states.rows() != 2 * n || variables.states.cols() != num_nodes ||
               variables.inputs.rows() != n + m || variables.inputs.cols() != num_nodes ||
               variables.parameters.rows() != p || variables.parameters.cols() != columns) {
      out << "variables: expected states " << 2 * n << " × " << num_nodes << ", inputs " << n + m
          << " × " << num_nodes << ", parameters " << p << " × " << columns << "; got "
          << variables.states.rows() << " × " << variables.states.cols() << ", "
          << variables.inputs.rows() << " × " << variables.inputs.cols() << ", "
          << variables.parameters.rows() << " × " << variables.parameters.cols();
    }
  }
  if (!out.str().empty()) {
    *error = out.str();
    return false;
  }
  if (!CheckSquare(weights.kinematic, 2 * n, "kinematic weight W", error)) return false;
  if (!CheckSquare(weights.residual, n + l, "residual weight V", error)) return false;
  if (options.parameter_mode == ParameterMode::kTimeVarying &&
      !CheckSquare(weights.parameter, p, "parameter weight W_theta", error)) {
    return false;
  }
  if (weights.initial.size() > 0) {
    const int size = options.parameter_mode == ParameterMode::kFixed ? 2 * n : 2 * n + p;
    if (!CheckSquare(weights.initial, size, "initial weight R0", error)) return false;
    if (weights.initial_guess.size() != size) {
      out << "initial guess q0: expected " << size << " values, got "
          << weights.initial_guess.size();
      *error = out.str();
      return false;
    }
  }
  return true;
}

namespace {

// Rank of the symmetric positive semi-definite A: eigenvalues above 1e-14 × the largest (0 for
// an empty or zero A). A diagonal A counts its positive entries above that tolerance.
int WeightRank(const Eigen::MatrixXd& A) {
  if (A.size() == 0) return 0;
  const Eigen::VectorXd lambda =
      A.isDiagonal() ? Eigen::VectorXd(A.diagonal())
                     : Eigen::VectorXd(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(
                                           A, Eigen::EigenvaluesOnly)
                                           .eigenvalues());
  const double largest = lambda.cwiseAbs().maxCoeff();
  if (!(largest > 0.0)) return 0;
  return static_cast<int>((lambda.array() > 1e-14 * largest).count());
}

}  // namespace

int CountWeightedResiduals(const WeightedResidualWeights& weights,
                           const WeightedResidualData& data,
                           const WeightedResidualOptions& options) {
  const int num_nodes = static_cast<int>(data.time.size());
  CHECK_GE(num_nodes, 2) << "expected at least 2 nodes, got " << num_nodes;
  CHECK_EQ(weights.kinematic.rows(), weights.kinematic.cols()) << "kinematic weight W";
  CHECK_EQ(weights.residual.rows(), weights.residual.cols()) << "residual weight V";
  const int points_per_interval = options.transcription == Transcription::kCollocation ? 2 : 1;
  int count = num_nodes * WeightRank(weights.residual) +
              (num_nodes - 1) * points_per_interval * WeightRank(weights.kinematic);
  if (options.parameter_mode == ParameterMode::kTimeVarying) {
    CHECK_EQ(weights.parameter.rows(), weights.parameter.cols()) << "parameter weight W_theta";
    count += (num_nodes - 1) * WeightRank(weights.parameter);
  }
  if (weights.initial.size() > 0) {
    CHECK_EQ(weights.initial.rows(), weights.initial.cols()) << "initial weight R0";
    count += WeightRank(weights.initial);
  }
  return count;
}

Eigen::VectorXd TrapezoidalNodeWeights(const Eigen::VectorXd& time) {
  const int num_nodes = static_cast<int>(time.size());
  CHECK_GE(num_nodes, 2) << "expected at least 2 nodes, got " << num_nodes;
  Eigen::VectorXd w = Eigen::VectorXd::Zero(num_nodes);
  for (int k = 0; k + 1 < num_nodes; ++k) {
    const double h = time(k + 1) - time(k);
    w(k) += 0.5 * h;
    w(k + 1) += 0.5 * h;
  }
  return w;
}

bool SquareRootFactor(const Eigen::MatrixXd& A, bool require_definite, Eigen::MatrixXd* S,
                      std::string* error) {
  CHECK(S != nullptr && error != nullptr) << "expected outputs, got nullptr";
  const double scale = A.cwiseAbs().maxCoeff();
  if (A.rows() != A.cols() || (A - A.transpose()).cwiseAbs().maxCoeff() > 1e-12 * scale) {
    *error = "not symmetric";
    return false;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(A);
  const Eigen::VectorXd& lambda = eig.eigenvalues();
  const double largest = lambda.cwiseAbs().maxCoeff();
  if (lambda.minCoeff() < -1e-12 * largest) {
    std::ostringstream out;
    out << "not positive semi-definite (smallest eigenvalue " << lambda.minCoeff() << ")";
    *error = out.str();
    return false;
  }
  if (require_definite && !(lambda.minCoeff() > 1e-14 * largest)) {
    std::ostringstream out;
    out << "not positive definite (smallest eigenvalue " << lambda.minCoeff() << ")";
    *error = out.str();
    return false;
  }
  // A diagonal A keeps a diagonal factor (and exact zeros off the diagonal).
  if (A.isDiagonal()) {
    *S = A.diagonal().cwiseMax(0.0).cwiseSqrt().asDiagonal();
    return true;
  }
  *S = lambda.cwiseMax(0.0).cwiseSqrt().asDiagonal() * eig.eigenvectors().transpose();
  return true;
}

}  // namespace dynid::problems

