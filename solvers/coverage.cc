// solvers:: coverage statistics of Monte Carlo runs (see coverage.h).
#include "dynid/solvers/coverage.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/data/runtime_files.h"
#include "dynid/solvers/monte_carlo.h"

namespace dynid::solvers {
namespace {

// The comment line of coverage.csv that says how the Monte Carlo was run.
const std::string kSettingsComment = "# settings: ";

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  double sum = 0.0;
  for (double v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

// Sample standard deviation (R − 1); NaN below two values.
double SampleStd(const std::vector<double>& x) {
  if (x.size() < 2) return kNaN;
  const double mean = Mean(x);
  double sum = 0.0;
  for (double v : x) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(x.size() - 1));
}

double Median(std::vector<double> x) {
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

std::string Number(double value) {
  if (std::isnan(value)) return "nan";
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

std::string RowLabel(const CoverageRow& row) {
  return (row.scenario.empty() ? "" : row.scenario + " ") + row.estimator + " " + row.parameter;
}

// The samples of one row while the runs are read.
struct Samples {
  CoverageRow row;
  bool truth_warned = false;
  std::vector<double> estimates, stds, z;
};

}  // namespace

bool IsCalibrated(double coverage, int runs_with_interval) {
  return runs_with_interval >= kMinCalibrationRuns && coverage >= kMinCalibratedCoverage &&
         coverage <= kMaxCalibratedCoverage;
}

std::vector<CoverageRow> SummarizeCoverage(const std::vector<MonteCarloRun>& runs,
                                           const std::vector<std::string>& scenario_names) {
  // Rows in the order of first appearance; runs are visited in their stored order, which does not
  // depend on the thread count (monte_carlo.h).
  std::map<std::tuple<int, std::string, std::string>, size_t> index;
  std::vector<Samples> samples;
  for (const MonteCarloRun& run : runs) {
    CHECK(run.scenario >= 0 && run.scenario < static_cast<int>(scenario_names.size()))
        << "scenario " << run.scenario << " has no name (" << scenario_names.size() << " names)";
    for (const MonteCarloEstimate& e : run.estimates) {
      if (e.measure) continue;  // the study's own per-run measure, not an estimate of a truth
      const auto key = std::make_tuple(run.scenario, e.estimator, e.parameter);
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, samples.size()).first;
        samples.emplace_back();
        samples.back().row.scenario = scenario_names[run.scenario];
        samples.back().row.estimator = e.estimator;
        samples.back().row.parameter = e.parameter;
        samples.back().row.truth = e.truth;
      }
      Samples& s = samples[it->second];
      CoverageRow& row = s.row;
      if (e.truth != row.truth && !s.truth_warned) {
        LOG(WARNING) << RowLabel(row) << ": truth " << e.truth << " at seed " << run.seed
                     << " differs from " << row.truth << " (statistics use each run's truth)";
        s.truth_warned = true;
      }
      if (!e.converged) {
        ++row.non_converged;
        continue;
      }
      if (!std::isfinite(e.estimate)) continue;
      ++row.runs;
      s.estimates.push_back(e.estimate - e.truth);
      double lower, upper;
      ReportedInterval(e, &lower, &upper);
      if (std::isfinite(lower) && std::isfinite(upper)) {
        ++row.with_interval;
        if (lower <= e.truth && e.truth <= upper) ++row.covered;
      }
      if (std::isfinite(e.reported_std) && e.reported_std > 0.0) {
        ++row.with_std;
        s.stds.push_back(e.reported_std);
        s.z.push_back((e.estimate - e.truth) / e.reported_std);
      }
    }
  }
  std::vector<CoverageRow> rows;
  rows.reserve(samples.size());
  for (Samples& s : samples) {
    CoverageRow& row = s.row;
    // The errors θ̂ − θ carry each run's truth; the median estimate adds the row's truth back.
    row.bias = Mean(s.estimates);
    row.spread = SampleStd(s.estimates);
    row.median_estimate = Median(s.estimates) + row.truth;
    row.mean_reported_std = Mean(s.stds);
    row.coverage_95 =
        row.with_interval > 0 ? static_cast<double>(row.covered) / row.with_interval : kNaN;
    row.z_mean = Mean(s.z);
    row.z_std = SampleStd(s.z);
    row.calibrated = IsCalibrated(row.coverage_95, row.with_interval);
    rows.push_back(row);
  }
  return rows;
}

const CoverageRow* FindCoverageRow(const std::vector<CoverageRow>& rows,
                                   const std::string& scenario, const std::string& estimator,
                                   const std::string& parameter) {
  for (const CoverageRow& row : rows) {
    if (row.scenario == scenario && row.estimator == estimator && row.parameter == parameter) {
      return &row;
    }
  }
  return nullptr;
}

std::string FormatCoverageCsv(const std::vector<CoverageRow>& rows, const std::string& settings) {
  CHECK(settings.find_first_of("\r\n") == std::string::npos) << "settings must be one line";
  std::string csv = settings.empty() ? "" : kSettingsComment + settings + "\n";
  csv +=
      "estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated,scenario,"
      "truth,median_estimate,z_mean,z_std,non_converged,with_interval,covered,label\n";
  for (const CoverageRow& r : rows) {
    csv += r.estimator + "," + r.parameter + "," + std::to_string(r.runs) + "," + Number(r.bias) +
           "," + Number(r.spread) + "," + Number(r.mean_reported_std) + "," +
           Number(r.coverage_95) + "," + (r.calibrated ? "1" : "0") + "," + r.scenario + "," +
           Number(r.truth) + "," + Number(r.median_estimate) + "," + Number(r.z_mean) + "," +
           Number(r.z_std) + "," + std::to_string(r.non_converged) + "," +
           std::to_string(r.with_interval) + "," + std::to_string(r.covered) + "," + RowLabel(r) +
           "\n";
  }
  return csv;
}

bool LoadMeasuredCoverage(const std::string& given_path, const std::string& shipped_relative_path,
                          std::vector<CoverageRow>* rows, std::string* source, std::string* error,
                          std::vector<std::string>* settings) {
  rows->clear();
  source->clear();
  if (settings != nullptr) settings->clear();
  std::string path = given_path;
  if (path.empty()) {
    std::string why;
    // A tree without the shipped measurement has nothing to quote: "coverage not measured".
    if (!data::FindRuntimeFile(shipped_relative_path, &path, &why)) return true;
  }
  if (!ReadCoverageCsv(path, rows, error, settings)) return false;
  *source = path;
  return true;
}

bool ReadCoverageCsv(const std::string& path, std::vector<CoverageRow>* rows, std::string* error,
                     std::vector<std::string>* settings) {
  CHECK(rows != nullptr) << "expected rows, got nullptr";
  if (settings != nullptr) settings->clear();
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open the coverage file";
    return false;
  }
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream stream(line);
    std::string cell;
    while (std::getline(stream, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
  };
  std::string line;
  int line_number = 0;
  bool have_line = false;
  // Comment lines before the header; "# settings: ..." says how the Monte Carlo was run.
  while ((have_line = static_cast<bool>(std::getline(in, line)))) {
    ++line_number;
    if (line.empty() || line[0] != '#') break;
    if (settings != nullptr && line.compare(0, kSettingsComment.size(), kSettingsComment) == 0) {
      settings->push_back(line.substr(kSettingsComment.size()));
    }
  }
  if (!have_line) {
    *error = path + ":" + std::to_string(line_number + 1) +
             ": empty file, expected the coverage.csv header";
    return false;
  }
  std::string expected_line = FormatCoverageCsv({});  // the header alone
  expected_line.pop_back();                           // (its line break)
  const std::vector<std::string> expected = split(expected_line);
  if (split(line) != expected) {
    *error = path + ":" + std::to_string(line_number) + ": not a coverage.csv header (expected " +
             expected_line + ")";
    return false;
  }
  rows->clear();
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    const std::vector<std::string> cells = split(line);
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    if (cells.size() != expected.size()) {
      *error = where + "expected " + std::to_string(expected.size()) + " cells, got " +
               std::to_string(cells.size());
      return false;
    }
    bool ok = true;
    auto number = [&](int column) {
      const std::string& text = cells[column];
      if (text == "nan") return kNaN;
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0') ok = false;
      return value;
    };
    auto count = [&](int column) {
      const double value = number(column);
      if (!(value >= 0.0) || value != std::floor(value)) ok = false;
      return static_cast<int>(value);
    };
    CoverageRow r;
    r.estimator = cells[0];
    r.parameter = cells[1];
    r.runs = count(2);
    r.bias = number(3);
    r.spread = number(4);
    r.mean_reported_std = number(5);
    r.coverage_95 = number(6);
    r.calibrated = cells[7] == "1";
    if (cells[7] != "0" && cells[7] != "1") ok = false;
    r.scenario = cells[8];
    r.truth = number(9);
    r.median_estimate = number(10);
    r.z_mean = number(11);
    r.z_std = number(12);
    r.non_converged = count(13);
    r.with_interval = count(14);
    r.covered = count(15);
    if (!ok) {
      *error = where + "a number or count is malformed";
      return false;
    }
    rows->push_back(r);
  }
  return true;
}

