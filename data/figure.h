// Figures: a small JSON description rendered to PNG by data/plot_figure.py (matplotlib).
//
// Every study writes its figures this way, from CSV files it has already written, so the
// numbers in a figure are exactly those in the CSV beside it (a program may hand the same
// numbers from memory instead of having the file read again, see FigureTables). One renderer
// process (python3 plot_figure.py --serve) draws every figure of a run: it is started at the
// first figure (or earlier by StartFigureRenderer) and fed compact binary data; a series of more
// than kMaxFigurePoints samples is reduced to its min/max envelope (kMaxFigurePoints / 2 buckets
// of consecutive samples, each keeping its smallest and largest value), so spikes of a long
// record stay visible. `<stem>.figure.json` beside the PNG still names the CSV columns:
// `python3 plot_figure.py <stem>.figure.json` draws the figure again from the files.
//
// A figure that cannot be rendered (python3 or matplotlib missing, the script failing) is an
// error: a program asked for figures fails rather than committing a result set without them
// (programs offer --figures=false). When the renderer is ended by SIGINT/SIGTERM/SIGHUP (Ctrl-C
// reaches the whole process group), the same signal is raised in the caller so that the
// interruption ends the program too.
#ifndef DYNID_DATA_FIGURE_H_
#define DYNID_DATA_FIGURE_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"

namespace dynid::data {

struct Series {
  std::string csv;    // file name relative to the spec's folder
  std::string x;      // column for the abscissa
  std::string y;      // column for the ordinate
  std::string lower;  // optional band: lower-bound column
  std::string upper;  // optional band: upper-bound column
  std::string label;
  std::string style = "line";  // "line", "points", "errorbar" (lower/upper = ±error columns)
  std::string error;           // optional band y ± error_scale * error (e.g. a std column)
  double error_scale = 2.0;
  // Rows first_row .. first_row + num_rows − 1 of the table only (num_rows < 0: all rows from
  // first_row), e.g. one group of a long table in a panel of its own.
  Eigen::Index first_row = 0;
  Eigen::Index num_rows = -1;
};

// Convenience constructors: a line (optionally with a ±2·error band) and a point cloud.
Series LineSeries(const std::string& csv, const std::string& x, const std::string& y,
                  const std::string& label = "", const std::string& error = "");
Series PointSeries(const std::string& csv, const std::string& x, const std::string& y,
                   const std::string& label = "");

struct Panel {
  std::string title;
  std::string xlabel;
  std::string ylabel;
  std::vector<Series> series;
  std::vector<double> hlines;  // horizontal reference lines (e.g. ±1.96/sqrt(N))
  bool log_y = false;
  bool log_x = false;
  double x_tick_rotation_deg = 0.0;  // rotates the abscissa's tick labels (long category names)
  // > 0: symmetric-log ordinate, linear within ±threshold (values of many magnitudes and both
  // signs, e.g. a robot's parameters side by side).
  double symlog_threshold = 0.0;
  std::vector<double> vlines = {};  // vertical reference lines
  // Shaded ranges of the abscissa [lo, hi] (e.g. an acceptance band).
  std::vector<std::pair<double, double>> vspans = {};
  // Categories (text values) on the ordinate listed top-down in the order of the rows.
  bool invert_y = false;
};

struct Figure {
  std::string title;
  std::vector<Panel> panels;  // stacked vertically
  int columns = 1;            // panel grid columns
  double width_in = 8.0;
  double panel_height_in = 2.6;
};

nlohmann::json ToJson(const Figure& figure);

// Longest series sent to the renderer; longer ones are reduced to their min/max envelope.
inline constexpr int kMaxFigurePoints = 10000;

// Tables a figure's series refer to, held in memory by the program: CSV file name (as in
// Series::csv) → its columns, the same numbers as the file (which is then not read again).
struct FigureTable {
  std::vector<CsvColumn> columns;
  Eigen::Index rows = 0;
};
using FigureTables = std::map<std::string, FigureTable>;

// Writes `<stem>.figure.json` into `directory` and renders `<stem>.png` there. The CSV files the
// series name are read from `directory`, unless `tables` holds them. Returns true when the PNG
// was written; false (with `error` set) otherwise.
bool RenderFigure(const Figure& figure, const std::string& directory, const std::string& stem,
                  std::string* error, const FigureTables* tables = nullptr);

// Runs main() of the runtime script `script_name` (e.g. "plot_heatmap.py", beside
// plot_figure.py) with `arguments` in the renderer process. True when it returned 0 (or None);
// a signal that ended the renderer is raised again in the caller (see above).
bool RunPythonScript(const std::string& script_name, const std::vector<std::string>& arguments,
                     std::string* error);

// Starts the renderer process now, so that it imports matplotlib (about 0.5 s) while the
// program computes. Optional (the first figure starts it otherwise); errors show at that figure.
void StartFigureRenderer();

// A column of values: value k is data[k * stride].
struct StridedColumn {
  const double* data = nullptr;
  Eigen::Index stride = 1;
  double operator[](Eigen::Index k) const { return data[k * stride]; }
};

// A band about a series: lower bound lo[k] − scale·error[k], upper bound hi[k] + scale·error[k]
// (without `error`, just lo[k] and hi[k]).
struct EnvelopeBand {
  StridedColumn lo;
  StridedColumn hi;
  StridedColumn error;
  double scale = 0.0;
};

// The samples of a series y[0..n) to draw: with n <= max_points all of them; otherwise its
// min/max envelope, max_points / 2 buckets of consecutive samples each keeping the index of its
// smallest and of its largest y (in increasing order; one index for a bucket of NaNs). For each
// band b, (*band_lo)[b][i] and (*band_hi)[b][i] are the smallest lower and the largest upper
// bound over the bucket of the i-th kept index (over that sample alone without reduction).
std::vector<Eigen::Index> MinMaxEnvelope(StridedColumn y, Eigen::Index n, int max_points,
                                         const std::vector<EnvelopeBand>& bands,
                                         std::vector<std::vector<double>>* band_lo,
                                         std::vector<std::vector<double>>* band_hi);

}  // namespace dynid::data

#endif  // DYNID_DATA_FIGURE_H_
