// cmd_policies.cpp — `strait policies`: the controller's slots and every policy registered in
// them, with the config default and a one-line summary each, generated from the registry tables
// so that this list, --help and docs/config.md (checked by tests/unit/test_docs.cpp) cannot
// drift from what a config may name.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "control/policy.hpp"

namespace strait {

namespace {
std::string default_of(const std::string& slot) {
  const ControlConfig d;
  if (slot == "forecaster") return d.forecaster;
  if (slot == "balancer") return d.balancer;
  if (slot == "path_selector") return d.path_selector;
  if (slot == "sync_planner") return d.sync_planner;
  if (slot == "overlap") return d.overlap;
  return "";
}
}  // namespace

std::string policies_markdown() {
  std::string out = "| key | default | policy | what it does |\n|---|---|---|---|\n";
  for (const auto& slot : policy_slots()) {
    bool first = true;
    for (const auto& name : policy_names(slot)) {
      out += "| " + (first ? "`" + slot + "`" : std::string()) + " | " +
             (first ? "`\"" + default_of(slot) + "\"`" : std::string()) + " | `" + name + "` | " +
             policy_summary(slot, name) + " |\n";
      first = false;
    }
  }
  return out;
}

std::string policies_brief() {
  std::string out;
  for (const auto& slot : policy_slots()) {
    out += "  control." + slot + ":";
    for (const auto& name : policy_names(slot)) out += " " + name;
    out += " (default " + default_of(slot) + ")\n";
  }
  return out;
}

int cmd_policies(bool markdown) {
  if (markdown) {
    std::fputs(policies_markdown().c_str(), stdout);
    return 0;
  }
  for (const auto& slot : policy_slots()) {
    std::printf("%s (control.%s, default \"%s\")\n", slot.c_str(), slot.c_str(),
                default_of(slot).c_str());
    for (const auto& name : policy_names(slot))
      std::printf("  %-14s %s\n", name.c_str(), policy_summary(slot, name).c_str());
  }
  return 0;
}

}  // namespace strait
