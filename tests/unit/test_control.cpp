// test_control.cpp — the controller and its tables without MPI: every registered policy can be
// made and says what it does; the decision record survives its encoding (and a corrupt one is
// refused); scripted policies change exactly the slot they script, at exactly the steps the
// config gives, and a decision record is proposed only when something changed; the star planner
// picks the hub a hand computation picks; pgcs refuses to overlap one expert; the step ledger
// hands on steps in order once both halves from every rank are in; owner-plan cuts partition.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "control/controller.hpp"
#include "control/plan.hpp"
#include "control/policy.hpp"
#include "sync/plan.hpp"
#include "train/ledger.hpp"
#include "tests/common/scratch.hpp"
#include "validate/validate.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

fs::path scratch() {
  static const fs::path d = [] {
    const fs::path p = strait::test::scratch_dir("control");
    std::ofstream(p / "corpus.txt") << "a small corpus for the controller tests\n";
    return p;
  }();
  return d;
}

Config config(const std::string& name, const std::string& extra, int experts = 2) {
  const fs::path p = scratch() / (name + ".toml");
  std::ofstream(p) << "[model]\nlayers = 1\nd_model = 16\nheads = 4\nd_ff = 32\nseq_len = 8\n"
                      "experts = " << experts << "\n[train]\nsteps = 30\nglobal_batch = 6\ncorpus = \""
                   << (scratch() / "corpus.txt").string() << "\"\n"
                   << "[[datacenter]]\nname = \"a\"\nranks = 1\n"
                      "[[datacenter]]\nname = \"b\"\nranks = 2\n"
                      "[[datacenter]]\nname = \"c\"\nranks = 1\n"
                   << extra;
  return load_valid_config(p.string());
}

// A controller as rank 0 builds it, starting at step 0 with the config's splits and shares.
struct Fixture {
  Config cfg;
  std::shared_ptr<const Scenario> sc;
  std::unique_ptr<Controller> ctl;
  Fixture(const std::string& name, const std::string& extra, bool thread_multiple = true,
          int experts = 2)
      : cfg(config(name, extra, experts)), sc(std::make_shared<const Scenario>(cfg)) {
    Plan start;
    start.effective = 0;
    for (const auto& dc : cfg.datacenters) start.splits.push_back(dc.split);
    start.shares = cfg.train.batch_shares;
    ctl = std::make_unique<Controller>(cfg, make_world(cfg, *sc, thread_multiple), sc, start);
  }
  // Steps 0..last: record each as completed and ask for the next; effective step → plan.
  std::map<int64_t, Plan> run(int64_t last, std::vector<DecisionRow>* rows = nullptr) {
    std::vector<DecisionRow> r;
    std::map<int64_t, Plan> out;
    out[0] = ctl->initial(r);
    for (int64_t s = 0; s < last; ++s) {
      StepRecord rec;
      rec.step = s;
      rec.ranks.assign(cfg.world_size(), RankStep{10.0 + s, 0, 1, 0, 0.5, 0});
      rec.links.assign(9, LinkStep{});
      ctl->record(rec);
      if (auto p = ctl->decide(s, s + 1, 0.1 * s, r)) out[s + 1] = *p;
    }
    if (rows) *rows = r;
    return out;
  }
};

}  // namespace

TEST(Registry, EveryPolicyIsMadeAndDescribed) {
  const Config cfg = config("registry", "");
  ASSERT_EQ(policy_slots().size(), 5u);
  for (const auto& slot : policy_slots()) {
    const auto names = policy_names(slot);
    EXPECT_FALSE(names.empty()) << slot;
    for (const auto& n : names) {
      EXPECT_FALSE(policy_summary(slot, n).empty()) << slot << " " << n;
      bool made = false;
      if (slot == "forecaster") made = make_forecaster(n, cfg) != nullptr;
      if (slot == "balancer") made = make_balancer(n, cfg) != nullptr;
      if (slot == "path_selector") made = make_path_selector(n, cfg) != nullptr;
      if (slot == "sync_planner") made = make_sync_planner(n, cfg) != nullptr;
      if (slot == "overlap") made = make_overlap_scheduler(n, cfg) != nullptr;
      EXPECT_TRUE(made) << slot << " " << n;
    }
  }
  EXPECT_EQ(make_forecaster("no-such", cfg), nullptr);
  EXPECT_EQ(make_sync_planner("no-such", cfg), nullptr);
  EXPECT_TRUE(policy_names("no-such-slot").empty());
  EXPECT_EQ(policy_summary("overlap", "no-such"), "");
}

