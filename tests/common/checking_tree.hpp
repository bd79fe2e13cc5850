// checking_tree.hpp — whether a test runs in a checking tree (ASan + UBSan or TSan), where the
// code runs 2-10x slower: tests/CMakeLists.txt sets STRAIT_CHECKING_TREE=1 there. What a test
// measures of time, and what the code decides from measured times or rates, is then not what it
// is on a plain build; a test whose data path matters under the checkers runs its data and
// byte-count checks there and skips only its timing bounds. Tests about timing alone are filtered
// out of a checking tree altogether (STRAIT_TIMING_FILTER).
#pragma once
#include <cstdlib>

namespace strait::testing {

inline bool timing_checked() { return std::getenv("STRAIT_CHECKING_TREE") == nullptr; }

}  // namespace strait::testing
