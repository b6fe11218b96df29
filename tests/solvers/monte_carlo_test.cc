// Tests of the Monte Carlo harness (solvers/monte_carlo.h) and its coverage statistics
// (solvers/coverage.h): on a linear regression whose reported σ is right the intervals cover
// ~95 % and z ~ N(0, 1); with σ reported half as large the harness must say "not calibrated";
// the statistics against a hand computation; the same runs for every thread count.
#include "dynid/solvers/monte_carlo.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/coverage.h"

namespace dynid::solvers {
namespace {

// y_i = a + b x_i + e_i, e_i ~ N(0, 0.3²), x_i on [0, 1] (40 points); least squares with the
// textbook covariance σ̂² (XᵀX)⁻¹, σ̂² = |r|² / (n − 2). Scenario 0 reports σ; scenario 1
// reports σ / sigma_divisor (deliberately wrong).
bool RegressionTrial(double sigma_divisor, int scenario, std::uint64_t seed,
                     std::vector<MonteCarloEstimate>* estimates, std::string*) {
  const int n = 40;
  const double a = 1.5, b = -0.7, noise = 0.3;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, noise);
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) / (n - 1);
    X(i, 0) = 1.0;
    X(i, 1) = x;
    y(i) = a + b * x + normal(rng);
  }
  const Eigen::Vector2d theta = X.colPivHouseholderQr().solve(y);
  const double s2 = (y - X * theta).squaredNorm() / (n - 2);
  const Eigen::Matrix2d covariance = s2 * (X.transpose() * X).inverse();
  const double divisor = scenario == 1 ? sigma_divisor : 1.0;
  const double truth[2] = {a, b};
  const char* names[2] = {"a", "b"};
  for (int j = 0; j < 2; ++j) {
    MonteCarloEstimate e;
    e.estimator = "ls";
    e.parameter = names[j];
    e.truth = truth[j];
    e.estimate = theta(j);
    e.reported_std = std::sqrt(covariance(j, j)) / divisor;
    estimates->push_back(e);
  }
  return true;
}

MonteCarloTrial Regression(double sigma_divisor) {
  return [sigma_divisor](int scenario, std::uint64_t seed,
                         std::vector<MonteCarloEstimate>* estimates, std::string* error) {
    return RegressionTrial(sigma_divisor, scenario, seed, estimates, error);
  };
}

TEST(MonteCarloTest, HonestSigmaIsCalibratedAndHalvedSigmaIsNot) {
  MonteCarloOptions options;
  options.num_seeds = 400;
  options.first_seed = 1000;
  options.num_threads = 2;
  std::vector<MonteCarloRun> runs;
  std::string error;
  ASSERT_TRUE(RunMonteCarlo(2, Regression(2.0), options, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 800u);
  const std::vector<CoverageRow> rows = SummarizeCoverage(runs, {"honest", "halved"});
  ASSERT_EQ(rows.size(), 4u);
  for (const CoverageRow& row : rows) {
    SCOPED_TRACE(row.scenario + " " + row.parameter);
    EXPECT_EQ(row.runs, 400);
    EXPECT_EQ(row.with_interval, 400);
    EXPECT_EQ(row.non_converged, 0);
    // Least squares is unbiased: |bias| within 4 standard errors of the mean.
    EXPECT_LT(std::abs(row.bias), 4.0 * row.spread / std::sqrt(400.0));
    if (row.scenario == "honest") {
      // Nominal 0.95 (Student t with 38 dof at 1.96: 0.943); binomial se over 400 runs 0.011.
      EXPECT_GT(row.coverage_95, 0.90);
      EXPECT_LT(row.coverage_95, 0.98);
      EXPECT_TRUE(row.calibrated);
      // z ~ t(38): std sqrt(38/36) = 1.027; the sample std over 400 has se ~0.036.
      EXPECT_NEAR(row.z_std, 1.03, 0.12);
      EXPECT_NEAR(row.spread / row.mean_reported_std, 1.0, 0.12);
    } else {
      // σ halved: the interval is ±0.98 true σ, P(|t38| < 0.98) = 0.67.
      EXPECT_GT(row.coverage_95, 0.58);
      EXPECT_LT(row.coverage_95, 0.76);
      EXPECT_FALSE(row.calibrated);
      EXPECT_NEAR(row.z_std, 2.05, 0.24);
      EXPECT_NEAR(row.spread / row.mean_reported_std, 2.0, 0.24);
    }
  }
  // The same seeds give the same estimates in both scenarios; only σ differs, by exactly 2.
  for (int i = 0; i < 400; ++i) {
    EXPECT_EQ(runs[i].estimates[0].estimate, runs[400 + i].estimates[0].estimate);
    EXPECT_DOUBLE_EQ(runs[i].estimates[1].reported_std,
                     2.0 * runs[400 + i].estimates[1].reported_std);
  }
}

TEST(MonteCarloTest, ResultsDoNotDependOnTheThreadCount) {
  MonteCarloOptions options;
  options.num_seeds = 37;
  options.first_seed = 5;
  std::vector<std::string> lines[3];
  const int threads[3] = {1, 3, 8};
  for (int t = 0; t < 3; ++t) {
    options.num_threads = threads[t];
    std::vector<MonteCarloRun> runs;
    std::string error;
    ASSERT_TRUE(RunMonteCarlo(2, Regression(3.0), options, &runs, &error)) << error;
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
      EXPECT_EQ(runs[i].scenario, i / 37);
      EXPECT_EQ(runs[i].seed, 5u + static_cast<std::uint64_t>(i % 37));
    }
    lines[t] = {FormatMonteCarloRunsCsv(runs, {"s0", "s1"}),
                FormatCoverageCsv(SummarizeCoverage(runs, {"s0", "s1"}))};
  }
  EXPECT_EQ(lines[0], lines[1]);
  EXPECT_EQ(lines[0], lines[2]);
}

