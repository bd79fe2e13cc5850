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

// One point of a rank's speed along its load source's axis (steps, seconds or iterations): from
// `t` on, until the next point, the rank runs at relative speed `speed` in (0, 1].
struct SpeedPoint {
  double t = 0, speed = 1;
};

// A [[load]] entry: what the world does to the speed of some ranks over the steps
// (src/scenario/load.hpp, docs/balance.md). Every kind but "markov" is resolved here into one
// piecewise series per rank; step s reads it at axis position start + s·stride (holding the first
// point before it and the last one after it), so a run's loads are a pure function of the step.
struct LoadConfig {
  int entry = 0;                 // index among the [[load]] entries (for messages)
  std::string datacenter;        // the datacenter named, or "" when `ranks` named world ranks
  std::vector<int> ranks;        // the world ranks it applies to
  std::string kind;              // "constant" | "step" | "csv" | "markov" | "trace"
  std::string file;              // csv, trace: the file read (resolved path)
  std::string detail;            // trace: "column <c> of worker 6", for the run header and docs
  std::vector<std::vector<SpeedPoint>> points;  // per rank of `ranks`, t ascending
  double start = 0, stride = 1;  // axis position of step 0, axis units per step
  // markov: each rank runs its own chain over `speeds`, moving every dwell_steps steps by
  // `transition`, drawn from the counter-based RNG seeded by (seed, world rank).
  std::vector<double> markov_speeds;
  std::vector<std::vector<double>> markov_transition;
  int dwell_steps = 1;
  uint64_t seed = 0;
};

