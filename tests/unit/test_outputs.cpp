// test_outputs.cpp — what a run writes survives other runs, other processes and tampering
// (issue 10): a claimed path is refused to a second claimant and freed when its holder dies; a
// new trace replaces a file only by rename, and a writer whose file was replaced or cut short
// under it fails loudly; a resumed run continues its trace (the rows it computes again are
// dropped, a segment is added); checkpoints carry a CRC-32 per dataset and refuse flipped bits,
// other types, non-finite values and other formats, and are never written non-finite.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "trace/checkpoint.hpp"
#include "trace/output_lock.hpp"
#include "trace/trace.hpp"
#include "trace/trace_reader.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

class OutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("strait_test_outputs_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs f in a child process that signals readiness through a pipe, then waits to be killed.
pid_t hold_in_child(const std::function<void()>& f) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    f();
    const char ok = 1;
    (void)!write(fds[1], &ok, 1);
    for (;;) pause();
  }
  close(fds[1]);
  char c = 0;
  (void)!read(fds[0], &c, 1);
  close(fds[0]);
  return pid;
}

void kill_child(pid_t pid) {
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
}

RunMeta meta(uint64_t seed = 7) {
  RunMeta m;
  m.run_name = "t";
  m.start_time = "2026-01-01T00:00:00Z";
  m.dc_names = {"a", "b"};
  m.world_size = 3;
  m.rank_dc = {0, 1, 1};
  m.seed = seed;
  return m;
}

void write_step(TraceWriter& w, int64_t s) {
  w.append_decision(DecisionRow{s, s + 2, "plan", "controller", "{}"});
  w.append_ranks({RankRow{s, 0, 0}, RankRow{s, 1, 1}, RankRow{s, 2, 1}});
  StepRow r;
  r.step = s;
  r.loss = 10.0 - static_cast<double>(s);
  w.append_step(r, {s, s + 1});
}

}  // namespace

// ---- defect 1: a second run may not touch what a live run holds ----

