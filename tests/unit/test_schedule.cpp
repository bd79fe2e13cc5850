// test_schedule.cpp — LinkSchedule on a simulated clock: constant, piecewise (from the CSV
// fixture tests/data/link_schedule.csv), step changes integrated mid-transfer, the Markov
// congestion process (seeded sequences, stationary frequencies), time scaling, the CSV reader's
// errors (file:line, key, expected) and make_link_schedule for every [[link]] schedule kind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "scenario/schedule.hpp"

namespace fs = std::filesystem;
using strait::ConfigError;
using strait::LinkSchedule;

namespace {

constexpr double kMB = 1e6;          // bytes
constexpr double k8Mbps = 8e6;       // bit/s: 1 MB per second
constexpr double kTol = 1e-9;        // seconds: these are exact up to rounding

fs::path source_dir() {
  if (const char* s = std::getenv("STRAIT_SOURCE_DIR")) return s;
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

fs::path fixture(const std::string& name) { return source_dir() / "tests/data" / name; }

// A CSV written to a per-process scratch folder.
fs::path write_csv(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("strait_test_schedule_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

struct ScratchCleanup {
  ~ScratchCleanup() {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("strait_test_schedule_" + std::to_string(getpid())), ec);
  }
} cleanup;

std::string csv_error(const fs::path& p) {
  try {
    strait::load_schedule_csv(p.string());
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for " << p;
  return "";
}

const std::vector<std::vector<double>> kP = {
    {0.90, 0.08, 0.02}, {0.20, 0.70, 0.10}, {0.30, 0.20, 0.50}};
const std::vector<double> kFactors = {1.0, 0.5, 0.2};

}  // namespace

TEST(Schedule, ConstantLinkTimesATransfer) {
  const LinkSchedule s = LinkSchedule::constant(k8Mbps, 0.05);
  EXPECT_EQ(s.kind(), "constant");
  EXPECT_DOUBLE_EQ(s.at(123.0).capacity_bps, k8Mbps);
  EXPECT_DOUBLE_EQ(s.at(-1.0).latency_s, 0.05);
  EXPECT_NEAR(s.transmit_time(0.0, kMB), 1.0, kTol);   // 8e6 bit at 8e6 bit/s
  EXPECT_NEAR(s.transmit_time(7.5, kMB / 4), 0.25, kTol);
  EXPECT_EQ(s.transmit_time(3.0, 0.0), 0.0);
}

TEST(Schedule, PiecewiseFromTheCsvFixture) {
  const LinkSchedule s = strait::load_schedule_csv(fixture("link_schedule.csv").string());
  EXPECT_EQ(s.kind(), "piecewise");
  EXPECT_DOUBLE_EQ(s.at(0.0).capacity_bps, 8e6);
  EXPECT_DOUBLE_EQ(s.at(0.0).latency_s, 0.010);
  EXPECT_DOUBLE_EQ(s.at(1.999).capacity_bps, 8e6);
  EXPECT_DOUBLE_EQ(s.at(2.0).capacity_bps, 4e6);  // a row holds from its own time on
  EXPECT_DOUBLE_EQ(s.at(2.0).latency_s, 0.020);
  EXPECT_DOUBLE_EQ(s.at(5.4).capacity_bps, 4e6);
  EXPECT_DOUBLE_EQ(s.at(5.5).capacity_bps, 16e6);
  EXPECT_DOUBLE_EQ(s.at(1e6).latency_s, 0.005);
  // From t = 1: 1 MB/s for 1 s (1 MB), 0.5 MB/s for 3.5 s (1.75 MB), then 2 MB/s.
  EXPECT_NEAR(s.transmit_time(1.0, 1.0 * kMB), 1.0, kTol);
  EXPECT_NEAR(s.transmit_time(1.0, 2.0 * kMB), 1.0 + 2.0, kTol);
  EXPECT_NEAR(s.transmit_time(1.0, 3.75 * kMB), 4.5 + 0.5, kTol);
}

TEST(Schedule, StepChangeMidTransferIntegrates) {
  // 8 Mbit/s until 0.5 s, then 16 Mbit/s: 0.5 MB in the first 0.5 s, the other 0.5 MB at 2 MB/s.
  const LinkSchedule s = LinkSchedule::step(8e6, 0.01, 0.5, 16e6, 0.002);
  EXPECT_EQ(s.kind(), "step");
  EXPECT_NEAR(s.transmit_time(0.0, kMB), 0.75, kTol);
  EXPECT_NEAR(s.transmit_time(0.5, kMB), 0.5, kTol);    // all after the step
  EXPECT_NEAR(s.transmit_time(0.25, 0.1 * kMB), 0.1, kTol);  // all before it
  EXPECT_DOUBLE_EQ(s.at(0.49).latency_s, 0.01);
  EXPECT_DOUBLE_EQ(s.at(0.5).latency_s, 0.002);
  // A drop: 16 → 4 Mbit/s at 1 s; 3 MB from 0: 2 MB in the first second, 1 MB at 0.5 MB/s.
  const LinkSchedule d = LinkSchedule::step(16e6, 0, 1.0, 4e6, 0);
  EXPECT_NEAR(d.transmit_time(0.0, 3 * kMB), 1.0 + 2.0, kTol);
}

TEST(Schedule, TimeScalingStretchesTheWholeWorld) {
  const double s = 10;
  const LinkSchedule base = LinkSchedule::step(8e6, 0.01, 0.5, 16e6, 0.002);
  const LinkSchedule run = base.scaled(s);
  EXPECT_DOUBLE_EQ(run.time_scale(), s);
  EXPECT_DOUBLE_EQ(run.at(0.0).capacity_bps, 8e6 / s);
  EXPECT_DOUBLE_EQ(run.at(0.0).latency_s, 0.01 * s);
  EXPECT_DOUBLE_EQ(run.at(4.99).capacity_bps, 8e6 / s);  // the step moves from 0.5 s to 5 s
  EXPECT_DOUBLE_EQ(run.at(5.0).capacity_bps, 16e6 / s);
  EXPECT_NEAR(run.transmit_time(0.0, kMB), 0.75 * s, 1e-9);
  // Scales compose, and the base is unchanged.
  EXPECT_DOUBLE_EQ(base.scaled(2).scaled(5).at(0).capacity_bps, 8e6 / 10);
  EXPECT_DOUBLE_EQ(base.at(0).capacity_bps, 8e6);
  EXPECT_THROW(base.scaled(0), std::invalid_argument);
  EXPECT_THROW(base.scaled(-1), std::invalid_argument);
}

TEST(Schedule, MarkovSameSeedSameSequenceDifferentSeedDifferent) {
  const LinkSchedule a = LinkSchedule::markov(1e9, 0.01, kFactors, kP, 0.1, 42);
  const LinkSchedule b = LinkSchedule::markov(1e9, 0.01, kFactors, kP, 0.1, 42);
  const LinkSchedule c = LinkSchedule::markov(1e9, 0.01, kFactors, kP, 0.1, 43);
  EXPECT_EQ(a.kind(), "markov");
  EXPECT_EQ(a.markov_state(0), 0);  // starts in state 0
  int differ = 0;
  for (uint64_t k = 0; k < 2000; ++k) {
    ASSERT_EQ(a.markov_state(k), b.markov_state(k)) << k;
    differ += a.markov_state(k) != c.markov_state(k);
  }
  EXPECT_GT(differ, 100);
  // Reading late intervals first gives the same states (the chain is cached, not re-drawn).
  const LinkSchedule late = LinkSchedule::markov(1e9, 0.01, kFactors, kP, 0.1, 42);
  EXPECT_EQ(late.markov_state(1999), a.markov_state(1999));
  // at() is base capacity × the factor of the state of the interval holding t.
  for (uint64_t k : {0u, 1u, 17u, 1234u}) {
    const double t = (static_cast<double>(k) + 0.5) * 0.1;
    EXPECT_DOUBLE_EQ(a.at(t).capacity_bps, 1e9 * kFactors[a.markov_state(k)]) << k;
    EXPECT_DOUBLE_EQ(a.at(t).latency_s, 0.01);
  }
}

TEST(Schedule, MarkovDeterministicRowsAreFollowed) {
  // 0 → 1 → 0 → ... with certainty; zero-probability moves are never taken.
  const LinkSchedule s = LinkSchedule::markov(1e9, 0, {1.0, 0.5}, {{0, 1}, {1, 0}}, 1.0, 7);
  for (uint64_t k = 0; k < 100; ++k) ASSERT_EQ(s.markov_state(k), static_cast<int>(k % 2));
  const LinkSchedule stay = LinkSchedule::markov(1e9, 0, {1.0, 0.5}, {{1, 0}, {0, 1}}, 1.0, 7);
  for (uint64_t k = 0; k < 100; ++k) ASSERT_EQ(stay.markov_state(k), 0);
}

TEST(Schedule, MarkovFrequenciesMatchTheStationaryDistribution) {
  // Stationary distribution of kP by power iteration.
  std::vector<double> pi = {1.0, 0.0, 0.0};
  for (int it = 0; it < 10000; ++it) {
    std::vector<double> nx(3, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) nx[j] += pi[i] * kP[i][j];
    pi = nx;
  }
  // 200000 intervals of a fast-mixing chain (second eigenvalue ~0.6): the standard error of
  // each frequency is below 0.002, so a tolerance of 0.01 (> 5 standard errors) never flakes
  // and still catches a wrong transition rule (e.g. sampling from the wrong row).
  const uint64_t n = 200000;
  const double tol = 0.01;
  for (uint64_t seed : {1u, 2u, 3u}) {
    const LinkSchedule s = LinkSchedule::markov(1e9, 0, kFactors, kP, 0.5, seed);
    std::vector<double> freq(3, 0.0);
    for (uint64_t k = 0; k < n; ++k) freq[s.markov_state(k)] += 1.0 / static_cast<double>(n);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(freq[j], pi[j], tol) << "seed " << seed << " state " << j;
  }
}

TEST(Schedule, MarkovTransferIntegratesAcrossStates) {
  const double dwell = 0.01;
  const LinkSchedule s = LinkSchedule::markov(8e6, 0, kFactors, kP, dwell, 5);
  // Brute force: walk the intervals from t0 = 0.0037 and add up the bits each can carry.
  const double t0 = 0.0037, bytes = 0.3 * kMB;
  double bits = bytes * 8, t = t0;
  uint64_t k = 0;
  for (;;) {
    const double cap = 8e6 * kFactors[s.markov_state(k)];
    const double end = static_cast<double>(k + 1) * dwell;
    if (end <= t) { ++k; continue; }
    if (bits <= cap * (end - t)) { t += bits / cap; break; }
    bits -= cap * (end - t);
    t = end;
    ++k;
  }
  EXPECT_NEAR(s.transmit_time(t0, bytes), t - t0, 1e-9);
  // Scaled by 3: three times the time.
  EXPECT_NEAR(s.scaled(3).transmit_time(3 * t0, bytes), 3 * (t - t0), 1e-9);
}

// changes(): what an external shaper (tc) must apply, and when — checked against at() on a
// fine grid, for a step, a scaled step and a Markov process (only state changes are listed).
TEST(Schedule, ChangesListEveryNewValueAndItsRunTime) {
  const LinkSchedule step = LinkSchedule::step(8e6, 0.01, 0.5, 16e6, 0.002).scaled(10);
  const auto c = step.changes(100);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c[0].t_s, 0.0);
  EXPECT_DOUBLE_EQ(c[0].state.capacity_bps, 8e5);
  EXPECT_DOUBLE_EQ(c[0].state.latency_s, 0.1);
  EXPECT_DOUBLE_EQ(c[1].t_s, 5.0);
  EXPECT_DOUBLE_EQ(c[1].state.capacity_bps, 16e5);
  EXPECT_EQ(step.changes(4.0).size(), 1u);  // the step at 5 s is beyond the horizon
  for (double scale : {1.0, 2.5}) {
    const LinkSchedule m = LinkSchedule::markov(1e9, 0.01, kFactors, kP, 0.1, 9).scaled(scale);
    const double until = 30 * scale;
    const auto ch = m.changes(until);
    ASSERT_GT(ch.size(), 20u);
    size_t i = 0;
    for (int j = 0; j < 3000; ++j) {  // probes a little after every 0.01 × scale
      const double t = (j * 0.01 + 1e-6) * scale;
      while (i + 1 < ch.size() && ch[i + 1].t_s <= t) ++i;
      ASSERT_DOUBLE_EQ(m.at(t).capacity_bps, ch[i].state.capacity_bps) << t;
    }
    for (size_t k = 1; k < ch.size(); ++k) {
      EXPECT_NE(ch[k].state.capacity_bps, ch[k - 1].state.capacity_bps) << k;
      EXPECT_GT(ch[k].t_s, ch[k - 1].t_s);
    }
  }
}

TEST(Schedule, FactoriesRejectBadDefinitions) {
  EXPECT_THROW(LinkSchedule::constant(0, 0), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::constant(-1e9, 0), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::constant(1e9, -0.001), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::piecewise({}), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::piecewise({{1, 1e9, 0}}), std::invalid_argument);  // first t != 0
  EXPECT_THROW(LinkSchedule::piecewise({{0, 1e9, 0}, {0, 1e9, 0}}), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::piecewise({{0, 1e9, 0}, {1, 0, 0}}), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::step(1e9, 0, 0, 1e9, 0), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::markov(1e9, 0, {}, {}, 1, 0), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::markov(1e9, 0, {1, 0}, {{1, 0}, {0, 1}}, 1, 0), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::markov(1e9, 0, {1, 0.5}, {{1, 0}}, 1, 0), std::invalid_argument);
  EXPECT_THROW(LinkSchedule::markov(1e9, 0, {1, 0.5}, {{1, 0}, {0.5, 0.4}}, 1, 0),
               std::invalid_argument);
  EXPECT_THROW(LinkSchedule::markov(1e9, 0, {1, 0.5}, {{1, 0}, {0.5, 0.5, 0}}, 1, 0),
               std::invalid_argument);
  EXPECT_THROW(LinkSchedule::markov(1e9, 0, {1, 0.5}, {{1, 0}, {0, 1}}, 0, 0),
               std::invalid_argument);
  try {
    LinkSchedule::markov(1e9, 0, {1, 0.5}, {{1, 0}, {0.5, 0.4}}, 1, 0);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 sums to 0.9; expected 1 within 1e-6"),
              std::string::npos) << e.what();
  }
}

TEST(Schedule, CsvErrorsNameFileLineKeyAndExpectation) {
  const std::string header = "time_s,capacity_gbps,latency_ms\n";
  struct Case {
    std::string name, text;
    int line;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"no_header.csv", "0,1,10\n", 1, "the header is \"0,1,10\"; expected the header line time_s,capacity_gbps,latency_ms"},
      {"wrong_header.csv", "time,capacity,latency\n0,1,10\n", 1, "expected the header line"},
      {"two_fields.csv", header + "0,1\n", 2, "2 fields in \"0,1\"; expected 3 comma-separated numbers"},
      {"not_a_number.csv", header + "0,1,10\n5,1,ten\n", 3, "latency_ms \"ten\" is not a number; expected a finite number (milliseconds)"},
      {"first_not_zero.csv", header + "\n# c\n1,1,10\n", 4, "the first row starts at time_s 1; expected time_s 0"},
      {"not_ascending.csv", header + "0,1,10\n5,1,10\n5,2,10\n", 4, "time_s 5 is not after the previous row's 5; expected time_s strictly ascending"},
      {"zero_capacity.csv", header + "0,0,10\n", 2, "capacity_gbps 0 is out of range; expected a number in [1e-06, 1e+06] (Gbit/s)"},
      {"negative_latency.csv", header + "0,1,-3\n", 2, "latency_ms -3 is out of range; expected a number in [0, 3.6e+06]"},
      {"no_rows.csv", header, 1, "no rows after the header"},
      {"empty.csv", "", 0, "no header line"},
      {"trailing_comma.csv", header + "0,1,10,\n", 2, "4 fields"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path p = write_csv(c.name, c.text);
    const std::string msg = csv_error(p);
    EXPECT_EQ(msg.rfind(p.string() + ":" + std::to_string(c.line) + ": schedule: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_NE(msg.find("; expected "), std::string::npos) << msg;
  }
  const std::string missing = csv_error(fs::path("/nonexistent/strait/sched.csv"));
  EXPECT_NE(missing.find("/nonexistent/strait/sched.csv:0: schedule: the file does not exist"),
            std::string::npos) << missing;
  // The fixtures the config tests use.
  EXPECT_NE(csv_error(fixture("link_schedule_bad_capacity.csv")).find(":4: schedule: capacity_gbps -2"),
            std::string::npos);
  EXPECT_NE(csv_error(fixture("link_schedule_bad_number.csv")).find(":3: schedule: capacity_gbps \"fast\""),
            std::string::npos);
  // CRLF line ends are fine.
  const LinkSchedule crlf = strait::load_schedule_csv(
      write_csv("crlf.csv", "time_s,capacity_gbps,latency_ms\r\n0,1,10\r\n2,2,10\r\n").string());
  EXPECT_DOUBLE_EQ(crlf.at(3).capacity_bps, 2e9);
}

TEST(Schedule, MakeLinkScheduleForEveryKind) {
  strait::LinkConfig l;
  l.from = "a", l.to = "b", l.capacity_gbps = 0.008, l.latency_ms = 10;
  EXPECT_STREQ(l.schedule_kind(), "constant");
  LinkSchedule s = strait::make_link_schedule(l, 2.0);
  EXPECT_EQ(s.kind(), "constant");
  EXPECT_DOUBLE_EQ(s.at(0).capacity_bps, 8e6 / 2);
  EXPECT_DOUBLE_EQ(s.at(0).latency_s, 0.020);

  strait::LinkConfig st = l;
  st.has_step = true, st.step_at_s = 1, st.step_capacity_gbps = 0.016, st.step_latency_ms = 1;
  EXPECT_STREQ(st.schedule_kind(), "step");
  s = strait::make_link_schedule(st, 1.0);
  EXPECT_EQ(s.kind(), "step");
  EXPECT_DOUBLE_EQ(s.at(0.99).capacity_bps, 8e6);
  EXPECT_DOUBLE_EQ(s.at(1.0).capacity_bps, 16e6);
  EXPECT_DOUBLE_EQ(s.at(1.0).latency_s, 0.001);

  strait::LinkConfig pw = l;
  pw.schedule = strait::read_schedule_csv(fixture("link_schedule.csv").string(), "link.0.schedule");
  EXPECT_STREQ(pw.schedule_kind(), "piecewise");
  s = strait::make_link_schedule(pw, 1.0);
  EXPECT_DOUBLE_EQ(s.at(3).capacity_bps, 4e6);  // the CSV rules, not capacity_gbps
  EXPECT_DOUBLE_EQ(s.at(6).latency_s, 0.005);

  strait::LinkConfig mk = l;
  mk.markov_factors = kFactors, mk.markov_transition = kP, mk.markov_dwell_s = 0.5;
  mk.markov_seed = 9;
  EXPECT_STREQ(mk.schedule_kind(), "markov");
  s = strait::make_link_schedule(mk, 4.0);
  const LinkSchedule ref = LinkSchedule::markov(8e6, 0.01, kFactors, kP, 0.5, 9);
  for (uint64_t k = 0; k < 50; ++k) {
    const double t = (static_cast<double>(k) + 0.5) * 0.5;
    EXPECT_DOUBLE_EQ(s.at(4 * t).capacity_bps, ref.at(t).capacity_bps / 4) << k;
  }
}
