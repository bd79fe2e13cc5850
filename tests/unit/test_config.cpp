// test_config.cpp — the configuration module and the validation above it: the shipped configs
// load, every kind of bad config is rejected with "<file>:<line>: <key>: ...; expected ..." (a
// table of cases, through load_valid_config: config/'s own checks and validate/'s), --set
// overrides go through the same checks, the source map points at the right lines, scripted
// [[control.*]] entries parse, and the derived numbers (world size, rank map, parameter count,
// memory estimate) match hand computations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "control/policy.hpp"
#include "model/layout.hpp"
#include "model/memory.hpp"
#include "validate/validate.hpp"

namespace fs = std::filesystem;
using strait::Config;
using strait::ConfigError;
using strait::load_config;
using strait::load_valid_config;

namespace {

fs::path source_dir() {
  if (const char* s = std::getenv("STRAIT_SOURCE_DIR")) return s;
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

// A scratch folder for this process, removed at exit.
class Scratch {
 public:
  Scratch() {
    dir_ = fs::temp_directory_path() / ("strait_test_config_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // Long enough for the longest sequence the cases ask for (seq_len 256: 257 bytes).
    std::ofstream(dir_ / "corpus.txt") << "hello world, a tiny corpus\n" << std::string(500, 'x');
    fs::create_directories(dir_ / "empty_folder");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / (name + ".toml");
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir() const { return dir_; }

 private:
  fs::path dir_;
};

const Scratch& scratch() {
  static Scratch s;
  return s;
}

// A valid config: DC "east" (1 rank) and "west" (2 ranks, split 0.5/0.5), heads 4.
std::string base() {
  return "[run]\n"
         "name = \"t\"\n"
         "memory_limit_gb = 4\n"
         "\n"
         "[[datacenter]]\n"
         "name = \"east\"\n"
         "ranks = 1\n"
         "\n"
         "[[datacenter]]\n"
         "name = \"west\"\n"
         "ranks = 2\n"
         "split = [0.5, 0.5]\n"
         "\n"
         "[[link]]\n"
         "from = \"east\"\n"
         "to = \"west\"\n"
         "capacity_gbps = 1.0\n"
         "latency_ms = 20.0\n"
         "\n"
         "[model]\n"
         "layers = 2\n"
         "d_model = 32\n"
         "heads = 4\n"
         "d_ff = 64\n"
         "seq_len = 16\n"
         "\n"
         "[train]\n"
         "global_batch = 6\n"
         "steps = 20\n"
         "corpus = \"" + (scratch().dir() / "corpus.txt").string() + "\"\n"
         "\n"
         "[control]\n"
         "balancer = \"static\"\n";
}

// base() with the first occurrence of `from` replaced by `to` (the test fails if it is absent).
std::string with(const std::string& from, const std::string& to, std::string text = base()) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "test bug: " << from << " not in the base config";
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// 1-based line of the first occurrence of needle in text.
int line_of(const std::string& text, const std::string& needle) {
  const auto pos = text.find(needle);
  return pos == std::string::npos ? -1
                                  : 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

struct BadCase {
  std::string name;
  std::string toml;
  std::vector<std::string> sets;
  std::string expect;     // a substring of the message
  std::string key;        // the key the message must name
  std::string line_of;    // if set: the message must point at the line holding this text
  bool from_set = false;  // the error is located at "--set:0" instead of the file
  std::string at = "";    // if set: the error points at this "<file>:<line>:" (a CSV the config
                          // names) instead of the config file
};

// base() with a third datacenter "south" (1 rank).
std::string three_dcs(const std::string& text = base()) {
  return with("ranks = 2\nsplit = [0.5, 0.5]\n",
              "ranks = 2\nsplit = [0.5, 0.5]\n\n[[datacenter]]\nname = \"south\"\nranks = 1\n", text);
}

// base() with these [control] policies next to balancer = "static" (e.g. the "scheduled" ones
// that [[control.reroute]] and [[control.switch]] entries need).
std::string with_policies(const std::string& lines, const std::string& text = base()) {
  return with("balancer = \"static\"\n", "balancer = \"static\"\n" + lines, text);
}

std::vector<BadCase> bad_cases() {
  const std::string b = base();
  const std::string empty_dir = (scratch().dir() / "empty_folder").string();
  const std::string rr = with_policies("path_selector = \"scheduled\"\n", three_dcs());
  const std::string sw =
      with_policies("sync_planner = \"scheduled\"\noverlap = \"scheduled\"\n");
  const std::string east_west = "\n[[control.reroute]]\nstep = 5\nfrom = \"east\"\nto = \"west\"\n";
  const std::string fc = b + "\n[control.forecast]\n";
  // [[load]]: ranks 1 and 2 are datacenter "west"; a load CSV and a trace next to the configs.
  const std::string speeds_csv = (scratch().dir() / "speeds.csv").string();
  std::ofstream(speeds_csv) << "step,speed\n0,1.0\n4,0\n";
  const std::string trace_csv = (scratch().dir() / "trace.csv").string();
  std::ofstream(trace_csv) << "worker,time,batch_time_norm\n0,1,500\n0,2,400\n1,1,800\n1,2,900\n";
  // A worker id no integer type holds (found by fuzz_csv: its conversion was undefined).
  const std::string huge_csv = (scratch().dir() / "huge_worker.csv").string();
  std::ofstream(huge_csv) << "worker,time,batch_time_norm\n0,1,500\n2.5e29,2,400\n";
  const std::string ld = b + "\n[[load]]\nranks = [1]\n";
  const std::string tr = ld + "kind = \"trace\"\nfile = \"" + trace_csv +
                         "\"\nsignal = \"batch_time\"\nstride = 0.05\n";
  const std::string bal = b + "\n[control.balance]\n";
  return {
      {"load_speed_zero", ld + "kind = \"constant\"\nspeed = 0\n", {},
       "0 is out of range; expected a number in (0, 1]", "load.0.speed", "speed = 0"},
      {"load_step_speed_negative",
       ld + "kind = \"step\"\nspeed = 1\nat_step = 5\nspeed_after = -0.5\n", {},
       "-0.5 is out of range; expected a number in (0, 1]", "load.0.speed_after", "speed_after"},
      {"load_markov_speed_zero",
       ld + "kind = \"markov\"\nspeeds = [1.0, 0.0]\ntransition = [[0.5, 0.5], [0.5, 0.5]]\n", {},
       "element 1 is a float (0); expected a non-empty array of numbers in (0, 1]",
       "load.0.speeds", "speeds ="},
      {"load_csv_speed_zero", ld + "kind = \"csv\"\nfile = \"" + speeds_csv + "\"\n", {},
       "load.0.file: speed 0 is out of range; expected a number in (0, 1]", "load.0.file", "",
       false, speeds_csv + ":3:"},
      {"load_trace_no_column", tr + "worker = 0\ncolumn = \"batch_time\"\n", {},
       "no column \"batch_time\" (the values) in the header", "load.0.file", "", false,
       trace_csv + ":1:"},
      {"load_trace_no_worker", tr + "worker = 9\n", {}, "no worker 9 in", "load.0.worker",
       "worker = 9"},
      {"load_trace_worker_id_too_large",
       ld + "kind = \"trace\"\nfile = \"" + huge_csv + "\"\nsignal = \"batch_time\"\nworker = 0\n",
       {}, "is too large; expected an integer id of at most 2^53 in magnitude", "load.0.file", "",
       false, huge_csv + ":3:"},
      {"load_trace_past_its_end", ld + "kind = \"trace\"\nfile = \"" + trace_csv +
                                      "\"\nsignal = \"batch_time\"\nworker = 1\n",
       {}, "step 19 reads time 20, past the end of worker 1 (2)", "load.0.stride", ""},
      {"load_unknown_kind", ld + "kind = \"sine\"\n", {}, "unknown kind \"sine\"; expected one of",
       "load.0.kind", "kind ="},
      {"load_key_of_another_kind", ld + "kind = \"constant\"\nspeed = 0.5\nat_step = 3\n", {},
       "does not apply to kind \"constant\"", "load.0.at_step", "at_step"},
      {"load_rank_outside_the_world", b + "\n[[load]]\nranks = [3]\nkind = \"constant\"\nspeed = 0.5\n",
       {}, "expected an array of world ranks in [0, 2]", "load.0.ranks", "ranks = [3]"},
      {"load_rank_twice", ld + "kind = \"constant\"\nspeed = 0.5\n\n[[load]]\ndatacenter = \"west\"\n"
                               "kind = \"constant\"\nspeed = 0.5\n",
       {}, "rank 1 is loaded by load.0 already", "load.1.datacenter", ""},
      {"load_and_datacenter_speed",
       with("ranks = 1\n", "ranks = 1\nspeed = [0.5]\n") +
           "\n[[load]]\nranks = [0]\nkind = \"constant\"\nspeed = 0.5\n",
       {}, "rank 0 also has a speed in datacenter.0.speed", "load.0.ranks", ""},
      {"balance_gain_steps_zero", bal + "gain_steps = 0\n", {}, "0 is out of range",
       "control.balance.gain_steps", "gain_steps"},
      {"balance_hysteresis_one", bal + "hysteresis = 1\n", {},
       "1 is out of range; expected a number in [0, 1)", "control.balance.hysteresis",
       "hysteresis"},
      {"balance_noise_window_one", b, {"control.balance.noise_window=1"}, "1 is out of range",
       "control.balance.noise_window", "", true},
      {"balance_confirm_zero", bal + "confirm = 0\n", {}, "expected an integer in [1, 64]",
       "control.balance.confirm", "confirm"},
      {"balance_act_early_not_bool", bal + "act_early = 1\n", {}, "true or false",
       "control.balance.act_early", "act_early"},
      {"paths_oracle_age_negative", b + "\n[control.paths]\noracle_age_steps = -1\n", {},
       "-1 is out of range; expected a number in [0, 100]", "control.paths.oracle_age_steps",
       "oracle_age_steps"},
      {"paths_tail_not_bool", b + "\n[control.paths]\ntail = \"yes\"\n", {}, "true or false",
       "control.paths.tail", "tail"},
      {"device_gflops_negative", b + "\n[device]\ngflops = -1\n", {},
       "-1 is out of range; expected a number in [0, 1e9]", "device.gflops", "gflops"},
      {"unknown_key", with("seq_len = 16\n", "seq_len = 16\nseqlen = 3\n"), {}, "unknown key",
       "model.seqlen", "seqlen = 3"},
      {"unknown_key_lists_allowed", with("seq_len = 16\n", "seq_len = 16\nseqlen = 3\n"), {},
       "layers, d_model, heads, d_ff, seq_len, vocab, experts, init_std", "model.seqlen", ""},
      {"unknown_table", b + "\n[modle]\nlayers = 2\n", {}, "unknown table", "modle", "[modle]"},
      {"wrong_type", with("layers = 2", "layers = \"two\""), {}, "expected an integer",
       "model.layers", "layers ="},
      {"wrong_type_float_for_int", with("layers = 2", "layers = 2.0"), {}, "expected an integer",
       "model.layers", "layers ="},
      {"out_of_range", with("layers = 2", "layers = 0"), {}, "0 is out of range", "model.layers",
       "layers = 0"},
      {"seq_len_too_small", with("seq_len = 16", "seq_len = 1"), {}, "integer >= 2",
       "model.seq_len", "seq_len"},
      {"vocab_not_256", with("seq_len = 16", "seq_len = 16\nvocab = 512"), {}, "256",
       "model.vocab", "vocab"},
      {"split_sum", with("split = [0.5, 0.5]", "split = [0.5, 0.4]"), {}, "sum to 0.9",
       "datacenter.1.split", "split ="},
      {"split_length", with("split = [0.5, 0.5]", "split = [0.25, 0.25, 0.5]"), {},
       "3 fractions", "datacenter.1.split", "split ="},
      {"split_negative", with("split = [0.5, 0.5]", "split = [1.5, -0.5]"), {}, "element 1",
       "datacenter.1.split", "split ="},
      {"split_bad_word", with("split = [0.5, 0.5]", "split = \"uneven\""), {}, "\"even\" or",
       "datacenter.1.split", "split ="},
      {"speed_out_of_range", with("ranks = 1\n", "ranks = 1\nspeed = [1.5]\n"), {}, "(0, 1]",
       "datacenter.0.speed", "speed"},
      {"heads_do_not_divide_d_model", with("d_model = 32", "d_model = 30"), {}, "not divisible",
       "model.heads", "heads = 4"},
      {"heads_not_splittable", with("split = [0.5, 0.5]", "split = [0.7, 0.3]"), {},
       "4 heads cannot be split as [0.7, 0.3] in datacenter \"west\" (2.8, 1.2 heads)",
       "model.heads", "heads = 4"},
      {"heads_not_splittable_even",
       with("ranks = 2\nsplit = [0.5, 0.5]", "ranks = 2\nsplit = \"even\""), {"model.heads=1"},
       "1 heads cannot be split as [0.5, 0.5] (even)", "model.heads", "", true},
      {"d_ff_below_ranks", with("d_ff = 64", "d_ff = 1"), {}, "MLP column", "model.d_ff", "d_ff"},
      {"missing_ranks", with("name = \"east\"\nranks = 1\n", "name = \"east\"\n"), {}, "missing",
       "datacenter.0.ranks", "[[datacenter]]"},
      {"duplicate_datacenter", with("name = \"west\"", "name = \"east\""), {}, "defined twice",
       "datacenter.1.name", ""},
      {"bad_datacenter_name", with("name = \"west\"", "name = \"we st\""), {},
       "not a valid name", "datacenter.1.name", ""},
      {"datacenter_single_table", with("[[datacenter]]\nname = \"east\"\nranks = 1\n\n"
                                       "[[datacenter]]\nname = \"west\"\nranks = 2\n"
                                       "split = [0.5, 0.5]\n",
                                       "[datacenter]\nname = \"east\"\nranks = 1\n"),
       {}, "array of tables", "datacenter", ""},
      {"link_unknown_datacenter", with("to = \"west\"", "to = \"north\""), {},
       "unknown datacenter \"north\"", "link.0.to", "to = \"north\""},
      {"link_to_itself", with("to = \"west\"", "to = \"east\""), {}, "to itself", "link.0.to", ""},
      {"duplicate_link",
       b + "\n[[link]]\nfrom = \"east\"\nto = \"west\"\ncapacity_gbps = 2.0\n", {},
       "duplicate link \"east\" -> \"west\"", "link.1", ""},
      {"zero_capacity", with("capacity_gbps = 1.0", "capacity_gbps = 0"), {}, "number in [1e-06, 1e+06]",
       "link.0.capacity_gbps", "capacity_gbps"},
      {"negative_latency", with("latency_ms = 20.0", "latency_ms = -1.0"), {}, "-1 is out of range",
       "link.0.latency_ms", "latency_ms"},
      {"bad_network_default", b + "\n[network]\ndefault_capacity_gbps = -3\n", {}, "number in [1e-06, 1e+06]",
       "network.default_capacity_gbps", ""},
      {"link_unknown_from", with("from = \"east\"", "from = \"nowhere\""), {},
       "unknown datacenter \"nowhere\"; expected the name of a datacenter (east, west)",
       "link.0.from", "from = \"nowhere\""},
      {"negative_default_latency", b + "\n[network]\ndefault_latency_ms = -2\n", {},
       "-2 is out of range; expected a number in [0, 3.6e+06]", "network.default_latency_ms",
       "default_latency_ms"},
      {"missing_pair_full_mesh_false", b + "\n[network]\nfull_mesh = false\n", {},
       "datacenter \"east\" cannot be reached from \"west\" over the [[link]] entries; expected "
       "links that connect every datacenter", "link", "full_mesh"},
      {"full_mesh_not_bool", b + "\n[network]\nfull_mesh = 0\n", {}, "true or false",
       "network.full_mesh", "full_mesh"},
      {"unknown_shaper", b + "\n[network]\nshaper = \"tc\"\n", {},
       "unknown shaper \"tc\"; expected one of software, none", "network.shaper", "shaper"},
      {"unknown_beliefs", with_policies("beliefs = \"scenario\"\n"), {},
       "unknown link beliefs \"scenario\"; expected one of measured, configured", "control.beliefs",
       "beliefs"},
      {"unknown_report", with_policies("report = \"after-update\"\n"), {},
       "unknown report point \"after-update\"; expected one of after-sync, after-compute",
       "control.report", "report"},
      {"early_paths_with_lag_1", with_policies("lag = 1\nearly_paths = true\n"), {},
       "needs control.lag >= 2", "control.early_paths", "early_paths"},
      {"early_paths_not_bool", with_policies("early_paths = 1\n"), {}, "true or false",
       "control.early_paths", "early_paths"},
      {"time_scale_zero", b + "\n[network]\ntime_scale = 0\n", {}, "0 is out of range",
       "network.time_scale", "time_scale"},
      {"set_time_scale_negative", b, {"network.time_scale=-2"}, "expected a number in [0.001, 1000]",
       "network.time_scale", "", true},
      {"chunk_kib_zero", b + "\n[network]\nchunk_kib = 0\n", {}, "integer in [1, 1048576]",
       "network.chunk_kib", "chunk_kib"},
      {"negative_default_jitter", b + "\n[network]\ndefault_jitter_ms = -1\n", {},
       "expected a number in [0, 3.6e+06]", "network.default_jitter_ms", "default_jitter_ms"},
      {"negative_jitter", with("latency_ms = 20.0", "latency_ms = 20.0\njitter_ms = -0.5"), {},
       "-0.5 is out of range", "link.0.jitter_ms", "jitter_ms"},
      {"two_schedule_kinds",
       with("latency_ms = 20.0", "latency_ms = 20.0\nschedule = \"x.csv\"\nstep_at_s = 3"), {},
       "both schedule and step_* keys are set; expected at most one schedule kind per link",
       "link.0", "[[link]]"},
      {"schedule_and_markov",
       with("latency_ms = 20.0", "latency_ms = 20.0\nschedule = \"x.csv\"\nmarkov_seed = 3"),
       {}, "both schedule and markov_*", "link.0", "[[link]]"},
      {"schedule_missing_file",
       with("latency_ms = 20.0", "latency_ms = 20.0\nschedule = \"no_such.csv\""), {},
       "\"no_such.csv\" (" + (scratch().dir() / "no_such.csv").string() + ") does not exist",
       "link.0.schedule", "schedule ="},
      {"step_incomplete", with("latency_ms = 20.0", "latency_ms = 20.0\nstep_at_s = 3"), {},
       "missing (another step_* key is set); expected step_at_s, step_capacity_gbps and "
       "step_latency_ms together",
       "link.0.step_capacity_gbps", "[[link]]"},
      {"step_zero_capacity",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nstep_at_s = 5\nstep_capacity_gbps = 0\nstep_latency_ms = 1"),
       {}, "0 is out of range; expected a number in [1e-06, 1e+06] (Gbit/s)", "link.0.step_capacity_gbps",
       "step_capacity_gbps"},
      {"step_negative_latency",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nstep_at_s = 5\nstep_capacity_gbps = 1\nstep_latency_ms = -1"),
       {}, "-1 is out of range", "link.0.step_latency_ms", "step_latency_ms"},
      {"markov_row_sum",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nmarkov_factors = [1.0, 0.5]\n"
            "markov_transition = [[0.9, 0.1], [0.5, 0.4]]\nmarkov_dwell_s = 1"),
       {}, "row 1 [0.5, 0.4] sums to 0.9; expected a square array of 2 rows of 2 numbers in [0, 1]",
       "link.0.markov_transition", "markov_transition"},
      {"markov_not_square",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nmarkov_factors = [1.0, 0.5]\n"
            "markov_transition = [[0.9, 0.1], [0.5, 0.5, 0.0]]\nmarkov_dwell_s = 1"),
       {}, "row 1 has 3 numbers", "link.0.markov_transition", "markov_transition"},
      {"markov_size_mismatch",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nmarkov_factors = [1.0, 0.5, 0.2]\n"
            "markov_transition = [[0.9, 0.1], [0.5, 0.5]]\nmarkov_dwell_s = 1"),
       {}, "2 rows for 3 factors", "link.0.markov_transition", "markov_transition"},
      {"markov_entry_out_of_range",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nmarkov_factors = [1.0, 0.5]\n"
            "markov_transition = [[1.5, -0.5], [0.5, 0.5]]\nmarkov_dwell_s = 1"),
       {}, "row 0: element 0 is a float (1.5)", "link.0.markov_transition", "markov_transition"},
      {"markov_zero_factor",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nmarkov_factors = [1.0, 0]\n"
            "markov_transition = [[0.5, 0.5], [0.5, 0.5]]\nmarkov_dwell_s = 1"),
       {}, "element 1 is an integer (0)", "link.0.markov_factors", "markov_factors"},
      {"markov_incomplete",
       with("latency_ms = 20.0", "latency_ms = 20.0\nmarkov_factors = [1.0, 0.5]"), {},
       "missing (another markov_* key is set)", "link.0.markov_transition", "[[link]]"},
      {"markov_dwell_zero",
       with("latency_ms = 20.0",
            "latency_ms = 20.0\nmarkov_factors = [1.0, 0.5]\n"
            "markov_transition = [[0.5, 0.5], [0.5, 0.5]]\nmarkov_dwell_s = 0"),
       {}, "expected a number in [0.001, 1e9] (seconds per congestion state)", "link.0.markov_dwell_s",
       "markov_dwell_s"},
      {"batch_shares_sum", with("steps = 20", "steps = 20\nbatch_shares = [0.5, 0.4]"), {},
       "sum to 0.9", "train.batch_shares", "batch_shares"},
      {"batch_shares_length", with("steps = 20", "steps = 20\nbatch_shares = [1.0]"), {},
       "1 fraction [1]", "train.batch_shares", "batch_shares"},
      {"batch_share_below_one_sequence",
       with("steps = 20", "steps = 20\nbatch_shares = [0.95, 0.05]"), {}, "at least 1 sequence",
       "train.batch_shares", "batch_shares"},
      {"global_batch_below_datacenters", with("global_batch = 6", "global_batch = 1"), {},
       "global_batch >= 2", "train.global_batch", "global_batch"},
      {"beta_out_of_range", with("steps = 20", "steps = 20\nbeta1 = 1.0"), {}, "[0, 1)",
       "train.beta1", "beta1"},
      {"missing_corpus",
       with("corpus = \"" + (scratch().dir() / "corpus.txt").string(),
            "corpus = \"/nonexistent/strait/corpus"),
       {},
       "does not exist", "train.corpus", "corpus"},
      {"empty_corpus_folder",
       with("corpus = \"" + (scratch().dir() / "corpus.txt").string(), "corpus = \"" + empty_dir),
       {}, "holds no readable non-empty regular file", "train.corpus", "corpus"},
      {"memory_above_limit",
       with("seq_len = 16", "seq_len = 256", with("memory_limit_gb = 4", "memory_limit_gb = 0.001")), {},
       "above the limit of 0.001 GiB", "model", "[model]"},
      {"unknown_policy", with("balancer = \"static\"", "balancer = \"magic\""), {},
       "unknown policy \"magic\"; expected one of static, scheduled", "control.balancer",
       "balancer"},
      {"unknown_backend", with("name = \"t\"", "name = \"t\"\nbackend = \"tpu\""), {},
       "cpu, cuda, auto", "run.backend", "backend"},
      {"unknown_gpu_math", with("name = \"t\"", "name = \"t\"\ngpu_math = \"fp16\""), {},
       "unknown GPU matmul math \"fp16\"; expected one of tf32, bf16, fp32", "run.gpu_math",
       "gpu_math"},
      {"bad_run_name", with("name = \"t\"", "name = \"a b\""), {}, "not a valid name",
       "run.name", ""},
      {"resplit_without_scheduled",
       b + "\n[[control.resplit]]\nstep = 5\ndatacenter = \"west\"\nsplit = [0.75, 0.25]\n", {},
       "balancer = \"scheduled\"", "control.resplit", ""},
      {"resplit_step_too_late",
       with("balancer = \"static\"", "balancer = \"scheduled\"") +
           "\n[[control.resplit]]\nstep = 20\ndatacenter = \"west\"\nsplit = [0.75, 0.25]\n",
       {}, "below train.steps", "control.resplit.0.step", "step = 20"},
      {"resplit_heads_not_splittable",
       with("balancer = \"static\"", "balancer = \"scheduled\"") +
           "\n[[control.resplit]]\nstep = 5\ndatacenter = \"west\"\nsplit = [0.6, 0.4]\n",
       {}, "cannot be split as [0.6, 0.4]", "control.resplit.0.split", ""},
      {"resplit_unknown_datacenter",
       with("balancer = \"static\"", "balancer = \"scheduled\"") +
           "\n[[control.resplit]]\nstep = 5\ndatacenter = \"north\"\nsplit = [0.75, 0.25]\n",
       {}, "unknown datacenter", "control.resplit.0.datacenter", ""},
      {"negative_checkpoint_every", b + "\n[checkpoint]\nevery = -1\n", {}, "integer >= 0",
       "checkpoint.every", "every"},
      {"set_without_equals", b, {"train.steps"}, "no '='", "train.steps", "", true},
      {"set_unknown_key", b, {"model.depth=3"}, "unknown key", "model.depth", "", true},
      {"set_unknown_table", b, {"modle.layers=3"}, "unknown key", "modle.layers", "", true},
      {"set_bad_index", b, {"datacenter.7.ranks=3"}, "not an index", "datacenter.7.ranks", "",
       true},
      {"set_value_rejected", b, {"model.layers=0"}, "out of range", "model.layers", "", true},
      {"syntax_error", with("layers = 2", "layers = "), {}, "TOML syntax error", "", "layers ="},
      // Checks made above config/ (validate/) point at lines through Config::where.
      {"heads_not_splittable_without_heads_key",
       with("heads = 4\n", "", with("split = [0.5, 0.5]", "split = [0.7, 0.3]")), {},
       "4 heads cannot be split as [0.7, 0.3] in datacenter \"west\"", "model.heads",
       "split = [0.7, 0.3]"},
      {"heads_not_splittable_by_set", b, {"datacenter.1.split=[0.7, 0.3]"},
       "cannot be split as [0.7, 0.3]", "model.heads", "heads = 4"},
      {"d_ff_below_ranks_line", with("d_ff = 64", "d_ff = 1"), {},
       "d_ff 1 cannot give each of the 2 ranks of datacenter \"west\" an MLP column; expected "
       "d_ff >= the ranks of every datacenter", "model.d_ff", "d_ff = 1"},
      {"too_many_parameters",
       with("layers = 2", "layers = 2000000", with("d_model = 32", "d_model = 65536")), {},
       "parameters per expert; expected fewer than 1e15 parameters", "model", "[model]"},
      {"resplit_heads_not_splittable_line",
       with("balancer = \"static\"", "balancer = \"scheduled\"") +
           "\n[[control.resplit]]\nstep = 9\ndatacenter = \"west\"\nsplit = [0.75, 0.25]\n"
           "\n[[control.resplit]]\nstep = 5\ndatacenter = \"west\"\nsplit = [0.6, 0.4]\n",
       {}, "4 heads cannot be split as [0.6, 0.4] in datacenter \"west\" (2.4, 1.6 heads)",
       "control.resplit.1.split", "split = [0.6, 0.4]"},  // entry 1, though sorted first
      {"unknown_forecaster", with_policies("forecaster = \"crystal-ball\"\n"), {},
       "unknown policy \"crystal-ball\"; expected one of ", "control.forecaster", "forecaster ="},
      {"unknown_policy_by_set", b, {"control.overlap=magic"}, "unknown policy \"magic\"",
       "control.overlap", "", true},
      {"policy_not_a_string", with_policies("sync_planner = 3\n"), {}, "got an integer (3)",
       "control.sync_planner", "sync_planner = 3"},
      // [control.forecast]: ranges here, the fallback and the history bound in validate/.
      {"forecast_window_below_4", fc + "window = 3\n", {},
       "3 is out of range; expected an integer >= 4", "control.forecast.window", "window = 3"},
      {"forecast_window_beyond_history", fc + "window = 5000\n", {},
       "5000 is out of range; expected an integer in [4, 4096]", "control.forecast.window",
       "window = 5000"},
      {"forecast_window_not_an_integer", fc + "window = \"six\"\n", {}, "got a string",
       "control.forecast.window", "window ="},
      {"forecast_states_below_2", fc + "states = 1\n", {},
       "1 is out of range; expected an integer in [2, 64]", "control.forecast.states", "states = 1"},
      {"forecast_states_by_set", b, {"control.forecast.states=0"}, "0 is out of range",
       "control.forecast.states", "", true},
      {"forecast_horizon_zero", fc + "horizon = 0\n", {}, "expected an integer in [1, 4096]",
       "control.forecast.horizon", "horizon = 0"},
      {"forecast_alpha_zero", fc + "ewma_alpha = 0\n", {},
       "0 is out of range; expected a number in (0, 1]", "control.forecast.ewma_alpha",
       "ewma_alpha"},
      {"forecast_alpha_above_1_by_set", b, {"control.forecast.ewma_alpha=1.5"},
       "1.5 is out of range; expected a number in (0, 1]", "control.forecast.ewma_alpha", "",
       true},
      {"forecast_fallback_not_a_baseline", fc + "fallback = \"gm11\"\n", {},
       "unknown baseline \"gm11\"; expected one of auto, last-value, moving-mean, ewma",
       "control.forecast.fallback", "fallback ="},
      {"forecast_skill_window_3", fc + "skill_window = 3\n", {},
       "3 is out of range; expected 0 (no skill test) or an integer in [4, 4096]",
       "control.forecast.skill_window", "skill_window"},
      {"forecast_checks_unknown", fc + "checks = \"strict\"\n", {},
       "unknown value \"strict\"; expected \"full\" or \"textbook\"", "control.forecast.checks",
       "checks ="},
      {"forecast_unknown_key", fc + "windw = 6\n", {},
       "unknown key; expected one of the keys of [control.forecast]: window, states, horizon",
       "control.forecast.windw", "windw"},
      // [[control.reroute]]: only with path_selector = "scheduled"; step 1..steps-1; known
      // datacenters; via neither repeats nor holds an end; one entry per (from, to) and step.
      {"reroute_without_scheduled", three_dcs() + east_west, {}, "path_selector = \"scheduled\"",
       "control.reroute", ""},
      {"reroute_step_zero", rr + with("step = 5", "step = 0", east_west), {},
       "below train.steps", "control.reroute.0.step", "step = 0"},
      {"reroute_step_too_late", rr + with("step = 5", "step = 20", east_west), {},
       "an integer in [1, 19] (below train.steps = 20)", "control.reroute.0.step", "step = 20"},
      // With control.early_paths a reroute at the last step would need a record past the run.
      {"reroute_last_step_with_early_paths",
       with_policies("path_selector = \"scheduled\"\nearly_paths = true\n", three_dcs()) +
           with("step = 5", "step = 19", east_west),
       {}, "nothing lands at the last step's sync (step 19)", "control.reroute.0.step",
       "step = 19"},
      {"reroute_missing_to", rr + "\n[[control.reroute]]\nstep = 5\nfrom = \"east\"\n", {},
       "missing", "control.reroute.0.to", "[[control.reroute]]"},
      {"reroute_unknown_datacenter", rr + with("to = \"west\"", "to = \"north\"", east_west), {},
       "unknown datacenter \"north\"; expected the name of a datacenter (east, west, south)",
       "control.reroute.0.to", "to = \"north\""},
      {"reroute_to_itself", rr + with("to = \"west\"", "to = \"east\"", east_west), {},
       "a path from \"east\" to itself", "control.reroute.0.to", ""},
      {"reroute_via_an_end", rr + east_west + "via = [\"south\", \"west\"]\n", {},
       "\"west\" is an end of the path or repeated", "control.reroute.0.via", "via ="},
      {"reroute_via_repeated",
       with_policies("path_selector = \"scheduled\"\n",
                     three_dcs(with("ranks = 1\n", "ranks = 1\n\n[[datacenter]]\nname = \"north\"\n"
                                                   "ranks = 1\n"))) +
           east_west + "via = [\"south\", \"north\", \"south\"]\n",
       {}, "\"south\" is an end of the path or repeated", "control.reroute.0.via", "via ="},
      {"reroute_via_unknown", rr + east_west + "via = [\"mars\"]\n", {},
       "unknown datacenter \"mars\"", "control.reroute.0.via", "via ="},
      {"reroute_via_not_strings", rr + east_west + "via = [1]\n", {},
       "element 0 is an integer (1)", "control.reroute.0.via", "via ="},
      {"reroute_twice", rr + east_west + east_west + "via = [\"south\"]\n", {},
       "the path \"east\" -> \"west\" is rerouted twice at step 5", "control.reroute.1", ""},
      // [[control.switch]]: slot sync_planner or overlap, whose policy is "scheduled"; step
      // 1..steps-1; one per slot and step; the policy a registered name of the slot.
      {"switch_without_scheduled",
       b + "\n[[control.switch]]\nstep = 5\nslot = \"sync_planner\"\npolicy = \"hierarchical\"\n",
       {}, "control.sync_planner is \"hierarchical\", not \"scheduled\"", "control.switch.0.slot",
       "slot ="},
      {"switch_unknown_slot",
       sw + "\n[[control.switch]]\nstep = 5\nslot = \"balancer\"\npolicy = \"static\"\n", {},
       "unknown slot \"balancer\"; expected \"sync_planner\" or \"overlap\"",
       "control.switch.0.slot", "slot ="},
      {"switch_to_scheduled",
       sw + "\n[[control.switch]]\nstep = 5\nslot = \"overlap\"\npolicy = \"scheduled\"\n", {},
       "\"scheduled\" cannot switch to itself", "control.switch.0.policy", "policy ="},
      {"switch_step_too_late",
       sw + "\n[[control.switch]]\nstep = 20\nslot = \"overlap\"\npolicy = \"sequential\"\n",
       {}, "below train.steps", "control.switch.0.step", "step = 20"},
      {"switch_missing_policy", sw + "\n[[control.switch]]\nstep = 5\nslot = \"overlap\"\n", {},
       "missing", "control.switch.0.policy", "[[control.switch]]"},
      {"switch_twice",
       sw + "\n[[control.switch]]\nstep = 5\nslot = \"overlap\"\npolicy = \"sequential\"\n"
            "\n[[control.switch]]\nstep = 5\nslot = \"overlap\"\npolicy = \"sequential\"\n",
       {}, "control.overlap is switched twice at step 5", "control.switch.1", ""},
      {"switch_unknown_policy",
       sw + "\n[[control.switch]]\nstep = 5\nslot = \"sync_planner\"\npolicy = \"magic\"\n",
       {}, "unknown policy \"magic\" for control.sync_planner; expected one of ",
       "control.switch.0.policy", "policy = \"magic\""},
      // mpi-allreduce bypasses the software shaper: only with network.shaper = "none".
      {"mpi_allreduce_with_the_software_shaper",
       with_policies("sync_planner = \"mpi-allreduce\"\n"), {},
       "\"mpi-allreduce\" calls MPI_Allreduce among the gateways, which bypasses the software "
       "shaper (network.shaper = \"software\"); expected network.shaper = \"none\"",
       "control.sync_planner", "sync_planner = \"mpi-allreduce\""},
      {"switch_to_mpi_allreduce_with_the_software_shaper",
       sw + "\n[[control.switch]]\nstep = 5\nslot = \"sync_planner\"\npolicy = \"mpi-allreduce\"\n",
       {}, "bypasses the software shaper (network.shaper = \"software\")",
       "control.switch.0.policy", "policy = \"mpi-allreduce\""},
      {"switch_to_another_slots_policy",
       sw + "\n[[control.switch]]\nstep = 5\nslot = \"overlap\"\npolicy = \"hierarchical\"\n",
       {}, "unknown policy \"hierarchical\" for control.overlap", "control.switch.0.policy",
       "policy = \"hierarchical\""},
  };
}

}  // namespace