TEST_F(OutputsTest, AClaimedPathIsRefusedToAnotherProcess) {
  const std::string p = path("run.h5");
  auto mine = std::make_unique<OutputLock>(p);
  EXPECT_TRUE(fs::exists(OutputLock::lock_path(p)));
  const pid_t child = fork();
  if (child == 0) {
    const std::string e = what_of([&] { OutputLock other(p); });
    _exit(has(e, "in use by another live run") && has(e, "pid " + std::to_string(getppid())) ? 0 : 1);
  }
  int st = 0;
  waitpid(child, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the second claim was not refused by pid";
  // Also within one process (a trace and a checkpoint on one path).
  EXPECT_TRUE(has(what_of([&] { OutputLock again(p); }), "in use"));
  mine.reset();
  EXPECT_FALSE(fs::exists(OutputLock::lock_path(p)));
  EXPECT_EQ(what_of([&] { OutputLock later(p); }), "");
}

TEST_F(OutputsTest, ADeadHoldersClaimIsFree) {
  const std::string p = path("run.h5");
  const pid_t child = hold_in_child([&] { new OutputLock(p); });
  EXPECT_TRUE(has(what_of([&] { OutputLock l(p); }), "in use"));
  kill_child(child);  // SIGKILL: no destructor ran, the .lock file stays, its lock does not
  EXPECT_TRUE(fs::exists(OutputLock::lock_path(p)));
  EXPECT_EQ(what_of([&] { OutputLock l(p); }), "");
}

TEST_F(OutputsTest, AFileAnotherHdf5WriterHoldsIsRefused) {
  const std::string p = path("run.h5");
  const pid_t child = hold_in_child([&] {
    auto* w = new TraceWriter(p, false, meta());
    write_step(*w, 0);
  });
  const std::string e = what_of([&] { OutputLock l(p); });
  EXPECT_TRUE(has(e, "open for writing in another process")) << e;
  kill_child(child);
  EXPECT_EQ(read_trace(p).steps.size(), 1u);  // untouched
}

TEST_F(OutputsTest, ANewTraceNeverTruncatesAndAReplacedOneFailsLoudly) {
  const std::string p = path("run.h5");
  TraceWriter first(p, false, meta());
  write_step(first, 0);
  {  // Another writer replaces the path (by rename: the first file is not truncated)...
    TraceWriter second(p, true, meta());
    write_step(second, 0);
    second.close("complete");
  }
  EXPECT_FALSE(fs::exists(p + ".tmp." + std::to_string(getpid())));
  // ...and the first one finds out at its next commit instead of writing into nothing.
  const std::string e = what_of([&] { write_step(first, 1); });
  EXPECT_TRUE(has(e, "removed or replaced")) << e;
}

TEST_F(OutputsTest, ATraceCutShortUnderItsWriterFailsLoudly) {
  const std::string p = path("run.h5");
  TraceWriter w(p, false, meta());
  write_step(w, 0);
  ASSERT_EQ(truncate(p.c_str(), 0), 0);
  std::string e = what_of([&] { write_step(w, 1); });
  EXPECT_TRUE(has(e, "truncated") || has(e, "failed")) << e;
  EXPECT_FALSE(e.empty());
}

TEST_F(OutputsTest, ATraceThatCannotStartLeavesWhatWasThere) {
  const std::string p = path("adir");
  fs::create_directories(p);  // a folder where the file should go: the rename fails
  std::ofstream(p + "/keep") << "precious";
  EXPECT_FALSE(what_of([&] { TraceWriter w(p, true, meta()); }).empty());
  EXPECT_EQ(file_text(p + "/keep"), "precious");
  for (const auto& f : fs::directory_iterator(dir_))
    EXPECT_EQ(f.path().string().find(".tmp."), std::string::npos) << f.path();
}

// ---- defect 5: a resumed run continues its own trace ----

TEST_F(OutputsTest, AResumedRunContinuesItsTrace) {
  const std::string p = path("run.h5");
  {
    TraceWriter w(p, false, meta());
    for (int64_t s = 0; s < 10; ++s) write_step(w, s);
    w.close("interrupted", "stopped by signal before step 10");
  }
  EXPECT_EQ(TraceWriter::why_not_continue(p, 7, {"a", "b"}, 3), "");
  {
    RunMeta m = meta();
    m.start_time = "2026-01-02T00:00:00Z";
    TraceWriter w(p, m, TraceContinue{7, "ck.h5"});  // the checkpoint was at step 7
    EXPECT_EQ(w.last_step(), 6);
    for (int64_t s = 7; s < 13; ++s) write_step(w, s);
    w.close("complete");
  }
  const TraceData d = read_trace(p);
  ASSERT_EQ(d.steps.size(), 13u);
  for (int64_t s = 0; s < 13; ++s) {
    EXPECT_EQ(d.steps[s].step, s);
    EXPECT_EQ(d.steps[s].loss, 10.0 - static_cast<double>(s));
    EXPECT_EQ(d.offsets[2 * s], s);
  }
  EXPECT_EQ(d.offsets.size(), 26u);
  EXPECT_EQ(d.ranks.size(), 39u);
  // Decisions that applied from step 7 on were made again.
  int64_t prev = -1;
  for (const auto& r : d.decisions) {
    EXPECT_GE(r.effective_step, prev);
    prev = r.effective_step;
  }
  EXPECT_EQ(d.decisions.size(), 11u);  // effective 2..6 kept (made at steps 0..4), then 9..14
  EXPECT_EQ(d.status, "complete");
  EXPECT_EQ(d.meta.start_time, "2026-01-01T00:00:00Z");
  EXPECT_EQ(d.meta.resumed_from, "ck.h5");
  ASSERT_EQ(d.segments.size(), 2u);
  EXPECT_TRUE(has(d.segments[0], "\"status\": \"interrupted\"")) << d.segments[0];
  EXPECT_TRUE(has(d.segments[1], "\"first_step\": 7") && has(d.segments[1], "\"complete\"") &&
              has(d.segments[1], "ck.h5"))
      << d.segments[1];
}

TEST_F(OutputsTest, StepsNeverTracedAreNamed) {
  const std::string p = path("run.h5");
  {
    TraceWriter w(p, false, meta());
    for (int64_t s = 0; s < 7; ++s) write_step(w, s);
  }  // killed after a checkpoint at step 9, before steps 7 and 8 were traced
  {
    TraceWriter w(p, meta(), TraceContinue{9, "ck.h5"});
    EXPECT_EQ(w.last_step(), 6);
    write_step(w, 9);
    w.close("complete");
  }
  const TraceData d = read_trace(p);
  ASSERT_EQ(d.segments.size(), 2u);
  EXPECT_TRUE(has(d.segments[1], "\"missing_steps\": [7, 8]")) << d.segments[1];
  EXPECT_EQ(d.steps.size(), 8u);
}

TEST_F(OutputsTest, AnotherRunsTraceIsNotContinued) {
  const std::string p = path("run.h5");
  {
    TraceWriter w(p, false, meta(7));
    write_step(w, 0);
  }  // not closed: "running", as after a kill
  EXPECT_TRUE(has(TraceWriter::why_not_continue(p, 8, {"a", "b"}, 3), "seed"));
  EXPECT_TRUE(has(TraceWriter::why_not_continue(p, 7, {"a", "c"}, 3), "datacenters"));
  const std::string e = what_of([&] { TraceWriter w(p, meta(8), TraceContinue{1, "ck"}); });
  EXPECT_TRUE(has(e, "cannot be continued") && has(e, "seed")) << e;
  // A killed run's segment is marked so when the next one continues it.
  { TraceWriter w(p, meta(7), TraceContinue{1, "ck"}); }
  const TraceData d = read_trace(p);
  ASSERT_EQ(d.segments.size(), 2u);
  EXPECT_TRUE(has(d.segments[0], "killed")) << d.segments[0];
}

TEST_F(OutputsTest, AFailedRunSaysWhyInItsTrace) {
  const std::string p = path("run.h5");
  {
    TraceWriter w(p, false, meta());
    write_step(w, 0);
    w.close("failed", "non-finite loss at step 1, expert 0");
  }
  const TraceData d = read_trace(p);
  EXPECT_EQ(d.status, "failed");
  EXPECT_EQ(d.reason, "non-finite loss at step 1, expert 0");
}

// ---- defect 6: checkpoints refuse what was changed after they were written ----

namespace {

Checkpoint small_checkpoint() {
  Checkpoint ck;
  ck.next_step = 5;
  ck.seed = 7;
  ck.splits = {{1.0}, {0.5, 0.5}};
  ck.batch_shares = {0.5, 0.5};
  CheckpointExpert ex;
  ex.adam_t = 5;
  for (auto* g : {&ex.params, &ex.adam_m, &ex.adam_v})
    g->push_back(NamedTensor{"wte", {4, 3}, std::vector<float>(12, 0.25f)});
  ck.experts.push_back(ex);
  return ck;
}

// Opens a checkpoint read-write and runs f on it.
void tamper(const std::string& p, const std::function<void(hid_t)>& f) {
  const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  f(file);
  H5Fclose(file);
}

void write_floats(hid_t file, const char* name, const std::vector<float>& v) {
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Dclose(ds);
}

}  // namespace

TEST_F(OutputsTest, Crc32IsZlibs) {
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32("", 0), 0u);
}

