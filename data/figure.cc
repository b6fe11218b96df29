#include "dynid/data/figure.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>

#include "dynid/data/output.h"
#include "dynid/data/runtime_files.h"

extern char** environ;

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
    if (panel.symlog_threshold > 0.0) p["symlog_threshold"] = panel.symlog_threshold;
    if (!panel.vlines.empty()) p["vlines"] = panel.vlines;
    if (!panel.vspans.empty()) {
      p["vspans"] = nlohmann::json::array();
      for (const auto& [lo, hi] : panel.vspans) p["vspans"].push_back({lo, hi});
    }
    if (panel.invert_y) p["invert_y"] = true;
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
      if (s.first_row != 0 || s.num_rows >= 0) {
        p["series"].back()["rows"] = {s.first_row, s.num_rows};
      }
    }
    json["panels"].push_back(p);
  }
  return json;
}

std::vector<Eigen::Index> MinMaxEnvelope(StridedColumn y, Eigen::Index n, int max_points,
                                         const std::vector<EnvelopeBand>& bands,
                                         std::vector<std::vector<double>>* band_lo,
                                         std::vector<std::vector<double>>* band_hi) {
  CHECK_GE(max_points, 2);
  band_lo->assign(bands.size(), {});
  band_hi->assign(bands.size(), {});
  auto bounds = [](const EnvelopeBand& band, Eigen::Index k, double* lo, double* hi) {
    const double spread = band.error.data ? band.scale * band.error[k] : 0.0;
    *lo = band.lo[k] - spread;
    *hi = band.hi[k] + spread;
  };
  std::vector<Eigen::Index> kept;
  if (n <= max_points) {
    kept.resize(static_cast<size_t>(n));
    for (Eigen::Index k = 0; k < n; ++k) kept[static_cast<size_t>(k)] = k;
    for (size_t b = 0; b < bands.size(); ++b) {
      (*band_lo)[b].resize(static_cast<size_t>(n));
      (*band_hi)[b].resize(static_cast<size_t>(n));
      for (Eigen::Index k = 0; k < n; ++k) {
        bounds(bands[b], k, &(*band_lo)[b][static_cast<size_t>(k)],
               &(*band_hi)[b][static_cast<size_t>(k)]);
      }
    }
    return kept;
  }
  const Eigen::Index buckets = max_points / 2;
  kept.reserve(static_cast<size_t>(2 * buckets));
  for (Eigen::Index bucket = 0; bucket < buckets; ++bucket) {
    const Eigen::Index begin = bucket * n / buckets;
    const Eigen::Index end = (bucket + 1) * n / buckets;
    Eigen::Index low = -1;
    Eigen::Index high = -1;
    for (Eigen::Index k = begin; k < end; ++k) {
      const double value = y[k];
      if (std::isnan(value)) continue;
      if (low < 0 || value < y[low]) low = k;
      if (high < 0 || value > y[high]) high = k;
    }
    size_t picks = 1;
    if (low < 0) {
      kept.push_back(begin);
    } else if (low == high) {
      kept.push_back(low);
    } else {
      kept.push_back(std::min(low, high));
      kept.push_back(std::max(low, high));
      picks = 2;
    }
    for (size_t b = 0; b < bands.size(); ++b) {
      double lo = std::numeric_limits<double>::quiet_NaN();
      double hi = std::numeric_limits<double>::quiet_NaN();
      for (Eigen::Index k = begin; k < end; ++k) {
        double sample_lo = 0.0;
        double sample_hi = 0.0;
        bounds(bands[b], k, &sample_lo, &sample_hi);
        if (!(sample_lo >= lo)) lo = std::isnan(sample_lo) ? lo : sample_lo;
        if (!(sample_hi <= hi)) hi = std::isnan(sample_hi) ? hi : sample_hi;
      }
      (*band_lo)[b].insert((*band_lo)[b].end(), picks, lo);
      (*band_hi)[b].insert((*band_hi)[b].end(), picks, hi);
    }
  }
  return kept;
}