TEST(Config, ShippedConfigsLoad) {
  const Config d = load_valid_config((source_dir() / "configs/default.toml").string());
  EXPECT_EQ(d.world_size(), 4);
  EXPECT_EQ(d.run_name, "default");
  ASSERT_EQ(d.datacenters.size(), 2u);
  EXPECT_EQ(d.datacenters[0].name, "east");
  EXPECT_EQ(d.datacenters[1].split, (std::vector<double>{0.5, 0.5}));
  EXPECT_TRUE(d.datacenters[1].split_even);
  EXPECT_EQ(d.train.batch_shares, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(d.trace.path, "results/runs/default.h5");
  EXPECT_EQ(d.checkpoint.path, "results/runs/default.ckpt.h5");
  ASSERT_EQ(d.links.size(), 2u);
  EXPECT_EQ(d.links[0].from, "east");
  EXPECT_EQ(d.links[0].to, "west");
  EXPECT_DOUBLE_EQ(d.links[0].latency_ms, 20.0);

  const Config t = load_valid_config((source_dir() / "configs/tiny.toml").string());
  EXPECT_EQ(t.world_size(), 3);
  EXPECT_EQ(t.model.layers, 2);
  EXPECT_EQ(t.model.d_model, 32);
  EXPECT_EQ(t.model.heads, 4);
  EXPECT_EQ(t.model.d_ff, 64);
  EXPECT_EQ(t.model.seq_len, 16);
  EXPECT_EQ(t.train.global_batch, 6);
  EXPECT_EQ(t.train.steps, 20);
  EXPECT_EQ(t.dc_of_rank(0), 0);
  EXPECT_EQ(t.dc_of_rank(1), 1);
  EXPECT_EQ(t.dc_of_rank(2), 1);
  EXPECT_EQ(t.first_rank_of_dc(1), 1);
  EXPECT_THROW(t.dc_of_rank(3), std::out_of_range);
  EXPECT_EQ(t.datacenters[0].speed, (std::vector<double>{1.0}));
}

TEST(Config, ForecastTable) {
  const Config d = load_valid_config(scratch().write("forecast_default", base()).string());
  EXPECT_EQ(d.control.forecast.window, 6);
  EXPECT_EQ(d.control.forecast.states, 3);
  EXPECT_EQ(d.control.forecast.horizon, 1);
  EXPECT_EQ(d.control.forecast.fallback, "auto");
  EXPECT_EQ(d.control.forecast.ewma_alpha, 0.5);
  EXPECT_EQ(d.control.forecast.skill_window, 20);
  EXPECT_EQ(d.control.forecast.checks, "full");
  const Config c = load_valid_config(
      scratch().write("forecast_set", base() + "\n[control.forecast]\nwindow = 8\nstates = 4\n"
                                               "horizon = 2\nfallback = \"ewma\"\n"
                                               "ewma_alpha = 1\nskill_window = 0\n"
                                               "checks = \"textbook\"\n").string(),
      {"control.forecast.window=12", "control.forecast.fallback=moving-mean"});
  EXPECT_EQ(c.control.forecast.window, 12);
  EXPECT_EQ(c.control.forecast.states, 4);
  EXPECT_EQ(c.control.forecast.horizon, 2);
  EXPECT_EQ(c.control.forecast.fallback, "moving-mean");
  EXPECT_EQ(c.control.forecast.ewma_alpha, 1.0);
  EXPECT_EQ(c.control.forecast.skill_window, 0);
  EXPECT_EQ(c.control.forecast.checks, "textbook");
}

TEST(Config, LinksFillTheFullMeshInOrder) {
  const std::string text =
      with("ranks = 2\nsplit = [0.5, 0.5]\n",
           "ranks = 2\nsplit = [0.5, 0.5]\n\n[[datacenter]]\nname = \"south\"\nranks = 1\n") +
      "\n[network]\ndefault_capacity_gbps = 0.5\ndefault_latency_ms = 7\n";
  const Config c = load_config(scratch().write("mesh", text).string());
  ASSERT_EQ(c.links.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> order = {
      {"east", "west"}, {"east", "south"}, {"west", "east"},
      {"west", "south"}, {"south", "east"}, {"south", "west"}};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(c.links[i].from, order[i].first) << i;
    EXPECT_EQ(c.links[i].to, order[i].second) << i;
  }
  EXPECT_DOUBLE_EQ(c.links[0].capacity_gbps, 1.0);  // listed
  EXPECT_DOUBLE_EQ(c.links[0].latency_ms, 20.0);
  EXPECT_DOUBLE_EQ(c.links[2].capacity_gbps, 0.5);  // from [network]
  EXPECT_DOUBLE_EQ(c.links[2].latency_ms, 7.0);
}

TEST(Config, BadConfigsAreRejectedWithFileLineAndKey) {
  for (const BadCase& bc : bad_cases()) {
    SCOPED_TRACE(bc.name);
    const fs::path file = scratch().write(bc.name, bc.toml);
    std::string msg;
    try {
      load_valid_config(file.string(), bc.sets);
      ADD_FAILURE() << "no ConfigError";
      continue;
    } catch (const ConfigError& e) {
      msg = e.what();
    }
    if (std::getenv("STRAIT_TEST_VERBOSE")) std::printf("%-34s %s\n", bc.name.c_str(), msg.c_str());
    EXPECT_NE(msg.find(bc.expect), std::string::npos) << msg;
    EXPECT_NE(msg.find(bc.key), std::string::npos) << msg;
    if (bc.from_set) {
      EXPECT_NE(msg.find("--set:0: "), std::string::npos) << msg;
    } else if (!bc.at.empty()) {
      EXPECT_NE(msg.find(bc.at), std::string::npos) << msg;
    } else {
      EXPECT_NE(msg.find(file.string() + ":"), std::string::npos) << msg;
    }
    EXPECT_NE(msg.find("expected"), std::string::npos) << msg;
    if (!bc.line_of.empty()) {
      const std::string at = file.string() + ":" + std::to_string(line_of(bc.toml, bc.line_of)) + ":";
      EXPECT_NE(msg.find(at), std::string::npos) << "want " << at << " in: " << msg;
    }
  }
}

TEST(Config, AllErrorsAreReportedOnePerLine) {
  const std::string text = with("layers = 2", "layers = 0", with("capacity_gbps = 1.0", "capacity_gbps = 0"));
  try {
    load_config(scratch().write("two_errors", text).string());
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("link.0.capacity_gbps"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\n"), std::string::npos) << msg;
    EXPECT_NE(msg.find("model.layers"), std::string::npos) << msg;
  }
}

TEST(Config, MissingFileIsAConfigError) {
  EXPECT_THROW(load_config((scratch().dir() / "no-such.toml").string()), ConfigError);
}

TEST(Config, OverridesApplyAndAreValidated) {
  const std::string tiny = (source_dir() / "configs/tiny.toml").string();
  const Config c = load_config(tiny, {"train.steps=5", "run.name=foo", "datacenter.1.split=[0.75, 0.25]",
                                      "train.batch_shares=[0.5, 0.5]", "checkpoint.every=2"});
  EXPECT_EQ(c.train.steps, 5);
  EXPECT_EQ(c.run_name, "foo");
  EXPECT_EQ(c.trace.path, "results/runs/foo.h5");
  EXPECT_EQ(c.datacenters[1].split, (std::vector<double>{0.75, 0.25}));
  EXPECT_FALSE(c.datacenters[1].split_even);
  EXPECT_FALSE(c.train.batch_shares_even);
  EXPECT_EQ(c.checkpoint.every, 2);
  EXPECT_NE(c.source_text.find("\n# --set train.steps=5\n# --set run.name=foo\n"), std::string::npos)
      << c.source_text;

  // A string key given something that parses as another TOML type stays a string.
  EXPECT_EQ(load_config(tiny, {"run.name=1234"}).run_name, "1234");

  try {
    load_config(tiny, {"model.heads=3"});
    FAIL() << "model.heads=3 accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--set:0: model.heads: d_model 32 is not divisible by 3 heads"), std::string::npos) << msg;
  }
}

