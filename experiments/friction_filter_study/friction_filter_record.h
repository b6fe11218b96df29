// experiments/friction_filter_study/friction_filter_record — the record the filters see: the
// time grid (simulated or of --measurements_csv, with the first sample after the transient) and,
// per case, the measurements z = [s, a, f] with, for a simulation, the true stick-slip motion and
// friction of models::SimulateStickSlip.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_RECORD_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_RECORD_H_

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
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
  Eigen::MatrixXd measurements;         // what the sensors give (z_s, z_a, z_f of the CSV)
  Eigen::MatrixXd filter_measurements;  // the same through --prefilter_hz (what both filters see)
};

// Reads --measurements_csv (if given; before anything is written) and sets up the time grid;
// false with a message (exit code 2) on a bad record.
bool LoadRecord(Record* record, std::string* error);

// The sensors' noise seed of case c in the run of noise seed `seed` (--sensors=realistic).
std::uint64_t SensorSeed(std::int64_t seed, size_t c);

// Case c: the measured record, or the stick-slip mass of true_masses[c] simulated and measured by
// --sensors (realistic: seed SensorSeed(seed, c); ideal: noise of --noise_scale from
// std::mt19937(seed + c)), and the measurements through --prefilter_hz. False with a message
// (a pre-filter that cannot be designed).
bool MakeCaseRecord(const Record& record, const std::vector<double>& true_masses, size_t c,
                    std::int64_t seed, CaseRecord* result, std::string* error);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_RECORD_H_
