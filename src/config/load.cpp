// load.cpp — load_config(): TOML text → --set overrides → schema and range checks → Config.
// Every problem becomes one line "<file>:<line>: <key>: <what was wrong>; expected <what is
// allowed>"; all problems found are reported together (one per line) in one ConfigError.
// Overrides are applied to the parsed table before any check, so they meet the same rules;
// nodes they placed are reported as "--set:0". Only what config/ alone can judge is checked
// here; policy names, splits against the model's heads and the memory estimate need the layers
// above and are checked by validate/ (load_valid_config), which finds its lines through
// Config::where. docs/config.md is the reference for the keys.
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <climits>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "config/config.hpp"
#include "config/limits.hpp"
#include "config/messages.hpp"

namespace strait {
namespace {

namespace fs = std::filesystem;

constexpr double kSumTolerance = 1e-6;
constexpr int kMaxRanksPerDc = 65536;

// The schema: the keys each table accepts ("" is the document root; array elements use the
// array's path, so "datacenter" describes every [[datacenter]] entry).
const std::map<std::string, std::vector<std::string>>& schema() {
  static const std::map<std::string, std::vector<std::string>> s = {
      {"", {"run", "datacenter", "network", "link", "load", "device", "model", "train", "control",
            "trace", "checkpoint"}},
      {"run", {"name", "out_dir", "backend", "gpu_math", "memory_limit_gb", "stall_timeout_s",
               "stop_grace_s", "blas_threads"}},
      {"datacenter", {"name", "ranks", "speed", "split"}},
      {"network", {"shaper", "time_scale", "chunk_kib", "default_capacity_gbps",
                   "default_latency_ms", "default_jitter_ms", "full_mesh"}},
      {"link", {"from", "to", "capacity_gbps", "latency_ms", "jitter_ms", "schedule", "step_at_s",
                "step_capacity_gbps", "step_latency_ms", "markov_factors", "markov_transition",
                "markov_dwell_s", "markov_seed"}},
      {"device", {"gflops"}},
      {"load", {"datacenter", "ranks", "kind", "speed", "at_step", "speed_after", "file", "start",
                "stride", "speeds", "transition", "dwell_steps", "seed", "column", "time_column",
                "worker", "pod", "signal", "floor"}},
      {"model", {"layers", "d_model", "heads", "d_ff", "seq_len", "vocab", "experts", "init_std"}},
      {"train", {"global_batch", "steps", "lr", "beta1", "beta2", "eps", "weight_decay", "seed",
                 "corpus", "batch_shares", "log_every"}},
      {"control", {"forecaster", "balancer", "path_selector", "sync_planner", "overlap", "lag", "report", "early_paths", "beliefs",
                   "resplit", "reroute", "switch", "forecast", "balance", "paths"}},
      {"control.resplit", {"step", "datacenter", "split"}},
      {"control.reroute", {"step", "from", "to", "via"}},
      {"control.switch", {"step", "slot", "policy"}},
      {"control.forecast", {"window", "states", "horizon", "fallback", "ewma_alpha",
                            "skill_window", "checks"}},
      {"control.balance", {"gain_steps", "hysteresis", "noise_window", "shares", "confirm", "act_early"}},
      {"control.paths", {"states", "ewma_alpha", "relays", "switch_cost_ms", "gamma",
                         "epsilon_ms", "resolve_change", "explore", "standby", "tail", "oracle_age_steps"}},
      {"trace", {"path"}},
      {"checkpoint", {"every", "path"}},
  };
  return s;
}
const std::set<std::string> kArraysOfTables = {"datacenter", "link", "load", "control.resplit",
                                               "control.reroute", "control.switch"};
// Keys that only take strings: a --set value for them is never parsed as another TOML type.
const std::set<std::string> kStringKeys = {
    "run.name", "run.out_dir", "run.backend", "run.gpu_math", "datacenter.name", "network.shaper", "link.from",
    "link.to", "link.schedule", "load.datacenter", "load.kind", "load.file", "load.column",
    "load.time_column", "load.signal",
    "train.corpus", "control.forecaster", "control.balancer", "control.path_selector",
    "control.sync_planner", "control.overlap", "control.report", "control.beliefs", "control.resplit.datacenter",
    "control.reroute.from", "control.reroute.to", "control.switch.slot", "control.switch.policy",
    "control.forecast.fallback", "control.forecast.checks",
    "trace.path",
    "checkpoint.path"};

std::string join_path(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "." + b;
}

using msg::count;
using msg::join;
using msg::num;
using msg::num_list;
using msg::quote;

std::string type_phrase(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string (" + quote(**n.as_string()) + ")";
    case toml::node_type::integer: return "an integer (" + std::to_string(**n.as_integer()) + ")";
    case toml::node_type::floating_point: return "a float (" + num(**n.as_floating_point()) + ")";
    case toml::node_type::boolean: return std::string("a boolean (") +
                                          (**n.as_boolean() ? "true" : "false") + ")";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

bool matches_charset(const std::string& s, const std::string& extra) {
  if (s.empty()) return false;
  for (unsigned char ch : s)
    if (!std::isalnum(ch) && extra.find(static_cast<char>(ch)) == std::string::npos) return false;
  return true;
}

// Collects errors, each located by the node it is about.
class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  void mark_override(const toml::node* n) { overridden_.insert(n); }

  std::string where(const toml::node* n) const {
    if (n && overridden_.count(n)) return "--set:0";
    return file_ + ":" + std::to_string(n ? n->source().begin.line : 0);
  }
  void fail(const toml::node* at, const std::string& key, const std::string& what,
            const std::string& expected) {
    fail_at(where(at), key, what, expected);
  }
  void fail_at(const std::string& where, const std::string& key, const std::string& what,
               const std::string& expected) {
    errors_.push_back(msg::line(where, key, what, expected));
  }
  // An error already formatted as "<where>: <key>: <what>; expected <what>" (e.g. from a CSV).
  void fail_line(const std::string& line) { errors_.push_back(line); }
  size_t count() const { return errors_.size(); }
  void throw_if_any() const {
    if (errors_.empty()) return;
    throw ConfigError(limits::join_errors(errors_));  // the first lines, then a count
  }

 private:
  std::string file_;
  std::set<const toml::node*> overridden_;
  std::vector<std::string> errors_;
};

// ---- typed readers: absent → leave the default; wrong type or range → error -------------

enum class Got { absent, ok, bad };

const toml::node* child(const toml::table* t, const std::string& key) {
  return t ? t->get(key) : nullptr;
}

const toml::table* child_table(const toml::table* t, const std::string& key) {
  const toml::node* n = child(t, key);
  return n ? n->as_table() : nullptr;
}

std::string int_range(long long lo, long long hi) {
  if (hi == INT_MAX || hi == LLONG_MAX) return "an integer >= " + std::to_string(lo);
  return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

template <class I>
Got read_int(Checker& c, const toml::table* t, const std::string& key, const std::string& path,
             long long lo, long long hi, I& out, const std::string& expected = "") {
  const toml::node* n = child(t, key);
  if (!n) return Got::absent;
  const std::string want = expected.empty() ? int_range(lo, hi) : expected;
  if (!n->is_integer()) {
    c.fail(n, path, "got " + type_phrase(*n), want);
    return Got::bad;
  }
  const long long v = **n->as_integer();
  if (v < lo || v > hi) {
    c.fail(n, path, std::to_string(v) + " is out of range", want);
    return Got::bad;
  }
  out = static_cast<I>(v);
  return Got::ok;
}

// A number (integers are accepted where floats are expected); ok() says whether it is in range.
template <class Pred>
Got read_number(Checker& c, const toml::table* t, const std::string& key, const std::string& path,
                double& out, Pred ok, const std::string& expected) {
  const toml::node* n = child(t, key);
  if (!n) return Got::absent;
  double v = 0;
  if (n->is_integer()) v = static_cast<double>(**n->as_integer());
  else if (n->is_floating_point()) v = **n->as_floating_point();
  else {
    c.fail(n, path, "got " + type_phrase(*n), expected);
    return Got::bad;
  }
  if (!std::isfinite(v) || !ok(v)) {
    c.fail(n, path, num(v) + " is out of range", expected);
    return Got::bad;
  }
  out = v;
  return Got::ok;
}

Got read_string(Checker& c, const toml::table* t, const std::string& key, const std::string& path,
                std::string& out, const std::string& expected = "a string") {
  const toml::node* n = child(t, key);
  if (!n) return Got::absent;
  if (!n->is_string()) {
    c.fail(n, path, "got " + type_phrase(*n), expected);
    return Got::bad;
  }
  out = **n->as_string();
  return Got::ok;
}

Got read_bool(Checker& c, const toml::table* t, const std::string& key, const std::string& path,
              bool& out) {
  const toml::node* n = child(t, key);
  if (!n) return Got::absent;
  if (!n->is_boolean()) {
    c.fail(n, path, "got " + type_phrase(*n), "true or false");
    return Got::bad;
  }
  out = **n->as_boolean();
  return Got::ok;
}

// "even" (when allowed) or an array of `want` fractions > 0 summing to 1.
// `whose` names what the fractions are for, e.g. `rank of datacenter "east" (2)`.
Got read_fractions(Checker& c, const toml::node* n, const std::string& path, bool allow_even,
                   size_t want, const std::string& whose, std::vector<double>& out, bool& even) {
  const std::string expected =
      std::string(allow_even ? "\"even\" or " : "") + "an array of " + count(static_cast<long long>(want), "fraction") +
      " > 0 (one per " + whose + ") that sum to 1 within 1e-6";
  if (!n) return Got::absent;
  if (n->is_string()) {
    if (allow_even && **n->as_string() == "even") {
      even = true;
      return Got::ok;
    }
    c.fail(n, path, "got " + type_phrase(*n), expected);
    return Got::bad;
  }
  const toml::array* a = n->as_array();
  if (!a) {
    c.fail(n, path, "got " + type_phrase(*n), expected);
    return Got::bad;
  }
  std::vector<double> v;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    double x = 0;
    if (e.is_integer()) x = static_cast<double>(**e.as_integer());
    else if (e.is_floating_point()) x = **e.as_floating_point();
    else {
      c.fail(n, path, "element " + std::to_string(i) + " is " + type_phrase(e), expected);
      return Got::bad;
    }
    if (!std::isfinite(x) || x <= 0) {
      c.fail(n, path, "element " + std::to_string(i) + " is " + num(x), expected);
      return Got::bad;
    }
    v.push_back(x);
  }
  if (v.size() != want) {
    c.fail(n, path, count(static_cast<long long>(v.size()), "fraction") + " " + num_list(v), expected);
    return Got::bad;
  }
  double sum = 0;
  for (double x : v) sum += x;
  if (std::fabs(sum - 1.0) > kSumTolerance) {
    c.fail(n, path, "fractions " + num_list(v) + " sum to " + num(sum), expected);
    return Got::bad;
  }
  out = v;
  even = false;
  return Got::ok;
}

void require(Checker& c, const toml::table* t, const std::string& key, const std::string& path,
             const std::string& expected) {
  if (!child(t, key)) c.fail(t, path, "missing", expected);
}

// ---- structure: unknown tables / keys, tables where values belong and back ---------------

void check_structure(Checker& c, const toml::table& t, const std::string& spath,
                     const std::string& shown) {
  const auto& keys = schema().at(spath);
  for (auto&& [k, v] : t) {
    const std::string key(k.str());
    const std::string path = join_path(shown, key);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const bool tableish = v.is_table() || v.is_array_of_tables();
      const std::string what = tableish ? "unknown table" : "unknown key";
      const std::string where = spath.empty() ? "the tables " : "the keys of [" + spath + "]: ";
      c.fail(&v, path, what, "one of " + where + join(keys));
      continue;
    }
    const std::string sub = join_path(spath, key);
    if (!schema().count(sub)) continue;  // a value: typed readers check it
    if (kArraysOfTables.count(sub)) {
      const toml::array* a = v.as_array();
      if (!a || (!a->empty() && !a->is_array_of_tables())) {
        c.fail(&v, path, "got " + type_phrase(v), "an array of tables ([[" + sub + "]] entries)");
        continue;
      }
      for (size_t i = 0; i < a->size(); ++i)
        check_structure(c, *a->get(i)->as_table(), sub, path + "." + std::to_string(i));
    } else if (const toml::table* st = v.as_table()) {
      check_structure(c, *st, sub, path);
    } else {
      c.fail(&v, path, "got " + type_phrase(v), "a table ([" + sub + "])");
    }
  }
}

// ---- --set overrides ----------------------------------------------------------------------

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The override value as a TOML node: parsed as TOML, else taken as a string.
toml::table parse_value(const std::string& text, bool string_only) {
  toml::table out;
  try {
    toml::table t = toml::parse("v = " + text, std::string_view("--set"));
    const toml::node* v = t.get("v");
    if (t.size() == 1 && v && (!string_only || v->is_string())) {
      out.insert_or_assign("v", *v);
      return out;
    }
  } catch (const toml::parse_error&) {
  }
  out.insert_or_assign("v", trim(text));
  return out;
}

void apply_override(Checker& c, toml::table& root, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    c.fail_at("--set:0", quote(text), "no '=' in the override", "key=value, e.g. train.steps=5");
    return;
  }
  const std::string key = trim(text.substr(0, eq));
  const std::string value = text.substr(eq + 1);
  std::vector<std::string> parts;
  {
    std::string part;
    std::istringstream ss(key);
    while (std::getline(ss, part, '.')) parts.push_back(part);
    if (!key.empty() && key.back() == '.') parts.push_back("");
  }
  const std::string expected_key = "a dotted key such as train.steps or datacenter.0.ranks";
  if (parts.empty() || std::count(parts.begin(), parts.end(), "")) {
    c.fail_at("--set:0", quote(key), "malformed key", expected_key);
    return;
  }
  toml::table* tbl = &root;
  std::string spath;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const auto& keys = schema().at(spath);
    if (std::find(keys.begin(), keys.end(), p) == keys.end()) {
      c.fail_at("--set:0", key, "unknown key " + quote(p) + (spath.empty() ? "" : " in [" + spath + "]"),
                "one of " + join(keys));
      return;
    }
    const std::string sub = join_path(spath, p);
    const bool last = i + 1 == parts.size();
    if (!schema().count(sub)) {  // a value
      if (!last) {
        c.fail_at("--set:0", key, join_path(spath, p) + " is a value, not a table", expected_key);
        return;
      }
      int at = 0;
      if (const std::string deep = limits::nesting_problem("v = " + value, at); !deep.empty()) {
        c.fail_at("--set:0", key, "the value nests " + deep, "a value nested at most " +
                  std::to_string(limits::kMaxNesting) + " levels deep");
        return;
      }
      toml::table v = parse_value(value, kStringKeys.count(sub) > 0);
      tbl->insert_or_assign(p, *v.get("v"));
      c.mark_override(tbl->get(p));
      return;
    }
    if (last) {
      c.fail_at("--set:0", key, "names a table, not a key", "one of its keys: " +
                join(schema().at(sub)));
      return;
    }
    if (kArraysOfTables.count(sub)) {
      toml::array* a = tbl->get(p) ? tbl->get(p)->as_array() : nullptr;
      const size_t n = a ? a->size() : 0;
      const std::string& idx = parts[i + 1];
      char* end = nullptr;
      const unsigned long long k = std::strtoull(idx.c_str(), &end, 10);
      if (idx.empty() || *end || !std::isdigit(static_cast<unsigned char>(idx[0])) || k >= n ||
          !a->get(k)->is_table()) {
        c.fail_at("--set:0", key, quote(idx) + " is not an index of the " + std::to_string(n) +
                  " [[" + sub + "]] entries in the file", n ? "an index from 0 to " +
                  std::to_string(n - 1) : "an entry in the file to override");
        return;
      }
      tbl = a->get(k)->as_table();
      ++i;
      if (i + 1 == parts.size()) {
        c.fail_at("--set:0", key, "names a table, not a key", "one of its keys: " +
                  join(schema().at(sub)));
        return;
      }
    } else {
      if (!tbl->get(p)) {
        tbl->insert_or_assign(p, toml::table{});
        c.mark_override(tbl->get(p));
      }
      tbl = tbl->get(p)->as_table();
      if (!tbl) return;  // the file has a value there: check_structure reports it
    }
    spath = sub;
  }
}