// Config::where holds the place of every table, entry and key; a key the file left out points
// at its table, a value an override placed at "--set:0".
TEST(Config, WhereLocatesEveryKey) {
  const std::string text = base();
  const fs::path file = scratch().write("where", text);
  const Config c = load_config(file.string(), {"train.steps=7"});
  const std::string f = file.string() + ":";
  EXPECT_EQ(c.where_of("model.heads"), f + std::to_string(line_of(text, "heads = 4")));
  EXPECT_EQ(c.where_of("model"), f + std::to_string(line_of(text, "[model]")));
  const int west = line_of(text, "[[datacenter]]\nname = \"west\"");
  EXPECT_EQ(c.where_of("datacenter.1"), f + std::to_string(west));
  EXPECT_EQ(c.where_of("datacenter.1.split"), f + std::to_string(line_of(text, "split =")));
  EXPECT_EQ(c.where_of("datacenter.1.speed"), f + std::to_string(west));  // absent: its table
  EXPECT_EQ(c.where_of("link.0.to"), f + std::to_string(line_of(text, "to = \"west\"")));
  EXPECT_EQ(c.where_of("model.d_ff.deeper"), c.where_of("model.d_ff"));
  EXPECT_EQ(c.where_of("train.steps"), "--set:0");
  EXPECT_EQ(c.where_of("trace.path"), c.where_of(""));  // no [trace] table at all
  EXPECT_EQ(c.where_of(""), f + "0");
  // Nothing loaded: no place to point at. (A named Config: GCC 12 warned that the strings of a
  // temporary one "may be used uninitialized" in its inlined destructor.)
  const Config none;
  EXPECT_EQ(none.where_of("model"), ":0");
}

