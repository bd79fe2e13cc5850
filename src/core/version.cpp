// version.cpp — the one translation unit that sees the generated commit header, so a new
// commit recompiles only this file.
#include "core/version.hpp"

#include "strait_commit.hpp"

namespace strait {
const char* version() { return STRAIT_VERSION; }
const char* commit() { return STRAIT_GIT_COMMIT; }
}  // namespace strait
