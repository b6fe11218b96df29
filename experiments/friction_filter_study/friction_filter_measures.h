// experiments/friction_filter_study/friction_filter_measures — the RMS of the friction-estimate
// errors and the number format of messages and figure titles.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_MEASURES_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_MEASURES_H_

#include <Eigen/Core>
#include <string>

namespace dynid::friction_filter_study {

// The value as an ostream prints it (6 significant digits).
std::string Format(double value);

// Root mean square (NaN for an empty vector).
double Rms(const Eigen::VectorXd& x);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_MEASURES_H_