// Scripted entries parse in config/ (their policies' names are validate/'s business), sorted by
// step, each knowing its entry index in the file.
TEST(Config, ScriptedReroutesAndSwitchesLoad) {
  const std::string text =
      with_policies("path_selector = \"scheduled\"\nsync_planner = \"scheduled\"\n"
                    "overlap = \"scheduled\"\n",
                    three_dcs()) +
      "\n[[control.reroute]]\nstep = 9\nfrom = \"east\"\nto = \"west\"\n"
      "\n[[control.reroute]]\nstep = 4\nfrom = \"west\"\nto = \"east\"\nvia = [\"south\"]\n"
      "\n[[control.reroute]]\nstep = 9\nfrom = \"west\"\nto = \"east\"\nvia = []\n"
      "\n[[control.switch]]\nstep = 12\nslot = \"overlap\"\npolicy = \"sequential\"\n"
      "\n[[control.switch]]\nstep = 3\nslot = \"sync_planner\"\npolicy = \"hierarchical\"\n"
      "\n[[control.switch]]\nstep = 12\nslot = \"sync_planner\"\npolicy = \"hierarchical\"\n";
  const fs::path file = scratch().write("scripted", text);
  const Config c = load_config(file.string());
  const auto& rr = c.control.reroutes;
  ASSERT_EQ(rr.size(), 3u);
  EXPECT_EQ(rr[0].step, 4);
  EXPECT_EQ(rr[0].entry, 1);
  EXPECT_EQ(rr[0].from, "west");
  EXPECT_EQ(rr[0].to, "east");
  EXPECT_EQ(rr[0].via, (std::vector<std::string>{"south"}));
  EXPECT_EQ(rr[1].step, 9);  // stable: the file's order within a step
  EXPECT_EQ(rr[1].entry, 0);
  EXPECT_TRUE(rr[1].via.empty());
  EXPECT_EQ(rr[2].entry, 2);
  EXPECT_TRUE(rr[2].via.empty());  // an empty via is the direct path
  const auto& sw = c.control.switches;
  ASSERT_EQ(sw.size(), 3u);
  EXPECT_EQ(sw[0].step, 3);
  EXPECT_EQ(sw[0].slot, "sync_planner");
  EXPECT_EQ(sw[0].entry, 1);
  EXPECT_EQ(sw[1].slot, "overlap");
  EXPECT_EQ(sw[1].policy, "sequential");
  EXPECT_EQ(sw[2].entry, 2);
  const int third = line_of(text, "step = 12\nslot = \"sync_planner\"");  // entry 2's step
  EXPECT_EQ(c.where_of("control.switch.2.policy"), file.string() + ":" + std::to_string(third + 2));
}

