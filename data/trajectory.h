// data/trajectory — joint-space reference trajectories for robot experiments (Brunot et al. (2018)
// §4.1: trapezoidal velocities, "smoothed bang-bang accelerations").
//
// Every trajectory gives q(t), q'(t), q''(t) (n joints) on [0, duration()], continuous in
// position and velocity. Three families:
// - TrapezoidalTrajectory: rest-to-rest moves through via points; in each segment every joint
//   follows a trapezoidal (or triangular) velocity profile with its own acceleration bound,
//   all joints synchronised on the slowest one; acceleration is bang–coast–bang.
// - QuinticTrajectory: rest-to-rest quintic polynomial moves through via points
//   (q = q0 + D (10 s³ − 15 s⁴ + 6 s⁵), s = t/T), T chosen so that |q'| ≤ vmax and |q''| ≤ amax
//   (peaks 15 D/(8T) and 10 D/(√3 T²)).
// - FourierTrajectory: finite Fourier series (Swevers et al. 1997),
//   q_j(t) = q0_j + Σ_l a_jl/(ω l) sin(ω l t) − b_jl/(ω l) cos(ω l t), periodic with period
//   2π/ω, coefficients random (seeded) and scaled into the position and velocity limits.
#ifndef DYNID_DATA_TRAJECTORY_H_
#define DYNID_DATA_TRAJECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace dynid::data {

class JointTrajectory {
 public:
  virtual ~JointTrajectory() = default;
  virtual int num_joints() const = 0;
  virtual double duration() const = 0;
  // Position, velocity, acceleration at time t (clamped to [0, duration()]); outputs resized to n.
  virtual void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                        Eigen::VectorXd* qdd) const = 0;
  // Uniform samples t_k = k dt, k = 0..floor(duration/dt): time (Ns), q, qd, qdd (Ns × n).
  void Sample(double dt, Eigen::VectorXd* time, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
              Eigen::MatrixXd* qdd) const;
  // True if, at samples spaced dt, lower ≤ q ≤ upper and |q'| ≤ velocity_limit (each n entries;
  // tolerance 1e-9 relative); otherwise `why` names the joint, time and value.
  bool WithinLimits(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                    const Eigen::VectorXd& velocity_limit, double dt, std::string* why) const;
};

class TrapezoidalTrajectory : public JointTrajectory {
 public:
  // via_points: at least two points of n joints; vmax, amax > 0 (n); dwell_s ≥ 0 rest at every
  // via point. Returns false with a message on bad input.
  static bool Create(const std::vector<Eigen::VectorXd>& via_points, const Eigen::VectorXd& vmax,
                     const Eigen::VectorXd& amax, double dwell_s, TrapezoidalTrajectory* out,
                     std::string* error);
  int num_joints() const override { return static_cast<int>(vmax_.size()); }
  double duration() const override { return segment_start_.empty() ? 0.0 : end_time_; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override;

 private:
  struct JointSegment {
    double distance = 0.0;      // signed
    double peak_velocity = 0.0; // ≥ 0
    double acceleration = 0.0;  // ≥ 0
    double accel_time = 0.0;    // ramp duration
  };
  std::vector<Eigen::VectorXd> via_;
  Eigen::VectorXd vmax_, amax_;
  std::vector<double> segment_start_, segment_duration_;
  std::vector<std::vector<JointSegment>> profile_;  // [segment][joint]
  double dwell_ = 0.0;
  double end_time_ = 0.0;
};

class QuinticTrajectory : public JointTrajectory {
 public:
  static bool Create(const std::vector<Eigen::VectorXd>& via_points, const Eigen::VectorXd& vmax,
                     const Eigen::VectorXd& amax, double dwell_s, QuinticTrajectory* out,
                     std::string* error);
  int num_joints() const override { return static_cast<int>(vmax_.size()); }
  double duration() const override { return end_time_; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override;

 private:
  std::vector<Eigen::VectorXd> via_;
  Eigen::VectorXd vmax_;
  std::vector<double> segment_start_, segment_duration_;
  double dwell_ = 0.0;
  double end_time_ = 0.0;
};

struct FourierOptions {
  int num_harmonics = 5;
  double base_frequency_hz = 0.1;
  double num_periods = 1.0;
  double limit_margin = 0.9;  // use this fraction of the half-range and of vmax
  std::uint32_t seed = 1;
};

class FourierTrajectory : public JointTrajectory {
 public:
  // Random coefficients scaled so that the trajectory, centred between the limits, uses
  // limit_margin of the position half-range or of vmax, whichever binds first, per joint.
  static bool Create(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                     const Eigen::VectorXd& vmax, const FourierOptions& options,
                     FourierTrajectory* out, std::string* error);
  // Explicit coefficients: a, b are n × L; omega in rad/s; duration in s.
  FourierTrajectory(const Eigen::VectorXd& q0, const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                    double omega_rad_s, double duration_s);
  FourierTrajectory() = default;
  int num_joints() const override { return static_cast<int>(q0_.size()); }
  double duration() const override { return duration_; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override;

 private:
  Eigen::VectorXd q0_;
  Eigen::MatrixXd a_, b_;
  double omega_ = 1.0;
  double duration_ = 0.0;
};

}  // namespace dynid::data

#endif  // DYNID_DATA_TRAJECTORY_H_
