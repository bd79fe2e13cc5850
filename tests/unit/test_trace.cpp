// test_trace.cpp — the HDF5 trace: exact round trip through TraceWriter and read_trace,
// --force semantics, survival of a SIGKILLed writer (every committed step readable, status
// "running", also from h5py; killed before each write of a step, no step row without its rows),
// and reading while the writer still holds the file.
#include <gtest/gtest.h>

#include <cmath>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <dlfcn.h>
#include <hdf5.h>

#include "trace/trace.hpp"
#include "trace/trace_schema.hpp"
#include "trace/trace_reader.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

constexpr int kWidth = 4;  // global batch size of the test traces

// A fresh folder per test, removed at the end.
class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("strait_test_trace_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

RunMeta make_meta() {
  RunMeta m;
  m.config_text = "[run]\nname = \"t\"\n# ünïcode ✓\n";
  m.config_file = "configs/t.toml";
  m.version = "0.1.0";
  m.commit = "abcdef123456";
  m.start_time = "2025-01-02T03:04:05Z";
  m.run_name = "unit";
  m.hosts = {"node-a", "node-a", "node-b"};
  m.backends = {"cpu", "cuda-tf32", "cuda-tf32"};
  m.rank_dc = {0, 0, 1};
  m.dc_names = {"east", "west"};
  m.world_size = 3;
  m.seed = 0xFEDCBA9876543210ULL;  // above INT64_MAX: must survive as uint64
  m.experts = 2;
  m.params_per_expert = 123456789012LL;
  m.corpus_entropy_bits = 4.56789;
  m.corpus_bytes = 9876543210LL;
  m.resumed_from = "ck/step100.h5";
  m.mpi_thread_level = 3;
  m.clock_offset_ms = {0.0, -0.0125, 3.5};
  m.clock_error_ms = {0.0, 0.002, 0.004};
  return m;
}

StepRow make_step(int64_t s) {
  StepRow r;
  r.step = s;
  r.expert = static_cast<int32_t>(s % 2);
  r.loss = 5.0 - 0.25 * static_cast<double>(s) + 1e-13;
  r.tokens = 1024 + s;
  r.wall_ms = 100.5 + static_cast<double>(s);
  r.compute_ms = 60.25;
  r.sync_ms = 30.125;
  r.wait_ms = 5.0625;
  r.emulated_ms = 12.5;
  r.controller_ms = 0.75;
  r.trace_ms = 0.125;
  r.overlapped = static_cast<int32_t>(s % 2);
  return r;
}

std::vector<int64_t> make_offsets(int64_t s) {
  std::vector<int64_t> o(kWidth);
  for (int i = 0; i < kWidth; ++i) o[i] = s * 1000003 + i * (int64_t{1} << 40);
  return o;
}

std::vector<RankRow> make_ranks(int64_t s) {
  std::vector<RankRow> v;
  for (int32_t r = 0; r < 3; ++r)
    v.push_back(RankRow{s, r, r < 2 ? 0 : 1, 10.0 + r + s, 2.5 * r, 0.5, 1.0 / 3.0, r < 2 ? 0.5 : 1.0});
  return v;
}

std::vector<LinkRow> make_links(int64_t s) {
  return {LinkRow{s, 0, 1, 1.5e6 + s, 512.0, 12.0, 0.99, 1.05, 1.01, 0.97, 1.02, 0.35, 20.25, 3, 0.5, 11.5, 1.0, 20.0, 1.0},
          LinkRow{s, 1, 0, 2.5e6, 0.0, 20.0, 1.0, std::nan(""), std::nan(""), std::nan(""), std::nan(""),
                  std::nan(""), std::nan(""), 0, std::nan(""),
                  std::nan(""), 1.25, 5.0, std::nan("")}};
}

void expect_step(const StepRow& a, const StepRow& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.expert, b.expert);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.wall_ms, b.wall_ms);
  EXPECT_EQ(a.compute_ms, b.compute_ms);
  EXPECT_EQ(a.sync_ms, b.sync_ms);
  EXPECT_EQ(a.wait_ms, b.wait_ms);
  EXPECT_EQ(a.emulated_ms, b.emulated_ms);
  EXPECT_EQ(a.controller_ms, b.controller_ms);
  EXPECT_EQ(a.trace_ms, b.trace_ms);
  EXPECT_EQ(a.overlapped, b.overlapped);
}

