// data::TimeSeries — a time vector with named, unit-carrying columns.
//
// The common currency between readers (CSV, simulators), pre-processing (filtering, IRW
// smoothing) and the estimators. Samples are rows; time is strictly increasing.
#ifndef DYNID_DATA_TIME_SERIES_H_
#define DYNID_DATA_TIME_SERIES_H_

#include <string>
#include <vector>

#include <Eigen/Core>

namespace dynid::data {

class TimeSeries {
 public:
  TimeSeries() = default;

  // A series with the given time vector (seconds, strictly increasing) and no columns.
  // Returns false with a message if time is not strictly increasing or not finite.
  bool SetTime(const Eigen::VectorXd& time_s, std::string* error);

  // Uniformly sampled time vector t_k = t0 + k * dt, k = 0..num_samples-1 (dt > 0).
  void SetUniformTime(int num_samples, double dt_s, double t0_s = 0.0);

  // Appends a column. CHECK-fails when the length differs from num_samples() or the name
  // is already present (programmer errors).
  void AddColumn(const std::string& name, const Eigen::VectorXd& values,
                 const std::string& unit = "");

  int num_samples() const { return static_cast<int>(time_.size()); }
  int num_columns() const { return static_cast<int>(names_.size()); }
  const Eigen::VectorXd& time() const { return time_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& unit(int column) const { return units_.at(column); }

  // Index of the named column, or -1.
  int ColumnIndex(const std::string& name) const;
  bool HasColumn(const std::string& name) const { return ColumnIndex(name) >= 0; }

  // Column values (CHECK-fails for an unknown name or index).
  const Eigen::VectorXd& Column(int index) const;
  const Eigen::VectorXd& Column(const std::string& name) const;

  // Mean sampling interval (t_end - t_0)/(N - 1), and whether every interval is within
  // `relative_tolerance` of it.
  double MeanSamplePeriod() const;
  bool IsUniform(double relative_tolerance = 1e-6) const;

 private:
  Eigen::VectorXd time_;
  std::vector<std::string> names_;
  std::vector<std::string> units_;
  std::vector<Eigen::VectorXd> columns_;
};

}  // namespace dynid::data

#endif  // DYNID_DATA_TIME_SERIES_H_
