#include "dynid/data/sample_selection.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dynid::data {
namespace {

void SetError(std::string* error, const std::string& message) {
  if (error != nullptr) *error = message;
}

}  // namespace

bool SampleSelectionOptions::IsValid(std::string* why) const {
  if (velocity_threshold.size() == 0) {
    SetError(why, "velocity_threshold is empty (give one value or one per joint)");
    return false;
  }
  for (Eigen::Index j = 0; j < velocity_threshold.size(); ++j) {
    if (!std::isfinite(velocity_threshold(j)) || velocity_threshold(j) < 0.0) {
      std::ostringstream message;
      message << "velocity_threshold[" << j << "] must be finite and >= 0, got "
              << velocity_threshold(j);
      SetError(why, message.str());
      return false;
    }
  }
  if (max_runs_in_report < 1) {
    SetError(why, "max_runs_in_report must be >= 1, got " + std::to_string(max_runs_in_report));
    return false;
  }
  return true;
}

std::string FormatRanges(const std::vector<int>& ascending, int max_runs) {
  std::ostringstream text;
  int runs = 0, total_runs = 0;
  for (size_t i = 0; i < ascending.size();) {
    size_t end = i;
    while (end + 1 < ascending.size() && ascending[end + 1] == ascending[end] + 1) ++end;
    ++total_runs;
    if (runs < max_runs) {
      if (runs > 0) text << ", ";
      text << ascending[i];
      if (end > i) text << "–" << ascending[end];
      ++runs;
    }
    i = end + 1;
  }
  if (total_runs > runs) text << ", … (" << total_runs - runs << " more runs)";
  return text.str();
}

bool SelectSamples(const Eigen::MatrixXd& velocities, StackOrder order,
                   const SampleSelectionOptions& options, SampleSelection* selection,
                   std::string* error) {
  CHECK(selection != nullptr);
  if (!options.IsValid(error)) return false;
  const int num_samples = static_cast<int>(velocities.rows());
  const int num_joints = static_cast<int>(velocities.cols());
  if (num_samples == 0 || num_joints == 0) {
    SetError(error, "SelectSamples: no velocities (empty matrix)");
    return false;
  }
  if (options.velocity_threshold.size() != 1 && options.velocity_threshold.size() != num_joints) {
    std::ostringstream message;
    message << "SelectSamples: velocity_threshold has " << options.velocity_threshold.size()
            << " values; expected 1 or one per joint (" << num_joints << ")";
    SetError(error, message.str());
    return false;
  }
  if (!velocities.allFinite()) {
    SetError(error, "SelectSamples: velocities contain NaN or Inf");
    return false;
  }
  auto threshold = [&](int j) {
    return options.velocity_threshold.size() == 1 ? options.velocity_threshold(0)
                                                  : options.velocity_threshold(j);
  };
  auto at_rest = [&](int k, int j) { return std::abs(velocities(k, j)) < threshold(j); };
  auto all_at_rest = [&](int k) {
    for (int j = 0; j < num_joints; ++j) {
      if (!at_rest(k, j)) return false;
    }
    return true;
  };

  SampleSelection result;
  result.num_samples = num_samples;
  result.num_joints = num_joints;
  result.first_sample = 0;
  result.last_sample = num_samples - 1;
  if (options.trim_rest) {
    while (result.first_sample < num_samples && all_at_rest(result.first_sample)) {
      ++result.first_sample;
    }
    while (result.last_sample >= result.first_sample && all_at_rest(result.last_sample)) {
      --result.last_sample;
    }
    if (result.first_sample > result.last_sample) {
      SetError(error,
               "SelectSamples: no joint ever moves faster than its velocity threshold; "
               "nothing left after trimming the rest");
      return false;
    }
  }

  std::ostringstream report;
  report << "sample selection: " << num_samples << " samples × " << num_joints << " joints";
  if (options.trim_rest) {
    report << "; rest trimmed: kept samples " << result.first_sample << "–" << result.last_sample;
  }
  report << "\n";
  result.kept_samples.resize(num_joints);
  int total_kept = 0;
  for (int j = 0; j < num_joints; ++j) {
    std::vector<int> slow;
    for (int k = result.first_sample; k <= result.last_sample; ++k) {
      if (options.exclude_slow_rows && at_rest(k, j)) {
        slow.push_back(k);
      } else {
        result.kept_samples[j].push_back(k);
      }
    }
    total_kept += static_cast<int>(result.kept_samples[j].size());
    report << "  joint " << j + 1 << ": " << result.kept_samples[j].size() << " of " << num_samples
           << " rows kept";
    if (!slow.empty()) {
      report << "; " << slow.size() << " excluded with |q'| < " << threshold(j) << ": "
             << FormatRanges(slow, options.max_runs_in_report);
    }
    report << "\n";
  }
  if (total_kept == 0) {
    SetError(error, "SelectSamples: every row is below its velocity threshold");
    return false;
  }
  for (int j = 0; j < num_joints; ++j) {
    for (int k : result.kept_samples[j]) {
      result.kept_rows.push_back(StackedRow(order, num_joints, num_samples, j, k));
    }
  }
  std::sort(result.kept_rows.begin(), result.kept_rows.end());
  result.kept_row_joint.reserve(result.kept_rows.size());
  for (int row : result.kept_rows) {
    result.kept_row_joint.push_back(order == StackOrder::kJointMajor ? row / num_samples
                                                                     : row % num_joints);
  }
  report << "  total: " << total_kept << " of " << num_samples * num_joints << " rows used";
  result.report = report.str();
  *selection = std::move(result);
  return true;
}

Eigen::MatrixXd KeepRows(const Eigen::MatrixXd& stacked, const std::vector<int>& rows) {
  Eigen::MatrixXd kept(rows.size(), stacked.cols());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i] >= 0 && rows[i] < stacked.rows())
        << "row index: expected in [0, " << stacked.rows() << "), got " << rows[i];
    kept.row(i) = stacked.row(rows[i]);
  }
  return kept;
}

Eigen::VectorXd KeepRows(const Eigen::VectorXd& stacked, const std::vector<int>& rows) {
  Eigen::VectorXd kept(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i] >= 0 && rows[i] < stacked.size())
        << "row index: expected in [0, " << stacked.size() << "), got " << rows[i];
    kept(i) = stacked(rows[i]);
  }
  return kept;
}

}  // namespace dynid::data