// Statistics against a hand computation on five runs of one estimator: estimates 1.0, 1.2, 0.9,
// 1.5 (converged), one non-converged run, truth 1; σ 0.1 for all; one run reports an explicit
// interval instead of σ.
TEST(MonteCarloTest, StatisticsMatchAHandComputation) {
  std::vector<MonteCarloRun> runs(5);
  const double estimates[5] = {1.0, 1.2, 0.9, 1.5, 7.0};
  for (int r = 0; r < 5; ++r) {
    runs[r].seed = r;
    MonteCarloEstimate e;
    e.estimator = "est";
    e.parameter = "p";
    e.truth = 1.0;
    e.estimate = estimates[r];
    e.reported_std = 0.1;
    e.converged = r != 4;
    if (r == 3) {  // interval [1.45, 1.6] (misses), σ NaN: no z-score
      e.reported_std = std::nan("");
      e.lower = 1.45;
      e.upper = 1.6;
    }
    runs[r].estimates.push_back(e);
    MonteCarloEstimate none = e;  // a second parameter without any interval
    none.parameter = "q";
    none.reported_std = none.lower = none.upper = std::nan("");
    runs[r].estimates.push_back(none);
  }
  const std::vector<CoverageRow> rows = SummarizeCoverage(runs, {""});
  ASSERT_EQ(rows.size(), 2u);
  const CoverageRow& p = rows[0];
  EXPECT_EQ(p.parameter, "p");
  EXPECT_EQ(p.runs, 4);
  EXPECT_EQ(p.non_converged, 1);
  // errors 0, 0.2, −0.1, 0.5: mean 0.15, sample std sqrt(Σ(e − 0.15)² / 3) = sqrt(0.21 / 3).
  EXPECT_NEAR(p.bias, 0.15, 1e-15);
  EXPECT_NEAR(p.spread, std::sqrt(0.21 / 3.0), 1e-15);
  EXPECT_NEAR(p.median_estimate, 1.1, 1e-15);
  // Intervals: [0.804, 1.196] covers, [1.004, 1.396] misses, [0.704, 1.096] covers, [1.45, 1.6]
  // misses.
  EXPECT_EQ(p.with_interval, 4);
  EXPECT_EQ(p.covered, 2);
  EXPECT_DOUBLE_EQ(p.coverage_95, 0.5);
  EXPECT_EQ(p.with_std, 3);
  EXPECT_NEAR(p.mean_reported_std, 0.1, 1e-15);
  EXPECT_NEAR(p.z_mean, (0.0 + 2.0 - 1.0) / 3.0, 1e-12);
  EXPECT_NEAR(p.z_std,
              std::sqrt(((0.0 - 1.0 / 3) * (0.0 - 1.0 / 3) + (2.0 - 1.0 / 3) * (2.0 - 1.0 / 3) +
                         (-1.0 - 1.0 / 3) * (-1.0 - 1.0 / 3)) /
                        2.0),
              1e-12);
  EXPECT_FALSE(p.calibrated);
  EXPECT_EQ(CoverageLabel(p), "coverage 0.50 over 4 runs: too few to judge (>= 20)");
  const CoverageRow& q = rows[1];
  EXPECT_EQ(q.runs, 4);
  EXPECT_EQ(q.with_interval, 0);
  EXPECT_TRUE(std::isnan(q.coverage_95));
  EXPECT_TRUE(std::isnan(q.mean_reported_std));
  EXPECT_FALSE(q.calibrated);
  EXPECT_EQ(CoverageLabel(q), "no interval reported (4 runs)");
  EXPECT_EQ(FindCoverageRow(rows, "", "est", "q"), &rows[1]);
  EXPECT_EQ(FindCoverageRow(rows, "", "est", "r"), nullptr);
}

