// experiments/tx40_study/tx40_output — tables.md, estimates.csv, summary.json, the
// per-scenario CSVs and figures of tx40_study (see tx40_output.h).
#include "experiments/tx40_study/tx40_output.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/data/parallel_for.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/essential_parameters.h"
#include "experiments/common/progress.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_published.h"

namespace dynid::tx40_study {
namespace {

namespace published = dynid::experiments;

std::string GuardBand(int rows, double seconds) {
  if (rows == 0 && seconds == 0.0) return "no guard band";
  return "guard band max(" + std::to_string(rows) + " rows, " + Number(seconds) + " s)";
}

// The IDIM-LS conv. estimates with the other guard band beside the run's own, per knowledge
// level: the relative change the guard band causes on every essential parameter.
void GuardComparison(const Settings& settings, const solvers::IdimModel& model, const Runs& runs,
                     const Runs& comparison, std::ostringstream* md, nlohmann::json* summary) {
  const bool used_has_guard = settings.guard_rows > 0 || settings.guard_s > 0.0;
  const std::string used = GuardBand(settings.guard_rows, settings.guard_s);
  const std::string other = GuardBand(settings.comparison_guard_rows, settings.comparison_guard_s);
  const int b =
      std::min<int>(model.num_parameters(), static_cast<int>(models::Tx40EssentialNames().size()));
  *md << "\n## Guard band: its effect on the IDIM-LS conv. estimates\n\nThe results above use "
      << used << " (" << settings.guard_source << "). IDIM-LS conv. was run again with " << other
      << (used_has_guard ? " (the procedure of Brunot et al. (2018))"
                         : " (the simulated study's default, --guard_rows=5 --guard_s=0.04)")
      << "; change = (estimate with the guard band − estimate without) / |estimate without|.\n";
  nlohmann::json entry;
  entry["method"] = "idim_ls_conventional";
  entry["used"] = used;
  entry["compared"] = other;
  entry["change_definition"] = "(with guard band - without) / |without|";
  for (const Job& job : runs.jobs) {
    if (job.method.key != "idim_ls_conventional") continue;
    const Job* twin = nullptr;
    for (const Job& candidate : comparison.jobs) {
      if (candidate.knowledge == job.knowledge) twin = &candidate;
    }
    const std::string scenario = dynid::experiments::PriorKnowledgeName(job.knowledge);
    if (twin == nullptr || !job.ok || !twin->ok) {
      *md << "\n"
          << scenario << " knowledge: no comparison ("
          << (twin == nullptr ? std::string("not run")
              : job.ok        ? twin->error
                              : job.error)
          << ").\n";
      continue;
    }
    const solvers::IdimResult& without = used_has_guard ? twin->result : job.result;
    const solvers::IdimResult& with = used_has_guard ? job.result : twin->result;
    *md << "\n### " << scenario << " knowledge\n\nrelative error "
        << Number(100 * without.fit.relative_error, 3) << " % on " << without.fit.num_rows
        << " rows without the guard band, " << Number(100 * with.fit.relative_error, 3) << " % on "
        << with.fit.num_rows
        << " rows with it.\n\n| param | no guard band: estimate (%σ) | with guard band: "
           "estimate (%σ) | change % |\n|---|---|---|---|\n";
    nlohmann::json level;
    level["scenario"] = scenario;
    level["relative_error_without"] = without.fit.relative_error;
    level["relative_error_with"] = with.fit.relative_error;
    level["rows_without"] = without.fit.num_rows;
    level["rows_with"] = with.fit.num_rows;
    nlohmann::json parameters = nlohmann::json::array();
    for (int i = 0; i < b; ++i) {
      const double a = without.fit.theta[i], c = with.fit.theta[i];
      const double change = 100.0 * (c - a) / std::abs(a);
      *md << "| " << model.names()[i] << " | " << Number(a, 4) << " ("
          << Number(without.fit.relative_std_percent[i], 3) << ") | " << Number(c, 4) << " ("
          << Number(with.fit.relative_std_percent[i], 3) << ") | " << Number(change, 3) << " |\n";
      parameters.push_back({{"parameter", model.names()[i]},
                            {"without_guard_band", a},
                            {"with_guard_band", c},
                            {"relative_change_percent", change}});
    }
    level["parameters"] = parameters;
    entry["levels"].push_back(level);
  }
  (*summary)["guard_band_comparison"] = entry;
}

}  // namespace

void BuildTables(const Settings& settings, const solvers::IdimModel& model, const Record& record,
                 const Runs& runs, const Runs* guard_comparison, double compute_seconds,
                 const MeasuredCoverage* coverage, std::string* markdown, std::string* estimates,
                 nlohmann::json* summary_out) {
  const bool real = settings.real;
  const bool select_samples = settings.select_samples;
  const std::vector<dynid::experiments::PriorKnowledge>& levels = settings.levels;
  const Eigen::VectorXd& theta_true = record.theta_true;
  const std::string& data_description = record.data_description;
  const std::vector<SystemKey>& system_keys = runs.system_keys;
  const std::vector<solvers::IdimSystem>& systems = runs.systems;
  const std::vector<Job>& jobs = runs.jobs;
  nlohmann::json& summary = *summary_out;
  auto true_value = [&](int i) { return theta_true.size() ? theta_true[i] : std::nan(""); };
  std::ostringstream md;
  md << "# TX40 study (Brunot et al. (2018))\n\n" << data_description << ".\n\n";
  md << "Identified: " << model.num_parameters() << " parameters (" << settings.parameters
     << (settings.torque_offsets ? ", with the torque offsets off1..off6" : "")
     << "). Sample selection: "
     << (select_samples ? "ON (rows with |q'_j| < " + Number(settings.velocity_threshold) +
                              " rad/s and the leading/trailing rest excluded, and " +
                              GuardBand(settings.guard_rows, settings.guard_s) + " around them — " +
                              settings.guard_source + "; rows used per run below)"
                        : std::string("off (all decimated rows used)"))
     << ". IDIM-IV: instruments from the noise-free closed-loop simulation driven by the "
        "reference with the current estimate, same decimation; θ⁰ = CAD inertias, zero "
        "friction; tolerance "
     << Number(settings.iv_tolerance) << " on both relative changes, cap "
     << settings.max_iterations
     << (settings.iv_stall_iterations > 0
             ? ", stopped as not converging when neither change has decreased for " +
                   std::to_string(settings.iv_stall_iterations) + " iterations"
             : std::string())
     << "; reference: "
     << (record.iv_reference.empty() ? std::string("none (no IDIM-IV)") : record.iv_reference)
     << ".\n\n";
  if (record.substitute_reference) {
    md << "**" << kSubstituteReference
       << "**: the record has no reference trajectory, so the auxiliary model follows the "
          "smoothed measured positions (runs marked \"subst. ref.\"); give --reference_csv "
          "when the reference exists.\n\n";
  }
  summary["data"] = data_description;
  summary["simulated"] = !real;
  summary["parameters"] = settings.parameters;
  summary["torque_offsets"] = settings.torque_offsets;
  summary["sample_selection"] = select_samples;
  summary["velocity_threshold_rad_per_s"] = settings.velocity_threshold;
  if (select_samples) {
    summary["guard_band"] = {{"rows", settings.guard_rows},
                             {"seconds", settings.guard_s},
                             {"text", GuardBand(settings.guard_rows, settings.guard_s)},
                             {"source", settings.guard_source}};
  }
  summary["iv_reference"] = record.iv_reference;
  summary["iv_substitute_reference"] = record.substitute_reference;
  if (record.substitute_reference) summary["iv_note"] = kSubstituteReference;
  summary["seed"] = settings.seed;
  summary["compute_seconds"] = compute_seconds;
  std::ostringstream estimates_csv;
  estimates_csv << "method,scenario,parameter,estimate,rel_std_percent,published,true\n";
  const char* table_number[3] = {"2", "4", "6"};
  for (dynid::experiments::PriorKnowledge level : levels) {
    const std::string scenario = dynid::experiments::PriorKnowledgeName(level);
    const int t = static_cast<int>(level);
    md << "## Table " << table_number[t] << " — " << scenario
       << " prior knowledge: estimate (%σ eq. 8 / σ²(XᵀX)⁻¹; %σ HAC) [published]\n\n| param | "
          "true |";
    for (const Job& job : jobs) {
      if (job.knowledge == level) md << " " << job.method.label << " |";
    }
    md << "\n|---|---|";
    for (const Job& job : jobs) {
      if (job.knowledge == level) md << "---|";
    }
    md << "\n";
    for (int i = 0; i < model.num_parameters(); ++i) {
      const std::string& name = model.names()[i];
      md << "| " << name << " | " << Number(true_value(i)) << " |";
      for (const Job& job : jobs) {
        if (job.knowledge != level) continue;
        const published::PublishedEstimate pub =
            published::PublishedValue(job.method.key, scenario, name);
        std::string cell;
        if (job.ok) {
          const double estimate = job.result.fit.theta[i];
          const double rel = job.result.fit.relative_std_percent[i];
          const bool hac = job.result.hac.success;
          const double hac_std = hac ? job.result.hac.standard_deviation[i] : std::nan("");
          cell = Number(estimate, 3) + " (" + Number(rel, 3) +
                 (hac ? "; " + Number(100.0 * hac_std / std::abs(estimate), 3) : std::string()) +
                 ")";
          if (theta_true.size() &&
              std::abs(estimate - theta_true[i]) > 3.0 * job.result.fit.standard_deviation[i]) {
            cell += " **>3σ**";
          }
          if (theta_true.size() && hac && std::abs(estimate - theta_true[i]) > 3.0 * hac_std) {
            cell += " **>3σ HAC**";
          }
          estimates_csv << job.method.key << "," << scenario << "," << name << ","
                        << Number(estimate, 10) << "," << Number(rel, 6) << ","
                        << Number(pub.estimate, 6) << "," << Number(true_value(i), 10) << "\n";
        } else {
          cell = "failed";
        }
        if (std::isfinite(pub.estimate)) {
          cell += " [" + Number(pub.estimate, 3) +
                  (std::isfinite(pub.relative_std_percent)
                       ? " (" + Number(pub.relative_std_percent, 3) + ")"
                       : std::string()) +
                  "]";
        }
        md << " " << cell << " |";
      }
      md << "\n";
    }
    md << "\n";
  }
  // Table 3 and 5 and diagnostics.
  md << "## Table 3 — relative error ||y − Xθ||/||y|| (published), and Table 5 — IDIM-IV "
        "iterations (published)\n\n| method | scenario | relative error % | iterations | "
        "converged | cond(X) | rows | residual white (Ljung–Box, per joint) | time s |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  for (const Job& job : jobs) {
    const std::string scenario = dynid::experiments::PriorKnowledgeName(job.knowledge);
    const double pub_error = published::PublishedRelativeErrorPercent(job.method.key, scenario);
    const int pub_iterations = published::PublishedIterations(job.method.key, scenario);
    const bool iv = job.method.estimator == solvers::IdimEstimator::kInstrumentalVariables;
    nlohmann::json entry;
    entry["method"] = job.method.key;
    entry["label"] = job.method.label;
    entry["scenario"] = scenario;
    if (iv) entry["iv_reference"] = record.iv_reference;
    entry["success"] = job.ok;
    std::string white_text = "-";
    if (job.ok) {
      const solvers::IdimResult& r = job.result;
      std::string per_joint;
      nlohmann::json joints = nlohmann::json::array();
      for (const solvers::BlockWhiteness& block : r.whiteness.blocks) {
        per_joint += block.white ? "w" : "N";
        joints.push_back({{"joint", block.name},
                          {"white", block.white},
                          {"p_value", block.p_value},
                          {"fraction_outside", block.fraction_outside}});
      }
      white_text = (r.whiteness.all_white ? "yes " : "NO ") + per_joint;
      entry["relative_error"] = r.fit.relative_error;
      entry["iterations"] = r.iterations;
      entry["converged"] = r.converged;
      entry["stalled"] = r.stalled;
      entry["condition_number"] = r.fit.condition_number;
      entry["rows_used"] = r.fit.num_rows;
      entry["residual_white"] = r.whiteness.all_white;
      entry["whiteness"] = joints;
      entry["message"] = r.message;
      entry["time_s"] = r.time_s;
      entry["simulations"] = r.simulations;
      if (r.hac.success) {
        entry["hac_lags"] = r.hac.lags;
        entry["hac_lag1_autocorrelation"] = r.hac.rho;
        entry["hac_bandwidth_fraction"] = r.hac.bandwidth_fraction;
        entry["hac_critical_value"] =
            solvers::HacCriticalValue95(r.hac, settings.hac_critical_value);
        std::vector<double> hac_rel(model.num_parameters());
        for (int i = 0; i < model.num_parameters(); ++i) {
          hac_rel[i] = 100.0 * r.hac.standard_deviation[i] / std::abs(r.fit.theta[i]);
        }
        entry["rel_std_percent_hac"] = hac_rel;
      }
      entry["torque_change"] = r.torque_change;
      entry["parameter_change"] = r.parameter_change;
      const solvers::IdimSystem& system = systems[job.system];
      entry["decimation_factor"] = system.options.decimation_factor;
      entry["position_cutoff_hz"] = system.options.position_cutoff_hz;
      entry["nvr_position"] = system.nvr_position;
      entry["nvr_velocity"] = system.nvr_velocity;
      if (!system.selection_report.empty()) entry["selection"] = system.selection_report;
      if (theta_true.size()) {
        int outside = 0;
        for (int i = 0; i < model.num_parameters(); ++i) {
          if (std::abs(r.fit.theta[i] - theta_true[i]) > 3.0 * r.fit.standard_deviation[i]) {
            ++outside;
          }
        }
        entry["parameters_outside_3sigma"] = outside;
        if (r.hac.success) {
          int outside_hac = 0;
          for (int i = 0; i < model.num_parameters(); ++i) {
            outside_hac +=
                std::abs(r.fit.theta[i] - theta_true[i]) > 3.0 * r.hac.standard_deviation[i];
          }
          entry["parameters_outside_3sigma_hac"] = outside_hac;
        }
        entry["parameter_error_norm_relative"] =
            (r.fit.theta - theta_true).norm() / theta_true.norm();
      }
      md << "| " << job.method.label << " | " << scenario << " | "
         << Number(100 * r.fit.relative_error, 3) << " ("
         << (std::isfinite(pub_error) ? Number(pub_error, 3) : std::string("–")) << ") | "
         << (iv ? std::to_string(r.iterations) : std::string("-"));
      if (iv && pub_iterations != 0) {
        md << " ("
           << (pub_iterations < 0 ? std::string("no conv.") : std::to_string(pub_iterations))
           << ")";
      }
      md << " | " << (iv ? (r.converged ? "yes" : "**NO**") : "-") << " | "
         << Number(r.fit.condition_number, 4) << " | " << r.fit.num_rows << " | " << white_text
         << " | " << Number(r.time_s, 3) << " |\n";
    } else {
      entry["error"] = job.error;
      md << "| " << job.method.label << " | " << scenario << " | failed: " << job.error
         << " | | | | | | |\n";
    }
    if (std::isfinite(pub_error)) entry["published_relative_error_percent"] = pub_error;
    if (coverage != nullptr) {
      entry["coverage_label"] =
          RunCoverageLabel(*coverage, job.method.key, scenario, false, model.num_parameters());
      entry["coverage_label_hac"] =
          RunCoverageLabel(*coverage, job.method.key, scenario, true, model.num_parameters());
    }
    summary["runs"].push_back(entry);
  }
  if (coverage != nullptr) {
    // What the intervals of these runs are worth: the coverage measured by the Monte Carlo.
    md << "\n## Measured coverage of the 95 % intervals (eq. 8: estimate ± 1.96 σ; HAC: ± c σ, "
       << (settings.hac_critical_value == solvers::HacCriticalValue::kFixedB
               ? "c the fixed-b value of its bandwidth"
               : "c = 1.96")
       << ")\n\n"
       << (coverage->source.empty()
               ? std::string("No Monte Carlo coverage file was found: the intervals above are "
                             "not calibrated by any measurement (run --monte_carlo=50).")
               : "From " + coverage->source + " (" + coverage->scenario +
                     " simulation rows; the coverage of each parameter's interval over the "
                     "Monte Carlo seeds, calibrated = in [0.85, 1] over >= 20 seeds).")
       << (coverage->other_settings.empty()
               ? std::string()
               : " Not measured at this run's settings: " + coverage->other_settings + ".")
       << "\n\n| method | knowledge | eq. 8 / σ²(XᵀX)⁻¹ | HAC |\n|---|---|---|---|\n";
    for (const Job& job : jobs) {
      const std::string scenario = dynid::experiments::PriorKnowledgeName(job.knowledge);
      md << "| " << job.method.label << " | " << scenario << " | "
         << RunCoverageLabel(*coverage, job.method.key, scenario, false, model.num_parameters())
         << " | "
         << RunCoverageLabel(*coverage, job.method.key, scenario, true, model.num_parameters())
         << " |\n";
    }
    summary["coverage_source"] = coverage->source;
    if (!coverage->other_settings.empty()) {
      summary["coverage_other_settings"] = coverage->other_settings;
    }
    summary["coverage_scenario"] = coverage->scenario;
  }
  md << "\nWhiteness: 'w' = white, 'N' = not white (Ljung–Box, 20 lags, 5 %) per joint; the "
        "relative standard deviations of a run whose residuals are not white are not valid "
        "(Brunot et al. (2018) §4.3). Each estimate shows two relative standard deviations: "
        "the first from σ²(XᵀX)⁻¹ (LS) or Brunot et al. (2018) eq. 8 (IV), which assume white "
        "residuals; the second from the HAC (Newey–West, Andrews bandwidth) sandwich on the "
        "decimated rows, valid under correlated residuals. Entries marked **>3σ** (first) or "
        "**>3σ HAC** (second) lie more than 3 standard deviations from the true value.\n";
  // Essential parameters of THIS data set (Brunot et al. (2018) §4.1 procedure) on the first LS
  // system (good knowledge when it was run), beside the 28 of the paper.
  for (const Job& job : jobs) {
    if (job.method.estimator == solvers::IdimEstimator::kInstrumentalVariables) continue;
    solvers::EssentialParametersOptions essential_options;
    essential_options.least_squares.row_blocks = systems[job.system].blocks;
    // A streamed X (undecimated system) is formed whole for the selection.
    Eigen::MatrixXd formed;
    std::string why;
    if (systems[job.system].streamed &&
        !solvers::FormSystemRegressor(model, systems[job.system], &formed, &why)) {
      LOG(FATAL) << "essential parameters: " << why;
    }
    const solvers::EssentialParametersSummary essential = solvers::SelectEssentialParameters(
        systems[job.system].streamed ? formed : systems[job.system].x, systems[job.system].y,
        model.names(), essential_options);
    md << "\n## Essential parameters of these data (" << job.method.label << ", "
       << dynid::experiments::PriorKnowledgeName(job.knowledge)
       << " knowledge; removal while the relative error grows by < 0.5 points)\n\n```\n"
       << essential.Report() << "```\n";
    int in_seed = 0;
    for (const std::string& name : essential.essential_names) {
      const auto& seed_names = models::Tx40EssentialNames();
      in_seed += std::find(seed_names.begin(), seed_names.end(), name) != seed_names.end();
    }
    md << "\n"
       << essential.essential_names.size() << " kept, of which " << in_seed
       << " are among the 28 essential parameters of Brunot et al. (2018). The study "
          "identifies all base parameters by default (--parameters=base): leaving the others "
          "out biases the estimates of the simulated CAD robot (e.g. iam6 = 0.0114, "
          "mx3 = 0.0326 are not zero).\n";
    summary["essential_selection"] = {
        {"method", job.method.key},
        {"scenario", dynid::experiments::PriorKnowledgeName(job.knowledge)},
        {"success", essential.success},
        {"kept", essential.essential_names},
        {"message", essential.message}};
    break;
  }
  if (guard_comparison != nullptr) {
    GuardComparison(settings, model, runs, *guard_comparison, &md, &summary);
  }
  bool any_selection = false;
  for (size_t s = 0; s < systems.size(); ++s) {
    if (!systems[s].selection_report.empty()) {
      if (!any_selection) md << "\n## Rows used (sample selection)\n\n";
      any_selection = true;
      md << "### " << solvers::IdimDifferentiatorName(system_keys[s].differentiator) << ", "
         << dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge)
         << " knowledge\n\n```\n"
         << systems[s].selection_report << "\n```\n";
    }
  }
  std::printf("\n%s", md.str().c_str());
  *markdown = md.str();
  *estimates = estimates_csv.str();
}