void expect_rank(const RankRow& a, const RankRow& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.dc, b.dc);
  EXPECT_EQ(a.compute_ms, b.compute_ms);
  EXPECT_EQ(a.sync_ms, b.sync_ms);
  EXPECT_EQ(a.wait_ms, b.wait_ms);
  EXPECT_EQ(a.emulated_ms, b.emulated_ms);
  EXPECT_EQ(a.split, b.split);
}

void expect_link(const LinkRow& a, const LinkRow& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.control_bytes, b.control_bytes);
  EXPECT_EQ(a.wire_ms, b.wire_ms);
  EXPECT_EQ(a.goodput_gbps, b.goodput_gbps);
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  EXPECT_TRUE(same(a.stream_gbps, b.stream_gbps));
  EXPECT_TRUE(same(a.backed_gbps, b.backed_gbps));
  EXPECT_TRUE(same(a.late_gbps, b.late_gbps));
  EXPECT_TRUE(same(a.late_stream_gbps, b.late_stream_gbps));
  EXPECT_TRUE(same(a.held_gbps, b.held_gbps));
  EXPECT_TRUE(same(a.latency_ms, b.latency_ms));
  EXPECT_EQ(a.latency_samples, b.latency_samples);
  EXPECT_TRUE(same(a.queued_ms, b.queued_ms));
  EXPECT_TRUE(same(a.shaper_busy_ms, b.shaper_busy_ms));
  EXPECT_EQ(a.configured_gbps, b.configured_gbps);
  EXPECT_EQ(a.configured_latency_ms, b.configured_latency_ms);
  EXPECT_TRUE(same(a.enforced_gbps, b.enforced_gbps));
}

void expect_meta(const RunMeta& a, const RunMeta& b) {
  EXPECT_EQ(a.config_text, b.config_text);
  EXPECT_EQ(a.config_file, b.config_file);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.commit, b.commit);
  EXPECT_EQ(a.start_time, b.start_time);
  EXPECT_EQ(a.run_name, b.run_name);
  EXPECT_EQ(a.hosts, b.hosts);
  EXPECT_EQ(a.backends, b.backends);
  EXPECT_EQ(a.rank_dc, b.rank_dc);
  EXPECT_EQ(a.dc_names, b.dc_names);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.experts, b.experts);
  EXPECT_EQ(a.params_per_expert, b.params_per_expert);
  EXPECT_EQ(a.corpus_entropy_bits, b.corpus_entropy_bits);
  EXPECT_EQ(a.corpus_bytes, b.corpus_bytes);
  EXPECT_EQ(a.resumed_from, b.resumed_from);
  EXPECT_EQ(a.mpi_thread_level, b.mpi_thread_level);
  EXPECT_EQ(a.clock_offset_ms, b.clock_offset_ms);
  EXPECT_EQ(a.clock_error_ms, b.clock_error_ms);
}

// One step as the trainer writes it: ranks, links, decisions, then the committing append_step.
void write_step(TraceWriter& w, int64_t s) {
  w.append_ranks(make_ranks(s));
  w.append_links(make_links(s));
  w.append_step(make_step(s), make_offsets(s));
}

bool have_h5py() {
  return fs::exists("/usr/bin/python3") &&
         std::system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") == 0;
}

// Runs a Python snippet with h5py on the trace (argv[1]); true when it exits 0.
bool h5py_check(const std::string& trace, const std::string& code) {
  const std::string script = trace + ".check.py";
  std::ofstream(script) << code;
  const std::string cmd = "/usr/bin/python3 " + script + " " + trace;
  return std::system(cmd.c_str()) == 0;
}

