#include "dynid/data/csv.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dynid::data {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string ParseError(const std::string& text) {
  CsvTable table;
  std::string error;
  EXPECT_FALSE(ParseCsv(text, "f.csv", &table, &error)) << "accepted: " << text;
  return error;
}

TEST(CsvTest, ParsesCleanTableWithCommentsCrlfAndTrailingBlankLines) {
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("# made by hand\r\nt, q1 ,q2\r\n0,1.5,-2e-3\r\n0.1, +3 ,4\r\n\r\n\n",
                       "f.csv", &table, &error))
      << error;
  EXPECT_THAT(table.header, ::testing::ElementsAre("t", "q1", "q2"));
  ASSERT_EQ(table.values.rows(), 2);
  EXPECT_DOUBLE_EQ(table.values(0, 2), -2e-3);
  EXPECT_DOUBLE_EQ(table.values(1, 1), 3.0);
  EXPECT_THAT(table.line_numbers, ::testing::ElementsAre(3, 4));
}

TEST(CsvTest, SkipsUtf8ByteOrderMarkBeforeTheHeader) {
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("\xEF\xBB\xBFt,q\n0,1\n", "f.csv", &table, &error)) << error;
  EXPECT_THAT(table.header, ::testing::ElementsAre("t", "q"));
  EXPECT_EQ(table.header_line, 1);
  // Also before comment lines.
  ASSERT_TRUE(ParseCsv("\xEF\xBB\xBF# note\nt,q\n0,1\n", "f.csv", &table, &error)) << error;
  EXPECT_THAT(table.header, ::testing::ElementsAre("t", "q"));
  EXPECT_EQ(table.header_line, 2);
}

TEST(CsvTest, NamesSemicolonOrTabSeparatorInTheHeader) {
  EXPECT_EQ(ParseError("t;q1;q2\n0;1;2\n"),
            "f.csv:1:2: uses ';' as separator; dynid reads comma-separated values");
  EXPECT_EQ(ParseError("# c\nt\tq\n0\t1\n"),
            "f.csv:2:2: uses tab as separator; dynid reads comma-separated values");
  EXPECT_EQ(ParseError("\xEF\xBB\xBFtime;q\n0;1\n"),
            "f.csv:1:5: uses ';' as separator; dynid reads comma-separated values");
  // A comma-separated header may contain ';' inside a name.
  CsvTable table;
  std::string error;
  EXPECT_TRUE(ParseCsv("t,a;b\n0,1\n", "f.csv", &table, &error)) << error;
}

TEST(CsvTest, BindColumnsByNameInAnyOrder) {
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("# c\nm2,m1\n1,2\n", "f.csv", &table, &error)) << error;
  std::vector<int> columns;
  ASSERT_TRUE(BindColumns(table, "f.csv", {"m1", "m2"}, &columns, &error)) << error;
  EXPECT_THAT(columns, ::testing::ElementsAre(1, 0));
  EXPECT_FALSE(BindColumns(table, "f.csv", {"m1", "m2", "m3"}, &columns, &error));
  EXPECT_EQ(error, "f.csv:2: missing column 'm3' (expected m1,m2,m3, in any order)");
  EXPECT_FALSE(BindColumns(table, "f.csv", {"m1", "m3"}, &columns, &error));
  EXPECT_EQ(error, "f.csv:2:1: unknown column 'm2' (expected m1,m3, in any order)");
}

TEST(CsvTest, TimeColumnCheckNamesTheFirstNonIncreasingLine) {
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("# comment\nt,x\n0,1\n1,2\n1,3\n0.5,4\n", "f.csv", &table, &error)) << error;
  EXPECT_FALSE(CheckTimeColumnIncreasing(table, "f.csv", &error));
  EXPECT_EQ(error, "f.csv:5:1: time not strictly increasing");
  table.values(2, 0) = 2.0;
  table.values(3, 0) = 3.0;
  EXPECT_TRUE(CheckTimeColumnIncreasing(table, "f.csv", &error));
}

