// bench_csv — speed of the CSV reader and writer (data/csv.h), one core: MB of text per second
// each way, for the two kinds of table dynid meets: a program's outputs (full-precision doubles,
// written in the shortest round-trip form) and a measured record (encoder positions with six
// decimals). The text of each table is also written with the former "%.17g" (snprintf) and read
// back, for comparison. Every read is checked to give back exactly the written doubles.
//
//   bench_csv [--rows=1000000] [--columns=7] [--dir=/tmp] [--repeats=3] [--cpu_time]
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "experiments/benchmarks/bench_timing.h"
#include "experiments/common/cli.h"

DEFINE_int64(rows, 1000000, "rows of each table");
DEFINE_int32(columns, 7, "columns of each table (the first is time)");
DEFINE_string(dir, "/tmp", "folder for the temporary CSV file (removed at the end)");
DEFINE_int32(repeats, 3, "repetitions per measurement (the best time is reported)");
DEFINE_bool(cpu_time, false,
            "time by the thread's CPU time instead of wall time (steadier on a loaded machine; "
            "a write's wait for the disk is then not counted)");

namespace {

namespace data = dynid::data;

// The best of --repeats runs, in wall time, or in the thread's CPU time with --cpu_time.
double BestSeconds(const std::function<void()>& work, int repeats) {
  return dynid::benchmarks::BestSeconds(work, repeats,
                                        FLAGS_cpu_time ? dynid::benchmarks::BenchClock::kThreadCpu
                                                       : dynid::benchmarks::BenchClock::kWall);
}



// A program's output: time at 5 kHz, then smooth signals plus noise (every digit significant).
Eigen::MatrixXd OutputTable(Eigen::Index rows, int columns) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0.0, 1e-4);
  Eigen::MatrixXd values(rows, columns);
  for (Eigen::Index k = 0; k < rows; ++k) {
    values(k, 0) = 2e-4 * static_cast<double>(k);
    for (int c = 1; c < columns; ++c) {
      values(k, c) = std::pow(10.0, c % 4 - 2) * std::sin(1e-3 * c * static_cast<double>(k)) +
                     noise(rng);
    }
  }
  return values;
}

// A measured record: time with 4 decimals, positions quantised to 1e-6 (six decimals).
Eigen::MatrixXd RecordTable(Eigen::Index rows, int columns) {
  Eigen::MatrixXd values(rows, columns);
  for (Eigen::Index k = 0; k < rows; ++k) {
    values(k, 0) = std::round(2.0 * static_cast<double>(k)) * 1e-4;
    for (int c = 1; c < columns; ++c) {
      values(k, c) = std::round(1e6 * std::sin(1e-3 * c * static_cast<double>(k))) * 1e-6;
    }
  }
  return values;
}

std::string FormatPrintf(const std::vector<std::string>& header, const Eigen::MatrixXd& values,
                         const char* format) {
  std::string text;
  for (size_t c = 0; c < header.size(); ++c) text += (c ? "," : "") + header[c];
  text += '\n';
  char buffer[40];
  for (Eigen::Index r = 0; r < values.rows(); ++r) {
    for (Eigen::Index c = 0; c < values.cols(); ++c) {
      if (c) text += ',';
      text.append(buffer, std::snprintf(buffer, sizeof(buffer), format, values(r, c)));
    }
    text += '\n';
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv, "speed of the CSV reader and writer, one core");
  if (FLAGS_rows < 1 || FLAGS_rows > 100000000) {
    return dynid::cli::Fail(2, "--rows must be in [1, 1e8]");
  }
  if (FLAGS_columns < 1 || FLAGS_columns > 1000) {
    return dynid::cli::Fail(2, "--columns must be in [1, 1000]");
  }
  if (FLAGS_repeats < 1) return dynid::cli::Fail(2, "--repeats must be >= 1");
  std::vector<std::string> header = {"t"};
  for (int c = 1; c < FLAGS_columns; ++c) header.push_back("x" + std::to_string(c));
  const std::string path =
      (std::filesystem::path(FLAGS_dir) / ("bench_csv." + std::to_string(::getpid()) + ".csv"))
          .string();
  std::printf("bench_csv: %lld rows x %d columns, one core, best of %d %s (MB = 1e6 bytes)\n",
              static_cast<long long>(FLAGS_rows), FLAGS_columns, FLAGS_repeats,
              FLAGS_cpu_time ? "in CPU time" : "in wall time");
  std::printf("%-34s %10s %12s %12s %12s %12s\n", "table / text", "MB", "format MB/s",
              "write MB/s", "parse MB/s", "read MB/s");
  struct Case {
    const char* name;
    Eigen::MatrixXd values;
  };
  std::vector<Case> cases;
  cases.push_back({"program output (17 digits)", OutputTable(FLAGS_rows, FLAGS_columns)});
  cases.push_back({"measured record (6 decimals)", RecordTable(FLAGS_rows, FLAGS_columns)});
  std::string error;
  for (const Case& c : cases) {
    // dynid's writer and reader.
    std::string text;
    const double format = BestSeconds([&] { text = data::FormatCsv(header, c.values); },
                                      FLAGS_repeats);
    const double write = BestSeconds(
        [&] { CHECK(data::WriteCsv(path, header, c.values, &error)) << error; }, FLAGS_repeats);
    data::CsvTable table;
    const double parse = BestSeconds(
        [&] { CHECK(data::ParseCsv(text, "bench.csv", &table, &error)) << error; },
        FLAGS_repeats);
    CHECK(table.values == c.values) << "parsed values differ from the written ones";
    const double read = BestSeconds([&] { CHECK(data::ReadCsv(path, &table, &error)) << error; },
                                    FLAGS_repeats);
    CHECK(table.values == c.values) << "read values differ from the written ones";
    const double mb = static_cast<double>(text.size()) / 1e6;
    std::printf("%-34s %10.1f %12.0f %12.0f %12.0f %12.0f\n",
                (std::string(c.name) + ", shortest").c_str(), mb, mb / format, mb / write,
                mb / parse, mb / read);
    // The former text: "%.17g" by snprintf, parsed by the same reader.
    const double old_format =
        BestSeconds([&] { text = FormatPrintf(header, c.values, "%.17g"); }, FLAGS_repeats);
    const double old_parse = BestSeconds(
        [&] { CHECK(data::ParseCsv(text, "bench.csv", &table, &error)) << error; },
        FLAGS_repeats);
    CHECK(table.values == c.values);
    const double old_mb = static_cast<double>(text.size()) / 1e6;
    std::printf("%-34s %10.1f %12.0f %12s %12.0f %12s\n",
                (std::string(c.name) + ", %.17g").c_str(), old_mb, old_mb / old_format, "-",
                old_mb / old_parse, "-");
  }
  std::remove(path.c_str());
  return 0;
}
