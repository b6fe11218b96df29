// solvers/internal/filter_measurements — the input check shared by the recursive filters
// (extended and unscented Kalman filters): one row of measurements per sample.
#ifndef DYNID_SOLVERS_INTERNAL_FILTER_MEASUREMENTS_H_
#define DYNID_SOLVERS_INTERNAL_FILTER_MEASUREMENTS_H_

#include <sstream>
#include <string>

#include <Eigen/Core>

namespace dynid::solvers::internal {

// True when `measurements` has at least one row, `measurement_size` columns and only finite
// entries; otherwise false with "<filter> needs N >= 1 finite measurement rows of l columns, got
// R x C" in *error.
inline bool CheckFilterMeasurements(const char* filter, int measurement_size,
                                    const Eigen::MatrixXd& measurements, std::string* error) {
  if (measurements.rows() >= 1 && measurements.cols() == measurement_size &&
      measurements.allFinite()) {
    return true;
  }
  std::ostringstream os;
  os << filter << " needs N >= 1 finite measurement rows of " << measurement_size
     << " columns, got " << measurements.rows() << " x " << measurements.cols();
  *error = os.str();
  return false;
}

}  // namespace dynid::solvers::internal

#endif  // DYNID_SOLVERS_INTERNAL_FILTER_MEASUREMENTS_H_
