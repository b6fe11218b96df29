#include "dynid/models/drive_description.h"

#include <cmath>

#include <Eigen/LU>
#include <glog/logging.h>

#include "dynid/models/internal/description_document.h"

namespace dynid::models {
namespace {

using internal::DocumentNode;

// Relative tolerance of "the transmission's diagonal equals the gear ratio".
constexpr double kRatioTolerance = 1e-12;

bool ParseFriction(const DocumentNode& node, JointTerms* terms, std::string* error) {
  if (!internal::CheckKeys(node, {"viscous", "coulomb", "offset", "stribeck_velocity"}, error)) {
    return false;
  }
  if (!internal::GetOptionalBool(node, "viscous", &terms->viscous, error) ||
      !internal::GetOptionalBool(node, "coulomb", &terms->coulomb, error) ||
      !internal::GetOptionalBool(node, "offset", &terms->offset, error) ||
      !internal::GetOptionalNumber(node, "stribeck_velocity", &terms->stribeck_velocity, error)) {
    return false;
  }
  if (terms->stribeck_velocity < 0.0) {
    *error = node.Find("stribeck_velocity")->Where() + ": must be >= 0 (0: no Stribeck term)";
    return false;
  }
  return true;
}

bool ParseInitial(const DocumentNode& node, const JointTerms& terms, JointDrive* initial,
                  std::string* error) {
  if (!internal::CheckKeys(node, {"ia", "fv", "fc", "fs", "offset"}, error)) return false;
  struct Entry {
    const char* key;
    double* value;
    bool present;
  };
  const Entry entries[] = {{"ia", &initial->ia, terms.rotor_inertia},
                           {"fv", &initial->fv, terms.viscous},
                           {"fc", &initial->fc, terms.coulomb},
                           {"fs", &initial->fs, terms.stribeck_velocity > 0.0},
                           {"offset", &initial->offset, terms.offset}};
  for (const Entry& entry : entries) {
    const DocumentNode* value = node.Find(entry.key);
    if (value == nullptr) continue;
    if (!entry.present) {
      *error = value->Where() + ": initial value of a term this joint does not carry";
      return false;
    }
    if (!internal::GetNumber(*value, entry.value, error)) return false;
  }
  return true;
}

bool ParseJoint(const DocumentNode& node, JointDriveSpec* spec, bool* gear_given,
                std::string* error) {
  if (!internal::CheckKeys(node,
                           {"gear_ratio", "motor_constant", "position_offset", "rotor_inertia",
                            "friction", "initial"},
                           error)) {
    return false;
  }
  *gear_given = node.Find("gear_ratio") != nullptr;
  if (!internal::GetOptionalNumber(node, "gear_ratio", &spec->gear_ratio, error) ||
      !internal::GetOptionalNumber(node, "motor_constant", &spec->motor_constant, error) ||
      !internal::GetOptionalNumber(node, "position_offset", &spec->position_offset, error) ||
      !internal::GetOptionalBool(node, "rotor_inertia", &spec->terms.rotor_inertia, error)) {
    return false;
  }
  if (spec->gear_ratio == 0.0) {
    *error = node.Find("gear_ratio")->Where() + ": must be non-zero";
    return false;
  }
  if (const DocumentNode* friction = node.Find("friction")) {
    if (!ParseFriction(*friction, &spec->terms, error)) return false;
  }
  if (const DocumentNode* initial = node.Find("initial")) {
    if (!ParseInitial(*initial, spec->terms, &spec->initial, error)) return false;
  }
  return true;
}

bool ParseDrives(const DocumentNode& root, const ChainDescription& chain, DriveDescription* drives,
                 std::string* error) {
  if (!internal::CheckKeys(
          root, {"side", "coupling_form", "joints", "transmission", "coupled_motors"}, error)) {
    return false;
  }
  const int n = chain.num_joints();
  const std::string source = drives->source;
  *drives = DefaultDrives(chain);
  drives->source = source;
  if (const DocumentNode* side = root.Find("side")) {
    std::string value;
    if (!internal::GetString(*side, &value, error)) return false;
    if (value == "joint") {
      drives->side = DataSide::kJoint;
    } else if (value == "motor") {
      drives->side = DataSide::kMotor;
    } else {
      *error = side->Where() + ": expected 'joint' or 'motor', got '" + value + "'";
      return false;
    }
  }
  if (const DocumentNode* form = root.Find("coupling_form")) {
    std::string value;
    if (!internal::GetString(*form, &value, error)) return false;
    if (value == "physical") {
      drives->coupling_form = CouplingForm::kPhysical;
    } else if (value == "gautier") {
      drives->coupling_form = CouplingForm::kGautier;
    } else {
      *error = form->Where() + ": expected 'physical' or 'gautier', got '" + value + "'";
      return false;
    }
  }
  std::vector<bool> gear_given(n, false);
  if (const DocumentNode* joints = root.Find("joints")) {
    if (!internal::ExpectMap(*joints, error)) return false;
    for (const auto& member : joints->members) {
      const int j = chain.JointIndex(member.first);
      if (j < 0) {
        *error = member.second.Where() + ": '" + member.first + "' is not a joint of the chain (" +
                 chain.source + ")";
        return false;
      }
      bool given = false;
      if (!ParseJoint(member.second, &drives->joints[j], &given, error)) return false;
      gear_given[j] = given;
    }
  }
  drives->motor_from_joint = Eigen::MatrixXd::Zero(n, n);
  for (int j = 0; j < n; ++j) drives->motor_from_joint(j, j) = drives->joints[j].gear_ratio;
  if (const DocumentNode* transmission = root.Find("transmission")) {
    if (!internal::ExpectList(*transmission, error)) return false;
    if (static_cast<int>(transmission->items.size()) != n) {
      *error = transmission->Where() + ": expected " + std::to_string(n) +
               " rows (one per motor, chain joint order), got " +
               std::to_string(transmission->items.size());
      return false;
    }
    for (int k = 0; k < n; ++k) {
      std::vector<double> row;
      if (!internal::GetNumberList(transmission->items[k], n, &row, error)) return false;
      for (int j = 0; j < n; ++j) drives->motor_from_joint(k, j) = row[j];
      const double diagonal = row[k];
      if (diagonal == 0.0) {
        *error = transmission->items[k].Where() + ": the diagonal entry (motor " +
                 std::to_string(k + 1) + " on its own joint) must be non-zero";
        return false;
      }
      JointDriveSpec& spec = drives->joints[k];
      if (gear_given[k] &&
          std::abs(spec.gear_ratio - diagonal) > kRatioTolerance * std::abs(diagonal)) {
        *error = transmission->items[k].Where() + ": diagonal entry " + std::to_string(diagonal) +
                 " differs from the gear_ratio of joint '" + spec.joint + "'";
        return false;
      }
      spec.gear_ratio = diagonal;
    }
    if (std::abs(drives->motor_from_joint.determinant()) < 1e-12) {
      *error = transmission->Where() + ": the transmission matrix is singular";
      return false;
    }
  }
  if (const DocumentNode* priors = root.Find("coupled_motors")) {
    if (!internal::ExpectMap(*priors, error)) return false;
    const std::vector<CoupledMotor> motors = drives->CoupledMotors();
    for (const auto& member : priors->members) {
      bool known = false;
      for (const CoupledMotor& motor : motors) known = known || motor.name == member.first;
      if (!known) {
        *error = member.second.Where() + ": the transmission couples no motor named '" +
                 member.first + "'";
        return false;
      }
      CoupledMotorPrior prior;
      prior.name = member.first;
      if (!internal::CheckKeys(member.second, {"ia", "fv", "fc"}, error) ||
          !internal::GetOptionalNumber(member.second, "ia", &prior.ia, error) ||
          !internal::GetOptionalNumber(member.second, "fv", &prior.fv, error) ||
          !internal::GetOptionalNumber(member.second, "fc", &prior.fc, error)) {
        return false;
      }
      drives->coupled_priors.push_back(prior);
    }
  }
  return true;
}

}  // namespace

std::vector<CoupledMotor> DriveDescription::CoupledMotors() const {
  std::vector<CoupledMotor> motors;
  const int n = num_joints();
  for (int k = 0; k < n; ++k) {
    int nonzero = 0;
    for (int j = 0; j < n; ++j) nonzero += motor_from_joint(k, j) != 0.0 ? 1 : 0;
    if (nonzero < 2) continue;
    CoupledMotor motor;
    motor.name = "m" + std::to_string(k + 1);
    motor.coupling = motor_from_joint.row(k).transpose() / motor_from_joint(k, k);
    for (const CoupledMotorPrior& prior : coupled_priors) {
      if (prior.name != motor.name) continue;
      motor.ia = prior.ia;
      motor.fv = prior.fv;
      motor.fc = prior.fc;
    }
    motors.push_back(motor);
  }
  return motors;
}

JointTerms DefaultDriveTerms() {
  JointTerms terms;
  terms.rotor_inertia = true;
  terms.viscous = true;
  terms.coulomb = true;
  terms.offset = true;
  terms.stribeck_velocity = 0.0;
  return terms;
}

DriveDescription DefaultDrives(const ChainDescription& chain) {
  DriveDescription drives;
  drives.source = "default drives";
  const int n = chain.num_joints();
  drives.joints.resize(n);
  for (int j = 0; j < n; ++j) {
    drives.joints[j].joint = chain.joints[j].name;
    drives.joints[j].terms = DefaultDriveTerms();
  }
  drives.motor_from_joint = Eigen::MatrixXd::Identity(n, n);
  return drives;
}

bool ParseDriveDescription(const std::string& text, const std::string& format,
                           const std::string& source, const ChainDescription& chain,
                           DriveDescription* drives, std::string* error) {
  DocumentNode root;
  if (!internal::ParseDocument(text, format, source, &root, error)) return false;
  drives->source = source;
  return ParseDrives(root, chain, drives, error);
}

bool ReadDriveDescription(const std::string& path, const ChainDescription& chain,
                          DriveDescription* drives, std::string* error) {
  DocumentNode root;
  if (!internal::ReadDocumentFile(path, &root, error)) return false;
  drives->source = path;
  return ParseDrives(root, chain, drives, error);
}

void JointPositionsFromData(const DriveDescription& drives, const Eigen::MatrixXd& positions,
                            Eigen::MatrixXd* q) {
  CHECK_EQ(positions.cols(), drives.num_joints()) << "positions: one column per joint";
  CHECK(q != nullptr);
  if (drives.side == DataSide::kJoint) {
    *q = positions;
    return;
  }
  // Rows are samples: q_kᵀ = q_m,kᵀ R⁻ᵀ.
  *q = drives.motor_from_joint.partialPivLu().solve(positions.transpose()).transpose();
}

void JointTorquesFromData(const DriveDescription& drives, const Eigen::MatrixXd& torques,
                          Eigen::MatrixXd* tau) {
  CHECK_EQ(torques.cols(), drives.num_joints()) << "torques: one column per joint";
  CHECK(tau != nullptr);
  if (drives.side == DataSide::kJoint) {
    *tau = torques;
    return;
  }
  // tau = Rᵀ tau_m, i.e. tau_kᵀ = tau_m,kᵀ R for each row.
  *tau = torques * drives.motor_from_joint;
}

void JointTorquesFromCurrents(const DriveDescription& drives, const Eigen::MatrixXd& currents,
                              Eigen::MatrixXd* tau) {
  const int n = drives.num_joints();
  CHECK_EQ(currents.cols(), n) << "currents: one column per joint";
  CHECK(tau != nullptr);
  Eigen::VectorXd kt(n);
  for (int j = 0; j < n; ++j) kt[j] = drives.joints[j].motor_constant;
  *tau = currents * kt.asDiagonal() * drives.motor_from_joint;
}

}  // namespace dynid::models
