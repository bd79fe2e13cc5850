// host.hpp — the checks of a valid config against the machine it runs on: can the run write its
// trace and checkpoint where they go (folder writable, not a read-only file system, room for a
// checkpoint), are they none of its inputs, and is there a CUDA device when run.backend = "cuda".
// `strait validate` and `strait train` (rank 0, before anything is created) both call it, so a
// full or read-only disk is bad input found at the start, not a failure after hours of training.
#pragma once
#include <string>
#include <vector>

#include "config/config.hpp"

namespace strait {

// One error line per problem, "<where>: <key>: <what>; expected <what>". `trace` and `checkpoint`
// are the paths the run will write (empty: none); `flag` names where they came from when not
// from the config ("--out"), "" otherwise.
std::vector<std::string> host_problems(const Config& cfg, const std::string& trace,
                                       const std::string& checkpoint, const std::string& flag);

// The size of one checkpoint of this model, in bytes (parameters and both Adam moments of every
// expert, float32, plus a margin for HDF5's own structures).
double checkpoint_bytes(const Config& cfg);

}  // namespace strait