TEST(Registry, MadePoliciesCarryTheirRegisteredNames) {
  const Config cfg = config("names", "");
  for (const auto& n : policy_names("forecaster")) EXPECT_EQ(make_forecaster(n, cfg)->name(), n);
  for (const auto& n : policy_names("balancer")) EXPECT_EQ(make_balancer(n, cfg)->name(), n);
  for (const auto& n : policy_names("path_selector")) EXPECT_EQ(make_path_selector(n, cfg)->name(), n);
  for (const auto& n : policy_names("sync_planner")) EXPECT_EQ(make_sync_planner(n, cfg)->name(), n);
  for (const auto& n : policy_names("overlap")) EXPECT_EQ(make_overlap_scheduler(n, cfg)->name(), n);
}

TEST(DecisionRecord, EncodingRoundTripsAndRefusesCorruptBytes) {
  Plan p;
  p.made_after = 41;
  p.effective = 43;
  p.splits = {{1.0}, {0.25, 0.75}};
  p.shares = {0.4, 0.6};
  p.paths = direct_paths(2);
  p.sync = star_plan(2, 1, p.paths);
  p.sync.predicted_ms = 12.5;
  p.overlap = Overlap::pipelined;
  p.routes.assign(4, {});
  p.routes[0 * 2 + 1] = {Route{{0, 1}, 1.0, 0.0625}, Route{{0, 1}, 0.0, 0.03125}};  // a standby
  const std::vector<char> bytes = encode(p);
  const Plan q = decode_plan(bytes);
  EXPECT_TRUE(q.same_decisions(p));
  EXPECT_EQ(q.routes, p.routes);  // rates and a share of 0 included
  EXPECT_EQ(q.made_after, 41);
  EXPECT_EQ(q.effective, 43);
  for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_THROW(decode_plan(std::vector<char>(bytes.begin(), bytes.begin() + cut)),
                 std::runtime_error) << cut;
  std::vector<char> longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(decode_plan(longer), std::runtime_error);
  const std::string js = to_json(p);
  EXPECT_NE(js.find("\"overlap\":\"pipelined\""), std::string::npos) << js;
  EXPECT_NE(js.find("\"strategy\":\"owners\""), std::string::npos) << js;
  EXPECT_NE(js.find("\"fraction\":0,\"gbps\":0.03125"), std::string::npos) << js;
}

TEST(Controller, BaselinesDecideOnceAtTheStart) {
  Fixture f("baselines", "");
  std::vector<DecisionRow> rows;
  const auto plans = f.run(29, &rows);
  ASSERT_EQ(plans.size(), 1u);  // only the initial record
  const Plan& p = plans.at(0);
  EXPECT_EQ(p.paths, direct_paths(3));
  EXPECT_EQ(p.sync.strategy, "hierarchical");
  EXPECT_EQ(p.overlap, Overlap::sequential);
  EXPECT_EQ(p.splits[1], (std::vector<double>{0.5, 0.5}));
  ASSERT_EQ(rows.size(), 6u);  // one row per slot and the whole record
  EXPECT_EQ(rows.back().slot, "plan");
}

