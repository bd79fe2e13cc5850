// fuzz_csv.cpp — libFuzzer target: the CSV readers of config/ and net/ — link schedules
// (read_schedule_csv), load schedules (read_speed_csv), trace series (read_trace_csv) and the
// link-matrix pair tables of `strait links` (parse_pair_csv). The first byte picks the reader
// and its options, the rest is the file. Every input must give rows or the reader's error
// (ConfigError, or std::runtime_error for the pair tables): never a crash or a sanitizer report.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "config/config.hpp"
#include "net/link_matrix.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string path = "/tmp/strait-fuzz-csv-" + std::to_string(::getpid()) + ".csv";
  std::ofstream(path, std::ios::binary) << text;
  try {
    switch (pick % 4) {
      case 0:
        (void)strait::read_schedule_csv(path, "link.0.schedule");
        break;
      case 1: {
        std::string axis;
        (void)strait::read_speed_csv(path, "load.0.schedule", axis);
        break;
      }
      case 2: {
        const char* values[] = {"", "duty", "value"};
        const char* times[] = {"", "t_s", "step"};
        const char* groups[] = {"", "worker", "pod"};
        (void)strait::read_trace_csv(path, "load.trace", values[(pick >> 2) % 3],
                                     times[(pick >> 4) % 3], groups[(pick >> 6) % 3]);
        break;
      }
      case 3: {
        std::istringstream in(text);
        (void)strait::parse_pair_csv(in, "pairs.csv", (pick >> 2) & 1 ? "throughput_gbps" : "rtt_ms",
                                     (pick >> 3) & 1 ? strait::ValueRange::Positive
                                                     : strait::ValueRange::NonNegative);
        break;
      }
    }
  } catch (const strait::ConfigError&) {
  } catch (const std::runtime_error&) {
    if (pick % 4 != 3) throw;  // the config readers report ConfigError only
  }
  std::remove(path.c_str());
  return 0;
}
