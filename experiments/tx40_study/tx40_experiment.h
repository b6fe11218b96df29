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
  double pid_bandwidth_hz = 10.0;     // triple-pole PID tuned on the inertia at the start pose
  double position_fraction = 0.7;     // via points uniformly within this fraction of the limits
  double velocity_fraction = 0.8;     // of the TX40 velocity limits
  double acceleration_per_velocity = 4.0;  // amax = this × vmax (1/s)
  double dwell_s = 0.05;
  double torque_noise_std_nm = 0.3;   // joint side, every joint
  bool quantise_encoders = true;
  // Scale of the simulated Coulomb friction (fc1..fc6, fcm6); 0 removes it (a diagnostic: it
  // isolates the bias that sign(q') switches cause from that of noise and quantisation).
  double coulomb_scale = 1.0;
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
  models::BaseParameterSet base;       // closed-form base parameters of the TX40
  Eigen::VectorXd theta_standard;      // the simulated (CAD) standard parameters
  Eigen::VectorXd theta_base;          // K theta_standard
  double base_regressor_condition = 0.0;             // raw
  double base_regressor_condition_normalised = 0.0;  // unit-norm columns
  double max_tracking_error_rad = 0.0;
};

bool SimulateTx40Experiment(const Tx40ExperimentOptions& options, Tx40Experiment* out,
                            std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_DATA_TX40_EXPERIMENT_H_