TEST(Controller, ScriptedSlotsChangeExactlyWhatTheyScriptWhenTheySayIt) {
  Fixture f("scripted",
            "[control]\nbalancer = \"scheduled\"\npath_selector = \"scheduled\"\n"
            "sync_planner = \"scheduled\"\noverlap = \"scheduled\"\n"
            "[[control.resplit]]\nstep = 12\ndatacenter = \"b\"\nsplit = [0.5, 0.5]\n"
            "[[control.resplit]]\nstep = 5\ndatacenter = \"b\"\nsplit = [0.5, 0.5]\n"
            "[[control.reroute]]\nstep = 3\nfrom = \"a\"\nto = \"c\"\nvia = [\"b\"]\n"
            "[[control.switch]]\nstep = 7\nslot = \"sync_planner\"\npolicy = \"star\"\n"
            "[[control.switch]]\nstep = 9\nslot = \"overlap\"\npolicy = \"pgcs\"\n"
            "[[control.switch]]\nstep = 20\nslot = \"sync_planner\"\npolicy = \"hierarchical\"\n");
  std::vector<DecisionRow> rows;
  const auto plans = f.run(29, &rows);
  // The resplits give the split b already has: no decision. The others change one slot each.
  std::vector<int64_t> at;
  for (const auto& [k, v] : plans) at.push_back(k);
  EXPECT_EQ(at, (std::vector<int64_t>{0, 3, 7, 9, 20}));
  EXPECT_EQ(plans.at(3).paths[0 * 3 + 2], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plans.at(3).sync.strategy, "hierarchical");
  EXPECT_EQ(plans.at(7).sync.strategy, "owners");
  EXPECT_EQ(plans.at(7).overlap, Overlap::sequential);
  EXPECT_EQ(plans.at(9).overlap, Overlap::pipelined);
  EXPECT_EQ(plans.at(9).sync, plans.at(7).sync);
  EXPECT_EQ(plans.at(20).sync.strategy, "hierarchical");
  EXPECT_EQ(plans.at(20).paths, plans.at(3).paths);
  // Trace rows: per change, the slot that changed and the whole record; made at step s - 1.
  std::vector<std::string> slots;
  for (const auto& r : rows)
    if (r.effective_step == 9) {
      slots.push_back(r.slot);
      EXPECT_EQ(r.step, 8);
    }
  EXPECT_EQ(slots, (std::vector<std::string>{"overlap", "plan"}));
}

