// cpu_math.hpp — exp and tanh that the compiler can vectorise (CPU backend only).
// libm's expf/tanhf are scalar calls and took a third of a training step (GELU and softmax).
// fast_exp is the Cephes expf scheme (range reduction by ln 2, degree-6 polynomial, exponent by
// bit shift): about 2 ulp on [-87, 88], pure arithmetic, so loops over it vectorise at -O2/-O3.
// Double precision keeps libm: it is the reference path (gradient checks).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace strait::cpu {

inline float fast_exp(float x) {
  x = x < -87.0f ? -87.0f : x;  // clamps; selects, not branches (see CMakeLists: -fno-trapping-math)
  x = x > 88.0f ? 88.0f : x;
  // Round x·log2(e) to nearest by the 1.5·2^23 trick (no branch, no libm call).
  const float fn = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const int32_t n = static_cast<int32_t>(fn);
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * std::bit_cast<float>((n + 127) << 23);
}
inline double fast_exp(double x) { return std::exp(x); }

// tanh(u) = 1 − 2/(e^{2u} + 1): absolute error ~1e-7 in float, exact limits at ±∞.
inline float fast_tanh(float u) { return 1.0f - 2.0f / (fast_exp(2.0f * u) + 1.0f); }
inline double fast_tanh(double u) { return std::tanh(u); }

}  // namespace strait::cpu
