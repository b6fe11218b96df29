// models::SerialRobot — rigid serial chains of revolute and prismatic joints, with rotor inertia,
// friction, torque offsets and motor coupling: inverse dynamics (recursive Newton–Euler), mass
// matrix (composite rigid bodies), forward dynamics, energies and the IDIM regressor
// phi(q, q', q'') (Brunot et al. (2018) §2, eqs. 3–4; Brunot et al. (2017) §2).
//
// Frames. Frame j is attached to link j (frame 0 to the fixed base). A joint is a fixed placement
// followed by a motion about or along a unit joint axis u_j (the joint model of Featherstone
// (2008) §4.2 and of Pinocchio: X_j = X_motion(q_j) X_placement):
//     ^{j-1}T_j(q_j) = P_j · Rot(u_j, s_j)      (revolute; continuous joints are revolute)
//     ^{j-1}T_j(q_j) = P_j · Trans(u_j s_j)     (prismatic)
// with s_j = q_j + o_j (o_j: joint-zero offset), P_j a constant rigid transform (URDF origin
// xyz/rpy) and u_j expressed in frame j (it is also fixed in frame j−1 through P_j). The
// modified Denavit–Hartenberg convention (Khalil–Kleinfinger; Khalil & Dombre (2002) §3.2) is one
// way of writing it:
//     ^{j-1}T_j = Rot_x(alpha_j) Trans_x(d_j) Rot_z(theta_j) Trans_z(r_j),
// with theta_j = theta_rad + q_j for a revolute joint and r_j = r_m + q_j for a prismatic one
// (theta_rad / r_m hold the joint-zero offsets), i.e. u_j = z_j. Robots built from modified-DH rows
// keep a dedicated kinematic path (the same arithmetic as before the generalisation). Gravity acts
// along −z0 with g = 9.81 m/s² (gravity_mps2()).
//
// Standard parameters (the vector theta_std of the IDIM tau = phi theta_std), per joint j = 1..n
// in this order:
//     xxj xyj xzj yyj yzj zzj   inertia tensor of link j about the origin of frame j, frame-j
//                               axes [kg m²]
//     mxj myj mzj               first moments m·c of link j in frame j [kg m]
//     mj                        mass [kg] (named "m1", "m2", …)
//     iaj                       rotor inertia reflected to the joint [kg m² or kg]  (if enabled)
//     fvj                       viscous friction [N m s/rad]: tau_f = fv q'          (if enabled)
//     fcj                       Coulomb friction [N m]: tau_f = fc sign(q')          (if enabled)
//     fsj                       Stribeck excess [N m], fixed shape (below)           (if enabled)
//     offj                      constant torque offset [N m]                        (if enabled)
// followed, for every coupled motor k (named e.g. "m6"), by ia<name> fv<name> fc<name>
// (iam6 fvm6 fcm6, present when rotor inertia / friction are enabled). Which drive terms a joint
// carries is set for all joints by the flags of Parameterization or per joint by its
// joint_terms.
//
// Stribeck term. With the Stribeck velocity v_s > 0 given (JointTerms::stribeck_velocity), the
// friction law fc sign(q') + fs exp(−(q'/v_s)²) sign(q') (Armstrong-Hélouvry et al. 1994, the
// static friction fc + fs decaying to fc) is linear in fs: the regressor column of fsj is
// exp(−(q'/v_s)²) sign(q'). The shape v_s is fixed, not identified.
//
// Coupled motor (TX40 wrist, Brunot et al. (2018) §2). A motor whose angle is N·cᵀq (c = coupling
// vector, e.g. e5 + e6) adds, in the physical form,
//     tau += c (Iam cᵀq'' + fvm cᵀq' + fcm sign(cᵀq')),
// and in Gautier's published form (the form of Brunot et al. (2018) Table 2) only the off-diagonal
// part of c cᵀ multiplies the inertia and viscous terms,
//     tau += (c cᵀ − diag(c∘c)) (Iam q'' + fvm q') + c fcm sign(cᵀq'),
// i.e. for c = e5 + e6: row 5 gets Iam q6'' + fvm q6', row 6 gets Iam q5'' + fvm q5', both rows
// fcm sign(q5' + q6'). Both forms span the same space; in the Gautier form ia5, ia6, fv5, fv6 absorb
// Iam6 and fvm6 (ia5' = ia5 + Iam6, …).
//
// Two independent computations of the dynamics are provided and cross-checked in the tests:
// InverseDynamics (classical recursive Newton–Euler with the forward/backward recursions) and
// Regressor (the same equations written linearly in the standard parameters: each link's
// Newton–Euler wrench is linear in its 10 inertial parameters and is projected on every joint
// axis i ≤ j; Khalil & Dombre ch. 12). MassMatrix uses the composite-rigid-body algorithm
// (Featherstone (2008) §6.2). A joint's torque is the projection of the link wrench on its axis:
// tau_j = u_j·n_j (revolute) or u_j·f_j (prismatic).
//
// Model and data (the split of Pinocchio's Model/Data). A SerialRobot is the constant description
// of the chain and its parameters; its algorithms are const and keep no state between calls, so
// one robot can be shared by any number of threads. The per-sample link kinematics and scratch
// space live in a SerialRobotData, sized from the robot and passed explicitly:
//     SerialRobotData data(robot);                     // once per thread or loop (allocates)
//     for (...) robot.InverseDynamics(q, qd, qdd, &data, &tau);  // no allocation per sample
// Every per-sample algorithm takes the workspace as the argument before its outputs. A workspace
// is used by one thread at a time and holds nothing a caller needs between calls. The overloads
// without a workspace construct a local one (allocating on every call) and give bit-identical
// results; they suit one-off calls, loops should pass a workspace.
#ifndef DYNID_MODELS_SERIAL_ROBOT_H_
#define DYNID_MODELS_SERIAL_ROBOT_H_

