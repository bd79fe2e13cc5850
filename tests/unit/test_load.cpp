// test_load.cpp — load scenarios (src/scenario/load.hpp) on synthetic inputs: the step → axis
// mapping of piecewise schedules (start, stride, holding before the first and after the last
// point), the Markov loads (seeded, per-rank streams, dwell), every [[load]] kind read from a
// config (constant, step, step and time CSVs, Markov, trace replay of batch times and of GPU
// duty cycles) reaching Scenario::rank_speed, and the readers' errors with file and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "scenario/load.hpp"
#include "scenario/scenario.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

fs::path scratch() {
  const fs::path d = fs::temp_directory_path() / ("strait_test_load_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

struct Cleanup {
  ~Cleanup() {
    std::error_code ec;
    fs::remove_all(scratch(), ec);
  }
} cleanup;

fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p) << text;
  return p;
}

// 2 DCs of 2 ranks, 20 steps, with the given [[load]] entries.
Config config(const std::string& name, const std::string& loads, int steps = 20) {
  std::ofstream(scratch() / "corpus.txt") << "a corpus\n";
  const fs::path p = write(name + ".toml", "[[datacenter]]\nname = \"east\"\nranks = 2\n"
                                           "[[datacenter]]\nname = \"west\"\nranks = 2\n"
                                           "[model]\nheads = 4\n[train]\nsteps = " +
                                               std::to_string(steps) + "\ncorpus = \"" +
                                               (scratch() / "corpus.txt").string() + "\"\n" +
                                               loads);
  return load_config(p.string());
}

std::string error_of(const std::string& name, const std::string& loads, int steps = 20) {
  try {
    config(name, loads, steps);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for " << name;
  return "";
}

// A PAI-like trace: workers 0 and 1, iterations 1..6, batch times (least 400).
const char* kPai =
    ",worker,gpu,time,batch_time_norm\n"
    "0,0,25,1,500\n1,1,25,1,800\n2,0,25,2,400\n3,1,25,2,800\n4,0,25,3,500\n5,1,25,3,1000\n"
    "6,0,25,4,400\n7,1,25,4,800\n8,0,25,5,500\n9,1,25,5,800\n10,0,25,6,400\n11,1,25,6,800\n";

// A duty-cycle trace: pod 7, one sample every 60 s.
const char* kPods = "pod,t_s,gpu_util_pct\n7,0,0\n7,60,50\n7,120,97\n7,180,20\n7,240,0\n";

}  // namespace

TEST(Load, PiecewiseReadsTheAxisAtStartPlusStepTimesStride) {
  const SpeedSchedule s =
      SpeedSchedule::piecewise({{10, 0.5}, {20, 0.25}, {35, 1.0}}, /*start=*/12, /*stride=*/2.5);
  EXPECT_EQ(s.kind(), "piecewise");
  EXPECT_EQ(s.at(0), 0.5);    // t = 12
  EXPECT_EQ(s.at(3), 0.5);    // t = 19.5
  EXPECT_EQ(s.at(4), 0.25);   // t = 22
  EXPECT_EQ(s.at(9), 0.25);   // t = 34.5
  EXPECT_EQ(s.at(10), 1.0);   // t = 37: the last point holds from there on
  EXPECT_EQ(s.at(1000), 1.0);
  // Before the first point the first one holds; negative steps read as step 0.
  const SpeedSchedule early = SpeedSchedule::piecewise({{5, 0.5}, {6, 0.75}}, 0, 1);
  EXPECT_EQ(early.at(0), 0.5);
  EXPECT_EQ(early.at(-3), 0.5);
  EXPECT_EQ(early.at(6), 0.75);
  EXPECT_FALSE(early.always_full_speed());
  EXPECT_TRUE(SpeedSchedule::constant(1.0).always_full_speed());
}

TEST(Load, BadSchedulesAreRefused) {
  EXPECT_THROW(SpeedSchedule::constant(0), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::constant(1.5), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::piecewise({}, 0, 1), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::piecewise({{0, 0.5}, {0, 0.5}}, 0, 1), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::piecewise({{0, 0.5}}, 0, 0), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::piecewise({{0, -0.5}}, 0, 1), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::markov({1, 0.5}, {{1, 0}}, 1, 0, 0), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::markov({1, 0.5}, {{1, 0}, {0.5, 0.4}}, 1, 0, 0),
               std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::markov({1, 0.5}, {{1, 0}, {0, 1}}, 0, 0, 0), std::invalid_argument);
  EXPECT_THROW(SpeedSchedule::markov({1, 0}, {{1, 0}, {0, 1}}, 1, 0, 0), std::invalid_argument);
}