TEST(MonteCarloTest, CalibratedNeedsTwentyRunsAndCoverageInBand) {
  EXPECT_FALSE(IsCalibrated(1.0, 19));
  EXPECT_TRUE(IsCalibrated(1.0, 20));
  EXPECT_TRUE(IsCalibrated(0.85, 20));
  EXPECT_FALSE(IsCalibrated(0.84, 50));
  EXPECT_FALSE(IsCalibrated(std::nan(""), 50));
}

TEST(MonteCarloTest, CsvStartsWithTheRequiredColumns) {
  CoverageRow row;
  row.scenario = "sim2";
  row.estimator = "saekf";
  row.parameter = "b_rad";
  row.runs = 3;
  row.coverage_95 = std::nan("");
  const std::string csv = FormatCoverageCsv({row});
  EXPECT_EQ(csv.rfind("estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,"
                      "calibrated,",
                      0),
            0u);
  EXPECT_NE(csv.find("\nsaekf,b_rad,3,"), std::string::npos);
  EXPECT_NE(csv.find(",sim2 saekf b_rad\n"), std::string::npos);
}

TEST(MonteCarloTest, CoverageCsvRoundTrips) {
  MonteCarloOptions options;
  options.num_seeds = 25;
  options.num_threads = 1;
  std::vector<MonteCarloRun> runs;
  std::string error;
  ASSERT_TRUE(RunMonteCarlo(2, Regression(2.0), options, &runs, &error)) << error;
  const std::vector<CoverageRow> rows = SummarizeCoverage(runs, {"honest", "halved"});
  const std::string path = ::testing::TempDir() + "/monte_carlo_test_coverage.csv";
  {
    std::ofstream out(path);
    out << FormatCoverageCsv(rows);
  }
  std::vector<CoverageRow> back;
  ASSERT_TRUE(ReadCoverageCsv(path, &back, &error)) << error;
  EXPECT_EQ(FormatCoverageCsv(back), FormatCoverageCsv(rows));
  {
    std::ofstream out(path);
    out << FormatCoverageCsv(rows) << "ls,a,x,1,1,1,1,1,s,1,1,1,1,0,1,1,l\n";
  }
  EXPECT_FALSE(ReadCoverageCsv(path, &back, &error));
  EXPECT_NE(error.find("monte_carlo_test_coverage.csv:6: a number or count is malformed"),
            std::string::npos)
      << error;
  {
    std::ofstream out(path);
    out << "estimator,parameter\n";
  }
  EXPECT_FALSE(ReadCoverageCsv(path, &back, &error));
  EXPECT_NE(error.find(":1: not a coverage.csv header"), std::string::npos) << error;
}