#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Geometry>

namespace dynid::models {

enum class JointType { kRevolute, kPrismatic };

// Modified-DH row of one joint (see the header comment). Angles in rad, lengths in m.
struct JointGeometry {
  JointType type = JointType::kRevolute;
  double alpha_rad = 0.0;
  double d_m = 0.0;
  double theta_rad = 0.0;  // constant part of theta_j (joint-zero offset for revolute joints)
  double r_m = 0.0;        // constant part of r_j (joint-zero offset for prismatic joints)
};

// One joint in the general form (header comment): ^{j-1}T_j = placement · motion(axis, q + offset).
struct JointModel {
  std::string name;  // e.g. the URDF joint name; empty: "joint<j>" is used in messages
  JointType type = JointType::kRevolute;
  // P_j: pose of the joint frame (= frame j at s_j = 0) in frame j−1.
  Eigen::Isometry3d placement = Eigen::Isometry3d::Identity();
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // u_j, unit, frame j
  double offset = 0.0;  // o_j [rad or m]: the motion is by s_j = q_j + o_j

  // The same joint as a modified-DH row: placement Rot_x(alpha) Trans_x(d) Rot_z(theta_rad)
  // Trans_z(r_m) for a revolute joint (offset 0), Rot_x(alpha) Trans_x(d) Rot_z(theta_rad) for a
  // prismatic one (offset r_m); axis z.
  static JointModel FromModifiedDh(const JointGeometry& row);
};

// The 10 standard inertial parameters of one link, about the origin of its frame, frame axes.
struct LinkInertia {
  double xx = 0, xy = 0, xz = 0, yy = 0, yz = 0, zz = 0;  // kg m²
  double mx = 0, my = 0, mz = 0;                          // kg m
  double m = 0;                                           // kg

