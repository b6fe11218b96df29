#include "dynid/models/serial_robot.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include <Eigen/Cholesky>
#include <glog/logging.h>

namespace dynid::models {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;

// Right angles must give exact zeros: the closed-form base parameters test coefficients
// against zero, and cos(pi/2) = 6e-17 would otherwise create spurious groupings.
double Snap(double x) { return std::abs(x) < 1e-14 ? 0.0 : x; }

Matrix3d Skew(const Vector3d& v) {
  Matrix3d s;
  s << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return s;
}

// ^{j-1}R_j for Rot_x(alpha) Rot_z(theta).
inline void MdhRotation(double ca, double sa, double ct, double st, Matrix3d* r) {
  *r << ct, -st, 0.0, ca * st, ca * ct, -sa, sa * st, sa * ct, ca;
}

// Σ_k a[k·stride_a] b[k] over k < size, summed as Eigen 3.4's linear vectorised reduction does
// with packets of two doubles: pairs (0, 1) and (2, 3) in two packet accumulators, further
// blocks of four added to them, a last pair to the first, the two lanes added, then the odd
// last term.
double PacketPairDot(const double* a, const double* b, int size) {
  if (size < 2) return a[0] * b[0];
  const int aligned = size / 2 * 2, aligned2 = size / 4 * 4;
  double r0a = a[0] * b[0], r0b = a[1] * b[1];
  if (aligned > 2) {
    double r1a = a[2] * b[2], r1b = a[3] * b[3];
    for (int k = 4; k < aligned2; k += 4) {
      r0a = r0a + a[k] * b[k];
      r0b = r0b + a[k + 1] * b[k + 1];
      r1a = r1a + a[k + 2] * b[k + 2];
      r1b = r1b + a[k + 3] * b[k + 3];
    }
    r0a = r0a + r1a;
    r0b = r0b + r1b;
    if (aligned > aligned2) {
      r0a = r0a + a[aligned2] * b[aligned2];
      r0b = r0b + a[aligned2 + 1] * b[aligned2 + 1];
    }
  }
  double sum = r0a + r0b;
  for (int k = aligned; k < size; ++k) sum = sum + a[k] * b[k];
  return sum;
}

const char* const kInertialNames[10] = {"xx", "xy", "xz", "yy", "yz",
                                        "zz", "mx", "my", "mz", "m"};

}  // namespace

// ------------------------------------------------------------------------------------------
// LinkInertia

LinkInertia LinkInertia::FromCenterOfMass(double mass_kg, const Vector3d& com_m,
                                          const Matrix3d& inertia_at_com) {
  const Matrix3d j = inertia_at_com + mass_kg * (com_m.squaredNorm() * Matrix3d::Identity() -
                                                 com_m * com_m.transpose());
  LinkInertia link;
  link.xx = j(0, 0);
  link.xy = j(0, 1);
  link.xz = j(0, 2);
  link.yy = j(1, 1);
  link.yz = j(1, 2);
  link.zz = j(2, 2);
  link.mx = mass_kg * com_m.x();
  link.my = mass_kg * com_m.y();
  link.mz = mass_kg * com_m.z();
  link.m = mass_kg;
  return link;
}

Matrix3d LinkInertia::InertiaTensor() const {
  Matrix3d j;
  j << xx, xy, xz, xy, yy, yz, xz, yz, zz;
  return j;
}

LinkInertia LinkInertia::Transformed(const Eigen::Isometry3d& pose_in_b) const {
  const Matrix3d& r = pose_in_b.linear();
  const Vector3d& p = pose_in_b.translation();
  const Vector3d hr = r * FirstMoment();
  const Matrix3d j = r * InertiaTensor() * r.transpose() + 2.0 * p.dot(hr) * Matrix3d::Identity() -
                     p * hr.transpose() - hr * p.transpose() +
                     m * (p.squaredNorm() * Matrix3d::Identity() - p * p.transpose());
  const Vector3d h = hr + m * p;
  LinkInertia out;
  out.xx = j(0, 0);
  out.xy = j(0, 1);
  out.xz = j(0, 2);
  out.yy = j(1, 1);
  out.yz = j(1, 2);
  out.zz = j(2, 2);
  out.mx = h.x();
  out.my = h.y();
  out.mz = h.z();
  out.m = m;
  return out;
}

LinkInertia& LinkInertia::operator+=(const LinkInertia& other) {
  xx += other.xx;
  xy += other.xy;
  xz += other.xz;
  yy += other.yy;
  yz += other.yz;
  zz += other.zz;
  mx += other.mx;
  my += other.my;
  mz += other.mz;
  m += other.m;
  return *this;
}

Eigen::Matrix4d LinkInertia::PseudoInertia() const {
  const Matrix3d j = InertiaTensor();
  Eigen::Matrix4d p;
  p.topLeftCorner<3, 3>() = 0.5 * j.trace() * Matrix3d::Identity() - j;
  p.topRightCorner<3, 1>() = FirstMoment();
  p.bottomLeftCorner<1, 3>() = FirstMoment().transpose();
  p(3, 3) = m;
  return p;
}

Eigen::Matrix<double, 6, 6> LinkInertia::SpatialInertia() const {
  Eigen::Matrix<double, 6, 6> s;
  const Matrix3d h = Skew(FirstMoment());
  s.topLeftCorner<3, 3>() = InertiaTensor();
  s.topRightCorner<3, 3>() = h;
  s.bottomLeftCorner<3, 3>() = h.transpose();
  s.bottomRightCorner<3, 3>() = m * Matrix3d::Identity();
  return s;
}

// ------------------------------------------------------------------------------------------
// Construction and parameter layout

// Samples per block of StackedRegressor (see there).
constexpr Eigen::Index kStackedBlock = 32;

SerialRobotData::SerialRobotData(const SerialRobot& robot)
    : n_(robot.num_joints()),
      p_(robot.num_parameters()),
      rotation_(n_),
      position_(n_),
      omega_(n_),
      omega_dot_(n_),
      accel_(n_),
      proj_a_(n_),
      proj_b_(n_),
      pose_(n_),
      composite_mass_(n_),
      composite_moment_(n_),
      composite_inertia_(n_),
      zero_(Eigen::VectorXd::Zero(n_)),
      bias_(n_),
      mass_(n_, n_),
      stacked_nonzero_(static_cast<size_t>(p_) * n_, 0),
      stacked_state_(3 * static_cast<size_t>(n_)),
      stacked_buffer_(static_cast<size_t>(p_) * n_ * kStackedBlock, 0.0) {}