std::string read_text(const std::string& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// In a child process: create a trace, commit n steps, start one more (ranks only), SIGKILL.
void write_and_kill(const std::string& p, int n) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    TraceWriter w(p, false, make_meta());
    for (int s = 0; s < n; ++s) write_step(w, s);
    w.append_ranks(make_ranks(n));  // an uncommitted step
    raise(SIGKILL);
    _exit(3);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(WTERMSIG(status), SIGKILL);
}

}  // namespace

TEST_F(TraceTest, RoundTripIsExact) {
  const std::string p = path("nested/folder/run.h5");  // parents are created
  const RunMeta meta = make_meta();
  std::vector<DecisionRow> decisions = {
      {0, 2, "forecaster", "gm11", R"({"pred":[1.5,2.25],"note":"ü"})"},
      {1, 3, "balancer", "proportional", ""},
      {2, 4, "path_selector", "mdp", std::string(5000, 'x')},
  };
  {
    TraceWriter w(p, false, meta);
    for (int64_t s = 0; s < 3; ++s) {
      w.append_ranks(make_ranks(s));
      w.append_links(make_links(s));
      w.append_decision(decisions[s]);
      w.append_step(make_step(s), make_offsets(s));
    }
    w.close("complete");
    w.close("ignored");  // a second close does nothing
  }
  const TraceData d = read_trace(p);
  EXPECT_EQ(d.status, "complete");
  EXPECT_EQ(d.schema, trace_schema::kSchemaVersion);
  expect_meta(d.meta, meta);
  ASSERT_EQ(d.steps.size(), 3u);
  for (int64_t s = 0; s < 3; ++s) expect_step(d.steps[s], make_step(s));
  ASSERT_EQ(d.offsets_width, kWidth);
  ASSERT_EQ(d.offsets.size(), 3u * kWidth);
  for (int64_t s = 0; s < 3; ++s)
    for (int i = 0; i < kWidth; ++i) EXPECT_EQ(d.offsets[s * kWidth + i], make_offsets(s)[i]);
  ASSERT_EQ(d.ranks.size(), 9u);
  for (int64_t s = 0; s < 3; ++s)
    for (int r = 0; r < 3; ++r) expect_rank(d.ranks[s * 3 + r], make_ranks(s)[r]);
  ASSERT_EQ(d.links.size(), 6u);
  for (int64_t s = 0; s < 3; ++s)
    for (int l = 0; l < 2; ++l) expect_link(d.links[s * 2 + l], make_links(s)[l]);
  ASSERT_EQ(d.decisions.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.decisions[i].step, decisions[i].step);
    EXPECT_EQ(d.decisions[i].effective_step, decisions[i].effective_step);
    EXPECT_EQ(d.decisions[i].slot, decisions[i].slot);
    EXPECT_EQ(d.decisions[i].policy, decisions[i].policy);
    EXPECT_EQ(d.decisions[i].detail, decisions[i].detail);
  }
  // without_offsets skips the largest table only
  const TraceData d2 = read_trace(p, /*with_offsets=*/false);
  EXPECT_EQ(d2.steps.size(), 3u);
  EXPECT_TRUE(d2.offsets.empty());
}

TEST_F(TraceTest, EmptyTraceAndManyRows) {
  const std::string p = path("big.h5");
  {
    TraceWriter w(p, false, RunMeta{});  // empty strings and arrays
    TraceData d0 = read_trace(p);        // no steps yet, no /offsets yet
    EXPECT_EQ(d0.status, "running");
    EXPECT_TRUE(d0.steps.empty());
    EXPECT_EQ(d0.offsets_width, 0);
    EXPECT_TRUE(d0.meta.hosts.empty());
    for (int64_t s = 0; s < 600; ++s) write_step(w, s);  // crosses several 256-row chunks
    w.close("interrupted");
  }
  const TraceData d = read_trace(p);
  EXPECT_EQ(d.status, "interrupted");
  ASSERT_EQ(d.steps.size(), 600u);
  EXPECT_EQ(d.steps[599].step, 599);
  EXPECT_EQ(d.offsets[599 * kWidth + 3], make_offsets(599)[3]);
  EXPECT_EQ(d.ranks.size(), 1800u);
  EXPECT_EQ(d.meta.config_text, "");
}