std::string FormatCoverageTable(const std::vector<CoverageRow>& rows) {
  std::string table;
  char line[512];
  std::snprintf(line, sizeof(line), "%-34s %5s %11s %11s %10s %10s %14s %7s %7s %6s  %s\n",
                "scenario estimator parameter", "runs", "median", "bias", "spread", "mean_sd",
                "coverage_95", "z_mean", "z_std", "no_cv", "verdict");
  table += line;
  for (const CoverageRow& r : rows) {
    char coverage[32];
    std::snprintf(coverage, sizeof(coverage), "%.2f (%d/%d)", r.coverage_95, r.covered,
                  r.with_interval);
    std::snprintf(
        line, sizeof(line), "%-34s %5d %11.5g %11.3g %10.3g %10.3g %14s %7.2f %7.2f %6d  %s\n",
        RowLabel(r).c_str(), r.runs, r.median_estimate, r.bias, r.spread, r.mean_reported_std,
        r.with_interval > 0 ? coverage : "no interval", r.z_mean, r.z_std, r.non_converged,
        r.calibrated                            ? "calibrated"
        : r.with_interval == 0                  ? "no interval reported"
        : r.with_interval < kMinCalibrationRuns ? "too few runs to judge"
                                                : "NOT calibrated");
    table += line;
  }
  return table;
}

