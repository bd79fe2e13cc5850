// owners.hpp — sync strategy "owners": executes an owner plan (plan.hpp) — a star, or the
// multi-owner, multi-path plans of an optimal planner — over the transport (see owners.cpp).
#pragma once
#include "sync/sync.hpp"

namespace strait {

class OwnersSync final : public SyncStrategy {
 public:
  std::string name() const override { return "owners"; }
  void sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in, Transport& tr) override;
};

}  // namespace strait