namespace {

// ---------------------------------------------------------------------------------------------
// The numbers of a CSV file a figure names, read leniently (unlike csv.h's strict reader): NaN
// and Inf are numbers (tables of results may hold them), and a column with text cells (labels)
// is kept as text.
struct LoadedColumn {
  std::vector<double> numbers;
  std::vector<std::string> text;  // all cells, when the column is not numeric
  bool is_text = false;
};

struct LoadedTable {
  std::vector<std::string> header;
  std::vector<LoadedColumn> columns;
  Eigen::Index rows = 0;
};

std::string_view TrimCell(std::string_view s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && (s[begin] == ' ' || s[begin] == '\t')) ++begin;
  while (end > begin && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r')) --end;
  return s.substr(begin, end - begin);
}

bool LoadTable(const std::string& path, LoadedTable* table, std::string* error) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    *error = path + ": cannot open file";
    return false;
  }
  std::string text(static_cast<size_t>(std::max<std::streamoff>(0, file.tellg())), '\0');
  file.seekg(0);
  if (!file.read(text.data(), static_cast<std::streamsize>(text.size()))) {
    *error = path + ": read error";
    return false;
  }
  size_t position = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) position = 3;
  bool have_header = false;
  std::vector<std::string_view> cells;
  auto split = [&cells](std::string_view line) {
    cells.clear();
    size_t start = 0;
    for (;;) {
      const size_t comma = line.find(',', start);
      cells.push_back(TrimCell(line.substr(start, comma == std::string_view::npos
                                                      ? std::string_view::npos
                                                      : comma - start)));
      if (comma == std::string_view::npos) return;
      start = comma + 1;
    }
  };
  while (position < text.size()) {
    size_t newline = text.find('\n', position);
    if (newline == std::string::npos) newline = text.size();
    const std::string_view line =
        TrimCell(std::string_view(text).substr(position, newline - position));
    position = newline + 1;
    if (line.empty()) continue;
    if (!have_header) {
      if (line.front() == '#') continue;
      split(line);
      for (std::string_view cell : cells) {
        if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
          cell = cell.substr(1, cell.size() - 2);
        }
        table->header.emplace_back(cell);
      }
      table->columns.resize(table->header.size());
      have_header = true;
      continue;
    }
    split(line);
    for (size_t c = 0; c < table->columns.size(); ++c) {
      LoadedColumn& column = table->columns[c];
      const std::string_view cell = c < cells.size() ? cells[c] : std::string_view();
      double value = std::numeric_limits<double>::quiet_NaN();
      const char* begin = cell.data();
      const char* end = cell.data() + cell.size();
      if (begin != end && *begin == '+') ++begin;
      const auto parsed = std::from_chars(begin, end, value);
      const bool numeric = !cell.empty() && parsed.ec == std::errc() && parsed.ptr == end;
      if (!numeric && !cell.empty() && !column.is_text) {
        // The first text cell: the column is text, its earlier numbers too.
        column.is_text = true;
        for (const double number : column.numbers) {
          char buffer[32];
          column.text.emplace_back(buffer, FormatNumber(number, buffer));
        }
        column.numbers.clear();
      }
      if (column.is_text) {
        column.text.emplace_back(cell);
      } else {
        column.numbers.push_back(numeric ? value : std::numeric_limits<double>::quiet_NaN());
      }
    }
    ++table->rows;
  }
  if (!have_header) {
    *error = path + ": no header row";
    return false;
  }
  return true;
}

// A column resolved for drawing: numbers (strided, from memory or a loaded file) or text.
struct ResolvedColumn {
  StridedColumn numbers;
  const std::vector<std::string>* text = nullptr;
  Eigen::Index first_text = 0;  // the column's first row in `text`
  Eigen::Index rows = 0;
};

// Finds the columns of the series of one figure: in `tables`, else in the CSV files of
// `directory` (each read once per figure).
class ColumnFinder {
 public:
  ColumnFinder(const std::string& directory, const FigureTables* tables)
      : directory_(directory), tables_(tables) {}

