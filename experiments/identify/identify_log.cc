#include "experiments/identify/identify_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "dynid/data/csv.h"

namespace dynid::identify {
namespace {

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// "<path>:<line>:<column>" of a header cell.
std::string HeaderCell(const data::CsvTable& table, const std::string& path, int column) {
  return path + ":" + std::to_string(table.header_line) + ":" + std::to_string(column + 1);
}

// A channel that holds one value on most samples (a dead or clipped sensor) or sits at its
// extreme values (saturation): a sentence, or empty.
std::string ChannelFinding(const std::string& name, const Eigen::VectorXd& values) {
  const Eigen::Index n = values.size();
  if (n == 0) return "";
  std::map<double, int> counts;
  for (Eigen::Index k = 0; k < n; ++k) ++counts[values[k]];
  auto mode = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  const double mode_fraction = static_cast<double>(mode->second) / static_cast<double>(n);
  if (mode_fraction >= 0.5) {
    return name + " holds the single value " + Format("%g", mode->first) + " on " +
           Format("%.0f", 100.0 * mode_fraction) +
           " % of the samples: a dead, gated or clipped channel is likely";
  }
  const double at_max = counts.rbegin()->second / static_cast<double>(n);
  const double at_min = counts.begin()->second / static_cast<double>(n);
  if (std::max(at_max, at_min) >= 0.01 &&
      std::max(counts.rbegin()->second, counts.begin()->second) >= 10) {
    return name + " sits at its extreme value (" +
           Format("%g", at_max >= at_min ? counts.rbegin()->first : counts.begin()->first) +
           ") on " + Format("%.1f", 100.0 * std::max(at_max, at_min)) +
           " % of the samples: saturation is likely";
  }
  return "";
}

}  // namespace

JointLog JointLog::Slice(int first, int count) const {
  JointLog part;
  part.source = source;
  part.t = t.segment(first, count);
  part.q = q.middleRows(first, count);
  part.tau = tau.middleRows(first, count);
  if (dq.size() > 0) part.dq = dq.middleRows(first, count);
  if (qref.size() > 0) part.qref = qref.middleRows(first, count);
  part.measured = measured;
  part.effort_source = effort_source;
  return part;
}

bool ReadJointLog(const std::string& path, const models::ChainDescription& chain,
                  const models::DriveDescription& drives,
                  const std::vector<std::string>& effort_joints, JointLog* log,
                  std::string* error) {
  data::CsvTable table;
  if (!data::ReadCsv(path, &table, error)) return false;
  const int n = chain.num_joints();
  std::string joint_list;
  for (int j = 0; j < n; ++j) joint_list += (j ? ", " : "") + chain.joints[j].name;
  // Columns by kind and joint (-1 = absent).
  int time_column = -1;
  std::vector<int> q_column(n, -1), tau_column(n, -1), current_column(n, -1), dq_column(n, -1),
      qref_column(n, -1);
  const std::vector<std::pair<std::string, std::vector<int>*>> prefixes = {{"q_", &q_column},
                                                                           {"tau_", &tau_column},
                                                                           {"i_", &current_column},
                                                                           {"dq_", &dq_column},
                                                                           {"qref_", &qref_column}};
  for (int c = 0; c < static_cast<int>(table.header.size()); ++c) {
    const std::string& name = table.header[c];
    if (name == "t") {
      time_column = c;
      continue;
    }
    bool known = false;
    for (const auto& [prefix, columns] : prefixes) {
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string joint = name.substr(prefix.size());
      const int j = chain.JointIndex(joint);
      if (j < 0) {
        *error = HeaderCell(table, path, c) + ": column '" + name +
                 "' names no joint of the chain '" + joint + "' (joints: " + joint_list + ")";
        return false;
      }
      (*columns)[j] = c;
      known = true;
      break;
    }
    if (!known) {
      *error = HeaderCell(table, path, c) + ": unknown column '" + name +
               "' (expected t, q_<joint>, tau_<joint> or i_<joint>, dq_<joint>, qref_<joint>)";
      return false;
    }
  }
  if (time_column < 0) {
    *error = path + ":" + std::to_string(table.header_line) + ": missing column 't' (time in s)";
    return false;
  }
  for (int j = 0; j < n; ++j) {
    if (q_column[j] < 0) {
      *error = path + ":" + std::to_string(table.header_line) + ": missing column 'q_" +
               chain.joints[j].name + "' (the positions of every joint of the chain are needed)";
      return false;
    }
    if (tau_column[j] >= 0 && current_column[j] >= 0) {
      *error = HeaderCell(table, path, current_column[j]) + ": both tau_" + chain.joints[j].name +
               " and i_" + chain.joints[j].name + " given; keep one";
      return false;
    }
  }
  if (!data::CheckTimeColumnIncreasing(table, path, error, time_column, true)) return false;
  const Eigen::Index ns = table.values.rows();
  if (ns < 2) {
    *error = path + ": " + std::to_string(ns) + " data rows are too few";
    return false;
  }

  // The efforts to use.
  std::vector<bool> use(n, effort_joints.empty());
  for (const std::string& name : effort_joints) {
    const int j = chain.JointIndex(name);
    if (j < 0) {
      *error = "--effort_joints: '" + name +
               "' is not a joint of the chain (joints: " + joint_list + ")";
      return false;
    }
    if (tau_column[j] < 0 && current_column[j] < 0) {
      *error = "--effort_joints: " + path + " has no tau_" + name + " or i_" + name + " column";
      return false;
    }
    use[j] = true;
  }
  JointLog& out = *log;
  out = JointLog();
  out.source = path;
  out.t = table.values.col(time_column);
  Eigen::MatrixXd positions(ns, n), torques = Eigen::MatrixXd::Zero(ns, n),
                                    currents = Eigen::MatrixXd::Zero(ns, n);
  std::vector<bool> present(n, false);
  std::vector<std::string> unused;
  out.effort_source.assign(n, "");
  for (int j = 0; j < n; ++j) {
    positions.col(j) = table.values.col(q_column[j]);
    const int effort = tau_column[j] >= 0 ? tau_column[j] : current_column[j];
    if (effort < 0) continue;
    const std::string finding = ChannelFinding(table.header[effort], table.values.col(effort));
    if (!finding.empty()) out.findings.push_back(finding);
    if (!use[j]) {
      unused.push_back(table.header[effort]);
      continue;
    }
    present[j] = true;
    out.effort_source[j] = table.header[effort];
    if (tau_column[j] >= 0) {
      torques.col(j) = table.values.col(effort);
    } else {
      currents.col(j) = table.values.col(effort);
    }
  }
  models::JointPositionsFromData(drives, positions, &out.q);
  Eigen::MatrixXd from_torques, from_currents;
  models::JointTorquesFromData(drives, torques, &from_torques);
  models::JointTorquesFromCurrents(drives, currents, &from_currents);
  out.tau = from_torques + from_currents;
  // Joint j's torque is known when every effort it is made of was recorded: its own for
  // joint-side torques, every motor that turns with it (a non-zero R(k, j)) otherwise.
  const Eigen::MatrixXd& r = drives.motor_from_joint;
  out.measured.assign(n, false);
  for (int j = 0; j < n; ++j) {
    const bool joint_side_torque = tau_column[j] >= 0 && drives.side == models::DataSide::kJoint;
    bool known = present[j];
    if (!joint_side_torque) {
      for (int k = 0; k < n; ++k) known = known && (r(k, j) == 0.0 || present[k]);
    }
    out.measured[j] = known;
    if (!known) out.tau.col(j).setConstant(std::nan(""));
  }
  if (std::find(out.measured.begin(), out.measured.end(), true) == out.measured.end()) {
    *error = path +
             ": no joint torque can be formed (give tau_<joint> or i_<joint> columns, "
             "and every motor of a coupled joint)";
    return false;
  }
  int references = 0;
  for (int j = 0; j < n; ++j) references += qref_column[j] >= 0;
  if (references > 0 && references < n) {
    for (int j = 0; j < n; ++j) {
      if (qref_column[j] < 0) {
        *error = path + ":" + std::to_string(table.header_line) + ": missing column 'qref_" +
                 chain.joints[j].name + "' (a reference trajectory needs every joint)";
        return false;
      }
    }
  }
  if (references == n) {
    Eigen::MatrixXd reference(ns, n);
    for (int j = 0; j < n; ++j) reference.col(j) = table.values.col(qref_column[j]);
    models::JointPositionsFromData(drives, reference, &out.qref);
  }
  bool any_dq = false;
  for (int j = 0; j < n; ++j) any_dq = any_dq || dq_column[j] >= 0;
  if (any_dq) {
    Eigen::MatrixXd velocities = Eigen::MatrixXd::Constant(ns, n, std::nan(""));
    for (int j = 0; j < n; ++j) {
      if (dq_column[j] >= 0) velocities.col(j) = table.values.col(dq_column[j]);
    }
    models::JointPositionsFromData(drives, velocities, &out.dq);
  }
  if (!unused.empty()) {
    std::string list;
    for (const std::string& name : unused) list += (list.empty() ? "" : ", ") + name;
    out.findings.push_back("effort columns not used (not in --effort_joints): " + list);
  }
  const Eigen::VectorXd steps = out.t.tail(ns - 1) - out.t.head(ns - 1);
  std::vector<double> sorted(steps.data(), steps.data() + steps.size());
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (sorted.back() - sorted.front() > 1e-6 * median) {
    out.findings.push_back("time steps " + Format("%.4g", 1e3 * sorted.front()) + " to " +
                           Format("%.4g", 1e3 * sorted.back()) + " ms (median " +
                           Format("%.4g", 1e3 * median) +
                           " ms): not uniform, so the derivatives come from IRW smoothing at "
                           "the time stamps (no resampling)");
  }
  return true;
}

}  // namespace dynid::identify
