// Strict CSV reading and atomic CSV writing.
//
// Format: one header row of column names, then rows of numbers separated by commas.
// Whitespace around cells is ignored, CRLF line ends are accepted, lines starting with '#'
// before the header are comments (provenance), trailing blank lines are ignored, and a UTF-8
// byte-order mark at the start of the file is skipped. A header with ';' or tabs and no comma is
// rejected with a message saying which separator the file uses.
// Everything else that is not a clean numeric table is an error whose message names the
// file, the line (1-based) and, for cell errors, the column (1-based, with its name):
// missing or unreadable file, empty file, header mismatch, duplicate or empty column name,
// ragged row, non-numeric cell, NaN or Inf, and (for time series) non-increasing time.
#ifndef DYNID_DATA_CSV_H_
#define DYNID_DATA_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "dynid/data/time_series.h"

namespace dynid::data {

struct CsvTable {
  std::vector<std::string> header;
  Eigen::MatrixXd values;  // rows = data lines, cols = header.size()
  std::vector<int> line_numbers;  // 1-based source line of each row (for later error messages)
  int header_line = 0;            // 1-based source line of the header
};

// Parses CSV text; `source_name` is used in error messages ("file.csv:12:3: ...").
bool ParseCsv(std::string_view text, const std::string& source_name, CsvTable* table,
              std::string* error);

// Reads and parses a file.
bool ReadCsv(const std::string& path, CsvTable* table, std::string* error);

// Column indices of `names` in `table`, bound by header name in any order: false with
// "<path>:<line>:<column>: unknown column '<name>' (expected <names>)" for a header name that is
// not one of `names`, or "<path>:<line>: missing column '<name>' (expected <names>)", `line`
// being the header's. indices[i] is the column of names[i].
bool BindColumns(const CsvTable& table, const std::string& path,
                 const std::vector<std::string>& names, std::vector<int>* indices,
                 std::string* error);

// Like ReadCsv, and checks the header equals `expected_header` exactly (in order).
bool ReadCsvWithHeader(const std::string& path, const std::vector<std::string>& expected_header,
                       CsvTable* table, std::string* error);

// False with "<path>:<line>:1: time not strictly increasing" (the line of the first offending
// row) when the first column of `table`, read from `path`, is not strictly increasing. For time
// in another column (`column`, 0-based) the location gives that column's number, and with
// name_column also its name: "<path>:<line>:<column> (column '<name>')".
bool CheckTimeColumnIncreasing(const CsvTable& table, const std::string& path, std::string* error,
                               int column = 0, bool name_column = false);

// False when a step of the (strictly increasing) time in `column` differs from the record's mean
// step by more than `tolerance` (a fraction) of it: "<location>: time step <dt> s differs by
// more than <100 tolerance> % from the record's mean step <mean> s (<reason>)", the location as
// in CheckTimeColumnIncreasing. The mean step goes to *mean_step.
bool CheckUniformTimeStep(const CsvTable& table, const std::string& path, int column,
                          bool name_column, double tolerance, const std::string& reason,
                          double* mean_step, std::string* error);

// Reads a time series. Either `time_column` names a column holding time in seconds (it must be
// strictly increasing; an error names the offending line), or it is empty and `dt_s` > 0 gives
// a uniform time base starting at 0. `columns` selects columns (empty = all but time); a column
// that is absent is an error naming the file and listing the available columns.
bool ReadTimeSeriesCsv(const std::string& path, const std::string& time_column, double dt_s,
                       const std::vector<std::string>& columns, TimeSeries* series,
                       std::string* error);

// Numbers are written in the shortest form that reads back to the same double (std::to_chars:
// "0.1", "1e+300", "-0"), so a written table reads back exactly.

// Writes the shortest round-trip text of `value` at `out` (room for 32 characters) and returns
// the end of what was written.
char* FormatNumber(double value, char* out);

// Formats a numeric table as CSV text.
std::string FormatCsv(const std::vector<std::string>& header, const Eigen::MatrixXd& values);

// Writes CSV atomically (temporary file + rename), so a failure never leaves half a file. The
// text is formatted and written in blocks of about 1 MB, never held whole in memory; with
// num_threads != 1 (0 = all cores) consecutive blocks are formatted in parallel (the same text).
bool WriteCsv(const std::string& path, const std::vector<std::string>& header,
              const Eigen::MatrixXd& values, std::string* error, int num_threads = 1);

// A column of a table held elsewhere: value r is data[r * stride] (not owned; it must outlive
// the write). For a vector or a column-major matrix column, `data` is its .data().
struct CsvColumn {
  std::string name;
  const double* data = nullptr;
  Eigen::Index stride = 1;
};

// Like WriteCsv for `rows` rows of `columns`, without gathering them into one matrix first.
bool WriteCsvColumns(const std::string& path, const std::vector<CsvColumn>& columns,
                     Eigen::Index rows, std::string* error, int num_threads = 1);

// Writes a time series with its time column first (named `time_column_name`).
bool WriteTimeSeriesCsv(const std::string& path, const TimeSeries& series,
                        std::string* error, const std::string& time_column_name = "t");

// Splits "a,b,c" into names (empty input gives an empty list; cells are trimmed).
std::vector<std::string> SplitList(const std::string& text, char separator = ',');

}  // namespace dynid::data

#endif  // DYNID_DATA_CSV_H_
