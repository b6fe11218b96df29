#include "dynid/models/robot_description.h"

#include <sstream>

#include "dynid/models/dh_table.h"
#include "dynid/models/drive_description.h"
#include "dynid/models/urdf_reader.h"

namespace dynid::models {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int ChainDescription::JointIndex(const std::string& joint_name) const {
  for (int j = 0; j < num_joints(); ++j) {
    if (joints[j].name == joint_name) return j;
  }
  return -1;
}

bool ParseChainSpec(const std::string& spec, std::string* root_link, std::string* tip_link,
                    std::string* error) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size() ||
      spec.find(':', colon + 1) != std::string::npos) {
    *error = "chain '" + spec + "': expected ROOT:TIP (two link names separated by one ':')";
    return false;
  }
  *root_link = spec.substr(0, colon);
  *tip_link = spec.substr(colon + 1);
  return true;
}

bool ReadChainDescription(const std::string& path, const std::string& root_link,
                          const std::string& tip_link, ChainDescription* chain,
                          std::string* error) {
  if (EndsWith(path, ".urdf") || EndsWith(path, ".xml")) {
    return ReadUrdfChain(path, root_link, tip_link, chain, error);
  }
  if (EndsWith(path, ".json") || EndsWith(path, ".yaml") || EndsWith(path, ".yml")) {
    if (!root_link.empty() || !tip_link.empty()) {
      *error = path + ": a DH table is one chain; a ROOT:TIP selection applies to URDF only";
      return false;
    }
    return ReadDhTable(path, chain, error);
  }
  *error = path + ": expected a .urdf, .xml, .json, .yaml or .yml robot description";
  return false;
}

bool MakeSerialRobot(const ChainDescription& chain, const DriveDescription& drives,
                     std::optional<SerialRobot>* robot, std::string* error) {
  const int n = chain.num_joints();
  if (n == 0) {
    *error = chain.source + ": the chain has no joint";
    return false;
  }
  if (drives.num_joints() != n || drives.motor_from_joint.rows() != n ||
      drives.motor_from_joint.cols() != n) {
    *error = drives.source + ": drives for " + std::to_string(drives.num_joints()) +
             " joints, the chain of " + chain.source + " has " + std::to_string(n);
    return false;
  }
  for (int j = 0; j < n; ++j) {
    if (drives.joints[j].joint != chain.joints[j].name) {
      *error = drives.source + ": drive " + std::to_string(j + 1) + " is for joint '" +
               drives.joints[j].joint + "', the chain's joint " + std::to_string(j + 1) + " is '" +
               chain.joints[j].name + "'";
      return false;
    }
  }
  Parameterization parameterization;
  parameterization.rotor_inertia = true;  // coupled-motor columns (joint columns: joint_terms)
  parameterization.friction = true;
  parameterization.coupling_form = drives.coupling_form;
  for (const JointDriveSpec& spec : drives.joints) {
    parameterization.joint_terms.push_back(spec.terms);
  }
  const std::vector<CoupledMotor> coupled = drives.CoupledMotors();
  for (const CoupledMotor& motor : coupled) {
    for (int j = 0; j < n; ++j) {
      const JointTerms& terms = parameterization.joint_terms[j];
      if (motor.coupling[j] != 0.0 && !(terms.rotor_inertia && terms.viscous)) {
        *error = drives.source + ": joint '" + chain.joints[j].name + "' is turned by motor " +
                 motor.name + " and needs its rotor_inertia and viscous friction columns";
        return false;
      }
    }
  }
  if (!chain.mdh_rows.empty()) {
    std::vector<JointGeometry> rows = chain.mdh_rows;
    for (int j = 0; j < n; ++j) {
      (rows[j].type == JointType::kRevolute ? rows[j].theta_rad : rows[j].r_m) +=
          drives.joints[j].position_offset;
    }
    robot->emplace(chain.name, rows, parameterization, coupled);
    std::vector<std::string> names;
    for (const JointModel& joint : chain.joints) names.push_back(joint.name);
    (*robot)->SetJointNames(names);
  } else {
    std::vector<JointModel> joints = chain.joints;
    for (int j = 0; j < n; ++j) joints[j].offset += drives.joints[j].position_offset;
    robot->emplace(chain.name, joints, parameterization, coupled);
  }
  for (int j = 0; j < n; ++j) {
    if (chain.has_inertia) (*robot)->SetLinkInertia(j, chain.links[j]);
    (*robot)->SetJointDrive(j, drives.joints[j].initial);
  }
  return true;
}

std::vector<std::string> DescribeDriveTerms(const SerialRobot& robot) {
  const int n = robot.num_joints();
  std::vector<std::string> lines(n);
  for (int j = 0; j < n; ++j) lines[j] = robot.JointName(j) + ":";
  const auto& motors = robot.coupled_motors();
  std::vector<std::string> motor_lines(motors.size());
  for (size_t k = 0; k < motors.size(); ++k) {
    std::ostringstream line;
    line << "motor " << motors[k].name << " (";
    bool first = true;
    for (int j = 0; j < n; ++j) {
      const double c = motors[k].coupling[j];
      if (c == 0.0) continue;
      line << (first ? "" : " + ");
      if (c != 1.0) line << c << "·";
      line << robot.JointName(j);
      first = false;
    }
    line << "):";
    motor_lines[k] = line.str();
  }
  for (const ParameterInfo& info : robot.parameter_info()) {
    switch (info.kind) {
      case ParameterKind::kIa:
      case ParameterKind::kFv:
      case ParameterKind::kFc:
      case ParameterKind::kFs:
      case ParameterKind::kOffset:
        lines[info.joint] += " " + info.name;
        break;
      case ParameterKind::kCoupledIa:
      case ParameterKind::kCoupledFv:
      case ParameterKind::kCoupledFc:
        motor_lines[info.joint] += " " + info.name;
        break;
      default:
        break;
    }
  }
  for (std::string& line : lines) {
    if (line.back() == ':') line += " (no drive terms)";
  }
  lines.insert(lines.end(), motor_lines.begin(), motor_lines.end());
  return lines;
}

}  // namespace dynid::models