// ---- the sections ------------------------------------------------------------------------

bool corpus_file_ok(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) == 0 || ec) return false;
  std::ifstream in(p, std::ios::binary);
  char ch;
  return static_cast<bool>(in.read(&ch, 1));
}

// Empty when the corpus is usable, else what is wrong with it.
std::string corpus_problem(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  const auto st = fs::status(p, ec);
  if (ec || !fs::exists(st)) return quote(path) + " does not exist";
  if (fs::is_regular_file(st)) {
    if (fs::file_size(p, ec) == 0) return quote(path) + " is empty";
    return corpus_file_ok(p) ? "" : quote(path) + " cannot be read";
  }
  if (!fs::is_directory(st)) return quote(path) + " is neither a file nor a folder";
  fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
  if (ec) return quote(path) + " cannot be listed (" + ec.message() + ")";
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (corpus_file_ok(it->path())) return "";
  }
  return "the folder " + quote(path) + " holds no readable non-empty regular file";
}

void read_run(Checker& c, const toml::table* t, Config& cfg) {
  if (read_string(c, t, "name", "run.name", cfg.run_name) == Got::ok &&
      !matches_charset(cfg.run_name, "_.-"))
    c.fail(child(t, "name"), "run.name", quote(cfg.run_name) + " is not a valid name",
           "letters, digits, '_', '.' and '-' only (at least one)");
  read_string(c, t, "out_dir", "run.out_dir", cfg.out_dir);
  if (cfg.out_dir.empty()) c.fail(child(t, "out_dir"), "run.out_dir", "empty", "a folder path");
  if (read_string(c, t, "backend", "run.backend", cfg.backend) == Got::ok &&
      cfg.backend != "cpu" && cfg.backend != "cuda" && cfg.backend != "auto")
    c.fail(child(t, "backend"), "run.backend", "unknown backend " + quote(cfg.backend),
           "one of cpu, cuda, auto");
  if (read_string(c, t, "gpu_math", "run.gpu_math", cfg.gpu_math) == Got::ok &&
      cfg.gpu_math != "tf32" && cfg.gpu_math != "bf16" && cfg.gpu_math != "fp32")
    c.fail(child(t, "gpu_math"), "run.gpu_math", "unknown GPU matmul math " + quote(cfg.gpu_math),
           "one of tf32, bf16, fp32");
  read_number(c, t, "memory_limit_gb", "run.memory_limit_gb", cfg.memory_limit_gb,
              [](double x) { return x >= 0; }, "a number >= 0 (GiB per rank; 0 = MemTotal)");
  read_number(c, t, "stall_timeout_s", "run.stall_timeout_s", cfg.stall_timeout_s,
              [](double x) { return x == 0 || (x >= 1 && x <= limits::kMaxStallTimeoutS); },
              "0 (no watchdog) or a number in [1, 604800] (seconds without progress before the "
              "job is ended)");
  read_number(c, t, "stop_grace_s", "run.stop_grace_s", cfg.stop_grace_s,
              [](double x) { return x >= 1 && x <= limits::kMaxStopGraceS; },
              "a number in [1, 3600] (seconds a stopping run may go without progress)");
  read_int(c, t, "blas_threads", "run.blas_threads", 0, limits::kMaxBlasThreads, cfg.blas_threads,
           "an integer in [0, 1024] (OpenBLAS threads per rank; 0 = the rank's share of its "
           "node's cores)");
}

// Returns false when the datacenters are unusable (later checks that need them are skipped).
bool read_datacenters(Checker& c, const toml::table& root, Config& cfg) {
  const toml::node* n = root.get("datacenter");
  const toml::array* a = n ? n->as_array() : nullptr;
  if (!a || a->empty()) {
    if (!n) c.fail(&root, "datacenter", "no [[datacenter]] entries",
                   "at least one [[datacenter]] with a name and ranks");
    else if (a) c.fail(n, "datacenter", "no [[datacenter]] entries",
                       "at least one [[datacenter]] with a name and ranks");
    return false;
  }
  const size_t before = c.count();
  std::set<std::string> names;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* t = a->get(i)->as_table();
    if (!t) return false;  // check_structure reported it
    const std::string p = "datacenter." + std::to_string(i);
    DatacenterConfig dc;
    require(c, t, "name", p + ".name", "a name");
    const std::string name_rule = "letters, digits, '_' and '-' only, unique among datacenters";
    if (read_string(c, t, "name", p + ".name", dc.name, name_rule) == Got::ok) {
      if (!matches_charset(dc.name, "_-"))
        c.fail(child(t, "name"), p + ".name", quote(dc.name) + " is not a valid name", name_rule);
      else if (!names.insert(dc.name).second)
        c.fail(child(t, "name"), p + ".name", "datacenter " + quote(dc.name) + " is defined twice",
               name_rule);
    }
    require(c, t, "ranks", p + ".ranks", "an integer >= 1");
    if (read_int(c, t, "ranks", p + ".ranks", 1, kMaxRanksPerDc, dc.ranks) != Got::ok) {
      cfg.datacenters.push_back(dc);
      continue;
    }
    const std::string whose = "rank of datacenter " + quote(dc.name) + " (" +
                              count(dc.ranks, "rank") + ")";
    dc.speed.assign(dc.ranks, 1.0);
    if (const toml::node* s = child(t, "speed")) {
      const std::string expected = "an array of " + count(dc.ranks, "number") +
                                   " in (0, 1] (one per " + whose + ")";
      const toml::array* sa = s->as_array();
      if (!sa) {
        c.fail(s, p + ".speed", "got " + type_phrase(*s), expected);
      } else {
        std::vector<double> v;
        bool ok = true;
        for (size_t j = 0; j < sa->size() && ok; ++j) {
          const toml::node& e = *sa->get(j);
          double x = e.is_integer() ? static_cast<double>(**e.as_integer())
                     : e.is_floating_point() ? **e.as_floating_point() : NAN;
          if (!(x > 0 && x <= 1)) {
            c.fail(s, p + ".speed", "element " + std::to_string(j) + " is " + type_phrase(e),
                   expected);
            ok = false;
          }
          v.push_back(x);
        }
        if (ok && v.size() != static_cast<size_t>(dc.ranks)) {
          c.fail(s, p + ".speed", std::to_string(v.size()) + " speeds " + num_list(v), expected);
          ok = false;
        }
        if (ok) dc.speed = v;
      }
    }
    dc.split.assign(dc.ranks, 1.0 / dc.ranks);
    dc.split_even = true;
    std::vector<double> split;
    bool even = true;
    if (read_fractions(c, child(t, "split"), p + ".split", true, dc.ranks, whose, split, even) ==
            Got::ok &&
        !even)
      dc.split = split, dc.split_even = false;
    cfg.datacenters.push_back(dc);
  }
  return c.count() == before;
}

