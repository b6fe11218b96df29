// models/robot_description — a serial chain read from a description file (URDF or DH table) and
// the SerialRobot built from it with a drive description.
//
// A ChainDescription is what the file says about the mechanism: the joints of the chain in the
// general form of SerialRobot (fixed placement, then a motion about or along a unit axis), the
// links they move and, when the file gives them, the links' inertial parameters converted to the
// library's convention (inertia about the origin of link frame j, frame-j axes; first moments
// m·c; mass). Which drive terms (rotor inertia, friction, offsets, coupled motors) the robot
// carries comes from a DriveDescription (drive_description.h); MakeSerialRobot joins the two.
//
// Readers: ReadUrdfChain (urdf_reader.h) and ReadDhTable (dh_table.h); ReadChainDescription
// dispatches on the file extension. Chain selection "ROOT:TIP" (ParseChainSpec) applies to URDF.
#ifndef DYNID_MODELS_ROBOT_DESCRIPTION_H_
#define DYNID_MODELS_ROBOT_DESCRIPTION_H_

#include <optional>
#include <string>
#include <vector>

#include "dynid/models/serial_robot.h"

namespace dynid::models {

struct DriveDescription;

struct ChainDescription {
  std::string name;    // robot name from the file
  std::string source;  // the file (or label) it was read from, for messages
  // The n joints of the chain, root to tip, each with its name. When the file is a modified-DH
  // table, mdh_rows holds the same joints as rows and MakeSerialRobot builds the robot from them
  // (the dedicated modified-DH path of SerialRobot).
  std::vector<JointModel> joints;
  std::vector<JointGeometry> mdh_rows;
  std::vector<std::string> link_names;  // n: the link each joint moves (frame j)
  // n inertial parameter sets, link frame j (all zero when has_inertia is false). For a URDF
  // chain they include every link merged into link j (fixed joints, branches, beyond the tip).
  std::vector<LinkInertia> links;
  bool has_inertia = false;
  // Per joint, the names of the other links merged into link j (empty when none).
  std::vector<std::vector<std::string>> merged_links;

  int num_joints() const { return static_cast<int>(joints.size()); }
  int JointIndex(const std::string& joint_name) const;  // −1 if absent
};

// "ROOT:TIP" → root and tip link names (both non-empty).
bool ParseChainSpec(const std::string& spec, std::string* root_link, std::string* tip_link,
                    std::string* error);

// Reads a URDF (.urdf, .xml; needs root_link and tip_link) or a DH table (.json, .yaml, .yml; the
// chain is the whole table and root_link/tip_link must be empty).
bool ReadChainDescription(const std::string& path, const std::string& root_link,
                          const std::string& tip_link, ChainDescription* chain, std::string* error);

// The robot of the chain with the drive terms and coupled motors of `drives` (which must have
// been read or made for this chain: DriveDescription::joints in chain order). Standard
// parameters: the chain's inertial parameters and the drives' initial values. The joint-zero
// offsets of the drives (position_offset) are added to the joints' offsets. False with a message
// when the description and the drives do not fit together.
bool MakeSerialRobot(const ChainDescription& chain, const DriveDescription& drives,
                     std::optional<SerialRobot>* robot, std::string* error);

// One line per joint and coupled motor naming its drive columns, e.g.
//     "joint_1: ia fv fc off" ... "motor m6 (joint_5 + joint_6): iam6 fvm6 fcm6"
// (what a report states as "the terms used").
std::vector<std::string> DescribeDriveTerms(const SerialRobot& robot);

}  // namespace dynid::models

#endif  // DYNID_MODELS_ROBOT_DESCRIPTION_H_
