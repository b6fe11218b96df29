// data/robot_simulator — closed-loop simulation of a robot identification experiment
// (Brunot et al. (2018) §2 and §4.1: the TX40 is identified in closed loop, positions and control
// signals sampled at 5 kHz).
//
// The simulator lives in dynid_data (it produces data sets) and uses models::SerialRobot for the
// direct dynamic model q'' = M^{-1}(tau − N) (Brunot et al. (2018) eq. 4).
//
// Loop, at every control instant t_k = k/f_c:
//   1. sensors: q_meas = Δq·round(q/Δq) (encoder resolution Δq per joint, none if empty);
//   2. PID per joint on e = q_ref − q_meas:
//        tau = Kp e + Ki Σ e Δt + Kd (q'_ref − v),   v = (q_meas,k − q_meas,k−1)/Δt (or the true q'
//        if velocity_from_encoder is false);
//   3. tau is held constant (zero-order hold) while the state is integrated over [t_k, t_k+1) by
//      `integration_substeps` classical RK4 steps on the direct dynamic model;
//   4. recorded: true q, q', q'' (q'' = DDM(q_k, q'_k, tau_k)), the applied tau, and the measured
//      torque tau_meas = tau + bias + N(0, σ²) (the "control signal" of Brunot et al. (2018) is the
//      applied torque; noise and bias model the current measurement).
// With options.unmodelled_torque set, the joints also feel a torque the robot model does not
// carry (e.g. friction that is not Coulomb + viscous): the dynamics integrate
// q'' = DDM(q, q', tau − tau_u(q, q', tau)) while tau (the control signal) is what is recorded.
// Motor-side channels go through the transmission: q_m = R q_meas and tau_m = R^{-T} tau_meas
// (tau = Rᵀ tau_m), R = options.motor_from_joint (identity if empty).
// The integrator starts from q_ref(0), q'_ref(0); with preload_integrator the PID integral
// starts at the gravity torque of q_ref(0) (the controller was holding the arm before the run;
// joints with Ki = 0 start from zero).
#ifndef DYNID_DATA_ROBOT_SIMULATOR_H_
#define DYNID_DATA_ROBOT_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <string>

#include <Eigen/Core>

#include "dynid/data/trajectory.h"
#include "dynid/models/serial_robot.h"

namespace dynid::data {

struct PidGains {
  Eigen::VectorXd kp, ki, kd;  // N m/rad, N m/(rad s), N m s/rad (N/m … for prismatic joints)
};

// Per joint, the loop J s³ + Kd s² + Kp s + Ki with J = M(q_nominal)_jj gets a triple pole at
// −2π·bandwidth_hz: Kd = 3Jω, Kp = 3Jω², Ki = Jω³.
PidGains TunePidGains(const models::SerialRobot& robot, const Eigen::VectorXd& q_nominal,
                      double bandwidth_hz);

// Bits of RobotSimulatorOptions::recorded_series, one per series of RobotSimulation.
enum RecordedSeries : unsigned {
  kRecordQReference = 1u << 0,
  kRecordQdReference = 1u << 1,
  kRecordQddReference = 1u << 2,
  kRecordQ = 1u << 3,
  kRecordQd = 1u << 4,
  kRecordQdd = 1u << 5,
  kRecordTau = 1u << 6,
  kRecordQMeasured = 1u << 7,
  kRecordTauMeasured = 1u << 8,
  kRecordQMotor = 1u << 9,
  kRecordTauMotor = 1u << 10,
};

struct RobotSimulatorOptions {
  double control_rate_hz = 5000.0;
  int integration_substeps = 1;  // RK4 steps per control period
  PidGains gains;
  bool velocity_from_encoder = true;
  bool preload_integrator = true;
  Eigen::VectorXd encoder_resolution_rad;  // empty: no quantisation
  Eigen::VectorXd torque_noise_std;        // empty: noiseless measured torque
  Eigen::VectorXd torque_bias;             // empty: no bias
  Eigen::MatrixXd motor_from_joint;        // R, n × n; empty: identity
  std::uint32_t seed = 1;
  // Joint torque tau_u(q, q', tau) outside the robot's model (n entries, added to what the
  // drives must overcome; tau the applied torque held over the period); empty: none. Called from
  // the integrator; it must not keep state.
  std::function<void(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                     const Eigen::VectorXd& tau, Eigen::VectorXd* tau_u)>
      unmodelled_torque;
  // Simulated time (s); ≤ 0 means the reference's duration.
  double duration_s = 0.0;
  // The series of RobotSimulation that are recorded (an OR of RecordedSeries bits; time is always
  // recorded); the others are left empty (0 × 0). Default: all. The recorded series are the same
  // numbers whatever else is recorded (a long run that needs q, q' and tau holds 4 of the 12
  // series: 10⁶ samples × 6 joints are 48 MB per series).
  unsigned recorded_series = ~0u;
  bool IsValid(int num_joints, std::string* why) const;
};

struct RobotSimulation {
  Eigen::VectorXd time;                                        // Ns control instants (s)
  Eigen::MatrixXd q_reference, qd_reference, qdd_reference;    // Ns × n
  Eigen::MatrixXd q, qd, qdd;                                  // true state, Ns × n
  Eigen::MatrixXd tau;                                         // applied joint torque, Ns × n
  Eigen::MatrixXd q_measured, tau_measured;                    // sensors, Ns × n
  Eigen::MatrixXd q_motor, tau_motor;                          // motor side, Ns × n
};

// Returns false with a message for invalid options or a diverging simulation (non-finite state).
bool SimulateClosedLoop(const models::SerialRobot& robot, const JointTrajectory& reference,
                        const RobotSimulatorOptions& options, RobotSimulation* out,
                        std::string* error);

}  // namespace dynid::data

#endif  // DYNID_DATA_ROBOT_SIMULATOR_H_
