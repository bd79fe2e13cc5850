// test_forecasters.cpp — the forecaster policies ewma, gm11, gmc and oracle (src/control/
// forecaster_*.cpp) on a ControllerView with a hand-made history: one series forecaster per rank
// fed from view.history(), the lead from the effective step, the per-rank model/why/C/P of the
// Forecast, [control.forecast] reaching the series, and the oracle's compute / true speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "control/policy.hpp"
#include "control/view.hpp"
#include "scenario/scenario.hpp"
#include "tests/common/scratch.hpp"
#include "validate/validate.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

Config config(const std::string& name, const std::string& extra) {
  const fs::path dir = strait::test::scratch_dir("fc");
  std::ofstream(dir / "corpus.txt") << "a small corpus for the forecaster tests\n";
  const fs::path p = dir / (name + ".toml");
  std::ofstream(p) << "[model]\nlayers = 1\nd_model = 16\nheads = 4\nd_ff = 32\nseq_len = 8\n"
                      "[train]\nsteps = 100\nglobal_batch = 4\ncorpus = \""
                   << (dir / "corpus.txt").string() << "\"\n"
                   << "[[datacenter]]\nname = \"a\"\nranks = 1\n"
                      "[[datacenter]]\nname = \"b\"\nranks = 2\nspeed = [0.5, 1.0]\n"
                   << extra;
  return load_valid_config(p.string());
}

struct View {
  Config cfg;
  std::shared_ptr<const Scenario> sc;
  ControllerView view;
  explicit View(Config c)
      : cfg(std::move(c)), sc(std::make_shared<const Scenario>(cfg)),
        view(make_world(cfg, *sc, true), sc, Plan{}) {}
  // Step s completed with these per-rank compute and emulated times (and scenario speeds).
  void record(int64_t s, const std::vector<double>& compute, const std::vector<double>& emulated,
              const std::vector<double>& speed = {}) {
    StepRecord r;
    r.step = s;
    for (size_t k = 0; k < compute.size(); ++k) {
      r.ranks.push_back(RankStep{compute[k], emulated[k], 1, 0, 0.5, 0});
      if (k < speed.size()) r.ranks.back().speed = speed[k];
    }
    view.record(r);
  }
};

// Rank 0 grows 3% a step, rank 1 is flat, rank 2 oscillates without a trend.
std::vector<double> loads(int64_t s) {
  return {100 * std::exp(0.03 * s), 50.0, s % 2 ? 80.0 : 84.0};
}

TEST(Forecasters, PoliciesAreRegistered) {
  const Config cfg = config("reg", "");
  for (const char* n : {"ewma", "gm11", "gmc", "oracle"}) {
    auto f = make_forecaster(n, cfg);
    ASSERT_TRUE(f) << n;
    EXPECT_EQ(f->name(), n);
    EXPECT_FALSE(policy_summary("forecaster", n).empty());
  }
  EXPECT_NE(policy_summary("forecaster", "oracle").find("UPPER BOUND"), std::string::npos);
}

