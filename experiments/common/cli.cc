#include "experiments/common/cli.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/output.h"
#include "dynid/data/run_journal.h"
#include "experiments/common/progress.h"

namespace dynid::cli {

namespace {

std::string g_program = "dynid";
std::string g_main_file;  // the program's main source file, once ParseFlags has run

// Folder of a source file name as gflags records it (the __FILE__ of the DEFINE), as its last two
// components ("experiments/scara_study"): __FILE__ is absolute or relative to the build folder
// depending on how each file was compiled (a compiler cache may make it relative), so only the
// end of the path identifies the folder.
std::string FolderOf(const std::string& file) {
  const std::filesystem::path folder = std::filesystem::path(file).parent_path().lexically_normal();
  return (folder.parent_path().filename() / folder.filename()).string();
}

void PrintFlag(const gflags::CommandLineFlagInfo& flag) {
  std::cout << "  --" << flag.name << " (" << flag.description << ")\n      type: " << flag.type
            << "  default: "
            << (flag.type == "string" ? "\"" + flag.default_value + "\"" : flag.default_value)
            << "\n";
}

[[noreturn]] void PrintHelp(const std::string& main_file, bool full) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);  // sorted by file, then name
  const std::string own_folder = FolderOf(main_file);
  const std::string shared_folder = FolderOf(__FILE__);  // experiments/common: every program's
  std::cout << g_program << ": " << gflags::ProgramUsage() << "\n\nFlags of " << g_program << ":\n";
  for (const auto& flag : flags) {
    if (FolderOf(flag.filename) == own_folder) PrintFlag(flag);
  }
  for (const auto& flag : flags) {
    if (FolderOf(flag.filename) == shared_folder && shared_folder != own_folder) PrintFlag(flag);
  }
  if (full) {
    std::string file;
    for (const auto& flag : flags) {
      if (FolderOf(flag.filename) == own_folder || FolderOf(flag.filename) == shared_folder) {
        continue;
      }
      if (flag.filename != file) {
        file = flag.filename;
        std::cout << "\nFlags from " << file << ":\n";
      }
      PrintFlag(flag);
    }
  } else {
    std::cout << "\nLibrary, gflags and glog flags: --helpfull\n";
  }
  std::cout << "\nExit status: 0 success, 2 bad flags or input, 1 internal failure.\n";
  std::cout.flush();
  std::exit(kExitSuccess);
}

[[noreturn]] void UsageError(const std::string& message) {
  Fail(kExitUsage, message + " (see --help)");
  std::exit(kExitUsage);
}

// Checks every argument as gflags would read it, so that mistakes exit 2 with the flag's name
// instead of gflags' exit 1.
void CheckArguments(int argc, char** argv, const std::string& main_file) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--") {
      if (i + 1 < argc) UsageError(std::string("unexpected argument '") + argv[i + 1] + "'");
      break;
    }
    if (argument.size() < 2 || argument[0] != '-') {
      UsageError("unexpected argument '" + argument + "'");
    }
    const std::string body = argument.substr(argument[1] == '-' ? 2 : 1);
    const size_t equals = body.find('=');
    std::string name = body.substr(0, equals);
    const bool has_value = equals != std::string::npos;
    std::string value = has_value ? body.substr(equals + 1) : "";
    if (name == "help" || name == "h" || name == "helpfull") {
      PrintHelp(main_file, name == "helpfull");
    }
    gflags::CommandLineFlagInfo info;
    bool negated = false;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
      // gflags reads --noNAME as --NAME=false for a boolean flag.
      if (name.rfind("no", 0) == 0 && !has_value &&
          gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) && info.type == "bool") {
        negated = true;
      } else {
        UsageError("unknown flag --" + name);
      }
    }
    if (negated || info.type == "bool") {
      if (!has_value) continue;
    } else if (!has_value) {
      // gflags takes the next argument as the value of a non-boolean flag.
      if (i + 1 >= argc) UsageError("flag --" + name + " is missing its value");
      value = argv[++i];
    }
    if (name == "flagfile" || name == "fromenv" || name == "tryfromenv") continue;
    // Validate the value the way gflags will (type and registered validators); setting it
    // here is harmless because the parse below sets the same value again.
    if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
      UsageError("flag --" + name + ": '" + value + "' is not a valid " + info.type + " value");
    }
  }
}

}  // namespace

