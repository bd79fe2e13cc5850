// uses_scenario.cpp — compiled by the layering tests (tests/CMakeLists.txt) against two layers'
// include trees: net's (scenario is below net: it compiles) and config's (scenario is above
// config: the include must fail). Shows that the layer trees, not convention, keep the layering.
#include "scenario/scenario.hpp"

int main() { return 0; }
