#include "dynid/models/dh_table.h"

#include <cmath>

#include "dynid/models/internal/description_document.h"

namespace dynid::models {
namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;
using internal::DocumentNode;

Isometry3d RotX(double angle) { return Isometry3d(Eigen::AngleAxisd(angle, Vector3d::UnitX())); }
Isometry3d RotZ(double angle) { return Isometry3d(Eigen::AngleAxisd(angle, Vector3d::UnitZ())); }
Isometry3d Trans(double x, double y, double z) {
  Isometry3d t = Isometry3d::Identity();
  t.translation() = Vector3d(x, y, z);
  return t;
}

// Link inertia from an 'inertial' entry, in the frame the file gives it in.
bool ParseInertial(const DocumentNode& node, LinkInertia* link, std::string* error) {
  if (!internal::CheckKeys(node, {"mass", "com", "inertia", "standard"}, error)) return false;
  if (const DocumentNode* standard = node.Find("standard")) {
    if (node.members.size() != 1) {
      *error = node.Where() + ": give either 'standard' or 'mass', 'com' and 'inertia'";
      return false;
    }
    std::vector<double> v;
    if (!internal::GetNumberList(*standard, 10, &v, error)) return false;
    *link = LinkInertia{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
    return true;
  }
  const DocumentNode* mass_node = internal::Require(node, "mass", error);
  if (mass_node == nullptr) return false;
  double mass = 0.0;
  if (!internal::GetNumber(*mass_node, &mass, error)) return false;
  if (mass < 0.0) {
    *error = mass_node->Where() + ": mass must be >= 0";
    return false;
  }
  std::vector<double> com(3, 0.0), inertia(6, 0.0);
  if (const DocumentNode* c = node.Find("com")) {
    if (!internal::GetNumberList(*c, 3, &com, error)) return false;
  }
  if (const DocumentNode* i = node.Find("inertia")) {
    if (!internal::GetNumberList(*i, 6, &inertia, error)) return false;
  }
  Eigen::Matrix3d tensor;
  tensor << inertia[0], inertia[1], inertia[2], inertia[1], inertia[3], inertia[4], inertia[2],
      inertia[4], inertia[5];
  *link = LinkInertia::FromCenterOfMass(mass, Vector3d(com[0], com[1], com[2]), tensor);
  return true;
}

bool ParseTable(const DocumentNode& root, ChainDescription* chain, std::string* error) {
  if (!internal::CheckKeys(root, {"name", "convention", "joints"}, error)) return false;
  chain->name = "robot";
  if (const DocumentNode* name = root.Find("name")) {
    if (!internal::GetString(*name, &chain->name, error)) return false;
  }
  const DocumentNode* convention_node = internal::Require(root, "convention", error);
  if (convention_node == nullptr) return false;
  std::string convention;
  if (!internal::GetString(*convention_node, &convention, error)) return false;
  const bool modified = convention == "modified";
  if (!modified && convention != "classic") {
    *error =
        convention_node->Where() + ": expected 'modified' or 'classic', got '" + convention + "'";
    return false;
  }
  const DocumentNode* joints = internal::Require(root, "joints", error);
  if (joints == nullptr || !internal::ExpectList(*joints, error)) return false;
  if (joints->items.empty()) {
    *error = joints->Where() + ": expected at least one joint";
    return false;
  }
  const int n = static_cast<int>(joints->items.size());
  Isometry3d previous_fixed = Isometry3d::Identity();  // F_{j−1} of the classic convention
  int with_inertia = 0;
  for (int j = 0; j < n; ++j) {
    const DocumentNode& row = joints->items[j];
    const bool ok = modified
                        ? internal::CheckKeys(
                              row, {"name", "type", "alpha", "d", "theta", "r", "inertial"}, error)
                        : internal::CheckKeys(
                              row, {"name", "type", "alpha", "d", "a", "theta", "inertial"}, error);
    if (!ok) return false;
    std::string name = "joint" + std::to_string(j + 1), type;
    if (const DocumentNode* name_node = row.Find("name")) {
      if (!internal::GetString(*name_node, &name, error)) return false;
    }
    if (chain->JointIndex(name) >= 0) {
      *error = row.Where() + ": joint name '" + name + "' used twice";
      return false;
    }
    const DocumentNode* type_node = internal::Require(row, "type", error);
    if (type_node == nullptr || !internal::GetString(*type_node, &type, error)) return false;
    JointType joint_type;
    if (type == "revolute" || type == "continuous") {
      joint_type = JointType::kRevolute;
    } else if (type == "prismatic") {
      joint_type = JointType::kPrismatic;
    } else {
      *error =
          type_node->Where() + ": expected revolute, continuous or prismatic, got '" + type + "'";
      return false;
    }
    double alpha = 0.0, d = 0.0, a = 0.0, theta = 0.0, r = 0.0;
    if (!internal::GetOptionalNumber(row, "alpha", &alpha, error) ||
        !internal::GetOptionalNumber(row, "d", &d, error) ||
        !internal::GetOptionalNumber(row, "a", &a, error) ||
        !internal::GetOptionalNumber(row, "theta", &theta, error) ||
        !internal::GetOptionalNumber(row, "r", &r, error)) {
      return false;
    }
    LinkInertia link;
    if (const DocumentNode* inertial = row.Find("inertial")) {
      if (!ParseInertial(*inertial, &link, error)) return false;
      ++with_inertia;
    }
    const bool revolute = joint_type == JointType::kRevolute;
    if (modified) {
      JointGeometry geometry;
      geometry.type = joint_type;
      geometry.alpha_rad = alpha;
      geometry.d_m = d;
      geometry.theta_rad = theta;
      geometry.r_m = r;
      chain->mdh_rows.push_back(geometry);
      chain->joints.push_back(JointModel::FromModifiedDh(geometry));
    } else {
      // Header comment: placement F_{j−1} Pre_j, motion about/along z, F_j after the motion.
      JointModel joint;
      joint.type = joint_type;
      joint.placement = previous_fixed * (revolute ? Isometry3d::Identity() : RotZ(theta));
      joint.offset = revolute ? theta : d;
      const Isometry3d fixed =
          revolute ? Trans(0, 0, d) * Trans(a, 0, 0) * RotX(alpha) : Trans(a, 0, 0) * RotX(alpha);
      previous_fixed = fixed;
      link = link.Transformed(fixed);  // from the DH frame j to the link frame
      chain->joints.push_back(joint);
    }
    chain->joints.back().name = name;
    chain->link_names.push_back("link" + std::to_string(j + 1));
    chain->links.push_back(link);
    chain->merged_links.emplace_back();
  }
  if (with_inertia != 0 && with_inertia != n) {
    *error = joints->Where() + ": 'inertial' is given for " + std::to_string(with_inertia) +
             " of " + std::to_string(n) + " joints (give it for all or none)";
    return false;
  }
  chain->has_inertia = with_inertia == n;
  return true;
}

}  // namespace

bool ParseDhTable(const std::string& text, const std::string& format, const std::string& source,
                  ChainDescription* chain, std::string* error) {
  *chain = ChainDescription();
  chain->source = source;
  DocumentNode root;
  if (!internal::ParseDocument(text, format, source, &root, error)) return false;
  return ParseTable(root, chain, error);
}

bool ReadDhTable(const std::string& path, ChainDescription* chain, std::string* error) {
  *chain = ChainDescription();
  chain->source = path;
  DocumentNode root;
  if (!internal::ReadDocumentFile(path, &root, error)) return false;
  return ParseTable(root, chain, error);
}

}  // namespace dynid::models