  // Link inertia from its mass, centre of mass c (frame j, m) and inertia tensor about the
  // centre of mass (frame-j axes), by the parallel-axis theorem.
  static LinkInertia FromCenterOfMass(double mass_kg, const Eigen::Vector3d& com_m,
                                      const Eigen::Matrix3d& inertia_at_com);
  Eigen::Matrix3d InertiaTensor() const;  // [[xx xy xz] [xy yy yz] [xz yz zz]]
  // The same body in frame B, given the pose of this frame in B (rotation R, origin P): the
  // parallel-axis theorem with a first moment, h' = R h,
  //     J_B = R J Rᵀ + 2(P·h')I − P h'ᵀ − h' Pᵀ + m(|P|²I − P Pᵀ),   h_B = h' + m P.
  LinkInertia Transformed(const Eigen::Isometry3d& pose_in_b) const;
  // Two bodies in the same frame as one (all ten parameters add).
  LinkInertia& operator+=(const LinkInertia& other);
  Eigen::Vector3d FirstMoment() const { return Eigen::Vector3d(mx, my, mz); }
  // From / to ten values in the standard-parameter order xx xy xz yy yz zz mx my mz m.
  static LinkInertia FromValues(const double* values);
  void ToValues(double* values) const;
  // 4×4 pseudo-inertia [[½tr(J)I − J, h], [hᵀ, m]]; positive definite ⇔ physically consistent
  // (a positive mass distribution; Wensing et al. 2017).
  Eigen::Matrix4d PseudoInertia() const;
  // 6×6 spatial inertia about the frame origin [[J, [h]×], [[h]×ᵀ, m I]] (angular first).
  Eigen::Matrix<double, 6, 6> SpatialInertia() const;
};

// Actuator-side parameters of one joint.
struct JointDrive {
  double ia = 0.0;      // rotor inertia reflected to the joint
  double fv = 0.0;      // viscous friction
  double fc = 0.0;      // Coulomb friction
  double fs = 0.0;      // Stribeck excess (fixed shape, header comment)
  double offset = 0.0;  // constant torque offset
};

// The drive columns of one joint (Parameterization::joint_terms).
struct JointTerms {
  bool rotor_inertia = true;
  bool viscous = true;
  bool coulomb = true;
  bool offset = false;
  // v_s [rad/s or m/s] of the fixed-shape Stribeck column fs; 0 = no Stribeck column.
  double stribeck_velocity = 0.0;
};

enum class CouplingForm { kPhysical, kGautier };

// A motor driving a combination cᵀq of the joints (see the header comment).
struct CoupledMotor {
  std::string name;          // parameter names become ia<name>, fv<name>, fc<name>
  Eigen::VectorXd coupling;  // c, one entry per joint
  double ia = 0.0, fv = 0.0, fc = 0.0;
};

// Which actuator columns the standard parameter vector carries.
struct Parameterization {
  bool rotor_inertia = true;  // ia of every joint, and ia<name> of every coupled motor
  bool friction = true;       // fv and fc of every joint, fv<name> fc<name> of coupled motors
  bool torque_offset = false;
  CouplingForm coupling_form = CouplingForm::kGautier;
  // Per-joint drive columns: empty, or one entry per joint, which then replaces rotor_inertia,
  // friction and torque_offset for the joints' own columns (the coupled-motor columns still
  // follow rotor_inertia and friction).
  std::vector<JointTerms> joint_terms;

  // The columns of joint j under these settings.
  JointTerms Terms(int joint) const;
};

// What one standard parameter is.
enum class ParameterKind {
  kXX, kXY, kXZ, kYY, kYZ, kZZ, kMX, kMY, kMZ, kM,  // inertial (link = joint index)
  kIa, kFv, kFc, kFs, kOffset,                       // drive of joint `joint`
  kCoupledIa, kCoupledFv, kCoupledFc                 // coupled motor `joint` (motor index)
};
struct ParameterInfo {
  ParameterKind kind;
  int joint;  // 0-based joint (or coupled-motor) index
  std::string name;
};

class SerialRobotData;

class SerialRobot {
 public:
  // A chain with all standard parameters zero. CHECK-fails on an empty chain, a coupling
  // vector or joint_terms of the wrong size, a joint axis that is not a unit vector or a
  // negative Stribeck velocity.
  SerialRobot(std::string name, std::vector<JointGeometry> joints,
              Parameterization parameterization = Parameterization(),
              std::vector<CoupledMotor> coupled_motors = {});
  // The same from joints in the general form.
  SerialRobot(std::string name, std::vector<JointModel> joints,
              Parameterization parameterization = Parameterization(),
              std::vector<CoupledMotor> coupled_motors = {});

