// experiments/backlash_study/backlash_case — the cases of backlash_study: the simulated ones
// (sim1, sim2, linear: the true transmission, its input and covariances) and a measured record
// (--measurements_csv with the model flags), and each case's measurement-noise seed.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_CASE_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_CASE_H_

#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "dynid/data/excitation_signals.h"
#include "dynid/models/two_mass_transmission.h"

namespace dynid::backlash_study {

struct Case {
  std::string name;
  std::string description;
  models::TwoMassTransmissionParameters parameters;  // the true system (simulated cases)
  // The estimators' model: `parameters` with the mismatch of the --model_*_scale flags applied
  // (equal to `parameters` by default and for a measured record).
  models::TwoMassTransmissionParameters estimator_parameters;
  // Unmodelled effect: the measured velocities are backward differences of encoder readings of
  // this many counts per revolution (0 = the true velocities), plus the noise R.
  int encoder_counts = 0;
  double sample_period_s = 1e-4;
  int default_samples = 20000;
  bool prbs = true;
  data::PrbsOptions prbs_options;
  data::SweptSineOptions sine_options;
  bool measure_arm_velocity = true;
  Eigen::Vector4d state_noise_intensity = Eigen::Vector4d::Zero();
  double tau_noise_intensity = 100.0;
  double measurement_variance = 1.0;
  // A measured record (--measurements_csv) instead of a simulation: no true system.
  bool measured = false;
  std::string source;            // the CSV file
  Eigen::VectorXd time, input;   // N, s and N m
  Eigen::MatrixXd measurements;  // N × (1 or 2), [x3] or [x3, x4] in rad/s
};

// The true b of a simulated case (0 for the linear spring).
double TrueBacklash(const Case& c);

// The simulated case `name` (sim1, sim2 or linear), its input from the flags.
Case MakeCase(const std::string& name);

// What the simulated data and the estimators' model differ in besides b and K (the flags
// --model_arm_inertia_scale, --model_motor_inertia_scale, --model_damping_scale,
// --model_friction_scale, --encoder_counts), e.g. "estimators' arm inertia x1.1 of the true";
// empty when the estimators have the exact model of the simulated data (the default flags, for
// which the shipped coverage was measured).
std::string ModelMismatchDescription();

// The same for summary.json: {"exact_model", "description", "estimator_model_factors" {arm_inertia,
// motor_inertia, damping, friction}, "unmodelled_effect" (null, or the encoder's counts per
// revolution and resolution)}.
nlohmann::json ModelMismatchJson();

// The measured case from --measurements_csv and the model flags; false with a message naming
// the file and line, or the flag.
bool MakeMeasuredCase(const std::string& path, Case* c, std::string* error);

// The measurement-noise seed of a case: --seed plus 0, 1, 2 for sim1, sim2, linear, the same in
// the main table and in the Q_pp scan (whose factor-1 row then repeats the table's).
std::uint64_t NoiseSeed(const std::string& case_name);
// The same with `base` in place of --seed (the Monte Carlo's run seeds).
std::uint64_t NoiseSeed(const std::string& case_name, std::uint64_t base);

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_CASE_H_
