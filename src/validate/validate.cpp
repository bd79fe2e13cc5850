// validate.cpp — see validate.hpp. The layer above config, model, sync and control: it may ask
// any of them, none of them asks it.
#include "validate/validate.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "config/limits.hpp"
#include "config/messages.hpp"
#include "control/policy.hpp"
#include "control/series.hpp"
#include "control/view.hpp"
#include "data/corpus.hpp"
#include "model/layout.hpp"
#include "model/memory.hpp"

namespace strait {
namespace {

using msg::count;
using msg::join;
using msg::num;
using msg::num_list;
using msg::quote;

// Error lines, each located at the place load_config recorded for a key (or its table).
class Errors {
 public:
  explicit Errors(const Config& cfg) : cfg_(cfg) {}
  void add(const std::string& at, const std::string& key, const std::string& what,
           const std::string& expected) {
    lines_.push_back(msg::line(cfg_.where_of(at), key, what, expected));
  }
  bool any() const { return !lines_.empty(); }
  void throw_if_any() const {
    if (any()) throw ConfigError(limits::join_errors(lines_));
  }

 private:
  const Config& cfg_;
  std::vector<std::string> lines_;
};

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every slot's policy is a registered name (src/control/registry.cpp).
// "direct" sends every pair over its own link: on a sparse graph (network.full_mesh = false)
// some pair has none.
void check_direct_paths(const Config& cfg, Errors& e) {
  if (cfg.control.path_selector != "direct") return;
  for (const auto& a : cfg.datacenters)
    for (const auto& b : cfg.datacenters) {
      if (a.name == b.name) continue;
      const bool link = std::any_of(cfg.links.begin(), cfg.links.end(), [&](const LinkConfig& l) {
        return l.from == a.name && l.to == b.name;
      });
      if (link) continue;
      e.add("control.path_selector", "control.path_selector",
            "\"direct\" needs a [[link]] for every pair, and there is none from " + quote(a.name) +
                " to " + quote(b.name),
            "a path selector that routes over the graph (shortest, widest, ewma-widest, mdp, "
            "scheduled) or a [[link]] for every pair");
      return;
    }
}

void check_policies(const Config& cfg, Errors& e) {
  const ControlConfig& ct = cfg.control;
  const std::pair<const char*, const std::string*> slots[] = {
      {"forecaster", &ct.forecaster},       {"balancer", &ct.balancer},
      {"path_selector", &ct.path_selector}, {"sync_planner", &ct.sync_planner},
      {"overlap", &ct.overlap}};
  for (const auto& [slot, name] : slots) {
    const std::vector<std::string> names = policy_names(slot);
    const std::string key = std::string("control.") + slot;
    if (!has(names, *name))
      e.add(key, key, "unknown policy " + quote(*name), "one of " + join(names));
  }
}

// A [[control.switch]] hands its slot to another registered policy of that slot ("scheduled",
// the one replaying the switches, is refused by load_config already).
void check_switches(const Config& cfg, Errors& e) {
  for (const SwitchEvent& s : cfg.control.switches) {
    std::vector<std::string> names = policy_names(s.slot);
    names.erase(std::remove(names.begin(), names.end(), "scheduled"), names.end());
    if (has(names, s.policy)) continue;
    const std::string key = "control.switch." + std::to_string(s.entry) + ".policy";
    e.add(key, key, "unknown policy " + quote(s.policy) + " for control." + s.slot,
          names.empty() ? "a policy of control." + s.slot + " other than \"scheduled\""
                        : "one of " + join(names));
  }
}

// [control.forecast]: the fallback is a baseline series forecaster or "auto", and a window fits
// in the history the controller keeps (a longer one would never fill).
void check_forecast(const Config& cfg, Errors& e) {
  const ForecastConfig& f = cfg.control.forecast;
  const std::vector<std::string>& fallbacks = fallback_names();
  if (!has(fallbacks, f.fallback))
    e.add("control.forecast.fallback", "control.forecast.fallback",
          "unknown baseline " + quote(f.fallback), "one of " + join(fallbacks));
  const long long most = static_cast<long long>(ControllerView::kHistory);
  if (f.window > most)
    e.add("control.forecast.window", "control.forecast.window",
          std::to_string(f.window) + " is out of range",
          "an integer in [4, " + std::to_string(most) + "] (the controller keeps the last " +
              std::to_string(most) + " steps)");
}

// The sync planners whose strategy calls MPI itself instead of passing the transport, so the
// software shaper never sees their bytes (src/sync/mpi_allreduce.cpp): offered only without
// it, i.e. under kernel shaping (network.shaper = "none", scripts/netns-run).
const char* const kUnshapedPlanners[] = {"mpi-allreduce"};

void check_unshaped_planners(const Config& cfg, Errors& e) {
  if (!cfg.network.shaped()) return;
  const std::string why = " calls MPI_Allreduce among the gateways, which bypasses the software "
                          "shaper (network.shaper = " + quote(cfg.network.shaper) + ")";
  const std::string expected = "network.shaper = \"none\" (kernel shaping under "
                               "scripts/netns-run, docs/netns.md) or another sync planner";
  for (const char* name : kUnshapedPlanners) {
    if (cfg.control.sync_planner == name)
      e.add("control.sync_planner", "control.sync_planner", quote(name) + why, expected);
    for (const SwitchEvent& s : cfg.control.switches)
      if (s.slot == "sync_planner" && s.policy == name) {
        const std::string key = "control.switch." + std::to_string(s.entry) + ".policy";
        e.add(key, key, quote(name) + why, expected);
      }
  }
}

std::string head_split_problem(const ModelConfig& m, const SplitCheck& sc,
                               const std::vector<double>& split, bool even,
                               const std::string& dc) {
  // Ten digits: a fraction 1e-6 off a whole head must show, or "(1, 1 heads)" explains nothing.
  std::vector<std::string> heads;
  for (double h : sc.heads) heads.push_back(num(h, 10));
  return std::to_string(m.heads) + " heads cannot be split as " + num_list(split, 10) +
         (even ? " (even)" : "") + " in datacenter " + quote(dc) + " (" + join(heads) +
         " heads)";
}

const char* const kWholeHeads = "fractions that give each rank a whole number >= 1 of heads";

// Every datacenter's split and every scheduled re-split shards the model (model/'s rule).
void check_splits(const Config& cfg, Errors& e) {
  const ModelConfig& m = cfg.model;
  for (size_t d = 0; d < cfg.datacenters.size(); ++d) {
    const DatacenterConfig& dc = cfg.datacenters[d];
    const SplitCheck sc = check_split(m, dc.split);
    // The heads are what gets split; without a model.heads line, the split is what to fix.
    const std::string at = cfg.where.count("model.heads")
                               ? "model.heads"
                               : "datacenter." + std::to_string(d) + ".split";
    if (!sc.whole_heads)
      e.add(at, "model.heads", head_split_problem(m, sc, dc.split, dc.split_even, dc.name),
            kWholeHeads);
    if (!sc.enough_cols)
      e.add("model.d_ff", "model.d_ff",
            "d_ff " + std::to_string(m.d_ff) + " cannot give each of the " +
                count(dc.ranks, "rank") + " of datacenter " + quote(dc.name) + " an MLP column",
            "d_ff >= the ranks of every datacenter");
  }
  for (const ResplitEvent& r : cfg.control.resplits) {
    const SplitCheck sc = check_split(m, r.split);
    const std::string key = "control.resplit." + std::to_string(r.entry) + ".split";
    if (!sc.whole_heads)
      e.add(key, key, head_split_problem(m, sc, r.split, false, r.datacenter), kWholeHeads);
  }
}

void check_size(const Config& cfg, Errors& e) {
  const double params = parameter_count_as_double(cfg.model);
  if (params > kMaxParametersPerExpert)
    e.add("model", "model", "about " + num(params) + " parameters per expert",
          "fewer than 1e15 parameters");
  else if (params > INT_MAX)  // every MPI count of the sync and the checkpoint is an int of floats
    e.add("model", "model", num(params, 15) + " parameters per expert",
          "at most 2^31 - 1 (2147483647) in this version");
}

// The corpus as the run loads it (files with the same content count once) holds a sequence.
void check_corpus(const Config& cfg, Errors& e) {
  const uint64_t need = static_cast<uint64_t>(cfg.model.seq_len) + 1;
  try {
    const uint64_t have = corpus_bytes_at_least(cfg.train.corpus, need);
    if (have < need)
      e.add("train.corpus", "train.corpus",
            quote(cfg.train.corpus) + " holds " + std::to_string(have) +
                " bytes (files with the same content counted once)",
            "at least model.seq_len + 1 = " + std::to_string(need) + " bytes");
  } catch (const std::exception& ex) {
    e.add("train.corpus", "train.corpus", ex.what(), "a readable corpus");
  }
}

void check_memory(const Config& cfg, Errors& e) {
  // The estimate is what the CPU backend holds in host memory. With run.backend = "cuda" the
  // parameters, Adam state and activations live on the GPU (a cudaMalloc that does not fit
  // aborts the job naming the call), and the host only stages copies; a host-side estimate
  // would refuse GPU runs for the wrong memory. "auto" keeps the check.
  if (cfg.backend == "cuda") return;
  const double limit = memory_limit_bytes(cfg);
  if (limit <= 0) return;
  int worst = -1;
  double worst_bytes = 0;
  std::string when;  // "" for the configured splits, else the scripted re-split that needs most
  auto consider = [&](const Config& c, const std::string& what) {
    for (int r = 0; r < c.world_size(); ++r) {
      const double b = estimate_memory(c, r).total_bytes;
      if (b > worst_bytes) worst_bytes = b, worst = r, when = what;
    }
  };
  consider(cfg, "");
  // A scripted re-split gives a rank more of the model from its step on: check those too.
  for (const ResplitEvent& ev : cfg.control.resplits) {
    Config c = cfg;
    for (auto& dc : c.datacenters)
      if (dc.name == ev.datacenter) dc.split = ev.split;
    consider(c, " after the re-split at step " + std::to_string(ev.step));
  }
  if (worst < 0 || worst_bytes <= limit) return;
  const std::string lim = cfg.memory_limit_gb > 0 ? "run.memory_limit_gb" : "MemTotal";
  e.add("model", "model",
        "rank " + std::to_string(worst) + " (datacenter " +
            quote(cfg.datacenters[cfg.dc_of_rank(worst)].name) + ") needs about " +
            msg::gib(worst_bytes) + " for parameters, gradients, Adam state and activations" +
            when + ", " +
            "above the limit of " + msg::gib(limit) + " (" + lim + ")",
        "at most " + msg::gib(limit) + " per rank: a smaller model or batch, or a higher "
        "run.memory_limit_gb");
}

}  // namespace

Config load_valid_config(const std::string& path, const std::vector<std::string>& overrides) {
  Config cfg = load_config(path, overrides);
  Errors e(cfg);
  check_splits(cfg, e);
  check_size(cfg, e);
  check_policies(cfg, e);
  check_direct_paths(cfg, e);
  check_switches(cfg, e);
  check_forecast(cfg, e);
  check_unshaped_planners(cfg, e);
  check_corpus(cfg, e);
  // The estimate shards the model as the run will, which needs the splits and size to pass.
  if (!e.any()) check_memory(cfg, e);
  e.throw_if_any();
  return cfg;
}

}  // namespace strait
