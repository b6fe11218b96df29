// A resumable record of finished work items: long computations made of many independent items
// (a Monte Carlo's (scenario, seed) runs, a weight sweep's (grid point, seed) estimates) append
// each finished item to a journal file as one line, so that a run that was killed, or a longer
// run with the same settings, can read back what is done and compute only the rest.
//
// Layout: a folder with one append-only file per process, "journal-<rank>.txt" (a distributed
// run's processes never write the same file). Each file begins with a header line
// "# <kind> journal <signature>", where the signature is a digest of every setting that changes
// an item's result; loading refuses a file with another header, so results of other settings are
// never mixed in. Every record is one line "<body> <checksum>" (body: any text without a line
// break; checksum: HashHex of the body), written with one write, flushed and fsync'ed: after a
// kill a line is either complete or fails its checksum and is skipped.
#ifndef DYNID_DATA_RUN_JOURNAL_H_
#define DYNID_DATA_RUN_JOURNAL_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

namespace dynid::data {

// The 64-bit FNV-1a hash of `text` as 16 lower-case hex digits (signatures and checksums).
std::string HashHex(const std::string& text);
// The same hash of the content of the file `path`, read in pieces (a record of any size costs no
// more memory than one piece); false when it cannot be read. Also the content's size in bytes.
bool FileHashHex(const std::string& path, std::string* hash, std::uintmax_t* bytes);

// "<body> <checksum>" for a body without line breaks.
std::string JournalRecord(const std::string& body);
// The body of a record line whose checksum holds; false for a cut-short or altered line.
bool JournalRecordBody(const std::string& line, std::string* body);

class RunJournal {
 public:
  // `kind` names the computation in the header line ("monte_carlo", "weight_sweep").
  explicit RunJournal(std::string kind) : kind_(std::move(kind)) {}
  ~RunJournal() { Close(); }
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  // Reads every "journal-*.txt" in `directory` (which need not exist) in name order and passes
  // each intact record's body to `accept`, which returns false for a body it cannot parse (the
  // line is then counted as skipped, like one that fails its checksum). False, with the file and
  // line, when a file's header names another kind or signature.
  bool Load(const std::string& directory, const std::string& signature,
            const std::function<bool(const std::string& body)>& accept, std::string* error);

  // Opens "journal-<rank>.txt" in `directory` (created if needed) for appending, writing the
  // header if the file is new and ending a cut-short last line.
  bool OpenForAppend(const std::string& directory, const std::string& signature, int rank,
                     std::string* error);
  // Appends one record and flushes it to the file system. Safe to call from several threads.
  bool Append(const std::string& body, std::string* error);
  void Close();

  // Lines skipped by the last Load (cut short by a kill, or not understood by `accept`).
  int skipped_lines() const { return skipped_lines_; }

  // Removes `directory`'s journal files (a fresh start); true if none is left.
  static bool Discard(const std::string& directory, std::string* error);

 private:
  std::string Header(const std::string& signature) const;

  std::string kind_;
  int skipped_lines_ = 0;
  std::FILE* file_ = nullptr;
  std::string path_;
  std::mutex mutex_;
};

}  // namespace dynid::data

#endif  // DYNID_DATA_RUN_JOURNAL_H_
