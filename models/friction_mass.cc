#include "dynid/models/friction_mass.h"

#include <algorithm>
#include <cmath>

#include <glog/logging.h>

#include "dynid/models/model_linearization.h"

namespace dynid::models {

FrictionMass::FrictionMass(const Parameters& parameters) : parameters_(parameters) {
  CHECK_GT(parameters_.smoothing_velocity_m_per_s, 0.0)
      << "expected a positive smoothing velocity, got " << parameters_.smoothing_velocity_m_per_s;
}

ModelInfo FrictionMass::Info() const {
  ModelInfo info;
  info.name = "friction_mass";
  info.positions = {{"s", "m"}};
  info.inputs = {{"f", "N"}};
  info.parameters = {{"mass", "kg"}, {"friction", "N"}};
  info.measurements = {{"s_measured", "m"}, {"a_measured", "m/s^2"}, {"f_measured", "N"}};
  info.equations = {{"force_balance", "N"}};
  return info;
}

FrictionMass::ParameterVector FrictionMass::NominalParameters() const {
  return ParameterVector(parameters_.mass_kg, parameters_.friction_n);
}

namespace {

double Sign(double x) { return (x > 0.0) - (x < 0.0); }

// One RK4 step of the sliding mass, friction direction fixed to `direction` over the step
// (the step never crosses v = 0; the caller cuts it there).
void SlideStep(const StickSlipParameters& p, const InputFunction& force, double direction,
               double t, double h, double* s, double* v) {
  auto accel = [&](double tt) {
    double f;
    force(tt, &f);
    return (f - p.dynamic_friction_n * direction) / p.mass_kg;
  };
  const double a1 = accel(t), a2 = accel(t + 0.5 * h), a4 = accel(t + h);
  // The acceleration does not depend on (s, v) while sliding, so RK4 reduces to Simpson's rule.
  const double v0 = *v;
  *v = v0 + h / 6.0 * (a1 + 4.0 * a2 + a4);
  *s += h * v0 + h * h / 6.0 * (a1 + 2.0 * a2);
}

}  // namespace

void SimulateStickSlip(const StickSlipParameters& parameters, const InputFunction& force,
                       const Eigen::VectorXd& times, double s0, double v0, double max_step_s,
                       Trajectory* trajectory, Eigen::VectorXd* friction_force) {
  CHECK(trajectory != nullptr) << "expected a trajectory, got nullptr";
  CHECK_GT(parameters.mass_kg, 0.0) << "expected a positive mass";
  CHECK_GE(parameters.static_friction_n, parameters.dynamic_friction_n)
      << "expected static friction >= dynamic friction";
  CHECK_GT(max_step_s, 0.0) << "expected a positive step, got " << max_step_s;
  const int num_samples = static_cast<int>(times.size());
  CHECK_GE(num_samples, 1) << "expected at least one output time";
  Trajectory& out = *trajectory;
  out.time = times;
  out.positions.resize(num_samples, 1);
  out.velocities.resize(num_samples, 1);
  out.accelerations.resize(num_samples, 1);
  out.inputs.resize(num_samples, 1);
  out.measurements.resize(num_samples, 3);
  if (friction_force != nullptr) friction_force->resize(num_samples);

  const double ws = parameters.static_friction_n;
  const double wd = parameters.dynamic_friction_n;
  double s = s0, v = v0, t = times(0);
  // Tiny velocities left by round-off at a crossing are snapped to zero.
  const double v_snap = 1e-12;
  for (int k = 0; k < num_samples; ++k) {
    const double t_end = times(k);
    CHECK(k == 0 || t_end > times(k - 1)) << "expected strictly increasing times at " << k;
    while (t < t_end) {
      const double h = std::min(max_step_s, t_end - t);
      double f;
      force(t, &f);
      if (std::abs(v) <= v_snap) {
        v = 0.0;
        if (std::abs(f) <= ws) {  // stuck: nothing moves during this step
          t += h;
          continue;
        }
        // Break-away in the direction of the force.
        double s1 = s, v1 = 0.0;
        SlideStep(parameters, force, Sign(f), t, h, &s1, &v1);
        if (Sign(v1) != Sign(f)) {  // cannot leave zero velocity within this step: still stuck
          t += h;
          continue;
        }
        s = s1, v = v1, t += h;
        continue;
      }
      const double direction = Sign(v);
      double s1 = s, v1 = v;
      SlideStep(parameters, force, direction, t, h, &s1, &v1);
      if (Sign(v1) == direction) {
        s = s1, v = v1, t += h;
        continue;
      }
      // v crosses zero inside the step: cut the step there. Secant start, then Newton steps on
      // v(t + tau) = 0 (while sliding, v' is the known acceleration (f - w_d dir) / m).
      double tau = h * v / (v - v1);
      for (int it = 0; it < 3; ++it) {
        double s2 = s, v2 = v;
        SlideStep(parameters, force, direction, t, tau, &s2, &v2);
        double f2;
        force(t + tau, &f2);
        const double a2 = (f2 - wd * direction) / parameters.mass_kg;
        if (a2 == 0.0) break;
        tau = std::clamp(tau - v2 / a2, 0.0, h);
      }
      SlideStep(parameters, force, direction, t, tau, &s, &v);
      v = 0.0;
      t += tau;
    }
    double f;
    force(t_end, &f);
    double a, w;
    if (v == 0.0) {
      if (std::abs(f) <= ws) {
        a = 0.0, w = f;
      } else {
        w = ws * Sign(f);
        a = (f - w) / parameters.mass_kg;
      }
    } else {
      w = wd * Sign(v);
      a = (f - w) / parameters.mass_kg;
    }
    out.positions(k, 0) = s;
    out.velocities(k, 0) = v;
    out.accelerations(k, 0) = a;
    out.inputs(k, 0) = f;
    out.measurements.row(k) << s, a, f;
    if (friction_force != nullptr) (*friction_force)(k) = w;
  }
}

template void LinearizeModelInto<FrictionMass>(
    const FrictionMass&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models
