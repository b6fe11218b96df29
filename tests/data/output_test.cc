#include "dynid/data/output.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

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
  ASSERT_TRUE(MakeDirectories(dir, &error)) << error;  // out_dir there before the run
  {
    OutputStage stage;
    ASSERT_TRUE(stage.Open(dir, &error)) << error;
    ASSERT_TRUE(stage.WriteText("partial.csv", "a\n1\n", &error)) << error;
  }  // destroyed without Commit: as if the experiment failed half-way
  int count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++count;
  EXPECT_EQ(count, 0);
}

TEST(OutputTest, UncommittedStageRemovesTheFoldersItCreatedWhileEmpty) {
  const std::string top = TempDir("stage_abort_created");
  std::string error;
  {
    OutputStage stage;
    ASSERT_TRUE(stage.Open(top + "/a/b/", &error)) << error;  // three folders created
    ASSERT_TRUE(stage.WriteText("partial.csv", "a\n1\n", &error)) << error;
  }
  EXPECT_FALSE(fs::exists(top)) << "a failed run left its output folders behind";
  // A folder that received anything else meanwhile stays, with what it holds.
  {
    OutputStage stage;
    ASSERT_TRUE(stage.Open(top + "/a/b", &error)) << error;
    std::ofstream(top + "/a/note.txt") << "kept\n";
  }
  EXPECT_FALSE(fs::exists(top + "/a/b"));
  EXPECT_TRUE(fs::exists(top + "/a/note.txt"));
  // A committed stage keeps its folders, of course.
  const std::string kept = TempDir("stage_commit_created") + "/x";
  {
    OutputStage stage;
    ASSERT_TRUE(stage.Open(kept, &error)) << error;
    ASSERT_TRUE(stage.WriteText("a.csv", "a\n1\n", &error)) << error;
    ASSERT_TRUE(stage.Commit(&error)) << error;
  }
  EXPECT_TRUE(fs::exists(kept + "/a.csv"));
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
  // The staging folder is gone; beside the results only the manifest of the committed set.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{kOutputManifest, "a.csv", "summary.json"}));
}

}  // namespace
}  // namespace dynid::data
