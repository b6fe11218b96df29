#include "experiments/xy_table_study/xy_table_simulator.h"

#include <glog/logging.h>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dynid/models/integrator.h"

namespace dynid::xy_table_study {

bool XyTableTrueSystem::IsValid(std::string* why) const {
  if (!table.IsValid(why)) return false;
  auto fail = [why](const char* message) {
    if (why) *why = message;
    return false;
  };
  if (!(spindle_stiffness_nm_per_rad > 0.0)) return fail("spindle stiffness must be positive");
  if (!(spindle_damping_nms_per_rad >= 0.0)) return fail("spindle damping must be >= 0");
  if (!(belt_stiffness_n_per_m > 0.0)) return fail("belt stiffness must be positive");
  if (!(belt_damping_ns_per_m >= 0.0)) return fail("belt damping must be >= 0");
  if (belt_springs && !(spindle_end_inertia_kg_m2 > 0.0)) {
    return fail("spindle end inertia must be positive with belt springs");
  }
  if (!(friction_smoothing_rad_per_s > 0.0)) return fail("friction smoothing must be positive");
  if (!(viscous_friction1_nms_per_rad >= 0.0 && viscous_friction2_nms_per_rad >= 0.0)) {
    return fail("viscous friction must be >= 0");
  }
  return true;
}

XyTableTrueSystem DrawXyTableTrueSystem(const XyTableTrueSystem& centre, unsigned seed,
                                        double spread) {
  CHECK(spread >= 0.0 && spread < 1.0) << "truth spread " << spread << " outside [0, 1)";
  std::mt19937 rng(seed);
  auto factor = [&]() {
    const double u = 2.0 * (static_cast<double>(rng()) + 0.5) / 4294967296.0 - 1.0;
    return 1.0 + spread * u;
  };
  XyTableTrueSystem s = centre;
  s.table.inertia1_kg_m2 *= factor();
  s.table.inertia2_kg_m2 *= factor();
  s.table.friction1_nm *= factor();
  s.table.friction2_nm *= factor();
  s.spindle_stiffness_nm_per_rad *= factor();
  s.spindle_damping_nms_per_rad *= factor();
  s.belt_stiffness_n_per_m *= factor();
  s.belt_damping_ns_per_m *= factor();
  s.spindle_end_inertia_kg_m2 *= factor();
  return s;
}

XyTableTrueSystem XyTableModelStructureSystem(const models::XyTableParameters& table,
                                              const Eigen::Matrix<double, 5, 1>& theta) {
  XyTableTrueSystem system;
  system.table = table;
  system.table.inertia1_kg_m2 = theta(0);
  system.table.inertia2_kg_m2 = theta(1);
  system.table.friction1_nm = theta(2);
  system.table.friction2_nm = theta(3);
  system.table.spindle_stiffness_nm_per_rad = theta(4);
  system.spindle_stiffness_nm_per_rad = theta(4);
  system.spindle_damping_nms_per_rad = 0.0;
  system.belt_springs = false;
  system.belt_damping_ns_per_m = 0.0;
  system.friction_smoothing_rad_per_s = table.friction_smoothing_rad_per_s;
  return system;
}

bool XyTableExperimentOptions::IsValid(std::string* why) const {
  auto fail = [why](const char* message) {
    if (why) *why = message;
    return false;
  };
  if (!(sample_period_s > 0.0)) return fail("sample_period_s must be positive");
  if (substeps < 1) return fail("substeps must be >= 1");
  if (!(duration_s > 0.0)) return fail("duration_s must be positive");
  if (!(stroke_time_s > 0.0)) return fail("stroke_time_s must be positive");
  if (strokes < 1) return fail("strokes must be >= 1");
  if (!(circle_radius_m > 0.0)) return fail("circle_radius_m must be positive");
  if (!(circle_period_s > 0.0)) return fail("circle_period_s must be positive");
  if (!(circle_ramp_s >= 0.0)) return fail("circle_ramp_s must be >= 0");
  if (!(kp1 > 0.0 && kd1 >= 0.0 && kp2 > 0.0 && kd2 >= 0.0)) return fail("bad PD gains");
  if (!(position_noise_m >= 0.0 && acceleration_noise_m_per_s2 >= 0.0 && current_noise_a >= 0.0 &&
        encoder_resolution_rad >= 0.0)) {
    return fail("noise levels must be >= 0");
  }
  return true;
}

void XyTableReference(const XyTableExperimentOptions& options, double t, Eigen::Vector2d* x,
                      Eigen::Vector2d* v, Eigen::Vector2d* a) {
  if (options.path == XyTablePath::kPointToPoint) {
    const double T = options.stroke_time_s;
    int stroke = static_cast<int>(std::floor(t / T));
    double tau = t / T - stroke;
    if (t < 0.0) stroke = 0, tau = 0.0;
    if (stroke >= options.strokes) stroke = options.strokes - 1, tau = 1.0;
    const bool forward = stroke % 2 == 0;
    const Eigen::Vector2d from = forward ? options.start_m : options.end_m;
    const Eigen::Vector2d delta = (forward ? options.end_m : options.start_m) - from;
    const double s = tau * tau * (3.0 - 2.0 * tau);
    const double ds = (tau > 0.0 && tau < 1.0) ? 6.0 * tau * (1.0 - tau) / T : 0.0;
    const double dds = (tau >= 0.0 && tau < 1.0) ? (6.0 - 12.0 * tau) / (T * T) : 0.0;
    *x = from + s * delta;
    *v = ds * delta;
    *a = dds * delta;
    return;
  }
  // Circle: angular rate Omega (3τ² − 2τ³) during the ramp, Omega afterwards.
  const double omega = 2.0 * M_PI / options.circle_period_s, Tr = options.circle_ramp_s;
  double angle, rate, rate_dot;
  if (t <= 0.0) {
    angle = rate = rate_dot = 0.0;
  } else if (t < Tr) {
    const double tau = t / Tr;
    angle = omega * Tr * (std::pow(tau, 3) - 0.5 * std::pow(tau, 4));
    rate = omega * tau * tau * (3.0 - 2.0 * tau);
    rate_dot = omega * 6.0 * tau * (1.0 - tau) / Tr;
  } else {
    angle = omega * (t - 0.5 * Tr);
    rate = omega;
    rate_dot = 0.0;
  }
  const double R = options.circle_radius_m, c = std::cos(angle), s = std::sin(angle);
  *x = options.circle_centre_m + R * Eigen::Vector2d(c, s);
  *v = R * rate * Eigen::Vector2d(-s, c);
  *a = R * rate_dot * Eigen::Vector2d(-s, c) - R * rate * rate * Eigen::Vector2d(c, s);
}

namespace {

double SmoothSign(double w, double eps) { return w / std::sqrt(w * w + eps * eps); }

struct Dynamics {
  const XyTableTrueSystem& system;
  const XyTableExperimentOptions& options;
  models::XyTableLagrangian lagrangian;
  int size;