  const std::string& name() const { return name_; }
  int num_joints() const { return n_; }
  // The joints in the general form (for a modified-DH robot, converted by FromModifiedDh).
  const std::vector<JointModel>& joints() const { return joints_; }
  // The modified-DH rows when the robot was built from them (is_modified_dh()), else empty.
  bool is_modified_dh() const { return !mdh_joints_.empty(); }
  const std::vector<JointGeometry>& mdh_joints() const { return mdh_joints_; }
  // Joint name for messages: joints()[j].name, or "joint<j+1>" when empty.
  std::string JointName(int joint) const;
  // Names the joints (one per joint, CHECK), e.g. after building from modified-DH rows.
  void SetJointNames(const std::vector<std::string>& names);
  const Parameterization& parameterization() const { return parameterization_; }
  const std::vector<CoupledMotor>& coupled_motors() const { return coupled_; }
  double gravity_mps2() const { return gravity_; }
  void set_gravity_mps2(double g) { gravity_ = g; }

  // ---- Standard parameters (layout in the header comment) ----
  int num_parameters() const { return static_cast<int>(info_.size()); }
  const std::vector<std::string>& parameter_names() const { return names_; }
  const std::vector<ParameterInfo>& parameter_info() const { return info_; }
  int ParameterIndex(const std::string& name) const;  // −1 if absent
  // Index of the first (xx) inertial parameter of link j, of ia/fv/fc/fs/off of joint j (−1 when
  // the column is not part of the parameterisation).
  int InertialIndex(int joint) const { return inertial_index_[joint]; }
  int DriveIndex(int joint, ParameterKind kind) const;

  const Eigen::VectorXd& standard_parameters() const { return theta_; }
  void SetStandardParameters(const Eigen::VectorXd& theta);
  void SetLinkInertia(int joint, const LinkInertia& link);
  LinkInertia GetLinkInertia(int joint) const;
  // Sets the drive terms that the parameterisation carries (others must be zero: CHECK).
  void SetJointDrive(int joint, const JointDrive& drive);
  JointDrive GetJointDrive(int joint) const;
  void SetCoupledMotor(int motor, double ia, double fv, double fc);

  // ---- Kinematics ----
  // ^{j-1}T_j for joint j (0-based) at joint position qj.
  Eigen::Isometry3d LinkTransform(int joint, double qj) const;
  // ^0T_j for every j = 1..n (entry j−1).
  std::vector<Eigen::Isometry3d> ForwardKinematics(const Eigen::VectorXd& q) const;

  // ---- Dynamics with the stored standard parameters ----
  // q [rad or m], qd [rad/s or m/s], qdd [rad/s² or m/s²] and the torques tau [N m or N] have
  // num_joints() entries (CHECK); outputs are resized. `data` is a workspace for this robot
  // (SerialRobotData(robot), CHECK on its sizes); the overloads without it use a local one.

