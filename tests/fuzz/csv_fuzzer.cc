// libFuzzer target for the strict CSV reader: any byte string must either parse into a
// consistent table or be rejected with a message — never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dynid/data/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  dynid::data::CsvTable table;
  std::string error;
  if (dynid::data::ParseCsv(text, "fuzz.csv", &table, &error)) {
    if (table.values.cols() != static_cast<Eigen::Index>(table.header.size()) ||
        table.values.rows() != static_cast<Eigen::Index>(table.line_numbers.size()) ||
        !table.values.allFinite() || !error.empty()) {
      __builtin_trap();
    }
  } else if (error.empty()) {
    __builtin_trap();  // every rejection says why
  }
  return 0;
}