void SerialRobot::CheckData(const SerialRobotData* data) const {
  CHECK(data != nullptr) << name_ << ": expected a SerialRobotData workspace";
  CHECK(data->n_ == n_ && data->p_ == num_parameters())
      << name_ << ": workspace sized for " << data->n_ << " joints and " << data->p_
      << " parameters, robot has " << n_ << " and " << num_parameters();
}

JointModel JointModel::FromModifiedDh(const JointGeometry& row) {
  JointModel joint;
  joint.type = row.type;
  const double ca = Snap(std::cos(row.alpha_rad)), sa = Snap(std::sin(row.alpha_rad));
  const double ct = Snap(std::cos(row.theta_rad)), st = Snap(std::sin(row.theta_rad));
  Matrix3d rot;
  MdhRotation(ca, sa, ct, st, &rot);
  joint.placement.linear() = rot;
  const bool revolute = row.type == JointType::kRevolute;
  const double r = revolute ? row.r_m : 0.0;
  joint.placement.translation() = Vector3d(row.d_m, -r * sa, r * ca);
  joint.offset = revolute ? 0.0 : row.r_m;
  return joint;
}

JointTerms Parameterization::Terms(int joint) const {
  if (!joint_terms.empty()) return joint_terms[joint];
  JointTerms terms;
  terms.rotor_inertia = rotor_inertia;
  terms.viscous = friction;
  terms.coulomb = friction;
  terms.offset = torque_offset;
  return terms;
}

SerialRobot::SerialRobot(std::string name, std::vector<JointGeometry> joints,
                         Parameterization parameterization,
                         std::vector<CoupledMotor> coupled_motors)
    : name_(std::move(name)),
      n_(static_cast<int>(joints.size())),
      mdh_joints_(std::move(joints)),
      parameterization_(std::move(parameterization)),
      coupled_(std::move(coupled_motors)) {
  for (const JointGeometry& row : mdh_joints_) {
    joints_.push_back(JointModel::FromModifiedDh(row));
    cos_alpha_.push_back(Snap(std::cos(row.alpha_rad)));
    sin_alpha_.push_back(Snap(std::sin(row.alpha_rad)));
    cos_theta0_.push_back(Snap(std::cos(row.theta_rad)));
    sin_theta0_.push_back(Snap(std::sin(row.theta_rad)));
  }
  Initialise();
}

SerialRobot::SerialRobot(std::string name, std::vector<JointModel> joints,
                         Parameterization parameterization,
                         std::vector<CoupledMotor> coupled_motors)
    : name_(std::move(name)),
      n_(static_cast<int>(joints.size())),
      joints_(std::move(joints)),
      parameterization_(std::move(parameterization)),
      coupled_(std::move(coupled_motors)) {
  Initialise();
}

std::string SerialRobot::JointName(int joint) const {
  CHECK(joint >= 0 && joint < n_) << "joint index: expected 0.." << n_ - 1 << ", got " << joint;
  return joints_[joint].name.empty() ? "joint" + std::to_string(joint + 1) : joints_[joint].name;
}

void SerialRobot::SetJointNames(const std::vector<std::string>& names) {
  CHECK_EQ(static_cast<int>(names.size()), n_) << "joint names of " << name_;
  for (int j = 0; j < n_; ++j) joints_[j].name = names[j];
}

void SerialRobot::Initialise() {
  CHECK_GT(n_, 0) << "robot " << name_ << ": expected at least one joint";
  CHECK(parameterization_.joint_terms.empty() ||
        static_cast<int>(parameterization_.joint_terms.size()) == n_)
      << "robot " << name_ << ": joint_terms has " << parameterization_.joint_terms.size()
      << " entries for " << n_ << " joints";
  for (int j = 0; j < n_; ++j) {
    const Vector3d& axis = joints_[j].axis;
    CHECK(std::abs(axis.norm() - 1.0) < 1e-9)
        << "robot " << name_ << ", " << JointName(j) << ": the joint axis must be a unit vector";
    z_axis_.push_back(axis == Vector3d::UnitZ() ? 1 : 0);
  }
  auto add = [this](ParameterKind kind, int joint, std::string param_name) {
    info_.push_back({kind, joint, param_name});
    names_.push_back(std::move(param_name));
    return static_cast<int>(info_.size()) - 1;
  };
  ia_index_.assign(n_, -1);
  fv_index_.assign(n_, -1);
  fc_index_.assign(n_, -1);
  fs_index_.assign(n_, -1);
  offset_index_.assign(n_, -1);
  stribeck_velocity_.assign(n_, 0.0);
  for (int j = 0; j < n_; ++j) {
    const std::string suffix = std::to_string(j + 1);
    inertial_index_.push_back(static_cast<int>(info_.size()));
    for (int k = 0; k < 10; ++k) {
      add(static_cast<ParameterKind>(static_cast<int>(ParameterKind::kXX) + k), j,
          kInertialNames[k] + suffix);
    }
    const JointTerms terms = parameterization_.Terms(j);
    CHECK_GE(terms.stribeck_velocity, 0.0)
        << "robot " << name_ << ", " << JointName(j) << ": Stribeck velocity";
    if (terms.rotor_inertia) ia_index_[j] = add(ParameterKind::kIa, j, "ia" + suffix);
    if (terms.viscous) fv_index_[j] = add(ParameterKind::kFv, j, "fv" + suffix);
    if (terms.coulomb) fc_index_[j] = add(ParameterKind::kFc, j, "fc" + suffix);
    if (terms.stribeck_velocity > 0.0) {
      fs_index_[j] = add(ParameterKind::kFs, j, "fs" + suffix);
      stribeck_velocity_[j] = terms.stribeck_velocity;
    }
    if (terms.offset) offset_index_[j] = add(ParameterKind::kOffset, j, "off" + suffix);
  }
  for (int k = 0; k < static_cast<int>(coupled_.size()); ++k) {
    const CoupledMotor& motor = coupled_[k];
    CHECK_EQ(motor.coupling.size(), n_)
        << "coupled motor " << motor.name << " of " << name_ << ": coupling vector size";
    coupled_ia_index_.push_back(
        parameterization_.rotor_inertia ? add(ParameterKind::kCoupledIa, k, "ia" + motor.name)
                                        : -1);
    coupled_fv_index_.push_back(
        parameterization_.friction ? add(ParameterKind::kCoupledFv, k, "fv" + motor.name) : -1);
    coupled_fc_index_.push_back(
        parameterization_.friction ? add(ParameterKind::kCoupledFc, k, "fc" + motor.name) : -1);
  }
  theta_ = Eigen::VectorXd::Zero(num_parameters());
  for (int k = 0; k < static_cast<int>(coupled_.size()); ++k) {
    SetCoupledMotor(k, coupled_[k].ia, coupled_[k].fv, coupled_[k].fc);
  }
}

