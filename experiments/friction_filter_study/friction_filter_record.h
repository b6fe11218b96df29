// experiments/friction_filter_study/friction_filter_record — the record the filters see: the
// time grid (simulated or of --measurements_csv, with the first sample after the transient) and,
// per case, the measurements z = [s, a, f] with, for a simulation, the true stick-slip motion and
// friction of models::SimulateStickSlip.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_RECORD_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_RECORD_H_

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <vector>

#include "dynid/models/friction_mass.h"

namespace dynid::friction_filter_study {

// The time grid of all cases, and the measured values of a measured record.
struct Record {
  bool measured = false;            // --measurements_csv given
  Eigen::VectorXd measured_time;    // (measured record only)
  Eigen::MatrixXd measured_values;  // [s, a, f] (measured record only)
  int num = 0;                      // samples
  Eigen::VectorXd times;
  int first_after = 0;  // the first sample at or after --transient_s
};

// One case: its measurements and, simulated, the true motion and friction.
struct CaseRecord {
  double true_mass = 0.0;  // (0 for a measured record)
  std::string file;        // case_mass<m>.csv or case_measured.csv
  dynid::models::Trajectory truth;
  Eigen::VectorXd friction;
  Eigen::MatrixXd measurements;
};

// Reads --measurements_csv (if given; before anything is written) and sets up the time grid;
// false with a message (exit code 2) on a bad record.
bool LoadRecord(Record* record, std::string* error);

// Case c: the measured record, or the stick-slip mass of true_masses[c] simulated (with noise of
// --noise_scale, seed --seed + c).
CaseRecord MakeCaseRecord(const Record& record, const std::vector<double>& true_masses, size_t c);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_RECORD_H_
