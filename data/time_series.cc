#include "dynid/data/time_series.h"

#include <cmath>
#include <sstream>

#include <glog/logging.h>

namespace dynid::data {

bool TimeSeries::SetTime(const Eigen::VectorXd& time_s, std::string* error) {
  for (Eigen::Index k = 0; k < time_s.size(); ++k) {
    if (!std::isfinite(time_s[k])) {
      std::ostringstream message;
      message << "time sample " << k << " is not finite";
      *error = message.str();
      return false;
    }
    if (k > 0 && !(time_s[k] > time_s[k - 1])) {
      std::ostringstream message;
      message << "time is not strictly increasing at sample " << k << " (" << time_s[k - 1]
              << " then " << time_s[k] << ")";
      *error = message.str();
      return false;
    }
  }
  CHECK(columns_.empty() || static_cast<Eigen::Index>(columns_[0].size()) == time_s.size())
      << "SetTime: expected " << columns_[0].size() << " samples, got " << time_s.size();
  time_ = time_s;
  return true;
}

void TimeSeries::SetUniformTime(int num_samples, double dt_s, double t0_s) {
  CHECK_GT(dt_s, 0.0) << "SetUniformTime: dt must be positive";
  CHECK_GE(num_samples, 0);
  time_.resize(num_samples);
  for (int k = 0; k < num_samples; ++k) time_[k] = t0_s + k * dt_s;
}

void TimeSeries::AddColumn(const std::string& name, const Eigen::VectorXd& values,
                           const std::string& unit) {
  CHECK_EQ(values.size(), time_.size())
      << "AddColumn '" << name << "': expected " << time_.size() << " samples";
  CHECK_LT(ColumnIndex(name), 0) << "AddColumn: column '" << name << "' already present";
  names_.push_back(name);
  units_.push_back(unit);
  columns_.push_back(values);
}

int TimeSeries::ColumnIndex(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const Eigen::VectorXd& TimeSeries::Column(int index) const {
  CHECK(index >= 0 && index < num_columns())
      << "Column: index " << index << " out of range [0, " << num_columns() << ")";
  return columns_[index];
}

const Eigen::VectorXd& TimeSeries::Column(const std::string& name) const {
  const int index = ColumnIndex(name);
  CHECK_GE(index, 0) << "Column: no column named '" << name << "'";
  return columns_[index];
}

double TimeSeries::MeanSamplePeriod() const {
  CHECK_GE(num_samples(), 2) << "MeanSamplePeriod needs at least two samples";
  return (time_[num_samples() - 1] - time_[0]) / (num_samples() - 1);
}

bool TimeSeries::IsUniform(double relative_tolerance) const {
  if (num_samples() < 2) return true;
  const double dt = MeanSamplePeriod();
  for (int k = 1; k < num_samples(); ++k) {
    if (std::abs(time_[k] - time_[k - 1] - dt) > relative_tolerance * dt) return false;
  }
  return true;
}

}  // namespace dynid::data
