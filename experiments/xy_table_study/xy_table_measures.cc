// experiments/xy_table_study/xy_table_measures — the small measures of a signal and the number
// format of xy_table_study's tables (see xy_table_measures.h).
#include "experiments/xy_table_study/xy_table_measures.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace dynid::xy_table_study {

double PeakFrequency(const Eigen::VectorXd& t, const Eigen::VectorXd& x, double f_lo, double f_hi) {
  const Eigen::VectorXd y = x.array() - x.mean();
  double best = 0.0, best_f = NAN;
  for (double f = f_lo; f <= f_hi + 1e-9; f += 0.1) {
    double c = 0.0, s = 0.0;
    for (int k = 0; k < t.size(); ++k) {
      c += y(k) * std::cos(2.0 * M_PI * f * t(k));
      s += y(k) * std::sin(2.0 * M_PI * f * t(k));
    }
    if (c * c + s * s > best) best = c * c + s * s, best_f = f;
  }
  return best_f;
}

double Rms(const Eigen::VectorXd& x) { return std::sqrt(x.squaredNorm() / x.size()); }
double Range(const Eigen::VectorXd& x) { return x.maxCoeff() - x.minCoeff(); }

std::string Fmt(double x, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, x);
  return buffer;
}

}  // namespace dynid::xy_table_study
