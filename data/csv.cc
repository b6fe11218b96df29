#include "dynid/data/csv.h"

#include <glog/logging.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "dynid/data/output.h"
#include "dynid/data/parallel_for.h"

namespace dynid::data {
namespace {

std::string_view Trim(std::string_view s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && (s[begin] == ' ' || s[begin] == '\t')) ++begin;
  while (end > begin && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r')) --end;
  return s.substr(begin, end - begin);
}

std::vector<std::string_view> SplitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      cells.push_back(Trim(line.substr(start)));
      return cells;
    }
    cells.push_back(Trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

std::string Where(const std::string& source, int line) {
  return source + ":" + std::to_string(line);
}

std::string Where(const std::string& source, int line, int column,
                  const std::vector<std::string>& header) {
  std::string where = Where(source, line) + ":" + std::to_string(column);
  if (column >= 1 && column <= static_cast<int>(header.size())) {
    where += " (column '" + header[column - 1] + "')";
  }
  return where;
}

// Parses one numeric cell; returns false with a description of what is wrong.
bool ParseNumber(std::string_view cell, double* value, std::string* what) {
  if (cell.empty()) {
    *what = "empty cell";
    return false;
  }
  std::string_view digits = cell;
  if (digits.front() == '+') digits.remove_prefix(1);
  double parsed = 0.0;
  const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
  if (result.ec == std::errc::result_out_of_range) {
    *what = "number out of range '" + std::string(cell) + "'";
    return false;
  }
  if (result.ec != std::errc() || result.ptr != digits.data() + digits.size() ||
      digits.empty()) {
    *what = "non-numeric cell '" + std::string(cell) + "'";
    return false;
  }
  if (std::isnan(parsed)) {
    *what = "NaN is not allowed";
    return false;
  }
  if (std::isinf(parsed)) {
    *what = "Inf is not allowed";
    return false;
  }
  *value = parsed;
  return true;
}

std::string Unquote(std::string_view cell) {
  if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(cell);
}

}  // namespace

namespace {

// True when a line holds only blanks (' ', '\t', '\r'): what Trim() reduces to nothing.
bool IsBlankLine(std::string_view raw) {
  for (const char c : raw) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

// The end of the line starting at `position` (the '\n' or the end of the text).
size_t LineEnd(std::string_view text, size_t position) {
  const void* newline = std::memchr(text.data() + position, '\n', text.size() - position);
  return newline ? static_cast<size_t>(static_cast<const char*>(newline) - text.data())
                 : text.size();
}

// The fast path of a data line: `cols` numbers into out[0..cols). It accepts exactly what
// ParseDataLine accepts, with the same values (cells trimmed of ' ', '\t' and a trailing '\r',
// an optional '+', then std::from_chars over the whole cell, finite results only); on anything
// else it returns false and the caller asks ParseDataLine what is wrong.
bool ParseDataLineFast(const char* p, const char* end, size_t cols, double* out) {
  for (size_t c = 0; c < cols; ++c) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p < end && *p == '+') ++p;
    const auto result = std::from_chars(p, end, out[c]);
    if (result.ec != std::errc() || result.ptr == p || !std::isfinite(out[c])) return false;
    p = result.ptr;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    if (c + 1 < cols) {
      if (p == end || *p != ',') return false;
      ++p;
    } else if (p != end) {
      return false;
    }
  }
  return true;
}

// The strict path of a data line (Trim()med, not blank): the values, or false with the message.
bool ParseDataLine(std::string_view line, const std::string& source_name, int line_number,
                   const std::vector<std::string>& header, double* out, std::string* error) {
  if (line.find('\0') != std::string_view::npos) {
    *error = Where(source_name, line_number) + ": binary data (NUL byte) in a CSV file";
    return false;
  }
  const std::vector<std::string_view> cells = SplitCells(line);
  if (cells.size() != header.size()) {
    *error = Where(source_name, line_number) + ": ragged row: " + std::to_string(cells.size()) +
             " cells, the header has " + std::to_string(header.size());
    return false;
  }
  for (size_t c = 0; c < cells.size(); ++c) {
    std::string what;
    if (!ParseNumber(cells[c], &out[c], &what)) {
      *error = Where(source_name, line_number, static_cast<int>(c + 1), header) + ": " + what;
      return false;
    }
  }
  return true;
}

}  // namespace

