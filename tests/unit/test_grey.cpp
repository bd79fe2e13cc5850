// test_grey.cpp — the forecasting math (src/control/grey.hpp, skill.hpp, series.hpp): GM(1,1) and
// its Markov correction against an independent computation (tests/unit/grey_reference.py: mpmath
// at 40 digits, the textbook time response instead of our expm1 form, the class-ratio shift by
// bisection), every check on a series built to fail it, the a = 0 limit, the baselines, the
// fallback path and the skill test, and the forecaster policies on a hand-made history.
// Tolerance against the reference: 1e-9·|ref| + 1e-12 (double vs 40 digits on windows of 5–6
// values; measured differences are below 1e-12 relative), 1e-6 relative where our shift sits
// just above the reference's least shift.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "control/grey.hpp"
#include "control/policies.hpp"
#include "control/series.hpp"
#include "control/skill.hpp"

namespace {

using strait::Prediction;
using strait::SeriesParams;
using strait::grey::Check;
namespace grey = strait::grey;

void near(double got, double ref, double rel = 1e-9) {
  EXPECT_NEAR(got, ref, rel * std::fabs(ref) + 1e-12) << "reference " << ref;
}

// The standard worked series of GM(1,1) texts and its reference values.
const std::vector<double> kWorked = {2.874, 3.278, 3.337, 3.390, 3.679};

TEST(Gm11, WorkedSeriesMatchesReference) {
  const grey::Gm11 g = grey::fit_gm11(kWorked);
  ASSERT_TRUE(g.ok) << g.why;
  EXPECT_TRUE(g.ratio_ok);
  EXPECT_EQ(g.shift, 0);
  near(g.a, -0.037204381943558292);
  near(g.b, 3.0653633130015263);
  const double fitted[] = {2.8740000000000001, 3.2320389138705935, 3.3545497633429295,
                           3.4817044022739942, 3.6136788540986906};
  for (int k = 0; k < 5; ++k) near(g.fitted[k], fitted[k]);
  near(g.forecast(1), 3.750655814442793);
  near(g.forecast(2), 3.8928249040331976);
  near(g.forecast(3), 4.0403829311947687);
  near(g.c, 0.21247198607470906);
  EXPECT_EQ(g.p, 1.0);
  EXPECT_EQ(g.grade, 1);
}

TEST(Gm11, MarkovCorrectionMatchesReference) {
  const grey::Gm11 g = grey::fit_gm11(kWorked);
  const grey::Markov m1 = grey::markov_correction(kWorked, g, 3, 1);
  ASSERT_TRUE(m1.ok) << m1.why;
  EXPECT_EQ(m1.state, (std::vector<int>{1, 2, 1, 0, 2}));
  const double q[] = {0.0, 0.014021075695365016, -0.0052591439445397857, -0.027051446098523311,
                      0.017755136151483903};
  for (int k = 0; k < 5; ++k) near(m1.q[k], q[k]);
  const double t[] = {0.25, 0.25, 0.5, 0.4, 0.2, 0.4, 0.25, 0.5, 0.25};
  for (int k = 0; k < 9; ++k) near(m1.transition[k], t[k]);
  near(m1.expected, -0.0046481549735197039);
  near(m1.correct(g.forecast(1)), 3.7333028442595925);
  const grey::Markov m2 = grey::markov_correction(kWorked, g, 3, 2);
  ASSERT_TRUE(m2.ok);
  near(m2.expected, -0.003714684509977887);
  near(m2.correct(g.forecast(2)), 3.8784178054879292);
}

TEST(Gm11, RealWindowMatchesReference) {
  // PAI job_1 worker 0, iterations 1-6 (Alibaba cluster-trace-gpu-v2020, CC BY 4.0; Weng et al.,
  // NSDI 2022): a repeated value every other sample, as in the trace.
  const std::vector<double> x = {476, 476, 484, 484, 485, 485};
  const grey::Gm11 g = grey::fit_gm11(x);
  ASSERT_TRUE(g.ok) << g.why;
  near(g.a, -0.0039231631064940855);
  near(g.b, 476.21222451157513);
  near(g.forecast(1), 488.50777582245976);
  near(g.forecast(3), 492.35584404631097);
  near(g.c, 0.48411679949523853);
  near(g.p, 0.66666666666666667);
  EXPECT_EQ(g.grade, 4);  // C passes grade II, P = 4/6 < 0.7 does not pass grade III
  const grey::Markov m = grey::markov_correction(x, g, 3, 1);
  ASSERT_TRUE(m.ok);
  EXPECT_EQ(m.state, (std::vector<int>{1, 0, 2, 2, 1, 0}));
  near(m.expected, 0.0010918688240627821);
  near(m.correct(g.forecast(1)), 489.04174525777198);
}

TEST(Gm11, ClassRatioFailureShiftsTheSeries) {
  const std::vector<double> x = {3, 9, 4, 8, 5, 10};  // 3/9 is far below e^{-2/7}
  const grey::Band band = grey::class_ratio_band(6);
  near(band.lo, std::exp(-2.0 / 7));
  near(band.hi, std::exp(2.0 / 7));
  const grey::Gm11 g = grey::fit_gm11(x);
  ASSERT_TRUE(g.ok) << g.why;
  EXPECT_FALSE(g.ratio_ok);
  near(g.shift, 15.142663156399641, 1e-6);  // the least shift, by bisection
  EXPECT_GT(g.shift, 15.142663156399641 * (1 - 1e-12));
  for (size_t k = 1; k < x.size(); ++k) {
    const double r = (x[k - 1] + g.shift) / (x[k] + g.shift);
    EXPECT_GT(r, band.lo);
    EXPECT_LT(r, band.hi);
  }
  near(g.a, -0.01424190733634146, 1e-6);
  near(g.forecast(1), 8.1695958888047935, 1e-6);
  near(g.c, 0.78915071464493443, 1e-6);
  EXPECT_EQ(g.grade, 4);
  // A window inside the band is not shifted; without the shift the window is fitted as it is.
  EXPECT_EQ(grey::class_ratio_shift(kWorked), 0);
  const grey::Gm11 raw = grey::fit_gm11(x, false);
  EXPECT_FALSE(raw.ratio_ok);
  EXPECT_EQ(raw.shift, 0);
}

TEST(Gm11, ALimitIsB) {
  // x0(2..n) is uncorrelated with k and with z(k) for any shift: a = 0 exactly, and the
  // forecast is b − shift = the mean of x0(2..n) = 8.6 (reference: a = 0, b = 28.790217...).
  const grey::Gm11 g = grey::fit_gm11({5, 12, 4, 10, 6, 11});
  ASSERT_TRUE(g.ok) << g.why;
  EXPECT_LT(std::fabs(g.a), 1e-12);
  near(g.forecast(1), 8.6, 1e-9);
  near(g.forecast(5), 8.6, 1e-9);
  // The forecast formula itself at a = 0 and next to it.
  grey::Gm11 h;
  h.n = 5, h.b = 3, h.x1 = 2;
  EXPECT_EQ(h.forecast(1), 3);
  h.a = 1e-10;
  near(h.forecast(1), 3, 1e-8);
  h.a = -1e-10;
  near(h.forecast(1), 3, 1e-8);
}

TEST(Gm11, ConstantWindowIsExact) {
  const grey::Gm11 g = grey::fit_gm11({7, 7, 7, 7, 7});
  ASSERT_TRUE(g.ok) << g.why;
  near(g.forecast(1), 7);
  EXPECT_EQ(g.c, 0);
  EXPECT_EQ(g.p, 1);
  EXPECT_EQ(g.grade, 1);
}

TEST(Gm11, PositivityCheck) {
  const grey::Gm11 g = grey::fit_gm11({1, 2, 0, 3, 4});
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(g.failed, Check::positivity);
  EXPECT_NE(g.why.find("x0(3) = 0 is not > 0"), std::string::npos) << g.why;
  EXPECT_EQ(grey::fit_gm11({1, 2, -1, 3}).failed, Check::positivity);
  EXPECT_EQ(grey::fit_gm11({1, 2, NAN, 3}).failed, Check::positivity);
  EXPECT_EQ(grey::fit_gm11({1, 2, 3}).failed, Check::window);
}

TEST(Gm11, DevelopmentCoefficientCheck) {
  // e^{1.5k}, not shifted: −a = 1.27 > 1 (the shift would have brought it into the band).
  std::vector<double> x;
  for (int k = 0; k < 6; ++k) x.push_back(std::exp(1.5 * k));
  const grey::Gm11 g = grey::fit_gm11(x, false);
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(g.failed, Check::development);
  EXPECT_NE(g.why.find("> 1"), std::string::npos) << g.why;
  near(g.a, -1.2702979, 1e-6);
  EXPECT_TRUE(grey::fit_gm11(x).ok);  // shifted into the band: −a is small
  // The limits themselves: |a| >= 2 meaningless, −a > 1 unsuitable.
  EXPECT_NE(grey::development_problem(2.0).find("meaningless"), std::string::npos);
  EXPECT_NE(grey::development_problem(-2.5).find("meaningless"), std::string::npos);
  EXPECT_NE(grey::development_problem(-1.01).find("> 1"), std::string::npos);
  EXPECT_EQ(grey::development_problem(-1.0), "");
  EXPECT_EQ(grey::development_problem(1.99), "");
}

// Why the development-coefficient limits are a safety net: a window inside the class-ratio band
// keeps |a| small, and positive windows keep |a| < 2 (a random search, not a proof).
TEST(Gm11, DevelopmentCoefficientStaysInsideTheLimits) {
  uint64_t state = 12345;
  auto uniform = [&] {  // splitmix64 → [0, 1)
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  double in_band = 0, positive = 0;
  for (int i = 0; i < 20000; ++i) {
    const int n = 4 + i % 5;
    const double e = 2.0 / (n + 1) * 0.999;
    std::vector<double> x = {1}, y = {1};
    for (int k = 1; k < n; ++k) {
      x.push_back(x.back() * std::exp(e * (2 * uniform() - 1)));  // every ratio in the band
      y.push_back(std::exp(6 * std::log(10.0) * uniform()));      // anything from 1 to 1e6
    }
    const grey::Gm11 a = grey::fit_gm11(x), b = grey::fit_gm11(y, false);
    ASSERT_TRUE(a.ratio_ok);
    EXPECT_EQ(a.shift, 0);
    in_band = std::max(in_band, std::fabs(a.a));
    positive = std::max(positive, std::fabs(b.a));
  }
  std::printf("largest |a|: %.4f inside the band, %.8f for any positive window\n", in_band,
              positive);
  EXPECT_LT(in_band, 0.5);
  EXPECT_LT(positive, 2);
}

TEST(Gm11, Grades) {
  EXPECT_EQ(grey::grade_of(0.35, 0.95), 1);
  EXPECT_EQ(grey::grade_of(0.36, 0.95), 2);
  EXPECT_EQ(grey::grade_of(0.5, 0.8), 2);
  EXPECT_EQ(grey::grade_of(0.3, 0.79), 3);
  EXPECT_EQ(grey::grade_of(0.65, 0.7), 3);
  EXPECT_EQ(grey::grade_of(0.66, 1), 4);
  EXPECT_EQ(grey::grade_of(0.1, 0.69), 4);
  // An oscillation has no exponential trend: the fit explains nothing.
  const grey::Gm11 g = grey::fit_gm11({5, 6, 5, 6, 5, 6});
  ASSERT_TRUE(g.ok);
  EXPECT_GT(g.c, 0.65);
  EXPECT_EQ(g.grade, 4);
}

TEST(Gm11, MarkovUndefinedWhenTheCorrectionDivergesAndConstantResiduals) {
  grey::Gm11 g;
  g.fitted = {1, -5, -5, -5};  // negative fitted values: relative residuals of 6
  const grey::Markov m = grey::markov_correction({1, 1, 1, 1}, g, 3, 1);
  EXPECT_FALSE(m.ok);
  EXPECT_FALSE(m.why.empty());
  // Every residual alike (a perfect fit): E is that residual, 0, and nothing is corrected.
  const grey::Gm11 c = grey::fit_gm11({7, 7, 7, 7, 7});
  const grey::Markov mc = grey::markov_correction({7, 7, 7, 7, 7}, c, 3, 1);
  ASSERT_TRUE(mc.ok);
  EXPECT_NEAR(mc.expected, 0, 1e-12);
}

std::unique_ptr<strait::SeriesForecaster> make(const std::string& name, SeriesParams p = {}) {
  auto f = strait::make_series_forecaster(name, p);
  EXPECT_TRUE(f) << name;
  return f;
}

TEST(Series, Baselines) {
  SeriesParams p;
  p.window = 4, p.ewma_alpha = 0.5;
  auto last = make("last-value", p), mean = make("moving-mean", p), ewma = make("ewma", p);
  EXPECT_TRUE(std::isnan(last->predict(1).value));  // nothing observed yet
  EXPECT_TRUE(std::isnan(ewma->predict(1).value));
  for (double x : {2.0, 4.0, 8.0}) last->observe(x), mean->observe(x), ewma->observe(x);
  EXPECT_EQ(last->predict(1).value, 8);
  EXPECT_EQ(last->predict(3).value, 8);
  EXPECT_EQ(mean->predict(1).value, 14.0 / 3);  // fewer values than the window: all of them
  EXPECT_EQ(ewma->predict(1).value, 5.5);       // 2 → 3 → 5.5
  EXPECT_EQ(ewma->predict(1).model, "ewma");
  for (double x : {1.0, 3.0}) mean->observe(x);
  EXPECT_EQ(mean->predict(2).value, (4.0 + 8 + 1 + 3) / 4);
  EXPECT_EQ(last->predict(1).check, Check::none);
}

TEST(Series, Factory) {
  EXPECT_EQ(strait::make_series_forecaster("magic", {}), nullptr);
  SeriesParams p;
  p.fallback = "gm11";  // not a baseline: nothing to fall back to
  EXPECT_EQ(strait::make_series_forecaster("gmc", p), nullptr);
  for (const auto& n : strait::series_forecaster_names()) EXPECT_TRUE(make(n)) << n;
  EXPECT_EQ(make("gmc-textbook")->name(), "gmc-textbook");
}

TEST(Series, GreyFallsBackWithTheReason) {
  SeriesParams p;
  p.window = 5, p.fallback = "last-value";
  auto g = make("gm11", p);
  for (double x : {2.874, 3.278, 3.337}) g->observe(x);
  Prediction r = g->predict(1);
  EXPECT_EQ(r.model, "fallback:last-value");
  EXPECT_EQ(r.check, Check::window);
  EXPECT_EQ(r.value, 3.337);
  EXPECT_NE(r.why.find("3 of the 5"), std::string::npos) << r.why;
  // A zero in the window: positivity, answered by the named fallback (ewma here).
  p.fallback = "ewma", p.ewma_alpha = 1;
  auto z = make("gmc", p);
  for (double x : {3.0, 4.0, 0.0, 5.0, 6.0}) z->observe(x);
  r = z->predict(1);
  EXPECT_EQ(r.model, "fallback:ewma");
  EXPECT_EQ(r.check, Check::positivity);
  EXPECT_EQ(r.value, 6);
}

TEST(Series, TextbookAnswersWithTheModel) {
  SeriesParams p;
  p.window = 5, p.states = 3, p.fallback = "last-value";
  auto g = make("gm11-textbook", p), c = make("gmc-textbook", p);
  for (double x : kWorked) g->observe(x), c->observe(x);
  Prediction r = g->predict(1);
  EXPECT_EQ(r.model, "gm11");
  EXPECT_EQ(r.check, Check::none);
  near(r.value, 3.750655814442793);
  near(r.c, 0.21247198607470906);
  near(c->predict(2).value, 3.8784178054879292);
  // The same window through gm11 (full checks): grade I, but no skill shown yet.
  auto full = make("gm11", p);
  for (double x : kWorked) full->observe(x);
  r = full->predict(1);
  EXPECT_EQ(r.check, Check::skill);
  EXPECT_NE(r.why.find("untested"), std::string::npos) << r.why;
  EXPECT_EQ(r.value, 3.679);
}

TEST(Series, GradeFourFallsBackUnlessTextbook) {
  SeriesParams p;
  p.skill_window = 0, p.fallback = "last-value";  // grade alone
  auto g = make("gm11", p), t = make("gm11-textbook", p);
  for (double x : {5.0, 6.0, 5.0, 6.0, 5.0, 6.0}) g->observe(x), t->observe(x);
  EXPECT_EQ(g->predict(1).check, Check::grade);
  EXPECT_EQ(g->predict(1).model, "fallback:last-value");
  EXPECT_EQ(t->predict(1).model, "gm11");
}

// A deterministic stand-in for noise in [-1, 1].
double wobble(int t) { return std::sin(12.9898 * t) * std::cos(78.233 * t); }

TEST(Series, SkillTestUsesTheModelOnATrendAndTheFallbackOnNoise) {
  SeriesParams p;  // window 6, skill window 20
  double abs_model = 0, abs_last = 0;
  int used = 0, scored = 0;
  auto g = make("gmc", p), last = make("last-value", p);
  for (int t = 0; t < 200; ++t) {
    const double x = 100 * std::exp(0.03 * t) * (1 + 0.005 * wobble(t));
    if (t >= 40) {
      const Prediction r = g->predict(1);
      used += r.model == "gmc";
      abs_model += std::fabs(r.value - x), abs_last += std::fabs(last->predict(1).value - x);
      ++scored;
    }
    g->observe(x), last->observe(x);
  }
  EXPECT_GT(used, scored * 9 / 10);
  EXPECT_LT(abs_model, 0.5 * abs_last);
  // Noise around a level: GM(1,1) extrapolates nothing worth having.
  auto n = make("gm11", p);
  used = 0;
  for (int t = 0; t < 200; ++t) {
    if (t >= 40) used += n->predict(1).model == "gm11";
    n->observe(500 + 20 * wobble(t));
  }
  EXPECT_LT(used, 10);
}

TEST(Skill, DieboldMariano) {
  using strait::diebold_mariano;
  const strait::SkillVerdict few = diebold_mariano({-1}, 4, 1);
  EXPECT_FALSE(few.skilled);
  EXPECT_NE(few.why.find("untested: 1 of the 4"), std::string::npos) << few.why;
  const strait::SkillVerdict same = diebold_mariano({-1, -1, -1, -1}, 4, 1);
  EXPECT_TRUE(same.skilled);  // always better by the same amount
  EXPECT_TRUE(std::isinf(same.dm));
  const strait::SkillVerdict tie = diebold_mariano({0, 0, 0, 0}, 4, 1);
  EXPECT_FALSE(tie.skilled);
  EXPECT_EQ(tie.dm, 0);
  // d = (−1, −3, −1, −3): mean −2, variance 1 → DM = −2 / sqrt(1/4) = −4.
  EXPECT_NEAR(diebold_mariano({-1, -3, -1, -3}, 4, 1).dm, -4, 1e-12);
  // With h = 2 the lag-1 autocovariance (−3/4) counts: 1 − 2·0.75 < 0 → the lag-0 variance.
  EXPECT_NEAR(diebold_mariano({-1, -3, -1, -3}, 4, 2).dm, -4, 1e-12);
  // d = (−1, −1, −3, −3): γ0 = 1, γ1 = 1/4 → variance 1.5 at h = 2 → DM = −2/sqrt(1.5/4).
  EXPECT_NEAR(diebold_mariano({-1, -1, -3, -3}, 4, 2).dm, -2 / std::sqrt(1.5 / 4), 1e-12);
  // Not significant: mean −0.25, variance 1.6875 → DM = −0.385.
  const strait::SkillVerdict weak = diebold_mariano({-2, 1, -1, 1}, 4, 1);
  EXPECT_FALSE(weak.skilled);
  EXPECT_NE(weak.why.find("no skill: DM = "), std::string::npos) << weak.why;
}

TEST(Series, AutoFallbackPicksTheMostAccurateBaseline) {
  SeriesParams p;  // fallback "auto" by default
  p.skill_window = 0, p.window = 4;  // "auto" scores the baselines without the skill test
  auto g = make("gm11", p);
  // Nothing scored yet: the first baseline, last-value.
  g->observe(1);
  EXPECT_EQ(g->predict(1).model, "fallback:last-value");
  // A zig-zag: the mean of the window is right, the last value always off by 1.
  for (int t = 0; t < 30; ++t) g->observe(t % 2 ? 11.0 : 9.0);
  g->observe(0);  // a zero in the window: positivity
  const Prediction r = g->predict(1);
  EXPECT_EQ(r.check, Check::positivity);
  EXPECT_EQ(r.model, "fallback:moving-mean");
  EXPECT_EQ(r.value, (11.0 + 9 + 11 + 0) / 4);  // the last four values
}

}  // namespace