TEST_F(TraceTest, ExistingFileNeedsForce) {
  const std::string p = path("run.h5");
  fs::create_directories(dir_);
  std::ofstream(p) << "precious";
  try {
    TraceWriter w(p, false, make_meta());
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(p), "precious");
  {
    TraceWriter w(p, true, make_meta());
    write_step(w, 0);
    w.close("complete");
  }
  const TraceData d = read_trace(p);
  EXPECT_EQ(d.status, "complete");
  EXPECT_EQ(d.steps.size(), 1u);
}

TEST_F(TraceTest, UncreatableFileThrowsWithPath) {
  fs::create_directories(dir_ / "adir.h5");  // a folder where the file should be
  const std::string p = path("adir.h5");
  try {
    TraceWriter w(p, true, make_meta());
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST_F(TraceTest, ReaderRejectsMissingAndForeignFiles) {
  const std::string missing = path("nope.h5");
  try {
    read_trace(missing);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  fs::create_directories(dir_);
  const std::string text = path("text.h5");
  std::ofstream(text) << "not hdf5";
  try {
    read_trace(text);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST_F(TraceTest, KilledWriterKeepsCommittedSteps) {
  const std::string p = path("killed.h5");
  write_and_kill(p, 5);
  const TraceData d = read_trace(p);
  EXPECT_EQ(d.status, "running");
  ASSERT_EQ(d.steps.size(), 5u);
  for (int64_t s = 0; s < 5; ++s) expect_step(d.steps[s], make_step(s));
  ASSERT_EQ(d.offsets.size(), 5u * kWidth);
  EXPECT_EQ(d.offsets[4 * kWidth + 2], make_offsets(4)[2]);
  EXPECT_EQ(d.ranks.size(), 15u);  // the uncommitted step's ranks are not reported
  expect_meta(d.meta, make_meta());
}

TEST_F(TraceTest, KilledWriterReadableFromH5py) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 with h5py not available";
  const std::string p = path("killed.h5");
  write_and_kill(p, 5);
  EXPECT_TRUE(h5py_check(p, R"(import sys, h5py
f = h5py.File(sys.argv[1], "r", locking=False)
st = f["meta"].attrs["status"]
st = st.decode() if isinstance(st, bytes) else st
assert st == "running", st
assert f["steps"].shape == (5,), f["steps"].shape
assert list(f["steps"]["step"]) == [0, 1, 2, 3, 4]
assert f["offsets"].shape == (5, 4), f["offsets"].shape
assert int(f["meta"].attrs["seed"]) == 0xFEDCBA9876543210
)"));
}

namespace {

// The rows on disk, as an outside reader (h5py, h5dump) sees them: no cropping by read_trace.
struct RawRows {
  hsize_t steps = 0, offsets = 0, ranks = 0, links = 0, decisions = 0;
};
RawRows raw_rows(const std::string& p) {
  RawRows r;
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_file_locking(fapl, false, true);
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (f < 0) return r;
  auto rows = [&](const char* name) -> hsize_t {
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) return 0;
    const hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    const hid_t sp = H5Dget_space(ds);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(sp, dims, nullptr);
    H5Sclose(sp);
    H5Dclose(ds);
    return dims[0];
  };
  r.steps = rows("steps");
  r.offsets = rows("offsets");
  r.ranks = rows("ranks");
  r.links = rows("links");
  r.decisions = rows("decisions");
  H5Fclose(f);
  return r;
}

// A step as the trainer writes it when a decision was made in it: the decision row first.
void write_decided_step(TraceWriter& w, int64_t s) {
  w.append_decision(DecisionRow{s, s + 2, "balancer", "proportional", "{\"step\":" + std::to_string(s) + "}"});
  write_step(w, s);
}

// The writes of one step, counted at the system call, and a kill before the n-th of them: the
// file on disk is then what a job killed at that moment leaves.
int g_writes = 0;        // pwrite calls seen while counting
int g_kill_before = 0;   // > 0: SIGKILL this process before that pwrite

}  // namespace

// HDF5's sec2 driver writes with pwrite; this definition, in the executable, comes first in the
// dynamic lookup, counts the call and may kill the process, then hands it on to the next one.
extern "C" ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  using Fn = ssize_t (*)(int, const void*, size_t, off_t);
  static const Fn next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pwrite"));
  ++g_writes;
  if (g_kill_before > 0 && g_writes == g_kill_before) raise(SIGKILL);
  return next(fd, buf, n, off);
}

// A job killed inside a step's flush, before each of its writes in turn: whatever the moment, a
// step row an outside reader sees has its offsets, ranks and links on disk. Writing them before
// the step row is not enough (HDF5 writes its cached metadata back in its own order); they are
// flushed before the step row is written.
TEST_F(TraceTest, KilledAtEveryWriteOfAStepNoStepRowOutrunsItsRows) {
  fs::create_directories(dir_);
  constexpr int kBefore = 100;  // steps written first: every table past its first chunk
  {  // how many writes the steps after kBefore take, here, unkilled
    TraceWriter w(path("count.h5"), false, make_meta());
    for (int64_t s = 0; s < kBefore; ++s) write_decided_step(w, s);
    g_writes = 0;
    for (int64_t s = kBefore; s < kBefore + 3; ++s) write_decided_step(w, s);
  }
  const int writes = g_writes;
  ASSERT_GT(writes, 3) << "pwrite is not how HDF5 writes here: the kills would miss";
  const hsize_t ranks_per_step = make_ranks(0).size(), links_per_step = make_links(0).size();
  for (int n = 1; n <= writes; ++n) {
    const std::string p = path("k" + std::to_string(n) + ".h5");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        TraceWriter w(p, false, make_meta());
        for (int64_t s = 0; s < kBefore; ++s) write_decided_step(w, s);
        g_writes = 0;
        g_kill_before = n;
        for (int64_t s = kBefore;; ++s) write_decided_step(w, s);
      } catch (...) {
      }
      _exit(2);  // only if the writer threw: not the SIGKILL the parent expects
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "write " << n;
    const RawRows r = raw_rows(p);
    EXPECT_GE(r.steps, static_cast<hsize_t>(kBefore)) << "killed before write " << n;
    EXPECT_GE(r.offsets, r.steps) << "killed before write " << n;
    EXPECT_GE(r.ranks, r.steps * ranks_per_step) << "killed before write " << n;
    EXPECT_GE(r.links, r.steps * links_per_step) << "killed before write " << n;
    EXPECT_GE(r.decisions, r.steps) << "killed before write " << n;
    fs::remove(p);
  }
}

TEST_F(TraceTest, ReadWhileWriterHoldsTheFile) {
  const std::string p = path("live.h5");
  TraceWriter w(p, false, make_meta());
  for (int64_t s = 0; s < 3; ++s) write_step(w, s);
  w.append_ranks(make_ranks(3));  // step 3 in progress
  {
    const TraceData d = read_trace(p);  // same process, locking disabled
    EXPECT_EQ(d.status, "running");
    ASSERT_EQ(d.steps.size(), 3u);
    EXPECT_EQ(d.ranks.size(), 9u);
    expect_step(d.steps[2], make_step(2));
  }
  if (have_h5py()) {  // another process, while this one holds the file (and its lock)
    EXPECT_TRUE(h5py_check(p, R"(import sys, h5py
f = h5py.File(sys.argv[1], "r", locking=False)
assert f["steps"].shape == (3,), f["steps"].shape
assert list(f["offsets"][2]) == [2 * 1000003 + i * (1 << 40) for i in range(4)]
)"));
  }
  w.append_step(make_step(3), make_offsets(3));
  EXPECT_EQ(read_trace(p).steps.size(), 4u);
  w.close("complete");
  EXPECT_EQ(read_trace(p).status, "complete");
}

TEST_F(TraceTest, OffsetsWidthIsFixed) {
  const std::string p = path("width.h5");
  EXPECT_DEATH(
      {
        TraceWriter w(p, false, make_meta());
        write_step(w, 0);
        w.append_step(make_step(1), std::vector<int64_t>(kWidth + 1));
      },
      "corpus offsets");
}