TEST(MonteCarloTest, LoadMeasuredCoverageReadsTheGivenFileOrReportsNone) {
  MonteCarloOptions options;
  options.num_seeds = 5;
  options.num_threads = 1;
  std::vector<MonteCarloRun> runs;
  std::string error;
  ASSERT_TRUE(RunMonteCarlo(2, Regression(2.0), options, &runs, &error)) << error;
  const std::vector<CoverageRow> rows = SummarizeCoverage(runs, {"honest", "halved"});
  const std::string path = ::testing::TempDir() + "/monte_carlo_test_measured.csv";
  {
    std::ofstream out(path);
    out << FormatCoverageCsv(rows);
  }
  std::vector<CoverageRow> loaded;
  std::string source;
  ASSERT_TRUE(LoadMeasuredCoverage(path, "no_such_study/coverage.csv", &loaded, &source, &error))
      << error;
  EXPECT_EQ(source, path);
  EXPECT_EQ(FormatCoverageCsv(loaded), FormatCoverageCsv(rows));
  // The settings comments (one per joined Monte Carlo) come back in order; the rows still do.
  {
    std::ofstream out(path);
    out << "# made by hand\n# settings: study --monte_carlo=5 --seed=1\n"
        << FormatCoverageCsv(rows, "study --monte_carlo=5 --seed=1 --x=2");
  }
  std::vector<std::string> settings;
  ASSERT_TRUE(LoadMeasuredCoverage(path, "", &loaded, &source, &error, &settings)) << error;
  EXPECT_EQ(settings, (std::vector<std::string>{"study --monte_carlo=5 --seed=1",
                                                "study --monte_carlo=5 --seed=1 --x=2"}));
  EXPECT_EQ(FormatCoverageCsv(loaded), FormatCoverageCsv(rows));
  // No given file and no shipped one: nothing to quote, not an error.
  ASSERT_TRUE(LoadMeasuredCoverage("", "no_such_study/coverage.csv", &loaded, &source, &error));
  EXPECT_TRUE(source.empty());
  EXPECT_TRUE(loaded.empty());
  // A given file that cannot be read is an error naming it.
  EXPECT_FALSE(LoadMeasuredCoverage(path + ".missing", "", &loaded, &source, &error));
  EXPECT_NE(error.find(".missing"), std::string::npos) << error;
}

TEST(MonteCarloTest, ATrialErrorStopsTheRunAndNamesTheSeed) {
  MonteCarloOptions options;
  options.num_seeds = 10;
  options.first_seed = 100;
  options.num_threads = 1;
  const MonteCarloTrial failing = [](int, std::uint64_t seed, std::vector<MonteCarloEstimate>*,
                                     std::string* error) {
    if (seed == 103) {
      *error = "solver exploded";
      return false;
    }
    return true;
  };
  std::vector<MonteCarloRun> runs;
  std::string error;
  EXPECT_FALSE(RunMonteCarlo(1, failing, options, &runs, &error));
  EXPECT_EQ(error, "scenario 0, seed 103: solver exploded");
  options.num_seeds = 0;
  EXPECT_FALSE(RunMonteCarlo(1, failing, options, &runs, &error));
  EXPECT_NE(error.find("num_seeds must be >= 1"), std::string::npos);
}

// Two runs' estimates are bit-identical (names, numbers, NaN where NaN, convergence).
void ExpectSameRuns(const std::vector<MonteCarloRun>& a, const std::vector<MonteCarloRun>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].scenario, b[i].scenario);
    EXPECT_EQ(a[i].seed, b[i].seed);
    ASSERT_EQ(a[i].estimates.size(), b[i].estimates.size());
    for (size_t j = 0; j < a[i].estimates.size(); ++j) {
      const MonteCarloEstimate &x = a[i].estimates[j], &y = b[i].estimates[j];
      EXPECT_EQ(x.estimator, y.estimator);
      EXPECT_EQ(x.parameter, y.parameter);
      for (auto [u, v] : {std::pair{x.truth, y.truth}, std::pair{x.estimate, y.estimate},
                          std::pair{x.reported_std, y.reported_std}, std::pair{x.lower, y.lower},
                          std::pair{x.upper, y.upper}}) {
        if (std::isnan(u)) {
          EXPECT_TRUE(std::isnan(v));
        } else {
          EXPECT_EQ(u, v);
        }
      }
      EXPECT_EQ(x.converged, y.converged);
      EXPECT_EQ(x.measure, y.measure);
    }
  }
}

