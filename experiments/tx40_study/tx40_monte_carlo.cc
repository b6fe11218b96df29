// experiments/tx40_study/tx40_monte_carlo — the study's Monte Carlo (see tx40_monte_carlo.h).
#include "experiments/tx40_study/tx40_monte_carlo.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/tx40_study/tx40_published.h"
#include "experiments/tx40_study/tx40_record.h"
#include "experiments/tx40_study/tx40_runs.h"

namespace dynid::tx40_study {
namespace {

namespace published = dynid::experiments;

// One method × knowledge run of one seed: what the relative-error summary needs.
struct Outcome {
  bool ok = false, converged = false;
  double relative_error = std::numeric_limits<double>::quiet_NaN();
  int iterations = 0;
};

double Quantile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double position = p * (values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(values.size() - 1, below + 1);
  return values[below] + (position - below) * (values[above] - values[below]);
}

std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "nan";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

// The jobs of one seed. Without --methods, IDIM-IV conv. without knowledge is left out: on the
// raw 5 kHz record it does not converge (as in Brunot et al. (2018) Table 5: not in 20
// iterations; here its changes stop decreasing after a few), it costs several of a seed's IV
// runs, and a run that does not converge enters no statistic.
void PlanTrialJobs(const Settings& settings, Runs* runs) {
  PlanJobs(settings, runs);
  if (settings.methods_given) return;
  std::vector<Job>& jobs = runs->jobs;
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                            [](const Job& job) {
                              return job.method.key == "idim_iv_conventional" &&
                                     job.knowledge == dynid::experiments::PriorKnowledge::kNone;
                            }),
             jobs.end());
}

}  // namespace

std::string CoverageScenario(const Settings& settings) {
  return std::string(settings.realistic ? "realistic" : "ideal") +
         (settings.torque_offsets ? "_torque_offsets" : "");
}

std::string CoverageEstimator(const std::string& method_key, const std::string& knowledge,
                              bool hac) {
  return method_key + "_" + knowledge + (hac ? "_hac" : "");
}

