// The command-line contract shared by every dynid program (README.md, "Command-line contract").
//
// Exit codes: 0 success; 2 bad flags or bad input (an unknown flag, a malformed or out-of-range
// value, a stray argument, an unusable --out_dir, an unreadable or malformed input file); 1 an
// internal failure (a solver or a figure that failed, an output that could not be written).
// No flag or file value may end a program by an abort: programs validate such values first.
#ifndef DYNID_EXPERIMENTS_COMMON_CLI_H_
#define DYNID_EXPERIMENTS_COMMON_CLI_H_

#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace dynid::cli {

inline constexpr int kExitSuccess = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;

// Prints "<program>: error: <message>" to stderr and returns `code` (for `return Fail(...)`).
int Fail(int code, const std::string& message);

// Prints "<program>: warning: <message>" to stderr.
void Warn(const std::string& message);

// The program's name (of argv[0], once ParseFlags has run; "dynid" before).
const std::string& ProgramName();

// Parses the command line with gflags after checking it, initialises glog and installs the
// handlers that remove staging folders on SIGINT/SIGTERM/SIGHUP. Exits 0 after --help (the
// flags defined in the folder of `main_file`, the program's own, and those every program shares
// (experiments/common: --progress), then a pointer to --helpfull) or --helpfull (all flags, the
// program's first); exits 2 naming the flag on an unknown flag or
// a malformed value and on a positional argument (gflags alone would exit 1 on those), and when
// the program has an --out_dir flag that CheckOutDir rejects.
// `main_file` defaults to the caller's source file.
// First of all, a program that is not an MPI rank (nor run by valgrind) starts itself again (execv
// of /proc/self/exe, same arguments) with glibc's tunable glibc.malloc.hugetlb=1 added to
// GLIBC_TUNABLES, unless that names glibc.malloc.hugetlb already (then nothing changes: set it to 0
// to keep the ordinary pages): the allocator then asks for transparent huge pages on its large
// blocks, so a long record's arrays fault in 2 MB at a time instead of 4 kB (irw_smooth on 10⁶
// samples 0.87– 0.92 s → 0.51–0.67 s on the 2-core VM, experiments/benchmarks/README.md). Where the
// kernel's transparent huge pages are "always", "never" or absent the tunable changes nothing; if
// the exec fails the program carries on as it is.
void ParseFlags(int* argc, char*** argv, const std::string& usage,
                const char* main_file = __builtin_FILE());

// GLIBC_TUNABLES with glibc.malloc.hugetlb=1 appended to `current` (null or empty: unset), or ""
// when `current` names glibc.malloc.hugetlb already (ParseFlags then does not start again).
std::string HugePageTunables(const char* current);

// Whether a flag defined in file `defined_in` (gflags' filename) is the program's own or a
// shared one (experiments/common), not a library's, gflags' or glog's.
bool IsProgramFlag(const std::string& defined_in);

// A digest (16 hex digits) of the program's name and the current values of its own flags and
// the shared ones, except `excluded`: identifies the settings of a resumable computation.
std::string ProgramFlagsSignature(const std::vector<std::string>& excluded);

// Checks --out_dir before any computation (see data::CheckOutputDirectory); false with a
// message naming --out_dir.
bool CheckOutDir(const std::string& out_dir, std::string* error);

// Parses the comma-separated numbers of flag --`flag` (text `text`): each finite and >= `minimum`,
// exactly `expected_size` of them when > 0, at least one otherwise. False with a message naming
// the flag and the offending item.
// The one of `values` whose name(value) is `text` (a library enumeration with its name function,
// e.g. solvers::HacCriticalValueName); false when none is.
template <class Enum>
bool ParseNamed(const std::string& text, std::initializer_list<Enum> values,
                const char* (*name)(Enum), Enum* value) {
  for (Enum candidate : values) {
    if (text == name(candidate)) {
      *value = candidate;
      return true;
    }
  }
  return false;
}

bool ParseNumberList(const std::string& flag, const std::string& text, int expected_size,
                     double minimum, std::vector<double>* values, std::string* error);
inline constexpr double kAnyNumber = -std::numeric_limits<double>::infinity();

}  // namespace dynid::cli

#endif  // DYNID_EXPERIMENTS_COMMON_CLI_H_