void read_network(Checker& c, const toml::table* net, NetworkConfig& nw) {
  if (read_string(c, net, "shaper", "network.shaper", nw.shaper, "one of software, none") ==
          Got::ok &&
      nw.shaper != "software" && nw.shaper != "none")
    c.fail(child(net, "shaper"), "network.shaper", "unknown shaper " + quote(nw.shaper),
           "one of software, none");
  read_number(c, net, "time_scale", "network.time_scale", nw.time_scale,
              [](double x) { return x >= limits::kMinTimeScale && x <= limits::kMaxTimeScale; },
              "a number in [0.001, 1000] (run capacity = capacity / time_scale, latency × "
              "time_scale)");
  long long kib = nw.chunk_bytes / 1024;
  if (read_int(c, net, "chunk_kib", "network.chunk_kib", 1, 1048576, kib,
               "an integer in [1, 1048576] (KiB per chunk, at most 1 GiB)") == Got::ok)
    nw.chunk_bytes = kib * 1024;
  read_number(c, net, "default_capacity_gbps", "network.default_capacity_gbps",
              nw.default_capacity_gbps, limits::capacity_ok, limits::kCapacityRule);
  read_number(c, net, "default_latency_ms", "network.default_latency_ms", nw.default_latency_ms,
              limits::latency_ok, limits::kLatencyRule);
  read_number(c, net, "default_jitter_ms", "network.default_jitter_ms", nw.default_jitter_ms,
              limits::latency_ok, limits::kLatencyRule);
  read_bool(c, net, "full_mesh", "network.full_mesh", nw.full_mesh);
}

// An array of finite numbers (integers accepted); `ok` checks each element. Empty arrays are
// returned as such (the caller decides).
template <class Pred>
Got read_number_array(Checker& c, const toml::node* n, const std::string& path,
                      std::vector<double>& out, Pred ok, const std::string& expected,
                      const std::string& what_prefix = "") {
  if (!n) return Got::absent;
  const toml::array* a = n->as_array();
  if (!a) {
    c.fail(n, path, what_prefix + "got " + type_phrase(*n), expected);
    return Got::bad;
  }
  std::vector<double> v;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    const double x = e.is_integer() ? static_cast<double>(**e.as_integer())
                     : e.is_floating_point() ? **e.as_floating_point() : NAN;
    if (!std::isfinite(x) || !ok(x)) {
      c.fail(n, path, what_prefix + "element " + std::to_string(i) + " is " + type_phrase(e),
             expected);
      return Got::bad;
    }
    v.push_back(x);
  }
  out = v;
  return Got::ok;
}

// The regular file a path key names, relative paths starting at the config file's folder; ""
// (reported) when the key is not a usable path.
std::string existing_file(Checker& c, const toml::table* t, const std::string& key,
                          const std::string& path, const fs::path& config_dir,
                          const std::string& expected) {
  const toml::node* n = child(t, key);
  std::string rel;
  if (read_string(c, t, key, path, rel, expected) != Got::ok) return "";
  if (rel.empty()) {
    c.fail(n, path, "empty", expected);
    return "";
  }
  fs::path full(rel);
  if (full.is_relative()) full = config_dir / full;
  std::error_code ec;
  if (!fs::is_regular_file(full, ec)) {
    c.fail(n, path,
           quote(rel) + (full.string() != rel ? " (" + full.string() + ")" : "") +
               (fs::exists(full, ec) ? " is not a regular file" : " does not exist"),
           expected);
    return "";
  }
  return full.string();
}

// A K×K row-stochastic matrix (a Markov chain's transitions), one row per `per` (e.g. "markov
// factor"): entries in [0, 1], rows summing to 1 within 1e-6. False (reported) otherwise.
bool read_transition(Checker& c, const toml::node* tn, const std::string& path, size_t K,
                     const std::string& per, std::vector<std::vector<double>>& out) {
  const std::string texp = "a square array of " + count(static_cast<long long>(K), "row") +
                           " of " + count(static_cast<long long>(K), "number") +
                           " in [0, 1] (one per " + per + "), each row summing to 1 within 1e-6";
  const toml::array* ta = tn->as_array();
  if (!ta) {
    c.fail(tn, path, "got " + type_phrase(*tn), texp);
    return false;
  }
  if (ta->size() != K) {
    c.fail(tn, path, count(static_cast<long long>(ta->size()), "row") + " for " +
                         count(static_cast<long long>(K), per.substr(per.rfind(' ') + 1)),
           texp);
    return false;
  }
  std::vector<std::vector<double>> m;
  for (size_t i = 0; i < K; ++i) {
    std::vector<double> row;
    if (read_number_array(c, ta->get(i), path, row, [](double x) { return x >= 0 && x <= 1; },
                          texp, "row " + std::to_string(i) + ": ") != Got::ok)
      return false;
    if (row.size() != K) {
      c.fail(tn, path, "row " + std::to_string(i) + " has " +
                           count(static_cast<long long>(row.size()), "number"), texp);
      return false;
    }
    double sum = 0;
    for (double x : row) sum += x;
    if (std::fabs(sum - 1.0) > kSumTolerance) {
      c.fail(tn, path, "row " + std::to_string(i) + " " + num_list(row) + " sums to " + num(sum),
             texp);
      return false;
    }
    m.push_back(row);
  }
  out = m;
  return true;
}

// The schedule keys of one [[link]]: at most one of schedule / step_* / markov_*.
void read_link_schedule(Checker& c, const toml::table* t, const std::string& p,
                        const fs::path& config_dir, LinkConfig& link) {
  static const char* const step_keys[] = {"step_at_s", "step_capacity_gbps", "step_latency_ms"};
  static const char* const markov_keys[] = {"markov_factors", "markov_transition",
                                            "markov_dwell_s", "markov_seed"};
  std::vector<std::string> kinds;
  if (child(t, "schedule")) kinds.push_back("schedule");
  for (const char* k : step_keys)
    if (child(t, k)) { kinds.push_back("step_*"); break; }
  for (const char* k : markov_keys)
    if (child(t, k)) { kinds.push_back("markov_*"); break; }
  if (kinds.size() > 1) {
    c.fail(t, p, "both " + join(kinds, " and ") + " keys are set",
           "at most one schedule kind per link: schedule, step_* or markov_*");
    return;
  }
  if (kinds.empty()) return;

  if (kinds[0] == "schedule") {
    const std::string full = existing_file(
        c, t, "schedule", p + ".schedule", config_dir,
        "a path to a CSV file with the header time_s,capacity_gbps,latency_ms (relative paths "
        "start at the config file's folder)");
    if (full.empty()) return;
    try {
      link.schedule = read_schedule_csv(full, p + ".schedule");
      link.schedule_path = full;
    } catch (const ConfigError& e) {
      c.fail_line(e.what());
    }
    return;
  }

  if (kinds[0] == "step_*") {
    const std::string together = "step_at_s, step_capacity_gbps and step_latency_ms together";
    bool all = true;
    for (const char* k : step_keys)
      if (!child(t, k)) {
        c.fail(t, p + "." + k, "missing (another step_* key is set)", together);
        all = false;
      }
    bool ok = read_number(c, t, "step_at_s", p + ".step_at_s", link.step_at_s,
                          [](double x) { return x > 0 && x <= limits::kMaxScheduleTimeS; },
                          "a number in (0, 1e9] (seconds after the start)") == Got::ok;
    ok = read_number(c, t, "step_capacity_gbps", p + ".step_capacity_gbps",
                     link.step_capacity_gbps, limits::capacity_ok,
                     limits::kCapacityRule) == Got::ok && ok;
    ok = read_number(c, t, "step_latency_ms", p + ".step_latency_ms", link.step_latency_ms,
                     limits::latency_ok, limits::kLatencyRule) == Got::ok && ok;
    link.has_step = all && ok;
    return;
  }

  // Markov-modulated congestion.
  const std::string together =
      "markov_factors, markov_transition and markov_dwell_s together (markov_seed optional)";
  for (const char* k : {"markov_factors", "markov_transition", "markov_dwell_s"})
    if (!child(t, k)) c.fail(t, p + "." + k, "missing (another markov_* key is set)", together);
  std::vector<double> factors;
  const std::string fexp =
      "a non-empty array of numbers > 0 (capacity multipliers, one per congestion state)";
  const Got fgot = read_number_array(c, child(t, "markov_factors"), p + ".markov_factors",
                                     factors, [](double x) { return x > 0; }, fexp);
  if (fgot == Got::ok && factors.empty())
    c.fail(child(t, "markov_factors"), p + ".markov_factors", "empty", fexp);
  read_number(c, t, "markov_dwell_s", p + ".markov_dwell_s", link.markov_dwell_s,
              [](double x) { return x >= limits::kMinDwellS && x <= limits::kMaxScheduleTimeS; },
              "a number in [0.001, 1e9] (seconds per congestion state)");
  read_int(c, t, "markov_seed", p + ".markov_seed", 0, LLONG_MAX, link.markov_seed);
  const toml::node* tn = child(t, "markov_transition");
  if (!tn || fgot != Got::ok || factors.empty()) return;
  std::vector<std::vector<double>> m;
  if (!read_transition(c, tn, p + ".markov_transition", factors.size(), "markov factor", m)) return;
  if (!child(t, "markov_dwell_s")) return;
  link.markov_factors = factors;
  link.markov_transition = m;
}

