// experiments/xy_table_study/xy_table_measures — the small measures xy_table_study takes of a
// signal (RMS, range, the peak frequency of a residual) and the number format of its tables.
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_MEASURES_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_MEASURES_H_

#include <Eigen/Core>
#include <string>

namespace dynid::xy_table_study {

// Peak of |DFT| of x (mean removed) over [f_lo, f_hi] Hz on a 0.1 Hz grid.
double PeakFrequency(const Eigen::VectorXd& t, const Eigen::VectorXd& x, double f_lo, double f_hi);

// Root mean square of x.
double Rms(const Eigen::VectorXd& x);

// max(x) − min(x).
double Range(const Eigen::VectorXd& x);

// x formatted by the printf format.
std::string Fmt(double x, const char* format = "%.4g");

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_MEASURES_H_