  // tau = M(q) q'' + N(q, q'): recursive Newton–Euler plus drive and coupling terms.
  void InverseDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                       const Eigen::VectorXd& qdd, SerialRobotData* data,
                       Eigen::VectorXd* tau) const;
  void InverseDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                       const Eigen::VectorXd& qdd, Eigen::VectorXd* tau) const;
  // N(q, q') = InverseDynamics(q, q', 0): Coriolis, centrifugal, gravity, friction, offsets.
  void NonlinearEffects(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, SerialRobotData* data,
                        Eigen::VectorXd* n_terms) const;
  void NonlinearEffects(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                        Eigen::VectorXd* n_terms) const;
  // Gravity torques only (q' = q'' = 0, no friction or offset).
  void GravityTorques(const Eigen::VectorXd& q, SerialRobotData* data,
                      Eigen::VectorXd* tau_g) const;
  void GravityTorques(const Eigen::VectorXd& q, Eigen::VectorXd* tau_g) const;
  // n × n joint-space inertia [kg m², kg m or kg] (links by composite rigid bodies + rotors +
  // coupled motors).
  void MassMatrix(const Eigen::VectorXd& q, SerialRobotData* data, Eigen::MatrixXd* mass) const;
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* mass) const;
  // Direct dynamic model q'' = M(q)^{-1} (tau − N(q, q'))  (Brunot et al. (2018) eq. 4): one
  // kinematic pass serves the Newton–Euler bias N and the composite-rigid-body M (the numbers
  // of NonlinearEffects and MassMatrix, bit for bit), then an in-place Cholesky of M with the
  // operations of Eigen's LLT (the same accelerations, bit for bit, with Eigen's default SSE2
  // packets and n ≤ 8). No allocation with a workspace. CHECK-fails when M is not positive
  // definite. qdd must not alias q, qd or tau.
  void ForwardDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                       const Eigen::VectorXd& tau, SerialRobotData* data,
                       Eigen::VectorXd* qdd) const;
  void ForwardDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                       const Eigen::VectorXd& tau, Eigen::VectorXd* qdd) const;
  // Kinetic energy [J] (links from their twists, rotors and coupled motors) and potential energy
  // [J] (gravity, zero at z0 = 0), computed from the kinematics, independent of MassMatrix.
  double KineticEnergy(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                       SerialRobotData* data) const;
  double KineticEnergy(const Eigen::VectorXd& q, const Eigen::VectorXd& qd) const;
  double PotentialEnergy(const Eigen::VectorXd& q, SerialRobotData* data) const;
  double PotentialEnergy(const Eigen::VectorXd& q) const;

  // ---- IDIM regressor ----
  // phi (n × num_parameters()) with tau = phi theta_std for every theta_std.
  void Regressor(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                 SerialRobotData* data, Eigen::MatrixXd* phi) const;
  void Regressor(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                 Eigen::MatrixXd* phi) const;
  // Many samples at once. q, qd, qdd are Ns × n (one sample per row). X is resized to
  // (n·Ns) × num_parameters() and filled JOINT-MAJOR: row i·Ns + k holds joint i of sample k
  // (all samples of joint 1, then all samples of joint 2, …), so that with tau stacked the same
  // way (tau_stacked.segment(i·Ns, Ns) = column i of the Ns × n torque matrix) the IDIM reads
  // tau_stacked = X theta_std (Brunot et al. (2017) eq. 4). Per-joint filtering/decimation acts on
  // contiguous row blocks. With a workspace, repeated calls allocate nothing but X.
  void StackedRegressor(const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                        const Eigen::MatrixXd& qdd, SerialRobotData* data,
                        Eigen::MatrixXd* X) const;
  void StackedRegressor(const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                        const Eigen::MatrixXd& qdd, Eigen::MatrixXd* X) const;

 private:
  // CHECK-fails unless data is non-null and sized for this robot.
  void CheckData(const SerialRobotData* data) const;
  // ^{j-1}R_j and ^{j-1}P_j of joint j at q_j.
  void JointPose(int joint, double qj, Eigen::Matrix3d* rot, Eigen::Vector3d* pos) const;
  // Forward Newton–Euler recursion: link rotations, positions, velocities and accelerations.
  void ComputeKinematics(const double* q, const double* qd, const double* qdd,
                         SerialRobotData* data) const;
  // Writes phi into out: element (i, c) at out[i * row_stride + c * col_stride]; entries that
  // are structurally zero must already be zero.
  void FillRegressor(const double* q, const double* qd, const double* qdd, SerialRobotData* data,
                     double* out, Eigen::Index row_stride, Eigen::Index col_stride) const;
  void AddDriveTerms(const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd, bool with_friction,
                     Eigen::VectorXd* tau) const;
  void RecursiveNewtonEuler(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                            const Eigen::VectorXd& qdd, SerialRobotData* data,
                            Eigen::VectorXd* tau) const;
  // Backward Newton–Euler recursion over the kinematics in `kin` (ComputeKinematics): the joint
  // torques of the links alone, tau[0..n).
  void BackwardNewtonEuler(const SerialRobotData& kin, double* tau) const;
  // Composite-rigid-body mass matrix from the link rotations and positions in `data` (as
  // JointPose or ComputeKinematics leave them), rotors and coupled motors included.
  void CompositeRigidBodies(SerialRobotData* data, Eigen::MatrixXd* mass) const;
  // m: n × n column-major symmetric positive definite (lower triangle read), overwritten by its
  // Cholesky factor L; x: b on entry, M⁻¹ b on exit. CHECK-fails on a pivot ≤ 0.
  void CholeskySolveInPlace(double* m, double* x) const;

  // Shared by both constructors once joints_ (and mdh_joints_) are set.
  void Initialise();

  friend SerialRobot ConvertCouplingForm(const SerialRobot& robot, CouplingForm form);

  std::string name_;
  int n_ = 0;
  std::vector<JointModel> joints_;
  std::vector<JointGeometry> mdh_joints_;
  // u_j is exactly +z: the kinematics and the regressor use the z-specialised arithmetic.
  std::vector<char> z_axis_;
  Parameterization parameterization_;
  std::vector<CoupledMotor> coupled_;
  double gravity_ = 9.81;
  // cos/sin of alpha_j, and of theta_j for prismatic joints (constant), with |x| < 1e-14
  // snapped to 0 so that right angles give exact zeros.
  std::vector<double> cos_alpha_, sin_alpha_, cos_theta0_, sin_theta0_;

  std::vector<ParameterInfo> info_;
  std::vector<std::string> names_;
  std::vector<int> inertial_index_;                  // per joint
  std::vector<int> ia_index_, fv_index_, fc_index_, fs_index_, offset_index_;  // −1 if absent
  std::vector<double> stribeck_velocity_;                                      // per joint
  std::vector<int> coupled_ia_index_, coupled_fv_index_, coupled_fc_index_;  // per motor
  Eigen::VectorXd theta_;
};

