// rng.hpp — counter-based deterministic random numbers.
// Every random draw in strait is a pure function of (seed, stream, index), so a tensor's
// initial values or a step's batch offsets do not depend on how many ranks exist or in which
// order they draw. That is what lets a distributed run reproduce the single-process run.
#pragma once
#include <cmath>
#include <cstdint>

namespace strait {

// SplitMix64 finaliser: a good 64-bit mixing function.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t hash3(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

// Uniform in (0, 1).
inline double uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  return ((hash3(seed, stream, index) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller on two counter draws.
inline double normal01(uint64_t seed, uint64_t stream, uint64_t index) {
  const double u1 = uniform01(seed, stream, 2 * index);
  const double u2 = uniform01(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Stable 64-bit FNV-1a hash of a string, used to derive a stream id from a tensor name.
inline uint64_t hash_name(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}

}  // namespace strait