namespace {

// The per-scenario CSVs of knowledge level `level` written into the stage, and its figures
// appended to `figures` (with settings.figures); nothing for a level without a successful run.
bool LevelCsvsAndFigures(const Settings& settings, const solvers::IdimModel& model,
                         const Record& record, const Runs& runs,
                         dynid::experiments::PriorKnowledge level, const data::OutputStage& stage,
                         std::vector<std::pair<data::Figure, std::string>>* figures,
                         std::string* error) {
  const Eigen::VectorXd& theta_true = record.theta_true;
  const std::vector<solvers::IdimSystem>& systems = runs.systems;
  const std::vector<Job>& jobs = runs.jobs;
  const std::string scenario = dynid::experiments::PriorKnowledgeName(level);
  std::vector<const Job*> level_jobs;
  for (const Job& job : jobs) {
    if (job.knowledge == level && job.ok) level_jobs.push_back(&job);
  }
  if (level_jobs.empty()) return true;
  // Measured vs estimated torques of the first IV IRWSM1 run (else the first run).
  const Job* shown = level_jobs[0];
  for (const Job* job : level_jobs) {
    if (job->method.key == "idim_iv_irwsm1") shown = job;
  }
  const solvers::IdimSystem& system = systems[shown->system];
  const int ns = system.num_samples;
  // At most ~2500 plotted samples per joint (undecimated records: every stride-th sample).
  const int stride = TorqueStride(ns);
  const int shown_samples = (ns + stride - 1) / stride;
  Eigen::MatrixXd torque_table = Eigen::MatrixXd::Constant(shown_samples, 1 + 18, std::nan(""));
  std::vector<std::string> header = {"t"};
  for (int k = 0; k < shown_samples; ++k) {
    torque_table(k, 0) = k * stride / system.sample_rate_hz;
  }
  for (int j = 0; j < 6; ++j) {
    for (const char* what : {"measured", "estimated", "residual"}) {
      header.push_back(std::string(what) + "_" + std::to_string(j + 1));
    }
  }
  // The rows the run kept for this figure (its system's matrices may have been released).
  for (const TorqueSample& row : shown->torques) {
    const int j = row.joint;
    const int k = row.sample / stride;
    torque_table(k, 1 + 3 * j) = row.measured;
    torque_table(k, 2 + 3 * j) = row.estimated;
    torque_table(k, 3 + 3 * j) = row.measured - row.estimated;
  }
  // Residual autocorrelation per joint and method.
  const int lags =
      static_cast<int>(level_jobs[0]->result.whiteness.blocks[0].autocorrelation.size());
  Eigen::MatrixXd acf(lags, 1 + 6 * level_jobs.size());
  std::vector<std::string> acf_header = {"lag"};
  for (int k = 0; k < lags; ++k) acf(k, 0) = k;
  for (size_t m = 0; m < level_jobs.size(); ++m) {
    for (int j = 0; j < 6; ++j) {
      acf_header.push_back(level_jobs[m]->method.key + "_joint" + std::to_string(j + 1));
      acf.col(1 + 6 * m + j) = level_jobs[m]->result.whiteness.blocks[j].autocorrelation;
    }
  }
  // Estimates normalised by the truth (or by the first method's estimate on real data), ±3σ.
  // The figure shows the 28 essential parameters (the first rows); estimates.csv has all.
  const int b =
      std::min<int>(model.num_parameters(), static_cast<int>(models::Tx40EssentialNames().size()));
  Eigen::MatrixXd est(b, 1 + 2 * level_jobs.size());
  std::vector<std::string> est_header = {"index"};
  for (int i = 0; i < b; ++i) est(i, 0) = i + 1;
  for (size_t m = 0; m < level_jobs.size(); ++m) {
    est_header.push_back(level_jobs[m]->method.key + "_ratio");
    est_header.push_back(level_jobs[m]->method.key + "_3sigma");
    for (int i = 0; i < b; ++i) {
      const double scale =
          std::abs(theta_true.size() ? theta_true[i] : level_jobs[0]->result.fit.theta[i]);
      est(i, 1 + 2 * m) = level_jobs[m]->result.fit.theta[i] / (scale > 0 ? scale : 1.0) *
                          (theta_true.size() && theta_true[i] < 0 ? -1.0 : 1.0);
      est(i, 2 + 2 * m) =
          3.0 * level_jobs[m]->result.fit.standard_deviation[i] / (scale > 0 ? scale : 1.0);
    }
  }
  const std::string torques_name = "torques_" + scenario + ".csv";
  const std::string acf_name = "autocorrelation_" + scenario + ".csv";
  const std::string est_name = "estimates_" + scenario + ".csv";
  if (!data::WriteCsv(stage.Path(torques_name), header, torque_table, error) ||
      !data::WriteCsv(stage.Path(acf_name), acf_header, acf, error) ||
      !data::WriteCsv(stage.Path(est_name), est_header, est, error)) {
    return false;
  }
  if (!settings.figures) return true;
  data::Figure torques;
  torques.title =
      shown->method.label + ", " + scenario +
      " knowledge: measured vs estimated (decimated) joint torques and residuals" +
      (stride > 1 ? " (every " + std::to_string(stride) + "th sample shown)" : std::string());
  torques.columns = 2;
  torques.width_in = 14.0;
  for (int j = 0; j < 6; ++j) {
    const std::string s = std::to_string(j + 1);
    data::Panel panel{"joint " + s, "t [s]", "N m", {}, {}};
    panel.series.push_back(data::LineSeries(torques_name, "t", "measured_" + s, "measured"));
    panel.series.push_back(data::LineSeries(torques_name, "t", "estimated_" + s, "X θ"));
    panel.series.push_back(data::LineSeries(torques_name, "t", "residual_" + s, "residual"));
    torques.panels.push_back(panel);
  }
  figures->push_back({torques, "torques_" + scenario});
  data::Figure autocorrelation;
  autocorrelation.title =
      "Residual autocorrelation, " + scenario + " knowledge (dashed: ±1.96/√N of the first method)";
  autocorrelation.columns = 2;
  autocorrelation.width_in = 14.0;
  for (int j = 0; j < 6; ++j) {
    data::Panel panel{"joint " + std::to_string(j + 1), "lag", "r", {}, {}};
    const double bound = level_jobs[0]->result.whiteness.blocks[j].bound;
    panel.hlines = {bound, -bound};
    for (const Job* job : level_jobs) {
      panel.series.push_back(data::LineSeries(
          acf_name, "lag", job->method.key + "_joint" + std::to_string(j + 1), job->method.label));
    }
    autocorrelation.panels.push_back(panel);
  }
  figures->push_back({autocorrelation, "autocorrelation_" + scenario});
  data::Figure estimates;
  estimates.title = "Essential parameters: estimate / |true| with ±3σ bars, " + scenario +
                    " knowledge (1 = true value; order of Table 2)";
  estimates.width_in = 14.0;
  estimates.panel_height_in = 4.0;
  data::Panel panel{"",
                    "parameter index",
                    theta_true.size() ? "estimate / true" : "estimate / first method",
                    {},
                    {}};
  panel.hlines = {1.0};
  for (const Job* job : level_jobs) {
    data::Series series;
    series.csv = est_name;
    series.x = "index";
    series.y = job->method.key + "_ratio";
    series.lower = job->method.key + "_3sigma";
    series.upper = job->method.key + "_3sigma";
    series.style = "errorbar";
    series.label = job->method.label;
    panel.series.push_back(series);
  }
  estimates.panels.push_back(panel);
  figures->push_back({estimates, "estimates_" + scenario});
  return true;
}

}  // namespace

