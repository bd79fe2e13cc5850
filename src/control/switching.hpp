// switching.hpp — the "scheduled" policy of the sync_planner and overlap slots: it hands the
// slot's decision to another registered policy of the same slot, switching at the steps the
// config's [[control.switch]] entries give (the slot's baseline before the first switch). Each
// policy it switches to is made once and kept, so its state survives switching away and back.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "control/policy.hpp"
#include "core/check.hpp"

namespace strait {

template <typename Slot>
class Switching {
 public:
  using Factory = std::unique_ptr<Slot> (*)(const std::string&, const Config&);
  Switching(const Config& cfg, const char* slot, std::string baseline, Factory make)
      : cfg_(cfg), slot_(slot), baseline_(std::move(baseline)), make_(make) {}

  // The policy in charge at `step`, and its name.
  Slot& at(int64_t step, std::string& name) {
    name = baseline_;
    for (const auto& ev : cfg_.control.switches)  // sorted by step: the latest wins
      if (ev.slot == slot_ && ev.step <= step) name = ev.policy;
    auto it = made_.find(name);
    if (it == made_.end()) {
      auto p = make_(name, cfg_);
      STRAIT_CHECK(p != nullptr, "control.switch names unknown " + slot_ + " policy " + name);
      it = made_.emplace(name, std::move(p)).first;
    }
    return *it->second;
  }

 private:
  const Config& cfg_;
  std::string slot_, baseline_;
  Factory make_;
  std::map<std::string, std::unique_ptr<Slot>> made_;
};

}  // namespace strait