struct NetworkConfig {
  std::string shaper = "software";   // "software" | "none" (raw MPI, e.g. under the tc launcher)
  double time_scale = 1.0;           // > 0: run capacity = capacity / s, latency (and time) × s
  long long chunk_bytes = 256 * 1024;  // chunk size of shaped transfers (network.chunk_kib · 1024)
  double default_capacity_gbps = 1.0;
  double default_latency_ms = 10.0;
  double default_jitter_ms = 0.0;
  bool full_mesh = true;             // false: only the [[link]] entries exist (a sparse graph)
  // The software shaper paces the links; otherwise MPI goes raw (the kernel or a real WAN shapes).
  bool shaped() const { return shaper != "none"; }
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

// [control.balance]: the rule of the balancers "proportional" and "oracle" (docs/balance.md).
struct BalanceConfig {
  int gain_steps = 20;        // K: a re-split must repay its measured cost within K steps
  double hysteresis = 0.05;   // a new plan must be predicted at least this much faster (relative)
  int noise_window = 20;      // recent predictions whose plans are replayed (the skill gate)
  bool shares = true;         // also re-set the batch shares across datacenters
  int confirm = 2;            // decisions in a row that must ask for the same change (after
                              // the warm-up, whose win on each of 4 steps, or 3 steady ones,
                              // or 2 after 3 steady, confirms a change)
  bool act_early = true;      // ... unless acting on the first ask pays, by how changes lasted
};

// [control.paths]: the link-state estimates every path selector reads and the MDP path
// selector's model (docs/paths.md).
struct PathsConfig {
  int states = 5;              // congestion levels of a link (>= 2; docs/paths.md on why 5)
  double ewma_alpha = 0.3;     // (0, 1]: weight of the newest measurement in the smoothed capacity
  int relays = 2;              // K: candidate relay DCs per pair (the best-connected ones)
  double switch_cost_ms = 5;   // >= 0: what a change of path costs (in the MDP's cost)
  double gamma = 0.9;          // [0, 1): discount of future steps
  double epsilon_ms = 0.01;    // > 0: value iteration stops within epsilon of optimal
  double resolve_change = 0.1; // relative change of an estimate that makes the MDP re-solve
  bool explore = true;         // weigh what trying a path teaches (mdp: the knowledge gradient)
  // mdp, oracle, oracle-now: give each ring hop's routes the rates they are expected at, and a
  // hop on one path a standby route, so that its sender can move bytes off a route it sees
  // degrade within a sync (adaptive routes, docs/paths.md "Reaction inside a sync").
  bool standby = true;
  // With adaptive routes: each such pair also gets a tail over its smaller share's route, which
  // takes the unsent end of the larger share's part when its sender sees that route degrade
  // while the part is going (net/transport.hpp, Transfer::tail_of; docs/paths.md, "The tail").
  bool tail = true;
  // oracle-now only: it reads the truth this many steps (of the mean recent step time) before it
  // decides — the age of a measuring selector's newest information, so that the reaction bound
  // can be asked what knowing the links exactly, that late, reaches (docs/paths.md, "What
  // markov3's gap to oracle-now is made of"). 0: the truth as it decides.
  double oracle_age_steps = 0;
};

struct ControlConfig {
  std::string forecaster = "last-value";
  std::string balancer = "static";
  std::string path_selector = "direct";
  std::string sync_planner = "hierarchical";
  std::string overlap = "sequential";
  // The link figures the sync planners plan on (control/beliefs.hpp): "measured" — the wire's
  // measurements as learned (configured figures only where nothing is measured yet) — or
  // "configured", the baseline that plans on the configuration whatever the links do.
  std::string beliefs = "measured";
  ForecastConfig forecast;            // [control.forecast]
  BalanceConfig balance;              // [control.balance]
  PathsConfig paths;                  // [control.paths]
  // The controller answers step s's reports before step s + lag: 1 waits for its round trip
  // every step; 2 (default) lets it run while the next step computes (src/control/control_link.hpp).
  int lag = 2;
  // When each rank posts a step's report: "after-sync" (default) once the step's sync and
  // update are done, so the report carries that sync's link traffic; "after-compute" as soon
  // as its compute ends, so the controller decides while the step syncs and, with lag 1,
  // answers the step just computed without a round trip's wait (docs/design.md, "One step").
  std::string report = "after-sync";
  // Whether a record's paths, routes and sync plan take effect one sync early: from the sync of
  // the step before its own, each rank hearing the reply just before that sync (the round trip
  // hidden behind the step's compute), while its splits, shares and overlap take effect with the
  // step as always. The links it routes over are one step fresher. Needs lag >= 2
  // (docs/paths.md, "A decision in two halves").
  bool early_paths = false;
  // Steps between a decision and the first sync that runs on its paths: lag, or lag − 1 with
  // early_paths. The one place that says so (ControllerView::sync_step, mdp, the path oracle).
  int sync_ahead() const { return early_paths ? lag - 1 : lag; }
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
  // The watchdog (src/train/watchdog.hpp): a rank without progress for stall_timeout_s ends the
  // job (0: no watchdog); after SIGINT/SIGTERM, stop_grace_s without progress does.
  double stall_timeout_s = 300;
  double stop_grace_s = 20;
  int blas_threads = 1;        // OpenBLAS threads per rank; 0: the rank's share of its node's cores
  std::vector<DatacenterConfig> datacenters;
  NetworkConfig network;
  std::vector<LinkConfig> links;  // the links that exist: every ordered pair with full_mesh
  std::vector<LoadConfig> loads;  // [[load]] entries: ranks whose speed varies over the steps
  // [device] gflops: > 0 emulates every rank as a device of this many model GFLOP/s at speed 1
  // (src/train/pacer.hpp); 0: a rank computes at its own pace and a load idles in proportion.
  double device_gflops = 0;
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

// Empty when the run may write `output`, else why not: it is the config file, a link schedule,
// the corpus or a file inside the corpus folder (the run would overwrite or read its own output).
// Paths are compared as the file system resolves them (links, "..", another spelling).
std::string output_clash(const Config& cfg, const std::string& output);

// Reads a link schedule CSV: a header line "time_s,capacity_gbps,latency_ms", then one row per
// change, times ascending from 0 (at most 1e9 s), capacity and latency within the bounds of
// config/limits.hpp (blank lines and lines starting with '#' are skipped; a FIFO or a file above
// 256 MiB is refused). Throws ConfigError "<csv>:<line>: <key>: <what>; expected <what>",
// where <key> names the config key that points at the file (e.g. "link.0.schedule").
std::vector<ScheduleRow> read_schedule_csv(const std::string& path,
                                           const std::string& key = "schedule");

// Reads a load schedule CSV: a header line "step,speed" or "time_s,speed" (`axis` gets its first
// column), then one row per change, the first column strictly ascending, speed in (0, 1]. Errors
// as read_schedule_csv's.
std::vector<SpeedPoint> read_speed_csv(const std::string& path, const std::string& key,
                                       std::string& axis);

// One series of a trace file: its rows in file order (time strictly ascending) and their lines.
struct TraceSeries {
  long long group = 0;      // the value of the group column ("worker", "pod"), 0 without one
  std::vector<double> t, value;
  std::vector<int> line;
};
struct TraceFile {
  std::vector<std::string> header;
  std::string time_column, value_column;
  std::vector<TraceSeries> series;  // in order of first appearance
};
// Reads a trace CSV with a header line (e.g. ../shared/data/traces): the value column (""= the
// last one), the time column ("" = the first of t_s, time_s, time, step in the header), and one
// series per integer value of `group_column` ("" = the whole file is one series). Compressed
// files are refused with the command that decompresses them. Errors as read_schedule_csv's; a
// missing column points at the header line and lists the columns there are.
TraceFile read_trace_csv(const std::string& path, const std::string& key,
                         const std::string& value_column, const std::string& time_column,
                         const std::string& group_column);

}  // namespace strait