bool ParseCsv(std::string_view text, const std::string& source_name, CsvTable* table,
              std::string* error) {
  CHECK(table != nullptr && error != nullptr);
  table->header.clear();
  table->line_numbers.clear();
  table->values.resize(0, 0);
  int line_number = 0;
  size_t position = 0;
  bool have_header = false;
  // Spreadsheet programs often start UTF-8 files with a byte-order mark; it is not part of the
  // first column's name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") position = 3;
  // Comments and blank lines, then the header.
  while (position < text.size() && !have_header) {
    const size_t newline = LineEnd(text, position);
    const std::string_view raw = text.substr(position, newline - position);
    position = newline + 1;
    ++line_number;
    const std::string_view line = Trim(raw);
    if (line.find('\0') != std::string_view::npos) {
      *error = Where(source_name, line_number) + ": binary data (NUL byte) in a CSV file";
      return false;
    }
    if (line.empty() || line.front() == '#') continue;
    // A header without commas but with ';' or tabs comes from a locale or a program that
    // uses another separator: say so instead of reading one oddly named column.
    if (line.find(',') == std::string_view::npos) {
      for (const char separator : {';', '\t'}) {
        if (line.find(separator) == std::string_view::npos) continue;
        // The column here is the character position of the first separator.
        const size_t column = raw.find(separator) + 1;
        *error = Where(source_name, line_number) + ":" + std::to_string(column) + ": uses " +
                 (separator == ';' ? std::string("';'") : std::string("tab")) +
                 " as separator; dynid reads comma-separated values";
        return false;
      }
    }
    const std::vector<std::string_view> cells = SplitCells(line);
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string name = Unquote(cells[c]);
      if (name.empty()) {
        *error = Where(source_name, line_number) + ":" + std::to_string(c + 1) +
                 ": empty column name in the header";
        return false;
      }
      for (const std::string& previous : table->header) {
        if (previous == name) {
          *error = Where(source_name, line_number) + ":" + std::to_string(c + 1) +
                   ": duplicate column name '" + name + "' in the header";
          return false;
        }
      }
      table->header.push_back(std::move(name));
    }
    have_header = true;
    table->header_line = line_number;
  }
  if (!have_header) {
    *error = source_name + ": empty file (no header row)";
    return false;
  }
  // The data rows are the non-blank lines after the header (a blank line between two of them
  // is an error below): counted first, so the table is allocated once at its final size.
  const size_t data_start = position;
  Eigen::Index rows = 0;
  for (size_t at = data_start; at < text.size();) {
    const size_t newline = LineEnd(text, at);
    const char first = text[at];
    if (at < newline && ((first != ' ' && first != '\t' && first != '\r') ||
                         !IsBlankLine(text.substr(at, newline - at)))) {
      ++rows;
    }
    at = newline + 1;
  }
  if (rows == 0) {
    *error = source_name + ": no data rows after the header";
    return false;
  }
  const size_t cols = table->header.size();
  if (rows > std::numeric_limits<int>::max()) {
    *error = source_name + ": more than " + std::to_string(std::numeric_limits<int>::max()) +
             " data rows";
    return false;
  }
  table->values.resize(rows, static_cast<Eigen::Index>(cols));
  table->line_numbers.reserve(static_cast<size_t>(rows));
  double* const values = table->values.data();
  std::vector<double> row(cols);
  int blank_line = 0;  // first blank line seen after data started (0 = none)
  Eigen::Index r = 0;
  while (position < text.size()) {
    const size_t newline = LineEnd(text, position);
    const std::string_view raw = text.substr(position, newline - position);
    position = newline + 1;
    ++line_number;
    if (IsBlankLine(raw)) {
      if (blank_line == 0) blank_line = line_number;
      continue;
    }
    if (blank_line != 0) {
      *error = Where(source_name, blank_line) + ": blank line inside the data";
      return false;
    }
    if (!ParseDataLineFast(raw.data(), raw.data() + raw.size(), cols, row.data()) &&
        !ParseDataLine(Trim(raw), source_name, line_number, table->header, row.data(), error)) {
      return false;
    }
    for (size_t c = 0; c < cols; ++c) values[c * static_cast<size_t>(rows) + r] = row[c];
    table->line_numbers.push_back(line_number);
    ++r;
  }
  CHECK_EQ(r, rows);
  return true;
}