int SerialRobot::ParameterIndex(const std::string& param_name) const {
  for (int i = 0; i < num_parameters(); ++i) {
    if (names_[i] == param_name) return i;
  }
  return -1;
}

int SerialRobot::DriveIndex(int joint, ParameterKind kind) const {
  CHECK(joint >= 0 && joint < n_) << "joint index: expected 0.." << n_ - 1 << ", got " << joint;
  switch (kind) {
    case ParameterKind::kIa:
      return ia_index_[joint];
    case ParameterKind::kFv:
      return fv_index_[joint];
    case ParameterKind::kFc:
      return fc_index_[joint];
    case ParameterKind::kFs:
      return fs_index_[joint];
    case ParameterKind::kOffset:
      return offset_index_[joint];
    default:
      LOG(FATAL) << "DriveIndex: expected kIa, kFv, kFc, kFs or kOffset";
  }
  return -1;
}

void SerialRobot::SetStandardParameters(const Eigen::VectorXd& theta) {
  CHECK_EQ(theta.size(), num_parameters()) << "standard parameters of " << name_;
  theta_ = theta;
}

LinkInertia LinkInertia::FromValues(const double* values) {
  LinkInertia link;
  link.xx = values[0];
  link.xy = values[1];
  link.xz = values[2];
  link.yy = values[3];
  link.yz = values[4];
  link.zz = values[5];
  link.mx = values[6];
  link.my = values[7];
  link.mz = values[8];
  link.m = values[9];
  return link;
}

void LinkInertia::ToValues(double* values) const {
  const double v[10] = {xx, xy, xz, yy, yz, zz, mx, my, mz, m};
  for (int k = 0; k < 10; ++k) values[k] = v[k];
}

void SerialRobot::SetLinkInertia(int joint, const LinkInertia& link) {
  CHECK(joint >= 0 && joint < n_) << "joint index: expected 0.." << n_ - 1 << ", got " << joint;
  link.ToValues(theta_.data() + inertial_index_[joint]);
}

LinkInertia SerialRobot::GetLinkInertia(int joint) const {
  CHECK(joint >= 0 && joint < n_) << "joint index: expected 0.." << n_ - 1 << ", got " << joint;
  return LinkInertia::FromValues(theta_.data() + inertial_index_[joint]);
}

void SerialRobot::SetJointDrive(int joint, const JointDrive& drive) {
  CHECK(joint >= 0 && joint < n_) << "joint index: expected 0.." << n_ - 1 << ", got " << joint;
  auto set = [&](int index, double value, const char* what) {
    if (index >= 0) {
      theta_[index] = value;
    } else {
      CHECK_EQ(value, 0.0) << name_ << " joint " << joint + 1 << ": " << what
                           << " is not part of the parameterisation";
    }
  };
  set(ia_index_[joint], drive.ia, "rotor inertia");
  set(fv_index_[joint], drive.fv, "viscous friction");
  set(fc_index_[joint], drive.fc, "Coulomb friction");
  set(fs_index_[joint], drive.fs, "Stribeck friction");
  set(offset_index_[joint], drive.offset, "torque offset");
}

JointDrive SerialRobot::GetJointDrive(int joint) const {
  CHECK(joint >= 0 && joint < n_) << "joint index: expected 0.." << n_ - 1 << ", got " << joint;
  JointDrive drive;
  if (ia_index_[joint] >= 0) drive.ia = theta_[ia_index_[joint]];
  if (fv_index_[joint] >= 0) drive.fv = theta_[fv_index_[joint]];
  if (fc_index_[joint] >= 0) drive.fc = theta_[fc_index_[joint]];
  if (fs_index_[joint] >= 0) drive.fs = theta_[fs_index_[joint]];
  if (offset_index_[joint] >= 0) drive.offset = theta_[offset_index_[joint]];
  return drive;
}

void SerialRobot::SetCoupledMotor(int motor, double ia, double fv, double fc) {
  CHECK(motor >= 0 && motor < static_cast<int>(coupled_.size()))
      << "coupled motor index: expected 0.." << coupled_.size() << ", got " << motor;
  if (coupled_ia_index_[motor] >= 0) {
    theta_[coupled_ia_index_[motor]] = ia;
  } else {
    CHECK_EQ(ia, 0.0) << "coupled rotor inertia is not part of the parameterisation";
  }
  if (coupled_fv_index_[motor] >= 0) {
    theta_[coupled_fv_index_[motor]] = fv;
    theta_[coupled_fc_index_[motor]] = fc;
  } else {
    CHECK(fv == 0.0 && fc == 0.0) << "coupled friction is not part of the parameterisation";
  }
}

// ------------------------------------------------------------------------------------------
// Kinematics

void SerialRobot::JointPose(int joint, double qj, Matrix3d* rot, Vector3d* pos) const {
  if (!mdh_joints_.empty()) {
    // Modified DH: the arithmetic of the dedicated path (exact zeros at right angles).
    const JointGeometry& g = mdh_joints_[joint];
    double ct = cos_theta0_[joint], st = sin_theta0_[joint], r = g.r_m;
    if (g.type == JointType::kRevolute) {
      ct = std::cos(g.theta_rad + qj);
      st = std::sin(g.theta_rad + qj);
    } else {
      r += qj;
    }
    const double ca = cos_alpha_[joint], sa = sin_alpha_[joint];
    MdhRotation(ca, sa, ct, st, rot);
    *pos = Vector3d(g.d_m, -r * sa, r * ca);
    return;
  }
  const JointModel& joint_model = joints_[joint];
  const Matrix3d& r0 = joint_model.placement.linear();
  const double s = qj + joint_model.offset;
  if (joint_model.type == JointType::kRevolute) {
    if (z_axis_[joint]) {
      // P R_z(s): only the first two columns of P turn.
      const double c = std::cos(s), sn = std::sin(s);
      rot->col(0) = c * r0.col(0) + sn * r0.col(1);
      rot->col(1) = c * r0.col(1) - sn * r0.col(0);
      rot->col(2) = r0.col(2);
    } else {
      *rot = r0 * Eigen::AngleAxisd(s, joint_model.axis).toRotationMatrix();
    }
    *pos = joint_model.placement.translation();
  } else {
    *rot = r0;
    *pos = joint_model.placement.translation() + s * (r0 * joint_model.axis);
  }
}

