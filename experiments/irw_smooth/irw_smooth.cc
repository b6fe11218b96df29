// irw_smooth — velocities and accelerations from sampled positions by IRW smoothing.
//
// Question: given only sampled positions (no bandwidth knowledge), what are the velocities
// and accelerations, with their uncertainty? Method: IRWSM1 or IRWSM2 (Brunot et al. (2018) §3)
// with the NVR chosen from the data (GCV by default, or maximum likelihood) or given; one
// independent channel per selected column, smoothed in parallel. Success: the smoothed signal
// follows the data and the derivative bands are tight; see `irw_accuracy` for the comparison with
// the conventional differentiator.
//
//   irw_smooth --input_csv=F --columns=a,b --dt=SECONDS (or --time_column=t)
//              --model=irw1|irw2 --nvr=auto|VALUE [--criterion=gcv|ml] --out_dir=D
//
// Writes D/smoothed.csv (time; per column value, velocity, acceleration and their standard
// deviations), D/summary.json (per column nvr, sigma2, log_likelihood, n_samples, ...) and
// D/smoothed.png. Bad flags or files: a message naming the flag/file/line, exit code 2 (usage)
// or 1 (data), and nothing written.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/data/parallel_for.h"
#include "dynid/data/runtime_files.h"
#include "dynid/solvers/irw_irregular.h"
#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"
#include "experiments/common/cli.h"
#include "experiments/common/progress.h"

DEFINE_string(input_csv, "",
              "CSV file with a header row (default: the shipped example signal, "
              "share/dynid/examples/encoder_positions.csv)");
DEFINE_string(columns, "", "comma-separated columns to smooth (default: all but the time column)");
DEFINE_double(dt, 0.0, "sampling interval in seconds (when there is no --time_column)");
DEFINE_string(time_column, "t", "name of the time column in seconds; empty to use --dt");
DEFINE_string(model, "irw2", "irw1 (IRWSM1, 2 states) or irw2 (IRWSM2, 3 states)");
DEFINE_string(nvr, "auto",
              "noise-variance ratio: 'auto' (fitted per column by --criterion), 'tracking' (seed "
              "000 eqs. 27-28 from --reference_columns and --encoder_resolution), or a value > 0");
DEFINE_string(reference_columns, "",
              "--nvr=tracking: reference-trajectory column per smoothed column (same order)");
DEFINE_string(encoder_resolution, "",
              "--nvr=tracking: encoder resolution in signal units, one value or one per column");
DEFINE_string(criterion, "gcv", "NVR criterion when --nvr=auto: gcv or ml (maximum likelihood)");
DEFINE_double(gcv_gamma, 1.4, "modified-GCV factor (>= 1; 1 = classical GCV), see nvr_fit.h");
DEFINE_string(out_dir, "out/irw_smooth", "output folder");
DEFINE_bool(figures, true, "render smoothed.png (needs python3 + matplotlib)");
DEFINE_int32(threads, 0, "threads for the channels and the CSV output (0 = all cores)");

namespace {

using dynid::cli::Fail;

constexpr double kMinNvr = 1e-20;
constexpr double kMaxNvr = 1e12;

// True when every estimate and standard deviation of the channel is finite.
bool AllFinite(const dynid::solvers::IrwSmootherResult& r) {
  return r.position.allFinite() && r.velocity.allFinite() && r.acceleration.allFinite() &&
         r.position_std.allFinite() && r.velocity_std.allFinite() &&
         r.acceleration_std.allFinite() && std::isfinite(r.sigma2) &&
         std::isfinite(r.log_likelihood);
}

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(
      &argc, &argv,
      "irw_smooth --input_csv=F [--columns=a,b] [--time_column=t | --dt=S] [--model=irw1|irw2] "
      "[--nvr=auto|VALUE] [--criterion=gcv|ml] [--out_dir=D]");

