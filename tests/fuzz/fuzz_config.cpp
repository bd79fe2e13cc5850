// fuzz_config.cpp — libFuzzer target: the whole config check, load_valid_config (the TOML
// loader, --set overrides, the range and structure checks, then validate/'s checks), as
// `strait validate` and `strait train` run it. The input is a TOML file; each line of it that
// starts with "#set " is also passed as a --set override (a comment to the parser). Every input
// must give a Config or a ConfigError: another exception, a crash or a sanitizer report is a bug.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "config/config.hpp"
#include "validate/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  for (size_t at = 0; (at = text.find("#set ", at)) != std::string::npos; at += 5)
    if (at == 0 || text[at - 1] == '\n') {
      const size_t end = text.find('\n', at);
      sets.push_back(text.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5));
    }
  const std::string path = "/tmp/strait-fuzz-config-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path, std::ios::binary) << text;
  try {
    (void)strait::load_valid_config(path, sets);
  } catch (const strait::ConfigError&) {
    // refused with a message: what the loader is for
  }
  std::remove(path.c_str());
  return 0;
}