// A trial whose estimates include NaN, an infinity, an interval and a non-converged estimate,
// and that counts its calls.
MonteCarloTrial CountingTrial(std::atomic<int>* calls) {
  return [calls](int scenario, std::uint64_t seed, std::vector<MonteCarloEstimate>* estimates,
                 std::string* error) {
    ++*calls;
    if (!RegressionTrial(1.0, scenario, seed, estimates, error)) return false;
    MonteCarloEstimate odd;
    odd.estimator = "odd one";
    odd.parameter = "p";
    odd.truth = std::numeric_limits<double>::infinity();
    odd.estimate = 1.0 / 3.0 + static_cast<double>(seed);
    odd.lower = -1e-300;
    odd.upper = 2.5;
    odd.converged = seed % 2 == 0;
    estimates->push_back(odd);
    MonteCarloEstimate measure;  // a per-run measure: kept with the run, not a coverage row
    measure.estimator = "ls";
    measure.parameter = "iterations";
    measure.estimate = static_cast<double>(seed % 5);
    measure.measure = true;
    estimates->push_back(measure);
    return true;
  };
}

TEST(MonteCarloTest, JournalledRunsResumeExactlyAndOnlyTheRestIsComputed) {
  namespace fs = std::filesystem;
  const std::string dir = ::testing::TempDir() + "/monte_carlo_journal_test";
  fs::remove_all(dir);
  std::atomic<int> calls{0};
  MonteCarloOptions options;
  options.num_seeds = 12;
  options.first_seed = 7;
  options.num_threads = 2;
  std::vector<MonteCarloRun> reference;
  std::string error;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &reference, &error)) << error;
  // A first, shorter run with a journal (as if killed after 5 seeds per scenario) ...
  options.journal_dir = dir;
  options.signature = "settings-1";
  options.num_seeds = 5;
  std::vector<MonteCarloRun> runs;
  MonteCarloTally tally;
  calls = 0;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error, &tally)) << error;
  EXPECT_EQ(calls.load(), 10);
  EXPECT_EQ(tally.resumed, 0);
  EXPECT_EQ(tally.computed, 10);
  // ... then the full run computes only the 14 missing runs and equals the unjournalled one,
  // the reused runs bit for bit.
  options.num_seeds = 12;
  calls = 0;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error, &tally)) << error;
  EXPECT_EQ(calls.load(), 14);
  EXPECT_EQ(tally.resumed, 10);
  EXPECT_EQ(tally.computed, 14);
  EXPECT_EQ(tally.skipped_lines, 0);
  ExpectSameRuns(runs, reference);
  for (const CoverageRow& row : SummarizeCoverage(runs, {"a", "b"})) {
    EXPECT_NE(row.parameter, "iterations") << "a measure became a coverage row";
  }
  // A line cut short by a kill is skipped and its run computed again.
  {
    std::ofstream out(dir + "/journal-0.txt", std::ios::app);
    out << "R {\"scenario\":0,\"se";
  }
  calls = 0;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error, &tally)) << error;
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(tally.skipped_lines, 1);
  ExpectSameRuns(runs, reference);
  // Other settings: refused, nothing computed.
  options.signature = "settings-2";
  calls = 0;
  EXPECT_FALSE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error, &tally));
  EXPECT_TRUE(tally.journal_of_other_settings) << error;
  EXPECT_EQ(calls.load(), 0);
  options.journal_dir.clear();
  EXPECT_TRUE(options.IsValid(&error));
  options.journal_dir = dir;
  options.signature.clear();
  EXPECT_FALSE(options.IsValid(&error));
  fs::remove_all(dir);
}

