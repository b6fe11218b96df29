// experiments/common/mpi_job — a program's place in an MPI job, for the programs that share
// independent work items out over MPI ranks (weight_sweep_mpi, the studies' *_mpi Monte Carlo
// programs). Header-only on purpose: the same program source is compiled twice, once plainly
// (one rank, no MPI) and once with DYNID_WITH_MPI for the MPI build, so every translation unit
// of one program sees the same definition.
//
// The ranks do not share memory or files: each computes its share of the items and journals it
// in its own file; Gather then hands rank 0 every rank's finished records (as text lines) through
// MPI, so no shared file system is needed.
#ifndef DYNID_EXPERIMENTS_COMMON_MPI_JOB_H_
#define DYNID_EXPERIMENTS_COMMON_MPI_JOB_H_

#include <string>
#include <vector>

#ifdef DYNID_WITH_MPI
#include <mpi.h>
#endif

namespace dynid::cli {

class MpiJob {
 public:
  // Initialises MPI in the MPI build (before the flags are parsed: MPI may remove its own
  // arguments); a single rank otherwise.
  MpiJob(int* argc, char*** argv) {
#ifdef DYNID_WITH_MPI
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
    (void)argc;
    (void)argv;
#endif
  }
  ~MpiJob() {
#ifdef DYNID_WITH_MPI
    MPI_Finalize();
#endif
  }
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Every rank calls this once with its own records (`lines`, newline-terminated) and whether it
  // succeeded; on rank 0 `lines` becomes the concatenation of every rank's lines (rank order),
  // elsewhere it is left empty. False on every rank when any rank failed.
  static bool Gather(bool ok, std::string* lines, std::string* error) {
#ifdef DYNID_WITH_MPI
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int local_ok = ok ? 1 : 0, all_ok = 0;
    MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok && ok) *error = "another MPI rank failed";
    const int length = static_cast<int>(lines->size());
    std::vector<int> lengths(size), offsets(size, 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank == 0) {
      long long sum = 0;
      for (int r = 0; r < size; ++r) {
        offsets[r] = static_cast<int>(sum);
        sum += lengths[r];
      }
      all.resize(sum);
    }
    MPI_Gatherv(lines->data(), length, MPI_CHAR, rank == 0 ? all.data() : nullptr, lengths.data(),
                offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    *lines = std::move(all);
    return all_ok != 0;
#else
    (void)lines;
    (void)error;
    return ok;
#endif
  }

  // Waits until every rank has arrived (e.g. all have read the journals before any appends).
  static void Barrier() {
#ifdef DYNID_WITH_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace dynid::cli

#endif  // DYNID_EXPERIMENTS_COMMON_MPI_JOB_H_
