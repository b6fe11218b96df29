#include "experiments/identify/identify_output.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"

namespace dynid::identify {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Num(double value) {
  char buffer[32];
  return std::string(buffer, data::FormatNumber(value, buffer));
}

std::string Fixed(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// JSON number, or null for NaN/inf (JSON has neither).
nlohmann::json JsonNumber(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

double RelativeStdPercent(double estimate, double std) {
  return std::abs(estimate) > 0.0 ? 100.0 * std / std::abs(estimate) : kNaN;
}

// Per base parameter: is the estimate within 1 % of its own σ of the nearest physically
// consistent one (the consistent fit's columns)? The consistent fit minimises the same weighted
// cost under the constraints, so an estimate that was itself consistent is reproduced by it.
std::vector<bool> ConsistentRows(const IdentifyResults& r, Method method) {
  const MethodEstimate& estimate = r.Estimate(method);
  const MethodEstimate& pc = r.Estimate(Method::kPc);
  std::vector<bool> rows(estimate.base.size(), false);
  if (method == Method::kPc) return std::vector<bool>(estimate.base.size(), pc.available);
  if (method == Method::kPrior) {
    return std::vector<bool>(estimate.base.size(), r.prior_consistency.consistent);
  }
  if (!pc.available) return rows;
  for (Eigen::Index i = 0; i < estimate.base.size(); ++i) {
    const double z = (pc.base[i] - estimate.base[i]) / estimate.base_std[i];
    rows[i] = std::isfinite(z) ? std::abs(z) <= 0.01 : pc.base[i] == estimate.base[i];
  }
  return rows;
}

std::string ParametersCsv(const IdentifyResults& r, Method chosen, const QuotedCoverage& coverage) {
  const MethodEstimate& e = r.Estimate(chosen);
  const MethodEstimate& prior = r.Estimate(Method::kPrior);
  const MethodEstimate& ls = r.Estimate(Method::kLs);
  const MethodEstimate& pc = r.Estimate(Method::kPc);
  const std::vector<bool> consistent = ConsistentRows(r, chosen);
  std::ostringstream out;
  out << "parameter,estimate,std,rel_std_percent,physically_consistent,three_std,prior,ls,ls_std,"
         "ls_three_std,pc,pc_std,pc_three_std,ls_hac_std,ls_to_pc_z,coverage_95,coverage_label,"
         "ls_coverage_95,ls_coverage_label,ls_hac_coverage_95,ls_hac_coverage_label,pc_hac_std,"
         "pc_hac_coverage_95,pc_hac_coverage_label\n";
  auto value = [](const MethodEstimate& m, const Eigen::VectorXd& v, int i) {
    return m.available ? v[i] : kNaN;
  };
  // LS σ valid under serially correlated residuals (Newey–West, solvers/residual_analysis.h).
  // How far each LS estimate had to move to become consistent, in its own σ.
  auto ls_to_pc = [&](int i) {
    return ls.available && pc.available && r.ls_to_pc.z.size() > i ? r.ls_to_pc.z[i] : kNaN;
  };
  auto hac_std = [&](Method method, int i) {
    const solvers::HacCovariance* hac = r.Hac(method);
    return hac != nullptr ? hac->standard_deviation[i] : kNaN;
  };
  for (int i = 0; i < r.base.size(); ++i) {
    out << r.base.names[i] << ',' << Num(e.base[i]) << ',' << Num(e.base_std[i]) << ','
        << Num(RelativeStdPercent(e.base[i], e.base_std[i])) << ',' << (consistent[i] ? 1 : 0)
        << ',' << Num(3.0 * e.base_std[i]) << ',' << Num(prior.base[i]) << ','
        << Num(value(ls, ls.base, i)) << ',' << Num(value(ls, ls.base_std, i)) << ','
        << Num(3.0 * value(ls, ls.base_std, i)) << ',' << Num(value(pc, pc.base, i)) << ','
        << Num(value(pc, pc.base_std, i)) << ',' << Num(3.0 * value(pc, pc.base_std, i)) << ','
        << Num(hac_std(Method::kLs, i)) << ',' << Num(ls_to_pc(i));
    // The measured coverage of the interval (--coverage_csv) of the chosen method, LS, LS HAC
    // and (after its σ) the physically consistent fit's HAC.
    auto quote = [&](const std::string& estimator) {
      const solvers::CoverageRow* row = QuotedRow(coverage, estimator, r.base.names[i]);
      out << ',' << Num(row != nullptr && row->with_interval > 0 ? row->coverage_95 : kNaN) << ','
          << IntervalLabel(row);
    };
    for (const char* estimator : {MethodName(chosen), "ls", "ls_hac"}) quote(estimator);
    out << ',' << Num(hac_std(Method::kPc, i));
    quote("pc_hac");
    out << '\n';
  }
  return out.str();
}

// Mass, centre of mass and inertia about it (link-frame axes) of link j of θ_std.
struct LinkSummary {
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Constant(kNaN);
  Eigen::Matrix3d inertia_at_com = Eigen::Matrix3d::Constant(kNaN);
};
LinkSummary SummariseLink(const models::SerialRobot& robot, const Eigen::VectorXd& theta,
                          int joint) {
  const models::LinkInertia link =
      models::LinkInertia::FromValues(theta.data() + robot.InertialIndex(joint));
  LinkSummary s;
  s.mass = link.m;
  if (link.m > 0.0) {
    s.com = link.FirstMoment() / link.m;
    // Parallel-axis theorem: J_o = J_c + m (|c|² I − c cᵀ).
    s.inertia_at_com =
        link.InertiaTensor() -
        link.m * (s.com.squaredNorm() * Eigen::Matrix3d::Identity() - s.com * s.com.transpose());
  }
  return s;
}

std::string StandardParametersCsv(const models::SerialRobot& robot, const IdentifyResults& r) {
  const MethodEstimate& pc = r.Estimate(Method::kPc);
  const MethodEstimate& prior = r.Estimate(Method::kPrior);
  std::ostringstream out;
  out << "link,joint,mass_kg,mass_std_kg,com_x_m,com_y_m,com_z_m,ixx_kgm2,ixy_kgm2,ixz_kgm2,"
         "iyy_kgm2,iyz_kgm2,izz_kgm2,prior_mass_kg,prior_com_x_m,prior_com_y_m,prior_com_z_m\n";
  for (int j = 0; j < robot.num_joints(); ++j) {
    const LinkSummary s = pc.available ? SummariseLink(robot, pc.standard, j) : LinkSummary();
    const LinkSummary p = SummariseLink(robot, prior.standard, j);
    const int mass_index = robot.InertialIndex(j) + 9;
    const double mass_std = pc.available ? r.pc.standard_deviation[mass_index] : kNaN;
    out << j + 1 << ',' << r.joint_names[j] << ',' << Num(pc.available ? s.mass : kNaN) << ','
        << Num(mass_std);
    for (int a = 0; a < 3; ++a) out << ',' << Num(s.com[a]);
    const Eigen::Matrix3d& i = s.inertia_at_com;
    for (double v : {i(0, 0), i(0, 1), i(0, 2), i(1, 1), i(1, 2), i(2, 2)}) out << ',' << Num(v);
    out << ',' << Num(p.mass);
    for (int a = 0; a < 3; ++a) out << ',' << Num(p.com[a]);
    out << '\n';
  }
  return out.str();
}

std::string ValidationCsv(const IdentifyResults& r) {
  std::ostringstream out;
  out << "method,joint,rms_error,rms_measured,relative_error\n";
  for (const MethodEstimate& e : r.estimates) {
    if (!e.validated) continue;
    const solvers::TorqueValidation& v = e.validation;
    for (int j : v.joints) {
      out << MethodName(e.method) << ',' << r.joint_names[j] << ',' << Num(v.rms_error[j]) << ','
          << Num(v.rms_measured[j]) << ',' << Num(v.relative_error[j]) << '\n';
    }
    out << MethodName(e.method) << ",pooled," << Num(v.pooled_rms_error) << ','
        << Num(v.pooled_rms_measured) << ',' << Num(v.pooled_relative_error) << '\n';
  }
  return out.str();
}

// Validation torques: t, then per measured joint tau_<joint> and <method>_<joint>.
bool WriteValidationTorques(const IdentifyResults& r, const std::string& path, std::string* error) {
  std::vector<std::string> header = {"t"};
  std::vector<Eigen::VectorXd> columns = {r.validation_time};
  for (int j = 0; j < static_cast<int>(r.joint_names.size()); ++j) {
    if (!r.measured[j]) continue;
    header.push_back("tau_" + r.joint_names[j]);
    columns.push_back(r.validation_record.tau.col(j));
    for (const MethodEstimate& e : r.estimates) {
      if (!e.validated) continue;
      header.push_back(std::string(MethodName(e.method)) + "_" + r.joint_names[j]);
      columns.push_back(e.validation.predicted.col(j));
    }
  }
  Eigen::MatrixXd values(r.validation_time.size(), static_cast<Eigen::Index>(columns.size()));
  for (size_t c = 0; c < columns.size(); ++c) values.col(static_cast<Eigen::Index>(c)) = columns[c];
  return data::WriteCsv(path, header, values, error);
}

bool RenderFigures(const models::SerialRobot& robot, const IdentifyResults& r,
                   const std::string& directory, std::string* error) {
  if (r.validation_samples > 0) {
    data::Figure torques;
    torques.title = "Measured and predicted torques on the validation record";
    torques.panel_height_in = 2.2;
    for (int j = 0; j < static_cast<int>(r.joint_names.size()); ++j) {
      if (!r.measured[j]) continue;
      const std::string& name = r.joint_names[j];
      const bool prismatic = robot.joints()[j].type == models::JointType::kPrismatic;
      data::Panel panel;
      panel.title = name;
      panel.xlabel = "time [s]";
      panel.ylabel = prismatic ? "force [N]" : "torque [N m]";
      panel.series.push_back(
          data::LineSeries("validation_torques.csv", "t", "tau_" + name, "measured"));
      for (const MethodEstimate& e : r.estimates) {
        if (!e.validated || e.method == Method::kWls) continue;
        panel.series.push_back(data::LineSeries("validation_torques.csv", "t",
                                                std::string(MethodName(e.method)) + "_" + name,
                                                MethodLabel(e.method)));
      }
      torques.panels.push_back(panel);
    }
    if (!data::RenderFigure(torques, directory, "torques", error)) return false;
  }
  data::Figure parameters;
  parameters.title = "Base parameters with ±3σ (SI units; symmetric-log scale)";
  parameters.width_in = std::max(8.0, 0.18 * r.base.size());
  parameters.panel_height_in = 4.0;
  data::Panel panel;
  panel.xlabel = "base parameter";
  panel.ylabel = "estimate (SI units)";
  panel.x_tick_rotation_deg = 70.0;
  panel.symlog_threshold = 1e-3;
  for (Method method : {Method::kLs, Method::kPc}) {
    if (!r.Estimate(method).available) continue;
    data::Series series;
    series.csv = "parameters.csv";
    series.x = "parameter";
    series.y = MethodName(method);
    series.lower = series.upper = std::string(MethodName(method)) + "_three_std";
    series.style = "errorbar";
    series.label = MethodLabel(method);
    panel.series.push_back(series);
  }
  parameters.panels.push_back(panel);
  return data::RenderFigure(parameters, directory, "parameters", error);
}

nlohmann::json MethodJson(const IdentifyResults& r, const MethodEstimate& e) {
  nlohmann::json j;
  j["label"] = MethodLabel(e.method);
  j["available"] = e.available;
  if (!e.message.empty()) j["message"] = e.message;
  if (!e.available) return j;
  j["relative_error"] = e.relative_error;
  if (e.validated) {
    nlohmann::json per_joint;
    for (int joint : e.validation.joints) {
      per_joint[r.joint_names[joint]] = e.validation.relative_error[joint];
    }
    j["validation_relative_error"] = per_joint;
    j["validation_relative_error_pooled"] = e.validation.pooled_relative_error;
  }
  return j;
}

std::string Report(const models::SerialRobot& robot, const IdentifyResults& r,
                   const RunDescription& run) {
  std::ostringstream out;
  out << "# Identification of " << robot.name() << "\n\n";
  out << "- description: `" << run.robot_file << "`"
      << (run.chain.empty() ? "" : ", chain `" + run.chain + "`") << "; drives: " << run.drives_file
      << "\n";
  out << "- identification record: `" << run.data_file << "`, " << r.identification_samples
      << " samples; validation: " << run.validation << " (" << r.validation_samples
      << " samples)\n";
  out << "- differentiation: " << run.differentiator << "; " << r.system.x.rows() << " rows × "
      << r.base.size() << " base parameters of the measured equations ("
      << (r.base.closed_form ? "Khalil's closed form" : "numerical QR")
      << "); cond(X) = " << Fixed("%.4g", r.condition_number) << "\n";
  out << "- measured torques:";
  for (size_t j = 0; j < r.measured.size(); ++j) {
    if (r.measured[j]) out << ' ' << r.joint_names[j];
  }
  out << "\n\n## What the records showed and what was done\n\n";
  for (const std::string& f : run.findings) out << "- " << f << "\n";
  for (const std::string& n : r.notes) out << "- " << n << "\n";
  out << "\n## Drive terms\n\n";
  for (const std::string& t : run.drive_terms) out << "- " << t << "\n";
  out << "\n## Torque prediction\n\n" << ValidationTable(r) << "\n";
  // Residual whiteness: with correlated residuals the classical σ understate the spread.
  if (r.Estimate(Method::kLs).available && !r.ls.whiteness.blocks.empty()) {
    int coloured = 0;
    for (const solvers::BlockWhiteness& block : r.ls.whiteness.blocks) coloured += !block.white;
    out << "\n## Residuals (IDIM-LS)\n\n"
        << coloured << " of " << r.ls.whiteness.blocks.size()
        << " measured joints have residuals that are not white (Ljung–Box test at 5 %).";
    // "M times as large (median over n parameters; lo to hi)" of hac / classical σ, or empty.
    auto ratio_range = [](const Eigen::VectorXd& hac, const Eigen::VectorXd& classical) {
      std::vector<double> ratios;
      for (Eigen::Index i = 0; i < hac.size(); ++i) {
        const double ratio = hac[i] / classical[i];
        if (std::isfinite(ratio)) ratios.push_back(ratio);
      }
      std::sort(ratios.begin(), ratios.end());
      if (ratios.empty()) return std::string();
      return Fixed("%.2g", ratios[ratios.size() / 2]) + " times as large (median over the " +
             std::to_string(ratios.size()) + " parameters; " + Fixed("%.2g", ratios.front()) +
             " to " + Fixed("%.2g", ratios.back()) + ")";
    };
    const solvers::HacCovariance* ls_hac = r.Hac(Method::kLs);
    const std::string ls_ratio =
        ls_hac != nullptr ? ratio_range(ls_hac->standard_deviation, r.ls.fit.standard_deviation)
                          : std::string();
    if (!ls_ratio.empty()) {
      out << " The classical σ (σ̂² (XᵀX)⁻¹) then understate the uncertainty; the HAC σ "
             "(Newey–West, Bartlett lags L = "
          << ls_hac->lags << " by the `--hac_bandwidth=" << run.hac_bandwidth
          << "` rule, column `ls_hac_std` of parameters.csv) are " << ls_ratio
          << ". Their 95 % intervals are θ̂ ± "
          << Fixed("%.3g", solvers::HacCriticalValue95(*ls_hac, run.hac_critical_value))
          << " σ (`--hac_critical=" << solvers::HacCriticalValueName(run.hac_critical_value)
          << "`).";
    }
    const solvers::HacCovariance* pc_hac = r.Hac(Method::kPc);
    const std::string pc_ratio =
        pc_hac != nullptr ? ratio_range(pc_hac->standard_deviation, r.pc.column_standard_deviation)
                          : std::string();
    if (!pc_ratio.empty()) {
      out << " The physically consistent fit's HAC σ (the same sandwich about its solution, L = "
          << pc_hac->lags << ", column `pc_hac_std`), against its delta-method σ, are " << pc_ratio
          << "; its intervals θ̂ ± "
          << Fixed("%.3g", solvers::HacCriticalValue95(*pc_hac, run.hac_critical_value)) << " σ.";
    }
    out << "\n";
  }
  out << "\n## Physical consistency\n\n";
  out << "- description prior: " << (r.prior_consistency.consistent ? "consistent" : "INCONSISTENT")
      << "\n";
  for (const std::string& v : r.prior_consistency.violations) out << "  - " << v << "\n";
  const MethodEstimate& pc = r.Estimate(Method::kPc);
  if (pc.available) {
    out << "- IDIM-LS → nearest consistent estimate: Mahalanobis distance "
        << Fixed("%.3g", r.ls_to_pc.mahalanobis) << ", largest |z| "
        << Fixed("%.3g", r.ls_to_pc.max_abs_z)
        << (r.ls_to_pc.worst >= 0 ? " (" + r.base.names[r.ls_to_pc.worst] + ")" : "") << "\n";
    out << "\n```\n" << r.pc.Report() << "```\n";
  } else {
    out << "- the physically consistent fit failed: " << pc.message << "\n";
  }
  // What the record determines: relative standard deviations of at most 10 %, inertial
  // (combinations of link parameters) and drive parameters (rotor inertia, friction, offsets)
  // apart, since a motion may excite one and not the other. Judged on the data alone: the
  // IDIM-LS σ (the physically consistent fit's σ carry its prior and its bounds).
  const MethodEstimate& chosen = r.Estimate(run.chosen);
  const Method judge = r.Estimate(Method::kLs).available ? Method::kLs : run.chosen;
  const MethodEstimate& judged = r.Estimate(judge);
  int inertial = 0, inertial_determined = 0, drive = 0, drive_determined = 0;
  std::ostringstream poorly;
  for (int i = 0; i < r.base.size(); ++i) {
    const models::ParameterKind kind = robot.parameter_info()[r.base.kept[i]].kind;
    const bool is_inertial = kind <= models::ParameterKind::kM;
    const bool determined = RelativeStdPercent(judged.base[i], judged.base_std[i]) <= 10.0;
    (is_inertial ? inertial : drive) += 1;
    if (determined) {
      (is_inertial ? inertial_determined : drive_determined) += 1;
    } else {
      poorly << (poorly.tellp() > 0 ? ", " : "") << r.base.names[i];
    }
  }
  out << "\n## What the record determines (" << MethodLabel(judge) << ", the data alone)\n\n";
  out << inertial_determined << " of " << inertial << " inertial and " << drive_determined << " of "
      << drive
      << " drive base parameters (rotor inertia, friction, offsets) have a relative standard "
         "deviation of at most 10 %.";
  if (2 * inertial_determined < inertial) {
    out << " **The inertial parameters are not identifiable from this recording**: most of "
           "their combinations are undetermined, so the motion excites them too little; their "
           "estimates are the prior's (physically consistent fit) or noise (least squares) along "
           "what the data do not fix. Torque predictions rest on gravity, friction and offsets.";
  }
  out << "\n\nNot determined to 10 %: " << poorly.str() << ".\n\n";
  if (r.essential.success) {
    out << "Essential parameters (Brunot et al. (2018) §4.1; removing any further one would "
           "raise the relative error by more than the threshold): "
        << r.essential.essential_names.size() << " of " << r.base.size() << ": ";
    for (size_t i = 0; i < r.essential.essential_names.size(); ++i) {
      out << (i ? ", " : "") << r.essential.essential_names[i];
    }
    out << " (relative error " << Fixed("%.4g", r.essential.final_fit.relative_error) << " against "
        << Fixed("%.4g", r.essential.full_relative_error) << " with all).\n\n";
  }
  out << "Parameter names number the joints of the chain:";
  for (size_t j = 0; j < r.joint_names.size(); ++j) {
    out << (j ? ", " : " ") << j + 1 << " = " << r.joint_names[j];
  }
  out << ".\n\n";
  out << "## Base parameters (" << MethodLabel(run.chosen) << ")\n\n";
  if (!run.coverage.source.empty()) {
    out << "The intervals of the σ column (± 1.96 σ) and of the HAC σ column (± c σ, c of "
           "\"Residuals\") are labelled with their coverage measured by the parametric bootstrap "
           "in `"
        << run.coverage.source << "`.\n\n";
  } else if (!run.coverage.withheld.empty()) {
    out << run.coverage.withheld << ".\n\n";
  }
  // The HAC σ beside the method's own (Newey–West, valid under correlated residuals).
  const solvers::HacCovariance* hac = r.Hac(run.chosen);
  const std::string hac_estimator = std::string(MethodName(run.chosen)) + "_hac";
  out << "| parameter | groups | estimate | σ | σ % | interval | HAC σ | HAC interval |\n"
         "|---|---|---|---|---|---|---|---|\n";
  for (int i = 0; i < r.base.size(); ++i) {
    out << "| " << r.base.names[i] << " | " << r.base.descriptions[i] << " | "
        << Fixed("%.5g", chosen.base[i]) << " | " << Fixed("%.3g", chosen.base_std[i]) << " | "
        << Fixed("%.3g", RelativeStdPercent(chosen.base[i], chosen.base_std[i])) << " | "
        << IntervalLabel(QuotedRow(run.coverage, MethodName(run.chosen), r.base.names[i])) << " | "
        << (hac != nullptr ? Fixed("%.3g", hac->standard_deviation[i]) : "–") << " | "
        << (hac != nullptr ? IntervalLabel(QuotedRow(run.coverage, hac_estimator, r.base.names[i]))
                           : "no HAC σ")
        << " |\n";
  }
  return out.str();
}

}  // namespace

std::string ValidationTable(const IdentifyResults& r) {
  std::ostringstream out;
  if (r.validation_samples == 0) {
    out << "no validation record\n";
    return out.str();
  }
  out << "relative RMS error of the predicted torques (validation record; identification "
         "record in the last column)\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-22s", "method");
  out << line;
  for (size_t j = 0; j < r.measured.size(); ++j) {
    if (!r.measured[j]) continue;
    std::snprintf(line, sizeof(line), " %16s", r.joint_names[j].c_str());
    out << line;
  }
  out << "           pooled   identification\n";
  for (const MethodEstimate& e : r.estimates) {
    std::snprintf(line, sizeof(line), "%-22s", MethodLabel(e.method));
    out << line;
    if (!e.available || !e.validated) {
      out << "  not available: " << e.message << "\n";
      continue;
    }
    for (int j : e.validation.joints) {
      std::snprintf(line, sizeof(line), " %16.3f", e.validation.relative_error[j]);
      out << line;
    }
    std::snprintf(line, sizeof(line), " %16.3f %16.3f\n", e.validation.pooled_relative_error,
                  e.relative_error);
    out << line;
  }
  return out.str();
}

bool WriteIdentifyOutputs(const models::SerialRobot& robot, const IdentifyResults& r,
                          const RunDescription& run, bool figures, data::OutputStage* stage,
                          std::string* error) {
  if (!stage->WriteText("parameters.csv", ParametersCsv(r, run.chosen, run.coverage), error) ||
      !stage->WriteText("standard_parameters.csv", StandardParametersCsv(robot, r), error)) {
    return false;
  }
  if (r.validation_samples > 0 &&
      (!stage->WriteText("validation.csv", ValidationCsv(r), error) ||
       !WriteValidationTorques(r, stage->Path("validation_torques.csv"), error))) {
    return false;
  }
  nlohmann::json summary;
  summary["robot"] = robot.name();
  summary["description"] = run.robot_file;
  summary["chain"] = run.chain;
  summary["drives"] = run.drives_file;
  summary["data"] = run.data_file;
  summary["validation"] = run.validation;
  summary["differentiator"] = run.differentiator;
  // The HAC covariance: its bandwidth rule and the Bartlett lags it chose per estimator.
  nlohmann::json hac_lags = nlohmann::json::object(), hac_critical = nlohmann::json::object();
  for (Method method : {Method::kLs, Method::kWls, Method::kPc, Method::kIv}) {
    if (const solvers::HacCovariance* hac = r.Hac(method)) {
      hac_lags[MethodName(method)] = hac->lags;
      hac_critical[MethodName(method)] = solvers::HacCriticalValue95(*hac, run.hac_critical_value);
    }
  }
  summary["hac"] = {{"bandwidth", run.hac_bandwidth},
                    {"lags", hac_lags},
                    {"critical_value_rule", solvers::HacCriticalValueName(run.hac_critical_value)},
                    {"critical_value", hac_critical}};
  summary["method"] = MethodName(run.chosen);
  summary["joints"] = r.joint_names;
  nlohmann::json measured = nlohmann::json::array();
  for (size_t j = 0; j < r.measured.size(); ++j) {
    if (r.measured[j]) measured.push_back(r.joint_names[j]);
  }
  summary["measured_joints"] = measured;
  summary["identification_samples"] = r.identification_samples;
  summary["validation_samples"] = r.validation_samples;
  summary["rows_used"] = r.system.x.rows();
  summary["base_parameters"] = r.base.size();
  summary["condition_number"] = JsonNumber(r.condition_number);
  nlohmann::json methods, relative, validation_relative;
  for (const MethodEstimate& e : r.estimates) {
    methods[MethodName(e.method)] = MethodJson(r, e);
    if (e.available) relative[MethodName(e.method)] = e.relative_error;
    if (e.validated) {
      validation_relative[MethodName(e.method)] = e.validation.pooled_relative_error;
    }
  }
  summary["methods"] = methods;
  summary["relative_error"] = relative;
  summary["validation_relative_error"] = validation_relative;
  if (r.Estimate(Method::kLs).available) {
    nlohmann::json whiteness;
    for (const solvers::BlockWhiteness& block : r.ls.whiteness.blocks) {
      // Blocks are named "joint <k>" (1-based chain order).
      std::string name = block.name;
      if (name.rfind("joint ", 0) == 0) {
        const int k = std::atoi(name.c_str() + 6);
        if (k >= 1 && k <= static_cast<int>(r.joint_names.size())) name = r.joint_names[k - 1];
      }
      whiteness[name] = {
          {"ljung_box_q", block.ljung_box_q}, {"p_value", block.p_value}, {"white", block.white}};
    }
    summary["whiteness_ls"] = whiteness;
  }
  nlohmann::json consistency;
  consistency["prior_consistent"] = r.prior_consistency.consistent;
  if (r.Estimate(Method::kPc).available) {
    consistency["pc_converged"] = r.pc.solver.converged;
    consistency["pc_at_bound"] = r.pc.at_bound;
    consistency["pc_undetermined_directions"] = r.pc.undetermined.size();
    consistency["ls_to_pc_mahalanobis"] = JsonNumber(r.ls_to_pc.mahalanobis);
    consistency["ls_to_pc_max_abs_z"] = JsonNumber(r.ls_to_pc.max_abs_z);
  }
  summary["physical_consistency"] = consistency;
  if (r.essential.success) {
    summary["essential_parameters"] = r.essential.essential_names;
    summary["essential_relative_error"] = r.essential.final_fit.relative_error;
  }
  summary["coverage"] = CoverageSummaryJson(run.coverage, r.base.names);
  summary["findings"] = run.findings;
  summary["notes"] = r.notes;
  summary["computation_s"] = run.seconds;
  if (!stage->WriteJson("summary.json", summary, error) ||
      !stage->WriteText("report.md", Report(robot, r, run), error)) {
    return false;
  }
  if (!figures) return true;
  const std::string directory = stage->Path("");
  return RenderFigures(robot, r, directory, error);
}

}  // namespace dynid::identify
