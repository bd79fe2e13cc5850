// validate.hpp — the whole check of a config before anything runs. config/ checks what it can
// alone (syntax, types, ranges, structure: load_config); the checks that need the layers above
// it live here: policy names against the controller's registry (control/), every split against
// the model's heads and columns, the parameter bound and the memory estimate (model/). Both
// `strait validate` and `strait train` load through here, so what validate accepts train runs.
#pragma once
#include <string>
#include <vector>

#include "config/config.hpp"

namespace strait {

// load_config, then the checks above config/. Their errors read like load_config's,
// "<file>:<line>: <key>: <what>; expected <what>", located through Config::where, all of them
// in one ConfigError. They run once load_config accepts the file: they need a sound config.
Config load_valid_config(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace strait