TEST(Controller, ScheduledResplitTakesEffectAtItsStep) {
  Fixture f("resplit", "[control]\nbalancer = \"scheduled\"\n"
                       "[[control.resplit]]\nstep = 10\ndatacenter = \"b\"\nsplit = [0.5, 0.5]\n"
                       "[[control.resplit]]\nstep = 6\ndatacenter = \"b\"\nsplit = [0.75, 0.25]\n");
  const auto plans = f.run(29);
  std::vector<int64_t> at;
  for (const auto& [k, v] : plans) at.push_back(k);
  EXPECT_EQ(at, (std::vector<int64_t>{0, 6, 10}));
  EXPECT_EQ(plans.at(6).splits[1], (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(plans.at(6).splits[0], (std::vector<double>{1.0}));
  EXPECT_EQ(plans.at(10).splits[1], (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(plans.at(10).shares, plans.at(0).shares);
}

TEST(Controller, PgcsOverlapsOnlyWhatItMay) {
  Fixture two("pgcs2", "[control]\noverlap = \"pgcs\"\n");
  EXPECT_EQ(two.run(1).at(0).overlap, Overlap::pipelined);
  Fixture one("pgcs1", "[control]\noverlap = \"pgcs\"\n", true, /*experts=*/1);
  std::vector<DecisionRow> one_rows;
  EXPECT_EQ(one.ctl->initial(one_rows).overlap, Overlap::sequential);
  Fixture no_threads("pgcs_nt", "[control]\noverlap = \"pgcs\"\n", /*thread_multiple=*/false);
  std::vector<DecisionRow> rows;
  EXPECT_EQ(no_threads.ctl->initial(rows).overlap, Overlap::sequential);
  bool said_why = false;
  for (const auto& r : rows)
    if (r.slot == "overlap" && r.detail.find("MPI_THREAD_MULTIPLE") != std::string::npos) said_why = true;
  EXPECT_TRUE(said_why);
}

TEST(Controller, StarPicksTheHubWithTheLowestPredictedTime) {
  // c is the only DC with fast links both ways: every other hub waits on a slow link.
  Fixture f("star",
            "[network]\nfull_mesh = false\n"
            "[[link]]\nfrom = \"a\"\nto = \"b\"\ncapacity_gbps = 0.1\nlatency_ms = 5\n"
            "[[link]]\nfrom = \"b\"\nto = \"a\"\ncapacity_gbps = 0.1\nlatency_ms = 5\n"
            "[[link]]\nfrom = \"a\"\nto = \"c\"\ncapacity_gbps = 1\nlatency_ms = 5\n"
            "[[link]]\nfrom = \"c\"\nto = \"a\"\ncapacity_gbps = 1\nlatency_ms = 5\n"
            "[[link]]\nfrom = \"b\"\nto = \"c\"\ncapacity_gbps = 1\nlatency_ms = 5\n"
            "[[link]]\nfrom = \"c\"\nto = \"b\"\ncapacity_gbps = 1\nlatency_ms = 5\n"
            "[control]\nsync_planner = \"star\"\n");
  std::vector<DecisionRow> rows;
  const Plan p = f.ctl->initial(rows);
  ASSERT_EQ(p.sync.strategy, "owners");
  EXPECT_EQ(p.sync.owner_fraction, (std::vector<double>{0, 0, 1}));
  // Predicted: two phases, each 1 Gbit/s for the gradient plus 5 ms.
  const double S = make_world(f.cfg, *f.sc, true).gradient_bytes;
  EXPECT_NEAR(p.sync.predicted_ms, 2 * (S * 8 / 1e9 * 1e3 + 5), 1e-9);
  EXPECT_NO_THROW(check_owner_plan(p.sync, 3));
}

TEST(SyncPlan, OwnerSlicesAndRoutePartsPartitionTheVector) {
  SyncPlan p;
  p.owner_fraction = {0.2, 0.0, 0.5, 0.3};
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{1001}}) {
    size_t covered = 0, prev = 0;
    for (int j = 0; j < 4; ++j) {
      const auto [lo, hi] = owner_slice(p, j, n);
      EXPECT_EQ(lo, prev);
      EXPECT_LE(lo, hi);
      covered += hi - lo;
      prev = hi;
    }
    EXPECT_EQ(covered, n);
    EXPECT_EQ(owner_slice(p, 1, n).first, owner_slice(p, 1, n).second);  // fraction 0: empty
  }
  // Fractions that sum to 1 only within rounding, the last owner at 0: its slice stays empty and
  // the last owner of positive fraction takes the tail (no element is left without an owner).
  SyncPlan q;
  q.owner_fraction = {0.3333333, 0.6666666, 0.0};
  const size_t n = 1000000;
  EXPECT_EQ(owner_slice(q, 1, n).second, n);
  EXPECT_EQ(owner_slice(q, 2, n).first, owner_slice(q, 2, n).second);
  const std::vector<Route> rs = {{{0, 1}, 0.25}, {{0, 2, 1}, 0.75}};
  EXPECT_EQ(route_part(rs, 0, 100), (std::pair<size_t, size_t>{0, 25}));
  EXPECT_EQ(route_part(rs, 1, 100), (std::pair<size_t, size_t>{25, 100}));
}

TEST(SyncPlan, CheckRefusesBrokenOwnerPlans) {
  const Paths paths = direct_paths(3);
  SyncPlan ok = star_plan(3, 1, paths);
  EXPECT_NO_THROW(check_owner_plan(ok, 3));
  SyncPlan bad = ok;
  bad.owner_fraction = {0.5, 0.6, 0};
  EXPECT_THROW(check_owner_plan(bad, 3), std::invalid_argument);
  bad = ok;
  bad.reduce[0 * 3 + 1].clear();
  EXPECT_THROW(check_owner_plan(bad, 3), std::invalid_argument);
  bad = ok;
  bad.broadcast[1 * 3 + 2] = {Route{{1, 0}, 1.0}};  // ends at the wrong DC
  EXPECT_THROW(check_owner_plan(bad, 3), std::invalid_argument);
  bad = ok;
  bad.reduce[2 * 3 + 1] = {Route{{2, 1}, 0.5}};  // fractions sum to 0.5
  EXPECT_THROW(check_owner_plan(bad, 3), std::invalid_argument);
}

namespace {
ControlLink::Gathered gathered(int W, int64_t step, std::vector<std::vector<Completion>> done) {
  ControlLink::Gathered g;
  g.ranks.resize(W);
  for (int r = 0; r < W; ++r) {
    g.ranks[r].step = step;
    g.ranks[r].compute_ms = 10 + r;
    g.ranks[r].ready_ms = 1000 + 2 * r;  // rank W-1 is done last
    g.ranks[r].control_wait_ms = 0.25 * r;
    g.ranks[r].control_rtt_ms = 30 + r;
    g.ranks[r].n_done = static_cast<int32_t>(done[r].size());
    for (size_t i = 0; i < done[r].size(); ++i) g.ranks[r].done[i] = done[r][i];
  }
  return g;
}
}  // namespace

TEST(Ledger, SequentialStepsCompleteInTheirOwnRound) {
  StepLedger l(2);
  l.add(gathered(2, 0, {{{0, 5, 0, 1, 0}}, {{0, 6, 0, 1, 0}}}), 0, 0, 3.0, 64, 20, {});
  const auto done = l.take_complete();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].step, 0);
  EXPECT_EQ(done[0].ranks[0].sync_ms, 5);
  EXPECT_EQ(done[0].ranks[0].slack_ms, 2);  // done 2 ms before rank 1
  EXPECT_EQ(done[0].ranks[1].slack_ms, 0);
  EXPECT_EQ(done[0].ranks[1].wait_ms, 0.25);  // blocked for the controller's reply
  EXPECT_EQ(done[0].control_rtt_ms, 31);      // the slowest round trip
  EXPECT_FALSE(done[0].overlapped);
  EXPECT_TRUE(l.empty());
}

