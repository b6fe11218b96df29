#include "experiments/common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "experiments/common/cli.h"

DEFINE_bool(progress, false,
            "progress of long stages on stderr (default: on when stderr is a terminal)");

namespace dynid::cli {

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr double kShowAfterS = 1.0;        // stages shorter than this print nothing
constexpr double kTerminalPeriodS = 0.25;  // refresh of the in-place line
constexpr double kLinePeriodS = 5.0;       // one line every ... when stderr is not a terminal

// The open stages and the thread that draws the newest one.
class Display {
 public:
  static Display& Get() {
    static Display display;
    return display;
  }

  void Open(Stage* stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    stages_.push_back(stage);
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
    wake_.notify_all();
  }

  // Removes `stage`; `finished`: it ended normally (say so), else it was abandoned (a failure
  // follows: just end its line).
  void Close(Stage* stage, bool finished) {
    std::lock_guard<std::mutex> lock(mutex_);
    stages_.erase(std::remove(stages_.begin(), stages_.end(), stage), stages_.end());
    const bool was_shown = shown_.erase(stage) > 0;
    if (was_shown && finished) {
      char line[64];
      std::snprintf(line, sizeof(line), ": done in %.1f s", stage->ElapsedSeconds());
      Print(ProgramName() + ": " + stage->name() + line, /*final=*/true);
    } else if (line_open_) {
      std::fputc('\n', stderr);
      line_open_ = false;
    }
    last_line_ns_.erase(stage);
  }

  ~Display() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      wake_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  Display() : terminal_(::isatty(STDERR_FILENO) == 1) {}

  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::duration<double>(kTerminalPeriodS));
      if (stop_ || stages_.empty()) continue;
      Stage* stage = stages_.back();
      const double elapsed = stage->ElapsedSeconds();
      if (elapsed < kShowAfterS) continue;
      const int64_t now = NowNs();
      auto last = last_line_ns_.find(stage);
      if (!terminal_ && last != last_line_ns_.end() &&
          static_cast<double>(now - last->second) < kLinePeriodS * 1e9) {
        continue;
      }
      last_line_ns_[stage] = now;
      shown_.insert(stage);
      Print(Describe(*stage, elapsed), /*final=*/false);
    }
  }

  static std::string Describe(const Stage& stage, double elapsed) {
    char text[256];
    const int64_t done = stage.done();
    const int64_t total = stage.total();
    const std::string step = stage.step();
    if (total > 0) {
      std::snprintf(text, sizeof(text), ": %.0f %% (%lld of %lld%s%s), %.1f s",
                    100.0 * static_cast<double>(std::min(done, total)) / total,
                    static_cast<long long>(done), static_cast<long long>(total),
                    step.empty() ? "" : ": ", step.c_str(), elapsed);
    } else if (done > 0) {
      std::snprintf(text, sizeof(text), ": %lld, %.1f s", static_cast<long long>(done), elapsed);
    } else {
      std::snprintf(text, sizeof(text), ": %.1f s", elapsed);
    }
    return ProgramName() + ": " + stage.name() + text;
  }

  // A line on a terminal is redrawn in place ("\r", erase to the end of the line) and stays open
  // until a final line; elsewhere every line is a line.
  void Print(const std::string& text, bool final) {
    if (terminal_) {
      std::fprintf(stderr, "\r\033[K%s%s", text.c_str(), final ? "\n" : "");
      line_open_ = !final;
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
    std::fflush(stderr);
  }

  const bool terminal_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Stage*> stages_;
  std::set<Stage*> shown_;
  std::map<Stage*, int64_t> last_line_ns_;
  bool line_open_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

bool ProgressEnabled() {
  static const bool enabled = gflags::GetCommandLineFlagInfoOrDie("progress").is_default
                                  ? ::isatty(STDERR_FILENO) == 1
                                  : FLAGS_progress;
  return enabled;
}

Stage::Stage(std::string name, int64_t total) : name_(std::move(name)), total_(total) {
  start_ns_ = NowNs();
  if (ProgressEnabled()) {
    open_ = true;
    Display::Get().Open(this);
  }
}

Stage::~Stage() {
  if (open_) Display::Get().Close(this, /*finished=*/false);
  open_ = false;
}

void Stage::End() {
  if (open_) Display::Get().Close(this, /*finished=*/true);
  open_ = false;
}

double Stage::ElapsedSeconds() const { return static_cast<double>(NowNs() - start_ns_) * 1e-9; }

void Stage::Next(const std::string& step) {
  std::lock_guard<std::mutex> lock(step_mutex_);
  if (stepped_) Add();
  stepped_ = true;
  step_ = step;
}

std::string Stage::step() const {
  std::lock_guard<std::mutex> lock(step_mutex_);
  return step_;
}

solvers::ProgressCallback Stage::Callback() {
  return [this](const solvers::IterationProgress& progress) {
    if (progress.total > 0) SetTotal(progress.total);
    Set(progress.iteration);
  };
}

}  // namespace dynid::cli
