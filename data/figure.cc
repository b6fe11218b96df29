#include "dynid/data/figure.h"

#include <cstdlib>
#include <filesystem>

#include "dynid/data/output.h"
#include "dynid/data/runtime_files.h"

namespace dynid::data {

Series LineSeries(const std::string& csv, const std::string& x, const std::string& y,
                  const std::string& label, const std::string& error) {
  Series series;
  series.csv = csv;
  series.x = x;
  series.y = y;
  series.label = label;
  series.error = error;
  return series;
}

Series PointSeries(const std::string& csv, const std::string& x, const std::string& y,
                   const std::string& label) {
  Series series = LineSeries(csv, x, y, label);
  series.style = "points";
  return series;
}

nlohmann::json ToJson(const Figure& figure) {
  nlohmann::json json;
  json["title"] = figure.title;
  json["columns"] = figure.columns;
  json["width_in"] = figure.width_in;
  json["panel_height_in"] = figure.panel_height_in;
  json["panels"] = nlohmann::json::array();
  for (const Panel& panel : figure.panels) {
    nlohmann::json p;
    p["title"] = panel.title;
    p["xlabel"] = panel.xlabel;
    p["ylabel"] = panel.ylabel;
    p["hlines"] = panel.hlines;
    p["log_y"] = panel.log_y;
    p["log_x"] = panel.log_x;
    p["series"] = nlohmann::json::array();
    for (const Series& s : panel.series) {
      p["series"].push_back({{"csv", s.csv},
                             {"x", s.x},
                             {"y", s.y},
                             {"lower", s.lower},
                             {"upper", s.upper},
                             {"label", s.label},
                             {"style", s.style},
                             {"error", s.error},
                             {"error_scale", s.error_scale}});
    }
    json["panels"].push_back(p);
  }
  return json;
}

bool RenderFigure(const Figure& figure, const std::string& directory, const std::string& stem,
                  std::string* warning) {
  namespace fs = std::filesystem;
  const std::string spec = (fs::path(directory) / (stem + ".figure.json")).string();
  const std::string png = (fs::path(directory) / (stem + ".png")).string();
  std::string error;
  if (!WriteJson(spec, ToJson(figure), &error)) {
    *warning = "figure '" + stem + "' skipped: " + error;
    return false;
  }
  const char* override_python = std::getenv("DYNID_PYTHON");
  std::string python = override_python ? override_python : "";
  if (python.empty()) python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::string script;
  if (!FindRuntimeFile("plot_figure.py", &script, &error)) {
    *warning = "figure '" + stem + "' not rendered: " + error;
    return false;
  }
  const std::string command = "'" + python + "' '" + script + "' '" + spec + "' '" + png +
                              "' > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0 || !fs::exists(png)) {
    *warning = "figure '" + stem + "' not rendered (needs python3 with matplotlib; run `" +
               python + " " + script + " " + spec + "` to retry)";
    return false;
  }
  return true;
}

}  // namespace dynid::data