Eigen::Isometry3d SerialRobot::LinkTransform(int joint, double qj) const {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  Matrix3d rot;
  Vector3d pos;
  JointPose(joint, qj, &rot, &pos);
  t.linear() = rot;
  t.translation() = pos;
  return t;
}

std::vector<Eigen::Isometry3d> SerialRobot::ForwardKinematics(const Eigen::VectorXd& q) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  std::vector<Eigen::Isometry3d> poses(n_);
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  for (int j = 0; j < n_; ++j) {
    t = t * LinkTransform(j, q[j]);
    poses[j] = t;
  }
  return poses;
}

// Forward recursion of the Newton–Euler algorithm (Khalil & Dombre eqs. 9.90–9.92 in modified
// DH): angular velocity/acceleration and origin acceleration of every link, in its own frame.
// The base "accelerates upwards" at g so that gravity enters every link force.
void SerialRobot::ComputeKinematics(const double* q, const double* qd, const double* qdd,
                                    SerialRobotData* data) const {
  Vector3d w_prev = Vector3d::Zero(), wd_prev = Vector3d::Zero();
  Vector3d vd_prev(0.0, 0.0, gravity_);
  for (int j = 0; j < n_; ++j) {
    const bool revolute = joints_[j].type == JointType::kRevolute;
    Matrix3d& rot = data->rotation_[j];
    Vector3d& p = data->position_[j];
    JointPose(j, q[j], &rot, &p);

    const Vector3d wr = rot.transpose() * w_prev;
    const Vector3d wdr = rot.transpose() * wd_prev;
    Vector3d vd = rot.transpose() * (vd_prev + wd_prev.cross(p) + w_prev.cross(w_prev.cross(p)));
    Vector3d w = wr, wd = wdr;
    if (z_axis_[j]) {
      // wr × (qd z) = qd (wr_y, −wr_x, 0)
      const Vector3d wr_cross_z(wr.y(), -wr.x(), 0.0);
      if (revolute) {
        w.z() += qd[j];
        wd += qd[j] * wr_cross_z;
        wd.z() += qdd[j];
      } else {
        vd += 2.0 * qd[j] * wr_cross_z;
        vd.z() += qdd[j];
      }
    } else {
      // General axis u (Featherstone (2008) eq. 5.7 in the link frame): ω = Rᵀω_prev + q'u,
      // ω' = Rᵀω'_prev + q' (Rᵀω_prev × u) + q''u; a prismatic joint adds the Coriolis term
      // 2 q' (Rᵀω_prev × u) and q''u to the origin acceleration.
      const Vector3d& u = joints_[j].axis;
      const Vector3d wr_cross_u = wr.cross(u);
      if (revolute) {
        w += qd[j] * u;
        wd += qd[j] * wr_cross_u + qdd[j] * u;
      } else {
        vd += 2.0 * qd[j] * wr_cross_u + qdd[j] * u;
      }
    }
    data->omega_[j] = w;
    data->omega_dot_[j] = wd;
    data->accel_[j] = vd;
    w_prev = w;
    wd_prev = wd;
    vd_prev = vd;
  }
}

// ------------------------------------------------------------------------------------------
// Inverse dynamics (classical RNE)

void SerialRobot::RecursiveNewtonEuler(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                       const Eigen::VectorXd& qdd, SerialRobotData* data,
                                       Eigen::VectorXd* tau) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  CHECK_EQ(qd.size(), n_) << "qd for " << name_;
  CHECK_EQ(qdd.size(), n_) << "qdd for " << name_;
  CHECK(tau != nullptr);
  CheckData(data);
  ComputeKinematics(q.data(), qd.data(), qdd.data(), data);
  tau->resize(n_);
  BackwardNewtonEuler(*data, tau->data());
}

void SerialRobot::BackwardNewtonEuler(const SerialRobotData& kin, double* tau) const {
  Vector3d f_next = Vector3d::Zero(), n_next = Vector3d::Zero();
  for (int j = n_ - 1; j >= 0; --j) {
    const LinkInertia link = GetLinkInertia(j);
    const Matrix3d inertia = link.InertiaTensor();
    const Vector3d h = link.FirstMoment();
    const Vector3d& w = kin.omega_[j];
    const Vector3d& wd = kin.omega_dot_[j];
    const Vector3d& vd = kin.accel_[j];
    Vector3d f = link.m * vd + wd.cross(h) + w.cross(w.cross(h));
    Vector3d moment = inertia * wd + w.cross(inertia * w) + h.cross(vd);
    if (j + 1 < n_) {
      const Vector3d rf = kin.rotation_[j + 1] * f_next;
      f += rf;
      moment += kin.rotation_[j + 1] * n_next + kin.position_[j + 1].cross(rf);
    }
    const bool revolute = joints_[j].type == JointType::kRevolute;
    if (z_axis_[j]) {
      tau[j] = revolute ? moment.z() : f.z();
    } else {
      tau[j] = joints_[j].axis.dot(revolute ? moment : f);
    }
    f_next = f;
    n_next = moment;
  }
}

void SerialRobot::AddDriveTerms(const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                bool with_friction, Eigen::VectorXd* tau) const {
  for (int j = 0; j < n_; ++j) {
    const JointDrive drive = GetJointDrive(j);
    (*tau)[j] += drive.ia * qdd[j];
    if (with_friction) {
      (*tau)[j] += drive.fv * qd[j] + drive.fc * Sign(qd[j]) + drive.offset;
      if (fs_index_[j] >= 0) (*tau)[j] += drive.fs * StribeckShape(qd[j], stribeck_velocity_[j]);
    }
  }
  for (int k = 0; k < static_cast<int>(coupled_.size()); ++k) {
    const Eigen::VectorXd& c = coupled_[k].coupling;
    const double ia = coupled_ia_index_[k] >= 0 ? theta_[coupled_ia_index_[k]] : 0.0;
    const double fv = coupled_fv_index_[k] >= 0 ? theta_[coupled_fv_index_[k]] : 0.0;
    const double fc = coupled_fc_index_[k] >= 0 ? theta_[coupled_fc_index_[k]] : 0.0;
    const double c_qdd = c.dot(qdd), c_qd = c.dot(qd);
    for (int i = 0; i < n_; ++i) {
      double inertial_and_viscous;
      if (parameterization_.coupling_form == CouplingForm::kPhysical) {
        inertial_and_viscous = c[i] * (ia * c_qdd + (with_friction ? fv * c_qd : 0.0));
      } else {
        // Off-diagonal part of c cᵀ only (Gautier's published form).
        inertial_and_viscous = c[i] * (ia * (c_qdd - c[i] * qdd[i]) +
                                       (with_friction ? fv * (c_qd - c[i] * qd[i]) : 0.0));
      }
      (*tau)[i] += inertial_and_viscous + (with_friction ? c[i] * fc * Sign(c_qd) : 0.0);
    }
  }
}

