// experiments/tx40_study/tx40_record — the identified model (the 28 essential parameters first,
// then for 'base' the other base parameters) and the record it is identified from: the simulated
// TX40 experiment (with its true parameters) or the measured motor-side CSVs; also the number
// format of the study's tables and messages.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_RECORD_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_RECORD_H_

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>

#include "dynid/data/robot_simulator.h"
#include "dynid/data/trajectory.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "experiments/tx40_study/tx40_experiment.h"

namespace dynid::tx40_study {

struct Settings;

// value with `precision` significant digits; "" when not finite.
std::string Number(double value, int precision = 4);

// The model of the identified parameters (--parameters: "essential" or "base").
bool BuildModel(const models::SerialRobot& robot, const std::string& parameters,
                solvers::IdimModel* model, std::string* error);

// The joint-side record and what the IDIM-IV auxiliary model needs.
struct Record {
  Eigen::MatrixXd q_measured, tau_measured;
  double fs = 0.0;                                   // sampling rate (Hz)
  std::unique_ptr<data::JointTrajectory> reference;  // none for real data without a reference
  data::RobotSimulatorOptions controller;
  // Simulated data only; of experiment.simulation, SimulateRecord keeps only what
  // --write_measurements writes (q_reference, q_motor, tau_motor; all empty without it).
  Tx40Experiment experiment;
  Eigen::VectorXd theta_true;  // empty for real data
  std::string data_description;
  // What the IDIM-IV auxiliary model follows: the simulated reference, --reference_csv, the
  // substitute (kSubstituteReference …), or "" (no IDIM-IV).
  std::string iv_reference;
  bool substitute_reference = false;
};

// The statement every output of a run with the substitute reference carries.
inline constexpr char kSubstituteReference[] =
    "IDIM-IV with a substitute reference (smoothed measured positions)";

// The substitute reference of a record without one: every column of q (joint positions, rows =
// samples at fs) through a zero-phase Butterworth of order 4 at cutoff_hz (data::FiltFilt), with
// central-difference velocities and accelerations. False with *error when it cannot be filtered.
bool SmoothedReference(const Eigen::MatrixXd& q, double fs, double cutoff_hz,
                       std::unique_ptr<data::JointTrajectory>* reference, std::string* error);

// The simulated experiment's options for these settings (--simulation, its imperfections or
// --torque_noise_std, --duration_s) and noise/via-point seed.
Tx40ExperimentOptions ExperimentOptions(const Settings& settings, std::uint32_t seed);

// One sentence on what the simulation contains (ideal, or the realistic imperfections).
std::string ImperfectionsText(const Tx40ExperimentOptions& options);

// The simulated record of `seed` (settings.seed for the single run, the Monte Carlo's seeds
// otherwise), quiet: fills everything LoadRecord fills for simulated data.
bool SimulateRecord(const Settings& settings, const models::SerialRobot& robot,
                    const solvers::IdimModel& model, std::uint32_t seed, Record* record,
                    std::string* error);

// Simulates the experiment or reads the measured CSVs, and prints what the record is. Returns 0,
// or the exit code (1: simulation or model, 2: the CSVs) with *error set.
int LoadRecord(const Settings& settings, const models::SerialRobot& robot,
               const solvers::IdimModel& model, Record* record, std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_RECORD_H_