LevelOutputs::LevelOutputs(const Settings& settings, const solvers::IdimModel& model,
                           const Record& record, const Runs& runs)
    : settings_(settings), model_(model), record_(record), runs_(runs) {
  const size_t num_levels = settings.levels.size();
  remaining_.assign(num_levels, 0);
  queued_.assign(num_levels, false);
  for (const Job& job : runs.jobs) {
    for (size_t l = 0; l < num_levels; ++l) {
      if (settings.levels[l] == job.knowledge) ++remaining_[l];
    }
  }
  thread_ = std::thread([this] { Work(); });
}

LevelOutputs::~LevelOutputs() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LevelOutputs::RunDone(const Job& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t l = 0; l < settings_.levels.size(); ++l) {
    if (settings_.levels[l] != job.knowledge || --remaining_[l] > 0 || queued_[l]) continue;
    queued_[l] = true;
    queue_.push_back(static_cast<int>(l));
  }
  wake_.notify_all();
}

void LevelOutputs::Work() {
  for (;;) {
    int level = -1;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      level = queue_.front();
      queue_.erase(queue_.begin());
      if (!error_.empty()) continue;
    }
    std::string why;
    bool ok = opened_ || stage_.Open(settings_.out_dir, &why);
    opened_ = opened_ || ok;
    std::vector<std::pair<data::Figure, std::string>> figures;
    ok = ok && LevelCsvsAndFigures(settings_, model_, record_, runs_, settings_.levels[level],
                                   stage_, &figures, &why);
    // One renderer process draws the figures one after the other.
    for (size_t i = 0; ok && i < figures.size(); ++i) {
      ok = data::RenderFigure(figures[i].first, stage_.Path(""), figures[i].second, &why);
      std::lock_guard<std::mutex> lock(mutex_);
      if (drawing_ != nullptr) drawing_->Add();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ok && error_.empty()) error_ = why;
  }
}

