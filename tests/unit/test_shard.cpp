// test_shard.cpp — the one owner of shard arithmetic (model/): apportion itself, the split rule
// validation applies, the parameter count from the layout's tensor list, and the memory
// estimate and `strait validate`'s rank map, which must hold the same heads, MLP columns and
// sequences as the run (shard_specs, apportion) — e.g. split [0.75, 0.25] of d_ff 6 is 5 + 1
// columns, not round(4.5) + round(1.5).
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "core/apportion.hpp"
#include "core/rng.hpp"
#include "model/layout.hpp"
#include "model/memory.hpp"

namespace fs = std::filesystem;
using strait::apportion;
using strait::ModelConfig;

namespace {

ModelConfig model(int layers, int d_model, int heads, int d_ff, int seq_len) {
  ModelConfig m;
  m.layers = layers, m.d_model = d_model, m.heads = heads, m.d_ff = d_ff, m.seq_len = seq_len;
  return m;
}

// One datacenter of ranks with this split, the whole batch of `batch` sequences.
strait::Config one_dc(const ModelConfig& m, const std::vector<double>& split, int batch) {
  strait::Config c;
  c.model = m;
  strait::DatacenterConfig dc;
  dc.name = "a";
  dc.ranks = static_cast<int>(split.size());
  dc.split = split;
  dc.speed.assign(split.size(), 1.0);
  c.datacenters = {dc};
  c.train.global_batch = batch;
  c.train.batch_shares = {1.0};
  return c;
}

}  // namespace

// ---- apportion (core/apportion.hpp) -------------------------------------------------------

TEST(Apportion, LargestRemainder) {
  // 4.6, 3.4, 2: the floors give 9, the largest remainder (0.6) the tenth.
  EXPECT_EQ(apportion({0.46, 0.34, 0.2}, 10, 0), (std::vector<int>{5, 3, 2}));
  // 0.7, 1.4, 4.9: floors 0, 1, 4; remainders 0.7, 0.4, 0.9 take the two left, largest first.
  EXPECT_EQ(apportion({0.1, 0.2, 0.7}, 7, 0), (std::vector<int>{1, 1, 5}));
}

TEST(Apportion, TiesGoToTheLowerIndex) {
  EXPECT_EQ(apportion({0.5, 0.5}, 3, 0), (std::vector<int>{2, 1}));
  EXPECT_EQ(apportion({0.25, 0.25, 0.25, 0.25}, 6, 1), (std::vector<int>{2, 2, 1, 1}));
  // The split of the review's example: 4.5 + 1.5 columns of 6 with a floor of 1.
  EXPECT_EQ(apportion({0.75, 0.25}, 6, 1), (std::vector<int>{5, 1}));
}

TEST(Apportion, FloorsPushSmallPartsUp) {
  // 0.1 of 10 wants less than its floor of 2: it gets 2, and the large part gives one back.
  EXPECT_EQ(apportion({0.01, 0.99}, 10, 2), (std::vector<int>{2, 8}));
  EXPECT_EQ(apportion({0.02, 0.02, 0.96}, 5, 1), (std::vector<int>{1, 1, 3}));
}

TEST(Apportion, FractionsNeedNotSumToOne) {
  EXPECT_EQ(apportion({1, 3}, 8, 0), (std::vector<int>{2, 6}));
}

TEST(Apportion, SumsToTotalRespectsFloorsAndStaysNearTheShare) {
  uint64_t draw = 0;  // counter-based draws: the same cases on every run
  auto next = [&](uint64_t mod) { return static_cast<int>(strait::hash3(7, 0, draw++) % mod); };
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + next(6);
    const int floor_each = next(3);
    const int total = floor_each * n + next(40);
    std::vector<double> f(n);
    for (auto& x : f) x = 0.01 + strait::uniform01(7, 1, draw++);
    const double sum = std::accumulate(f.begin(), f.end(), 0.0);
    const std::vector<int> out = apportion(f, total, floor_each);
    SCOPED_TRACE("trial " + std::to_string(trial));
    ASSERT_EQ(static_cast<int>(out.size()), n);
    EXPECT_EQ(std::accumulate(out.begin(), out.end(), 0), total);
    for (int i = 0; i < n; ++i) {
      EXPECT_GE(out[i], floor_each);
      // Without a floor in the way, each part is its share rounded down or up.
      if (floor_each == 0) {
        EXPECT_LT(std::abs(out[i] - f[i] / sum * total), 1.0);
      }
    }
  }
}

// ---- the split rule (check_split) and shard_specs ------------------------------------------