TEST(CsvTest, TimeChecksNameTheTimeColumn) {
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("x,t\n7,0\n7,1\n7,1\n", "f.csv", &table, &error)) << error;
  EXPECT_FALSE(CheckTimeColumnIncreasing(table, "f.csv", &error, 1));
  EXPECT_EQ(error, "f.csv:4:2: time not strictly increasing");
  EXPECT_FALSE(CheckTimeColumnIncreasing(table, "f.csv", &error, 1, true));
  EXPECT_EQ(error, "f.csv:4:2 (column 't'): time not strictly increasing");
}

TEST(CsvTest, UniformTimeStepWithinTolerance) {
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("t\n0\n0.1\n0.2\n0.3\n", "f.csv", &table, &error)) << error;
  double step = 0.0;
  EXPECT_TRUE(CheckUniformTimeStep(table, "f.csv", 0, false, 0.01, "why", &step, &error));
  EXPECT_DOUBLE_EQ(step, 0.1);
  table.values(2, 0) = 0.21;  // steps 0.1, 0.11, 0.09 about the mean 0.1
  EXPECT_FALSE(CheckUniformTimeStep(table, "f.csv", 0, true, 0.01, "why", &step, &error));
  EXPECT_EQ(error,
            "f.csv:4:1 (column 't'): time step 0.11 s differs by more than 1 % from the record's "
            "mean step 0.1 s (why)");
  EXPECT_TRUE(CheckUniformTimeStep(table, "f.csv", 0, false, 0.2, "why", &step, &error));
}

TEST(CsvTest, EmptyFile) { EXPECT_THAT(ParseError(""), HasSubstr("f.csv: empty file")); }

TEST(CsvTest, HeaderOnly) { EXPECT_THAT(ParseError("a,b\n"), HasSubstr("no data rows")); }

TEST(CsvTest, RaggedRowNamesLine) {
  EXPECT_THAT(ParseError("a,b\n1,2\n3\n"), HasSubstr("f.csv:3: ragged row: 1 cells"));
}

TEST(CsvTest, NonNumericCellNamesLineColumnAndName) {
  EXPECT_THAT(ParseError("a,b\n1,2\n3,x4\n"),
              HasSubstr("f.csv:3:2 (column 'b'): non-numeric cell 'x4'"));
}

TEST(CsvTest, NanAndInfRejected) {
  EXPECT_THAT(ParseError("a,b\n1,nan\n"), HasSubstr("f.csv:2:2 (column 'b'): NaN"));
  EXPECT_THAT(ParseError("a,b\ninf,1\n"), HasSubstr("f.csv:2:1 (column 'a'): Inf"));
  EXPECT_THAT(ParseError("a\n1e999\n"), HasSubstr("out of range"));
}

TEST(CsvTest, EmptyCellAndBlankLineInsideData) {
  EXPECT_THAT(ParseError("a,b\n1,\n"), HasSubstr("f.csv:2:2 (column 'b'): empty cell"));
  EXPECT_THAT(ParseError("a\n1\n\n2\n"), HasSubstr("f.csv:3: blank line inside the data"));
}

TEST(CsvTest, DuplicateAndEmptyHeaderNames) {
  EXPECT_THAT(ParseError("a,a\n1,2\n"), HasSubstr("duplicate column name 'a'"));
  EXPECT_THAT(ParseError("a,,b\n1,2,3\n"), HasSubstr("f.csv:1:2: empty column name"));
}

TEST(CsvTest, MissingFile) {
  CsvTable table;
  std::string error;
  EXPECT_FALSE(ReadCsv("/nonexistent/dynid.csv", &table, &error));
  EXPECT_THAT(error, HasSubstr("/nonexistent/dynid.csv: cannot open file"));
}

TEST(CsvTest, HeaderMismatch) {
  const std::string path = WriteTemp("dynid_header.csv", "q1,q2,q3\n1,2,3\n");
  CsvTable table;
  std::string error;
  EXPECT_FALSE(ReadCsvWithHeader(path, {"q1", "q2", "q4"}, &table, &error));
  EXPECT_THAT(error, HasSubstr("header mismatch: expected 'q1,q2,q4', got 'q1,q2,q3'"));
}

