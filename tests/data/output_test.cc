#include "dynid/data/output.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace dynid::data {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dynid_output_test_" + name);
  fs::remove_all(dir);
  return dir.string();
}

TEST(OutputTest, WriteFileAtomicallyLeavesNoTemporary) {
  const std::string dir = TempDir("atomic");
  std::string error;
  ASSERT_TRUE(MakeDirectories(dir, &error)) << error;
  const std::string path = dir + "/a.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n", &error)) << error;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "hello");
  int count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++count;
  EXPECT_EQ(count, 1);
}

TEST(OutputTest, WriteIntoMissingDirectoryFailsWithPath) {
  std::string error;
  EXPECT_FALSE(WriteFileAtomically("/nonexistent_dynid_dir/x.csv", "x", &error));
  EXPECT_NE(error.find("/nonexistent_dynid_dir/x.csv"), std::string::npos) << error;
}

TEST(OutputTest, UncommittedStageLeavesOutDirUntouched) {
  const std::string dir = TempDir("stage_abort");
  std::string error;
  {
    OutputStage stage;
    ASSERT_TRUE(stage.Open(dir, &error)) << error;
    ASSERT_TRUE(stage.WriteText("partial.csv", "a\n1\n", &error)) << error;
  }  // destroyed without Commit: as if the experiment failed half-way
  int count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++count;
  EXPECT_EQ(count, 0);
}

TEST(OutputTest, CommitMovesEveryFile) {
  const std::string dir = TempDir("stage_commit");
  std::string error;
  OutputStage stage;
  ASSERT_TRUE(stage.Open(dir, &error)) << error;
  ASSERT_TRUE(stage.WriteText("a.csv", "a\n1\n", &error)) << error;
  ASSERT_TRUE(stage.WriteJson("summary.json", {{"x", 1}}, &error)) << error;
  std::vector<std::string> committed;
  ASSERT_TRUE(stage.Commit(&error, &committed)) << error;
  EXPECT_EQ(committed.size(), 2u);
  EXPECT_TRUE(fs::exists(dir + "/a.csv"));
  EXPECT_TRUE(fs::exists(dir + "/summary.json"));
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  // The two results and the manifest of the result set; the staging folder is gone.
  EXPECT_EQ(names, (std::set<std::string>{"a.csv", "summary.json", kOutputManifest}));
}

}  // namespace
}  // namespace dynid::data