void read_links(Checker& c, const toml::table& root, Config& cfg) {
  const toml::table* net = child_table(&root, "network");
  const NetworkConfig& nw = cfg.network;
  const double cap = nw.default_capacity_gbps, lat = nw.default_latency_ms;
  const fs::path config_dir = fs::path(cfg.source_file).parent_path();
  const size_t N = cfg.datacenters.size();
  auto index_of = [&](const std::string& name) -> int {
    for (size_t d = 0; d < N; ++d)
      if (cfg.datacenters[d].name == name) return static_cast<int>(d);
    return -1;
  };
  auto make = [&](const std::string& from, const std::string& to) {
    LinkConfig l;
    l.from = from, l.to = to, l.capacity_gbps = cap, l.latency_ms = lat;
    l.jitter_ms = nw.default_jitter_ms;
    return l;
  };
  std::vector<LinkConfig> grid(N * N);
  for (size_t i = 0; i < N; ++i)
    for (size_t j = 0; j < N; ++j)
      grid[i * N + j] = make(cfg.datacenters[i].name, cfg.datacenters[j].name);
  std::vector<const toml::node*> seen(N * N, nullptr);

  const toml::node* n = root.get("link");
  const toml::array* a = n ? n->as_array() : nullptr;
  std::vector<std::string> names;
  for (const auto& dc : cfg.datacenters) names.push_back(dc.name);
  const std::string known = "the name of a datacenter (" + join(names) + ")";
  for (size_t i = 0; a && i < a->size(); ++i) {
    const toml::table* t = a->get(i)->as_table();
    if (!t) break;
    const std::string p = "link." + std::to_string(i);
    std::string from, to;
    int fi = -1, ti = -1;
    require(c, t, "from", p + ".from", known);
    require(c, t, "to", p + ".to", known);
    if (read_string(c, t, "from", p + ".from", from, known) == Got::ok &&
        (fi = index_of(from)) < 0)
      c.fail(child(t, "from"), p + ".from", "unknown datacenter " + quote(from), known);
    if (read_string(c, t, "to", p + ".to", to, known) == Got::ok && (ti = index_of(to)) < 0)
      c.fail(child(t, "to"), p + ".to", "unknown datacenter " + quote(to), known);
    LinkConfig link = make(from, to);
    read_number(c, t, "capacity_gbps", p + ".capacity_gbps", link.capacity_gbps,
                limits::capacity_ok, limits::kCapacityRule);
    read_number(c, t, "latency_ms", p + ".latency_ms", link.latency_ms, limits::latency_ok,
                limits::kLatencyRule);
    read_number(c, t, "jitter_ms", p + ".jitter_ms", link.jitter_ms, limits::latency_ok,
                limits::kLatencyRule);
    read_link_schedule(c, t, p, config_dir, link);
    if (fi < 0 || ti < 0) continue;
    if (fi == ti) {
      c.fail(child(t, "to"), p + ".to", "a link from " + quote(from) + " to itself",
             "two different datacenters");
      continue;
    }
    const size_t k = static_cast<size_t>(fi) * N + static_cast<size_t>(ti);
    if (seen[k]) {
      c.fail(t, p, "duplicate link " + quote(from) + " -> " + quote(to) + " (first at " +
                       c.where(seen[k]) + ")",
             "each ordered (from, to) pair at most once");
      continue;
    }
    seen[k] = t;
    grid[k] = link;
  }
  if (!nw.full_mesh) {
    // Only the listed links exist (a sparse graph: line, star, ring, regions joined by one link).
    // Every DC must still reach every other one over them, so that every transfer has a path.
    const toml::node* fm = child(net, "full_mesh");
    for (size_t i = 0; i < N; ++i) {
      std::vector<bool> reached(N, false);
      std::vector<size_t> queue{i};
      reached[i] = true;
      for (size_t q = 0; q < queue.size(); ++q)
        for (size_t j = 0; j < N; ++j)
          if (!reached[j] && seen[queue[q] * N + j]) reached[j] = true, queue.push_back(j);
      for (size_t j = 0; j < N; ++j)
        if (!reached[j]) {
          c.fail(fm ? fm : net, "link",
                 "datacenter " + quote(cfg.datacenters[j].name) + " cannot be reached from " +
                     quote(cfg.datacenters[i].name) + " over the [[link]] entries",
                 "links that connect every datacenter to every other (directly or through "
                 "others) when network.full_mesh = false");
          break;  // one unreachable pair per source is enough to read
        }
    }
  }
  cfg.links.clear();
  for (size_t i = 0; i < N; ++i)
    for (size_t j = 0; j < N; ++j)
      if (i != j && (nw.full_mesh || seen[i * N + j])) cfg.links.push_back(grid[i * N + j]);
}

void read_model(Checker& c, const toml::table* t, Config& cfg) {
  ModelConfig& m = cfg.model;
  read_int(c, t, "layers", "model.layers", 1, INT_MAX, m.layers);
  read_int(c, t, "d_model", "model.d_model", 1, INT_MAX, m.d_model);
  const bool heads_ok = read_int(c, t, "heads", "model.heads", 1, INT_MAX, m.heads) != Got::bad;
  read_int(c, t, "d_ff", "model.d_ff", 1, INT_MAX, m.d_ff);
  read_int(c, t, "seq_len", "model.seq_len", 2, INT_MAX, m.seq_len);
  read_int(c, t, "vocab", "model.vocab", 256, 256, m.vocab, "256 (byte-level tokens)");
  read_int(c, t, "experts", "model.experts", 1, INT_MAX, m.experts);
  read_number(c, t, "init_std", "model.init_std", m.init_std,
              [](double x) { return x > 0 && x <= limits::kMaxInitStd; }, "a number in (0, 1]");
  if (heads_ok && m.d_model % m.heads != 0)
    c.fail(child(t, "heads") ? child(t, "heads") : t, "model.heads",
           "d_model " + std::to_string(m.d_model) + " is not divisible by " +
               std::to_string(m.heads) + " heads",
           "a number of heads that divides d_model");
}

// Returns whether train.steps is usable (the resplit checks need it).
bool read_train(Checker& c, const toml::table* t, Config& cfg, bool dcs_ok) {
  TrainConfig& tr = cfg.train;
  const int N = static_cast<int>(cfg.datacenters.size());
  const bool gb_ok = read_int(c, t, "global_batch", "train.global_batch", 1, INT_MAX,
                              tr.global_batch) != Got::bad;
  const bool steps_ok = read_int(c, t, "steps", "train.steps", 1, INT_MAX, tr.steps) != Got::bad;
  read_number(c, t, "lr", "train.lr", tr.lr, [](double x) { return x > 0 && x <= limits::kMaxLr; },
              "a number in (0, 1]");
  read_number(c, t, "beta1", "train.beta1", tr.beta1,
              [](double x) { return x >= 0 && x < 1; }, "a number in [0, 1)");
  read_number(c, t, "beta2", "train.beta2", tr.beta2,
              [](double x) { return x >= 0 && x < 1; }, "a number in [0, 1)");
  read_number(c, t, "eps", "train.eps", tr.eps,
              [](double x) { return x > 0 && x <= limits::kMaxEps; }, "a number in (0, 1]");
  read_number(c, t, "weight_decay", "train.weight_decay", tr.weight_decay,
              [](double x) { return x >= 0 && x <= limits::kMaxWeightDecay; }, "a number in [0, 1]");
  read_int(c, t, "seed", "train.seed", 0, LLONG_MAX, tr.seed);
  read_int(c, t, "log_every", "train.log_every", 1, INT_MAX, tr.log_every);
  if (read_string(c, t, "corpus", "train.corpus", tr.corpus) != Got::bad) {
    const std::string problem = corpus_problem(tr.corpus);
    if (!problem.empty())
      c.fail(child(t, "corpus") ? child(t, "corpus") : t, "train.corpus", problem,
             "a readable file, or a folder holding at least one readable non-empty regular file "
             "(relative paths start at the current directory)");
  }
  if (!dcs_ok || N == 0) return steps_ok;
  tr.batch_shares.assign(N, 1.0 / N);
  tr.batch_shares_even = true;
  std::vector<double> shares;
  bool even = true;
  const toml::node* bs = child(t, "batch_shares");
  const Got got = read_fractions(c, bs, "train.batch_shares", true, N, "datacenter", shares, even);
  if (got == Got::bad || !gb_ok) return steps_ok;
  if (got == Got::ok && !even) tr.batch_shares = shares, tr.batch_shares_even = false;
  if (tr.global_batch < N) {
    c.fail(child(t, "global_batch") ? child(t, "global_batch") : t, "train.global_batch",
           count(tr.global_batch, "sequence") + " cannot give each of the " +
               std::to_string(N) + " datacenters at least one",
           "global_batch >= " + std::to_string(N));
    return steps_ok;
  }
  for (int d = 0; d < N; ++d) {
    const double seqs = tr.batch_shares[d] * tr.global_batch;
    if (seqs < 1 - kSumTolerance)
      c.fail(bs ? bs : t, "train.batch_shares",
             "datacenter " + quote(cfg.datacenters[d].name) + " gets " +
                 num(tr.batch_shares[d]) + " x " + std::to_string(tr.global_batch) + " = " +
                 num(seqs) + " sequences",
             "shares that give every datacenter at least 1 sequence of the global batch");
  }
  return steps_ok;
}

// The entries of [[control.<key>]] as tables, or null when there are none. Entries are only
// allowed when the slot's policy is "scheduled" (they are what it replays).
const toml::array* scripted_entries(Checker& c, const toml::table* t, const std::string& key,
                                    const char* slot, const std::string& policy) {
  const toml::node* n = child(t, key);
  const toml::array* a = n ? n->as_array() : nullptr;
  if (!a || a->empty()) return nullptr;
  if (policy != "scheduled") {
    const std::string entry = "[[control." + key + "]]";
    c.fail(n, "control." + key,
           std::to_string(a->size()) + " " + entry + (a->size() == 1 ? " entry" : " entries") +
               " with " + slot + " " + quote(policy),
           std::string("control.") + slot + " = \"scheduled\", or no " + entry + " entries");
    return nullptr;
  }
  for (size_t i = 0; i < a->size(); ++i)
    if (!a->get(i)->as_table()) return nullptr;  // check_structure reported it
  return a;
}

// `step` of a scripted entry: 1 .. train.steps - 1.
Got read_event_step(Checker& c, const toml::table* e, const std::string& p, const Config& cfg,
                    bool steps_ok, int& step, const std::string& key = "step") {
  require(c, e, key, p + "." + key, "a step number");
  const std::string rule = steps_ok ? int_range(1, cfg.train.steps - 1) + " (below train.steps = " +
                                          std::to_string(cfg.train.steps) + ")"
                                    : "an integer >= 1, below train.steps";
  return read_int(c, e, key, p + "." + key, 1, steps_ok ? cfg.train.steps - 1 : INT_MAX, step,
                  rule);
}

// With control.early_paths a record's sync half runs one sync before its step, and no record is
// made past the run: a sync-half event at the last step would never land.
void refuse_last_sync(Checker& c, const toml::table* e, const std::string& p, const Config& cfg,
                      bool steps_ok, Got step_got, int step) {
  if (step_got != Got::ok || !steps_ok || !cfg.control.early_paths || step != cfg.train.steps - 1)
    return;
  c.fail(child(e, "step"), p + ".step",
         "with control.early_paths nothing lands at the last step's sync (step " +
             std::to_string(step) + "): it would need the record of step " +
             std::to_string(cfg.train.steps) + ", past the run",
         "a step in [1, " + std::to_string(cfg.train.steps - 2) + "], or control.early_paths = false");
}

int dc_index(const Config& cfg, const std::string& name) {
  for (size_t k = 0; k < cfg.datacenters.size(); ++k)
    if (cfg.datacenters[k].name == name) return static_cast<int>(k);
  return -1;
}

std::string dc_names_phrase(const Config& cfg) {
  std::vector<std::string> names;
  for (const auto& dc : cfg.datacenters) names.push_back(dc.name);
  return "the name of a datacenter (" + join(names) + ")";
}

