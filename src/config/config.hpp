// config.hpp — the resolved run configuration (what a TOML file plus --set overrides mean).
// Loading and the checks that need nothing above config/ live in load.cpp; the checks that need
// the model, sync or control layers live in validate/ (load_valid_config), which is what the
// commands use. Every error names file, line, key and what was expected (ConfigError). Nothing
// here touches MPI: `strait validate` runs without it.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace strait {

// A configuration error: message already formatted as
// "<file>:<line>: <key>: <what was wrong>; expected <what is allowed>".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DatacenterConfig {
  std::string name;
  int ranks = 1;
  std::vector<double> speed;  // per-rank relative speed in (0, 1]; size == ranks (default all 1)
  std::vector<double> split;  // tensor split fractions among the DC's ranks; size == ranks, sum 1
  bool split_even = true;     // true when the config said "even" (split then holds 1/ranks each)
};

// One row of a piecewise link schedule CSV (time_s,capacity_gbps,latency_ms): from t_s on (scenario
// seconds, before time scaling) the link has this capacity and one-way latency.
struct ScheduleRow {
  double t_s = 0, capacity_gbps = 0, latency_ms = 0;
};

// A directed link. Its capacity and latency follow at most one schedule: none (constant), a
// piecewise CSV, one step change, or a Markov-modulated congestion process. All times here are
// scenario times; network.time_scale stretches them (src/scenario/schedule.hpp, make_link_schedule).
struct LinkConfig {
  std::string from, to;       // datacenter names
  double capacity_gbps = 1.0; // > 0
  double latency_ms = 10.0;   // >= 0
  double jitter_ms = 0.0;     // >= 0: uniform extra delay in [0, jitter_ms] per chunk

  std::string schedule_path;          // piecewise CSV, resolved against the config's folder
  std::vector<ScheduleRow> schedule;  // its rows, read and checked when the config loads

  bool has_step = false;              // step_at_s, step_capacity_gbps, step_latency_ms given
  double step_at_s = 0, step_capacity_gbps = 0, step_latency_ms = 0;

  std::vector<double> markov_factors;                  // empty: no Markov process
  std::vector<std::vector<double>> markov_transition;  // row-stochastic, size factors²
  double markov_dwell_s = 0;                           // > 0 with factors
  uint64_t markov_seed = 0;

  // "constant", "piecewise", "step" or "markov".
  const char* schedule_kind() const;
};

struct NetworkConfig {
  std::string shaper = "software";   // "software" | "none" (raw MPI, e.g. under the tc launcher)
  double time_scale = 1.0;           // > 0: run capacity = capacity / s, latency (and time) × s
  long long chunk_bytes = 256 * 1024;  // chunk size of shaped transfers (network.chunk_kib · 1024)
  double default_capacity_gbps = 1.0;
  double default_latency_ms = 10.0;
  double default_jitter_ms = 0.0;
  bool full_mesh = true;             // false: every ordered pair must be a [[link]]
};

struct ModelConfig {
  int layers = 2;
  int d_model = 128;
  int heads = 4;
  int d_ff = 512;
  int seq_len = 64;
  int vocab = 256;   // byte-level: must be 256
  int experts = 1;   // E >= 1
  double init_std = 0.02;
};

// Scripted controller decisions, replayed by the "scheduled" policy of a slot: each takes effect
// at the start of `step`. They make scenarios and tests that change a decision mid-run exact.
// `entry` is the event's index among its [[control.*]] entries in the file (the lists are
// sorted by step), so checks made later can name "control.resplit.<entry>.split".
struct ResplitEvent {      // balancer "scheduled": one datacenter's split
  int step = 0;
  std::string datacenter;
  std::vector<double> split;
  int entry = 0;
};
struct RerouteEvent {      // path_selector "scheduled": the path from -> to
  int step = 0;
  std::string from, to;
  std::vector<std::string> via;  // datacenters relayed through, in order; empty = direct
  int entry = 0;
};
struct SwitchEvent {       // "scheduled" in the sync_planner or overlap slot: who decides
  int step = 0;
  std::string slot;        // "sync_planner" | "overlap"
  std::string policy;      // a policy registered in that slot (not "scheduled"; validate/)
  int entry = 0;
};

struct TrainConfig {
  int global_batch = 8;     // sequences per step, over all datacenters
  int steps = 200;
  double lr = 3e-3;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.0;
  uint64_t seed = 1234;
  std::string corpus = "/usr/share/common-licenses";  // a file or a folder (recursive)
  std::vector<double> batch_shares;  // per datacenter, sum 1 (filled with the even shares)
  bool batch_shares_even = true;
  int log_every = 10;
};