// A switch to a registered policy of its slot passes validation once the slot's "scheduled"
// policy is registered (control/ is growing it); until then only control.sync_planner is wrong.
TEST(Config, SwitchToARegisteredPolicyIsValid) {
  const std::string text =
      with_policies("sync_planner = \"scheduled\"\n") +
      "\n[[control.switch]]\nstep = 5\nslot = \"sync_planner\"\npolicy = \"hierarchical\"\n";
  const fs::path file = scratch().write("switch_ok", text);
  const auto names = strait::policy_names("sync_planner");
  if (std::find(names.begin(), names.end(), "scheduled") != names.end()) {
    EXPECT_NO_THROW(load_valid_config(file.string()));
    return;
  }
  try {
    load_valid_config(file.string());
    FAIL() << "sync_planner = \"scheduled\" accepted but not registered";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("control.sync_planner: unknown policy \"scheduled\""), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("control.switch"), std::string::npos) << msg;
  }
}

// Without the software shaper (kernel shaping under tc) mpi-allreduce is offered.
TEST(Config, MpiAllreduceIsOfferedWithoutTheSoftwareShaper) {
  const std::string text = with_policies("sync_planner = \"mpi-allreduce\"\n") +
                           "\n[network]\nshaper = \"none\"\n";
  EXPECT_NO_THROW(load_valid_config(scratch().write("mpi_allreduce_none", text).string()));
}