int Fail(int code, const std::string& message) {
  std::cerr << g_program << ": error: " << message << "\n";
  return code;
}

const std::string& ProgramName() { return g_program; }

bool IsProgramFlag(const std::string& defined_in) {
  CHECK(!g_main_file.empty()) << "IsProgramFlag before ParseFlags";
  const std::string folder = FolderOf(defined_in);
  return folder == FolderOf(g_main_file) || folder == FolderOf(__FILE__);
}

std::string ProgramFlagsSignature(const std::vector<std::string>& excluded) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::vector<std::string> settings;
  for (const auto& flag : flags) {
    if (!IsProgramFlag(flag.filename) ||
        std::find(excluded.begin(), excluded.end(), flag.name) != excluded.end()) {
      continue;
    }
    settings.push_back(flag.name + "=" + flag.current_value);
  }
  std::sort(settings.begin(), settings.end());
  std::string text = g_program;
  for (const std::string& setting : settings) text += "\n" + setting;
  return data::HashHex(text);
}

void Warn(const std::string& message) {
  std::cerr << g_program << ": warning: " << message << "\n";
}

std::string HugePageTunables(const char* current) {
  const std::string tunables = current != nullptr ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return "";
  return (tunables.empty() ? "" : tunables + ":") + "glibc.malloc.hugetlb=1";
}

void ParseFlags(int* argc, char*** argv, const std::string& usage, const char* main_file) {
  if (*argc > 0) g_program = std::filesystem::path((*argv)[0]).filename().string();
  // Huge pages for the allocator (see the header). Not in an MPI rank: MPI is initialised before
  // the flags are parsed (the *_mpi programs) or the launcher expects this very process; not
  // under valgrind, whose client would run on without it after an exec.
  const char* preload = std::getenv("LD_PRELOAD");
  const bool valgrind = preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
  const bool mpi =
      (g_program.size() > 4 && g_program.compare(g_program.size() - 4, 4, "_mpi") == 0) ||
      std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
      std::getenv("PMI_RANK") != nullptr;
  if (!mpi && !valgrind) {
    const std::string tunables = HugePageTunables(std::getenv("GLIBC_TUNABLES"));
    if (!tunables.empty() && ::setenv("GLIBC_TUNABLES", tunables.c_str(), 1) == 0) {
      ::execv("/proc/self/exe", *argv);  // returns only when it failed: go on as we are
    }
  }
  g_main_file = main_file;
  gflags::SetUsageMessage(usage);
  CheckArguments(*argc, *argv, main_file);
  gflags::ParseCommandLineNonHelpFlags(argc, argv, /*remove_flags=*/true);
  gflags::HandleCommandLineHelpFlags();  // --version, --helpxml, ... as gflags defines them
  if (*argc > 1) UsageError(std::string("unexpected argument '") + (*argv)[1] + "'");
  // Every program with an --out_dir checks it here, before it computes anything, so that a
  // long run cannot end by failing to write its results.
  std::string out_dir;
  if (gflags::GetCommandLineOption("out_dir", &out_dir)) {
    std::string error;
    if (!CheckOutDir(out_dir, &error)) {
      Fail(kExitUsage, error);
      std::exit(kExitUsage);
    }
  }
  google::InitGoogleLogging((*argv)[0]);
  data::InstallStagingCleanupHandlers();
  ProgressEnabled();  // decided once for the run (and links --progress into every program)
}

bool CheckOutDir(const std::string& out_dir, std::string* error) {
  return data::CheckOutputDirectory(out_dir, error);
}

bool ParseNumberList(const std::string& flag, const std::string& text, int expected_size,
                     double minimum, std::vector<double>* values, std::string* error) {
  values->clear();
  const std::vector<std::string> items = data::SplitList(text);
  if (expected_size > 0 && static_cast<int>(items.size()) != expected_size) {
    *error = "--" + flag + ": expected " + std::to_string(expected_size) +
             " comma-separated numbers, got '" + text + "'";
    return false;
  }
  for (const std::string& item : items) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(value) || !(value >= minimum)) {
      *error = "--" + flag + ": '" + item + "' is not a number";
      if (std::isfinite(minimum)) {
        std::ostringstream bound;
        bound << minimum;
        *error += " >= " + bound.str();
      }
      return false;
    }
    values->push_back(value);
  }
  if (values->empty()) {
    *error = "--" + flag + ": give at least one value";
    return false;
  }
  return true;
}

}  // namespace dynid::cli
