#include "dynid/solvers/torque_validation.h"

#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace dynid::solvers {

Eigen::VectorXd StandardFromBase(const models::BaseParameterSet& base,
                                 const Eigen::VectorXd& theta_base, int num_standard) {
  CHECK_EQ(theta_base.size(), base.size());
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(num_standard);
  for (int i = 0; i < base.size(); ++i) {
    CHECK_LT(base.kept[i], num_standard);
    theta[base.kept[i]] = theta_base[i];
  }
  return theta;
}

std::string TorqueValidation::Report(const std::vector<std::string>& joint_names) const {
  std::ostringstream out;
  char line[160];
  std::snprintf(line, sizeof(line), "%-12s %12s %12s %10s\n", "joint", "RMS error", "RMS torque",
                "% of RMS");
  out << line;
  for (int j : joints) {
    const std::string name =
        joint_names.empty() ? "joint " + std::to_string(j + 1) : joint_names[j];
    std::snprintf(line, sizeof(line), "%-12s %12.5g %12.5g %10.2f\n", name.c_str(), rms_error[j],
                  rms_measured[j], 100.0 * relative_error[j]);
    out << line;
  }
  std::snprintf(line, sizeof(line), "%-12s %12.5g %12.5g %10.2f\n", "pooled", pooled_rms_error,
                pooled_rms_measured, 100.0 * pooled_relative_error);
  out << line;
  return out.str();
}

bool ValidateTorques(const models::SerialRobot& robot, const Eigen::VectorXd& theta_standard,
                     const ValidationRecord& record, TorqueValidation* result, std::string* error) {
  CHECK(result != nullptr);
  auto fail = [&](const std::string& message) {
    if (error != nullptr) *error = "torque validation: " + message;
    return false;
  };
  const int n = robot.num_joints();
  const Eigen::Index samples = record.q.rows();
  CHECK_EQ(theta_standard.size(), robot.num_parameters()) << "theta for " << robot.name();
  if (record.q.cols() != n || record.qd.cols() != n || record.qdd.cols() != n ||
      record.tau.cols() != n) {
    return fail("q, qd, qdd and tau need " + std::to_string(n) + " columns (one per joint)");
  }
  if (record.qd.rows() != samples || record.qdd.rows() != samples || record.tau.rows() != samples ||
      samples == 0) {
    return fail("q, qd, qdd and tau need the same, non-zero number of rows");
  }
  if (!record.measured.empty() && static_cast<int>(record.measured.size()) != n) {
    return fail("measured needs " + std::to_string(n) + " flags");
  }
  if (!record.q.allFinite() || !record.qd.allFinite() || !record.qdd.allFinite()) {
    return fail("the states must be finite");
  }
  TorqueValidation& v = *result;
  v = TorqueValidation();
  for (int j = 0; j < n; ++j) {
    if (!record.measured.empty() && !record.measured[j]) continue;
    if (!record.tau.col(j).allFinite()) {
      return fail("the measured torque of joint " + std::to_string(j + 1) + " is not finite");
    }
    v.joints.push_back(j);
  }
  if (v.joints.empty()) return fail("no joint is measured");

  v.predicted.resize(samples, n);
  models::SerialRobotData workspace(robot);
  Eigen::MatrixXd phi;
  Eigen::VectorXd q(n), qd(n), qdd(n);
  for (Eigen::Index k = 0; k < samples; ++k) {
    q = record.q.row(k).transpose();
    qd = record.qd.row(k).transpose();
    qdd = record.qdd.row(k).transpose();
    robot.Regressor(q, qd, qdd, &workspace, &phi);
    v.predicted.row(k) = (phi * theta_standard).transpose();
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  v.rms_error = Eigen::VectorXd::Constant(n, nan);
  v.rms_measured = Eigen::VectorXd::Constant(n, nan);
  v.relative_error = Eigen::VectorXd::Constant(n, nan);
  double error_sum = 0.0, measured_sum = 0.0;
  for (int j : v.joints) {
    const double e2 = (record.tau.col(j) - v.predicted.col(j)).squaredNorm();
    const double t2 = record.tau.col(j).squaredNorm();
    if (!(t2 > 0.0)) {
      return fail("the measured torque of joint " + std::to_string(j + 1) +
                  " is zero throughout (no relative error)");
    }
    v.rms_error[j] = std::sqrt(e2 / samples);
    v.rms_measured[j] = std::sqrt(t2 / samples);
    v.relative_error[j] = std::sqrt(e2 / t2);
    error_sum += e2;
    measured_sum += t2;
  }
  const double count = static_cast<double>(samples) * static_cast<double>(v.joints.size());
  v.pooled_rms_error = std::sqrt(error_sum / count);
  v.pooled_rms_measured = std::sqrt(measured_sum / count);
  v.pooled_relative_error = std::sqrt(error_sum / measured_sum);
  return true;
}

bool ValidateTorques(const models::SerialRobot& robot, const models::BaseParameterSet& base,
                     const Eigen::VectorXd& theta_base, const ValidationRecord& record,
                     TorqueValidation* result, std::string* error) {
  return ValidateTorques(robot, StandardFromBase(base, theta_base, robot.num_parameters()), record,
                         result, error);
}

}  // namespace dynid::solvers
