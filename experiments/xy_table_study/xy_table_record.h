// experiments/xy_table_study/xy_table_record — the record xy_table_study identifies from: the
// closed-loop point-to-point experiment simulated on the true system (with its truth) or the
// measured one read from --measurements_csv, the identification interval selected from it, and
// the CSV layout of a measured record.
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_RECORD_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_RECORD_H_

#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "experiments/xy_table_study/xy_table_case.h"
#include "experiments/xy_table_study/xy_table_simulator.h"

namespace dynid::xy_table_study {

// Header of a measured record (--measurements_csv, --circle_csv) and the short names of the eight
// measurements (the layout of the models' measurement vector).
extern const std::vector<std::string> kCsvHeader;
extern const char* kMeasurementNames[8];

struct Record {
  XyTableCaseOptions case_options;       // simulation and weight rule, from the flags
  bool simulated = true;                 // false: read from --measurements_csv
  models::XyTableParameters parameters;  // the models' constants
  Eigen::VectorXd time;                  // the whole record
  Eigen::MatrixXd z;                     // its measurements, N × 8
  XyTableRecord simulation;              // the simulated record with its truth
  int first = 0, count = 0;              // the identification interval's samples
  problems::WeightedResidualData d;      // the record on the identification interval
};

// Reads a measured record (header kCsvHeader, at least 10 rows, time strictly increasing).
bool ReadRecord(const std::string& path, Eigen::VectorXd* time, Eigen::MatrixXd* z,
                std::string* error);

// The simulation's case options from the flags for noise seed `noise_seed` and, with
// --truth=drawn, the true system DrawXyTableTrueSystem(thesis-centred system, truth_seed,
// --truth_spread) (--truth=thesis: the thesis-centred system itself); --viscous_friction adds
// its unmodelled viscous friction to the true system.
XyTableCaseOptions SimulationCaseOptions(unsigned noise_seed, unsigned truth_seed);

// The noise seed of the default run (the default --seed).
inline constexpr unsigned kDefaultNoiseSeed = 4;
// The seed of the drawn true system of the run of noise seed `noise_seed`, in the single run as in
// the Monte Carlo: --truth_seed + noise_seed − kDefaultNoiseSeed (modulo 2³²). A run is thus
// defined by its noise seed and the flags alone (the Monte Carlo's journal is keyed by it), the
// default run draws with --truth_seed itself, and the Monte Carlo's seeds 4, 5, ... draw tables
// --truth_seed, --truth_seed + 1, ...
unsigned TruthSeedOfRun(std::uint64_t noise_seed);

// The constants of the estimators' models: the true table's geometry, masses and torque
// constants with --friction_smoothing and the transverse slideway mass ×
// --model_transverse_mass_scale.
models::XyTableParameters ModelParameters();

// Simulates case_options (its duration replaced by duration_s) into out (simulated = true) and
// selects the identification interval. False with a message if it holds fewer than 20 samples.
bool SimulateRecord(const XyTableCaseOptions& case_options, double duration_s, Record* out,
                    std::string* error);

// The case options from the flags, the record (simulated or --measurements_csv) and its
// identification interval (at least 20 samples). False (exit code 2) with a message otherwise.
bool LoadRecord(Record* out, std::string* error);

// The simulated true system as summary.json "true_system" records it (simulated records only).
nlohmann::json TrueSystemJson(const Record& rec);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_RECORD_H_