bool RunMonteCarloStudy(const Settings& settings, const models::SerialRobot& robot,
                        const solvers::IdimModel& model, std::string* error) {
  const int num_seeds = settings.monte_carlo;
  // Each seed runs its jobs on one thread; the seeds run in parallel.
  Settings trial_settings = settings;
  trial_settings.quiet = true;
  trial_settings.threads = 1;
  Runs plan;
  PlanTrialJobs(trial_settings, &plan);
  const int num_jobs = static_cast<int>(plan.jobs.size());
  const std::uint64_t first_seed = static_cast<std::uint64_t>(settings.seed);

  const solvers::MonteCarloTrial trial = [&](int, std::uint64_t seed,
                                             std::vector<solvers::MonteCarloEstimate>* out,
                                             std::string* why) {
    Record record;
    if (!SimulateRecord(trial_settings, robot, model, static_cast<std::uint32_t>(seed), &record,
                        why)) {
      *why = "seed " + std::to_string(seed) + ": " + *why;
      return false;
    }
    Runs runs;
    PlanTrialJobs(trial_settings, &runs);
    const Elapsed no_clock = [] { return 0.0; };
    if (!RunJobs(trial_settings, robot, model, record, no_clock, &runs, why)) {
      *why = "seed " + std::to_string(seed) + ": " + *why;
      return false;
    }
    std::vector<Outcome> seed_outcomes(num_jobs);
    for (int j = 0; j < num_jobs; ++j) {
      const Job& job = runs.jobs[j];
      const solvers::IdimResult& r = job.result;
      const bool iv = job.method.estimator == solvers::IdimEstimator::kInstrumentalVariables;
      const bool converged = job.ok && r.success && (!iv || r.converged);
      Outcome& outcome = seed_outcomes[j];
      outcome.ok = job.ok && r.success;
      outcome.converged = converged;
      if (outcome.ok) outcome.relative_error = r.fit.relative_error;
      outcome.iterations = r.iterations;
      const std::string knowledge = dynid::experiments::PriorKnowledgeName(job.knowledge);
      // The run's relative error and iterations travel with its estimates (journalled, listed
      // in monte_carlo_runs.csv), as measures outside the coverage statistics.
      const std::string run_name = CoverageEstimator(job.method.key, knowledge, false);
      for (const auto& [measure, value] :
           {std::pair<const char*, double>{
                "relative_error",
                outcome.ok ? outcome.relative_error : std::numeric_limits<double>::quiet_NaN()},
            {"iterations", static_cast<double>(outcome.iterations)},
            {"has_estimate", outcome.ok ? 1.0 : 0.0}}) {
        solvers::MonteCarloEstimate m;
        m.estimator = run_name;
        m.parameter = measure;
        m.estimate = value;
        m.converged = converged;
        m.measure = true;
        out->push_back(m);
      }
      for (int hac = 0; hac < 2; ++hac) {
        for (int i = 0; i < model.num_parameters(); ++i) {
          solvers::MonteCarloEstimate e;
          e.estimator = CoverageEstimator(job.method.key, knowledge, hac == 1);
          e.parameter = model.names()[i];
          e.truth = record.theta_true[i];
          e.converged = converged;
          if (outcome.ok) {
            e.estimate = r.fit.theta[i];
            e.reported_std = hac == 0        ? r.fit.standard_deviation[i]
                             : r.hac.success ? r.hac.standard_deviation[i]
                                             : std::numeric_limits<double>::quiet_NaN();
            if (hac == 1 && r.hac.success) {  // θ̂ ± c σ, c by --hac_critical
              const double c = solvers::HacCriticalValue95(r.hac, settings.hac_critical_value);
              e.lower = e.estimate - c * e.reported_std;
              e.upper = e.estimate + c * e.reported_std;
            }
          }
          out->push_back(e);
        }
      }
    }
    return true;
  };

  cli::MonteCarloJob mc_job;
  if (!cli::RunMonteCarloFromFlags(settings.out_dir, first_seed, 1, trial, &mc_job, error)) {
    return false;
  }
  if (!mc_job.reporting) return true;
  const std::vector<solvers::MonteCarloRun>& runs = mc_job.runs;
  // Each seed's outcomes, read back from its measures (runs resumed from the journal included).
  std::vector<std::vector<Outcome>> outcomes(num_seeds, std::vector<Outcome>(num_jobs));
  for (int s = 0; s < num_seeds; ++s) {
    for (const solvers::MonteCarloEstimate& e : runs[s].estimates) {
      if (!e.measure) continue;
      for (int j = 0; j < num_jobs; ++j) {
        const Job& job = plan.jobs[j];
        if (e.estimator != CoverageEstimator(job.method.key,
                                             dynid::experiments::PriorKnowledgeName(job.knowledge),
                                             false)) {
          continue;
        }
        Outcome& o = outcomes[s][j];
        o.converged = e.converged;
        if (e.parameter == "relative_error") o.relative_error = e.estimate;
        if (e.parameter == "iterations") o.iterations = static_cast<int>(e.estimate);
        if (e.parameter == "has_estimate") o.ok = e.estimate != 0.0;
      }
    }
  }
  const std::string scenario = CoverageScenario(settings);

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  const std::string title = "TX40 IDIM methods: " + std::to_string(num_seeds) + " seeds from " +
                            std::to_string(settings.seed) + ", " + scenario + " simulation, " +
                            Number(settings.duration_s) + " s record";
  if (!stage.Open(settings.out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, {scenario}, title, settings.figures, &stage, &rows,
                                     error, mc_job.settings)) {
    return false;
  }

  // Per method × knowledge: relative errors, convergence, coverage and bias.
  std::ostringstream csv, text;
  csv << "method,knowledge,seeds,estimates,converged,relative_error_median_percent,"
         "relative_error_p25_percent,relative_error_p75_percent,relative_error_std_percent,"
         "published_percent,iterations_median,parameters,biased_parameters,"
         "biased_fraction,calibrated_parameters,calibrated_parameters_hac,"
         "coverage_median,coverage_median_hac\n";
  text << "tx40_study Monte Carlo: " << num_seeds << " seeds (" << settings.seed << ".."
       << settings.seed + num_seeds - 1 << "), " << scenario << " simulation, "
       << Number(settings.duration_s) << " s record, " << model.num_parameters()
       << " identified parameters\n"
       << "relative error %: median [25 %, 75 %] over the runs with an estimate (published "
          "Table 3); converged = runs used in the coverage; biased = parameters whose |bias| > 2 "
          "standard errors of the mean and > 10 % of |truth|; calibrated = parameters whose 95 % "
          "interval covers the truth in [85 %, 100 %] of >= 20 runs\n";
  if (!settings.methods_given) {
    text << "IDIM-IV conv. without knowledge is not run (it does not converge, as in Brunot et "
            "al. (2018) Table 5; give --methods to run it)\n";
  }
  nlohmann::json methods = nlohmann::json::array();
  for (int j = 0; j < num_jobs; ++j) {
    const Job& job = plan.jobs[j];
    const std::string knowledge = dynid::experiments::PriorKnowledgeName(job.knowledge);
    std::vector<double> errors, iterations;
    int estimates = 0, converged = 0;
    for (int s = 0; s < num_seeds; ++s) {
      const Outcome& o = outcomes[s][j];
      if (o.ok) {
        ++estimates;
        errors.push_back(100.0 * o.relative_error);
      }
      if (o.converged) ++converged;
      iterations.push_back(o.iterations);
    }
    double mean = 0.0, var = 0.0;
    for (double e : errors) mean += e / errors.size();
    for (double e : errors) var += (e - mean) * (e - mean);
    const double sd = errors.size() > 1 ? std::sqrt(var / (errors.size() - 1))
                                        : std::numeric_limits<double>::quiet_NaN();
    int biased = 0, calibrated = 0, calibrated_hac = 0, counted = 0;
    std::vector<double> coverage, coverage_hac;
    std::vector<std::string> biased_names;
    for (int i = 0; i < model.num_parameters(); ++i) {
      const std::string& name = model.names()[i];
      const solvers::CoverageRow* row = solvers::FindCoverageRow(
          rows, scenario, CoverageEstimator(job.method.key, knowledge, false), name);
      const solvers::CoverageRow* row_hac = solvers::FindCoverageRow(
          rows, scenario, CoverageEstimator(job.method.key, knowledge, true), name);
      if (row == nullptr || row->runs < 2) continue;
      ++counted;
      const double standard_error = row->spread / std::sqrt(static_cast<double>(row->runs));
      if (std::abs(row->bias) > 2.0 * standard_error &&
          std::abs(row->bias) > 0.1 * std::abs(row->truth)) {
        ++biased;
        biased_names.push_back(name);
      }
      calibrated += row->calibrated;
      coverage.push_back(row->coverage_95);
      if (row_hac != nullptr) {
        calibrated_hac += row_hac->calibrated;
        if (std::isfinite(row_hac->coverage_95)) coverage_hac.push_back(row_hac->coverage_95);
      }
    }
    const double pub = published::PublishedRelativeErrorPercent(job.method.key, knowledge);
    const double fraction = counted > 0 ? static_cast<double>(biased) / counted
                                        : std::numeric_limits<double>::quiet_NaN();
    csv << job.method.key << "," << knowledge << "," << num_seeds << "," << estimates << ","
        << converged << "," << Number(Quantile(errors, 0.5), 6) << ","
        << Number(Quantile(errors, 0.25), 6) << "," << Number(Quantile(errors, 0.75), 6) << ","
        << Number(sd, 6) << "," << Number(pub, 4) << "," << Number(Quantile(iterations, 0.5), 4)
        << "," << counted << "," << biased << "," << Number(fraction, 4) << "," << calibrated << ","
        << calibrated_hac << "," << Number(Quantile(coverage, 0.5), 4) << ","
        << Number(Quantile(coverage_hac, 0.5), 4) << "\n";
    char line[400];
    std::snprintf(
        line, sizeof(line),
        "  %-20s %-4s: relative error %s %% [%s, %s] (published %s), converged %d/%d, "
        "biased %d/%d parameters, calibrated %d/%d (eq. 8) %d/%d (HAC), coverage "
        "median %s / %s\n",
        job.method.label.c_str(), knowledge.c_str(), Fixed(Quantile(errors, 0.5), 2).c_str(),
        Fixed(Quantile(errors, 0.25), 2).c_str(), Fixed(Quantile(errors, 0.75), 2).c_str(),
        std::isfinite(pub) ? Fixed(pub, 2).c_str() : "-", converged, num_seeds, biased, counted,
        calibrated, counted, calibrated_hac, counted, Fixed(Quantile(coverage, 0.5), 2).c_str(),
        Fixed(Quantile(coverage_hac, 0.5), 2).c_str());
    text << line;
    methods.push_back(
        {{"method", job.method.key},
         {"label", job.method.label},
         {"knowledge", knowledge},
         {"seeds", num_seeds},
         {"estimates", estimates},
         {"converged", converged},
         {"relative_error_median_percent", Quantile(errors, 0.5)},
         {"relative_error_p25_percent", Quantile(errors, 0.25)},
         {"relative_error_p75_percent", Quantile(errors, 0.75)},
         {"relative_error_std_percent", sd},
         {"published_relative_error_percent",
          std::isfinite(pub) ? nlohmann::json(pub) : nlohmann::json()},
         {"iterations_median", Quantile(iterations, 0.5)},
         {"parameters", counted},
         {"biased_parameters", biased},
         {"biased_fraction", counted > 0 ? nlohmann::json(fraction) : nlohmann::json()},
         {"biased_names", biased_names},
         {"calibrated_parameters", calibrated},
         {"calibrated_parameters_hac", calibrated_hac},
         {"coverage_median", Quantile(coverage, 0.5)},
         {"coverage_median_hac", Quantile(coverage_hac, 0.5)}});
  }
  // The plain statement: which method is biased under which knowledge level.
  text << "bias (|bias| > 2 standard errors and > 10 % of |truth|, fraction of the "
       << model.num_parameters() << " parameters):";
  for (const nlohmann::json& m : methods) {
    text << " " << m["label"].get<std::string>() << " " << m["knowledge"].get<std::string>() << " "
         << (m["biased_fraction"].is_null()
                 ? std::string("-")
                 : Fixed(100.0 * m["biased_fraction"].get<double>(), 0) + " %")
         << ";";
  }
  text << "\n" << cli::MonteCarloJobLine(mc_job) << "\n";
  std::printf("%s", text.str().c_str());
  std::fflush(stdout);

  nlohmann::json summary;
  summary["monte_carlo"] = cli::MonteCarloJobJson(mc_job, settings.out_dir);
  summary["monte_carlo"].update(nlohmann::json{{"simulation", scenario},
                                               {"duration_s", settings.duration_s},
                                               {"parameters", settings.parameters},
                                               {"torque_offsets", settings.torque_offsets},
                                               {"guard_band",
                                                {{"rows", settings.guard_rows},
                                                 {"seconds", settings.guard_s},
                                                 {"source", settings.guard_source}}},
                                               {"methods", methods},
                                               {"coverage", solvers::CoverageJson(rows)}});
  if (settings.realistic) {
    const RealisticImperfections& r = settings.imperfections;
    summary["monte_carlo"]["imperfections"] = {
        {"stribeck_ratio", r.stribeck_ratio},
        {"stribeck_velocity_rad_s", r.stribeck_velocity_rad_s},
        {"friction_asymmetry", r.friction_asymmetry},
        {"load_friction", r.load_friction},
        {"motor_torque_noise_std_nm", r.motor_torque_noise_std_nm},
        {"motor_torque_lsb_nm", r.motor_torque_lsb_nm},
        {"encoder_resolution_scale", r.encoder_resolution_scale}};
  } else {
    summary["monte_carlo"]["torque_noise_std_nm"] = settings.torque_noise_std;
  }
  summary["monte_carlo"]["summary_text"] = text.str();
  return stage.WriteText("relative_errors.csv", csv.str(), error) &&
         stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

std::string RunCoverageLabel(const MeasuredCoverage& coverage, const std::string& method_key,
                             const std::string& knowledge, bool hac, int num_parameters) {
  const std::string estimator = CoverageEstimator(method_key, knowledge, hac);
  int found = 0, calibrated = 0, seeds = 0;
  std::vector<double> values;
  for (const solvers::CoverageRow& row : coverage.rows) {
    if (row.scenario != coverage.scenario || row.estimator != estimator) continue;
    ++found;
    calibrated += row.calibrated;
    seeds = std::max(seeds, row.with_interval);
    if (std::isfinite(row.coverage_95)) values.push_back(row.coverage_95);
  }
  const char* sigma = hac ? "HAC σ" : "eq. 8 σ";
  if (found == 0) return std::string(sigma) + ": coverage not measured";
  char text[300];
  if (seeds < solvers::kMinCalibrationRuns) {
    std::snprintf(text, sizeof(text), "%s: too few seeds to judge (%d)", sigma, seeds);
  } else if (calibrated == found && found == num_parameters) {
    std::snprintf(text, sizeof(text),
                  "%s calibrated: all %d parameters, coverage median %.2f "
                  "(%d seeds)",
                  sigma, found, Quantile(values, 0.5), seeds);
  } else {
    std::snprintf(text, sizeof(text),
                  "%s NOT calibrated: %d of %d parameters calibrated, coverage median %.2f (%d "
                  "seeds)",
                  sigma, calibrated, found, Quantile(values, 0.5), seeds);
  }
  return std::string(text) +
         (coverage.other_settings.empty() ? "" : "; measured at other settings");
}

}  // namespace dynid::tx40_study
