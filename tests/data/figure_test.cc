#include "dynid/data/figure.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dynid/data/runtime_files.h"

namespace dynid::data {
namespace {

TEST(FigureTest, ShortSeriesAreDrawnWhole) {
  const std::vector<double> y = {3.0, 1.0, 2.0};
  const std::vector<double> error = {0.5, 0.25, 0.0};
  std::vector<std::vector<double>> lo;
  std::vector<std::vector<double>> hi;
  const std::vector<Eigen::Index> kept = MinMaxEnvelope(
      {y.data(), 1}, 3, 10, {{{y.data(), 1}, {y.data(), 1}, {error.data(), 1}, 2.0}}, &lo, &hi);
  EXPECT_THAT(kept, ::testing::ElementsAre(0, 1, 2));
  EXPECT_THAT(lo[0], ::testing::ElementsAre(2.0, 0.5, 2.0));
  EXPECT_THAT(hi[0], ::testing::ElementsAre(4.0, 1.5, 2.0));
}

TEST(FigureTest, EnvelopeKeepsEachBucketsExtremesSoSpikesStayVisible) {
  // 1e6 samples of a slow sine, one spike up and one down, and a stretch of NaN.
  const Eigen::Index n = 1000000;
  std::vector<double> y(n);
  for (Eigen::Index k = 0; k < n; ++k) y[k] = std::sin(1e-5 * static_cast<double>(k));
  y[123457] = 50.0;
  y[765433] = -50.0;
  for (Eigen::Index k = 500000; k < 500400; ++k) y[k] = std::nan("");
  const std::vector<double> lower(n, -1.0);
  std::vector<double> upper(n, 1.0);
  upper[654321] = 7.0;
  std::vector<std::vector<double>> lo;
  std::vector<std::vector<double>> hi;
  const std::vector<Eigen::Index> kept = MinMaxEnvelope(
      {y.data(), 1}, n, 10000, {{{lower.data(), 1}, {upper.data(), 1}, {}, 0.0}}, &lo, &hi);
  ASSERT_LE(kept.size(), 10000u);
  EXPECT_GE(kept.size(), 9000u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_NE(std::find(kept.begin(), kept.end(), 123457), kept.end());
  EXPECT_NE(std::find(kept.begin(), kept.end(), 765433), kept.end());
  // The bucket of NaNs (samples 500000..500199) keeps one index, a gap in the line.
  EXPECT_NE(std::find(kept.begin(), kept.end(), 500000), kept.end());
  ASSERT_EQ(lo[0].size(), kept.size());
  EXPECT_EQ(*std::max_element(hi[0].begin(), hi[0].end()), 7.0);
  EXPECT_EQ(*std::min_element(lo[0].begin(), lo[0].end()), -1.0);
}

TEST(FigureTest, EnvelopeOfStridedColumns) {
  // Column 1 of a row-major n × 2 block.
  const Eigen::Index n = 30001;
  std::vector<double> block(2 * n);
  for (Eigen::Index k = 0; k < n; ++k) {
    block[2 * k] = static_cast<double>(k);
    block[2 * k + 1] = k == 17 ? 9.0 : 0.0;
  }
  std::vector<std::vector<double>> lo;
  std::vector<std::vector<double>> hi;
  const std::vector<Eigen::Index> kept = MinMaxEnvelope({block.data() + 1, 2}, n, 100, {}, &lo, &hi);
  EXPECT_LE(kept.size(), 100u);
  EXPECT_NE(std::find(kept.begin(), kept.end(), 17), kept.end());
  EXPECT_TRUE(lo.empty());
}


// The renderer needs python3 with matplotlib (as the programs' figures do).
bool HaveMatplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' > /dev/null 2>&1") == 0;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// A folder `name` in the test's temporary folder, created empty.
std::filesystem::path EmptyDirectory(const std::string& name) {
  const std::filesystem::path directory = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

// Width and height of a PNG from its header (0 × 0 when it is not a PNG).
std::pair<int, int> PngSize(const std::string& bytes) {
  if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {0, 0};
  auto word = [&bytes](size_t at) {
    int value = 0;
    for (size_t k = 0; k < 4; ++k) value = value * 256 + static_cast<unsigned char>(bytes[at + k]);
    return value;
  };
  return {word(16), word(20)};
}

// The renderer keeps a drawn figure for the next one of the same grid; a kept figure must draw
// exactly what a fresh one draws (no series, legend, colour or limits of the figure before).
TEST(FigureTest, AKeptFigureDrawsWhatAFreshOneDraws) {
  if (!HaveMatplotlib()) GTEST_SKIP() << "python3 with matplotlib not found";
  namespace fs = std::filesystem;
  const fs::path directory = EmptyDirectory("dynid_figure_test_kept");
  // Table a: 50 samples of order 1; table b: 3000 samples of order 1e-5 (an offset text "1e-5")
  // over a longer time, with one more series.
  std::vector<double> t_a(50), y_a(50), s_a(50), t_b(3000), y_b(3000), z_b(3000);
  for (size_t k = 0; k < t_a.size(); ++k) {
    t_a[k] = 0.1 * static_cast<double>(k);
    y_a[k] = std::sin(t_a[k]);
    s_a[k] = 0.05;
  }
  for (size_t k = 0; k < t_b.size(); ++k) {
    t_b[k] = 0.01 * static_cast<double>(k);
    y_b[k] = 3e-5 * std::cos(0.7 * t_b[k]);
    z_b[k] = -1e-5 + 1e-6 * static_cast<double>(k % 7);
  }
  FigureTables tables;
  tables["a.csv"] = {{{"t", t_a.data(), 1}, {"y", y_a.data(), 1}, {"s", s_a.data(), 1}}, 50};
  tables["b.csv"] = {{{"t", t_b.data(), 1}, {"y", y_b.data(), 1}, {"z", z_b.data(), 1}}, 3000};
  auto figure_of = [](const std::string& csv, bool two_series) {
    Figure figure;
    figure.title = "figure of " + csv;
    figure.columns = 2;
    for (int p = 0; p < 3; ++p) {
      Panel panel;
      panel.title = "panel " + std::to_string(p);
      panel.xlabel = "t [s]";
      panel.ylabel = "y";
      panel.series.push_back(LineSeries(csv, "t", "y", "y", two_series ? "" : "s"));
      if (two_series) panel.series.push_back(PointSeries(csv, "t", "z", "z"));
      if (p == 1) panel.hlines = {0.5, -0.5};
      figure.panels.push_back(panel);
    }
    return figure;
  };
  std::string error;
  ASSERT_TRUE(RenderFigure(figure_of("a.csv", false), directory.string(), "first", &error, &tables))
      << error;
  ASSERT_TRUE(RenderFigure(figure_of("b.csv", true), directory.string(), "second", &error, &tables))
      << error;
  ASSERT_TRUE(RenderFigure(figure_of("a.csv", false), directory.string(), "again", &error, &tables))
      << error;
  const std::string first = ReadBytes((directory / "first.png").string());
  const std::string second = ReadBytes((directory / "second.png").string());
  const std::string again = ReadBytes((directory / "again.png").string());
  // 8 in × 2 rows of 2.6 in at 110 dpi.
  EXPECT_EQ(PngSize(first), std::make_pair(880, 572));
  EXPECT_EQ(PngSize(second), std::make_pair(880, 572));
  EXPECT_NE(first, second);
  EXPECT_TRUE(first == again) << "the kept figure drew differently from a fresh one";
  fs::remove_all(directory);
}

// A series of some rows of a table (Series::first_row, num_rows) draws exactly what the same
// series draws from a table of those rows alone, with text categories on the ordinate, both from
// the program and when the figure's JSON is drawn again from the CSV files; the spec records the
// rows, the vertical lines, the shaded range and the ordinate's direction.
TEST(FigureTest, ASeriesOfSomeRowsDrawsThoseRows) {
  if (!HaveMatplotlib()) GTEST_SKIP() << "python3 with matplotlib not found";
  namespace fs = std::filesystem;
  const fs::path directory = EmptyDirectory("dynid_figure_test_rows");
  std::ofstream all((directory / "all.csv").string());
  std::ofstream part((directory / "part.csv").string());
  all << "# settings: a comment line\nname,value,z\n";
  part << "name,value,z\n";
  for (int k = 0; k < 10; ++k) {
    const std::string row = "p" + std::to_string(k) + "," + std::to_string(0.1 * k) + "," +
                            std::to_string(0.3 * k - 1.0) + "\n";
    all << row;
    if (k >= 3 && k < 7) part << row;
  }
  all.close();
  part.close();
  auto figure_of = [](const std::string& csv, Eigen::Index first, Eigen::Index count) {
    Figure figure;
    figure.title = "rows 4-7";
    figure.columns = 2;
    for (const char* column : {"value", "z"}) {
      Panel panel;
      panel.title = column;
      panel.xlabel = column;
      Series series = PointSeries(csv, column, "name", column);
      series.style = "errorbar";
      series.first_row = first;
      series.num_rows = count;
      panel.series = {series};
      panel.vlines = {0.95};
      panel.vspans = {{0.85, 1.0}};
      panel.invert_y = true;
      figure.panels.push_back(panel);
    }
    return figure;
  };
  std::string error;
  ASSERT_TRUE(RenderFigure(figure_of("all.csv", 3, 4), directory.string(), "sliced", &error))
      << error;
  ASSERT_TRUE(RenderFigure(figure_of("part.csv", 0, -1), directory.string(), "whole", &error))
      << error;
  const std::string sliced = ReadBytes((directory / "sliced.png").string());
  EXPECT_FALSE(sliced.empty());
  EXPECT_TRUE(sliced == ReadBytes((directory / "whole.png").string()))
      << "a series of rows 3..6 drew differently from a table of those rows";
  const nlohmann::json spec = ToJson(figure_of("all.csv", 3, 4));
  EXPECT_EQ(spec["panels"][0]["series"][0]["rows"], nlohmann::json({3, 4}));
  EXPECT_EQ(spec["panels"][0]["vlines"], nlohmann::json({0.95}));
  EXPECT_EQ(spec["panels"][0]["vspans"], nlohmann::json({{0.85, 1.0}}));
  EXPECT_EQ(spec["panels"][0]["invert_y"], true);
  EXPECT_FALSE(ToJson(figure_of("part.csv", 0, -1))["panels"][0]["series"][0].contains("rows"));
  // Drawn again from the files by the script (its CSV reader slices the same rows).
  std::string script;
  ASSERT_TRUE(FindRuntimeFile("plot_figure.py", &script, &error)) << error;
  const std::string command = "/usr/bin/python3 " + script + " " +
                              (directory / "sliced.figure.json").string() + " " +
                              (directory / "replayed.png").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_TRUE(sliced == ReadBytes((directory / "replayed.png").string()))
      << "the figure drawn from its JSON and CSV differs from the program's";
  fs::remove_all(directory);
}

}  // namespace
}  // namespace dynid::data