// control.report = after-compute: a step's report goes before its sync, so its compute half is
// handed on in its own round and the record completes with the next round, which carries its
// sync and its iteration time.
TEST(Ledger, EarlyReportsHandTheComputeHalfOnFirst) {
  StepLedger l(2);
  auto early = [](ControlLink::Gathered g) {
    for (auto& m : g.ranks) m.early = m.step >= 0 ? 1 : 0;
    return g;
  };
  l.add(early(gathered(2, 0, {{}, {}})), 0, 0, 3.0, 64, 20, {});
  EXPECT_TRUE(l.take_complete().empty());  // its sync has not run yet
  auto half = l.take_computed();
  ASSERT_EQ(half.size(), 1u);
  EXPECT_EQ(half[0].step, 0);
  EXPECT_FALSE(half[0].synced);
  EXPECT_TRUE(half[0].early);
  EXPECT_EQ(half[0].ranks[1].compute_ms, 11);
  EXPECT_EQ(half[0].wall_ms, 0);  // not known before the sync completes
  EXPECT_TRUE(l.take_computed().empty());  // each once
  Completion c0{0, 5, 0, 1, 0, 44}, c1{0, 6, 0, 1, 0, 43};
  l.add(early(gathered(2, 1, {{c0}, {c1}})), 1, 1, 2.9, 64, 20, {});
  half = l.take_computed();
  ASSERT_EQ(half.size(), 1u);
  EXPECT_EQ(half[0].step, 1);
  auto done = l.take_complete();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].step, 0);
  EXPECT_TRUE(done[0].synced);
  EXPECT_EQ(done[0].ranks[1].sync_ms, 6);
  EXPECT_EQ(done[0].wall_ms, 44);  // rank 0's iteration, start to the end of its update
  EXPECT_FALSE(done[0].overlapped);
  // Ranks that disagree on where they posted a step are a bug, not a measurement.
  auto mixed = early(gathered(2, 2, {{}, {}}));
  mixed.ranks[1].early = 0;
  EXPECT_DEATH(l.add(mixed, 2, 0, 2.8, 64, 20, {}), "at different points");
}

TEST(Ledger, PipelinedStepsCompleteOneRoundLaterInOrder) {
  StepLedger l(2);
  l.add(gathered(2, 0, {{}, {}}), 0, 0, 3.0, 64, 20, {});
  EXPECT_TRUE(l.take_complete().empty());  // its sync is still in flight
  l.add(gathered(2, 1, {{{0, 7, 1.5, 1, 1}}, {{0, 8, 0.5, 1, 1}}}), 1, 1, 2.9, 64, 20, {});
  auto done = l.take_complete();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].step, 0);
  EXPECT_TRUE(done[0].overlapped);
  EXPECT_EQ(done[0].ranks[1].wait_ms, 0.25 + 0.5);  // for the controller + for the sync thread
  // The last one lands in a final round that computed nothing.
  l.add(gathered(2, -1, {{{1, 7, 0, 1, 1}}, {{1, 7, 0, 1, 1}}}), -1, 0, 0, 0, 0, {});
  done = l.take_complete();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].step, 1);
  EXPECT_TRUE(l.empty());
}