void SerialRobot::InverseDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  const Eigen::VectorXd& qdd, SerialRobotData* data,
                                  Eigen::VectorXd* tau) const {
  RecursiveNewtonEuler(q, qd, qdd, data, tau);
  AddDriveTerms(qd, qdd, /*with_friction=*/true, tau);
}

void SerialRobot::InverseDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  const Eigen::VectorXd& qdd, Eigen::VectorXd* tau) const {
  SerialRobotData data(*this);
  InverseDynamics(q, qd, qdd, &data, tau);
}

void SerialRobot::NonlinearEffects(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                   SerialRobotData* data, Eigen::VectorXd* n_terms) const {
  CheckData(data);
  InverseDynamics(q, qd, data->zero_, data, n_terms);
}

void SerialRobot::NonlinearEffects(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                   Eigen::VectorXd* n_terms) const {
  SerialRobotData data(*this);
  NonlinearEffects(q, qd, &data, n_terms);
}

void SerialRobot::GravityTorques(const Eigen::VectorXd& q, SerialRobotData* data,
                                 Eigen::VectorXd* tau_g) const {
  CheckData(data);
  RecursiveNewtonEuler(q, data->zero_, data->zero_, data, tau_g);
}

void SerialRobot::GravityTorques(const Eigen::VectorXd& q, Eigen::VectorXd* tau_g) const {
  SerialRobotData data(*this);
  GravityTorques(q, &data, tau_g);
}

// ------------------------------------------------------------------------------------------
// Mass matrix (composite rigid bodies)

void SerialRobot::MassMatrix(const Eigen::VectorXd& q, SerialRobotData* data,
                             Eigen::MatrixXd* mass) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  CHECK(mass != nullptr);
  CheckData(data);
  std::vector<Matrix3d>& rot = data->rotation_;
  std::vector<Vector3d>& pos = data->position_;
  for (int j = 0; j < n_; ++j) JointPose(j, q[j], &rot[j], &pos[j]);
  CompositeRigidBodies(data, mass);
}

void SerialRobot::CompositeRigidBodies(SerialRobotData* data, Eigen::MatrixXd* mass) const {
  const std::vector<Matrix3d>& rot = data->rotation_;
  const std::vector<Vector3d>& pos = data->position_;
  // Composite inertia of links j..n about O_j in frame j: mass, first moment, inertia tensor.
  std::vector<double>& mc = data->composite_mass_;
  std::vector<Vector3d>& hc = data->composite_moment_;
  std::vector<Matrix3d>& jc = data->composite_inertia_;
  for (int j = n_ - 1; j >= 0; --j) {
    const LinkInertia link = GetLinkInertia(j);
    mc[j] = link.m;
    hc[j] = link.FirstMoment();
    jc[j] = link.InertiaTensor();
    if (j + 1 < n_) {
      // Shift the child's composite body from O_{j+1} to O_j (parallel-axis theorem with a
      // first moment): J_O = R J Rᵀ + 2(P·h')I − P h'ᵀ − h' Pᵀ + m(|P|²I − P Pᵀ), h' = R h.
      const Matrix3d& r = rot[j + 1];
      const Vector3d& p = pos[j + 1];
      const Vector3d hr = r * hc[j + 1];
      const double m = mc[j + 1];
      mc[j] += m;
      hc[j] += hr + m * p;
      jc[j] += r * jc[j + 1] * r.transpose() +
               2.0 * p.dot(hr) * Matrix3d::Identity() - p * hr.transpose() -
               hr * p.transpose() + m * (p.squaredNorm() * Matrix3d::Identity() - p * p.transpose());
    }
  }
  mass->setZero(n_, n_);
  for (int j = 0; j < n_; ++j) {
    // Wrench on the composite body j..n for a unit acceleration of joint j, at rest, no gravity.
    const Vector3d& u = joints_[j].axis;
    Vector3d f, moment;
    if (joints_[j].type == JointType::kRevolute) {
      f = u.cross(hc[j]);
      moment = jc[j] * u;
    } else {
      f = mc[j] * u;
      moment = hc[j].cross(u);
    }
    for (int i = j; i >= 0; --i) {
      if (i < j) {
        const Vector3d rf = rot[i + 1] * f;
        moment = rot[i + 1] * moment + pos[i + 1].cross(rf);
        f = rf;
      }
      const bool revolute = joints_[i].type == JointType::kRevolute;
      const double value =
          z_axis_[i] ? (revolute ? moment.z() : f.z()) : joints_[i].axis.dot(revolute ? moment : f);
      (*mass)(i, j) = value;
      (*mass)(j, i) = value;
    }
  }
  for (int j = 0; j < n_; ++j) {
    if (ia_index_[j] >= 0) (*mass)(j, j) += theta_[ia_index_[j]];
  }
  for (int k = 0; k < static_cast<int>(coupled_.size()); ++k) {
    if (coupled_ia_index_[k] < 0) continue;
    // M += Iam c cᵀ (Gautier form: its diagonal left out), element by element as the matrix
    // expression M += Iam (c cᵀ) computes it, without forming c cᵀ.
    const Eigen::VectorXd& c = coupled_[k].coupling;
    const double ia = theta_[coupled_ia_index_[k]];
    const bool gautier = parameterization_.coupling_form == CouplingForm::kGautier;
    for (int j = 0; j < n_; ++j) {
      for (int i = 0; i < n_; ++i) {
        const double cc = gautier && i == j ? 0.0 : c[i] * c[j];
        (*mass)(i, j) += ia * cc;
      }
    }
  }
}

void SerialRobot::MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* mass) const {
  SerialRobotData data(*this);
  MassMatrix(q, &data, mass);
}