  namespace solvers = dynid::solvers;
  std::string error;
  solvers::IrwModel model;
  if (!solvers::ParseIrwModel(FLAGS_model, &model, &error)) return Fail(2, "--model: " + error);
  solvers::NvrCriterion criterion;
  if (!solvers::ParseNvrCriterion(FLAGS_criterion, &criterion, &error)) {
    return Fail(2, "--criterion: " + error);
  }
  const bool fit_nvr = FLAGS_nvr == "auto";
  const bool tracking_nvr = FLAGS_nvr == "tracking";
  double fixed_nvr = 0.0;
  std::vector<std::string> reference_columns = dynid::data::SplitList(FLAGS_reference_columns);
  std::vector<double> resolutions;
  if (tracking_nvr) {
    if (FLAGS_columns.empty() ||
        reference_columns.size() != dynid::data::SplitList(FLAGS_columns).size()) {
      return Fail(2, "--nvr=tracking needs --columns and as many --reference_columns");
    }
    for (const std::string& text : dynid::data::SplitList(FLAGS_encoder_resolution)) {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(value > 0.0) || !std::isfinite(value)) {
        return Fail(2, "--encoder_resolution: '" + text + "' is not a positive number");
      }
      resolutions.push_back(value);
    }
    if (resolutions.size() == 1) resolutions.resize(reference_columns.size(), resolutions[0]);
    if (resolutions.size() != reference_columns.size()) {
      return Fail(2, "--encoder_resolution needs one value or one per column");
    }
  } else if (!reference_columns.empty()) {
    return Fail(2, "--reference_columns is only used with --nvr=tracking");
  }
  if (!fit_nvr && !tracking_nvr) {
    char* end = nullptr;
    fixed_nvr = std::strtod(FLAGS_nvr.c_str(), &end);
    if (FLAGS_nvr.empty() || *end != '\0' || !(fixed_nvr > 0.0) || !std::isfinite(fixed_nvr)) {
      return Fail(2,
                  "--nvr must be 'auto', 'tracking' or a positive number, got '" + FLAGS_nvr + "'");
    }
    // Far outside this range the smoother's recursions overflow or lose all precision (the
    // NVR fit searches 1e-14 .. 1e6).
    if (!(fixed_nvr >= kMinNvr && fixed_nvr <= kMaxNvr)) {
      return Fail(2, "--nvr=" + FLAGS_nvr + " is out of range [1e-20, 1e12]");
    }
  }
  {
    solvers::NvrFitOptions check;
    check.gcv_gamma = FLAGS_gcv_gamma;
    if (!check.IsValid(&error)) return Fail(2, "--gcv_gamma: " + error);
  }
  if (FLAGS_time_column.empty() && !(FLAGS_dt > 0.0)) {
    return Fail(2, "give --time_column=NAME or a positive --dt=SECONDS");
  }
  if (!FLAGS_time_column.empty() && FLAGS_dt != 0.0) {
    return Fail(2, "give either --time_column or --dt, not both (use --time_column= with --dt)");
  }

  // The figure renderer starts (importing matplotlib) while the data are read and smoothed.
  if (FLAGS_figures) dynid::data::StartFigureRenderer();
  if (FLAGS_input_csv.empty() &&
      !dynid::data::FindRuntimeFile("examples/encoder_positions.csv", &FLAGS_input_csv, &error)) {
    return Fail(1, error);
  }
  dynid::data::TimeSeries series;
  std::vector<std::string> wanted = dynid::data::SplitList(FLAGS_columns);
  wanted.insert(wanted.end(), reference_columns.begin(), reference_columns.end());
  dynid::cli::Stage reading("reading " + FLAGS_input_csv);
  if (!dynid::data::ReadTimeSeriesCsv(FLAGS_input_csv, FLAGS_time_column, FLAGS_dt, wanted, &series,
                                      &error)) {
    return Fail(2, error);
  }
  reading.End();
  // Jittered time stamps: the smoother runs at the stamps (solvers/irw_irregular.h), with the
  // NVR by maximum likelihood or given.
  const bool at_times = !series.IsUniform(1e-3);
  if (at_times && (tracking_nvr || (fit_nvr && criterion == solvers::NvrCriterion::kGcv))) {
    return Fail(2, FLAGS_input_csv + ": the time column is not uniformly sampled; IRW smoothing " +
                       "at irregular time stamps chooses the NVR by maximum likelihood " +
                       "(--criterion=ml) or takes it given (--nvr=VALUE), not by " +
                       (tracking_nvr ? "--nvr=tracking" : "GCV"));
  }
  const int nx = solvers::IrwStateSize(model);
  if (series.num_samples() < nx + 3) {
    return Fail(2, FLAGS_input_csv + ": " + std::to_string(series.num_samples()) +
                       " samples are too few (need at least " + std::to_string(nx + 3) + ")");
  }
  const double ts = at_times ? solvers::MedianTimeStep(series.time()) : series.MeanSamplePeriod();
  const int channels = series.num_columns() - static_cast<int>(reference_columns.size());
  std::printf("irw_smooth: %s, %d samples at %.6g Hz%s, %d column(s), model %s, NVR %s\n",
              FLAGS_input_csv.c_str(), series.num_samples(), 1.0 / ts,
              at_times ? " (median; irregular time stamps, smoothed at the stamps)" : "", channels,
              solvers::IrwModelName(model),
              fit_nvr ? (std::string("auto (") + solvers::NvrCriterionName(criterion) + ")").c_str()
                      : FLAGS_nvr.c_str());
  std::fflush(stdout);

  // NVR per channel, then smoothing of all channels in parallel.
  const auto start = std::chrono::steady_clock::now();
  std::vector<solvers::IrwSmootherOptions> options(channels);
  std::vector<solvers::NvrFitSummary> fits(channels);
  Eigen::MatrixXd columns(series.num_samples(), channels);
  for (int c = 0; c < channels; ++c) {
    columns.col(c) = series.Column(c);
    options[c].model = model;
    options[c].nvr = fixed_nvr;
    if (fit_nvr) {
      solvers::NvrFitOptions fit_options;
      fit_options.model = model;
      fit_options.criterion = criterion;
      fit_options.gcv_gamma = FLAGS_gcv_gamma;
      dynid::cli::Stage fitting("NVR fit of " + series.names()[c] + ", evaluations");
      fit_options.progress = fitting.Callback();
      const bool fitted = at_times ? solvers::FitNvrAtTimes(series.time(), columns.col(c),
                                                            fit_options, &fits[c], &error)
                                   : solvers::FitNvr(columns.col(c), fit_options, &fits[c], &error);
      if (!fitted) {
        return Fail(1, "column '" + series.names()[c] + "': " + error);
      }
      fitting.End();
      options[c].nvr = fits[c].nvr;
      std::printf("  [%d/%d] %-12s NVR %.4g (%s, %d evaluations)%s\n", c + 1, channels,
                  series.names()[c].c_str(), fits[c].nvr, solvers::NvrCriterionName(criterion),
                  fits[c].evaluations, fits[c].at_bound ? "  WARNING: at search bound" : "");
      std::fflush(stdout);
    } else if (tracking_nvr) {
      const Eigen::VectorXd tracking_error = series.Column(channels + c) - series.Column(c);
      options[c].nvr = solvers::NvrFromTrackingError(tracking_error, resolutions[c], model);
      if (!(options[c].nvr > 0.0)) {
        return Fail(1, "column '" + series.names()[c] +
                           "': the tracking error is constant, the NVR approximation is 0");
      }
      std::printf("  [%d/%d] %-12s NVR %.4g (tracking error, eq. %d)\n", c + 1, channels,
                  series.names()[c].c_str(), options[c].nvr,
                  model == solvers::IrwModel::kIrw1 ? 27 : 28);
    }
  }
  std::vector<solvers::IrwSmootherResult> results;
  dynid::cli::Stage smoothing("smoothing " + std::to_string(channels) + " channel(s)");
  if (at_times) {
    results.resize(channels);
    std::vector<std::string> errors(channels);
    dynid::data::ParallelFor(0, channels, FLAGS_threads, [&](int c) {
      if (!solvers::SmoothIrwAtTimes(series.time(), columns.col(c), options[c], &results[c],
                                     &errors[c]) &&
          errors[c].empty()) {
        errors[c] = "smoothing failed";
      }
    });
    for (int c = 0; c < channels; ++c) {
      if (!errors[c].empty()) return Fail(1, "column '" + series.names()[c] + "': " + errors[c]);
    }
  } else if (!solvers::SmoothIrwColumns(columns, ts, options, &results, &error, FLAGS_threads)) {
    return Fail(1, error);
  }
  smoothing.End();
  for (int c = 0; c < channels; ++c) {
    // A NaN here is a numerical failure, not a value: never write it as a result.
    if (!AllFinite(results[c])) {
      return Fail(1, "column '" + series.names()[c] +
                         "': the smoother's results are not finite "
                         "(NVR " +
                         std::to_string(options[c].nvr) + ")");
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Outputs: staged, committed only when everything is written.
  std::vector<dynid::data::CsvColumn> table = {{"t", series.time().data()}};
  nlohmann::json summary;
  summary["input_csv"] = FLAGS_input_csv;
  summary["model"] = solvers::IrwModelName(model);
  summary["nvr_mode"] = fit_nvr        ? std::string("auto:") + solvers::NvrCriterionName(criterion)
                        : tracking_nvr ? std::string("tracking")
                                       : std::string("fixed");
  summary["sample_period_s"] = ts;  // the median step when the stamps are irregular
  summary["time_stamps"] = at_times ? "irregular" : "uniform";
  summary["elapsed_s"] = elapsed;
  for (int c = 0; c < channels; ++c) {
    const std::string& name = series.names()[c];
    const solvers::IrwSmootherResult& r = results[c];
    table.insert(table.end(), {{name, r.position.data()},
                               {name + "_velocity", r.velocity.data()},
                               {name + "_acceleration", r.acceleration.data()},
                               {name + "_std", r.position_std.data()},
                               {name + "_velocity_std", r.velocity_std.data()},
                               {name + "_acceleration_std", r.acceleration_std.data()}});
    nlohmann::json channel = {{"nvr", r.nvr},
                              {"sigma2", r.sigma2},
                              {"log_likelihood", r.log_likelihood},
                              {"n_samples", series.num_samples()}};
    if (fit_nvr) {
      channel["criterion"] = solvers::NvrCriterionName(criterion);
      if (criterion == solvers::NvrCriterion::kGcv) channel["gcv_gamma"] = FLAGS_gcv_gamma;
      channel["criterion_value"] = fits[c].criterion_value;
      channel["evaluations"] = fits[c].evaluations;
      channel["nvr_at_search_bound"] = fits[c].at_bound;
    }
    summary["columns"][name] = channel;
    std::printf(
        "  %-12s NVR %.4g  sigma %.3g  logL %.6g  median std: velocity %.3g, "
        "acceleration %.3g\n",
        name.c_str(), r.nvr, std::sqrt(r.sigma2), r.log_likelihood,
        r.velocity_std[r.velocity_std.size() / 2],
        r.acceleration_std[r.acceleration_std.size() / 2]);
  }
  dynid::data::OutputStage stage;
  dynid::cli::Stage writing("writing smoothed.csv");
  if (!stage.Open(FLAGS_out_dir, &error) ||
      !dynid::data::WriteCsvColumns(stage.Path("smoothed.csv"), table, series.num_samples(), &error,
                                    FLAGS_threads)) {
    return Fail(1, error);
  }
  writing.End();
  if (FLAGS_figures) {
    dynid::data::Figure figure;
    figure.title = "IRW smoothing (" + std::string(solvers::IrwModelName(model)) +
                   "): estimates with ±2σ bands, and the σ themselves";
    figure.columns = 4;
    figure.width_in = 16.0;
    for (int c = 0; c < channels; ++c) {
      const std::string& name = series.names()[c];
      dynid::data::Panel position{name + ": smoothed", "t [s]", name, {}, {}};
      position.series.push_back(
          dynid::data::LineSeries("smoothed.csv", "t", name, "", name + "_std"));
      dynid::data::Panel velocity{name + ": velocity", "t [s]", name + " / s", {}, {}};
      velocity.series.push_back(dynid::data::LineSeries("smoothed.csv", "t", name + "_velocity", "",
                                                        name + "_velocity_std"));
      dynid::data::Panel acceleration{name + ": acceleration", "t [s]", name + " / s²", {}, {}};
      acceleration.series.push_back(dynid::data::LineSeries(
          "smoothed.csv", "t", name + "_acceleration", "", name + "_acceleration_std"));
      dynid::data::Panel sigma{name + ": standard deviations", "t [s]", "σ", {}, {}};
      sigma.log_y = true;
      sigma.series.push_back(
          dynid::data::LineSeries("smoothed.csv", "t", name + "_std", "position"));
      sigma.series.push_back(
          dynid::data::LineSeries("smoothed.csv", "t", name + "_velocity_std", "velocity"));
      sigma.series.push_back(
          dynid::data::LineSeries("smoothed.csv", "t", name + "_acceleration_std", "acceleration"));
      figure.panels.insert(figure.panels.end(), {position, velocity, acceleration, sigma});
    }
    // The figure's numbers are smoothed.csv's, from memory.
    const dynid::data::FigureTables tables = {{"smoothed.csv", {table, series.num_samples()}}};
    dynid::cli::Stage drawing("figure smoothed.png");
    if (!dynid::data::RenderFigure(figure, stage.Path(""), "smoothed", &error, &tables)) {
      return Fail(1, error);
    }
    drawing.End();
  }
  if (!stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("irw_smooth: %d channel(s) in %.3f s; wrote %s/smoothed.csv, summary.json%s\n",
              channels, elapsed, FLAGS_out_dir.c_str(), FLAGS_figures ? ", smoothed.png" : "");
  return 0;
}
