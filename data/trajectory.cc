#include "dynid/data/trajectory.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include <glog/logging.h>

namespace dynid::data {
namespace {

bool CheckViaPoints(const std::vector<Eigen::VectorXd>& via_points, const Eigen::VectorXd& vmax,
                    const Eigen::VectorXd& amax, double dwell_s, std::string* error) {
  if (via_points.size() < 2) {
    *error = "trajectory needs at least two via points, got " + std::to_string(via_points.size());
    return false;
  }
  const Eigen::Index n = vmax.size();
  if (n == 0 || amax.size() != n) {
    *error = "vmax and amax must have the same non-zero size";
    return false;
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!(vmax[j] > 0.0) || !(amax[j] > 0.0) || !std::isfinite(vmax[j]) ||
        !std::isfinite(amax[j])) {
      *error = "vmax and amax must be finite and > 0 (joint " + std::to_string(j + 1) + ")";
      return false;
    }
  }
  for (size_t k = 0; k < via_points.size(); ++k) {
    if (via_points[k].size() != n || !via_points[k].allFinite()) {
      *error = "via point " + std::to_string(k) + " must have " + std::to_string(n) +
               " finite entries";
      return false;
    }
  }
  if (!(dwell_s >= 0.0)) {
    *error = "dwell time must be >= 0";
    return false;
  }
  return true;
}

// Locates t in piecewise segments with a dwell after each: returns the segment index and the
// time inside the motion part (or −1 when dwelling at the segment's end point).
int LocateSegment(const std::vector<double>& start, const std::vector<double>& duration,
                  double t, double* local) {
  int s = static_cast<int>(std::upper_bound(start.begin(), start.end(), t) - start.begin()) - 1;
  s = std::clamp(s, 0, static_cast<int>(start.size()) - 1);
  *local = std::min(t - start[s], duration[s]);
  return s;
}

}  // namespace

void JointTrajectory::Sample(double dt, Eigen::VectorXd* time, Eigen::MatrixXd* q,
                             Eigen::MatrixXd* qd, Eigen::MatrixXd* qdd) const {
  CHECK_GT(dt, 0.0) << "sampling period";
  const int n = num_joints();
  const int num_samples = static_cast<int>(std::floor(duration() / dt + 1e-9)) + 1;
  time->resize(num_samples);
  q->resize(num_samples, n);
  qd->resize(num_samples, n);
  qdd->resize(num_samples, n);
  Eigen::VectorXd a, b, c;
  for (int k = 0; k < num_samples; ++k) {
    (*time)[k] = k * dt;
    Evaluate(k * dt, &a, &b, &c);
    q->row(k) = a.transpose();
    qd->row(k) = b.transpose();
    qdd->row(k) = c.transpose();
  }
}