// Whether each split gives whole heads is checked one layer up (validate/, by model/'s rule).
void read_resplits(Checker& c, const toml::table* t, Config& cfg, bool dcs_ok, bool steps_ok) {
  ControlConfig& ct = cfg.control;
  const toml::array* a = scripted_entries(c, t, "resplit", "balancer", ct.balancer);
  if (!a) return;
  std::set<std::pair<int, std::string>> seen;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* e = a->get(i)->as_table();
    const std::string p = "control.resplit." + std::to_string(i);
    ResplitEvent ev;
    ev.entry = static_cast<int>(i);
    require(c, e, "datacenter", p + ".datacenter", "a datacenter name");
    require(c, e, "split", p + ".split", "split fractions");
    const Got step_got = read_event_step(c, e, p, cfg, steps_ok, ev.step);
    if (read_string(c, e, "datacenter", p + ".datacenter", ev.datacenter) != Got::ok || !dcs_ok)
      continue;
    const int d = dc_index(cfg, ev.datacenter);
    if (d < 0) {
      c.fail(child(e, "datacenter"), p + ".datacenter", "unknown datacenter " + quote(ev.datacenter),
             dc_names_phrase(cfg));
      continue;
    }
    const DatacenterConfig& dc = cfg.datacenters[d];
    bool even = false;
    const std::string whose = "rank of datacenter " + quote(dc.name) + " (" +
                              count(dc.ranks, "rank") + ")";
    if (read_fractions(c, child(e, "split"), p + ".split", false, dc.ranks, whose, ev.split,
                       even) != Got::ok)
      continue;
    if (step_got == Got::ok && !seen.insert({ev.step, ev.datacenter}).second)
      c.fail(e, p, "datacenter " + quote(ev.datacenter) + " is re-split twice at step " +
                       std::to_string(ev.step),
             "at most one [[control.resplit]] per datacenter and step");
    ct.resplits.push_back(ev);
  }
  std::stable_sort(ct.resplits.begin(), ct.resplits.end(),
                   [](const ResplitEvent& x, const ResplitEvent& y) { return x.step < y.step; });
}

void read_reroutes(Checker& c, const toml::table* t, Config& cfg, bool dcs_ok, bool steps_ok) {
  ControlConfig& ct = cfg.control;
  const toml::array* a = scripted_entries(c, t, "reroute", "path_selector", ct.path_selector);
  if (!a) return;
  const std::string known = dc_names_phrase(cfg);
  std::set<std::tuple<int, std::string, std::string>> seen;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* e = a->get(i)->as_table();
    const std::string p = "control.reroute." + std::to_string(i);
    RerouteEvent ev;
    ev.entry = static_cast<int>(i);
    require(c, e, "from", p + ".from", known);
    require(c, e, "to", p + ".to", known);
    const Got step_got = read_event_step(c, e, p, cfg, steps_ok, ev.step);
    refuse_last_sync(c, e, p, cfg, steps_ok, step_got, ev.step);
    const bool from_ok = read_string(c, e, "from", p + ".from", ev.from, known) == Got::ok;
    const bool to_ok = read_string(c, e, "to", p + ".to", ev.to, known) == Got::ok;
    const std::string via_rule = "an array of datacenter names to relay through, in order "
                                 "(empty = direct), each at most once and neither end";
    bool via_ok = true;
    if (const toml::node* vn = child(e, "via")) {
      const toml::array* va = vn->as_array();
      if (!va) {
        c.fail(vn, p + ".via", "got " + type_phrase(*vn), via_rule);
        via_ok = false;
      } else {
        for (size_t j = 0; j < va->size() && via_ok; ++j) {
          const toml::node& x = *va->get(j);
          if (!x.is_string()) {
            c.fail(vn, p + ".via", "element " + std::to_string(j) + " is " + type_phrase(x),
                   via_rule);
            via_ok = false;
          } else {
            ev.via.push_back(**x.as_string());
          }
        }
      }
    }
    if (!from_ok || !to_ok || !via_ok || !dcs_ok) continue;
    const int fi = dc_index(cfg, ev.from), ti = dc_index(cfg, ev.to);
    if (fi < 0) c.fail(child(e, "from"), p + ".from", "unknown datacenter " + quote(ev.from), known);
    if (ti < 0) c.fail(child(e, "to"), p + ".to", "unknown datacenter " + quote(ev.to), known);
    if (fi < 0 || ti < 0) continue;
    if (fi == ti) {
      c.fail(child(e, "to"), p + ".to", "a path from " + quote(ev.from) + " to itself",
             "two different datacenters");
      continue;
    }
    std::vector<int> path{fi};
    bool ok = true;
    for (const auto& v : ev.via) {
      const int vi = dc_index(cfg, v);
      if (vi < 0 || vi == fi || vi == ti ||
          std::find(path.begin(), path.end(), vi) != path.end()) {
        c.fail(child(e, "via"), p + ".via",
               vi < 0 ? "unknown datacenter " + quote(v) : quote(v) + " is an end of the path or repeated",
               via_rule);
        ok = false;
        break;
      }
      path.push_back(vi);
    }
    if (!ok) continue;
    path.push_back(ti);
    for (size_t h = 0; ok && h + 1 < path.size(); ++h) {
      const std::string& a = cfg.datacenters[path[h]].name;
      const std::string& b = cfg.datacenters[path[h + 1]].name;
      const bool exists = std::any_of(cfg.links.begin(), cfg.links.end(), [&](const LinkConfig& l) {
        return l.from == a && l.to == b;
      });
      if (!exists) {
        c.fail(child(e, "via") ? child(e, "via") : e, p + ".via",
               "the path crosses " + quote(a) + " -> " + quote(b) + ", which has no [[link]]",
               "a path over links that exist (network.full_mesh = false leaves out unlisted pairs)");
        ok = false;
      }
    }
    if (!ok) continue;
    if (step_got == Got::ok && !seen.insert({ev.step, ev.from, ev.to}).second)
      c.fail(e, p, "the path " + quote(ev.from) + " -> " + quote(ev.to) + " is rerouted twice at step " +
                       std::to_string(ev.step),
             "at most one [[control.reroute]] per (from, to) and step");
    ct.reroutes.push_back(ev);
  }
  std::stable_sort(ct.reroutes.begin(), ct.reroutes.end(),
                   [](const RerouteEvent& x, const RerouteEvent& y) { return x.step < y.step; });
}

void read_switches(Checker& c, const toml::table* t, Config& cfg, bool steps_ok) {
  ControlConfig& ct = cfg.control;
  const toml::node* n = child(t, "switch");
  const toml::array* a = n ? n->as_array() : nullptr;
  if (!a || a->empty()) return;
  const std::string slot_rule = "\"sync_planner\" or \"overlap\" (a slot whose policy is "
                                "\"scheduled\")";
  std::set<std::pair<int, std::string>> seen;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* e = a->get(i)->as_table();
    if (!e) return;  // check_structure reported it
    const std::string p = "control.switch." + std::to_string(i);
    SwitchEvent ev;
    ev.entry = static_cast<int>(i);
    require(c, e, "slot", p + ".slot", slot_rule);
    require(c, e, "policy", p + ".policy", "a policy name of that slot");
    const Got step_got = read_event_step(c, e, p, cfg, steps_ok, ev.step);
    if (read_string(c, e, "slot", p + ".slot", ev.slot, slot_rule) != Got::ok) continue;
    const std::string* slot_policy = ev.slot == "sync_planner" ? &ct.sync_planner
                                     : ev.slot == "overlap"    ? &ct.overlap
                                                               : nullptr;
    if (!slot_policy) {
      c.fail(child(e, "slot"), p + ".slot", "unknown slot " + quote(ev.slot), slot_rule);
      continue;
    }
    if (ev.slot == "sync_planner") refuse_last_sync(c, e, p, cfg, steps_ok, step_got, ev.step);
    if (*slot_policy != "scheduled") {
      c.fail(child(e, "slot"), p + ".slot",
             "control." + ev.slot + " is " + quote(*slot_policy) + ", not \"scheduled\"",
             "control." + ev.slot + " = \"scheduled\" for [[control.switch]] entries of that slot");
      continue;
    }
    if (read_string(c, e, "policy", p + ".policy", ev.policy) != Got::ok) continue;
    if (ev.policy == "scheduled") {
      c.fail(child(e, "policy"), p + ".policy", "\"scheduled\" cannot switch to itself",
             "another policy of control." + ev.slot);
      continue;
    }
    if (step_got == Got::ok && !seen.insert({ev.step, ev.slot}).second)
      c.fail(e, p, "control." + ev.slot + " is switched twice at step " + std::to_string(ev.step),
             "at most one [[control.switch]] per slot and step");
    ct.switches.push_back(ev);
  }
  std::stable_sort(ct.switches.begin(), ct.switches.end(),
                   [](const SwitchEvent& x, const SwitchEvent& y) { return x.step < y.step; });
}

// ---- [[load]]: what the world does to the ranks' speed over the steps --------------------

// The keys each kind takes, besides datacenter / ranks / kind.
const std::map<std::string, std::vector<std::string>>& load_kinds() {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"constant", {"speed"}},
      {"step", {"speed", "at_step", "speed_after"}},
      {"csv", {"file", "start", "stride"}},
      {"markov", {"speeds", "transition", "dwell_steps", "seed"}},
      {"trace", {"file", "column", "time_column", "worker", "pod", "signal", "floor", "start",
                 "stride"}},
  };
  return k;
}

const char* const kSpeedRule = "a number in (0, 1] (relative to the rank's device)";

// An integer, or an array of integers, each in [lo, hi]; empty (reported) when bad.
std::vector<long long> read_int_list(Checker& c, const toml::table* t, const std::string& key,
                                     const std::string& path, long long lo, long long hi,
                                     const std::string& expected) {
  const toml::node* n = child(t, key);
  std::vector<const toml::node*> items;
  if (const toml::array* a = n ? n->as_array() : nullptr)
    for (size_t i = 0; i < a->size(); ++i) items.push_back(a->get(i));
  else if (n)
    items.push_back(n);
  std::vector<long long> out;
  for (const toml::node* x : items) {
    if (!x->is_integer() || **x->as_integer() < lo || **x->as_integer() > hi) {
      c.fail(n, path, (n->is_array() ? "an element is " : "got ") + type_phrase(*x), expected);
      return {};
    }
    out.push_back(**x->as_integer());
  }
  if (out.empty()) c.fail(n ? n : t, path, n ? "empty" : "missing", expected);
  return out;
}

