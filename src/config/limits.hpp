// limits.hpp — the bounds a config must stay within so that a run neither crashes nor hangs on
// it (issue 10): how big and how deeply nested a file may be before the TOML parser sees it, how
// many error lines are printed, how long names and paths may be, and the network figures the
// software shaper can enforce. load_config (load.cpp) applies them; docs/config.md lists them.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace strait {

struct Config;

namespace limits {

// Input files (the config, link schedules): regular files of at most this many bytes. A FIFO or
// a device would block or never end; a config of gigabytes is a mistake.
constexpr size_t kMaxConfigBytes = size_t{16} << 20;
constexpr size_t kMaxCsvBytes = size_t{256} << 20;
// Tables, arrays and dotted-key parts nested inside each other: the TOML parser recurses once
// per level (a file nested 40,000 deep overflowed its stack). Real configs use 4.
constexpr int kMaxNesting = 32;
// Error lines printed for one config; the rest are counted.
constexpr size_t kMaxErrorLines = 20;
// run.name names files (<name>.ckpt.h5.tmp...); a path component stays well below NAME_MAX
// (255 bytes) with the suffixes the run adds, and a whole path below PATH_MAX (4096).
constexpr size_t kMaxNameChars = 128;
constexpr size_t kMaxPathComponentBytes = 200;
constexpr size_t kMaxPathBytes = 3800;
// Link figures, configured and as the shaper enforces them (capacity / time_scale, latency and
// jitter × time_scale): 1 kbit/s to 1 Pbit/s, at most an hour one way. Beyond them the shaper's
// arithmetic overflows or a chunk takes longer than any run.
constexpr double kMinCapacityGbps = 1e-6, kMaxCapacityGbps = 1e6;
constexpr double kMaxLatencyMs = 3.6e6;
constexpr double kMinTimeScale = 1e-3, kMaxTimeScale = 1e3;
constexpr double kMinDwellS = 1e-3;       // a Markov state lasts at least 1 ms (as enforced)
constexpr double kMaxScheduleTimeS = 1e9;  // schedule times (about 31 years)
// Training figures whose larger values only turn the loss into NaN.
constexpr double kMaxLr = 1, kMaxInitStd = 1, kMaxEps = 1, kMaxWeightDecay = 1;
// The watchdog and BLAS keys of [run].
constexpr double kMaxStallTimeoutS = 7 * 86400.0, kMaxStopGraceS = 3600;
constexpr int kMaxBlasThreads = 1024;
// [control.forecast]: how far ahead, how many Markov states and past forecasts (the controller
// keeps 4096 steps of history).
constexpr int kMaxForecastHorizon = 4096, kMaxForecastStates = 64, kMaxSkillWindow = 4096;

// The rules above as phrases for "expected ..." (one source for the checks and the docs).
bool capacity_ok(double gbps);
extern const char* const kCapacityRule;  // "a number in [1e-06, 1e+06] (Gbit/s)"
bool latency_ok(double ms);
extern const char* const kLatencyRule;   // "a number in [0, 3.6e+06] (milliseconds)"

// The text of an input file, refusing what is not a regular file or is larger than max_bytes.
// Throws ConfigError "<path>:0: <key>: <what>; expected <what>".
std::string read_input(const std::string& path, const std::string& key, size_t max_bytes);

// Empty when `text` (TOML) nests at most kMaxNesting levels, else the problem; `line` is set to
// the line where the limit was passed. A lexical scan: strings and comments are skipped.
std::string nesting_problem(const std::string& text, int& line);

// The error lines joined by "\n", at most kMaxErrorLines of them, then one line saying how many
// more there were.
std::string join_errors(const std::vector<std::string>& lines);

// The rules of [[datacenter]].split and train.batch_shares (load.cpp, read_fractions and
// read_train), for fractions that come from elsewhere (a checkpoint): empty when `v` is `want`
// finite fractions > 0 summing to 1 within 1e-6, else what is wrong; and, for batch shares,
// when each gives at least one sequence of the global batch.
std::string fractions_problem(const std::vector<double>& v, size_t want);
std::string shares_problem(const std::vector<double>& shares, int global_batch);

// The checks of a loaded config that look at several keys at once: names and paths that fit the
// file system, link figures as the shaper enforces them, and trace and checkpoint paths that are
// neither each other nor an input. Appends one error line each.
void check(const Config& cfg, std::vector<std::string>& errors);

}  // namespace limits
}  // namespace strait