// [control.forecast]: the series forecasters behind the forecaster policies ewma, gm11 and gmc
// (src/control/series.hpp, docs/forecast.md).
struct ForecastConfig {
  int window = 6;                       // >= 4: values a GM(1,1) fit uses
  int states = 3;                       // >= 2: Markov states of gmc
  int horizon = 1;                      // >= 1: steps each forecast reaches past the effective step
  std::string fallback = "auto";        // what gm11/gmc hand over to: a baseline or "auto"
  double ewma_alpha = 0.5;              // (0, 1]: weight of the newest value
  int skill_window = 20;                // 0 (no skill test) or >= 4 past forecasts weighed
  std::string checks = "full";          // "full" | "textbook" (only the checks that leave
                                        // GM(1,1) undefined)
};

struct ControlConfig {
  std::string forecaster = "last-value";
  std::string balancer = "static";
  std::string path_selector = "direct";
  std::string sync_planner = "hierarchical";
  std::string overlap = "sequential";
  ForecastConfig forecast;            // [control.forecast]
  // The controller answers step s's reports before step s + lag: 1 waits for its round trip
  // every step; 2 (default) lets it run while the next step computes (src/control/control_link.hpp).
  int lag = 2;
  std::vector<ResplitEvent> resplits;  // [[control.resplit]] entries, by step
  std::vector<RerouteEvent> reroutes;  // [[control.reroute]] entries, by step
  std::vector<SwitchEvent> switches;   // [[control.switch]] entries, by step
};

struct TraceConfig {
  std::string path;            // default: <run.out_dir>/<run.name>.h5
};

struct CheckpointConfig {
  int every = 0;               // steps between checkpoints; 0 = only at the end and on a signal
  std::string path;            // default: <run.out_dir>/<run.name>.ckpt.h5
};

struct Config {
  std::string source_file;     // the TOML file it came from
  std::string source_text;     // the file text followed by the applied --set lines (for traces)
  std::string run_name = "default";
  std::string out_dir = "results/runs";
  std::string backend = "cpu"; // "cpu" | "cuda" | "auto"
  std::string gpu_math = "tf32";  // CUDA matmul compute: "tf32" | "bf16" | "fp32" (FP32 storage)
  double memory_limit_gb = 0;  // 0: MemTotal of this machine
  std::vector<DatacenterConfig> datacenters;
  NetworkConfig network;
  std::vector<LinkConfig> links;  // every ordered pair of distinct DCs, after defaults
  ModelConfig model;
  TrainConfig train;
  ControlConfig control;
  TraceConfig trace;
  CheckpointConfig checkpoint;

  // Where each table, [[array]] entry and key came from: dotted path ("model.heads",
  // "datacenter.1", "datacenter.1.split", "control") -> "file:line", or "--set:0" for what an
  // override placed; "" is the document itself. Filled by load_config from the parsed file.
  std::map<std::string, std::string> where;
  // where[key], else that of the nearest enclosing table that is there (a key the file left
  // out points at its table), else "<source_file>:0".
  std::string where_of(const std::string& key) const;

  int world_size() const;                 // sum of datacenter ranks
  int dc_of_rank(int world_rank) const;   // contiguous blocks in datacenter order
  int first_rank_of_dc(int dc) const;
};

// Loads, applies overrides ("a.b=value", value parsed as TOML), checks syntax, types, ranges and
// structure, and fills defaults. Throws ConfigError on any problem. Policy names, head splits
// and memory are not checked here: use load_valid_config (validate/validate.hpp) for a run.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The per-rank memory limit in bytes: run.memory_limit_gb * 2^30, or MemTotal of this machine
// when that is 0 (returns 0 when /proc/meminfo cannot be read: no limit is checked then).
double memory_limit_bytes(const Config& cfg);

// Throws ConfigError "<file>: datacenter: the datacenters have N ranks in all but the job has M;
// expected mpirun -np N" when the MPI world does not match the config.
void check_world_size(const Config& cfg, int actual_world_size);

// Reads a link schedule CSV: a header line "time_s,capacity_gbps,latency_ms", then one row per
// change, times ascending from 0, capacity > 0, latency >= 0 (blank lines and lines starting
// with '#' are skipped). Throws ConfigError "<csv>:<line>: <key>: <what>; expected <what>",
// where <key> names the config key that points at the file (e.g. "link.0.schedule").
std::vector<ScheduleRow> read_schedule_csv(const std::string& path,
                                           const std::string& key = "schedule");

}  // namespace strait