// The world ranks an entry applies to: those of `datacenter`, or `ranks`.
bool read_load_ranks(Checker& c, const toml::table* e, const std::string& p, const Config& cfg,
                     LoadConfig& l) {
  const bool by_dc = child(e, "datacenter") != nullptr, by_ranks = child(e, "ranks") != nullptr;
  if (by_dc == by_ranks) {
    c.fail(e, p,
           by_dc ? "both datacenter and ranks are set" : "neither datacenter nor ranks is set",
           "datacenter = \"<name>\" (all its ranks) or ranks = [world ranks], one of the two");
    return false;
  }
  if (by_dc) {
    if (read_string(c, e, "datacenter", p + ".datacenter", l.datacenter, dc_names_phrase(cfg)) !=
        Got::ok)
      return false;
    const int d = dc_index(cfg, l.datacenter);
    if (d < 0) {
      c.fail(child(e, "datacenter"), p + ".datacenter", "unknown datacenter " + quote(l.datacenter),
             dc_names_phrase(cfg));
      return false;
    }
    for (int k = 0; k < cfg.datacenters[d].ranks; ++k)
      l.ranks.push_back(cfg.first_rank_of_dc(d) + k);
    return true;
  }
  const int W = cfg.world_size();
  const std::string rule = "an array of world ranks in [0, " + std::to_string(W - 1) +
                           "] (the datacenters' ranks in order), each at most once";
  for (long long r : read_int_list(c, e, "ranks", p + ".ranks", 0, W - 1, rule)) {
    if (std::find(l.ranks.begin(), l.ranks.end(), r) != l.ranks.end()) {
      c.fail(child(e, "ranks"), p + ".ranks", "rank " + std::to_string(r) + " is listed twice",
             rule);
      return false;
    }
    l.ranks.push_back(static_cast<int>(r));
  }
  return !l.ranks.empty();
}

// kind = "trace": the series of a trace file as speeds (docs/balance.md, "Load scenarios").
void read_load_trace(Checker& c, const toml::table* e, const std::string& p, const Config& cfg,
                     bool steps_ok, LoadConfig& l) {
  const fs::path dir = fs::path(cfg.source_file).parent_path();
  l.file = existing_file(c, e, "file", p + ".file", dir,
                         "a path to a CSV trace with a header line (relative paths start at the "
                         "config file's folder)");
  std::string signal, column, time_column;
  const std::string signal_rule =
      "\"batch_time\" (speed = the file's least value / value) or \"util_pct\" (background "
      "load: speed = max(floor, 1 - value/100))";
  require(c, e, "signal", p + ".signal", signal_rule);
  if (read_string(c, e, "signal", p + ".signal", signal, signal_rule) == Got::ok &&
      signal != "batch_time" && signal != "util_pct") {
    c.fail(child(e, "signal"), p + ".signal", "unknown signal " + quote(signal), signal_rule);
    signal.clear();
  }
  read_string(c, e, "column", p + ".column", column);
  read_string(c, e, "time_column", p + ".time_column", time_column);
  double floor_speed = 0.1;
  if (child(e, "floor") && signal == "batch_time")
    c.fail(child(e, "floor"), p + ".floor", "set with signal \"batch_time\"",
           "floor only with signal \"util_pct\"");
  read_number(c, e, "floor", p + ".floor", floor_speed, [](double x) { return x > 0 && x <= 1; },
              std::string(kSpeedRule) + ": the least speed a saturated device leaves");
  const char* group = child(e, "worker") ? "worker" : "pod";
  if (child(e, "worker") && child(e, "pod"))
    c.fail(e, p, "both worker and pod are set", "worker = N or pod = N: the series of the file");
  const std::string group_rule = "an integer id of the file's " + std::string(group) +
                                 " column, or an array of them, one per rank of the entry";
  const std::vector<long long> ids =
      read_int_list(c, e, group, p + "." + group, 0, LLONG_MAX, group_rule);
  if (!ids.empty() && ids.size() != 1 && ids.size() != l.ranks.size())
    c.fail(child(e, group), p + "." + group,
           count(static_cast<long long>(ids.size()), "series") + " for " +
               count(static_cast<long long>(l.ranks.size()), "rank"),
           group_rule);
  const bool start_set = child(e, "start") != nullptr;
  read_number(c, e, "start", p + ".start", l.start, [](double) { return true; },
              "a number: the trace time step 0 reads");
  read_number(c, e, "stride", p + ".stride", l.stride, [](double x) { return x > 0; },
              "a number > 0: trace time units per step");
  if (l.file.empty() || signal.empty() || ids.empty() ||
      (ids.size() != 1 && ids.size() != l.ranks.size()))
    return;
  TraceFile f;
  try {
    f = read_trace_csv(l.file, p + ".file", column, time_column, group);
  } catch (const ConfigError& err) {
    c.fail_line(err.what());
    return;
  }
  auto where = [&](int line) { return l.file + ":" + std::to_string(line); };
  double least = std::numeric_limits<double>::infinity();
  for (const TraceSeries& s : f.series)
    for (size_t i = 0; i < s.value.size(); ++i) {
      const double v = s.value[i];
      if (signal == "batch_time" ? !(v > 0) : !(v >= 0 && v <= 100)) {
        c.fail_at(where(s.line[i]), p + ".file",
                  f.value_column + " " + num(v) + " is out of range",
                  signal == "batch_time" ? "a time > 0" : "a utilisation in [0, 100] percent");
        return;
      }
      least = std::min(least, v);
    }
  std::vector<const TraceSeries*> chosen;
  for (long long id : ids) {
    const auto it = std::find_if(f.series.begin(), f.series.end(),
                                 [&](const TraceSeries& s) { return s.group == id; });
    if (it == f.series.end()) {
      std::vector<std::string> have;
      for (const TraceSeries& s : f.series) have.push_back(std::to_string(s.group));
      c.fail(child(e, group), p + "." + group,
             "no " + std::string(group) + " " + std::to_string(id) + " in " + l.file,
             "one of the file's " + std::string(group) + "s: " + join(have));
      return;
    }
    chosen.push_back(&*it);
  }
  if (!start_set) {
    l.start = chosen[0]->t.front();
    for (const TraceSeries* s : chosen) l.start = std::min(l.start, s->t.front());
  }
  for (size_t k = 0; k < l.ranks.size(); ++k) {
    const TraceSeries& s = *chosen[ids.size() == 1 ? 0 : k];
    // Every step must read inside the series: past its end the replay would only hold a value.
    const double last = l.start + (static_cast<double>(cfg.train.steps) - 1) * l.stride;
    if (steps_ok && last > s.t.back())
      c.fail(child(e, "stride") ? child(e, "stride") : e, p + ".stride",
             "step " + std::to_string(cfg.train.steps - 1) + " reads " + f.time_column + " " +
                 num(last) + ", past the end of " + group + " " + std::to_string(s.group) + " (" +
                 num(s.t.back()) + ")",
             "start + (train.steps - 1) x stride <= the series' last time");
    std::vector<SpeedPoint> pts;
    for (size_t i = 0; i < s.t.size(); ++i)
      pts.push_back({s.t[i], signal == "batch_time"
                                 ? least / s.value[i]
                                 : std::max(floor_speed, 1.0 - s.value[i] / 100.0)});
    l.points.push_back(std::move(pts));
  }
  l.detail = f.value_column + " (" + signal + ") of " + group + " " +
             (ids.size() == 1 ? std::to_string(ids[0]) : "[...]") + " in " + l.file;
}

void read_loads(Checker& c, const toml::table& root, Config& cfg, bool dcs_ok, bool steps_ok) {
  const toml::node* n = root.get("load");
  const toml::array* a = n ? n->as_array() : nullptr;
  if (!a || !dcs_ok) return;
  const fs::path dir = fs::path(cfg.source_file).parent_path();
  std::map<int, std::string> owner;  // world rank → the entry that loads it
  std::vector<std::string> kinds;
  for (const auto& [k, keys] : load_kinds()) kinds.push_back(k);
  const std::string kind_rule = "one of " + join(kinds);
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* e = a->get(i)->as_table();
    if (!e) return;  // check_structure reported it
    const std::string p = "load." + std::to_string(i);
    LoadConfig l;
    l.entry = static_cast<int>(i);
    require(c, e, "kind", p + ".kind", kind_rule);
    if (read_string(c, e, "kind", p + ".kind", l.kind, kind_rule) != Got::ok) continue;
    const auto kind = load_kinds().find(l.kind);
    if (kind == load_kinds().end()) {
      c.fail(child(e, "kind"), p + ".kind", "unknown kind " + quote(l.kind), kind_rule);
      continue;
    }
    bool keys_ok = true;
    for (auto&& [k, v] : *e) {
      const std::string key(k.str());
      if (key == "kind" || key == "datacenter" || key == "ranks" ||
          std::count(kind->second.begin(), kind->second.end(), key))
        continue;
      c.fail(&v, p + "." + key, "does not apply to kind " + quote(l.kind),
             "the keys of kind " + quote(l.kind) + ": " + join(kind->second));
      keys_ok = false;
    }
    if (!read_load_ranks(c, e, p, cfg, l) || !keys_ok) continue;
    for (int r : l.ranks) {
      const int d = cfg.dc_of_rank(r);
      const toml::node* dcs = root.get("datacenter");
      const toml::table* dt = dcs->as_array()->get(d)->as_table();
      const std::string who = l.datacenter.empty() ? p + ".ranks" : p + ".datacenter";
      if (child(dt, "speed"))
        c.fail(e, who, "rank " + std::to_string(r) + " also has a speed in datacenter." +
                           std::to_string(d) + ".speed",
               "one source of a rank's speed: [[datacenter]] speed or a [[load]] entry");
      else if (!owner.emplace(r, p).second)
        c.fail(e, who, "rank " + std::to_string(r) + " is loaded by " + owner[r] + " already",
               "at most one [[load]] entry per rank");
    }
    const size_t R = l.ranks.size();
    auto one_speed = [&](const char* key, double& v) {
      require(c, e, key, p + "." + key, kSpeedRule);
      return read_number(c, e, key, p + "." + key, v, [](double x) { return x > 0 && x <= 1; },
                         kSpeedRule) == Got::ok;
    };
    if (l.kind == "constant") {
      double v = 1;
      if (one_speed("speed", v)) l.points.assign(R, {SpeedPoint{0, v}});
    } else if (l.kind == "step") {
      double before = 1, after = 1;
      int at = 1;
      const bool ok = one_speed("speed", before) && one_speed("speed_after", after);
      if (read_event_step(c, e, p, cfg, steps_ok, at, "at_step") == Got::ok && ok)
        l.points.assign(R, {SpeedPoint{0, before}, SpeedPoint{static_cast<double>(at), after}});
    } else if (l.kind == "csv") {
      l.file = existing_file(c, e, "file", p + ".file", dir,
                             "a path to a CSV file with the header step,speed or time_s,speed "
                             "(relative paths start at the config file's folder)");
      read_number(c, e, "start", p + ".start", l.start, [](double) { return true; },
                  "a number: the position on the file's axis that step 0 reads");
      read_number(c, e, "stride", p + ".stride", l.stride, [](double x) { return x > 0; },
                  "a number > 0: the file's axis units (steps or seconds) per step");
      if (l.file.empty()) continue;
      try {
        std::string axis;
        l.points.assign(R, read_speed_csv(l.file, p + ".file", axis));
        l.detail = "speed over " + axis + " in " + l.file;
      } catch (const ConfigError& err) {
        c.fail_line(err.what());
      }
    } else if (l.kind == "markov") {
      const std::string srule = "a non-empty array of numbers in (0, 1]: the speed of each state";
      require(c, e, "speeds", p + ".speeds", srule);
      require(c, e, "transition", p + ".transition", "a square array, one row per speed");
      const Got sg = read_number_array(c, child(e, "speeds"), p + ".speeds", l.markov_speeds,
                                       [](double x) { return x > 0 && x <= 1; }, srule);
      if (sg == Got::ok && l.markov_speeds.empty())
        c.fail(child(e, "speeds"), p + ".speeds", "empty", srule);
      read_int(c, e, "dwell_steps", p + ".dwell_steps", 1, INT_MAX, l.dwell_steps,
               "an integer >= 1 (steps per state)");
      read_int(c, e, "seed", p + ".seed", 0, LLONG_MAX, l.seed);
      if (sg == Got::ok && !l.markov_speeds.empty() && child(e, "transition"))
        read_transition(c, child(e, "transition"), p + ".transition", l.markov_speeds.size(),
                        "speed", l.markov_transition);
    } else {
      read_load_trace(c, e, p, cfg, steps_ok, l);
    }
    cfg.loads.push_back(l);
  }
}