bool ReadCsv(const std::string& path, CsvTable* table, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat status;
  if (fd < 0 || ::fstat(fd, &status) != 0 || S_ISDIR(status.st_mode)) {
    if (fd >= 0) ::close(fd);
    *error = path + ": cannot open file (missing or unreadable)";
    return false;
  }
  // A regular file is mapped (no copy of the text in memory); anything else is read.
  if (S_ISREG(status.st_mode) && status.st_size > 0) {
    const size_t size = static_cast<size_t>(status.st_size);
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) {
      *error = path + ": read error";
      return false;
    }
    ::madvise(mapped, size, MADV_SEQUENTIAL);
    const bool ok =
        ParseCsv(std::string_view(static_cast<const char*>(mapped), size), path, table, error);
    ::munmap(mapped, size);
    return ok;
  }
  std::string contents;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      ::close(fd);
      *error = path + ": read error";
      return false;
    }
    if (got == 0) break;
    contents.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return ParseCsv(contents, path, table, error);
}

bool BindColumns(const CsvTable& table, const std::string& path,
                 const std::vector<std::string>& names, std::vector<int>* indices,
                 std::string* error) {
  std::string expected;
  for (const auto& name : names) expected += (expected.empty() ? "" : ",") + name;
  indices->assign(names.size(), -1);
  const std::string where = path + ":" + std::to_string(table.header_line);
  for (size_t c = 0; c < table.header.size(); ++c) {
    const auto found = std::find(names.begin(), names.end(), table.header[c]);
    if (found == names.end()) {
      *error = where + ":" + std::to_string(c + 1) + ": unknown column '" + table.header[c] +
               "' (expected " + expected + ", in any order)";
      return false;
    }
    (*indices)[found - names.begin()] = static_cast<int>(c);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if ((*indices)[i] < 0) {
      *error =
          where + ": missing column '" + names[i] + "' (expected " + expected + ", in any order)";
      return false;
    }
  }
  return true;
}

bool ReadCsvWithHeader(const std::string& path, const std::vector<std::string>& expected_header,
                       CsvTable* table, std::string* error) {
  if (!ReadCsv(path, table, error)) return false;
  if (table->header != expected_header) {
    std::string expected;
    std::string got;
    for (const auto& name : expected_header) expected += (expected.empty() ? "" : ",") + name;
    for (const auto& name : table->header) got += (got.empty() ? "" : ",") + name;
    *error = path + ": header mismatch: expected '" + expected + "', got '" + got + "'";
    return false;
  }
  return true;
}

namespace {

// Where a message about the time cell of row k points (CheckTimeColumnIncreasing).
std::string TimeCellWhere(const CsvTable& table, const std::string& path, Eigen::Index k,
                          int column, bool name_column) {
  const int line = table.line_numbers[k];
  return name_column ? Where(path, line, column + 1, table.header)
                     : Where(path, line) + ":" + std::to_string(column + 1);
}

}  // namespace

bool CheckTimeColumnIncreasing(const CsvTable& table, const std::string& path, std::string* error,
                               int column, bool name_column) {
  for (Eigen::Index k = 1; k < table.values.rows(); ++k) {
    if (!(table.values(k, column) > table.values(k - 1, column))) {
      *error =
          TimeCellWhere(table, path, k, column, name_column) + ": time not strictly increasing";
      return false;
    }
  }
  return true;
}

