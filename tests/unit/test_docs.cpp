// test_docs.cpp — the documentation that is generated from the code still agrees with it:
// docs/config.md's table of controller policies is exactly `strait policies --markdown`
// (the registry tables), and every slot and registered name appears in --help's footer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "control/policy.hpp"

namespace fs = std::filesystem;

namespace {
fs::path source_dir() {
  if (const char* s = std::getenv("STRAIT_SOURCE_DIR")) return s;
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}
}  // namespace

TEST(Docs, ConfigPolicyTableIsTheRegistry) {
  std::ifstream in(source_dir() / "docs" / "config.md");
  ASSERT_TRUE(in) << "docs/config.md not found under " << source_dir();
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string open = "tests/unit/test_docs.cpp fails when this table and the registry differ -->\n";
  const std::string close = "<!-- end of policies -->";
  const auto a = doc.find(open), b = doc.find(close);
  ASSERT_NE(a, std::string::npos) << "the generated-table marker is missing from docs/config.md";
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(doc.substr(a + open.size(), b - a - open.size()), strait::policies_markdown())
      << "regenerate the table with: build/strait policies --markdown";
}

TEST(Docs, HelpFooterNamesEveryPolicy) {
  const std::string brief = strait::policies_brief();
  for (const auto& slot : strait::policy_slots()) {
    EXPECT_NE(brief.find("control." + slot + ":"), std::string::npos) << slot;
    for (const auto& name : strait::policy_names(slot))
      EXPECT_NE(brief.find(" " + name), std::string::npos) << slot << " " << name;
  }
}