TEST(CsvTest, TimeSeriesRejectsNonIncreasingTime) {
  const std::string path = WriteTemp("dynid_time.csv", "t,y\n0,1\n0.1,2\n0.1,3\n");
  TimeSeries series;
  std::string error;
  EXPECT_FALSE(ReadTimeSeriesCsv(path, "t", 0.0, {}, &series, &error));
  EXPECT_THAT(error, HasSubstr(":4:1 (column 't'): time is not strictly increasing"));
}

TEST(CsvTest, TimeSeriesSelectsColumnsAndReportsMissingOnes) {
  const std::string path = WriteTemp("dynid_select.csv", "t,a,b,c\n0,1,2,3\n0.5,4,5,6\n");
  TimeSeries series;
  std::string error;
  ASSERT_TRUE(ReadTimeSeriesCsv(path, "t", 0.0, {"c", "a"}, &series, &error)) << error;
  EXPECT_THAT(series.names(), ::testing::ElementsAre("c", "a"));
  EXPECT_DOUBLE_EQ(series.Column("c")[1], 6.0);
  EXPECT_DOUBLE_EQ(series.MeanSamplePeriod(), 0.5);
  EXPECT_FALSE(ReadTimeSeriesCsv(path, "t", 0.0, {"z"}, &series, &error));
  EXPECT_THAT(error, HasSubstr("no column 'z' (columns: t, a, b, c)"));
  EXPECT_FALSE(ReadTimeSeriesCsv(path, "", 0.0, {}, &series, &error));
  EXPECT_THAT(error, HasSubstr("dt must be positive"));
  ASSERT_TRUE(ReadTimeSeriesCsv(path, "", 0.01, {}, &series, &error)) << error;
  EXPECT_EQ(series.num_columns(), 4);  // without a time column every column is data
}

TEST(CsvTest, WriteThenReadRoundTripsExactly) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "dynid_roundtrip.csv").string();
  Eigen::MatrixXd values(3, 2);
  values << 0.1, 1.0 / 3.0, -2.5e-300, 1e300, 7, -0.0;
  std::string error;
  ASSERT_TRUE(WriteCsv(path, {"x", "y"}, values, &error)) << error;
  CsvTable table;
  ASSERT_TRUE(ReadCsv(path, &table, &error)) << error;
  EXPECT_EQ(table.values, values);
}