TEST(MonteCarloTest, RanksShareThePendingRunsAndRankZeroGathersThem) {
  // Two ranks played one after the other in one process: rank 1 computes its share first and
  // its gather records the lines it would send; rank 0's gather appends them to its own.
  std::atomic<int> calls{0};
  MonteCarloOptions options;
  options.num_seeds = 9;
  options.first_seed = 3;
  options.num_threads = 1;
  std::vector<MonteCarloRun> reference;
  std::string error;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &reference, &error)) << error;
  options.num_ranks = 2;
  options.barrier = [] {};
  std::string sent_by_rank_1;
  options.rank = 1;
  options.gather = [&sent_by_rank_1](bool ok, std::string* lines, std::string*) {
    sent_by_rank_1 = *lines;
    lines->clear();
    return ok;
  };
  std::vector<MonteCarloRun> runs;
  calls = 0;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error)) << error;
  EXPECT_EQ(calls.load(), 9);  // 18 pending runs, every second one
  EXPECT_TRUE(runs.empty());
  options.rank = 0;
  options.gather = [&sent_by_rank_1](bool ok, std::string* lines, std::string*) {
    *lines += sent_by_rank_1;
    return ok;
  };
  calls = 0;
  ASSERT_TRUE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error)) << error;
  EXPECT_EQ(calls.load(), 9);
  ExpectSameRuns(runs, reference);
  // A rank that failed makes every rank fail.
  options.gather = [](bool, std::string*, std::string* why) {
    *why = "another MPI rank failed";
    return false;
  };
  EXPECT_FALSE(RunMonteCarlo(2, CountingTrial(&calls), options, &runs, &error));
  EXPECT_EQ(error, "another MPI rank failed");
  options.barrier = nullptr;
  EXPECT_FALSE(options.IsValid(&error));
}

// Rows of `groups` (scenario, estimator, parameters) as SummarizeCoverage orders them.
std::vector<CoverageRow> GroupRows(
    const std::vector<std::tuple<std::string, std::string, int>>& groups) {
  std::vector<CoverageRow> rows;
  for (const auto& [scenario, estimator, parameters] : groups) {
    for (int p = 0; p < parameters; ++p) {
      CoverageRow row;
      row.scenario = scenario;
      row.estimator = estimator;
      row.parameter = "p" + std::to_string(p);
      row.with_interval = 50;
      row.coverage_95 = p % 3 == 0 ? 0.9 : 0.5;
      row.calibrated = IsCalibrated(row.coverage_95, row.with_interval);
      rows.push_back(row);
    }
  }
  return rows;
}

// 57 parameters × 5 estimators (identify on the TIAGo record): one pair of panels per estimator,
// each of its own 57 rows named by parameter, top-down, with the calibrated band and the 0.95
// line; the figure grows with the rows (0.14 in each) instead of crowding 285 labels on one axis.
TEST(MonteCarloTest, CoverageFigureOfManyRowsHasAPanelPerEstimator) {
  std::vector<std::tuple<std::string, std::string, int>> groups;
  for (const char* estimator : {"ls", "ls_hac", "wls", "wls_hac", "pc"}) {
    groups.emplace_back("", estimator, 57);
  }
  const std::vector<CoverageRow> rows = GroupRows(groups);
  const data::Figure figure = CoverageFigure(rows, "coverage.csv", "title");
  ASSERT_EQ(figure.panels.size(), 10u);
  EXPECT_EQ(figure.columns, 4);
  EXPECT_GE(figure.panel_height_in, 0.14 * 57);
  for (int g = 0; g < 5; ++g) {
    const data::Panel& coverage = figure.panels[2 * g];
    const data::Panel& z = figure.panels[2 * g + 1];
    // 19 of 57 rows (p0, p3, ...) have coverage 0.9.
    EXPECT_EQ(coverage.title, std::get<1>(groups[g]) + ": 19 of 57 calibrated");
    ASSERT_EQ(coverage.series.size(), 1u);
    const data::Series& series = coverage.series[0];
    EXPECT_EQ(series.x, "coverage_95");
    EXPECT_EQ(series.y, "parameter");
    EXPECT_EQ(series.first_row, 57 * g);
    EXPECT_EQ(series.num_rows, 57);
    EXPECT_TRUE(coverage.invert_y);
    ASSERT_EQ(coverage.vspans.size(), 1u);
    EXPECT_EQ(coverage.vspans[0], std::make_pair(0.85, 1.0));
    EXPECT_EQ(coverage.vlines, std::vector<double>({0.95}));
    EXPECT_FALSE(coverage.xlabel.empty());
    ASSERT_EQ(z.series.size(), 2u);
    EXPECT_EQ(z.series[0].x, "z_std");
    EXPECT_EQ(z.series[1].x, "z_mean");
    EXPECT_EQ(z.series[1].first_row, 57 * g);
  }
  // Every series stays far below the renderer's 10⁴ points.
  for (const data::Panel& panel : figure.panels) {
    for (const data::Series& series : panel.series) {
      EXPECT_LE(series.num_rows, data::kMaxFigurePoints);
    }
  }
}