TEST_F(OutputsTest, TamperedCheckpointsAreRefused) {
  const std::string good = path("good.h5");
  write_checkpoint(good, small_checkpoint());
  EXPECT_EQ(what_of([&] { read_checkpoint(good); }), "");
  const struct {
    const char* what;
    std::function<void(hid_t)> change;
    const char* expect;
  } cases[] = {
      {"a flipped bit", [](hid_t f) {
         std::vector<float> v(12, 0.25f);
         uint32_t bits;
         std::memcpy(&bits, &v[3], 4);
         bits ^= 0x40000000u;
         std::memcpy(&v[3], &bits, 4);
         write_floats(f, "/expert0/params/wte", v);
       }, "checksum mismatch"},
      {"an int32 tensor", [](hid_t f) {
         H5Ldelete(f, "/expert0/adam_m/wte", H5P_DEFAULT);
         const hsize_t dims[2] = {4, 3};
         const hid_t sp = H5Screate_simple(2, dims, nullptr);
         const hid_t ds = H5Dcreate2(f, "/expert0/adam_m/wte", H5T_STD_I32LE, sp, H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT);
         const int32_t zeros[12] = {};
         H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros);
         H5Dclose(ds);
         H5Sclose(sp);
       }, "is not float32"},
      {"a NaN with a matching checksum", [](hid_t f) {
         std::vector<float> v(12, 0.25f);
         v[0] = std::nanf("");
         write_floats(f, "/expert0/adam_v/wte", v);
         const hid_t ds = H5Dopen2(f, "/expert0/adam_v/wte", H5P_DEFAULT);
         const hid_t a = H5Aopen(ds, "crc32", H5P_DEFAULT);
         const int64_t crc = crc32(v.data(), v.size() * 4);
         H5Awrite(a, H5T_NATIVE_INT64, &crc);
         H5Aclose(a);
         H5Dclose(ds);
       }, "not finite"},
      {"another format", [](hid_t f) {
         H5Adelete(f, "format");
         const hid_t t = H5Tcopy(H5T_C_S1);
         H5Tset_size(t, 5);
         const hid_t sp = H5Screate(H5S_SCALAR);
         const hid_t a = H5Acreate2(f, "format", t, sp, H5P_DEFAULT, H5P_DEFAULT);
         H5Awrite(a, t, "other");
         H5Aclose(a);
         H5Sclose(sp);
         H5Tclose(t);
       }, "not a strait checkpoint"},
      {"format 1 (no checksums)", [](hid_t f) {
         const hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
         const int32_t one = 1;
         H5Awrite(a, H5T_NATIVE_INT32, &one);
         H5Aclose(a);
       }, "format_version 1"},
      {"a changed split", [](hid_t f) {
         const hid_t ds = H5Dopen2(f, "/splits/dc1", H5P_DEFAULT);
         const double v[2] = {0.9, 0.1};
         H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
         H5Dclose(ds);
       }, "checksum mismatch"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string p = path(std::string(c.what) + ".h5");
    fs::copy_file(good, p);
    tamper(p, c.change);
    const std::string e = what_of([&] { read_checkpoint(p); });
    EXPECT_TRUE(has(e, c.expect) && has(e, p)) << e;
  }
}

TEST_F(OutputsTest, ANonFiniteCheckpointIsNeverWritten) {
  const std::string p = path("ck.h5");
  write_checkpoint(p, small_checkpoint());
  const std::string before = file_text(p);
  Checkpoint bad = small_checkpoint();
  bad.next_step = 9;
  bad.experts[0].params[0].data[7] = std::numeric_limits<float>::infinity();
  const std::string e = what_of([&] { write_checkpoint(p, bad); });
  EXPECT_TRUE(has(e, "expert 0: params/wte[7] = inf") && has(e, "kept")) << e;
  EXPECT_EQ(file_text(p), before);
  EXPECT_EQ(read_checkpoint(p).next_step, 5);
  EXPECT_EQ(nonfinite_in(small_checkpoint()), "");
}