TEST(Load, MarkovIsSeededPerStreamAndDwells) {
  const std::vector<std::vector<double>> P = {{0.5, 0.5}, {0.5, 0.5}};
  const SpeedSchedule a = SpeedSchedule::markov({1.0, 0.5}, P, 3, 42, 1);
  const SpeedSchedule b = SpeedSchedule::markov({1.0, 0.5}, P, 3, 42, 1);
  const SpeedSchedule c = SpeedSchedule::markov({1.0, 0.5}, P, 3, 42, 2);
  EXPECT_EQ(a.at(0), 1.0);  // the chain starts in state 0
  int differ = 0, slow = 0;
  for (int64_t s = 0; s < 3000; ++s) {
    ASSERT_EQ(a.at(s), b.at(s)) << s;  // the same seed and stream: the same loads
    EXPECT_EQ(a.at(s), a.at(s / 3 * 3)) << s;  // constant over each dwell of 3 steps
    differ += a.at(s) != c.at(s);
    slow += a.at(s) == 0.5;
  }
  EXPECT_GT(differ, 1000);                 // another stream: independent
  EXPECT_NEAR(slow / 3000.0, 0.5, 0.06);  // the stationary share of the slow state
}

TEST(Load, EveryKindReachesTheScenario) {
  write("steps.csv", "step,speed\n0,1.0\n5,0.5\n8,0.25\n");
  write("seconds.csv", "# a comment\ntime_s,speed\n0,0.8\n30,0.4\n");
  write("pai.csv", kPai);
  write("pods.csv", kPods);
  const Config cfg = config(
      "kinds",
      "[[load]]\nranks = [0]\nkind = \"step\"\nspeed = 1.0\nat_step = 4\nspeed_after = 0.3\n"
      "[[load]]\nranks = [1]\nkind = \"csv\"\nfile = \"steps.csv\"\n"
      "[[load]]\ndatacenter = \"west\"\nkind = \"trace\"\nfile = \"pai.csv\"\n"
      "signal = \"batch_time\"\nworker = [0, 1]\n",
      /*steps=*/6);  // the replay covers iterations 1..6
  ASSERT_EQ(cfg.loads.size(), 3u);
  EXPECT_EQ(cfg.loads[2].ranks, (std::vector<int>{2, 3}));
  const Scenario sc(cfg);
  EXPECT_TRUE(sc.loaded());
  EXPECT_EQ(sc.rank_speed(0, 3), 1.0);
  EXPECT_EQ(sc.rank_speed(0, 4), 0.3);
  EXPECT_EQ(sc.rank_speed(1, 4), 1.0);
  EXPECT_EQ(sc.rank_speed(1, 5), 0.5);
  EXPECT_EQ(sc.rank_speed(1, 19), 0.25);
  // Batch times: speed = the file's least time (400) / time; step 0 reads iteration 1 (start =
  // the first time of the series), one iteration per step.
  EXPECT_DOUBLE_EQ(sc.rank_speed(2, 0), 400.0 / 500);
  EXPECT_DOUBLE_EQ(sc.rank_speed(2, 1), 1.0);
  EXPECT_DOUBLE_EQ(sc.rank_speed(3, 2), 400.0 / 1000);
  EXPECT_DOUBLE_EQ(sc.rank_speed(3, 5), 400.0 / 800);

  // Seconds, a start offset and a stride; duty cycles with a floor; Markov per rank.
  const Config more = config(
      "more",
      "[[load]]\nranks = [0]\nkind = \"csv\"\nfile = \"seconds.csv\"\nstart = 10\nstride = 4\n"
      "[[load]]\nranks = [1]\nkind = \"trace\"\nfile = \"pods.csv\"\nsignal = \"util_pct\"\n"
      "pod = 7\nstride = 12\nfloor = 0.2\n"
      "[[load]]\ndatacenter = \"west\"\nkind = \"markov\"\nspeeds = [1.0, 0.5]\n"
      "transition = [[0.5, 0.5], [0.5, 0.5]]\nseed = 9\n");
  const Scenario s2(more);
  EXPECT_EQ(s2.rank_speed(0, 4), 0.8);   // t = 26 s
  EXPECT_EQ(s2.rank_speed(0, 5), 0.4);   // t = 30 s
  EXPECT_EQ(s2.rank_speed(1, 0), 1.0);   // 0 % busy
  EXPECT_EQ(s2.rank_speed(1, 5), 0.5);   // t = 60 s: 50 % busy
  EXPECT_EQ(s2.rank_speed(1, 10), 0.2);  // t = 120 s: 97 % busy, held at the floor
  EXPECT_DOUBLE_EQ(s2.rank_speed(1, 15), 0.8);  // t = 180 s: 20 % busy
  int differ = 0;
  for (int64_t s = 0; s < 200; ++s) differ += s2.rank_speed(2, s) != s2.rank_speed(3, s);
  EXPECT_GT(differ, 40);  // the ranks of one Markov entry are loaded independently
  const Scenario again(more);
  for (int64_t s = 0; s < 200; ++s) ASSERT_EQ(again.rank_speed(3, s), s2.rank_speed(3, s));
}

