// Files that dynid's programs read at run time: the figure scripts and the shipped example data.
//
// They live in <prefix>/share/dynid/, beside <prefix>/bin/ where the programs are, both after
// `cmake --install` and in the build tree (which has the same layout). A program finds them
// relative to its own executable, never through the source tree, so an installed program keeps
// working when the sources are gone. The environment variable DYNID_SHARE_DIR overrides the
// folder.
#ifndef DYNID_DATA_RUNTIME_FILES_H_
#define DYNID_DATA_RUNTIME_FILES_H_

#include <string>

namespace dynid::data {

// The folder of the runtime files: $DYNID_SHARE_DIR if set, else <dir of this executable>/../share/dynid.
std::string RuntimeFilesDirectory();

// RuntimeFilesDirectory()/relative_path; false with a message naming the searched path when no
// such file exists.
bool FindRuntimeFile(const std::string& relative_path, std::string* path, std::string* error);

}  // namespace dynid::data

#endif  // DYNID_DATA_RUNTIME_FILES_H_
