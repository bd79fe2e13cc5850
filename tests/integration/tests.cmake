# Integration tests: the strait binary under mpirun, checked from outside with h5py/h5dump.
# Each case of cli_test.py is one CTest test; they run with /usr/bin/python3 (Debian's h5py).
set(STRAIT_PY /usr/bin/python3)
foreach(case bad_input validate report_and_force same_seed sigkill sigterm_resume sigterm_launcher links)
  add_test(NAME cli_${case}
           COMMAND ${STRAIT_PY} ${CMAKE_CURRENT_LIST_DIR}/cli_test.py ${case}
                   --strait $<TARGET_FILE:strait> --source ${CMAKE_SOURCE_DIR})
  set_tests_properties(cli_${case} PROPERTIES TIMEOUT 300)
endforeach()

