// experiments/scara_study/scara_estimators — the estimators run on the record and what they
// leave: weighted least squares and the Hopfield network on the stacked regression; the EKF
// (published and tuned settings), the square-root UKF (both), the continuous–discrete EKF and
// the RTS smoothing pass of the tuned EKF and UKF on models::Scara3Model through
// solvers::AugmentedMechanicalSystem; the batch weighted-residual smoother. Each adds its
// Estimate (parameters with their covariance) to Results.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_ESTIMATORS_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_ESTIMATORS_H_

#include <Eigen/Core>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/models/scara3_model.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/hopfield_estimator.h"
#include "dynid/solvers/kalman_smoother.h"
#include "dynid/solvers/mechanical_state_space.h"
#include "dynid/solvers/unscented_kalman_filter.h"
#include "experiments/scara_study/scara_coverage.h"
#include "experiments/scara_study/scara_record.h"

namespace dynid::scara_study {

using Model = models::Scara3Model;
using System = solvers::AugmentedMechanicalSystem<Model>;

// One parameter estimate with its covariance (4 × 4; empty when the method gives none).
struct Estimate {
  std::string method;
  std::string description;
  Eigen::Vector4d p = Eigen::Vector4d::Zero();
  Eigen::Matrix4d cov = Eigen::Matrix4d::Zero();
  bool has_cov = false;
};

// What the stages accumulate for --out_dir.
struct CsvFiles {
  std::string record, evolution, estimates, table7, validation, ekf_diagnosis, ekf_seed_statistics;
  std::string torque_prediction;                       // a measured record only
  std::vector<std::string> torque_prediction_methods;  // the estimates it shows
};
struct Results {
  // The measured coverage of each estimator's σ (--coverage_csv or the shipped file), quoted
  // beside every σ the outputs print.
  MeasuredCoverage coverage;
  std::vector<Estimate> estimates;
  nlohmann::json summary;
  CsvFiles csv;
};

// The estimates by method name (pointers into `estimates`).
std::map<std::string, const Estimate*> EstimatesByName(const std::vector<Estimate>& estimates);

// The stacked regression of the record.
struct Regression {
  Eigen::MatrixXd phi;  // 3 Ns × 4, from the noise-free q, q', q'' of the record
  Eigen::VectorXd tau;  // 3 Ns, measured torques
};

// The closed loop's start-up: the first ~0.3 s alternate sample to sample at the Nyquist rate
// (±60 rad/s² on joint 1; README), which no smoother of the sampled joint states resolves. The
// regressions on smoothed kinematics (LS_irw, HNN_irw, the torque check of a simulation) use
// the samples from t0 + kStartupTransientS on.
constexpr double kStartupTransientS = 0.5;

// The first sample at or after t0 + kStartupTransientS.
int FirstSampleAfterStartup(const Record& record);

// The rows of `regression` (3 per sample) from sample `first` on.
Regression RowsFrom(const Regression& regression, int first);

// What the filter runs share: the closed-form model over the record in both discretisations,
// and the published and tuned settings.
struct FilterSetup {
  System euler;  // forward Euler, one step per sample (as published)
  System rk4;    // RK4, --rk4_substeps steps per sample
  solvers::KalmanFilterOptions paper;
  solvers::KalmanFilterOptions tuned;
};

struct FilterRun {
  std::string name;
  std::string description;
  solvers::KalmanFilterRecord record;
  bool is_ukf = false;
  solvers::UkfResult ukf;
};

// Positions in FilterResults::runs.
constexpr int kEkfPaperRun = 0;
constexpr int kEkfRun = 1;
constexpr int kUkfRun = 2;
constexpr int kEkf2ndRun = 4;

struct FilterResults {
  std::vector<FilterRun> runs;  // EKF_paper, EKF, UKF, UKF_paper, EKF_2nd
  solvers::ContinuousDiscreteEkfResult cd;
  solvers::RtsSmootherResult ekf_rts, ukf_rts;        // over the tuned EKF and UKF
  nlohmann::json ukf_json = nlohmann::json::array();  // per UKF run, for summary.json
};

// What the estimators leave besides their estimates, for the diagnosis, the validation and the
// outputs.
struct EstimatorRuns {
  // The regression and the filters' set-up of the record.
  explicit EstimatorRuns(const Record& record);

  Regression regression;
  // A simulation only (empty for a measured record): the regression on the IRWSM2 kinematics of
  // the noisy joint states (Record::q_irw) and the measured torques, every sample (LS_irw and
  // HNN_irw use the rows after the start-up transient, RowsFrom).
  Regression regression_irw;
  FilterSetup setup;
  solvers::HopfieldResult hnn;
  FilterResults filters;
};

// LS, the Hopfield network (on the record's q, q', q'' and, for a simulation, LS_irw and HNN_irw
// on the IRWSM2 kinematics of the noisy joint states), the filters and their smoothing passes,
// the weighted-residual smoother (--wr_smoother) over the record, in this order; false with a
// message.
bool RunEstimators(const Record& record, EstimatorRuns* runs, Results* results, std::string* error);

// Joint states start at the first measurement of y with the measurement variances, parameters
// at the published x0 with std prior_std_fraction · |x0| (P0 = 10 puts UKF sigma points at
// negative masses and inertias, where the mass matrix is indefinite); process noise q_state on
// the joint states and q_param on the parameters. The adapter's state order is [s; v; theta] =
// [q1, q2, d3, q1', q2', d3', IZZ1, IZZ2, mr, m3]; the measurement order (Scara3Model) is the
// published [q1, q1', q2, q2', d3, d3'], so y and R are used as they are. (The published x0, P0
// and Q have equal joint entries, so the ordering does not change them.)

solvers::KalmanFilterOptions TunedFilterOptions(const Record& record, const Eigen::MatrixXd& y);

// The parameters at the end of a filter's states (N × 10) and their covariance (of the last 10 × 10
// covariance).
Eigen::Vector4d FinalParameters(const Eigen::MatrixXd& states);
Eigen::Matrix4d FinalParameterCovariance(const std::vector<Eigen::MatrixXd>& covs);

// Time mean of the parameter columns of a filter over the whole record (trapezoid).
Eigen::Vector4d TimeMean(const Eigen::MatrixXd& params);

// Diagonal: q_state on the six joint states, q_param on the four parameters.
Eigen::MatrixXd ProcessNoise(double q_state, double q_param);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_ESTIMATORS_H_
