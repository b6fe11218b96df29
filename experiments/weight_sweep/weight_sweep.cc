// weight_sweep — how do the weighting matrices of the weighted-residual smoother change its
// parameter estimates? (van de Molengraft (1990); solvers/README.md, "Pitfalls")
//
// Question: for a model with simulated data, how do bias and spread of the estimates of theta
// depend on chosen diagonal entries of W (kinematic couplings), V (equations of motion and
// measurements) and R0 (initial guess)?
// Method: a log-spaced grid over the chosen entries (--grid, Cartesian product), and at every
// grid point the smoother (problems::BuildWeightedResidualProblem + solvers::SolveWeightedResidual,
// theta constant) on --seeds Monte Carlo noise realisations of the same experiment (the same
// realisations at every point). Per (point, seed): estimates, covariance (standard deviations in
// the weights' metric and scaled by the residual variance), RMS of every residual component,
// cost, convergence, time. Per point: bias, spread and RMS of the relative errors. Also the
// observability rank tests (eqs. 2.26, 2.28) and the identifiability of theta along the
// noise-free trajectory with the base weights (solvers/observability.h).
// Success: the table is complete, every point recorded once; parallel over --threads threads
// (and over MPI ranks in weight_sweep_mpi), resumable: finished points are journalled in
// OUT_DIR/.weight_sweep_journal/ and a re-run with the same settings only computes the rest.
//
//   weight_sweep --case_name=msd|friction_mass|rt_rigid|rt_flexible|xy_flexible
//                --grid=NAME:LOW:HIGH:COUNT[,NAME:LOW:HIGH:COUNT...] [--relative]
//                [--seeds=10] [--first_seed=1] [--threads=0] [--nodes=0] [--noise_scale=1]
//                [--theta_start_factor=1.2] [--max_iterations=50] [--transcription=shooting]
//                [--out_dir=out/weight_sweep] [--figures] [--progress] [--list_weights]
//   mpirun -np K weight_sweep_mpi <same flags>
//
// Writes points.csv (one row per point and seed), summary.csv (one row per grid point),
// summary.json (flags, case, weights, observability, totals) and, for one or two grid axes,
// error/spread figures (error_spread.png for one axis; heatmap_<parameter>.png for two).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifdef DYNID_WITH_MPI
#include <mpi.h>
#endif

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/data/runtime_files.h"
#include "dynid/solvers/weight_grid.h"
#include "experiments/common/cli.h"
#include "experiments/weight_sweep/grid_cases.h"
#include "experiments/weight_sweep/grid_journal.h"
#include "experiments/weight_sweep/grid_text.h"

DEFINE_string(case_name, "msd", "case: msd, friction_mass, rt_rigid, rt_flexible, xy_flexible");
DEFINE_string(grid, "V.z.a_measured:4e2:4e6:10,W.v.s:1:1e4:10",
              "grid axes NAME:LOW:HIGH:COUNT, comma-separated (log-spaced values; "
              "--list_weights prints the names)");
DEFINE_bool(relative, false, "grid values multiply the case's base weights instead of replacing");
DEFINE_int32(seeds, 10, "Monte Carlo noise realisations per grid point");
DEFINE_int32(first_seed, 1, "noise seed of the first realisation (then +1, +2, ...)");
DEFINE_int32(threads, 0, "worker threads per process (0 = all cores)");
DEFINE_int32(nodes, 0, "nodes of the case's record (0 = the case's default)");
DEFINE_double(noise_scale, 1.0, "multiplies the case's measurement noise");
DEFINE_double(theta_start_factor, 1.2, "theta starts at this factor times the truth");
DEFINE_int32(max_iterations, 50, "solver iterations per point");
DEFINE_string(transcription, "shooting", "shooting or collocation");
DEFINE_string(out_dir, "out/weight_sweep", "output folder");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");
DEFINE_bool(progress, true, "progress bar on stderr");
DEFINE_bool(list_weights, false, "print the case's weight names and base values, then exit");
DEFINE_bool(observability, true, "run the observability / identifiability analysis");

