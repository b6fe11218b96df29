// experiments/rt_manipulator_study/rt_manipulator_record — the record the estimators see: the
// flexible "true system" simulated along the reference line (with its truth), or read from
// --measurements_csv.
#ifndef DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_RECORD_H_
#define DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_RECORD_H_

#include <cmath>
#include <string>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/problems/weighted_residual_problem.h"

namespace dynid::rt_manipulator_study {

// The record the estimators see: simulated from the flexible model (with its truth) or read
// from --measurements_csv.
struct Record {
  problems::WeightedResidualData data;
  bool simulated = false;
  models::Trajectory truth;      // (simulated only)
  double true_payload_kg = NAN;  // the simulated payload (NaN for a measured record)
};

// The measured record of --measurements_csv if given, else the simulated one. False (exit code
// 2) with a message naming the file otherwise.
bool LoadRecord(const models::RtManipulatorParameters& parameters, Record* record,
                std::string* error);

// The flexible manipulator simulated from the flags (--duration_s, --sample_period_s,
// --stiffness through `parameters`, --noise_scale) with measurement-noise seed `seed` (the
// single run uses --seed, the Monte Carlo --seed, --seed + 1, ...). Thread-safe: it only reads
// the flags.
Record SimulateRecord(const models::RtManipulatorParameters& parameters, int seed);

}  // namespace dynid::rt_manipulator_study

#endif  // DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_RECORD_H_