std::string CoverageLabel(const CoverageRow& row) {
  char text[160];
  if (row.with_interval == 0) {
    std::snprintf(text, sizeof(text), "no interval reported (%d runs)", row.runs);
  } else if (row.with_interval < kMinCalibrationRuns) {
    std::snprintf(text, sizeof(text), "coverage %.2f over %d runs: too few to judge (>= %d)",
                  row.coverage_95, row.with_interval, kMinCalibrationRuns);
  } else {
    std::snprintf(text, sizeof(text), "coverage %.2f over %d runs%s", row.coverage_95,
                  row.with_interval, row.calibrated ? " (calibrated)" : ": NOT calibrated");
  }
  return text;
}

std::vector<CoveragePanelRows> CoveragePanels(const std::vector<CoverageRow>& rows) {
  // The groups: consecutive rows of one scenario and estimator.
  std::vector<CoveragePanelRows> groups;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    if (i == 0 || rows[i].scenario != rows[i - 1].scenario ||
        rows[i].estimator != rows[i - 1].estimator) {
      groups.push_back({i, 0, true});
    }
    ++groups.back().count;
  }
  const int total = static_cast<int>(rows.size());
  if (total == 0) return {};
  // Small groups share a panel, packed in order toward an even number of rows per panel.
  const int panels = (total + kMaxCoveragePanelRows - 1) / kMaxCoveragePanelRows;
  const int target = (total + panels - 1) / panels;
  std::vector<CoveragePanelRows> packed;
  for (const CoveragePanelRows& group : groups) {
    if (!packed.empty()) {
      CoveragePanelRows& last = packed.back();
      const int joined = last.count + group.count;
      if (joined <= kMaxCoveragePanelRows &&
          std::abs(joined - target) <= std::abs(last.count - target)) {
        last.count = joined;
        last.one_group = false;
        continue;
      }
    }
    packed.push_back(group);
  }
  return packed;
}

