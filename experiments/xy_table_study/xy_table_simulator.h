// SimulateXyTable — a simulated "true" xy-table (van de Molengraft (1990) ch. 5) for the
// identification study: what the identification models of models/xy_table.h lack is present
// here, so the study can show how an identified effective model absorbs it.
//
// True system (models::XyTableLagrangian with belt springs): coordinates
// q = [phi1, phi2, phi3, uA, uB] — motor angles, spindle far-end angle, and the displacements of
// the two slides relative to their belts (the belt ends are joined in a pre-stress unit between
// springs under each slide). Forces: spindle spring k_s (phi1 − phi3) and damping
// c_s (w1 − w3); belt springs k_b uA, k_b uB with damping c_b; motor torques K_i i_i and dry
// friction w_i sgn(w_i) (smooth sign with a sharp eps, default 0.01 rad/s). With
// `belt_springs = false` and zero damping and the model's eps this is exactly the flexible
// identification model (for acceptance tests with the model's structure).
//
// Control: PD on each motor angle, i_i = (Kp_i (phi_i,ref − phi_i) + Kd_i (w_i,ref − w_i)) / K_i,
// evaluated continuously (every integrator stage), with phi_ref = x_ref / r, y_ref / r.
// Paths: (1) point-to-point: the cubic 3τ² − 2τ³ from P0 to P1 in `stroke_time_s`, then back,
// `strokes` strokes in all (12 = six times forward and backward); (2) circle: centre, radius and
// period, the angular rate raised smoothly over `circle_ramp_s`.
// Integration: classical RK4 with `substeps` steps per sample period. Measurements (l = 8, the
// layout of the identification models): x_e, y_e (optical, Gaussian noise), accelerations along
// and orthogonal to the transverse slideway (accelerometers, Gaussian), phi1, phi2 (encoders,
// quantised to `encoder_resolution_rad`), i1, i2 (Gaussian). Fixed seed → reproducible.
#ifndef DYNID_DATA_XY_TABLE_SIMULATOR_H_
#define DYNID_DATA_XY_TABLE_SIMULATOR_H_

#include <Eigen/Core>
#include <string>

#include "dynid/models/xy_table.h"

namespace dynid::xy_table_study {

struct XyTableTrueSystem {
  // Geometry, torque constants and the true J1, J2, w1, w2 (inertia*_kg_m2, friction*_nm); its
  // spindle_stiffness_nm_per_rad and friction_smoothing_rad_per_s are overridden below.
  models::XyTableParameters table;
  double spindle_stiffness_nm_per_rad = 0.46;   // k_s > 0 (steel strip formula value)
  double spindle_damping_nms_per_rad = 2.0e-3;  // c_s >= 0
  bool belt_springs = true;                     // the ~11 Hz belt pre-stress mode
  double belt_stiffness_n_per_m = 2.2e4;        // k_b > 0 (with the slides: 10–11 Hz)
  double belt_damping_ns_per_m = 20.0;          // c_b >= 0 (about 3 % damping)
  double spindle_end_inertia_kg_m2 = 2e-5;      // J3 of the far belt wheel (> 0 with belts)
  double friction_smoothing_rad_per_s = 0.02;   // eps of the true (sharp) smooth sign, > 0
  // Viscous friction c_i w_i of the motor axes (N m s/rad, >= 0; the models have none): an
  // unmodelled effect a real belt drive with greased bearings has (default 0).
  double viscous_friction1_nms_per_rad = 0.0;
  double viscous_friction2_nms_per_rad = 0.0;

