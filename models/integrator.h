// models/integrator — the project's fixed-step integrator of ordinary differential equations
// x' = f(t, x): classical fourth-order Runge–Kutta (Hairer, Nørsett & Wanner (1993) §II.1).
//
// Every simulation of the project (mechanical models, robot and transmission simulators, the
// closed-loop PID simulation, the Hopfield network) integrates with these two functions, so the
// stage order and the arithmetic are the same everywhere:
//   k1 = f(t, x),  k2 = f(t + h/2, x + (h/2) k1),  k3 = f(t + h/2, x + (h/2) k2),
//   k4 = f(t + h, x + h k3),  x_next = x + (h/6) (k1 + 2 k2 + 2 k3 + k4).
//
// State: any type with x + s * y and s * y (s a double), e.g. an Eigen vector (fixed or dynamic
// size, several mechanical states stacked as [positions; velocities]). Derivative: a callable
// f(double t, const State& x) -> State returning dx/dt in the state's units per second.
#ifndef DYNID_MODELS_INTEGRATOR_H_
#define DYNID_MODELS_INTEGRATOR_H_

namespace dynid::models {

// One classical RK4 step of length h (s, any sign) from x at time t (s): returns the state at
// t + h. f(t, x) is evaluated four times, at t, t + h/2 (twice) and t + h.
template <class Derivative, class State>
State Rk4Step(const Derivative& f, double t, double h, const State& x) {
  const State k1 = f(t, x);
  const State k2 = f(t + 0.5 * h, State(x + 0.5 * h * k1));
  const State k3 = f(t + 0.5 * h, State(x + 0.5 * h * k2));
  const State k4 = f(t + h, State(x + h * k3));
  return State(x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4));
}

// `steps` (>= 0) classical RK4 steps of length h from x at t0: the state at t0 + steps·h. Step i
// starts at t0 + i·h (not by accumulating h), so the stage times are the same as those of a loop
// over i with t = t0 + i * h.
template <class Derivative, class State>
State IntegrateRk4(const Derivative& f, double t0, double h, int steps, State x) {
  for (int i = 0; i < steps; ++i) x = Rk4Step(f, t0 + i * h, h, x);
  return x;
}

}  // namespace dynid::models

#endif  // DYNID_MODELS_INTEGRATOR_H_