data::Figure CoverageFigure(const std::vector<CoverageRow>& rows, const std::string& csv_name,
                            const std::string& title) {
  const std::vector<CoveragePanelRows> groups = CoveragePanels(rows);
  data::Figure figure;
  figure.title = title;
  // Two panels per group (coverage, z-scores) side by side, two groups per grid row.
  const int groups_per_row = groups.size() > 1 ? 2 : 1;
  figure.columns = 2 * groups_per_row;
  int most_rows = 1;
  std::size_t longest = 1;  // characters of the longest category name
  for (const CoveragePanelRows& group : groups) {
    most_rows = std::max(most_rows, group.count);
    for (int i = group.first; i < group.first + group.count; ++i) {
      longest = std::max(longest, (group.one_group ? rows[i].parameter : RowLabel(rows[i])).size());
    }
  }
  // About 0.14 in per category (7-point tick labels), 1.3 in for the title and the x axis; a
  // panel is 2.7 in wide beside its category names (about 0.06 in per character), and at least
  // as wide as its title (9 points: about 0.07 in per character).
  figure.panel_height_in = std::max(2.2, 1.3 + 0.14 * most_rows);
  std::size_t longest_title = 1;  // set below
  for (const CoveragePanelRows& group : groups) {
    const CoverageRow& first = rows[group.first];
    int calibrated = 0, with_interval = 0;
    for (int i = group.first; i < group.first + group.count; ++i) {
      calibrated += rows[i].calibrated ? 1 : 0;
      with_interval += rows[i].with_interval > 0 ? 1 : 0;
    }
    char counts[120];
    std::snprintf(counts, sizeof(counts), "%d of %d calibrated", calibrated, with_interval);
    if (with_interval < group.count) {
      std::snprintf(counts + std::strlen(counts), sizeof(counts) - std::strlen(counts),
                    ", %d without interval", group.count - with_interval);
    }
    const std::string range =
        "rows " + std::to_string(group.first + 1) + "-" + std::to_string(group.first + group.count);
    const std::string name =
        group.one_group ? (first.scenario.empty() ? "" : first.scenario + " ") + first.estimator
                        : "";
    const std::string category = group.one_group ? "parameter" : "label";
    auto series = [&](const std::string& column, const std::string& label) {
      data::Series s = data::PointSeries(csv_name, column, category, label);
      s.style = "errorbar";  // markers large enough to read, no error bars
      s.first_row = group.first;
      s.num_rows = group.count;
      return s;
    };
    data::Panel coverage;
    coverage.title = name.empty() ? std::string(counts) + " (" + range + ")" : name + ": " + counts;
    coverage.xlabel = "coverage of 95 % intervals (green: calibrated)";
    coverage.series = {series("coverage_95", "")};
    coverage.vspans = {{kMinCalibratedCoverage, kMaxCalibratedCoverage}};
    coverage.vlines = {0.95};
    coverage.invert_y = true;
    data::Panel z;
    z.title = (name.empty() ? range + ": " : std::string()) + "z = (estimate − truth) / σ";
    z.xlabel = "honest σ: z std 1, z mean 0 (dashed)";
    z.series = {series("z_std", "z std"), series("z_mean", "z mean")};
    z.vlines = {0.0, 1.0};
    z.invert_y = true;
    longest_title = std::max({longest_title, coverage.title.size(), z.title.size()});
    figure.panels.push_back(coverage);
    figure.panels.push_back(z);
  }
  figure.width_in = figure.columns * std::max(3.0 + 0.06 * static_cast<double>(longest),
                                              0.3 + 0.07 * static_cast<double>(longest_title));
  return figure;
}

nlohmann::json CoverageJson(const std::vector<CoverageRow>& rows) {
  auto number = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  nlohmann::json array = nlohmann::json::array();
  for (const CoverageRow& r : rows) {
    array.push_back({{"scenario", r.scenario},
                     {"estimator", r.estimator},
                     {"parameter", r.parameter},
                     {"truth", number(r.truth)},
                     {"runs", r.runs},
                     {"non_converged", r.non_converged},
                     {"with_interval", r.with_interval},
                     {"covered", r.covered},
                     {"bias", number(r.bias)},
                     {"spread", number(r.spread)},
                     {"median_estimate", number(r.median_estimate)},
                     {"mean_reported_std", number(r.mean_reported_std)},
                     {"coverage_95", number(r.coverage_95)},
                     {"z_mean", number(r.z_mean)},
                     {"z_std", number(r.z_std)},
                     {"calibrated", r.calibrated},
                     {"label", CoverageLabel(r)}});
  }
  return array;
}

bool WriteCoverageOutputs(const std::vector<MonteCarloRun>& runs,
                          const std::vector<std::string>& scenario_names, const std::string& title,
                          bool figures, data::OutputStage* stage, std::vector<CoverageRow>* rows,
                          std::string* error, const std::string& settings) {
  CHECK(stage != nullptr && rows != nullptr) << "expected a stage and rows, got nullptr";
  *rows = SummarizeCoverage(runs, scenario_names);
  if (!stage->WriteText("coverage.csv", FormatCoverageCsv(*rows, settings), error) ||
      !stage->WriteText("monte_carlo_runs.csv", FormatMonteCarloRunsCsv(runs, scenario_names),
                        error)) {
    return false;
  }
  if (!figures) return true;
  if (!data::RenderFigure(CoverageFigure(*rows, "coverage.csv", title), stage->Path(""), "coverage",
                          error)) {
    return false;
  }
  // Several estimators (or scenarios): also the map of all of them on one page
  // (plot_coverage_map.py).
  const bool several = std::any_of(rows->begin(), rows->end(), [&](const CoverageRow& row) {
    return row.estimator != rows->front().estimator || row.scenario != rows->front().scenario;
  });
  if (!several) return true;
  return data::RunPythonScript(
      "plot_coverage_map.py", {stage->Path("coverage.csv"), stage->Path("coverage_map.png"), title},
      error);
}

}  // namespace dynid::solvers