namespace {

namespace solvers = dynid::solvers;
namespace experiments = dynid::experiments;

int g_rank = 0, g_size = 1;

// Only rank 0 reports, so that an MPI run prints each error once.
int Fail(int code, const std::string& message) {
  return g_rank == 0 ? dynid::cli::Fail(code, message) : code;
}

std::vector<double> ToVector(const Eigen::VectorXd& x) {
  return std::vector<double>(x.data(), x.data() + x.size());
}

nlohmann::json ObservabilityJson(const solvers::ObservabilityReport& r) {
  nlohmann::json j;
  j["eq_2_26"] = {{"required_rank", r.required_rank_226},
                  {"fraction_of_nodes_full_rank", r.fraction_full_226},
                  {"lowest_rank", r.rank_226(r.worst_node_226)},
                  {"lowest_rank_node", r.worst_node_226},
                  {"highest_rank", r.rank_226(r.best_node_226)},
                  {"highest_rank_node", r.best_node_226},
                  {"columns", r.columns_226},
                  {"null_directions_at_highest", r.null_directions_226}};
  j["eq_2_28"] = {{"required_rank", r.required_rank_228},
                  {"fraction_of_nodes_full_rank", r.fraction_full_228},
                  {"lowest_rank", r.rank_228(r.worst_node_228)},
                  {"lowest_rank_node", r.worst_node_228},
                  {"highest_rank", r.rank_228(r.best_node_228)},
                  {"highest_rank_node", r.best_node_228},
                  {"columns", r.columns_228},
                  {"null_directions_at_highest", r.null_directions_228}};
  j["message"] = r.message;
  if (r.has_parameters) {
    j["parameters"] = {
        {"identifiable", r.parameters.identifiable},
        {"condition_number", r.parameters.condition_number},
        {"relative_information_eigenvalues", ToVector(r.parameters.eigenvalues)},
        {"relative_standard_deviation", ToVector(r.parameters.relative_standard_deviation)},
        {"undetermined", r.parameters.undetermined},
        {"message", r.parameters.message}};
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef DYNID_WITH_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  struct Finalizer {
    ~Finalizer() { MPI_Finalize(); }
  } finalizer;
#endif
  dynid::cli::ParseFlags(&argc, &argv, "weighting-matrix grids of the weighted-residual smoother");
  FLAGS_logtostderr = true;

  // Flags.
  std::string error;
  experiments::GridCaseOptions case_options;
  case_options.num_nodes = FLAGS_nodes;
  const std::unique_ptr<solvers::WeightGridCase> grid_case =
      experiments::MakeGridCase(FLAGS_case_name, case_options, &error);
  if (!grid_case) return Fail(2, "--case_name / --nodes: " + error);
  const dynid::models::ModelInfo& info = grid_case->info();
  if (FLAGS_list_weights) {
    if (g_rank == 0) {
      std::printf("case %s: %s\n%-32s %s\n", grid_case->name().c_str(),
                  grid_case->description().c_str(), "weight", "base value");
      for (const solvers::WeightEntry& e : solvers::ListWeightEntries(info)) {
        std::printf("%-32s %.6g\n", e.name.c_str(), grid_case->base_weights().Get(e));
      }
    }
    return 0;
  }
  std::vector<solvers::WeightAxis> axes;
  if (!experiments::ParseWeightGrid(FLAGS_grid, info, "--grid", &axes, &error)) {
    return Fail(2, error);
  }
  if (FLAGS_seeds < 1 || FLAGS_seeds > 100000) return Fail(2, "--seeds must be in [1, 100000]");
  if (FLAGS_first_seed < 0) return Fail(2, "--first_seed must be >= 0");
  if (FLAGS_threads < 0 || FLAGS_threads > 1024) return Fail(2, "--threads must be in [0, 1024]");
  if (FLAGS_out_dir.empty()) return Fail(2, "--out_dir must not be empty");
  solvers::WeightGridSettings settings;
  settings.max_iterations = FLAGS_max_iterations;
  settings.theta_start_factor = FLAGS_theta_start_factor;
  settings.noise_scale = FLAGS_noise_scale;
  if (FLAGS_transcription == "shooting") {
    settings.transcription = dynid::problems::Transcription::kShooting;
  } else if (FLAGS_transcription == "collocation") {
    settings.transcription = dynid::problems::Transcription::kCollocation;
  } else {
    return Fail(
        2, "--transcription: expected shooting or collocation, got '" + FLAGS_transcription + "'");
  }
  if (!settings.IsValid(&error)) {
    // Name the flag: the settings mirror --max_iterations, --theta_start_factor, --noise_scale.
    return Fail(2, "--" + error);
  }
  const int p = static_cast<int>(info.parameters.size());
  const int num_zeta = static_cast<int>(info.equations.size() + info.measurements.size());
  const int num_xi = 2 * static_cast<int>(info.positions.size());
  const int num_points = solvers::NumGridPoints(axes);
  const int num_seeds = FLAGS_seeds;
  const long long total_tasks = static_cast<long long>(num_points) * num_seeds;
  if (total_tasks > 10000000) return Fail(2, "--grid × --seeds: more than 1e7 estimates");
  // Check every grid point's weights once (relative grid on a zero base weight).
  for (int point = 0; point < num_points; ++point) {
    dynid::problems::WeightedResidualWeights weights = grid_case->base_weights();
    if (!solvers::ApplyGridPoint(axes, solvers::GridPointValues(axes, point), FLAGS_relative, p,
                                 &weights, &error)) {
      return Fail(2, "--grid: " + error);
    }
  }

  // The configuration signature of the journal: everything that changes a point's result.
  std::ostringstream config;
  config.precision(17);
  config << grid_case->name() << " nodes=" << grid_case->num_nodes()
         << " relative=" << FLAGS_relative << " seeds=" << num_seeds
         << " first_seed=" << FLAGS_first_seed << " noise=" << settings.noise_scale
         << " start=" << settings.theta_start_factor << " iterations=" << settings.max_iterations
         << " tol=" << settings.function_tolerance << " transcription=" << FLAGS_transcription;
  for (const solvers::WeightAxis& a : axes) {
    config << " " << a.entry.name << ":" << a.low << ":" << a.high << ":" << a.count;
  }
  const std::string signature = experiments::HashHex(config.str());
  const std::string journal_dir = FLAGS_out_dir + "/.weight_sweep_journal";

  // Resume: load what earlier runs finished.
  experiments::GridJournal journal;
  if (!journal.Load(journal_dir, signature, p, num_zeta, num_xi, &error)) return Fail(2, error);
  std::vector<int> pending;
  for (int task = 0; task < total_tasks; ++task) {
    if (!journal.loaded().count({task / num_seeds, task % num_seeds})) pending.push_back(task);
  }
  if (g_rank == 0 && !journal.loaded().empty()) {
    std::fprintf(stderr,
                 "weight_sweep: resuming: %zu of %lld points already done (%d cut-short "
                 "journal lines skipped)\n",
                 journal.loaded().size(), total_tasks, journal.skipped_lines());
  }
  std::vector<int> my_tasks;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (static_cast<int>(i % g_size) == g_rank) my_tasks.push_back(pending[i]);
  }
#ifdef DYNID_WITH_MPI
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has read the journals before any appends
#endif
  if (!journal.OpenForAppend(journal_dir, signature, g_rank, &error)) return Fail(1, error);

  // Run.
  const int threads =
      FLAGS_threads > 0 ? FLAGS_threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<solvers::GridPointResult> results(total_tasks);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int done_count = 0;
  double last_bar = -1.0;
  const bool show_progress = FLAGS_progress && g_rank == 0;
  // Called one result at a time: journal it, then advance the progress bar.
  auto on_result = [&](const solvers::GridPointResult& r, std::string* why) {
    if (!journal.Append(r, why)) return false;
    ++done_count;
    const double now = elapsed();
    if (show_progress &&
        (now - last_bar > 0.25 || done_count == static_cast<int>(my_tasks.size()))) {
      last_bar = now;
      std::fprintf(
          stderr, "\r%s%s", g_size > 1 ? "rank 0: " : "",
          experiments::ProgressBar(done_count, static_cast<int>(my_tasks.size()), now).c_str());
      std::fflush(stderr);
    }
    return true;
  };
  solvers::WeightGridOptions grid_options;
  grid_options.relative = FLAGS_relative;
  grid_options.num_seeds = num_seeds;
  grid_options.first_seed = FLAGS_first_seed;
  grid_options.num_threads = threads;
  grid_options.settings = settings;
  bool ok = solvers::EvaluateWeightGrid(*grid_case, axes, grid_options, my_tasks, on_result,
                                        &results, &error);
  if (show_progress && !my_tasks.empty()) std::fprintf(stderr, "\n");
  journal.Close();
  const double compute_s = elapsed();

  // Merge: journal records + this run's results (+ the other ranks' results over MPI).
  std::vector<solvers::GridPointResult> merged;
  std::set<std::pair<int, int>> have;
  for (const auto& [key, r] : journal.loaded()) {
    merged.push_back(r);
    have.insert(key);
  }
  std::string mine;
  if (ok) {
    for (int task : my_tasks) mine += experiments::FormatJournalLine(results[task]) + "\n";
  }
#ifdef DYNID_WITH_MPI
  {
    int local_ok = ok ? 1 : 0, all_ok = 0;
    MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok && ok) error = "another rank failed";
    ok = all_ok != 0;
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(g_size), offsets(g_size, 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (g_rank == 0) {
      long long sum = 0;
      for (int r = 0; r < g_size; ++r) {
        offsets[r] = static_cast<int>(sum);
        sum += lengths[r];
      }
      all.resize(sum);
    }
    MPI_Gatherv(mine.data(), length, MPI_CHAR, g_rank == 0 ? all.data() : nullptr, lengths.data(),
                offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    mine = all;
  }
#endif
  if (!ok) return Fail(1, error);
  if (g_rank != 0) return 0;
  {
    std::istringstream in(mine);
    std::string line;
    while (std::getline(in, line)) {
      solvers::GridPointResult r;
      if (!experiments::ParseJournalLine(line, p, num_zeta, num_xi, &r)) {
        return Fail(1, "internal: a result line did not parse back");
      }
      if (have.insert({r.point, r.seed_index}).second) merged.push_back(r);
    }
  }
  if (static_cast<long long>(merged.size()) != total_tasks) {
    return Fail(1, "merged table has " + std::to_string(merged.size()) + " of " +
                       std::to_string(total_tasks) + " points");
  }
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.point, a.seed_index) < std::make_pair(b.point, b.seed_index);
  });

  // Tables.
  const Eigen::VectorXd& truth = grid_case->true_parameters();
  const Eigen::VectorXd scale =
      truth.cwiseAbs().unaryExpr([](double x) { return x > 0 ? x : 1.0; });
  std::vector<std::string> axis_names;
  for (const solvers::WeightAxis& a : axes) axis_names.push_back(a.entry.name);
  std::vector<std::string> header = {"point", "seed_index", "seed"};
  header.insert(header.end(), axis_names.begin(), axis_names.end());
  for (const char* c : {"converged", "iterations", "initial_cost", "final_cost", "time_s",
                        "identifiable", "condition_number"}) {
    header.push_back(c);
  }
  for (const char* prefix : {"theta_", "rel_error_", "sd_", "scaled_sd_"}) {
    for (const auto& q : info.parameters) header.push_back(prefix + q.name);
  }
  for (const auto& q : info.equations) header.push_back("zeta_rms_eom_" + q.name);
  for (const auto& q : info.measurements) header.push_back("zeta_rms_" + q.name);
  for (const auto& q : info.positions) header.push_back("xi_rms_s_" + q.name);
  for (const auto& q : info.positions) header.push_back("xi_rms_v_" + q.name);
  Eigen::MatrixXd table(merged.size(), header.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    const solvers::GridPointResult& r = merged[i];
    std::vector<double> row = {static_cast<double>(r.point), static_cast<double>(r.seed_index),
                               static_cast<double>(r.seed)};
    for (double v : solvers::GridPointValues(axes, r.point)) row.push_back(v);
    for (double v : {r.converged ? 1.0 : 0.0, static_cast<double>(r.iterations), r.initial_cost,
                     r.final_cost, r.time_s, r.identifiable ? 1.0 : 0.0, r.condition_number}) {
      row.push_back(v);
    }
    const Eigen::VectorXd rel_error = (r.theta - truth).cwiseQuotient(scale);
    for (const Eigen::VectorXd* x : {&r.theta, &rel_error, &r.standard_deviation,
                                     &r.scaled_standard_deviation, &r.zeta_rms, &r.xi_rms}) {
      row.insert(row.end(), x->data(), x->data() + x->size());
    }
    CHECK_EQ(row.size(), header.size());
    table.row(i) = Eigen::Map<const Eigen::VectorXd>(row.data(), row.size()).transpose();
  }
  const std::vector<solvers::GridPointSummary> summaries =
      solvers::SummarizeWeightGrid(merged, num_points, truth);
  std::vector<std::string> summary_header = {"point"};
  summary_header.insert(summary_header.end(), axis_names.begin(), axis_names.end());
  for (const char* c : {"num_seeds", "num_converged", "mean_final_cost", "mean_time_s"}) {
    summary_header.push_back(c);
  }
  for (const char* prefix : {"bias_", "spread_", "rms_error_", "predicted_rsd_"}) {
    for (const auto& q : info.parameters) summary_header.push_back(prefix + q.name);
  }
  Eigen::MatrixXd summary_table(num_points, summary_header.size());
  int converged_total = 0;
  for (const solvers::GridPointSummary& s : summaries) {
    std::vector<double> row = {static_cast<double>(s.point)};
    for (double v : solvers::GridPointValues(axes, s.point)) row.push_back(v);
    for (double v : {static_cast<double>(s.num_seeds), static_cast<double>(s.num_converged),
                     s.mean_final_cost, s.mean_time_s}) {
      row.push_back(v);
    }
    for (const Eigen::VectorXd* x : {&s.bias, &s.spread, &s.rms_error, &s.predicted_rsd}) {
      row.insert(row.end(), x->data(), x->data() + x->size());
    }
    summary_table.row(s.point) =
        Eigen::Map<const Eigen::VectorXd>(row.data(), row.size()).transpose();
    converged_total += s.num_converged;
  }

  // Console: the best grid point per parameter (smallest RMS relative error).
  std::printf(
      "weight_sweep: case %s (%s), %d nodes, %d grid points × %d seeds = %lld estimates, "
      "%d converged; computed %zu here in %.1f s on %d thread(s) × %d rank(s)\n",
      grid_case->name().c_str(), grid_case->description().c_str(), grid_case->num_nodes(),
      num_points, num_seeds, total_tasks, converged_total, pending.size(), compute_s, threads,
      g_size);
  nlohmann::json best = nlohmann::json::object();
  for (int j = 0; j < p; ++j) {
    int arg = 0;
    for (int i = 1; i < num_points; ++i) {
      if (summaries[i].rms_error(j) < summaries[arg].rms_error(j)) arg = i;
    }
    std::printf("  %-12s best RMS rel. error %.3g at point %d (", info.parameters[j].name.c_str(),
                summaries[arg].rms_error(j), arg);
    const std::vector<double> values = solvers::GridPointValues(axes, arg);
    for (size_t d = 0; d < axes.size(); ++d) {
      std::printf("%s%s = %.4g", d ? ", " : "", axis_names[d].c_str(), values[d]);
    }
    std::printf("): bias %.3g, spread %.3g\n", summaries[arg].bias(j), summaries[arg].spread(j));
    best[info.parameters[j].name] = {{"point", arg},
                                     {"weights", values},
                                     {"rms_error", summaries[arg].rms_error(j)},
                                     {"bias", summaries[arg].bias(j)},
                                     {"spread", summaries[arg].spread(j)}};
  }

  // JSON.
  nlohmann::json summary;
  summary["flags"] = {{"case_name", FLAGS_case_name},
                      {"grid", FLAGS_grid},
                      {"relative", FLAGS_relative},
                      {"seeds", FLAGS_seeds},
                      {"first_seed", FLAGS_first_seed},
                      {"threads", threads},
                      {"ranks", g_size},
                      {"nodes", FLAGS_nodes},
                      {"noise_scale", FLAGS_noise_scale},
                      {"theta_start_factor", FLAGS_theta_start_factor},
                      {"max_iterations", FLAGS_max_iterations},
                      {"transcription", FLAGS_transcription}};
  summary["case"] = {{"name", grid_case->name()},
                     {"description", grid_case->description()},
                     {"model", info.name},
                     {"num_nodes", grid_case->num_nodes()},
                     {"true_parameters", ToVector(truth)},
                     {"noise_standard_deviation", ToVector(grid_case->noise_standard_deviation())}};
  std::vector<std::string> parameter_names;
  for (const auto& q : info.parameters) parameter_names.push_back(q.name + " [" + q.unit + "]");
  summary["case"]["parameters"] = parameter_names;
  nlohmann::json base = nlohmann::json::object();
  for (const solvers::WeightEntry& e : solvers::ListWeightEntries(info)) {
    base[e.name] = grid_case->base_weights().Get(e);
  }
  summary["base_weights"] = base;
  nlohmann::json axes_json = nlohmann::json::array();
  for (const solvers::WeightAxis& a : axes) {
    axes_json.push_back({{"weight", a.entry.name},
                         {"low", a.low},
                         {"high", a.high},
                         {"count", a.count},
                         {"values", a.Values()}});
  }
  summary["axes"] = axes_json;
  summary["journal"] = {{"folder", journal_dir},
                        {"signature", signature},
                        {"resumed_points", journal.loaded().size()},
                        {"skipped_lines", journal.skipped_lines()}};
  summary["totals"] = {{"grid_points", num_points},
                       {"estimates", total_tasks},
                       {"converged", converged_total},
                       {"computed_this_run", pending.size()},
                       {"compute_s", compute_s}};
  summary["best_per_parameter"] = best;
  if (FLAGS_observability) {
    solvers::ObservabilityReport report;
    if (grid_case->Observability(grid_case->base_weights(), &report, &error)) {
      summary["observability"] = ObservabilityJson(report);
      std::printf("  observability: %s\n  identifiability (base weights): %s\n",
                  report.message.c_str(), report.parameters.message.c_str());
    } else {
      summary["observability"] = {{"error", error}};
    }
  }

  // Outputs.
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) ||
      !stage.WriteText("points.csv", dynid::data::FormatCsv(header, table), &error) ||
      !stage.WriteText("summary.csv", dynid::data::FormatCsv(summary_header, summary_table),
                       &error)) {
    return Fail(1, error);
  }
  std::vector<std::string> figures;
  if (FLAGS_figures && axes.size() == 1) {
    dynid::data::Figure figure;
    figure.title = grid_case->name() + ": relative error vs " + axis_names[0];
    for (const auto& q : info.parameters) {
      dynid::data::Panel panel;
      panel.title = q.name;
      panel.xlabel = axis_names[0];
      panel.ylabel = "relative error";
      panel.log_x = true;
      panel.series.push_back(dynid::data::LineSeries("summary.csv", axis_names[0], "bias_" + q.name,
                                                     "bias (band: ±2 spread)"));
      panel.series.back().error = "spread_" + q.name;
      panel.series.push_back(dynid::data::LineSeries("summary.csv", axis_names[0],
                                                     "predicted_rsd_" + q.name, "predicted rsd"));
      panel.hlines = {0.0};
      figure.panels.push_back(panel);
    }
    if (!dynid::data::RenderFigure(figure, stage.Path(""), "error_spread", &error)) {
      return Fail(1, error);
    }
    figures.push_back("error_spread.png");
  } else if (FLAGS_figures && axes.size() == 2) {
    for (const auto& q : info.parameters) {
      nlohmann::json spec = {
          {"title", grid_case->name() + ": " + q.name + " (relative to truth)"},
          {"csv", "summary.csv"},
          {"x", axis_names[0]},
          {"y", axis_names[1]},
          {"columns", 2},
          {"panels",
           {{{"z", "bias_" + q.name}, {"title", "|bias| " + q.name}, {"absolute", true}},
            {{"z", "spread_" + q.name}, {"title", "spread " + q.name}, {"absolute", true}},
            {{"z", "rms_error_" + q.name}, {"title", "RMS error " + q.name}, {"absolute", true}},
            {{"z", "predicted_rsd_" + q.name},
             {"title", "predicted rel. sd " + q.name},
             {"absolute", true}}}}};
      const std::string stem = "heatmap_" + q.name;
      if (!stage.WriteJson(stem + ".heatmap.json", spec, &error)) return Fail(1, error);
      if (!dynid::data::RunPythonScript(
              "plot_heatmap.py", {stage.Path(stem + ".heatmap.json"), stage.Path(stem + ".png")},
              &error)) {
        return Fail(1, "heat map '" + stem + "' not rendered: " + error);
      }
      figures.push_back(stem + ".png");
    }
  }
  summary["figures"] = figures;
  if (!stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("  wrote %s/{points.csv, summary.csv, summary.json}%s\n", FLAGS_out_dir.c_str(),
              figures.empty() ? "" : " and figures");
  return 0;
}