  bool Find(const std::string& csv, const std::string& name, ResolvedColumn* column,
            std::string* error) {
    if (tables_ != nullptr) {
      const auto table = tables_->find(csv);
      if (table != tables_->end()) {
        for (const CsvColumn& candidate : table->second.columns) {
          if (candidate.name != name) continue;
          column->numbers = {candidate.data, candidate.stride};
          column->text = nullptr;
          column->rows = table->second.rows;
          return true;
        }
        *error = "no column '" + name + "' in " + csv;
        return false;
      }
    }
    auto& loaded = loaded_[csv];
    if (!loaded) {
      loaded = std::make_unique<LoadedTable>();
      const std::string path = (std::filesystem::path(directory_) / csv).string();
      if (!LoadTable(path, loaded.get(), error)) return false;
    }
    for (size_t c = 0; c < loaded->header.size(); ++c) {
      if (loaded->header[c] != name) continue;
      const LoadedColumn& found = loaded->columns[c];
      column->numbers = {found.is_text ? nullptr : found.numbers.data(), 1};
      column->text = found.is_text ? &found.text : nullptr;
      column->rows = loaded->rows;
      return true;
    }
    *error = "no column '" + name + "' in " + csv;
    return false;
  }

 private:
  std::string directory_;
  const FigureTables* tables_;
  std::map<std::string, std::unique_ptr<LoadedTable>> loaded_;
};

// The arrays of one render request: JSON descriptions and the binary payload.
class RequestArrays {
 public:
  int AddNumbers(const std::vector<double>& values) {
    descriptions_.push_back({{"count", values.size()}});
    const char* bytes = reinterpret_cast<const char*>(values.data());
    payload_.append(bytes, values.size() * sizeof(double));
    return static_cast<int>(descriptions_.size()) - 1;
  }
  int AddText(std::vector<std::string> values) {
    descriptions_.push_back({{"text", std::move(values)}});
    return static_cast<int>(descriptions_.size()) - 1;
  }
  // The kept samples of a column.
  int AddKept(const ResolvedColumn& column, const std::vector<Eigen::Index>& kept) {
    if (column.text != nullptr) {
      std::vector<std::string> text;
      text.reserve(kept.size());
      for (const Eigen::Index k : kept) {
        text.push_back((*column.text)[static_cast<size_t>(column.first_text + k)]);
      }
      return AddText(std::move(text));
    }
    std::vector<double> values(kept.size());
    for (size_t i = 0; i < kept.size(); ++i) values[i] = column.numbers[kept[i]];
    return AddNumbers(values);
  }
  // The first n samples of a column.
  int AddAll(const ResolvedColumn& column, Eigen::Index n) {
    if (column.text != nullptr) {
      const auto begin = column.text->begin() + column.first_text;
      return AddText(std::vector<std::string>(begin, begin + n));
    }
    std::vector<double> values(static_cast<size_t>(n));
    for (Eigen::Index k = 0; k < n; ++k) values[static_cast<size_t>(k)] = column.numbers[k];
    return AddNumbers(values);
  }
  nlohmann::json& descriptions() { return descriptions_; }
  const std::string& payload() const { return payload_; }

 private:
  nlohmann::json descriptions_ = nlohmann::json::array();
  std::string payload_;
};

