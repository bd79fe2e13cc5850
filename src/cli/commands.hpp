// commands.hpp — one function per `strait` subcommand (each in its own cmd_*.cpp).
// main.cpp owns the CLI11 parser; these return the process exit status.
#pragma once
#include <string>
#include <vector>

namespace strait {

struct TrainArgs {
  std::string config;
  std::vector<std::string> sets;  // "key=value" overrides
  std::string out;                // trace path override (empty: from config)
  bool force = false;
  std::string resume;             // checkpoint path or empty
};

int cmd_train(const TrainArgs& args);                          // needs MPI (mpirun)
int cmd_validate(const std::string& config, const std::vector<std::string>& sets);  // no MPI
int cmd_report(const std::string& trace_path);                 // no MPI

}  // namespace strait