// [control.forecast]: the series forecasters' parameters. That `fallback` names a baseline and
// that the window fits in the controller's history are checked one layer up (validate/).
void read_forecast(Checker& c, const toml::table* t, ForecastConfig& f) {
  const std::string p = "control.forecast.";
  read_int(c, t, "window", p + "window", 4, INT_MAX, f.window,
           "an integer >= 4 (values in a GM(1,1) window; GM(1,1) needs 4)");
  read_int(c, t, "states", p + "states", 2, limits::kMaxForecastStates, f.states,
           "an integer in [2, 64] (Markov states of gmc)");
  read_int(c, t, "horizon", p + "horizon", 1, limits::kMaxForecastHorizon, f.horizon,
           "an integer in [1, 4096] (steps ahead; the controller keeps 4096 steps of history)");
  read_string(c, t, "fallback", p + "fallback", f.fallback,
              "a string: the name of a baseline forecaster (docs/forecast.md)");
  read_number(c, t, "ewma_alpha", p + "ewma_alpha", f.ewma_alpha,
              [](double v) { return v > 0 && v <= 1; }, "a number in (0, 1]");
  const std::string skill_rule =
      "0 (no skill test) or an integer in [4, 4096] (past forecasts weighed)";
  int skill = f.skill_window;
  if (read_int(c, t, "skill_window", p + "skill_window", 0, limits::kMaxSkillWindow, skill,
               skill_rule) == Got::ok) {
    if (skill >= 1 && skill < 4)
      c.fail(child(t, "skill_window"), p + "skill_window", std::to_string(skill) + " is out of range",
             skill_rule);
    else
      f.skill_window = skill;
  }
  std::string checks = f.checks;
  const std::string checks_rule = "\"full\" or \"textbook\"";
  if (read_string(c, t, "checks", p + "checks", checks, checks_rule) == Got::ok) {
    if (checks != "full" && checks != "textbook")
      c.fail(child(t, "checks"), p + "checks", "unknown value " + quote(checks), checks_rule);
    else
      f.checks = checks;
  }
}

// [control.balance]: the re-split rule of the balancers proportional and oracle.
void read_balance(Checker& c, const toml::table* t, BalanceConfig& b) {
  const std::string p = "control.balance.";
  read_int(c, t, "gain_steps", p + "gain_steps", 1, 1000000, b.gain_steps,
           "an integer in [1, 1000000] (K: steps within which a re-split must repay its "
           "measured cost)");
  read_number(c, t, "hysteresis", p + "hysteresis", b.hysteresis,
              [](double x) { return x >= 0 && x < 1; },
              "a number in [0, 1) (the relative gain in step time a new plan must promise)");
  read_int(c, t, "noise_window", p + "noise_window", 2, 4096, b.noise_window,
           "an integer in [2, 4096] (recent predictions whose plans are replayed)");
  read_bool(c, t, "shares", p + "shares", b.shares);
  read_int(c, t, "confirm", p + "confirm", 1, 64, b.confirm,
           "an integer in [1, 64] (decisions in a row that must ask for the same change)");
  read_bool(c, t, "act_early", p + "act_early", b.act_early);
}

// [control.paths]: link-state estimates and the MDP path selector's model.
void read_paths(Checker& c, const toml::table* t, PathsConfig& q) {
  const std::string p = "control.paths.";
  read_int(c, t, "states", p + "states", 2, 16, q.states,
           "an integer in [2, 16] (congestion levels of a link)");
  read_number(c, t, "ewma_alpha", p + "ewma_alpha", q.ewma_alpha,
              [](double x) { return x > 0 && x <= 1; }, "a number in (0, 1]");
  read_int(c, t, "relays", p + "relays", 0, 64, q.relays,
           "an integer in [0, 64] (candidate relay datacenters per pair)");
  read_number(c, t, "switch_cost_ms", p + "switch_cost_ms", q.switch_cost_ms,
              [](double x) { return x >= 0 && x <= 1e6; }, "a number in [0, 1e6] (milliseconds)");
  read_number(c, t, "gamma", p + "gamma", q.gamma, [](double x) { return x >= 0 && x < 1; },
              "a number in [0, 1) (discount)");
  read_number(c, t, "epsilon_ms", p + "epsilon_ms", q.epsilon_ms,
              [](double x) { return x > 0 && x <= 1e6; }, "a number in (0, 1e6] (milliseconds)");
  read_number(c, t, "resolve_change", p + "resolve_change", q.resolve_change,
              [](double x) { return x >= 0 && x <= 10; }, "a number in [0, 10] (relative)");
  read_bool(c, t, "explore", p + "explore", q.explore);
  read_bool(c, t, "standby", p + "standby", q.standby);
  read_bool(c, t, "tail", p + "tail", q.tail);
  read_number(c, t, "oracle_age_steps", p + "oracle_age_steps", q.oracle_age_steps,
              [](double x) { return x >= 0 && x <= 100; },
              "a number in [0, 100] (steps before its decision at which oracle-now reads the truth)");
}

// The policy names themselves are checked against the registries one layer up
// (validate/validate.cpp); here only their type and the scripted entries.
void read_control(Checker& c, const toml::table* t, Config& cfg, bool dcs_ok, bool steps_ok) {
  ControlConfig& ct = cfg.control;
  const std::pair<const char*, std::string*> slots[] = {
      {"forecaster", &ct.forecaster},       {"balancer", &ct.balancer},
      {"path_selector", &ct.path_selector}, {"sync_planner", &ct.sync_planner},
      {"overlap", &ct.overlap}};
  for (const auto& [slot, dst] : slots)
    read_string(c, t, slot, std::string("control.") + slot, *dst,
                "a string: the name of a registered policy (docs/config.md, [control])");
  if (read_string(c, t, "beliefs", "control.beliefs", ct.beliefs, "one of measured, configured") ==
          Got::ok &&
      ct.beliefs != "measured" && ct.beliefs != "configured")
    c.fail(child(t, "beliefs"), "control.beliefs", "unknown link beliefs " + quote(ct.beliefs),
           "one of measured, configured");
  if (read_string(c, t, "report", "control.report", ct.report, "one of after-sync, after-compute") ==
          Got::ok &&
      ct.report != "after-sync" && ct.report != "after-compute")
    c.fail(child(t, "report"), "control.report", "unknown report point " + quote(ct.report),
           "one of after-sync, after-compute");
  read_int(c, t, "lag", "control.lag", 1, 16, ct.lag,
           "an integer in [1, 16]: steps between a step's reports and the step its decisions apply to");
  if (read_bool(c, t, "early_paths", "control.early_paths", ct.early_paths) == Got::ok &&
      ct.early_paths && ct.lag < 2)
    c.fail(child(t, "early_paths"), "control.early_paths",
           "needs control.lag >= 2 (the sync before a record's step must hear its reply), lag is " +
               std::to_string(ct.lag),
           "false, or control.lag = 2 or more");
  read_resplits(c, t, cfg, dcs_ok, steps_ok);
  read_reroutes(c, t, cfg, dcs_ok, steps_ok);
  read_switches(c, t, cfg, steps_ok);
  read_forecast(c, child_table(t, "forecast"), ct.forecast);
  read_balance(c, child_table(t, "balance"), ct.balance);
  read_paths(c, child_table(t, "paths"), ct.paths);
}

// Config::where: the place of every table, array entry and value of the parsed document (after
// the overrides), so the checks one layer up can point at the same lines as the ones here.
void record_sources(const Checker& c, const toml::table& t, const std::string& path,
                    std::map<std::string, std::string>& where) {
  for (auto&& [k, v] : t) {
    const std::string p = join_path(path, std::string(k.str()));
    where[p] = c.where(&v);
    if (const toml::table* sub = v.as_table()) {
      record_sources(c, *sub, p, where);
    } else if (v.is_array_of_tables()) {
      const toml::array& a = *v.as_array();
      for (size_t i = 0; i < a.size(); ++i) {
        const std::string e = p + "." + std::to_string(i);
        where[e] = c.where(a.get(i));
        record_sources(c, *a.get(i)->as_table(), e, where);
      }
    }
  }
}

}  // namespace

namespace {

// Reads a CSV file row by row: blank lines and lines starting with '#' are skipped, a CR at the
// end of a line and a UTF-8 BOM are dropped, fields are split at commas and trimmed. Errors are
// thrown as "<path>:<line>: <key>: <what>; expected <what>" (line 0: the file itself).
class CsvReader {
 public:
  CsvReader(const std::string& path, const std::string& key, const std::string& expected_file)
      : path_(path), key_(key) {
    std::error_code ec;
    // Not opened before it is known to be a regular file: a FIFO would block the open.
    const auto st = fs::status(path, ec);
    if (!ec && fs::exists(st) && !fs::is_regular_file(st))
      fail(0, "not a regular file", "a regular file: " + expected_file);
    if (!ec && fs::is_regular_file(st) && fs::file_size(path, ec) > limits::kMaxCsvBytes)
      fail(0, "the file is larger than " + std::to_string(limits::kMaxCsvBytes) + " bytes",
           "at most " + std::to_string(limits::kMaxCsvBytes) + " bytes");
    in_.open(path, std::ios::binary);
    if (!in_) fail(0, fs::exists(path, ec) ? "the file cannot be read" : "the file does not exist",
                   expected_file);
    char magic[2] = {0, 0};
    if (in_.read(magic, 2) && magic[0] == '\x1f' && magic[1] == '\x8b')
      fail(0, "a gzip-compressed file", "a plain CSV file (gzip -dc " + path + " > FILE.csv)");
    in_.clear();
    in_.seekg(0);
  }
  // The next non-blank row; false at the end of the file.
  bool next() {
    while (std::getline(in_, text_)) {
      ++line_;
      if (!text_.empty() && text_.back() == '\r') text_.pop_back();
      if (line_ == 1 && text_.rfind("\xEF\xBB\xBF", 0) == 0) text_.erase(0, 3);  // UTF-8 BOM
      text_ = trim(text_);
      if (text_.empty() || text_[0] == '#') continue;
      fields_.clear();
      std::string f;
      std::istringstream ss(text_);
      while (std::getline(ss, f, ',')) fields_.push_back(trim(f));
      if (text_.back() == ',') fields_.push_back("");
      return true;
    }
    if (in_.bad()) fail(line_, "the file cannot be read", "a readable CSV file");
    return false;
  }
  int line() const { return line_; }
  const std::string& text() const { return text_; }
  const std::vector<std::string>& fields() const { return fields_; }
  // Field k as a finite number, else an error naming the column.
  double number(size_t k, const std::string& column, const std::string& unit) const {
    const char* b = fields_[k].c_str();
    char* e = nullptr;
    const double v = std::strtod(b, &e);
    if (fields_[k].empty() || *e != '\0' || !std::isfinite(v))
      fail(line_, column + " " + quote(fields_[k]) + " is not a number",
           "a finite number (" + unit + ")");
    return v;
  }
  [[noreturn]] void fail(int line, const std::string& what, const std::string& expected) const {
    throw ConfigError(path_ + ":" + std::to_string(line) + ": " + key_ + ": " + what +
                      "; expected " + expected);
  }

