// checkpoint.hpp — full (unsharded) parameters and Adam state of every expert, in HDF5.
// Names and shapes are documented in docs/checkpoint.md. Written by rank 0 to "<path>.tmp" and
// renamed into place, so a checkpoint file is either complete or absent.
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

// Throws std::runtime_error naming the path on failure.
void write_checkpoint(const std::string& path, const Checkpoint& ck);
Checkpoint read_checkpoint(const std::string& path);

}  // namespace strait