TEST(SplitRule, AcceptsWholeHeadsAndRefusesTheRest) {
  const ModelConfig m = model(2, 32, 4, 64, 16);
  EXPECT_TRUE(strait::check_split(m, {1.0}).ok());
  EXPECT_TRUE(strait::check_split(m, {0.5, 0.5}).ok());
  EXPECT_TRUE(strait::check_split(m, {0.75, 0.25}).ok());
  EXPECT_TRUE(strait::check_split(m, {0.25, 0.25, 0.25, 0.25}).ok());
  EXPECT_TRUE(strait::check_split(m, {0.5 + 1e-8, 0.5 - 1e-8}).ok());  // within 1e-6 of whole

  const strait::SplitCheck bad = strait::check_split(m, {0.7, 0.3});
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.whole_heads);
  EXPECT_TRUE(bad.enough_cols);
  ASSERT_EQ(bad.heads.size(), 2u);  // what the message shows: 2.8, 1.2 heads
  EXPECT_DOUBLE_EQ(bad.heads[0], 0.7 * 4);
  EXPECT_DOUBLE_EQ(bad.heads[1], 0.3 * 4);

  EXPECT_FALSE(strait::check_split(m, {0.5 + 1e-5, 0.5 - 1e-5}).whole_heads);
  EXPECT_FALSE(strait::check_split(model(2, 32, 1, 64, 16), {0.5, 0.5}).whole_heads);  // 0.5 head
  EXPECT_FALSE(strait::check_split(m, {0.2, 0.2, 0.2, 0.2, 0.2}).whole_heads);  // 5 ranks, 4 heads
  EXPECT_FALSE(strait::check_split(m, {}).ok());

  const strait::SplitCheck narrow = strait::check_split(model(2, 32, 4, 1, 16), {0.5, 0.5});
  EXPECT_TRUE(narrow.whole_heads);
  EXPECT_FALSE(narrow.enough_cols);  // d_ff 1 < 2 ranks
  EXPECT_FALSE(narrow.ok());
}

// What the rule accepts, shard_specs runs, giving each rank the heads the rule counted.
TEST(SplitRule, AcceptedSplitsShardAsTheyAsk) {
  const ModelConfig m = model(2, 48, 12, 7, 16);
  const std::vector<std::vector<double>> splits = {
      {1.0}, {0.5, 0.5}, {0.75, 0.25}, {1.0 / 3, 2.0 / 3}, {1.0 / 12, 5.0 / 12, 0.5},
      {0.25, 0.25, 0.25, 0.25}, {1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6}};
  for (const auto& split : splits) {
    const strait::SplitCheck sc = strait::check_split(m, split);
    ASSERT_TRUE(sc.ok());
    const auto specs = strait::shard_specs(m, split);
    int heads = 0, cols = 0;
    for (size_t i = 0; i < split.size(); ++i) {
      EXPECT_EQ(specs[i].heads, std::lround(sc.heads[i])) << i;
      EXPECT_EQ(specs[i].head_begin, heads);
      EXPECT_EQ(specs[i].col_begin, cols);
      EXPECT_GE(specs[i].cols, 1);
      heads += specs[i].heads;
      cols += specs[i].cols;
    }
    EXPECT_EQ(heads, m.heads);
    EXPECT_EQ(cols, m.d_ff);
  }
}

// ---- parameter count ---------------------------------------------------------------------

TEST(ParameterCount, EqualsTheFullLayout) {
  const std::vector<ModelConfig> shapes = {model(2, 32, 4, 64, 16), model(1, 16, 2, 32, 8),
                                           model(3, 48, 6, 100, 33), model(5, 8, 8, 3, 2),
                                           model(0, 16, 4, 16, 4)};
  for (const ModelConfig& m : shapes) {
    const strait::Layout full = strait::make_layout(m, strait::shard_specs(m, {1.0})[0]);
    EXPECT_EQ(strait::parameter_count(m), static_cast<long long>(full.full_total)) << m.layers;
    EXPECT_EQ(full.shard_total, full.full_total);
    EXPECT_DOUBLE_EQ(strait::parameter_count_as_double(m), static_cast<double>(full.full_total));
  }
}

// An absurd model is bounded in double precision, at once and without allocating it.
TEST(ParameterCount, AbsurdSizesStayFiniteAndAboveTheBound) {
  const ModelConfig m = model(INT_MAX, INT_MAX - 1, 2, INT_MAX, INT_MAX);
  const double p = strait::parameter_count_as_double(m);
  EXPECT_TRUE(std::isfinite(p));
  EXPECT_GT(p, strait::kMaxParametersPerExpert);
  // 2^31 layers of (4C² + 2CF) ≈ 6·2^62 each: far beyond 2^63, where an int64 would wrap.
  EXPECT_GT(p, 1e28);
}

// ---- memory estimate and the rank map ----------------------------------------------------

