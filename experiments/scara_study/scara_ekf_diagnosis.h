// experiments/scara_study/scara_ekf_diagnosis — why the published EKF can end with a negative
// IZZ2: a factorial over the published settings (process noise on the parameters and on the
// joint states, forward Euler vs RK4), the filter std of IZZ2 over the record, and sign
// statistics over --seed_repeats sensor-noise realisations of the simulated record (EKF from the
// published and the tuned start, square-root UKF from the tuned start).
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_EKF_DIAGNOSIS_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_EKF_DIAGNOSIS_H_

#include <nlohmann/json.hpp>

#include "experiments/scara_study/scara_estimators.h"
#include "experiments/scara_study/scara_record.h"

namespace dynid::scara_study {

// The factorial (ekf_diagnosis.csv, summary.json "ekf_diagnosis"), the filter std of IZZ2 under
// the published settings ("ekf_paper_izz2_std") and the sign statistics
// (ekf_seed_statistics.csv, "ekf_seed_statistics"; none with a measured record or
// --seed_repeats=0). Returns the number of UKF runs of the sign statistics that failed or lost
// positive definiteness.
int DiagnoseEkf(const Record& record, const EstimatorRuns& runs, Results* results);

// Why the published EKF can end with a negative IZZ2: its own covariance under the published
// P0 = Q = 10 I, where the published value lies in it, and the sign statistics per setting
// (from `summary`).
nlohmann::json ExplainPublishedEkf(const Record& record, const FilterResults& filters,
                                   const nlohmann::json& summary);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_EKF_DIAGNOSIS_H_
