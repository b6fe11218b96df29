// models/dh_table — a serial chain from a Denavit–Hartenberg table in a JSON or YAML file.
//
// Format (YAML shown; JSON has the same keys):
//     name: my_arm
//     convention: modified          # modified (Khalil–Kleinfinger) | classic
//     joints:
//       - name: j1                  # optional, default "joint<j>"
//         type: revolute            # revolute | continuous | prismatic
//         alpha: 0.0                # rad
//         d: 0.0                    # m   (modified: along x_{j−1}; classic: along z_{j−1})
//         a: 0.0                    # m   (classic only: along x_j)
//         theta: 0.0                # rad, constant part (joint-zero offset of a revolute joint)
//         r: 0.0                    # m   (modified only: along z_j), constant part
//         inertial:                 # optional (all joints or none)
//           mass: 1.2               # kg
//           com: [0, 0, 0.1]        # m, in the link frame
//           inertia: [xx, xy, xz, yy, yz, zz]   # kg m², about the centre of mass, link axes
//         # or   standard: [xx, xy, xz, yy, yz, zz, mx, my, mz, m]   about the frame origin
//
// Modified DH (Khalil & Dombre (2002) §3.2): ^{j-1}T_j = Rot_x(alpha) Trans_x(d) Rot_z(theta)
// Trans_z(r), theta (r) plus q for a revolute (prismatic) joint; the robot is built from these
// rows (SerialRobot's modified-DH path) and the link frames are the DH frames.
//
// Classic DH (Denavit & Hartenberg 1955; Spong et al. (2006) §3.2): ^{j-1}T_j = Rot_z(theta)
// Trans_z(d) Trans_x(a) Rot_x(alpha), theta (d) plus q for a revolute (prismatic) joint; joint j
// turns about z_{j−1}. In the SerialRobot form the link frame of link j is the joint frame at its
// proximal joint (frame j−1 turned by the joint motion), placement ^{j-1}T_j = F_{j−1} Pre_j with
// F_j = Trans_z(d_j) Trans_x(a_j) Rot_x(alpha_j) (revolute; Trans_x(a_j) Rot_x(alpha_j) for a
// prismatic joint) and Pre_j = Rot_z(theta_j) for a prismatic joint, identity otherwise. Inertial
// values are given in the classic DH frame j and moved to that link frame.
//
// The reader is strict: unknown keys, missing keys, wrong types and non-finite numbers are errors
// naming the file, line and column (YAML) and the key.
#ifndef DYNID_MODELS_DH_TABLE_H_
#define DYNID_MODELS_DH_TABLE_H_

#include <string>

#include "dynid/models/robot_description.h"

namespace dynid::models {

bool ReadDhTable(const std::string& path, ChainDescription* chain, std::string* error);
// format: "json" or "yaml"; source names the text in messages.
bool ParseDhTable(const std::string& text, const std::string& format, const std::string& source,
                  ChainDescription* chain, std::string* error);

}  // namespace dynid::models

#endif  // DYNID_MODELS_DH_TABLE_H_
