#include "dynid/models/urdf_reader.h"

#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include <console_bridge/console.h>
#include <glog/logging.h>
#include <urdf_model/model.h>
#include <urdf_parser/urdf_parser.h>

namespace dynid::models {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;

// urdfdom reports why a document is rejected through console_bridge only; this handler keeps
// those messages for the caller's error. console_bridge's handler is process-wide, hence the
// lock around the parse.
class CollectErrors : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char* /*filename*/,
           int /*line*/) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) {
      messages_ += (messages_.empty() ? "" : "; ") + text;
    }
  }
  const std::string& messages() const { return messages_; }

 private:
  std::string messages_;
};

std::mutex& ParserMutex() {
  static std::mutex mutex;
  return mutex;
}

double SnapUnit(double x) {
  if (std::abs(x) < 1e-10) return 0.0;
  if (std::abs(x - 1.0) < 1e-10) return 1.0;
  if (std::abs(x + 1.0) < 1e-10) return -1.0;
  return x;
}

Matrix3d RotationOf(const urdf::Rotation& rotation) {
  double x, y, z, w;
  rotation.getQuaternion(x, y, z, w);
  Matrix3d r = Eigen::Quaterniond(w, x, y, z).normalized().toRotationMatrix();
  return r.unaryExpr([](double v) { return SnapUnit(v); });
}

Eigen::Isometry3d PoseOf(const urdf::Pose& pose) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  t.linear() = RotationOf(pose.rotation);
  t.translation() = Vector3d(pose.position.x, pose.position.y, pose.position.z);
  return t;
}

const char* TypeName(int type) {
  switch (type) {
    case urdf::Joint::REVOLUTE:
      return "revolute";
    case urdf::Joint::CONTINUOUS:
      return "continuous";
    case urdf::Joint::PRISMATIC:
      return "prismatic";
    case urdf::Joint::FLOATING:
      return "floating";
    case urdf::Joint::PLANAR:
      return "planar";
    case urdf::Joint::FIXED:
      return "fixed";
    default:
      return "unknown";
  }
}

// The link's <inertial> in the body frame, given the link's pose in that frame (header comment).
bool InertialInBody(const urdf::Link& link, const Eigen::Isometry3d& link_in_body,
                    const std::string& source, LinkInertia* out, std::string* error) {
  const urdf::Inertial& in = *link.inertial;
  const double values[7] = {in.mass, in.ixx, in.ixy, in.ixz, in.iyy, in.iyz, in.izz};
  for (double v : values) {
    if (!std::isfinite(v)) {
      *error = source + ": link '" + link.name + "': <inertial> has a non-finite value";
      return false;
    }
  }
  if (in.mass < 0.0) {
    *error = source + ": link '" + link.name + "': negative <mass> " + std::to_string(in.mass);
    return false;
  }
  Matrix3d inertia_com;
  inertia_com << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  const Eigen::Isometry3d com_frame = link_in_body * PoseOf(in.origin);
  const Matrix3d& r = com_frame.linear();
  *out = LinkInertia::FromCenterOfMass(in.mass, com_frame.translation(),
                                       r * inertia_com * r.transpose());
  return true;
}

}  // namespace