  Dynamics(const XyTableTrueSystem& s, const XyTableExperimentOptions& o)
      : system(s),
        options(o),
        lagrangian(s.table, s.belt_springs, s.belt_springs ? s.spindle_end_inertia_kg_m2 : 0.0),
        size(lagrangian.size()) {}

  Eigen::Vector2d Currents(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double t) const {
    Eigen::Vector2d x, dx, ddx;
    XyTableReference(options, t, &x, &dx, &ddx);
    const models::XyTableParameters& p = system.table;
    const double r = p.wheel_radius_m;
    return Eigen::Vector2d((options.kp1 * (x(0) / r - q(0)) + options.kd1 * (dx(0) / r - v(0))) /
                               p.torque_constant1_nm_per_a,
                           (options.kp2 * (x(1) / r - q(1)) + options.kd2 * (dx(1) / r - v(1))) /
                               p.torque_constant2_nm_per_a);
  }

  Eigen::VectorXd Accelerations(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                const Eigen::Vector2d& i) const {
    const models::XyTableParameters& p = system.table;
    const double eps = system.friction_smoothing_rad_per_s;
    Eigen::VectorXd f = -lagrangian.Coriolis(q, v, p.inertia1_kg_m2, p.inertia2_kg_m2);
    const double spindle = system.spindle_stiffness_nm_per_rad * (q(0) - q(2)) +
                           system.spindle_damping_nms_per_rad * (v(0) - v(2));
    f(0) += p.torque_constant1_nm_per_a * i(0) - p.friction1_nm * SmoothSign(v(0), eps) -
            system.viscous_friction1_nms_per_rad * v(0) - spindle;
    f(1) += p.torque_constant2_nm_per_a * i(1) - p.friction2_nm * SmoothSign(v(1), eps) -
            system.viscous_friction2_nms_per_rad * v(1);
    f(2) += spindle;
    if (size == 5) {
      for (int j = 3; j < 5; ++j) {
        f(j) -= system.belt_stiffness_n_per_m * q(j) + system.belt_damping_ns_per_m * v(j);
      }
    }
    const Eigen::MatrixXd M = lagrangian.MassMatrix(q, p.inertia1_kg_m2, p.inertia2_kg_m2);
    return M.ldlt().solve(f);
  }
};

}  // namespace

XyTableRecord SimulateXyTable(const XyTableTrueSystem& system,
                              const XyTableExperimentOptions& options) {
  std::string why;
  CHECK(system.IsValid(&why)) << "xy-table true system: " << why;
  CHECK(options.IsValid(&why)) << "xy-table experiment: " << why;
  const Dynamics dynamics(system, options);
  const int n = dynamics.size;
  const double r = system.table.wheel_radius_m, d = system.table.slideway_distance_m;
  const int num_samples =
      static_cast<int>(std::floor(options.duration_s / options.sample_period_s + 1e-9)) + 1;

  XyTableRecord out;
  out.time.resize(num_samples);
  out.measurements.resize(num_samples, 8);
  out.clean_measurements.resize(num_samples, 8);
  out.positions.resize(num_samples, n);
  out.velocities.resize(num_samples, n);
  out.accelerations.resize(num_samples, n);
  out.reference.resize(num_samples, 4);
  out.deformation_x_m.resize(num_samples);

  // Start at rest on the reference, undeformed.
  Eigen::Vector2d x0, dx0, ddx0;
  XyTableReference(options, 0.0, &x0, &dx0, &ddx0);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(n), v = Eigen::VectorXd::Zero(n);
  q(0) = q(2) = x0(0) / r;
  q(1) = x0(1) / r;

  // Stacked state [q; q'].
  auto derivative = [&](double t, const Eigen::VectorXd& x) {
    const Eigen::VectorXd qq = x.head(n), vv = x.tail(n);
    Eigen::VectorXd dx(2 * n);
    dx.head(n) = vv;
    dx.tail(n) = dynamics.Accelerations(qq, vv, dynamics.Currents(qq, vv, t));
    return dx;
  };

  std::mt19937 rng(options.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double h = options.sample_period_s / options.substeps;
  Eigen::VectorXd state(2 * n);
  for (int k = 0; k < num_samples; ++k) {
    const double t = k * options.sample_period_s;
    if (k > 0) {
      state << q, v;
      state =
          models::IntegrateRk4(derivative, t - options.sample_period_s, h, options.substeps, state);
      q = state.head(n);
      v = state.tail(n);
    }
    const Eigen::Vector2d current = dynamics.Currents(q, v, t);
    const Eigen::VectorXd a = dynamics.Accelerations(q, v, current);
    const Eigen::Vector2d pe = dynamics.lagrangian.EffectorPosition(q);
    const Eigen::Vector2d ae = dynamics.lagrangian.EffectorAcceleration(q, v, a);
    const double xA = r * q(0) + (n == 5 ? q(3) : 0.0);
    const double xB = r * q(2) + (n == 5 ? q(4) : 0.0);
    const double slope = (xB - xA) / d, norm = std::sqrt(1.0 + slope * slope);
    Eigen::Matrix<double, 8, 1> z;
    z << pe(0), pe(1), (slope * ae(0) + ae(1)) / norm, (ae(0) - slope * ae(1)) / norm, q(0), q(1),
        current(0), current(1);
    out.time(k) = t;
    out.clean_measurements.row(k) = z.transpose();
    Eigen::Matrix<double, 8, 1> zm = z;
    for (int j = 0; j < 2; ++j) zm(j) += options.position_noise_m * normal(rng);
    for (int j = 2; j < 4; ++j) zm(j) += options.acceleration_noise_m_per_s2 * normal(rng);
    if (options.encoder_resolution_rad > 0.0) {
      for (int j = 4; j < 6; ++j) {
        zm(j) = options.encoder_resolution_rad * std::round(zm(j) / options.encoder_resolution_rad);
      }
    }
    for (int j = 6; j < 8; ++j) zm(j) += options.current_noise_a * normal(rng);
    out.measurements.row(k) = zm.transpose();
    out.positions.row(k) = q.transpose();
    out.velocities.row(k) = v.transpose();
    out.accelerations.row(k) = a.transpose();
    Eigen::Vector2d xr, vr, ar;
    XyTableReference(options, t, &xr, &vr, &ar);
    out.reference.row(k) << xr(0), xr(1), xr(0) / r, xr(1) / r;
    out.deformation_x_m(k) = pe(0) - r * q(0);
  }
  return out;
}

Eigen::VectorXd XyTableClampedFrequencies(const XyTableTrueSystem& system,
                                          const Eigen::VectorXd& q) {
  const models::XyTableLagrangian lagrangian(
      system.table, system.belt_springs,
      system.belt_springs ? system.spindle_end_inertia_kg_m2 : 0.0);
  CHECK_EQ(q.size(), lagrangian.size()) << "q for the clamped frequencies";
  const Eigen::MatrixXd M =
      lagrangian.MassMatrix(q, system.table.inertia1_kg_m2, system.table.inertia2_kg_m2);
  // Free coordinates: phi3 (and uA, uB).
  std::vector<int> free = {2};
  if (system.belt_springs) free.push_back(3), free.push_back(4);
  const int f = static_cast<int>(free.size());
  Eigen::MatrixXd Mf(f, f), Kf = Eigen::MatrixXd::Zero(f, f);
  for (int i = 0; i < f; ++i) {
    for (int j = 0; j < f; ++j) Mf(i, j) = M(free[i], free[j]);
  }
  Kf(0, 0) = system.spindle_stiffness_nm_per_rad;
  for (int i = 1; i < f; ++i) Kf(i, i) = system.belt_stiffness_n_per_m;
  Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> eig(Kf, Mf);
  Eigen::VectorXd hz = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt() / (2.0 * M_PI);
  std::sort(hz.data(), hz.data() + hz.size());
  return hz;
}

}  // namespace dynid::xy_table_study