// The review's example: split [0.75, 0.25] of d_ff 6. The run holds 5 + 1 MLP columns, and
// so must the estimate (it once assumed round(4.5) = 5 and round(1.5) = 2).
TEST(MemoryEstimate, UsesTheRunsShards) {
  const ModelConfig m = model(2, 32, 4, 6, 16);
  const strait::Config c = one_dc(m, {0.75, 0.25}, 5);
  const auto specs = strait::shard_specs(m, {0.75, 0.25});
  ASSERT_EQ(specs[0].cols, 5);
  ASSERT_EQ(specs[1].cols, 1);
  ASSERT_EQ(specs[0].heads, 3);
  ASSERT_EQ(specs[1].heads, 1);
  const double V = 256, C = 32, T = 16, L = 2, hd = 8, b = 5;
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const strait::MemoryEstimate e = strait::estimate_memory(c, r);
    const double P = static_cast<double>(strait::make_layout(m, specs[r]).shard_total);
    const double h = specs[r].heads, fr = specs[r].cols;
    EXPECT_DOUBLE_EQ(e.params_bytes, 4 * P);
    EXPECT_DOUBLE_EQ(e.grads_bytes, 4 * P);
    EXPECT_DOUBLE_EQ(e.adam_bytes, 8 * P);
    EXPECT_DOUBLE_EQ(e.activations_bytes,
                     4 * b * T * (L * (10 * C + 4 * h * hd + 2 * h * T + 3 * fr) + 2 * V + 4 * C));
  }
}

// The estimate's batch is the run's: shares apportioned by largest remainder, >= 1 each.
TEST(MemoryEstimate, UsesTheRunsBatch) {
  strait::Config c = one_dc(model(1, 16, 2, 16, 8), {1.0}, 7);
  strait::DatacenterConfig b = c.datacenters[0];
  b.name = "b";
  c.datacenters.push_back(b);
  c.train.batch_shares = {0.5, 0.5};  // 3.5 + 3.5 sequences: the run gives 4 + 3
  const strait::MemoryEstimate e0 = strait::estimate_memory(c, 0);
  const strait::MemoryEstimate e1 = strait::estimate_memory(c, 1);
  EXPECT_DOUBLE_EQ(e0.params_bytes, e1.params_bytes);
  EXPECT_DOUBLE_EQ(e0.activations_bytes / e1.activations_bytes, 4.0 / 3.0);
}

// Deep models are estimated from the layouts of no and one layer: the same as listing them all.
TEST(MemoryEstimate, LayersScaleTheShardExactly) {
  const ModelConfig m = model(7, 24, 6, 30, 8);
  const strait::Config c = one_dc(m, {0.5, 1.0 / 3, 1.0 / 6}, 3);
  const auto specs = strait::shard_specs(m, c.datacenters[0].split);
  for (int r = 0; r < 3; ++r)
    EXPECT_DOUBLE_EQ(strait::estimate_memory(c, r).params_bytes,
                     4.0 * static_cast<double>(strait::make_layout(m, specs[r]).shard_total));
}

// `strait validate` prints the run's shards and batch, not rounded fractions.
TEST(ValidateOutput, RankMapShowsTheRunsColumns) {
  const fs::path dir =
      fs::temp_directory_path() / ("strait_test_shard_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "corpus.txt") << "a tiny corpus for the config to point at\n";
  const fs::path file = dir / "split.toml";
  std::ofstream(file) << "[run]\nmemory_limit_gb = 4\n\n"
                         "[[datacenter]]\nname = \"a\"\nranks = 2\nsplit = [0.75, 0.25]\n\n"
                         "[[datacenter]]\nname = \"b\"\nranks = 1\n\n"
                         "[model]\nlayers = 1\nd_model = 16\nheads = 4\nd_ff = 6\nseq_len = 8\n\n"
                         "[train]\nglobal_batch = 7\nsteps = 2\ncorpus = \""
                      << (dir / "corpus.txt").string() << "\"\n";
  testing::internal::CaptureStdout();
  const int rc = strait::cmd_validate(file.string(), {});
  const std::string out = testing::internal::GetCapturedStdout();
  fs::remove_all(dir);
  ASSERT_EQ(rc, 0) << out;
  // rank, datacenter, local, split, heads, d_ff cols
  const std::string rank0 = "     0  a                0     0.75     3        5\n";
  const std::string rank1 = "     1  a                1     0.25     1        1\n";
  EXPECT_NE(out.find(rank0), std::string::npos) << out;
  EXPECT_NE(out.find(rank1), std::string::npos) << out;
  EXPECT_NE(out.find("0.5 (4 seq)"), std::string::npos) << out;  // 3.5 + 3.5 → 4 + 3
  EXPECT_NE(out.find("0.5 (3 seq)"), std::string::npos) << out;
}