// What ships must pass the whole validation, not only config/'s part.
TEST(Config, EveryShippedConfigIsValid) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(source_dir() / "configs")) {
    if (e.path().extension() != ".toml") continue;  // configs/ and configs/balance/
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(load_valid_config(e.path().string()));
    ++n;
  }
  EXPECT_GE(n, 8);
}

TEST(Config, WorldSizeMismatch) {
  const std::string tiny = (source_dir() / "configs/tiny.toml").string();
  const Config c = load_config(tiny);
  EXPECT_NO_THROW(strait::check_world_size(c, 3));
  try {
    strait::check_world_size(c, 4);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              tiny + ": datacenter: the datacenters have 3 ranks in all but the job has 4; "
                     "expected mpirun -np 3");
  }
}

TEST(Config, ParameterCountOfTheTinyModel) {
  strait::ModelConfig m;
  m.layers = 2, m.d_model = 32, m.heads = 4, m.d_ff = 64, m.seq_len = 16, m.vocab = 256;
  // token embedding 256*32 = 8192, positions 16*32 = 512, final layer norm 2*32 = 64;
  // per layer: ln1 64 + qkv 3*32*32 + 3*32 = 3168 + attn out 32*32 + 32 = 1056 + ln2 64
  //            + MLP up 32*64 + 64 = 2112 + MLP down 64*32 + 32 = 2080  → 8544
  EXPECT_EQ(strait::parameter_count(m), 8192 + 512 + 64 + 2 * 8544);
  EXPECT_EQ(strait::parameter_count(m), 25856);
}

