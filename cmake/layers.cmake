# layers.cmake — strait_layer(<name> [DEPS <layer>...] [EXCLUDE <file>...]): the static library
# strait_<name> from src/<name>/*.cpp, linking the layers in DEPS. Its include tree
# (build/layers/<name>/) holds symbolic links to src/<name> and to the folders of every layer it
# may use — DEPS and, transitively, theirs — and nothing else, so that `#include "x/y.hpp"` of a
# layer x that is not below it fails to compile. The trees are made at configure time.
# Every header of the layer is also compiled on its own against that tree (a generated one-line
# .cpp per header), so a header that no .cpp of its layer includes is held to the same rule —
# and must include what it uses.
set(STRAIT_LAYER_ROOT ${CMAKE_BINARY_DIR}/layers)

function(strait_layer name)
  cmake_parse_arguments(L "" "" "DEPS;EXCLUDE" ${ARGN})
  set(allowed ${name})
  set(dep_targets)
  foreach(d IN LISTS L_DEPS)
    if(NOT TARGET strait_${d})
      message(FATAL_ERROR "strait_layer(${name}): layer ${d} must be declared before it")
    endif()
    get_property(below GLOBAL PROPERTY STRAIT_LAYER_${d})
    list(APPEND allowed ${below})
    list(APPEND dep_targets strait_${d})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY STRAIT_LAYER_${name} ${allowed})

  set(tree ${STRAIT_LAYER_ROOT}/${name})
  file(REMOVE_RECURSE ${tree})
  file(MAKE_DIRECTORY ${tree})
  foreach(a IN LISTS allowed)
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${a} ${tree}/${a} SYMBOLIC)
  endforeach()

  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${name}/*.cpp)
  foreach(x IN LISTS L_EXCLUDE)
    list(REMOVE_ITEM sources ${CMAKE_SOURCE_DIR}/src/${name}/${x})
  endforeach()
  file(GLOB headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}/src/${name}
       ${CMAKE_SOURCE_DIR}/src/${name}/*.hpp)
  set(header_units)
  if(STRAIT_SANITIZE OR STRAIT_TSAN)  # a checking tree: the normal tree compiles each header alone
    set(headers)
  endif()
  foreach(h IN LISTS headers)
    string(REPLACE "." "_" stem ${h})
    set(unit ${STRAIT_LAYER_ROOT}/${name}.headers/${stem}.cpp)
    file(CONFIGURE OUTPUT ${unit} CONTENT "#include \"${name}/${h}\"  // compiled alone: cmake/layers.cmake\n")
    list(APPEND header_units ${unit})
  endforeach()
  add_library(strait_${name} STATIC ${sources} ${header_units})
  target_include_directories(strait_${name} PUBLIC ${tree})
  target_link_libraries(strait_${name} PUBLIC ${dep_targets})
  target_compile_options(strait_${name} PRIVATE -Wall -Wextra)
endfunction()
