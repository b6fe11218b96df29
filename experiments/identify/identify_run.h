// identify's computation: from a robot, an identification record and a validation record to the
// estimates of every method and their scores. No files and no flags here (identify.cc reads
// them, identify_output.cc writes the results).
//
// Methods, all on the same rows of the same pre-processed IDIM system:
//   prior  the description's own values (URDF inertias, the drive file's initial values);
//   LS     IDIM-LS of the base parameters of the measured equations;
//   WLS    Gautier's per-joint weighting, σ_j from each joint's own LS fit;
//   IV     IDIM-IV (Brunot et al. (2018) eqs. 6–8) when the record has a reference trajectory:
//          instruments from the closed loop of the current estimate driven by that reference,
//          under a PID controller (given gains, or tuned on the description's mass matrix);
//   PC     the physically consistent fit (log-Cholesky pseudo-inertias, drive terms ≥ 0) of the
//          standard parameters, rows weighted 1/σ_j as WLS, started from the description, with an
//          optional prior toward it; its base parameters by the grouping matrix.
// Validation scores every method's torque prediction on the validation record, whose states are
// differentiated the same way, per measured joint and pooled.
#ifndef DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_RUN_H_
#define DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_RUN_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/base_parameters.h"
#include "dynid/models/serial_robot.h"
#include "dynid/solvers/essential_parameters.h"
#include "dynid/solvers/idim.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/physically_consistent_fit.h"
#include "dynid/solvers/torque_validation.h"
#include "experiments/identify/identify_log.h"

namespace dynid::identify {

using solvers::IvIterationOptions;

enum class Method { kPrior, kLs, kWls, kPc, kIv };
inline constexpr Method kMethods[] = {Method::kPrior, Method::kLs, Method::kWls, Method::kPc,
                                      Method::kIv};
const char* MethodName(Method method);   // "prior", "ls", "wls", "pc", "iv"
const char* MethodLabel(Method method);  // "description prior", "IDIM-LS", ...

struct IdentifyOptions {
  solvers::IdimPreprocessingOptions preprocessing;  // measured_joints filled by RunIdentify
  double prior_weight = 0.0;  // PC: pull toward the description's values (0 = none)
  int num_threads = 1;
  // IDIM-IV's closed loop: PID gains per joint (each empty = tuned by data::TunePidGains at
  // pid_bandwidth_hz on the description's mass matrix at the first reference position).
  Eigen::VectorXd kp, ki, kd;
  double pid_bandwidth_hz = 10.0;
  // Without qref columns: the smoothed measured positions as the closed loop's reference.
  bool iv_reference_from_measured = false;
  IvIterationOptions iv;
  // Also select the essential parameters (Brunot et al. (2018) §4.1) on the LS system: the
  // subset whose removal costs at most essential_max_error_increase of relative error.
  bool essential = false;
  double essential_max_error_increase = 0.005;
  // The HAC covariance of LS, WLS and IV: how its Bartlett bandwidth is chosen
  // (solvers/residual_analysis.h); identify's default is the autocorrelation rule.
  solvers::HacBandwidth hac_bandwidth = solvers::HacBandwidth::kAutocorrelation;
  // The critical value of the HAC intervals (θ̂ ± c σ_HAC); identify's default is Kiefer &
  // Vogelsang's fixed-b value.
  solvers::HacCriticalValue hac_critical_value = solvers::HacCriticalValue::kFixedB;
};

// The estimate of one method: base parameters (b) with their standard deviations, and the
// standard parameters (p) where the method gives them (prior, PC).
struct MethodEstimate {
  Method method = Method::kPrior;
  bool available = false;
  std::string message;          // why not available, or a note
  Eigen::VectorXd base;         // b
  Eigen::VectorXd base_std;     // b; NaN where the method gives none (prior), +inf undetermined
  Eigen::VectorXd standard;     // p, or empty (LS, WLS)
  double relative_error = 0.0;  // on the identification rows: ||y − X θ|| / ||y||
  solvers::TorqueValidation validation;
  bool validated = false;
};

struct IdentifyResults {
  models::BaseParameterSet base;
  std::vector<std::string> joint_names;
  std::vector<bool> measured;
  solvers::IdimSystem system;
  double condition_number = 0.0;
  solvers::IdimResult ls, wls, iv;
  solvers::PhysicallyConsistentSummary pc;
  solvers::EssentialParametersSummary essential;  // options.essential
  solvers::StandardConsistencyReport prior_consistency;
  solvers::EstimateDistance ls_to_pc;     // LS → nearest consistent, in LS σ
  std::vector<MethodEstimate> estimates;  // in kMethods order
  // The validation record's states and measured torques (the figure's data).
  solvers::ValidationRecord validation_record;
  Eigen::VectorXd validation_time;
  int identification_samples = 0, validation_samples = 0;
  std::vector<std::string> notes;  // what was done, for the report

  const MethodEstimate& Estimate(Method method) const;
  // The HAC covariance of a method's base parameters (LS, WLS, IDIM-IV, the physically
  // consistent fit), or nullptr when the method has none, did not run or it failed.
  const solvers::HacCovariance* Hac(Method method) const;
};

// Runs every method. `validation` may be empty (num_samples() == 0): no validation then.
bool RunIdentify(const models::SerialRobot& robot, const JointLog& identification,
                 const JointLog& validation, const IdentifyOptions& options,
                 IdentifyResults* results, std::string* error);

}  // namespace dynid::identify

#endif  // DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_RUN_H_
