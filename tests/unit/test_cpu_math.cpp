// test_cpu_math.cpp — the CPU backend's vectorisable exp/tanh against libm (double) over the
// ranges the model uses, with explicit tolerances: exp within 4 float ulps relative,
// tanh within 2e-7 absolute.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "backend/cpu_math.hpp"

TEST(CpuMath, FastExpMatchesLibm) {
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.00731f) {
    const double ref = std::exp(static_cast<double>(x));
    const double rel = std::abs(strait::cpu::fast_exp(x) - ref) / ref;
    worst = std::max(worst, rel);
  }
  std::printf("fast_exp worst relative error %.3e\n", worst);
  EXPECT_LT(worst, 4 * 1.19e-7);
  EXPECT_EQ(strait::cpu::fast_exp(-1000.0f), strait::cpu::fast_exp(-87.0f));  // clamped, no NaN
  EXPECT_TRUE(std::isfinite(strait::cpu::fast_exp(1000.0f)));
}

TEST(CpuMath, FastTanhMatchesLibm) {
  double worst = 0;
  for (float u = -20.0f; u <= 20.0f; u += 0.00123f) {
    const double err = std::abs(strait::cpu::fast_tanh(u) - std::tanh(static_cast<double>(u)));
    worst = std::max(worst, err);
  }
  std::printf("fast_tanh worst absolute error %.3e\n", worst);
  EXPECT_LT(worst, 2e-7);
  EXPECT_EQ(strait::cpu::fast_tanh(100.0f), 1.0f);
  EXPECT_EQ(strait::cpu::fast_tanh(-100.0f), -1.0f);
}