TEST(Config, MemoryEstimateOfTheTinyModel) {
  const Config c = load_config((source_dir() / "configs/tiny.toml").string());
  // Rank 0 is datacenter "a" alone: f = 1, h = 4, hd = 8, fr = 64, b = 3 (half of 6).
  const double V = 256, C = 32, T = 16, L = 2;
  const double P = V * C + T * C + 2 * C + L * 6 * C + L * (3 * C * 32 + 3 * 32 + 32 * C + C * 64 + 64 + 64 * C);
  const strait::MemoryEstimate m0 = strait::estimate_memory(c, 0);
  EXPECT_DOUBLE_EQ(m0.params_bytes, 4 * P);
  EXPECT_DOUBLE_EQ(m0.adam_bytes, 8 * P);
  EXPECT_DOUBLE_EQ(m0.activations_bytes, 4 * 3 * T * (L * (10 * C + 4 * 32 + 2 * 4 * T + 3 * 64) + 2 * V + 4 * C));
  EXPECT_DOUBLE_EQ(m0.total_bytes, m0.params_bytes + m0.grads_bytes + m0.adam_bytes + m0.activations_bytes);
  // Ranks 1 and 2 share datacenter "b": half the heads and columns each, so less than rank 0.
  EXPECT_LT(strait::estimate_memory(c, 1).total_bytes, m0.total_bytes);
  EXPECT_DOUBLE_EQ(strait::estimate_memory(c, 1).total_bytes, strait::estimate_memory(c, 2).total_bytes);
}

// The memory check is about host memory for the CPU backend: a CUDA run of the same (too large)
// config loads, "auto" does not.
TEST(Config, MemoryCheckIsForTheCpuBackend) {
  const std::string big = with("seq_len = 16", "seq_len = 256",
                               with("memory_limit_gb = 4", "memory_limit_gb = 0.001"));
  EXPECT_THROW(load_valid_config(scratch().write("mem_cpu", big).string()), ConfigError);
  EXPECT_THROW(load_valid_config(scratch().write("mem_auto", big).string(), {"run.backend=auto"}),
               ConfigError);
  const Config c =
      load_valid_config(scratch().write("mem_cuda", big).string(), {"run.backend=cuda"});
  EXPECT_EQ(c.backend, "cuda");
}

