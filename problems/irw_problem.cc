#include "dynid/problems/irw_problem.h"

#include <cmath>

#include <ceres/ceres.h>
#include <glog/logging.h>

namespace dynid::problems {
namespace {

// r = x - y.
class DataResidual final : public ceres::SizedCostFunction<1, 1> {
 public:
  explicit DataResidual(double measurement) : measurement_(measurement) {}
  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    residuals[0] = parameters[0][0] - measurement_;
    if (jacobians && jacobians[0]) jacobians[0][0] = 1.0;
    return true;
  }

 private:
  double measurement_;
};

// r = scale * sum_j stencil_j x(k + j), one scalar parameter block per sample.
class DifferenceResidual final : public ceres::CostFunction {
 public:
  DifferenceResidual(const std::vector<double>& stencil, double scale) : weights_(stencil) {
    for (double& w : weights_) w *= scale;
    set_num_residuals(1);
    for (size_t j = 0; j < weights_.size(); ++j) mutable_parameter_block_sizes()->push_back(1);
  }
  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    double sum = 0.0;
    for (size_t j = 0; j < weights_.size(); ++j) sum += weights_[j] * parameters[j][0];
    residuals[0] = sum;
    if (jacobians) {
      for (size_t j = 0; j < weights_.size(); ++j) {
        if (jacobians[j]) jacobians[j][0] = weights_[j];
      }
    }
    return true;
  }

 private:
  std::vector<double> weights_;
};

}  // namespace

void BuildIrwProblem(const Eigen::VectorXd& y, int difference_order, double nvr,
                     std::vector<double>* positions, ceres::Problem* problem) {
  CHECK(difference_order == 2 || difference_order == 3)
      << "BuildIrwProblem: difference order must be 2 (IRWSM1) or 3 (IRWSM2), got "
      << difference_order;
  CHECK_GT(nvr, 0.0);
  const int n = static_cast<int>(y.size());
  CHECK_EQ(static_cast<int>(positions->size()), n)
      << "BuildIrwProblem: expected " << n << " position blocks";
  CHECK_GT(n, difference_order);
  std::vector<double> stencil = {1.0};
  for (int i = 0; i < difference_order; ++i) {
    std::vector<double> next(stencil.size() + 1, 0.0);
    for (size_t j = 0; j < stencil.size(); ++j) {
      next[j] -= stencil[j];
      next[j + 1] += stencil[j];
    }
    stencil = next;
  }
  double* x = positions->data();
  for (int k = 0; k < n; ++k) {
    problem->AddResidualBlock(new DataResidual(y[k]), nullptr, x + k);
  }
  const double scale = 1.0 / std::sqrt(nvr);
  std::vector<double*> blocks(difference_order + 1);
  for (int k = 0; k + difference_order < n; ++k) {
    for (int j = 0; j <= difference_order; ++j) blocks[j] = x + k + j;
    problem->AddResidualBlock(new DifferenceResidual(stencil, scale), nullptr, blocks);
  }
}

}  // namespace dynid::problems