TEST(CsvTest, NumbersAreWrittenInTheShortestRoundTripForm) {
  auto text = [](double value) {
    char buffer[32];
    return std::string(buffer, FormatNumber(value, buffer));
  };
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(100.0), "100");
  EXPECT_EQ(text(1e300), "1e+300");
  EXPECT_EQ(text(-0.0), "-0");
  EXPECT_EQ(text(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(text(-2.2250738585072014e-308), "-2.2250738585072014e-308");
  EXPECT_EQ(text(5e-324), "5e-324");
  // Every double reads back exactly (a sweep over the exponents with full mantissas).
  for (int e = -320; e <= 300; e += 7) {
    const double value = std::ldexp(0.7853981633974483, e) * (e % 2 ? -1.0 : 1.0);
    EXPECT_EQ(std::strtod(text(value).c_str(), nullptr), value) << text(value);
  }
}

TEST(CsvTest, FastAndStrictReadersAgreeOnUnusualButValidCells) {
  // Blanks, tabs and '\r' around cells, a leading '+', forms std::from_chars reads.
  CsvTable table;
  std::string error;
  ASSERT_TRUE(ParseCsv("a,b,c\n \t+1 ,\t-2.5e-3\r, .5\r\n5.,+-1,1E2 \n", "f.csv", &table,
                       &error))
      << error;
  ASSERT_EQ(table.values.rows(), 2);
  EXPECT_EQ(table.values(0, 0), 1.0);
  EXPECT_EQ(table.values(0, 1), -2.5e-3);
  EXPECT_EQ(table.values(0, 2), 0.5);
  EXPECT_EQ(table.values(1, 0), 5.0);
  EXPECT_EQ(table.values(1, 1), -1.0);  // '+' then from_chars("-1"), as the reader always did
  EXPECT_EQ(table.values(1, 2), 100.0);
  // What the fast path rejects is reported by the strict path, with the usual location.
  EXPECT_EQ(ParseError("a,b\n1,2\n1,2,\n"), "f.csv:3: ragged row: 3 cells, the header has 2");
  EXPECT_EQ(ParseError("a,b\n1,2\n1,1e\n"), "f.csv:3:2 (column 'b'): non-numeric cell '1e'");
  EXPECT_EQ(ParseError("a,b\n1,2\n1,1e-999\n"),
            "f.csv:3:2 (column 'b'): number out of range '1e-999'");
  EXPECT_EQ(ParseError(std::string("a,b\n1,2\n1,2\0\n", 13)),
            "f.csv:3: binary data (NUL byte) in a CSV file");
  EXPECT_EQ(ParseError("a,b\n1,2\n+,2\n"), "f.csv:3:1 (column 'a'): non-numeric cell '+'");
  EXPECT_EQ(ParseError("a,b\n1,2\n1,-inf\n"), "f.csv:3:2 (column 'b'): Inf is not allowed");
  EXPECT_EQ(ParseError("a\n\n1\n"), "f.csv:2: blank line inside the data");
  EXPECT_EQ(ParseError("a\n \r\n"), "f.csv: no data rows after the header");
}

TEST(CsvTest, WritesColumnsHeldElsewhereAndReadsThemBack) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "dynid_columns.csv").string();
  // A row-major block (stride 2) and a vector, 50 000 rows: several write blocks.
  const Eigen::Index rows = 50000;
  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> pairs(rows, 2);
  Eigen::VectorXd single(rows);
  for (Eigen::Index k = 0; k < rows; ++k) {
    pairs(k, 0) = 1e-3 * static_cast<double>(k);
    pairs(k, 1) = std::sin(static_cast<double>(k)) / 3.0;
    single[k] = -std::exp(-1e-4 * static_cast<double>(k));
  }
  std::string error;
  ASSERT_TRUE(WriteCsvColumns(path,
                              {{"t", pairs.data(), 2}, {"s", pairs.data() + 1, 2},
                               {"e", single.data()}},
                              rows, &error))
      << error;
  CsvTable table;
  ASSERT_TRUE(ReadCsv(path, &table, &error)) << error;
  EXPECT_THAT(table.header, ::testing::ElementsAre("t", "s", "e"));
  ASSERT_EQ(table.values.rows(), rows);
  EXPECT_TRUE(table.values.col(0) == pairs.col(0));
  EXPECT_TRUE(table.values.col(1) == pairs.col(1));
  EXPECT_TRUE(table.values.col(2) == single);
  EXPECT_EQ(table.line_numbers.back(), rows + 1);
  // Formatted on several threads: the same text.
  const std::string parallel_path = path + ".parallel";
  ASSERT_TRUE(WriteCsvColumns(parallel_path,
                              {{"t", pairs.data(), 2}, {"s", pairs.data() + 1, 2},
                               {"e", single.data()}},
                              rows, &error, /*num_threads=*/3))
      << error;
  std::ifstream serial_file(path), parallel_file(parallel_path);
  std::stringstream serial_text, parallel_text;
  serial_text << serial_file.rdbuf();
  parallel_text << parallel_file.rdbuf();
  EXPECT_EQ(serial_text.str(), parallel_text.str());
  // A failed write leaves nothing behind.
  EXPECT_FALSE(WriteCsvColumns("/nonexistent_dynid_dir/x.csv", {{"t", single.data()}}, rows,
                               &error));
  EXPECT_THAT(error, HasSubstr("/nonexistent_dynid_dir/x.csv: cannot create file"));
}

TEST(CsvTest, SplitListTrims) {
  EXPECT_THAT(SplitList(" a, b ,c"), ::testing::ElementsAre("a", "b", "c"));
  EXPECT_TRUE(SplitList("  ").empty());
}

}  // namespace
}  // namespace dynid::data