 private:
  std::string path_, key_;
  std::ifstream in_;
  std::string text_;
  std::vector<std::string> fields_;
  int line_ = 0;
};

}  // namespace

std::vector<ScheduleRow> read_schedule_csv(const std::string& path, const std::string& key) {
  const std::string header = "time_s,capacity_gbps,latency_ms";
  CsvReader csv(path, key, "a readable CSV file whose first line is " + header);
  std::vector<ScheduleRow> rows;
  bool have_header = false;
  while (csv.next()) {
    const int line = csv.line();
    const std::vector<std::string>& fields = csv.fields();
    if (!have_header) {
      if (join(fields, ",") != header)
        csv.fail(line, "the header is " + quote(csv.text()), "the header line " + header);
      have_header = true;
      continue;
    }
    if (fields.size() != 3)
      csv.fail(line,
               count(static_cast<long long>(fields.size()), "field") + " in " + quote(csv.text()),
               "3 comma-separated numbers: " + header);
    static const char* const names[3] = {"time_s", "capacity_gbps", "latency_ms"};
    static const char* const units[3] = {"seconds", "Gbit/s", "milliseconds"};
    double v[3];
    for (int k = 0; k < 3; ++k) v[k] = csv.number(k, names[k], units[k]);
    if (rows.empty() && v[0] != 0)
      csv.fail(line, "the first row starts at time_s " + num(v[0]),
               "time_s 0 in the first row (the schedule must cover the whole run)");
    if (!rows.empty() && v[0] <= rows.back().t_s)
      csv.fail(line, "time_s " + num(v[0]) + " is not after the previous row's " +
                         num(rows.back().t_s),
               "time_s strictly ascending");
    if (v[0] > limits::kMaxScheduleTimeS)
      csv.fail(line, "time_s " + num(v[0]) + " is out of range", "at most 1e9 seconds");
    if (!limits::capacity_ok(v[1]))
      csv.fail(line, "capacity_gbps " + num(v[1]) + " is out of range", limits::kCapacityRule);
    if (!limits::latency_ok(v[2]))
      csv.fail(line, "latency_ms " + num(v[2]) + " is out of range", limits::kLatencyRule);
    rows.push_back(ScheduleRow{v[0], v[1], v[2]});
  }
  if (!have_header)
    csv.fail(csv.line(), "no header line", "a first line " + header + ", then rows");
  if (rows.empty())
    csv.fail(csv.line(), "no rows after the header", "at least one row, starting at time_s 0");
  return rows;
}

std::vector<SpeedPoint> read_speed_csv(const std::string& path, const std::string& key,
                                       std::string& axis) {
  const std::string headers = "step,speed or time_s,speed";
  CsvReader csv(path, key, "a readable CSV file whose first line is " + headers);
  std::vector<SpeedPoint> points;
  axis.clear();
  while (csv.next()) {
    const int line = csv.line();
    const std::vector<std::string>& fields = csv.fields();
    if (axis.empty()) {
      const std::string h = join(fields, ",");
      if (h != "step,speed" && h != "time_s,speed")
        csv.fail(line, "the header is " + quote(csv.text()), "the header line " + headers);
      axis = fields[0];
      continue;
    }
    if (fields.size() != 2)
      csv.fail(line,
               count(static_cast<long long>(fields.size()), "field") + " in " + quote(csv.text()),
               "2 comma-separated numbers: " + axis + ",speed");
    const double t = csv.number(0, axis, axis == "step" ? "steps" : "seconds");
    const double v = csv.number(1, "speed", "relative speed");
    if (!points.empty() && t <= points.back().t)
      csv.fail(line,
               axis + " " + num(t) + " is not after the previous row's " + num(points.back().t),
               axis + " strictly ascending");
    if (!(v > 0 && v <= 1))
      csv.fail(line, "speed " + num(v) + " is out of range",
               "a number in (0, 1] (relative to the rank's device)");
    points.push_back(SpeedPoint{t, v});
  }
  if (axis.empty())
    csv.fail(csv.line(), "no header line", "a first line " + headers + ", then rows");
  if (points.empty()) csv.fail(csv.line(), "no rows after the header", "at least one row");
  return points;
}

TraceFile read_trace_csv(const std::string& path, const std::string& key,
                         const std::string& value_column, const std::string& time_column,
                         const std::string& group_column) {
  CsvReader csv(path, key, "a readable CSV file with a header line");
  TraceFile f;
  if (!csv.next()) csv.fail(csv.line(), "no header line", "a header line naming the columns");
  f.header = csv.fields();
  const int header_line = csv.line();
  auto column = [&](const std::string& name, const std::string& role) -> size_t {
    const auto it = std::find(f.header.begin(), f.header.end(), name);
    if (it == f.header.end())
      csv.fail(header_line, "no column " + quote(name) + " (" + role + ") in the header " +
                                quote(csv.text()),
               "one of the header's columns: " + join(f.header));
    return static_cast<size_t>(it - f.header.begin());
  };
  f.value_column = value_column.empty() ? f.header.back() : value_column;
  f.time_column = time_column;
  if (f.time_column.empty())
    for (const char* c : {"t_s", "time_s", "time", "step"})
      if (std::find(f.header.begin(), f.header.end(), c) != f.header.end()) {
        f.time_column = c;
        break;
      }
  if (f.time_column.empty())
    csv.fail(header_line,
             "no time column (t_s, time_s, time or step) in the header " + quote(csv.text()),
             "a time_column naming the column that orders the rows");
  const size_t vi = column(f.value_column, "the values"), ti = column(f.time_column, "the time");
  const size_t gi = group_column.empty() ? 0 : column(group_column, "the series");
  std::map<long long, size_t> index;  // group value → f.series
  while (csv.next()) {
    const int line = csv.line();
    if (csv.fields().size() != f.header.size())
      csv.fail(line, count(static_cast<long long>(csv.fields().size()), "field") + " in " +
                         quote(csv.text()),
               std::to_string(f.header.size()) + " fields, as the header has");
    long long g = 0;
    if (!group_column.empty()) {
      const double gv = csv.number(gi, group_column, "an integer id");
      if (gv != std::floor(gv))
        csv.fail(line, group_column + " " + num(gv) + " is not an integer", "an integer id");
      // Beyond 2^53 a double no longer holds every integer (and beyond 2^63 the conversion to
      // long long is undefined: found by fuzz_csv).
      if (std::fabs(gv) > 9007199254740992.0)
        csv.fail(line, group_column + " " + num(gv) + " is too large",
                 "an integer id of at most 2^53 in magnitude");
      g = static_cast<long long>(gv);
    }
    const double t = csv.number(ti, f.time_column, "the trace's time axis");
    const double v = csv.number(vi, f.value_column, "a value");
    auto [it, fresh] = index.try_emplace(g, f.series.size());
    if (fresh) f.series.push_back(TraceSeries{g, {}, {}, {}});
    TraceSeries& s = f.series[it->second];
    if (!s.t.empty() && t <= s.t.back())
      csv.fail(line,
               f.time_column + " " + num(t) + " is not after the previous row's " +
                   num(s.t.back()) +
                   (group_column.empty() ? "" : " of " + group_column + " " + std::to_string(g)),
               "rows of a series in ascending time");
    s.t.push_back(t);
    s.value.push_back(v);
    s.line.push_back(line);
  }
  if (f.series.empty()) csv.fail(csv.line(), "no rows after the header", "at least one row");
  return f;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string text = limits::read_input(path, "config", limits::kMaxConfigBytes);
  // The parser recurses per level of nesting: a deep file would overflow its stack.
  int deep_line = 0;
  if (const std::string deep = limits::nesting_problem(text, deep_line); !deep.empty())
    throw ConfigError(msg::line(path + ":" + std::to_string(deep_line), "config",
                                "the file nests " + deep,
                                "at most " + std::to_string(limits::kMaxNesting) + " levels"));
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(path));
  } catch (const toml::parse_error& e) {
    throw ConfigError(msg::printable(path + ":" + std::to_string(e.source().begin.line) + ":" +
                                     std::to_string(e.source().begin.column) + ": TOML syntax error: " +
                                     std::string(e.description()) + "; expected valid TOML (toml.io)"));
  }

  Checker c(path);
  for (const auto& ov : overrides) apply_override(c, root, ov);
  c.throw_if_any();  // a bad --set makes everything after it guesswork
  check_structure(c, root, "", "");

  Config cfg;
  cfg.source_file = path;
  cfg.source_text = text;
  if (!cfg.source_text.empty() && cfg.source_text.back() != '\n') cfg.source_text += '\n';
  for (const auto& ov : overrides) cfg.source_text += "# --set " + ov + "\n";
  cfg.where[""] = path + ":0";  // the document as a whole: no line to point at
  record_sources(c, root, "", cfg.where);

  read_run(c, child_table(&root, "run"), cfg);
  const bool dcs_ok = read_datacenters(c, root, cfg);
  read_network(c, child_table(&root, "network"), cfg.network);
  if (dcs_ok) read_links(c, root, cfg);
  read_model(c, child_table(&root, "model"), cfg);
  const toml::table* train = child_table(&root, "train");
  const bool steps_ok = read_train(c, train, cfg, dcs_ok);
  read_control(c, child_table(&root, "control"), cfg, dcs_ok, steps_ok);
  read_loads(c, root, cfg, dcs_ok, steps_ok);
  read_number(c, child_table(&root, "device"), "gflops", "device.gflops", cfg.device_gflops,
              [](double x) { return x >= 0 && x <= 1e9; },
              "a number in [0, 1e9]: the emulated device's model GFLOP/s (0: the rank's own pace)");

  const toml::table* trace = child_table(&root, "trace");
  const toml::table* ckpt = child_table(&root, "checkpoint");
  read_string(c, trace, "path", "trace.path", cfg.trace.path);
  read_int(c, ckpt, "every", "checkpoint.every", 0, INT_MAX, cfg.checkpoint.every);
  read_string(c, ckpt, "path", "checkpoint.path", cfg.checkpoint.path);
  if (cfg.trace.path.empty())
    cfg.trace.path = (fs::path(cfg.out_dir) / (cfg.run_name + ".h5")).string();
  if (cfg.checkpoint.path.empty())
    cfg.checkpoint.path = (fs::path(cfg.out_dir) / (cfg.run_name + ".ckpt.h5")).string();
  if (c.count() == 0) {  // checks across keys need each key sound
    std::vector<std::string> more;
    limits::check(cfg, more);
    for (const auto& m : more) c.fail_line(m);
  }

  c.throw_if_any();
  return cfg;
}

}  // namespace strait