bool LevelOutputs::Finish(std::string* error) {
  int pending = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t l = 0; l < queued_.size(); ++l) {
      if (!queued_[l]) {
        queued_[l] = true;
        queue_.push_back(static_cast<int>(l));
      }
    }
    pending = static_cast<int>(queue_.size());
  }
  // The figures still to draw (3 per level with a successful run).
  cli::Stage drawing("figures", settings_.figures ? 3 * pending : 0);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (settings_.figures) drawing_ = &drawing;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  drawing_ = nullptr;
  if (!error_.empty()) {
    *error = error_;
    return false;
  }
  drawing.End();
  return opened_ || stage_.Open(settings_.out_dir, error);
}

bool WriteOutputs(const Settings& settings, const solvers::IdimModel& /*model*/,
                  const Record& record, const Runs& /*runs*/, const std::string& markdown,
                  const std::string& estimates, const Elapsed& elapsed, LevelOutputs* levels,
                  nlohmann::json* summary_out, std::string* error) {
  const bool real = settings.real;
  const Tx40Experiment& experiment = record.experiment;
  nlohmann::json& summary = *summary_out;
  // The per-scenario CSVs and figures of the levels not written during the runs.
  if (!levels->Finish(error)) return false;
  data::OutputStage& stage = levels->stage();
  if (!stage.WriteText("tables.md", markdown, error) ||
      !stage.WriteText("estimates.csv", estimates, error)) {
    return false;
  }
  if (!real && settings.write_measurements) {
    const data::RobotSimulation& sim = experiment.simulation;
    const std::vector<std::string> motor = {"m1", "m2", "m3", "m4", "m5", "m6"};
    const Eigen::MatrixXd motor_reference =
        sim.q_reference * models::Tx40MotorFromJoint().transpose();
    if (!data::WriteCsv(stage.Path("measured_motor_positions.csv"), motor, sim.q_motor, error) ||
        !data::WriteCsv(stage.Path("measured_motor_torques.csv"), motor, sim.tau_motor, error) ||
        !data::WriteCsv(stage.Path("reference_motor_positions.csv"), motor, motor_reference,
                        error)) {
      return false;
    }
  }
  summary["total_seconds"] = elapsed();
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::tx40_study