// Small groups share panels (named by their labels), packed toward an even share of at most 60
// rows: 17 estimators of 4 parameters (a SCARA Monte Carlo; p0, p3 calibrated) in two panels of
// 36 and 32 rows; 11 groups of 2 (backlash) in one; one group of 100 rows keeps its panel alone.
TEST(MonteCarloTest, CoveragePanelsPackSmallGroups) {
  std::vector<std::tuple<std::string, std::string, int>> scara;
  for (int e = 0; e < 17; ++e) scara.emplace_back("", "e" + std::to_string(e), 4);
  const std::vector<CoveragePanelRows> two = CoveragePanels(GroupRows(scara));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].first, 0);
  EXPECT_EQ(two[0].count, 36);
  EXPECT_EQ(two[1].first, 36);
  EXPECT_EQ(two[1].count, 32);
  EXPECT_FALSE(two[0].one_group);
  const data::Figure figure = CoverageFigure(GroupRows(scara), "coverage.csv", "title");
  ASSERT_EQ(figure.panels.size(), 4u);
  EXPECT_EQ(figure.panels[0].series[0].y, "label");
  EXPECT_EQ(figure.panels[0].title, "18 of 36 calibrated (rows 1-36)");

  std::vector<std::tuple<std::string, std::string, int>> backlash;
  for (const char* scenario : {"sim1", "sim2"}) {
    for (int e = 0; e < 5; ++e) backlash.emplace_back(scenario, "e" + std::to_string(e), 2);
  }
  backlash.emplace_back("linear", "saekf", 2);
  const std::vector<CoveragePanelRows> one = CoveragePanels(GroupRows(backlash));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].count, 22);
  EXPECT_EQ(CoverageFigure(GroupRows(backlash), "c.csv", "t").columns, 2);

  const std::vector<CoveragePanelRows> large =
      CoveragePanels(GroupRows({{"", "a", 3}, {"", "b", 100}, {"", "c", 3}}));
  ASSERT_EQ(large.size(), 3u);
  EXPECT_EQ(large[1].count, 100);
  EXPECT_TRUE(large[1].one_group);
}

// With figures, several estimators also get the coverage map (one page of parameter ×
// estimator cells); a single estimator gets coverage.png alone.
TEST(MonteCarloTest, CoverageMapIsWrittenForSeveralEstimators) {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 with matplotlib not found";
  }
  namespace fs = std::filesystem;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto runs_of = [&](const std::vector<std::string>& estimators) {
    std::vector<MonteCarloRun> runs;
    for (int seed = 0; seed < 25; ++seed) {
      MonteCarloRun run;
      run.seed = seed;
      for (const std::string& estimator : estimators) {
        for (const char* parameter : {"m", "c"}) {
          MonteCarloEstimate e;
          e.estimator = estimator;
          e.parameter = parameter;
          e.truth = 1.0;
          e.estimate = 1.0 + 0.1 * normal(rng);
          e.reported_std = estimator == "honest" ? 0.1 : 0.02;
          run.estimates.push_back(e);
        }
      }
      runs.push_back(run);
    }
    return runs;
  };
  const fs::path root = fs::temp_directory_path() / "dynid_coverage_map_test";
  fs::remove_all(root);
  for (const auto& [name, estimators] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"two", {"honest", "optimistic"}}, {"one", {"honest"}}}) {
    data::OutputStage stage;
    std::string error;
    ASSERT_TRUE(stage.Open((root / name).string(), &error)) << error;
    std::vector<CoverageRow> rows;
    ASSERT_TRUE(WriteCoverageOutputs(runs_of(estimators), {""}, "title", /*figures=*/true, &stage,
                                     &rows, &error))
        << error;
    ASSERT_TRUE(stage.Commit(&error)) << error;
  }
  auto png = [](const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::string head(8, '\0');
    file.read(head.data(), 8);
    return file.good() && head == std::string("\x89PNG\r\n\x1a\n", 8) && fs::file_size(path) > 1000;
  };
  EXPECT_TRUE(png(root / "two" / "coverage.png"));
  EXPECT_TRUE(png(root / "two" / "coverage_map.png"));
  EXPECT_TRUE(png(root / "one" / "coverage.png"));
  EXPECT_FALSE(fs::exists(root / "one" / "coverage_map.png"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace dynid::solvers
