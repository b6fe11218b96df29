// experiments/tx40_study/tx40_experiment — the default simulated TX40 identification experiment,
// mirroring Brunot et al. (2018) §4.1: closed-loop PID control at 5 kHz, trapezoidal-velocity
// ("smoothed bang-bang acceleration") reference moves between random via points inside the joint
// limits, encoder quantisation with the TX40 resolutions, noisy torque (control-signal)
// measurements, motor-side channels through the TX40 transmission (models/tx40.h).
//
// Besides the data it reports the condition number of the stacked base regressor evaluated on the
// true (q, q', q'') (every `condition_decimation`-th sample), raw and with unit-norm columns; seed
// 000 reports cond ≈ 200 for its filtered, decimated observation matrix.
#ifndef DYNID_DATA_TX40_EXPERIMENT_H_
#define DYNID_DATA_TX40_EXPERIMENT_H_

#include <cstdint>
#include <string>

#include "dynid/data/robot_simulator.h"
#include "dynid/models/base_parameters.h"
#include "dynid/models/serial_robot.h"

namespace dynid::tx40_study {

struct Tx40ExperimentOptions {
  double duration_s = 7.0;
  double control_rate_hz = 5000.0;
  double pid_bandwidth_hz = 10.0;  // triple-pole PID tuned on the inertia at the start pose
  double position_fraction = 0.7;  // via points uniformly within this fraction of the limits
  double velocity_fraction = 0.8;  // of the TX40 velocity limits
  double acceleration_per_velocity = 4.0;  // amax = this × vmax (1/s)
  double dwell_s = 0.05;
  double torque_noise_std_nm = 0.3;  // joint side, every joint
  bool quantise_encoders = true;
  // Scale of the simulated Coulomb friction (fc1..fc6, fcm6); 0 removes it (a diagnostic: it
  // isolates the bias that sign(q') switches cause from that of noise and quantisation).
  double coulomb_scale = 1.0;
  // Imperfections of a real robot that the identified model (Coulomb + viscous friction, white
  // torque noise) does not carry; all off here (the ideal experiment), set by the study's
  // realistic simulation (ApplyImperfections). Friction of every drive (joints 1–6 and
  // motor 6 on q5' + q6', its Coulomb level fc):
  //   tau_f = fc sign(q') (1 + a sign(q')) + fs exp(−(q'/v_s)²) sign(q') + fv q',
  // a Stribeck excess fs = stribeck_ratio × fc (static friction fc + fs decaying to fc within a
  // few v_s; Armstrong-Hélouvry et al. 1994) and a direction asymmetry a = friction_asymmetry
  // (Coulomb level fc (1 + a) forwards, fc (1 − a) backwards).
  double stribeck_ratio = 0.0;
  double stribeck_velocity_rad_s = 0.03;
  double friction_asymmetry = 0.0;
  // Load-dependent (gear) friction: + load_friction |tau_j| sign(q'_j) on every joint, tau the
  // applied torque (a gear efficiency below 1; Hamon et al. (2010)).
  double load_friction = 0.0;
  // Motor-side torque measurement (the motor current times the torque constant): white noise of
  // this std per motor, then quantised to this LSB (0: none), both in N m at the motor.
  double motor_torque_noise_std_nm = 0.0;
  double motor_torque_lsb_nm = 0.0;
  // Encoder resolution, × the joint-side values of Brunot et al. (2018) Table 1
  // (models::Tx40EncoderResolutionRad), when quantise_encoders.
  double encoder_resolution_scale = 1.0;
  int condition_decimation = 10;
  std::uint32_t seed = 2018;
  models::CouplingForm coupling_form = models::CouplingForm::kGautier;
  bool IsValid(std::string* why) const;
};

struct Tx40Experiment {
  data::RobotSimulation simulation;
  // The simulator options actually used (PID gains, control rate, sensors, transmission): with a
  // replay of simulation.q_reference they re-run the same closed loop on another parameter set
  // (IDIM-IV instruments, Brunot et al. (2018) §2.2).
  data::RobotSimulatorOptions simulator_options;
  models::BaseParameterSet base;                     // closed-form base parameters of the TX40
  Eigen::VectorXd theta_standard;                    // the simulated (CAD) standard parameters
  Eigen::VectorXd theta_base;                        // K theta_standard
  double base_regressor_condition = 0.0;             // raw
  double base_regressor_condition_normalised = 0.0;  // unit-norm columns
  double max_tracking_error_rad = 0.0;
};

// The imperfections of the study's realistic simulation (its defaults; the README of the study
// gives the reasons for each level): Stribeck excess 0.5 fc at v_s = 0.05 rad/s, direction
// asymmetry 0.2, no load-dependent friction, motor-side torque noise 0.005 N m with an LSB of
// 0.002 N m, Table 1 encoders; the joint-side white noise off.
struct RealisticImperfections {
  double stribeck_ratio, stribeck_velocity_rad_s, friction_asymmetry, load_friction;
  double motor_torque_noise_std_nm, motor_torque_lsb_nm, encoder_resolution_scale;
};
RealisticImperfections DefaultRealisticImperfections();
void ApplyImperfections(const RealisticImperfections& imperfections,
                        Tx40ExperimentOptions* options);

bool SimulateTx40Experiment(const Tx40ExperimentOptions& options, Tx40Experiment* out,
                            std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_DATA_TX40_EXPERIMENT_H_
