// experiments/scara_study/scara_validation — the validation of the estimates and the study's
// acceptance. A simulated record: closed-loop PID tracking of the reference with each estimated
// parameter set as the plant (the control law of data::SimulateClosedLoop on the closed-form
// model, cross-checked with the true parameters), per link RMSE, IAE = ∫|e| dt and
// ISE = ∫ e² dt of e = q_ref − q. A measured record: the torque prediction
// tau_hat = Y(q, q', q'') p of every estimate against the measured torques. Acceptance: LS and
// the smoothers within 1 % of the truth, the UKF within 3 %, a valid covariance with every filter
// estimate, the square-root UKF positive definite on every run.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_VALIDATION_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_VALIDATION_H_

#include <string>

#include "dynid/data/trajectory.h"
#include "experiments/scara_study/scara_estimators.h"
#include "experiments/scara_study/scara_record.h"

namespace dynid::scara_study {

// validation.csv and summary.json "validation" (with a measured record also
// torque_prediction.csv); false with a message when the tracking with the true parameters fails.
bool Validate(const Record& record, const data::JointTrajectory& reference,
              const EstimatorRuns& runs, Results* results, std::string* error);

// summary.json "acceptance", the UKF runs, the explanation of the published EKF, the filters'
// times; ukf_seed_failures from DiagnoseEkf.
void JudgeAcceptance(const Record& record, const EstimatorRuns& runs, int ukf_seed_failures,
                     Results* results);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_VALIDATION_H_
