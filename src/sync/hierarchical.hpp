// hierarchical.hpp — baseline strategy "hierarchical" (see hierarchical.cpp).
#pragma once
#include "sync/sync.hpp"

namespace strait {

class HierarchicalSync final : public SyncStrategy {
 public:
  std::string name() const override { return "hierarchical"; }
  void sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in, Transport& tr) override;
};

}  // namespace strait
