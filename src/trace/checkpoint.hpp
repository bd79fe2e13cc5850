// checkpoint.hpp — full (unsharded) parameters and Adam state of every expert, in HDF5.
// Names and shapes are documented in docs/checkpoint.md. Written by rank 0 to "<path>.tmp.<pid>"
// and renamed into place, so a checkpoint file is either complete or absent, and a failed write
// leaves the previous one. Every dataset carries the CRC-32 of its values; a reader checks it,
// the types, that every value is finite, and the format — a flipped bit, a tensor rewritten as
// int32, a NaN or a file of another format is refused, never trained on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace strait {

struct NamedTensor {
  std::string name;              // e.g. "wte", "h0.qkv_w" (see docs/checkpoint.md)
  std::vector<int64_t> shape;    // row-major
  std::vector<float> data;       // product(shape) elements
};

struct CheckpointExpert {
  int64_t adam_t = 0;                    // Adam steps taken by this expert
  std::vector<NamedTensor> params, adam_m, adam_v;  // same names/shapes in all three
};

struct Checkpoint {
  int64_t next_step = 0;                 // the first step a resumed run executes
  uint64_t seed = 0;
  std::string config_text;
  std::vector<std::vector<double>> splits;  // per datacenter: current tensor split
  std::vector<double> batch_shares;         // per datacenter
  std::vector<CheckpointExpert> experts;
};

// Throws std::runtime_error naming the path on failure. Refuses (before touching any file) a
// checkpoint with a non-finite parameter or moment, naming the expert and the tensor: a run that
// diverged never replaces its last good checkpoint.
void write_checkpoint(const std::string& path, const Checkpoint& ck);
Checkpoint read_checkpoint(const std::string& path);

// Empty when every parameter and Adam moment of ck is finite, else which one is not ("expert 1: params/h0.qkv_w[17] = nan").
std::string nonfinite_in(const Checkpoint& ck);

// CRC-32 (the polynomial of zlib, PNG and Ethernet; Python's zlib.crc32) of n bytes.
uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);

}  // namespace strait
