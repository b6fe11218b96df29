// Figures: a small JSON description rendered to PNG by data/plot_figure.py (matplotlib).
//
// Every study writes its figures this way, from CSV files it has already written, so the
// numbers in a figure are exactly those in the CSV beside it. A figure that cannot be rendered
// (python3 or matplotlib missing, the script failing) is an error: a program asked for figures
// fails rather than committing a result set without them (programs offer --figures=false).
// When the renderer is ended by SIGINT/SIGTERM (Ctrl-C reaches the whole process group, but
// std::system ignores SIGINT in the caller while it waits), the same signal is raised in the
// caller so that the interruption ends the program too.
#ifndef DYNID_DATA_FIGURE_H_
#define DYNID_DATA_FIGURE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
};

struct Figure {
  std::string title;
  std::vector<Panel> panels;  // stacked vertically
  int columns = 1;            // panel grid columns
  double width_in = 8.0;
  double panel_height_in = 2.6;
};

nlohmann::json ToJson(const Figure& figure);

// Writes `<stem>.figure.json` into `directory` and renders `<stem>.png` there.
// Returns true when the PNG was written; false (with `error` set) otherwise.
bool RenderFigure(const Figure& figure, const std::string& directory, const std::string& stem,
                  std::string* error);

// Runs the runtime script `script_name` (e.g. "plot_heatmap.py") with python3 and `arguments`
// (each quoted), output discarded. True when it exited with status 0; a signal that ended it is
// raised again in the caller (see above).
bool RunPythonScript(const std::string& script_name, const std::vector<std::string>& arguments,
                     std::string* error);

}  // namespace dynid::data

#endif  // DYNID_DATA_FIGURE_H_
