// models/urdf_reader — a serial chain from a URDF robot description (read with Debian's urdfdom).
//
// The chain is the path of joints from root_link down to tip_link. On it:
// - revolute and continuous joints become revolute joints, prismatic joints prismatic, each with
//   its <origin xyz rpy> as placement (rotation R = R_z(yaw) R_y(pitch) R_x(roll), URDF
//   convention) and its <axis> (normalised) — the joint model of SerialRobot (placement, then the
//   motion). Joint variables are the URDF's (zero where the URDF's zero is).
// - fixed joints are folded: the child link joins the body of its parent and the fixed transform
//   enters the next joint's placement.
// - floating, planar and mimic joints are rejected (the message names the joint).
// Off the chain, every link below a chain link (a head on a torso, a gripper beyond the tip,
// sensors on fixed joints) is merged into the moving link that carries it, its joints held at
// zero (moving or not). Links above the first moving joint belong to the fixed base and are
// ignored.
//
// Inertial parameters. A URDF <inertial> gives the mass m, the centre-of-mass frame (origin c and
// rotation Q in the link frame) and the inertia tensor I_c about c in that frame's axes. Moved to
// the body frame b of the moving link (pose (R, p) of the link in b):
//     c_b = R c + p,   I_b,c = (R Q) I_c (R Q)ᵀ,
//     J_b = I_b,c + m (|c_b|² I − c_b c_bᵀ)      (parallel-axis theorem about the origin of b),
//     h_b = m c_b,
// summed over the merged links (Featherstone (2008) §2.13; Khalil & Dombre (2002) §9.3). These are
// the standard parameters of SerialRobot (serial_robot.h).
//
// Rounding. URDF files write right angles to about 11 digits (1.57079632679); rotation entries
// within 1e-10 of 0 or ±1 are snapped to those values so that right angles give exact zeros (the
// closed-form base parameters test coefficients against zero).
#ifndef DYNID_MODELS_URDF_READER_H_
#define DYNID_MODELS_URDF_READER_H_

#include <string>

#include "dynid/models/robot_description.h"

namespace dynid::models {

// Reads `path` and extracts the chain root_link → tip_link. Messages name the file and the
// element (joint or link) at fault.
bool ReadUrdfChain(const std::string& path, const std::string& root_link,
                   const std::string& tip_link, ChainDescription* chain, std::string* error);
// The same from URDF text; source names it in messages.
bool ParseUrdfChain(const std::string& xml, const std::string& source, const std::string& root_link,
                    const std::string& tip_link, ChainDescription* chain, std::string* error);

}  // namespace dynid::models

#endif  // DYNID_MODELS_URDF_READER_H_