// Fills "data" of every series of `spec` (the figure's JSON) and the arrays it refers to.
bool BuildRequestData(const Figure& figure, ColumnFinder* finder, nlohmann::json* spec,
                      RequestArrays* arrays, std::string* error) {
  for (size_t p = 0; p < figure.panels.size(); ++p) {
    for (size_t s = 0; s < figure.panels[p].series.size(); ++s) {
      const Series& series = figure.panels[p].series[s];
      auto find = [&](const std::string& name, ResolvedColumn* column) {
        return finder->Find(series.csv, name, column, error);
      };
      ResolvedColumn x;
      ResolvedColumn y;
      if (!find(series.x, &x) || !find(series.y, &y)) return false;
      // A series of some rows: every column starts at first_row.
      const Eigen::Index first = std::max<Eigen::Index>(0, series.first_row);
      auto slice = [first](ResolvedColumn* column) {
        if (first == 0) return;
        column->rows = std::max<Eigen::Index>(0, column->rows - first);
        if (column->text != nullptr) {
          column->first_text = first;
        } else if (column->numbers.data != nullptr) {
          column->numbers.data += first * column->numbers.stride;
        }
      };
      slice(&x);
      slice(&y);
      Eigen::Index n = std::min(x.rows, y.rows);
      if (series.num_rows >= 0) n = std::min(n, series.num_rows);
      nlohmann::json data;
      const bool has_bounds = !series.lower.empty() && !series.upper.empty();
      ResolvedColumn lower;
      ResolvedColumn upper;
      if (has_bounds && (!find(series.lower, &lower) || !find(series.upper, &upper))) return false;
      slice(&lower);
      slice(&upper);
      if (series.style == "errorbar") {
        // Error bars: few points; every sample is drawn.
        data["x"] = arrays->AddAll(x, n);
        data["y"] = arrays->AddAll(y, n);
        if (has_bounds) data["yerr"] = {arrays->AddAll(lower, n), arrays->AddAll(upper, n)};
      } else if (y.text != nullptr || (x.text != nullptr && n > kMaxFigurePoints)) {
        // Text values are drawn as they are (matplotlib's categories).
        data["x"] = arrays->AddAll(x, n);
        data["y"] = arrays->AddAll(y, n);
      } else {
        std::vector<EnvelopeBand> bands;
        std::vector<double> alphas;
        if (has_bounds && lower.text == nullptr && upper.text == nullptr) {
          bands.push_back({lower.numbers, upper.numbers, {}, 0.0});
          alphas.push_back(0.25);
        }
        ResolvedColumn spread;
        if (!series.error.empty()) {
          if (!find(series.error, &spread)) return false;
          slice(&spread);
          if (spread.text == nullptr) {
            bands.push_back({y.numbers, y.numbers, spread.numbers, series.error_scale});
            alphas.push_back(0.3);
          }
        }
        std::vector<std::vector<double>> band_lo;
        std::vector<std::vector<double>> band_hi;
        const std::vector<Eigen::Index> kept =
            MinMaxEnvelope(y.numbers, n, kMaxFigurePoints, bands, &band_lo, &band_hi);
        data["x"] = arrays->AddKept(x, kept);
        data["y"] = arrays->AddKept(y, kept);
        data["bands"] = nlohmann::json::array();
        for (size_t b = 0; b < bands.size(); ++b) {
          data["bands"].push_back({{"lo", arrays->AddNumbers(band_lo[b])},
                                   {"hi", arrays->AddNumbers(band_hi[b])},
                                   {"alpha", alphas[b]}});
        }
      }
      (*spec)["panels"][p]["series"][s]["data"] = data;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The renderer process: python3 plot_figure.py --serve 3, its requests and answers on a socket
// (fd 3 on its side). One per process, started at the first request, ended at exit.
class Renderer {
 public:
  static Renderer& Get() {
    static Renderer* renderer = new Renderer();  // ended by the atexit hook below
    return *renderer;
  }

  void Start() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string ignored;
    EnsureStarted(&ignored);
  }

  // Sends one request (a JSON line and a payload) and waits for its answer. False with `error`
  // ("`<command>` failed (<what>; ...)") when the renderer could not run or reported an error.
  bool Request(const nlohmann::json& header, const std::string& payload, std::string* error) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string why;
    if (!EnsureStarted(&why)) {
      *error = Failure(why);
      return false;
    }
    const std::string line = header.dump() + "\n";
    std::string answer;
    if (!Send(line) || !Send(payload) || !Receive(&answer)) {
      *error = Failure(Ended());
      return false;
    }
    if (answer == "ok") return true;
    *error = Failure(answer.rfind("error ", 0) == 0 ? answer.substr(6) : answer);
    return false;
  }

  // At exit: every request has been answered; end the renderer (it may still be importing
  // matplotlib when the program ends early) and wait for it.
  void Stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }

 private:
  Renderer() { std::atexit([] { Get().Stop(); }); }

  std::string Failure(const std::string& what) const {
    return "`" + command_ + "` failed (" + what +
           "; figures need python3 with matplotlib, or run with --figures=false)";
  }

  bool EnsureStarted(std::string* why) {
    if (fd_ >= 0) return true;
    namespace fs = std::filesystem;
    const char* override_python = std::getenv("DYNID_PYTHON");
    std::string python = override_python ? override_python : "";
    if (python.empty()) python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    std::string script;
    command_ = python + " plot_figure.py --serve";
    if (!FindRuntimeFile("plot_figure.py", &script, why)) return false;
    command_ = python + " " + script + " --serve";
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
      *why = std::string("cannot create a socket: ") + std::strerror(errno);
      return false;
    }
    // The child's end becomes its fd 3 (dup2 clears close-on-exec; it must not be 3 already).
    if (sockets[1] == 3) {
      const int moved = ::fcntl(sockets[1], F_DUPFD_CLOEXEC, 4);
      ::close(sockets[1]);
      sockets[1] = moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sockets[1], 3);
    for (int fd = 0; fd <= 2; ++fd) {
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY,
                                       0);
    }
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
      sigaddset(&defaults, signal_number);
    }
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    std::vector<std::string> arguments = {python, script, "--serve", "3"};
    std::vector<char*> argv;
    for (std::string& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int spawned =
        python.find('/') == std::string::npos
            ? ::posix_spawnp(&pid, python.c_str(), &actions, &attributes, argv.data(), environ)
            : ::posix_spawn(&pid, python.c_str(), &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(sockets[1]);
    if (spawned != 0) {
      ::close(sockets[0]);
      *why = spawned == ENOENT ? std::string("python3 not found")
                               : std::string("cannot start it: ") + std::strerror(spawned);
      return false;
    }
    pid_ = pid;
    fd_ = sockets[0];
    return true;
  }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  bool Receive(std::string* line) {
    line->clear();
    for (;;) {
      char c = 0;
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      if (c == '\n') return true;
      line->push_back(c);
    }
  }

  // The renderer has gone: why (a signal that ended it is raised here again).
  std::string Ended() {
    ::close(fd_);
    fd_ = -1;
    int status = 0;
    pid_t waited = -1;
    do {
      waited = ::waitpid(pid_, &status, 0);
    } while (waited < 0 && errno == EINTR);
    pid_ = -1;
    if (waited < 0) return "the renderer ended";
    if (WIFSIGNALED(status)) {
      const int signal_number = WTERMSIG(status);
      if (signal_number == SIGINT || signal_number == SIGTERM || signal_number == SIGHUP) {
        std::raise(signal_number);
      }
      return "signal " + std::to_string(signal_number);
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 127
               ? std::string("python3 not found")
               : "exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }

  std::mutex mutex_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string command_ = "python3 plot_figure.py --serve";
};

}  // namespace

void StartFigureRenderer() { Renderer::Get().Start(); }

bool RunPythonScript(const std::string& script_name, const std::vector<std::string>& arguments,
                     std::string* error) {
  std::string path;
  if (!FindRuntimeFile(script_name, &path, error)) return false;
  const nlohmann::json header = {
      {"kind", "script"}, {"script", script_name}, {"args", arguments}, {"bytes", 0}};
  std::string why;
  if (Renderer::Get().Request(header, "", &why)) return true;
  *error = script_name + ": " + why;
  return false;
}

bool RenderFigure(const Figure& figure, const std::string& directory, const std::string& stem,
                  std::string* error, const FigureTables* tables) {
  namespace fs = std::filesystem;
  const std::string spec_path = (fs::path(directory) / (stem + ".figure.json")).string();
  const std::string png = (fs::path(directory) / (stem + ".png")).string();
  std::string why;
  nlohmann::json spec = ToJson(figure);
  if (!WriteJson(spec_path, spec, &why)) {
    *error = "figure '" + stem + "': " + why;
    return false;
  }
  ColumnFinder finder(directory, tables);
  RequestArrays arrays;
  if (!BuildRequestData(figure, &finder, &spec, &arrays, &why)) {
    *error = "figure '" + stem + "' not rendered: " + why;
    return false;
  }
  nlohmann::json header = {{"kind", "figure"},
                           {"out", fs::absolute(png).string()},
                           {"spec", std::move(spec)},
                           {"arrays", std::move(arrays.descriptions())},
                           {"bytes", arrays.payload().size()}};
  if (!Renderer::Get().Request(header, arrays.payload(), &why)) {
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
