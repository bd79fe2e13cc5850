// version.hpp — what code this is: the version from CMake and the git commit of the build
// (regenerated at every build by cmake/commit.cmake, so it never goes stale).
#pragma once

namespace strait {
const char* version();
const char* commit();
}  // namespace strait