// Workspace of the SerialRobot algorithms (Pinocchio's Data): per-sample link kinematics
// (rotations, positions, angular velocities and accelerations, origin accelerations), joint-axis
// projections of the regressor, composite inertias and mass matrix, and the sample buffer of
// StackedRegressor. Constructing one allocates; the algorithms then reuse its storage. It serves
// any robot with the same numbers of joints and standard parameters as the one it was sized
// from. Not thread-safe: give each thread its own. Its contents are scratch, overwritten by
// every call.
class SerialRobotData {
 public:
  explicit SerialRobotData(const SerialRobot& robot);

  int num_joints() const { return n_; }
  int num_parameters() const { return p_; }

 private:
  friend class SerialRobot;

  int n_ = 0;
  int p_ = 0;
  // Kinematics of the last sample, link j in frame j.
  std::vector<Eigen::Matrix3d> rotation_;                   // ^{j-1}R_j
  std::vector<Eigen::Vector3d> position_;                   // ^{j-1}P_j
  std::vector<Eigen::Vector3d> omega_, omega_dot_, accel_;  // accel includes −gravity
  std::vector<Eigen::Vector3d> proj_a_, proj_b_;            // joint-axis projections (Regressor)
  std::vector<Eigen::Isometry3d> pose_;                     // ^0T_j (PotentialEnergy)
  // Composite rigid bodies (MassMatrix): mass, first moment, inertia of links j..n about O_j.
  std::vector<double> composite_mass_;
  std::vector<Eigen::Vector3d> composite_moment_;
  std::vector<Eigen::Matrix3d> composite_inertia_;
  Eigen::VectorXd zero_;            // n zeros (q' = q'' = 0)
  Eigen::VectorXd bias_;            // N(q, q') (ForwardDynamics)
  Eigen::MatrixXd mass_;            // M(q), then its Cholesky factor (ForwardDynamics)
  // StackedRegressor: structural non-zeros of phi, one sample's state, block buffer.
  std::vector<char> stacked_nonzero_;
  std::vector<double> stacked_state_;
  std::vector<double> stacked_buffer_;
};

// The same robot with its coupled motors in the other form and the parameters converted so that
// the torques are identical: physical → Gautier adds c_k² Iam to ia_k and c_k² fvm to fv_k
// (c(cᵀx) = (c cᵀ − diag(c∘c)) x + diag(c∘c) x); Gautier → physical subtracts them. Needs rotor
// inertia and friction columns (CHECK).
SerialRobot ConvertCouplingForm(const SerialRobot& robot, CouplingForm form);

// Sign with sign(0) = 0 (Coulomb friction at rest contributes nothing).
inline double Sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0); }

// Regressor column of the fixed-shape Stribeck term: exp(−(q'/v_s)²) sign(q') (header comment).
inline double StribeckShape(double qd, double stribeck_velocity) {
  const double ratio = qd / stribeck_velocity;
  return std::exp(-ratio * ratio) * Sign(qd);
}

}  // namespace dynid::models

#endif  // DYNID_MODELS_SERIAL_ROBOT_H_