  bool IsValid(std::string* why) const;
};

// The same structure as the flexible identification model: no belt springs, no damping, the
// model's friction smoothing and the given true theta = [J1, J2, w1, w2, k].
XyTableTrueSystem XyTableModelStructureSystem(const models::XyTableParameters& table,
                                              const Eigen::Matrix<double, 5, 1>& theta);

// A true system drawn around `centre` (seeded, reproducible): each of J1, J2, w1, w2, the spindle
// stiffness k_s and damping c_s, the belt stiffness k_b and damping c_b and the far-wheel inertia
// J3 is multiplied by its own factor 1 + spread u, u uniform on [-1, 1] and independent
// (std::mt19937(seed), u = 2 (draw + 0.5) / 2^32 − 1, drawn in the order listed). Geometry,
// masses, torque constants, friction smoothing and viscous friction are kept: they are the
// models' known constants or the flags' unmodelled effects. The mode frequencies follow from
// the drawn values (XyTableClampedFrequencies). spread in [0, 1).
XyTableTrueSystem DrawXyTableTrueSystem(const XyTableTrueSystem& centre, unsigned seed,
                                        double spread);

enum class XyTablePath { kPointToPoint, kCircle };

struct XyTableExperimentOptions {
  XyTablePath path = XyTablePath::kPointToPoint;
  double sample_period_s = 2e-3;  // > 0
  int substeps = 40;              // RK4 steps per sample period, >= 1 (stiff friction)
  double duration_s = 9.96;       // record length (s) > 0
  // Point-to-point path.
  double stroke_time_s = 0.83;  // > 0
  int strokes = 12;             // >= 1; strokes after the last hold the end point
  Eigen::Vector2d start_m = Eigen::Vector2d(0.2, 0.3);
  Eigen::Vector2d end_m = Eigen::Vector2d(0.6, 0.9);
  // Circular path.
  Eigen::Vector2d circle_centre_m = Eigen::Vector2d(0.5, 0.6);
  double circle_radius_m = 0.25;  // > 0
  double circle_period_s = 1.5;   // > 0
  double circle_ramp_s = 0.5;     // >= 0
  // PD gains (N m/rad, N m s/rad).
  double kp1 = 20.0, kd1 = 0.4, kp2 = 2.0, kd2 = 0.04;
  // Noise (standard deviations); 0 = noise-free.
  double position_noise_m = 1e-4;
  double acceleration_noise_m_per_s2 = 0.05;
  double current_noise_a = 0.02;
  double encoder_resolution_rad = 2.0 * 3.14159265358979323846 / 2000.0;  // 0 = no quantisation
  unsigned seed = 4;

  bool IsValid(std::string* why) const;
};

struct XyTableRecord {
  Eigen::VectorXd time;                // N
  Eigen::MatrixXd measurements;        // N × 8 measured (noise, quantisation)
  Eigen::MatrixXd clean_measurements;  // N × 8 noise-free
  Eigen::MatrixXd positions;           // N × q (3 or 5) true coordinates
  Eigen::MatrixXd velocities;          // N × q
  Eigen::MatrixXd accelerations;       // N × q
  Eigen::MatrixXd reference;           // N × 4: x_ref, y_ref (m), phi1_ref, phi2_ref (rad)
  Eigen::VectorXd deformation_x_m;     // N: x_e − r phi1 (elastic deformation in x)
};

// Reference end-effector position, velocity, acceleration at t (each 2-vector, m).
void XyTableReference(const XyTableExperimentOptions& options, double t, Eigen::Vector2d* x,
                      Eigen::Vector2d* v, Eigen::Vector2d* a);

// Simulates the closed-loop experiment. Options and system must be valid (CHECK).
XyTableRecord SimulateXyTable(const XyTableTrueSystem& system,
                              const XyTableExperimentOptions& options);

// Undamped natural frequencies (Hz, ascending) of the true system linearised at q with the two
// motor angles clamped (the modes the spindle and belt springs form with the slides).
Eigen::VectorXd XyTableClampedFrequencies(const XyTableTrueSystem& system,
                                          const Eigen::VectorXd& q);

}  // namespace dynid::xy_table_study

#endif  // DYNID_DATA_XY_TABLE_SIMULATOR_H_