bool CheckUniformTimeStep(const CsvTable& table, const std::string& path, int column,
                          bool name_column, double tolerance, const std::string& reason,
                          double* mean_step, std::string* error) {
  const Eigen::VectorXd t = table.values.col(column);
  const Eigen::Index rows = t.size();
  const double step = (t(rows - 1) - t(0)) / static_cast<double>(rows - 1);
  *mean_step = step;
  for (Eigen::Index k = 1; k < rows; ++k) {
    if (std::abs(t(k) - t(k - 1) - step) > tolerance * step) {
      char text[160];
      std::snprintf(text, sizeof(text),
                    ": time step %.6g s differs by more than %g %% from the record's mean step "
                    "%.6g s (",
                    t(k) - t(k - 1), 100.0 * tolerance, step);
      *error = TimeCellWhere(table, path, k, column, name_column) + text + reason + ")";
      return false;
    }
  }
  return true;
}

bool ReadTimeSeriesCsv(const std::string& path, const std::string& time_column, double dt_s,
                       const std::vector<std::string>& columns, TimeSeries* series,
                       std::string* error) {
  CsvTable table;
  if (!ReadCsv(path, &table, error)) return false;
  auto find = [&table](const std::string& name) {
    for (size_t c = 0; c < table.header.size(); ++c) {
      if (table.header[c] == name) return static_cast<int>(c);
    }
    return -1;
  };
  auto available = [&table]() {
    std::string list;
    for (const auto& name : table.header) list += (list.empty() ? "" : ", ") + name;
    return list;
  };
  *series = TimeSeries();
  int time_index = -1;
  if (!time_column.empty()) {
    time_index = find(time_column);
    if (time_index < 0) {
      *error = path + ":1: no time column '" + time_column + "' (columns: " + available() + ")";
      return false;
    }
    const Eigen::VectorXd time = table.values.col(time_index);
    for (Eigen::Index k = 1; k < time.size(); ++k) {
      if (!(time[k] > time[k - 1])) {
        *error = path + ":" + std::to_string(table.line_numbers[k]) + ":" +
                 std::to_string(time_index + 1) + " (column '" + time_column +
                 "'): time is not strictly increasing (" + std::to_string(time[k - 1]) +
                 " then " + std::to_string(time[k]) + ")";
        return false;
      }
    }
    std::string unused;
    CHECK(series->SetTime(time, &unused)) << unused;
  } else {
    if (!(dt_s > 0.0) || !std::isfinite(dt_s)) {
      *error = path + ": no time column given and the sampling interval dt must be positive";
      return false;
    }
    series->SetUniformTime(static_cast<int>(table.values.rows()), dt_s);
  }
  std::vector<std::string> selected = columns;
  if (selected.empty()) {
    for (size_t c = 0; c < table.header.size(); ++c) {
      if (static_cast<int>(c) != time_index) selected.push_back(table.header[c]);
    }
  }
  if (selected.empty()) {
    *error = path + ": no data columns besides the time column";
    return false;
  }
  for (const std::string& name : selected) {
    const int index = find(name);
    if (index < 0) {
      *error = path + ":1: no column '" + name + "' (columns: " + available() + ")";
      return false;
    }
    if (series->HasColumn(name)) {
      *error = "column '" + name + "' requested twice";
      return false;
    }
    series->AddColumn(name, table.values.col(index));
  }
  return true;
}

namespace {

// Longest text of a double in the shortest round-trip form ("-2.2250738585072014e-308" has 24).
constexpr size_t kMaxNumberChars = 32;
// Rows are formatted into blocks of about this many bytes.
constexpr size_t kBlockBytes = size_t{1} << 20;

std::string HeaderLine(const std::vector<CsvColumn>& columns) {
  std::string line;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) line += ',';
    line += columns[c].name;
  }
  line += '\n';
  return line;
}

// Appends rows [begin, end) of `columns` to `out`.
void FormatRows(const std::vector<CsvColumn>& columns, Eigen::Index begin, Eigen::Index end,
                std::string* out) {
  const size_t cols = columns.size();
  const size_t old_size = out->size();
  out->resize(old_size + static_cast<size_t>(end - begin) * (cols * (kMaxNumberChars + 1) + 1));
  char* p = out->data() + old_size;
  for (Eigen::Index r = begin; r < end; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      p = FormatNumber(columns[c].data[r * columns[c].stride], p);
      *p++ = ',';
    }
    if (cols > 0) --p;
    *p++ = '\n';
  }
  out->resize(static_cast<size_t>(p - out->data()));
}