bool ParseUrdfChain(const std::string& xml, const std::string& source, const std::string& root_link,
                    const std::string& tip_link, ChainDescription* chain, std::string* error) {
  *chain = ChainDescription();
  chain->source = source;
  urdf::ModelInterfaceSharedPtr model;
  {
    std::lock_guard<std::mutex> lock(ParserMutex());
    CollectErrors collect;
    console_bridge::OutputHandler* previous = console_bridge::getOutputHandler();
    console_bridge::useOutputHandler(&collect);
    model = urdf::parseURDF(xml);
    console_bridge::useOutputHandler(previous);
    if (model == nullptr) {
      *error = source + ": not a valid URDF" +
               (collect.messages().empty() ? std::string() : ": " + collect.messages());
      return false;
    }
  }
  chain->name = model->getName();
  if (root_link.empty() || tip_link.empty()) {
    *error = source + ": the chain needs a root link and a tip link (ROOT:TIP)";
    return false;
  }
  for (const std::string* name : {&root_link, &tip_link}) {
    if (model->getLink(*name) == nullptr) {
      *error = source + ": link '" + *name + "' (" + (name == &root_link ? "root" : "tip") +
               " of the chain) is not in the URDF";
      return false;
    }
  }
  // The path tip → root through the parent joints.
  std::vector<urdf::JointConstSharedPtr> path;
  for (urdf::LinkConstSharedPtr link = model->getLink(tip_link); link->name != root_link;) {
    if (link->parent_joint == nullptr) {
      *error = source + ": link '" + tip_link + "' is not below link '" + root_link +
               "' (no chain from root to tip)";
      return false;
    }
    path.push_back(link->parent_joint);
    link = model->getLink(link->parent_joint->parent_link_name);
  }
  std::map<std::string, int> moving_index;  // joint name → chain index
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const urdf::Joint& joint = **it;
    switch (joint.type) {
      case urdf::Joint::FIXED:
        continue;
      case urdf::Joint::REVOLUTE:
      case urdf::Joint::CONTINUOUS:
      case urdf::Joint::PRISMATIC:
        break;
      default:
        *error = source + ": joint '" + joint.name + "' on the chain is " + TypeName(joint.type) +
                 "; only revolute, continuous, prismatic and fixed joints are supported";
        return false;
    }
    if (joint.mimic != nullptr) {
      *error = source + ": joint '" + joint.name + "' on the chain mimics joint '" +
               joint.mimic->joint_name + "'; mimic joints are not supported";
      return false;
    }
    const Vector3d axis(joint.axis.x, joint.axis.y, joint.axis.z);
    if (!(axis.norm() > 1e-12) || !axis.allFinite()) {
      *error = source + ": joint '" + joint.name + "': <axis> must be a non-zero vector";
      return false;
    }
    JointModel model_joint;
    model_joint.name = joint.name;
    model_joint.type =
        joint.type == urdf::Joint::PRISMATIC ? JointType::kPrismatic : JointType::kRevolute;
    model_joint.axis = (axis / axis.norm()).unaryExpr([](double v) { return SnapUnit(v); });
    model_joint.axis.normalize();
    moving_index[joint.name] = chain->num_joints();
    chain->joints.push_back(model_joint);
    chain->link_names.push_back(joint.child_link_name);
  }
  const int n = chain->num_joints();
  if (n == 0) {
    *error = source + ": no revolute, continuous or prismatic joint between link '" + root_link +
             "' and link '" + tip_link + "'";
    return false;
  }
  chain->links.assign(n, LinkInertia());
  chain->merged_links.assign(n, {});
  std::vector<bool> placed(n, false);

  // Depth-first from the root: every link gets the body it rides on (−1: the fixed base) and its
  // pose in that body's frame; off-chain joints are held at zero (their motion is the identity).
  struct Item {
    urdf::LinkConstSharedPtr link;
    int body;
    Eigen::Isometry3d pose;
  };
  std::vector<Item> stack = {{model->getLink(root_link), -1, Eigen::Isometry3d::Identity()}};
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    if (item.body >= 0 && item.link->inertial != nullptr) {
      LinkInertia part;
      if (!InertialInBody(*item.link, item.pose, source, &part, error)) return false;
      chain->links[item.body] += part;
      chain->has_inertia = true;
    }
    if (item.body >= 0 && item.link->name != chain->link_names[item.body]) {
      chain->merged_links[item.body].push_back(item.link->name);
    }
    for (const urdf::JointSharedPtr& joint : item.link->child_joints) {
      const urdf::LinkConstSharedPtr child = model->getLink(joint->child_link_name);
      const Eigen::Isometry3d origin = item.pose * PoseOf(joint->parent_to_joint_origin_transform);
      const auto moving = moving_index.find(joint->name);
      if (moving != moving_index.end()) {
        const int j = moving->second;
        chain->joints[j].placement = origin;
        placed[j] = true;
        stack.push_back({child, j, Eigen::Isometry3d::Identity()});
      } else {
        stack.push_back({child, item.body, origin});
      }
    }
  }
  for (int j = 0; j < n; ++j) {
    CHECK(placed[j]) << "chain joint " << chain->joints[j].name << " not reached from the root";
  }
  return true;
}

bool ReadUrdfChain(const std::string& path, const std::string& root_link,
                   const std::string& tip_link, ChainDescription* chain, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open file";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseUrdfChain(text.str(), path, root_link, tip_link, chain, error);
}

}  // namespace dynid::models