TEST(Load, WithoutLoadNothingIsEmulated) {
  EXPECT_FALSE(Scenario(config("none", "")).loaded());
}

TEST(Load, CsvErrorsNameTheFileAndLine) {
  write("zero.csv", "step,speed\n0,1.0\n5,0\n");
  std::string e = error_of("zero", "[[load]]\nranks = [1]\nkind = \"csv\"\nfile = \"zero.csv\"\n");
  EXPECT_NE(e.find((scratch() / "zero.csv").string() +
                   ":3: load.0.file: speed 0 is out of range; expected a number in (0, 1]"),
            std::string::npos) << e;
  write("order.csv", "time_s,speed\n0,1.0\n5,0.5\n5,0.7\n");
  e = error_of("order", "[[load]]\nranks = [1]\nkind = \"csv\"\nfile = \"order.csv\"\n");
  EXPECT_NE(e.find("order.csv:4: load.0.file: time_s 5 is not after the previous row's 5"),
            std::string::npos) << e;
  write("header.csv", "step,slowness\n0,1\n");
  e = error_of("header", "[[load]]\nranks = [1]\nkind = \"csv\"\nfile = \"header.csv\"\n");
  EXPECT_NE(e.find("header.csv:1: load.0.file: the header is \"step,slowness\"; expected the "
                   "header line step,speed or time_s,speed"),
            std::string::npos) << e;
  write("word.csv", "step,speed\n0,fast\n");
  e = error_of("word", "[[load]]\nranks = [1]\nkind = \"csv\"\nfile = \"word.csv\"\n");
  EXPECT_NE(e.find("word.csv:2: load.0.file: speed \"fast\" is not a number"), std::string::npos)
      << e;
}

TEST(Load, TraceErrorsNameTheFileColumnAndSeries) {
  write("pai.csv", kPai);
  write("pods.csv", kPods);
  std::string e = error_of("col", "[[load]]\nranks = [0]\nkind = \"trace\"\nfile = \"pai.csv\"\n"
                                  "signal = \"batch_time\"\nworker = 0\ncolumn = \"batch_time\"\n");
  EXPECT_NE(e.find("pai.csv:1: load.0.file: no column \"batch_time\" (the values) in the header"),
            std::string::npos) << e;
  EXPECT_NE(e.find("expected one of the header's columns: , worker, gpu, time, batch_time_norm"),
            std::string::npos) << e;
  e = error_of("worker", "[[load]]\nranks = [0]\nkind = \"trace\"\nfile = \"pai.csv\"\n"
                         "signal = \"batch_time\"\nworker = 4\n");
  EXPECT_NE(e.find("load.0.worker: no worker 4 in"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of the file's workers: 0, 1"), std::string::npos) << e;
  e = error_of("group", "[[load]]\nranks = [0]\nkind = \"trace\"\nfile = \"pods.csv\"\n"
                        "signal = \"util_pct\"\nworker = 7\n");
  EXPECT_NE(e.find("pods.csv:1: load.0.file: no column \"worker\" (the series)"),
            std::string::npos) << e;
  write("busy.csv", "pod,t_s,gpu_util_pct\n7,0,10\n7,60,130\n");
  e = error_of("busy", "[[load]]\nranks = [0]\nkind = \"trace\"\nfile = \"busy.csv\"\n"
                       "signal = \"util_pct\"\npod = 7\nstride = 1\n", 5);
  EXPECT_NE(e.find("busy.csv:3: load.0.file: gpu_util_pct 130 is out of range; expected a "
                   "utilisation in [0, 100] percent"),
            std::string::npos) << e;
  // A replay must not run past the end of its series (it would only hold the last value).
  e = error_of("short", "[[load]]\nranks = [0]\nkind = \"trace\"\nfile = \"pai.csv\"\n"
                        "signal = \"batch_time\"\nworker = 0\n");
  EXPECT_NE(e.find("load.0.stride: step 19 reads time 20, past the end of worker 0 (6)"),
            std::string::npos) << e;
  write("pods.csv.gz", std::string("\x1f\x8b", 2) + "compressed");
  e = error_of("gz", "[[load]]\nranks = [0]\nkind = \"trace\"\nfile = \"pods.csv.gz\"\n"
                     "signal = \"util_pct\"\npod = 7\n");
  EXPECT_NE(e.find("pods.csv.gz:0: load.0.file: a gzip-compressed file; expected a plain CSV"),
            std::string::npos) << e;
}
