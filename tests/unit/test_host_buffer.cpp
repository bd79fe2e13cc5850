// test_host_buffer.cpp — HostBuffer (the sync channels' staging memory): grow-only resizing,
// unique ownership through moves (no double free, no leak), and the CPU backend's staging
// copies, which the sync strategies call in place of to_host / from_host.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "backend/host_buffer.hpp"

using namespace strait;

TEST(HostBuffer, GrowsOnlyWhenLarger) {
  auto be = make_cpu_backend<float>();
  HostBuffer<float> b(be.get());
  EXPECT_EQ(b.size(), 0u);
  b.resize(100);
  ASSERT_NE(b.data(), nullptr);
  for (size_t i = 0; i < 100; ++i) EXPECT_EQ(b.data()[i], 0.0f) << "alloc_host zeroes";
  float* first = b.data();
  b.data()[7] = 3.0f;
  b.resize(40);  // smaller: same memory, contents kept
  EXPECT_EQ(b.size(), 40u);
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b.data()[7], 3.0f);
  b.resize(100);  // back up to the capacity: still no reallocation
  EXPECT_EQ(b.data(), first);
  b.resize(1000);
  EXPECT_EQ(b.size(), 1000u);
  b.data()[999] = 1.0f;  // the new memory is writable to its end
}

TEST(HostBuffer, MovesTransferOwnership) {
  auto be = make_cpu_backend<float>();
  HostBuffer<float> a(be.get());
  a.resize(16);
  float* p = a.data();
  HostBuffer<float> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is empty
  HostBuffer<float> c(be.get());
  c.resize(8);
  c = std::move(b);  // c's old memory is freed, b's moves in
  EXPECT_EQ(c.data(), p);
  std::vector<HostBuffer<float>> v;  // as SyncChannel sits in a vector
  v.push_back(std::move(c));
  v.emplace_back(be.get());
  v.back().resize(4);
  v.reserve(64);  // relocation moves every buffer
  EXPECT_EQ(v[0].data(), p);
}

TEST(HostBuffer, CpuStagingCopies) {
  auto be = make_cpu_backend<float>();
  HostBuffer<float> h(be.get());
  h.resize(5);
  float* dev = be->alloc(5);
  for (int i = 0; i < 5; ++i) dev[i] = static_cast<float>(i) + 0.5f;
  be->stage_out(h.data(), dev, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(h.data()[i], static_cast<float>(i) + 0.5f);
  for (int i = 0; i < 5; ++i) h.data()[i] *= -2.0f;
  be->stage_in(dev, h.data(), 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(dev[i], -2.0f * (static_cast<float>(i) + 0.5f));
  be->free(dev);
}
