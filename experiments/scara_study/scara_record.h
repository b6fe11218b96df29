// experiments/scara_study/scara_record — the record the estimators see: the closed-loop simulation
// of the SCARA tracking a multisine reference (true parameters, PID gains, noise-free kinematics,
// joint states with the published sensor noise, measured torques), or a measured record read from
// --measurements_csv (positions, torques, optional velocities; the kinematics of the regressors
// by IRWSM2), and its description in summary.json.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_RECORD_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_RECORD_H_

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "dynid/data/robot_simulator.h"
#include "dynid/data/trajectory.h"
#include "experiments/scara_study/scara_flags.h"

namespace dynid::scara_study {

// Multisine reference exciting the four base parameters: q2 swings about ±1.6 rad so cos q2 and
// sin q2 both vary, both revolute joints accelerate independently, and the stroke accelerates
// (d3'' − g changes) — the regressor has full column rank with a moderate condition number.
class MultisineReference : public data::JointTrajectory {
 public:
  explicit MultisineReference(double duration) : duration_(duration) {}
  int num_joints() const override { return 3; }
  double duration() const override { return duration_; }
  void Evaluate(double t, Eigen::VectorXd* q, Eigen::VectorXd* qd,
                Eigen::VectorXd* qdd) const override {
    t = std::clamp(t, 0.0, duration_);
    q->setZero(3);
    qd->setZero(3);
    qdd->setZero(3);
    for (const Term& term : kTerms) {
      const double w = 2.0 * M_PI * term.f;
      (*q)(term.joint) += term.a * std::sin(w * t + term.phi);
      (*qd)(term.joint) += term.a * w * std::cos(w * t + term.phi);
      (*qdd)(term.joint) -= term.a * w * w * std::sin(w * t + term.phi);
    }
    (*q)(2) += 0.15;
  }

 private:
  struct Term {
    int joint;
    double a, f, phi;
  };
  static constexpr Term kTerms[6] = {{0, 1.0, 0.10, 0.0}, {0, 0.4, 0.37, 1.0}, {1, 1.2, 0.13, 0.5},
                                     {1, 0.5, 0.41, 0.0}, {2, 0.1, 0.25, 0.0}, {2, 0.03, 0.9, 0.3}};
  double duration_;
};

// The record and what the estimators see of it.
struct Record {
  Eigen::Vector4d truth;         // IZZ1, IZZ2, mr, m3 of the simulated robot
  Eigen::Vector3d torque_noise;  // std of the measured torques [N m, N m, N]
  data::PidGains gains;
  data::RobotSimulation sim;
  int num = 0;              // samples
  Vector6d r_std;           // measurement noise std: the published R, scaled by --noise_scale
  Eigen::MatrixXd r_paper;  // diag(r_std²)
  Eigen::MatrixXd y_clean;  // Ns × 6 joint positions and velocities [q1, q1', q2, q2', d3, d3']
  Eigen::MatrixXd y;        // y_clean with sensor noise: what the recursive filters see
  double dt = 0.0;          // sample period [s]
  double duration_s = 0.0;  // record length [s]
  std::string kinematics;   // where the q, q', q'' of the LS and HNN regressors come from
  // A simulation only: the kinematics of LS_irw and HNN_irw, the same noisy data the filters see,
  // pre-processed by IRWSM2 (solvers/irw_smoother.h, NVR by maximum likelihood per column):
  // q from the noisy positions y(:, 0, 2, 4); q' and q'' from the noisy velocities
  // y(:, 1, 3, 5) (the smoothed signal and its derivative). Ns × 3 each; the fits in irw_fits.
  Eigen::MatrixXd q_irw, qd_irw, qdd_irw;
  nlohmann::json irw_fits;
  // A measured record (--measurements_csv): truth NaN, no PID gains, no y_clean; y holds the
  // measured positions and velocities, sim.q_measured the measured positions, sim.q, qd, qdd the
  // IRWSM2 kinematics and sim.tau = sim.tau_measured the measured torques.
  bool measured = false;
  nlohmann::json source;  // file, velocity source, fitted NVRs
};

// The checked CSV, before any smoothing.
struct MeasuredColumns {
  std::string path;
  Eigen::VectorXd time;        // N [s]
  Eigen::MatrixXd positions;   // N × 3 [rad, rad, m]
  Eigen::MatrixXd torques;     // N × 3 [N m, N m, N]
  Eigen::MatrixXd velocities;  // N × 3 [rad/s, rad/s, m/s]; empty without dq1,dq2,dd3
  double step = 0.0;           // the record's mean step [s]
};

// One draw per entry in row order: the record and the sign statistics draw their noise alike.
Eigen::MatrixXd AddMeasurementNoise(const Eigen::MatrixXd& y_clean, const Vector6d& r_std,
                                    std::uint32_t seed);

// The closed-loop record of models::MakeScara3 tracking `reference` (--dt, --pid_bandwidth_hz)
// with the noise seed `seed` (--seed for the single run, one per run of --monte_carlo), its
// torques measured with the std torque_noise, and the IRWSM2 kinematics of its noisy joint
// states; false with a message. Reads the flags only, so runs on several threads are independent.
bool SimulateRecord(const data::JointTrajectory& reference, const Eigen::Vector3d& torque_noise,
                    std::uint64_t seed, Record* record, std::string* error);

// Reads and checks --measurements_csv; false with a message naming the file, line and column.
bool ReadMeasuredColumns(const std::string& path, MeasuredColumns* columns, std::string* error);

// The record the stages see, from the checked CSV (see scara_study.cc): the filters assume the
// std r_std; false with a message.
bool MakeMeasuredRecord(const MeasuredColumns& columns, const Eigen::Vector3d& torque_noise,
                        const Vector6d& r_std, Record* record, std::string* error);

// The record's part of summary.json: flags, samples, measurement std, truth, torque RMS (and the
// PID gains and tracking of a simulation, the source of a measured record).
void DescribeRecord(const Record& record, nlohmann::json* summary);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_RECORD_H_
