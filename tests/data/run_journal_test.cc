#include "dynid/data/run_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dynid::data {
namespace {

namespace fs = std::filesystem;

std::string FreshDirectory(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  fs::remove_all(dir);
  return dir;
}

std::multiset<std::string> LoadBodies(RunJournal* journal, const std::string& dir,
                                      const std::string& signature, bool* ok, std::string* error) {
  std::multiset<std::string> bodies;
  *ok = journal->Load(
      dir, signature,
      [&](const std::string& body) {
        if (body == "unparsable") return false;
        bodies.insert(body);
        return true;
      },
      error);
  return bodies;
}

TEST(RunJournalTest, FileHashReadInPiecesEqualsTheHashOfTheWholeContent) {
  // Content longer than one piece (1 MiB) with every byte value, so that a piece boundary, the
  // sign of char and the tail are exercised.
  std::string content(3 * (1 << 20) + 12345, '\0');
  for (size_t i = 0; i < content.size(); ++i)
    content[i] = static_cast<char>((i * 131 + i / 7) % 256);
  const std::string dir = FreshDirectory("file_hash");
  fs::create_directories(dir);
  const std::string path = dir + "/record.bin";
  std::ofstream(path, std::ios::binary).write(content.data(), content.size());
  std::string hash;
  std::uintmax_t bytes = 0;
  ASSERT_TRUE(FileHashHex(path, &hash, &bytes));
  EXPECT_EQ(bytes, content.size());
  EXPECT_EQ(hash, HashHex(content));
  EXPECT_EQ(HashHex(""), "cbf29ce484222325");   // FNV-1a 64's offset basis
  EXPECT_EQ(HashHex("a"), "af63dc4c8601ec8c");  // the published test vector
  content[2 * (1 << 20)] ^= 1;
  std::ofstream(path, std::ios::binary).write(content.data(), content.size());
  std::string changed;
  ASSERT_TRUE(FileHashHex(path, &changed, &bytes));
  EXPECT_NE(changed, hash);
  EXPECT_FALSE(FileHashHex(dir + "/missing.bin", &hash, &bytes));
}

TEST(RunJournalTest, ChecksumRejectsCutAndAlteredLines) {
  const std::string line = JournalRecord("R 1 2 0.5");
  std::string body;
  ASSERT_TRUE(JournalRecordBody(line, &body));
  EXPECT_EQ(body, "R 1 2 0.5");
  EXPECT_FALSE(JournalRecordBody(line.substr(0, line.size() - 1), &body));
  EXPECT_FALSE(JournalRecordBody(line.substr(0, 5), &body));
  std::string altered = line;
  altered[2] = '7';
  EXPECT_FALSE(JournalRecordBody(altered, &body));
  EXPECT_FALSE(JournalRecordBody("", &body));
  EXPECT_EQ(HashHex("a"), "af63dc4c8601ec8c");  // FNV-1a 64 reference value
}

TEST(RunJournalTest, ResumesPastACutLineKeepsRanksApartAndRefusesOtherSettings) {
  const std::string dir = FreshDirectory("run_journal_resume");
  std::string error;
  {
    RunJournal journal("monte_carlo");
    ASSERT_TRUE(journal.OpenForAppend(dir, "sigA", 0, &error)) << error;
    ASSERT_TRUE(journal.Append("first", &error)) << error;
    ASSERT_TRUE(journal.Append("unparsable", &error)) << error;
  }
  {  // A kill in the middle of a line.
    std::ofstream out(dir + "/journal-0.txt", std::ios::app);
    const std::string cut = JournalRecord("second");
    out << cut.substr(0, cut.size() / 2);
  }
  RunJournal journal("monte_carlo");
  bool ok = false;
  std::multiset<std::string> bodies = LoadBodies(&journal, dir, "sigA", &ok, &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(bodies, (std::multiset<std::string>{"first"}));
  EXPECT_EQ(journal.skipped_lines(), 2);  // the unparsable body and the cut line
  // Appending after the cut line starts a new line; another rank writes its own file.
  ASSERT_TRUE(journal.OpenForAppend(dir, "sigA", 0, &error)) << error;
  ASSERT_TRUE(journal.Append("second", &error)) << error;
  journal.Close();
  RunJournal other_rank("monte_carlo");
  ASSERT_TRUE(other_rank.OpenForAppend(dir, "sigA", 1, &error)) << error;
  ASSERT_TRUE(other_rank.Append("third", &error)) << error;
  other_rank.Close();
  EXPECT_TRUE(fs::exists(dir + "/journal-1.txt"));
  RunJournal reloaded("monte_carlo");
  bodies = LoadBodies(&reloaded, dir, "sigA", &ok, &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(bodies, (std::multiset<std::string>{"first", "second", "third"}));
  EXPECT_EQ(reloaded.skipped_lines(), 2);
  // Other settings or another kind of computation: refused, naming the file and line.
  RunJournal other_settings("monte_carlo");
  LoadBodies(&other_settings, dir, "sigB", &ok, &error);
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find("journal-0.txt:1: journal of other settings"), std::string::npos) << error;
  RunJournal other_kind("weight_sweep");
  LoadBodies(&other_kind, dir, "sigA", &ok, &error);
  EXPECT_FALSE(ok);
  // Discard removes the journal files; loading then finds nothing.
  ASSERT_TRUE(RunJournal::Discard(dir, &error)) << error;
  RunJournal fresh("monte_carlo");
  bodies = LoadBodies(&fresh, dir, "sigB", &ok, &error);
  EXPECT_TRUE(ok) << error;
  EXPECT_TRUE(bodies.empty());
  fs::remove_all(dir);
}

TEST(RunJournalTest, ConcurrentAppendsStayWholeLines) {
  const std::string dir = FreshDirectory("run_journal_threads");
  std::string error;
  RunJournal journal("monte_carlo");
  ASSERT_TRUE(journal.OpenForAppend(dir, "sig", 0, &error)) << error;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&journal, t] {
      std::string why;
      for (int i = 0; i < 25; ++i) {
        EXPECT_TRUE(journal.Append(std::string(200, 'a' + t) + std::to_string(i), &why)) << why;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  journal.Close();
  bool ok = false;
  RunJournal reloaded("monte_carlo");
  const std::multiset<std::string> bodies = LoadBodies(&reloaded, dir, "sig", &ok, &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(bodies.size(), 100u);
  EXPECT_EQ(reloaded.skipped_lines(), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dynid::data