bool JointTrajectory::WithinLimits(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                   const Eigen::VectorXd& velocity_limit, double dt,
                                   std::string* why) const {
  const int n = num_joints();
  CHECK(lower.size() == n && upper.size() == n && velocity_limit.size() == n)
      << "limits: expected " << n << " entries";
  Eigen::VectorXd q, qd, qdd;
  for (double t = 0.0; t <= duration() + 1e-12; t += dt) {
    Evaluate(t, &q, &qd, &qdd);
    for (int j = 0; j < n; ++j) {
      const double slack = 1e-9 * std::max(1.0, std::abs(upper[j] - lower[j]));
      std::ostringstream message;
      if (q[j] < lower[j] - slack || q[j] > upper[j] + slack) {
        message << "joint " << j + 1 << " position " << q[j] << " outside [" << lower[j] << ", "
                << upper[j] << "] at t = " << t;
      } else if (std::abs(qd[j]) > velocity_limit[j] * (1.0 + 1e-9)) {
        message << "joint " << j + 1 << " velocity " << qd[j] << " exceeds " << velocity_limit[j]
                << " at t = " << t;
      } else {
        continue;
      }
      *why = message.str();
      return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------------------------------

bool TrapezoidalTrajectory::Create(const std::vector<Eigen::VectorXd>& via_points,
                                   const Eigen::VectorXd& vmax, const Eigen::VectorXd& amax,
                                   double dwell_s, TrapezoidalTrajectory* out,
                                   std::string* error) {
  CHECK(out != nullptr);
  CHECK(error != nullptr);
  if (!CheckViaPoints(via_points, vmax, amax, dwell_s, error)) return false;
  TrapezoidalTrajectory trajectory;
  trajectory.via_ = via_points;
  trajectory.vmax_ = vmax;
  trajectory.amax_ = amax;
  trajectory.dwell_ = dwell_s;
  const Eigen::Index n = vmax.size();
  double t = 0.0;
  for (size_t s = 0; s + 1 < via_points.size(); ++s) {
    const Eigen::VectorXd distance = via_points[s + 1] - via_points[s];
    // Minimum time of each joint alone, then all joints stretched to the slowest.
    double duration = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double d = std::abs(distance[j]);
      const double minimum = d > vmax[j] * vmax[j] / amax[j] ? d / vmax[j] + vmax[j] / amax[j]
                                                             : 2.0 * std::sqrt(d / amax[j]);
      duration = std::max(duration, minimum);
    }
    std::vector<JointSegment> joints(n);
    for (Eigen::Index j = 0; j < n; ++j) {
      JointSegment& js = joints[j];
      js.distance = distance[j];
      const double d = std::abs(distance[j]);
      if (d == 0.0 || duration == 0.0) continue;
      // Peak velocity v with acceleration a in time T: d = v (T − v/a), smaller root.
      const double a = amax[j];
      const double discriminant = std::max(0.0, a * a * duration * duration - 4.0 * a * d);
      js.peak_velocity = 0.5 * (a * duration - std::sqrt(discriminant));
      js.acceleration = a;
      js.accel_time = js.peak_velocity / a;
    }
    trajectory.segment_start_.push_back(t);
    trajectory.segment_duration_.push_back(duration);
    trajectory.profile_.push_back(joints);
    t += duration + dwell_s;
  }
  trajectory.end_time_ = t;
  *out = trajectory;
  return true;
}

void TrapezoidalTrajectory::Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                                     Eigen::VectorXd* qdd) const {
  const Eigen::Index n = vmax_.size();
  q->resize(n);
  qd->resize(n);
  qdd->resize(n);
  t = std::clamp(t, 0.0, end_time_);
  double local = 0.0;
  const int s = LocateSegment(segment_start_, segment_duration_, t, &local);
  const double duration = segment_duration_[s];
  for (Eigen::Index j = 0; j < n; ++j) {
    const JointSegment& js = profile_[s][j];
    const double sign = js.distance >= 0.0 ? 1.0 : -1.0;
    double pos = 0.0, vel = 0.0, acc = 0.0;
    if (local >= duration) {
      pos = std::abs(js.distance);  // arrived (dwelling at the via point)
    } else if (js.peak_velocity > 0.0) {
      const double a = js.acceleration, v = js.peak_velocity, ta = js.accel_time;
      if (local < ta) {
        acc = a;
        vel = a * local;
        pos = 0.5 * a * local * local;
      } else if (local <= duration - ta) {
        vel = v;
        pos = 0.5 * a * ta * ta + v * (local - ta);
      } else {
        const double remaining = duration - local;
        acc = -a;
        vel = a * remaining;
        pos = std::abs(js.distance) - 0.5 * a * remaining * remaining;
      }
    }
    (*q)[j] = via_[s][j] + sign * pos;
    (*qd)[j] = sign * vel;
    (*qdd)[j] = sign * acc;
  }
}

// ------------------------------------------------------------------------------------------

bool QuinticTrajectory::Create(const std::vector<Eigen::VectorXd>& via_points,
                               const Eigen::VectorXd& vmax, const Eigen::VectorXd& amax,
                               double dwell_s, QuinticTrajectory* out, std::string* error) {
  CHECK(out != nullptr);
  CHECK(error != nullptr);
  if (!CheckViaPoints(via_points, vmax, amax, dwell_s, error)) return false;
  QuinticTrajectory trajectory;
  trajectory.via_ = via_points;
  trajectory.vmax_ = vmax;
  trajectory.dwell_ = dwell_s;
  double t = 0.0;
  for (size_t s = 0; s + 1 < via_points.size(); ++s) {
    double duration = 0.0;
    for (Eigen::Index j = 0; j < vmax.size(); ++j) {
      const double d = std::abs(via_points[s + 1][j] - via_points[s][j]);
      duration = std::max({duration, 15.0 * d / (8.0 * vmax[j]),
                           std::sqrt(10.0 * d / (std::sqrt(3.0) * amax[j]))});
    }
    trajectory.segment_start_.push_back(t);
    trajectory.segment_duration_.push_back(duration);
    t += duration + dwell_s;
  }
  trajectory.end_time_ = t;
  *out = trajectory;
  return true;
}

void QuinticTrajectory::Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                                 Eigen::VectorXd* qdd) const {
  t = std::clamp(t, 0.0, end_time_);
  double local = 0.0;
  const int s = LocateSegment(segment_start_, segment_duration_, t, &local);
  const double duration = segment_duration_[s];
  const Eigen::VectorXd distance = via_[s + 1] - via_[s];
  double shape = 0.0, shape_d = 0.0, shape_dd = 0.0;
  if (duration > 0.0) {
    const double u = local / duration;
    shape = u * u * u * (10.0 - 15.0 * u + 6.0 * u * u);
    shape_d = 30.0 * u * u * (1.0 - u) * (1.0 - u) / duration;
    shape_dd = 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u) / (duration * duration);
  }
  *q = via_[s] + shape * distance;
  *qd = shape_d * distance;
  *qdd = shape_dd * distance;
}

