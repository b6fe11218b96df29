#include "dynid/data/figure.h"

#include <sys/wait.h>

#include <csignal>
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
    // Only when set, so that the specs of figures without it stay as they were.
    if (panel.x_tick_rotation_deg != 0.0) p["x_tick_rotation_deg"] = panel.x_tick_rotation_deg;
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

namespace {

// Single-quotes `text` for /bin/sh.
std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

bool RunPythonScript(const std::string& script_name, const std::vector<std::string>& arguments,
                     std::string* error) {
  namespace fs = std::filesystem;
  const char* override_python = std::getenv("DYNID_PYTHON");
  std::string python = override_python ? override_python : "";
  if (python.empty()) python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::string script;
  if (!FindRuntimeFile(script_name, &script, error)) return false;
  std::string command = ShellQuote(python) + " " + ShellQuote(script);
  std::string readable = python + " " + script;
  for (const std::string& argument : arguments) {
    command += " " + ShellQuote(argument);
    readable += " " + argument;
  }
  const int status = std::system((command + " > /dev/null 2>&1").c_str());
  // The shell reports a child ended by a signal as 128 + signal; the shell itself may be ended
  // by it as well. Either way the interruption belongs to this process too.
  int signal_number = 0;
  if (status != -1 && WIFSIGNALED(status)) signal_number = WTERMSIG(status);
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) > 128) {
    const int reported = WEXITSTATUS(status) - 128;
    if (reported == SIGINT || reported == SIGTERM || reported == SIGHUP) signal_number = reported;
  }
  if (signal_number == SIGINT || signal_number == SIGTERM || signal_number == SIGHUP) {
    std::raise(signal_number);
  }
  if (status == 0) return true;
  *error = "`" + readable + "` failed (" +
           (status == -1    ? std::string("cannot start a shell")
            : signal_number ? "signal " + std::to_string(signal_number)
            : WIFEXITED(status) && WEXITSTATUS(status) == 127
                ? std::string("python3 not found")
                : "exit status " + std::to_string(WEXITSTATUS(status))) +
           "; figures need python3 with matplotlib, or run with --figures=false)";
  return false;
}

bool RenderFigure(const Figure& figure, const std::string& directory, const std::string& stem,
                  std::string* error) {
  namespace fs = std::filesystem;
  const std::string spec = (fs::path(directory) / (stem + ".figure.json")).string();
  const std::string png = (fs::path(directory) / (stem + ".png")).string();
  std::string why;
  if (!WriteJson(spec, ToJson(figure), &why)) {
    *error = "figure '" + stem + "': " + why;
    return false;
  }
  if (!RunPythonScript("plot_figure.py", {spec, png}, &why)) {
    *error = "figure '" + stem + "' not rendered: " + why;
    return false;
  }
  if (!fs::exists(png)) {
    *error = "figure '" + stem + "' not rendered: " + png + " missing after plot_figure.py";
    return false;
  }
  return true;
}

}  // namespace dynid::data