void SerialRobot::CholeskySolveInPlace(double* m, double* x) const {
  const int n = n_;
  const auto at = [m, n](int i, int j) -> double& {
    return m[i + static_cast<std::ptrdiff_t>(j) * n];
  };
  // Factor, column k: L_kk = sqrt(M_kk − Σ_j L_kj²) and L_ik = (M_ik − Σ_j L_ij L_kj) / L_kk,
  // j < k, each sum accumulated from j = 0 on (LLT's squaredNorm and matrix-vector product).
  for (int k = 0; k < n; ++k) {
    double d = at(k, k);
    if (k > 0) {
      double sum = at(k, 0) * at(k, 0);
      for (int j = 1; j < k; ++j) sum = sum + at(k, j) * at(k, j);
      d -= sum;
    }
    CHECK(!(d <= 0.0)) << name_ << ": mass matrix is not positive definite";
    d = std::sqrt(d);
    at(k, k) = d;
    for (int i = k + 1; i < n; ++i) {
      if (k > 0) {
        double sum;
        if (i + 1 == n && i == k + 1) {
          sum = at(i, 0) * at(k, 0);  // a single row: Eigen's inner product
          for (int j = 1; j < k; ++j) sum = sum + at(i, j) * at(k, j);
        } else {
          sum = 0.0;
          for (int j = 0; j < k; ++j) sum = at(i, j) * at(k, j) + sum;
        }
        at(i, k) -= sum;
      }
      at(i, k) /= d;
    }
  }
  // L y = b, by columns.
  for (int i = 0; i < n; ++i) {
    if (x[i] == 0.0) continue;
    x[i] /= at(i, i);
    for (int r = i + 1; r < n; ++r) x[r] -= x[i] * at(r, i);
  }
  // Lᵀ x = y, by rows of Lᵀ (columns of L, contiguous).
  for (int i = n - 1; i >= 0; --i) {
    const int terms = n - 1 - i;
    if (terms > 0) x[i] -= PacketPairDot(&at(i + 1, i), x + i + 1, terms);
    if (x[i] != 0.0) x[i] /= at(i, i);
  }
}

void SerialRobot::ForwardDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  const Eigen::VectorXd& tau, SerialRobotData* data,
                                  Eigen::VectorXd* qdd) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  CHECK_EQ(qd.size(), n_) << "qd for " << name_;
  CHECK_EQ(tau.size(), n_) << "tau for " << name_;
  CHECK(qdd != nullptr);
  CheckData(data);
  // One kinematic pass at (q, q', 0) serves both the bias (its link rotations and positions are
  // the ones MassMatrix would compute again from q): the bias and M are the numbers of
  // NonlinearEffects and MassMatrix, bit for bit.
  ComputeKinematics(q.data(), qd.data(), data->zero_.data(), data);
  Eigen::VectorXd& bias = data->bias_;
  BackwardNewtonEuler(*data, bias.data());
  AddDriveTerms(qd, data->zero_, /*with_friction=*/true, &bias);
  Eigen::MatrixXd& mass = data->mass_;
  CompositeRigidBodies(data, &mass);
  qdd->resize(n_);
  qdd->noalias() = tau - bias;
  // M = L Lᵀ in place and L Lᵀ q'' = tau − N by two substitutions, without Eigen's
  // dynamic-size LLT (whose dispatch costs more than its arithmetic at n ≈ 6) and without
  // allocation. The operations and their order are those of Eigen 3.4's LLT (unblocked, n < 32)
  // and triangular solves (one panel, n ≤ 8) with its default SSE2 packets of two doubles, so
  // that the accelerations equal LLT's bit for bit and the simulations built on them do not
  // change; with other packet sizes (-march=native) they agree to round-off.
  CholeskySolveInPlace(mass.data(), qdd->data());
}

void SerialRobot::ForwardDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  const Eigen::VectorXd& tau, Eigen::VectorXd* qdd) const {
  SerialRobotData data(*this);
  ForwardDynamics(q, qd, tau, &data, qdd);
}

// ------------------------------------------------------------------------------------------
// Energies

double SerialRobot::KineticEnergy(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  SerialRobotData* data) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  CHECK_EQ(qd.size(), n_) << "qd for " << name_;
  CheckData(data);  // the twists need no storage beyond two vectors
  Vector3d w = Vector3d::Zero(), v = Vector3d::Zero();
  double energy = 0.0;
  for (int j = 0; j < n_; ++j) {
    const Eigen::Isometry3d t = LinkTransform(j, q[j]);
    const Matrix3d& r = t.linear();
    v = r.transpose() * (v + w.cross(t.translation()));
    w = r.transpose() * w;
    if (joints_[j].type == JointType::kRevolute) {
      w += qd[j] * joints_[j].axis;
    } else {
      v += qd[j] * joints_[j].axis;
    }
    const LinkInertia link = GetLinkInertia(j);
    energy += 0.5 * link.m * v.squaredNorm() + v.dot(w.cross(link.FirstMoment())) +
              0.5 * w.dot(link.InertiaTensor() * w);
    if (ia_index_[j] >= 0) energy += 0.5 * theta_[ia_index_[j]] * qd[j] * qd[j];
  }
  for (int k = 0; k < static_cast<int>(coupled_.size()); ++k) {
    if (coupled_ia_index_[k] < 0) continue;
    const Eigen::VectorXd& c = coupled_[k].coupling;
    double quadratic = c.dot(qd) * c.dot(qd);
    if (parameterization_.coupling_form == CouplingForm::kGautier) {
      quadratic -= c.cwiseProduct(qd).squaredNorm();
    }
    energy += 0.5 * theta_[coupled_ia_index_[k]] * quadratic;
  }
  return energy;
}

double SerialRobot::KineticEnergy(const Eigen::VectorXd& q, const Eigen::VectorXd& qd) const {
  SerialRobotData data(*this);
  return KineticEnergy(q, qd, &data);
}

double SerialRobot::PotentialEnergy(const Eigen::VectorXd& q, SerialRobotData* data) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  CheckData(data);
  std::vector<Eigen::Isometry3d>& poses = data->pose_;
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  for (int j = 0; j < n_; ++j) {
    t = t * LinkTransform(j, q[j]);
    poses[j] = t;
  }
  double energy = 0.0;
  for (int j = 0; j < n_; ++j) {
    const LinkInertia link = GetLinkInertia(j);
    // Height of the centre of mass times mass: m p_z + (R h)_z.
    energy += gravity_ * (link.m * poses[j].translation().z() +
                          poses[j].linear().row(2).dot(link.FirstMoment()));
  }
  return energy;
}

double SerialRobot::PotentialEnergy(const Eigen::VectorXd& q) const {
  SerialRobotData data(*this);
  return PotentialEnergy(q, &data);
}

// ------------------------------------------------------------------------------------------
// Regressor