// ------------------------------------------------------------------------------------------

FourierTrajectory::FourierTrajectory(const Eigen::VectorXd& q0, const Eigen::MatrixXd& a,
                                     const Eigen::MatrixXd& b, double omega_rad_s,
                                     double duration_s)
    : q0_(q0), a_(a), b_(b), omega_(omega_rad_s), duration_(duration_s) {
  CHECK(a.rows() == q0.size() && b.rows() == q0.size() && a.cols() == b.cols())
      << "Fourier coefficients: expected " << q0.size() << " × L matrices";
  CHECK_GT(omega_rad_s, 0.0);
}

void FourierTrajectory::Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                                 Eigen::VectorXd* qdd) const {
  t = std::clamp(t, 0.0, duration_);
  *q = q0_;
  qd->setZero(q0_.size());
  qdd->setZero(q0_.size());
  for (Eigen::Index l = 0; l < a_.cols(); ++l) {
    const double w = omega_ * static_cast<double>(l + 1);
    const double s = std::sin(w * t), c = std::cos(w * t);
    *q += (a_.col(l) * s - b_.col(l) * c) / w;
    *qd += a_.col(l) * c + b_.col(l) * s;
    *qdd += (-a_.col(l) * s + b_.col(l) * c) * w;
  }
}

bool FourierTrajectory::Create(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                               const Eigen::VectorXd& vmax, const FourierOptions& options,
                               FourierTrajectory* out, std::string* error) {
  CHECK(out != nullptr);
  CHECK(error != nullptr);
  const Eigen::Index n = lower.size();
  if (n == 0 || upper.size() != n || vmax.size() != n) {
    *error = "lower, upper and vmax must have the same non-zero size";
    return false;
  }
  if (options.num_harmonics < 1 || !(options.base_frequency_hz > 0.0) ||
      !(options.num_periods > 0.0) || !(options.limit_margin > 0.0 && options.limit_margin <= 1.0)) {
    *error = "Fourier options: need num_harmonics >= 1, base_frequency_hz > 0, num_periods > 0, "
             "limit_margin in (0, 1]";
    return false;
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!(upper[j] > lower[j]) || !(vmax[j] > 0.0)) {
      *error = "joint " + std::to_string(j + 1) + ": need upper > lower and vmax > 0";
      return false;
    }
  }
  const int harmonics = options.num_harmonics;
  const double omega = 2.0 * M_PI * options.base_frequency_hz;
  std::mt19937 rng(options.seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Eigen::MatrixXd a(n, harmonics), b(n, harmonics);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (int l = 0; l < harmonics; ++l) {
      a(j, l) = unit(rng);
      b(j, l) = unit(rng);
    }
  }
  const Eigen::VectorXd centre = 0.5 * (lower + upper);
  const double period = 2.0 * M_PI / omega;
  // Peak excursion and speed over one period on a fine grid, then one scale per joint.
  FourierTrajectory unscaled(Eigen::VectorXd::Zero(n), a, b, omega, period);
  Eigen::VectorXd max_position = Eigen::VectorXd::Zero(n), max_velocity = Eigen::VectorXd::Zero(n);
  const int grid = 200 * harmonics;
  Eigen::VectorXd q, qd, qdd;
  for (int k = 0; k <= grid; ++k) {
    unscaled.Evaluate(period * k / grid, &q, &qd, &qdd);
    max_position = max_position.cwiseMax(q.cwiseAbs());
    max_velocity = max_velocity.cwiseMax(qd.cwiseAbs());
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    const double half_range = 0.5 * (upper[j] - lower[j]);
    const double scale = options.limit_margin *
                         std::min(half_range / max_position[j], vmax[j] / max_velocity[j]);
    a.row(j) *= scale;
    b.row(j) *= scale;
  }
  *out = FourierTrajectory(centre, a, b, omega, options.num_periods * period);
  return true;
}

}  // namespace dynid::data