// Rows per block: at most kBlockBytes of text in the worst case.
Eigen::Index BlockRows(size_t columns) {
  const size_t bytes_per_row = columns * (kMaxNumberChars + 1) + 1;
  return std::max<Eigen::Index>(1, static_cast<Eigen::Index>(kBlockBytes / bytes_per_row));
}

std::vector<CsvColumn> MatrixColumns(const std::vector<std::string>& header,
                                     const Eigen::MatrixXd& values) {
  CHECK_EQ(static_cast<Eigen::Index>(header.size()), values.cols())
      << "CSV: header has " << header.size() << " names for " << values.cols() << " columns";
  std::vector<CsvColumn> columns;
  columns.reserve(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    columns.push_back({header[c], values.data() + c * static_cast<size_t>(values.rows())});
  }
  return columns;
}

}  // namespace

char* FormatNumber(double value, char* out) {
  return std::to_chars(out, out + kMaxNumberChars, value).ptr;
}

std::string FormatCsv(const std::vector<std::string>& header, const Eigen::MatrixXd& values) {
  const std::vector<CsvColumn> columns = MatrixColumns(header, values);
  std::string text = HeaderLine(columns);
  std::string block;
  const Eigen::Index block_rows = BlockRows(columns.size());
  for (Eigen::Index begin = 0; begin < values.rows(); begin += block_rows) {
    FormatRows(columns, begin, std::min(values.rows(), begin + block_rows), &block);
    text += block;
    block.clear();
  }
  return text;
}

bool WriteCsvColumns(const std::string& path, const std::vector<CsvColumn>& columns,
                     Eigen::Index rows, std::string* error, int num_threads) {
  for (const CsvColumn& column : columns) {
    CHECK(rows == 0 || column.data != nullptr) << "WriteCsvColumns: column '" << column.name
                                               << "' has no data";
  }
  AtomicFileWriter file;
  if (!file.Open(path, error)) return false;
  const std::string header = HeaderLine(columns);
  if (!file.Write(header.data(), header.size(), error)) return false;
  // Rounds of one block per thread: formatted in parallel, written in order.
  const Eigen::Index block_rows = BlockRows(columns.size());
  const Eigen::Index num_blocks = (rows + block_rows - 1) / block_rows;
  const int threads =
      ParallelForThreads(num_threads, static_cast<int>(std::min<Eigen::Index>(num_blocks, 64)));
  std::vector<std::string> blocks(static_cast<size_t>(threads));
  for (Eigen::Index first = 0; first < num_blocks; first += threads) {
    const int round = static_cast<int>(std::min<Eigen::Index>(threads, num_blocks - first));
    ParallelFor(0, round, threads, [&](int i) {
      const Eigen::Index begin = (first + i) * block_rows;
      std::string* block = &blocks[static_cast<size_t>(i)];
      block->clear();
      FormatRows(columns, begin, std::min(rows, begin + block_rows), block);
    });
    for (int i = 0; i < round; ++i) {
      const std::string& block = blocks[static_cast<size_t>(i)];
      if (!file.Write(block.data(), block.size(), error)) return false;
    }
  }
  return file.Commit(error);
}

bool WriteCsv(const std::string& path, const std::vector<std::string>& header,
              const Eigen::MatrixXd& values, std::string* error, int num_threads) {
  return WriteCsvColumns(path, MatrixColumns(header, values), values.rows(), error, num_threads);
}

bool WriteTimeSeriesCsv(const std::string& path, const TimeSeries& series, std::string* error,
                        const std::string& time_column_name) {
  std::vector<CsvColumn> columns = {{time_column_name, series.time().data()}};
  for (int c = 0; c < series.num_columns(); ++c) {
    columns.push_back({series.names()[c], series.Column(c).data()});
  }
  return WriteCsvColumns(path, columns, series.num_samples(), error);
}

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> items;
  if (Trim(text).empty()) return items;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    const std::string_view item =
        Trim(std::string_view(text).substr(start, at == std::string::npos ? std::string::npos
                                                                           : at - start));
    items.emplace_back(item);
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return items;
}

}  // namespace dynid::data