// The Newton–Euler wrench of link j about O_j (frame j),
//     f_j = m a_j + ω'×h + ω×(ω×h),     n_j = J ω' + ω×(Jω) + h×a_j,
// is linear in (J, h, m). Joint i ≤ j feels it through the projection τ_i += a·n_j + b·f_j with
// (a, b) = (z_i, z_i × p_ij) for a revolute joint i and (0, z_i) for a prismatic one, where p_ij
// = O_j − O_i, all in frame j. (a, b) move from frame j−1 to j as a' = Rᵀa, b' = Rᵀ(b + a×P).
// Rewriting the scalar products with the parameters factored out gives the regressor entries:
//     J:  aᵀ J ω' + uᵀ J ω with u = a × ω  (symmetric bilinear forms)
//     h:  h · (b×ω' + (b×ω)×ω + a_j×a)
//     m:  b · a_j.
void SerialRobot::FillRegressor(const double* q, const double* qd, const double* qdd,
                                SerialRobotData* data, double* out, Eigen::Index row_stride,
                                Eigen::Index col_stride) const {
  ComputeKinematics(q, qd, qdd, data);
  std::vector<Vector3d>& pa = data->proj_a_;
  std::vector<Vector3d>& pb = data->proj_b_;
  for (int j = 0; j < n_; ++j) {
    const Matrix3d& rot = data->rotation_[j];
    const Vector3d& p = data->position_[j];
    for (int i = 0; i < j; ++i) {
      const Vector3d b_shift = pb[i] + pa[i].cross(p);
      pa[i] = rot.transpose() * pa[i];
      pb[i] = rot.transpose() * b_shift;
    }
    if (joints_[j].type == JointType::kRevolute) {
      pa[j] = joints_[j].axis;
      pb[j].setZero();
    } else {
      pa[j].setZero();
      pb[j] = joints_[j].axis;
    }
    const Vector3d& w = data->omega_[j];
    const Vector3d& wd = data->omega_dot_[j];
    const Vector3d& vd = data->accel_[j];
    // Per link, once for all joints i ≤ j:
    //   n-part of J:  J ω' + ω×(Jω) = (L(ω') + [ω]× L(ω)) θ_J = K θ_J   (3 × 6, L as in
    //                 Khalil & Dombre: J v = L(v) [XX XY XZ YY YZ ZZ]ᵀ), written out below;
    //   h-part:       aᵀ(h × a_j) + bᵀ(ω'×h + ω×(ω×h)) = h · (a_j×a + b×ω' + (b·ω)ω − |ω|²b);
    //   m-part:       b · a_j.
    const double wx = w.x(), wy = w.y(), wz = w.z();
    const double k_j[3][6] = {
        {wd.x(), wd.y() - wz * wx, wd.z() + wy * wx, -wz * wy, wy * wy - wz * wz, wy * wz},
        {wz * wx, wd.x() + wz * wy, wz * wz - wx * wx, wd.y(), wd.z() - wx * wy, -wx * wz},
        {-wy * wx, wx * wx - wy * wy, wd.x() - wy * wz, wx * wy, wd.y() + wx * wz, wd.z()}};
    const double w_norm2 = w.squaredNorm();
    double* column = out + inertial_index_[j] * col_stride;
    if (z_axis_[j]) {
      // Joint j itself: (a, b) = (z, 0) or (0, z).
      double* row = column + j * row_stride;
      if (joints_[j].type == JointType::kRevolute) {
        for (int c = 0; c < 6; ++c) row[c * col_stride] = k_j[2][c];
        row[6 * col_stride] = vd.y();
        row[7 * col_stride] = -vd.x();
        row[8 * col_stride] = 0.0;
        row[9 * col_stride] = 0.0;
      } else {
        for (int c = 0; c < 6; ++c) row[c * col_stride] = 0.0;
        row[6 * col_stride] = -wd.y() + wz * wx;
        row[7 * col_stride] = wd.x() + wz * wy;
        row[8 * col_stride] = wz * wz - w_norm2;
        row[9 * col_stride] = vd.z();
      }
    }
    // Joint j itself goes through the general projection when its axis is not z.
    const int last = z_axis_[j] ? j - 1 : j;
    for (int i = 0; i <= last; ++i) {
      const Vector3d& a = pa[i];
      const Vector3d& b = pb[i];
      const Vector3d moment = vd.cross(a) + b.cross(wd) + b.dot(w) * w - w_norm2 * b;
      double* row = column + i * row_stride;
      for (int c = 0; c < 6; ++c) {
        row[c * col_stride] = a.x() * k_j[0][c] + a.y() * k_j[1][c] + a.z() * k_j[2][c];
      }
      row[6 * col_stride] = moment.x();
      row[7 * col_stride] = moment.y();
      row[8 * col_stride] = moment.z();
      row[9 * col_stride] = b.dot(vd);
    }
    double* joint_row = out + j * row_stride;
    if (ia_index_[j] >= 0) joint_row[ia_index_[j] * col_stride] = qdd[j];
    if (fv_index_[j] >= 0) joint_row[fv_index_[j] * col_stride] = qd[j];
    if (fc_index_[j] >= 0) joint_row[fc_index_[j] * col_stride] = Sign(qd[j]);
    if (fs_index_[j] >= 0) {
      joint_row[fs_index_[j] * col_stride] = StribeckShape(qd[j], stribeck_velocity_[j]);
    }
    if (offset_index_[j] >= 0) joint_row[offset_index_[j] * col_stride] = 1.0;
  }
  for (int k = 0; k < static_cast<int>(coupled_.size()); ++k) {
    const Eigen::VectorXd& c = coupled_[k].coupling;
    double c_qdd = 0.0, c_qd = 0.0;
    for (int i = 0; i < n_; ++i) {
      c_qdd += c[i] * qdd[i];
      c_qd += c[i] * qd[i];
    }
    const bool gautier = parameterization_.coupling_form == CouplingForm::kGautier;
    for (int i = 0; i < n_; ++i) {
      if (c[i] == 0.0) continue;
      double* row = out + i * row_stride;
      const double acc = gautier ? c_qdd - c[i] * qdd[i] : c_qdd;
      const double vel = gautier ? c_qd - c[i] * qd[i] : c_qd;
      if (coupled_ia_index_[k] >= 0) row[coupled_ia_index_[k] * col_stride] = c[i] * acc;
      if (coupled_fv_index_[k] >= 0) {
        row[coupled_fv_index_[k] * col_stride] = c[i] * vel;
        row[coupled_fc_index_[k] * col_stride] = c[i] * Sign(c_qd);
      }
    }
  }
}

