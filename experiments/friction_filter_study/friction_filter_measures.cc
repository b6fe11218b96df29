// experiments/friction_filter_study/friction_filter_measures — RMS and the number format (see
// friction_filter_measures.h).
#include "experiments/friction_filter_study/friction_filter_measures.h"

#include <cmath>
#include <sstream>
#include <string>

namespace dynid::friction_filter_study {

std::string Format(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

double Rms(const Eigen::VectorXd& x) {
  return x.size() == 0 ? NAN : std::sqrt(x.squaredNorm() / static_cast<double>(x.size()));
}

}  // namespace dynid::friction_filter_study