TEST(Forecasters, GreyPolicyPerRank) {
  View v(config("grey", "[control.forecast]\nwindow = 6\nskill_window = 10\n"
                        "fallback = \"last-value\"\n"));
  auto gmc = make_forecaster("gmc", v.cfg);
  v.view.set_clock(0, 0);
  EXPECT_TRUE(gmc->forecast(v.view).load_ms.empty());  // nothing completed yet
  for (int64_t s = 0; s < 60; ++s) {
    v.record(s, loads(s), {0, 0, 0});
    v.view.set_clock(s + 2, 0);  // control.lag = 2: the decision applies two steps on
    if (s % 7 == 0) gmc->forecast(v.view);  // fed in pieces: each step observed once
  }
  const Forecast f = gmc->forecast(v.view);
  ASSERT_EQ(f.load_ms.size(), 3u);
  ASSERT_EQ(f.model.size(), 3u);
  ASSERT_EQ(f.why.size(), 3u);
  ASSERT_EQ(f.c.size(), 3u);
  ASSERT_EQ(f.ahead_ms.size(), 3u);
  // The trend: GM(1,1) earned its place and forecasts step 61, two ahead of step 59.
  EXPECT_EQ(f.model[0], "gmc");
  EXPECT_NEAR(f.load_ms[0], 100 * std::exp(0.03 * 61), 1e-3 * f.load_ms[0]);
  EXPECT_EQ(f.ahead_ms[0][0], f.load_ms[0]);
  EXPECT_LT(f.c[0], 0.35);
  // Flat: a constant window is fitted exactly, and gmc forecasts the constant.
  EXPECT_NEAR(f.load_ms[1], 50, 1e-9);
  // The oscillation: grade IV, handed over to last-value with the reason.
  EXPECT_EQ(f.model[2], "fallback:last-value");
  EXPECT_NE(f.why[2].find("grade IV"), std::string::npos) << f.why[2];
  EXPECT_EQ(f.load_ms[2], loads(59)[2]);
  EXPECT_NE(f.detail.find("\"lead\":2"), std::string::npos) << f.detail;
}

TEST(Forecasters, ConfigReachesTheSeries) {
  View v(config("cfg", "[control.forecast]\nwindow = 8\nfallback = \"ewma\"\nhorizon = 3\n"
                       "ewma_alpha = 1.0\n"));
  auto gm = make_forecaster("gm11", v.cfg);
  for (int64_t s = 0; s < 5; ++s) v.record(s, loads(s), {0, 0, 0});
  v.view.set_clock(5, 0);
  const Forecast f = gm->forecast(v.view);
  EXPECT_EQ(f.model[0], "fallback:ewma");
  EXPECT_NE(f.why[0].find("5 of the 8 values"), std::string::npos) << f.why[0];
  EXPECT_EQ(f.load_ms[1], 50);  // ewma with α = 1 is the last value
  ASSERT_EQ(f.ahead_ms[0].size(), 3u);
  EXPECT_TRUE(std::isnan(f.c[0]));  // no fit was made
  auto ewma = make_forecaster("ewma", v.cfg);
  EXPECT_EQ(ewma->forecast(v.view).model[2], "ewma");
}

TEST(Forecasters, TextbookChecksAnswerWithTheModel) {
  View v(config("textbook", "[control.forecast]\nchecks = \"textbook\"\n"));
  auto gm = make_forecaster("gm11", v.cfg);
  for (int64_t s = 0; s < 10; ++s) v.record(s, loads(s), {0, 0, 0});
  v.view.set_clock(11, 0);
  const Forecast f = gm->forecast(v.view);
  EXPECT_EQ(f.model[2], "gm11");  // grade IV and no skill shown, but textbook does not mind
  EXPECT_EQ(f.why[2], "");
  EXPECT_GT(f.c[2], 0.65);
}

TEST(Forecasters, OracleDividesComputeByTheTrueSpeed) {
  View v(config("oracle", "[control.forecast]\nhorizon = 2\n"));
  auto o = make_forecaster("oracle", v.cfg);
  v.view.set_clock(0, 0);
  EXPECT_TRUE(o->forecast(v.view).load_ms.empty());
  v.record(0, {10, 12, 14}, {0, 12, 0}, {1, 0.5, 1});  // rank 1 at speed 0.5 idled 12 ms
  v.view.set_clock(2, 0);
  const Forecast f = o->forecast(v.view);
  ASSERT_EQ(f.load_ms.size(), 3u);
  EXPECT_EQ(f.load_ms[0], 10);
  EXPECT_EQ(f.load_ms[1], 24);
  EXPECT_EQ(f.load_ms[2], 14);
  EXPECT_EQ(f.ahead_ms[1], (std::vector<double>{24, 24}));
  EXPECT_EQ(f.model[1], "oracle");
  EXPECT_NE(f.detail.find("upper_bound"), std::string::npos);
}

}  // namespace