void SerialRobot::Regressor(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                            const Eigen::VectorXd& qdd, SerialRobotData* data,
                            Eigen::MatrixXd* phi) const {
  CHECK_EQ(q.size(), n_) << "q for " << name_;
  CHECK_EQ(qd.size(), n_) << "qd for " << name_;
  CHECK_EQ(qdd.size(), n_) << "qdd for " << name_;
  CHECK(phi != nullptr);
  CheckData(data);
  phi->resize(n_, num_parameters());
  // memset rather than setZero: the element-wise fill was a third of the single-sample cost.
  std::memset(phi->data(), 0, sizeof(double) * static_cast<size_t>(phi->size()));
  FillRegressor(q.data(), qd.data(), qdd.data(), data, phi->data(), 1, n_);
}

void SerialRobot::Regressor(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                            const Eigen::VectorXd& qdd, Eigen::MatrixXd* phi) const {
  SerialRobotData data(*this);
  Regressor(q, qd, qdd, &data, phi);
}

void SerialRobot::StackedRegressor(const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                                   const Eigen::MatrixXd& qdd, Eigen::MatrixXd* X) const {
  SerialRobotData data(*this);
  StackedRegressor(q, qd, qdd, &data, X);
}

void SerialRobot::StackedRegressor(const Eigen::MatrixXd& q, const Eigen::MatrixXd& qd,
                                   const Eigen::MatrixXd& qdd, SerialRobotData* data,
                                   Eigen::MatrixXd* X) const {
  CHECK_EQ(q.cols(), n_) << "q (samples × joints) for " << name_;
  CHECK(qd.rows() == q.rows() && qd.cols() == n_)
      << "qd: expected " << q.rows() << " × " << n_ << ", got " << qd.rows() << " × "
      << qd.cols();
  CHECK(qdd.rows() == q.rows() && qdd.cols() == n_)
      << "qdd: expected " << q.rows() << " × " << n_ << ", got " << qdd.rows() << " × "
      << qdd.cols();
  CHECK(X != nullptr);
  CheckData(data);
  const Eigen::Index num_samples = q.rows();
  const Eigen::Index p = num_parameters();
  X->resize(n_ * num_samples, p);
  // Structural non-zeros (c, i) of phi: inertial columns of link j on rows i ≤ j, drive columns on
  // their joint's row, coupled columns where the coupling is non-zero. X is zeroed in one pass
  // (memset streams) and only these runs are copied, halving the traffic of this memory-bound
  // routine.
  // The pattern depends on the couplings, so it is rebuilt for the robot at hand.
  std::vector<char>& nonzero = data->stacked_nonzero_;
  for (Eigen::Index c = 0; c < p; ++c) {
    const ParameterInfo& parameter = info_[c];
    for (int i = 0; i < n_; ++i) {
      bool used = false;
      if (static_cast<int>(parameter.kind) <= static_cast<int>(ParameterKind::kM)) {
        used = i <= parameter.joint;
      } else if (static_cast<int>(parameter.kind) <= static_cast<int>(ParameterKind::kOffset)) {
        used = i == parameter.joint;
      } else {
        used = coupled_[parameter.joint].coupling[i] != 0.0;
      }
      nonzero[c * n_ + i] = used ? 1 : 0;
    }
  }
  std::memset(X->data(), 0, sizeof(double) * static_cast<size_t>(X->size()));
  // Samples are processed in blocks: each block is written into a small buffer laid out
  // (column, joint, sample) and then copied as contiguous runs into the joint-major X. The
  // sparsity pattern of phi does not depend on the state, so entries never written stay zero.
  // Every entry copied out of the buffer was written for the current block, so the buffer is
  // reused across blocks and calls without clearing.
  constexpr Eigen::Index kBlock = kStackedBlock;
  std::vector<double>& buffer = data->stacked_buffer_;
  double* qs = data->stacked_state_.data();
  double* qds = qs + n_;
  double* qdds = qds + n_;
  for (Eigen::Index start = 0; start < num_samples; start += kBlock) {
    const Eigen::Index count = std::min(kBlock, num_samples - start);
    for (Eigen::Index k = 0; k < count; ++k) {
      for (int j = 0; j < n_; ++j) {
        qs[j] = q(start + k, j);
        qds[j] = qd(start + k, j);
        qdds[j] = qdd(start + k, j);
      }
      FillRegressor(qs, qds, qdds, data, buffer.data() + k, kBlock, n_ * kBlock);
    }
    for (Eigen::Index c = 0; c < p; ++c) {
      for (int i = 0; i < n_; ++i) {
        if (!nonzero[c * n_ + i]) continue;
        const double* source = buffer.data() + (c * n_ + i) * kBlock;
        double* target = X->data() + c * X->rows() + i * num_samples + start;
        std::copy(source, source + count, target);
      }
    }
  }
}

SerialRobot ConvertCouplingForm(const SerialRobot& robot, CouplingForm form) {
  const Parameterization& from = robot.parameterization();
  CHECK(from.rotor_inertia && from.friction)
      << robot.name() << ": converting the coupling form needs rotor inertia and friction columns";
  // Same joints and layout: only the form changes.
  SerialRobot converted = robot;
  converted.parameterization_.coupling_form = form;
  if (form == from.coupling_form) return converted;
  const double sign = form == CouplingForm::kGautier ? 1.0 : -1.0;
  Eigen::VectorXd theta = robot.standard_parameters();
  for (int k = 0; k < static_cast<int>(robot.coupled_motors().size()); ++k) {
    const Eigen::VectorXd& c = robot.coupled_motors()[k].coupling;
    const double ia = theta[robot.ParameterIndex("ia" + robot.coupled_motors()[k].name)];
    const double fv = theta[robot.ParameterIndex("fv" + robot.coupled_motors()[k].name)];
    for (int j = 0; j < robot.num_joints(); ++j) {
      if (c[j] == 0.0) continue;
      const int ia_index = robot.DriveIndex(j, ParameterKind::kIa);
      const int fv_index = robot.DriveIndex(j, ParameterKind::kFv);
      CHECK(ia_index >= 0 && fv_index >= 0)
          << robot.name() << ": converting the coupling form needs ia and fv of "
          << robot.JointName(j) << ", which motor " << robot.coupled_motors()[k].name << " turns";
      theta[ia_index] += sign * c[j] * c[j] * ia;
      theta[fv_index] += sign * c[j] * c[j] * fv;
    }
  }
  converted.SetStandardParameters(theta);
  return converted;
}

}  // namespace dynid::models
