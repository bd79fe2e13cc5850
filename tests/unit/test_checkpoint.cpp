// test_checkpoint.cpp — checkpoint files: bit-exact round trip of a 2-expert checkpoint
// (data, shapes, tensor order, attributes), atomic write (no .tmp left, a failed write leaves
// nothing), and errors that name the path and the missing item.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>

#include "trace/checkpoint.hpp"
#include "trace/trace.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("strait_test_ckpt_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

NamedTensor tensor(const std::string& name, std::vector<int64_t> shape, float seed) {
  NamedTensor t;
  t.name = name;
  t.shape = std::move(shape);
  size_t n = 1;
  for (int64_t d : t.shape) n *= static_cast<size_t>(d);
  t.data.resize(n);
  for (size_t i = 0; i < n; ++i)
    t.data[i] = seed * std::sin(static_cast<float>(i) + seed) / static_cast<float>(i + 1);
  if (n > 2) {  // values that must survive bit for bit
    t.data[0] = -0.0f;
    t.data[1] = std::numeric_limits<float>::denorm_min();
    t.data[2] = std::numeric_limits<float>::max();
  }
  return t;
}

// Deliberately not in alphabetical order: the file must keep this order.
std::vector<NamedTensor> tensors(float seed) {
  return {tensor("wte", {16, 8}, seed),        tensor("h0.qkv_w", {8, 24}, seed + 1),
          tensor("h0.ln1.b", {8}, seed + 2),   tensor("ln_f.g", {8}, seed + 3),
          tensor("scale", {}, seed + 4),       tensor("empty", {0, 3}, seed + 5),
          tensor("h1.mlp_w", {2, 3, 4}, seed + 6)};
}

Checkpoint make_checkpoint() {
  Checkpoint ck;
  ck.next_step = 1234;
  ck.seed = 0xFFFFFFFFFFFFFFF1ULL;
  ck.config_text = "[model]\nlayers = 2\n# ✓ unicode\n";
  ck.splits = {{0.5, 0.5}, {0.25, 0.25, 0.5}, {1.0}};
  ck.batch_shares = {0.3, 0.45, 0.25};
  for (int e = 0; e < 2; ++e) {
    CheckpointExpert ex;
    ex.adam_t = 600 + e;
    ex.params = tensors(1.0f + static_cast<float>(e));
    ex.adam_m = tensors(10.0f + static_cast<float>(e));
    ex.adam_v = tensors(100.0f + static_cast<float>(e));
    ck.experts.push_back(std::move(ex));
  }
  return ck;
}

void expect_tensors(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].shape, b[i].shape) << a[i].name;
    ASSERT_EQ(a[i].data.size(), b[i].data.size()) << a[i].name;
    if (!a[i].data.empty()) {  // memcmp of two empty vectors' null pointers is undefined (UBSan)
      EXPECT_EQ(0, std::memcmp(a[i].data.data(), b[i].data.data(), a[i].data.size() * sizeof(float)))
          << a[i].name;
    }
  }
}

void expect_message(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

}  // namespace

TEST_F(CheckpointTest, RoundTripIsBitExact) {
  const std::string p = path("sub/ck.h5");  // parent folder created
  const Checkpoint ck = make_checkpoint();
  write_checkpoint(p, ck);
  EXPECT_TRUE(fs::exists(p));
  EXPECT_FALSE(fs::exists(p + ".tmp"));
  const Checkpoint r = read_checkpoint(p);
  EXPECT_EQ(r.next_step, ck.next_step);
  EXPECT_EQ(r.seed, ck.seed);
  EXPECT_EQ(r.config_text, ck.config_text);
  EXPECT_EQ(r.splits, ck.splits);
  EXPECT_EQ(r.batch_shares, ck.batch_shares);
  ASSERT_EQ(r.experts.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(r.experts[e].adam_t, ck.experts[e].adam_t);
    expect_tensors(r.experts[e].params, ck.experts[e].params);
    expect_tensors(r.experts[e].adam_m, ck.experts[e].adam_m);
    expect_tensors(r.experts[e].adam_v, ck.experts[e].adam_v);
  }
}

TEST_F(CheckpointTest, OverwritesAtomically) {
  const std::string p = path("ck.h5");
  Checkpoint ck = make_checkpoint();
  write_checkpoint(p, ck);
  const std::string tmp = p + ".tmp." + std::to_string(getpid());  // this writer's own name
  std::ofstream(tmp) << "stale leftover of a crashed write";
  ck.next_step = 99;
  ck.experts.pop_back();
  write_checkpoint(p, ck);
  EXPECT_FALSE(fs::exists(tmp));
  const Checkpoint r = read_checkpoint(p);
  EXPECT_EQ(r.next_step, 99);
  EXPECT_EQ(r.experts.size(), 1u);
}

TEST_F(CheckpointTest, BadTensorLeavesNothing) {
  const std::string p = path("bad.h5");
  Checkpoint ck = make_checkpoint();
  ck.experts[1].adam_v[1].data.pop_back();  // shape no longer matches data
  expect_message([&] { write_checkpoint(p, ck); }, {p, "/expert1/adam_v/h0.qkv_w"});
  EXPECT_FALSE(fs::exists(p));
  EXPECT_FALSE(fs::exists(p + ".tmp"));
}

TEST_F(CheckpointTest, ReadErrorsNameThePath) {
  const std::string missing = path("missing.h5");
  expect_message([&] { read_checkpoint(missing); }, {missing});

  const std::string text = path("text.h5");
  std::ofstream(text) << "not hdf5";
  expect_message([&] { read_checkpoint(text); }, {text});

  const std::string trace = path("trace.h5");  // an HDF5 file, but not a checkpoint
  {
    TraceWriter w(trace, false, RunMeta{});
    w.close("complete");
  }
  expect_message([&] { read_checkpoint(trace); }, {trace, "not a strait checkpoint"});

  // A checkpoint that lost one tensor named in its order list.
  const std::string broken = path("broken.h5");
  write_checkpoint(broken, make_checkpoint());
  {
    hid_t f = H5Fopen(broken.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Ldelete(f, "/expert0/adam_m/ln_f.g", H5P_DEFAULT), 0);
    H5Fclose(f);
  }
  expect_message([&] { read_checkpoint(broken); }, {broken, "/expert0/adam_m/ln_f.g"});
}