// A scripted re-split that gives one rank most of the model must fit too: with a limit between
// what the configured split and the re-split need, validation refuses and names the step.
TEST(Config, MemoryCheckCoversScriptedResplits) {
  // Both DCs of two ranks at even splits; the re-split gives west's first rank 3/4 of the model.
  const std::string two_each =
      with("name = \"east\"\nranks = 1\n", "name = \"east\"\nranks = 2\n",
           with("seq_len = 16", "seq_len = 256", with("memory_limit_gb = 4", "memory_limit_gb = 0")));
  const std::string scripted =
      with("balancer = \"static\"\n",
           "balancer = \"scheduled\"\n[[control.resplit]]\nstep = 5\ndatacenter = \"west\"\n"
           "split = [0.75, 0.25]\n", two_each);
  Config c = load_config(scratch().write("mem_resplit_probe", scripted).string());
  auto most = [&] {
    double m = 0;
    for (int r = 0; r < c.world_size(); ++r) m = std::max(m, strait::estimate_memory(c, r).total_bytes);
    return m;
  };
  const double before = most();
  c.datacenters[1].split = {0.75, 0.25};
  const double after = most();
  ASSERT_GT(after, before);
  std::ostringstream lim;
  lim.precision(17);
  lim << "memory_limit_gb = " << (before + after) / 2 / 1073741824.0;
  try {
    load_valid_config(scratch().write("mem_resplit", with("memory_limit_gb = 0", lim.str(), scripted)).string());
    ADD_FAILURE() << "a re-split above the memory limit was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("after the re-split at step 5"), std::string::npos) << e.what();
  }
  // Without the re-split the same limit is fine.
  EXPECT_NO_THROW(load_valid_config(
      scratch().write("mem_resplit_none", with("memory_limit_gb = 0", lim.str(), two_each)).string()));
}

TEST(Config, NetworkKeysHaveDefaults) {
  const Config c = load_config(scratch().write("net_defaults", base()).string());
  EXPECT_EQ(c.network.shaper, "software");
  EXPECT_DOUBLE_EQ(c.network.time_scale, 1.0);
  EXPECT_EQ(c.network.chunk_bytes, 256 * 1024);
  EXPECT_DOUBLE_EQ(c.network.default_jitter_ms, 0.0);
  EXPECT_TRUE(c.network.full_mesh);
  ASSERT_EQ(c.links.size(), 2u);
  for (const auto& l : c.links) {
    EXPECT_STREQ(l.schedule_kind(), "constant");
    EXPECT_DOUBLE_EQ(l.jitter_ms, 0.0);
  }
}

TEST(Config, NetworkKeysAndLinkSchedulesLoad) {
  std::ofstream(scratch().dir() / "sched.csv") << "time_s,capacity_gbps,latency_ms\n0,1,20\n60,0.25,40\n";
  const std::string text =
      with("ranks = 2\nsplit = [0.5, 0.5]\n",
           "ranks = 2\nsplit = [0.5, 0.5]\n\n[[datacenter]]\nname = \"south\"\nranks = 1\n") +
      "\n[network]\nshaper = \"none\"\ntime_scale = 50\nchunk_kib = 64\ndefault_jitter_ms = 2\n"
      "full_mesh = false\n"
      "\n[[link]]\nfrom = \"west\"\nto = \"east\"\nmarkov_factors = [1, 0.5]\n"
      "markov_transition = [[0.9, 0.1], [0.3, 0.7]]\nmarkov_dwell_s = 2.5\nmarkov_seed = 77\n"
      "\n[[link]]\nfrom = \"east\"\nto = \"south\"\nstep_at_s = 30\nstep_capacity_gbps = 0.1\n"
      "step_latency_ms = 80\njitter_ms = 1.5\n"
      "\n[[link]]\nfrom = \"south\"\nto = \"east\"\n"
      "\n[[link]]\nfrom = \"west\"\nto = \"south\"\n"
      "\n[[link]]\nfrom = \"south\"\nto = \"west\"\n";
  const std::string with_schedule =
      with("latency_ms = 20.0", "latency_ms = 20.0\nschedule = \"sched.csv\"", text);
  const Config c = load_config(scratch().write("net_full", with_schedule).string());
  EXPECT_EQ(c.network.shaper, "none");
  EXPECT_DOUBLE_EQ(c.network.time_scale, 50.0);
  EXPECT_EQ(c.network.chunk_bytes, 64 * 1024);
  EXPECT_FALSE(c.network.full_mesh);
  ASSERT_EQ(c.links.size(), 6u);
  // Order: (east,west) (east,south) (west,east) (west,south) (south,east) (south,west).
  const auto& ew = c.links[0];
  EXPECT_STREQ(ew.schedule_kind(), "piecewise");
  EXPECT_EQ(ew.schedule_path, (scratch().dir() / "sched.csv").string());  // relative to the config
  ASSERT_EQ(ew.schedule.size(), 2u);
  EXPECT_DOUBLE_EQ(ew.schedule[1].t_s, 60);
  EXPECT_DOUBLE_EQ(ew.schedule[1].capacity_gbps, 0.25);
  EXPECT_DOUBLE_EQ(ew.schedule[1].latency_ms, 40);
  EXPECT_DOUBLE_EQ(ew.jitter_ms, 2.0);  // network.default_jitter_ms
  const auto& es = c.links[1];
  EXPECT_STREQ(es.schedule_kind(), "step");
  EXPECT_DOUBLE_EQ(es.step_at_s, 30);
  EXPECT_DOUBLE_EQ(es.step_capacity_gbps, 0.1);
  EXPECT_DOUBLE_EQ(es.step_latency_ms, 80);
  EXPECT_DOUBLE_EQ(es.jitter_ms, 1.5);
  const auto& we = c.links[2];
  EXPECT_STREQ(we.schedule_kind(), "markov");
  EXPECT_EQ(we.markov_factors, (std::vector<double>{1, 0.5}));
  ASSERT_EQ(we.markov_transition.size(), 2u);
  EXPECT_EQ(we.markov_transition[1], (std::vector<double>{0.3, 0.7}));
  EXPECT_DOUBLE_EQ(we.markov_dwell_s, 2.5);
  EXPECT_EQ(we.markov_seed, 77u);
  EXPECT_STREQ(c.links[3].schedule_kind(), "constant");

  // With full_mesh = false only the listed links exist: dropping one leaves a sparse graph that
  // still connects every DC (south reaches west through east), and that pair has no link.
  const auto cut = with("\n[[link]]\nfrom = \"south\"\nto = \"west\"\n", "\n", with_schedule);
  const Config sparse = load_config(scratch().write("net_cut", cut).string());
  EXPECT_EQ(sparse.links.size(), c.links.size() - 1);
  for (const auto& l : sparse.links) EXPECT_FALSE(l.from == "south" && l.to == "west");
}

TEST(Config, MalformedScheduleCsvNamesTheCsvAndItsLine) {
  // Absolute path to a fixture: capacity -2 on line 4.
  const fs::path bad = source_dir() / "tests/data/link_schedule_bad_capacity.csv";
  const std::string abs = with("latency_ms = 20.0", "latency_ms = 20.0\nschedule = \"" + bad.string() + "\"");
  try {
    load_config(scratch().write("csv_abs", abs).string());
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string() + ":4: link.0.schedule: capacity_gbps -2 is out "
                                         "of range; expected a number in [1e-06, 1e+06] (Gbit/s)"),
              std::string::npos) << e.what();
  }
  // A relative path starts at the config file's folder; a non-number on line 3, reported with
  // the other errors of the file.
  std::ofstream(scratch().dir() / "bad_number.csv") << "time_s,capacity_gbps,latency_ms\n0,1,10\n10,fast,10\n";
  const std::string rel = with("layers = 2", "layers = 0",
                               with("latency_ms = 20.0", "latency_ms = 20.0\nschedule = \"bad_number.csv\""));
  try {
    load_config(scratch().write("csv_rel", rel).string());
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find((scratch().dir() / "bad_number.csv").string() +
                       ":3: link.0.schedule: capacity_gbps \"fast\" is not a number; expected a "
                       "finite number (Gbit/s)"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find("model.layers"), std::string::npos) << msg;
  }
}
