# Integration tests: the strait binary under mpirun, checked from outside with h5py/h5dump.
# Each case of cli_test.py is one CTest test; they run with /usr/bin/python3 (Debian's h5py).
set(STRAIT_PY /usr/bin/python3)
foreach(case bad_input validate report_and_force same_seed sigkill sigterm_resume sigterm_launcher emulated_load links)
  add_test(NAME cli_${case}
           COMMAND ${STRAIT_PY} ${CMAKE_CURRENT_LIST_DIR}/cli_test.py ${case}
                   --strait $<TARGET_FILE:strait> --source ${CMAKE_SOURCE_DIR})
  set_tests_properties(cli_${case} PROPERTIES TIMEOUT 300)
endforeach()

# Kernel shaping with tc (scripts/netns-run): needs root, iproute2 and htb, plus netem or
# NFQUEUE with strait-nfq-delay; exits 77 (skipped, with the reason) where it cannot run.
# RUN_SERIAL: it measures rates and round trips, which a busy machine would blur.
add_test(NAME netns_tc COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_netns.sh
         --build $<TARGET_FILE_DIR:strait> --source ${CMAKE_SOURCE_DIR})
set_tests_properties(netns_tc PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE)

# `strait forecast` (no MPI): the table against a Python recomputation, and its bad input.
foreach(case table bad_input)
  add_test(NAME cli_forecast_${case}
           COMMAND ${STRAIT_PY} ${CMAKE_CURRENT_LIST_DIR}/forecast_test.py ${case}
                   --strait $<TARGET_FILE:strait> --source ${CMAKE_SOURCE_DIR})
  set_tests_properties(cli_forecast_${case} PROPERTIES TIMEOUT 120)
endforeach()

# scripts/paths_table.py (make bench-paths' tables) on traces made by the test: whole-run and
# common-window figures known in advance.
add_test(NAME paths_table COMMAND ${STRAIT_PY} ${CMAKE_CURRENT_LIST_DIR}/paths_table_test.py)
set_tests_properties(paths_table PROPERTIES TIMEOUT 60)

# Issue 10's hostile cases, end to end (docs/reliability.md lists them with their tests). Cases
# that mount a small file system exit 77 (skipped) where mounting is not allowed. RUN_SERIAL:
# the watchdog and signal cases time what a job does and would be blurred by a busy machine.
foreach(case validate_is_truth corpus_exact messages report_fifo concurrent_force trace_replaced
             disk resume_appends tampered_checkpoint nonfinite signals blas_threads
             watchdog_sigstop watchdog_sigterm watchdog_rank0 cpu_no_cuda)
  add_test(NAME reliability_${case}
           COMMAND ${STRAIT_PY} ${CMAKE_CURRENT_LIST_DIR}/reliability_test.py ${case}
                   --strait $<TARGET_FILE:strait> --source ${CMAKE_SOURCE_DIR})
  set_tests_properties(reliability_${case} PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endforeach()

# slurm/*.sbatch on a one-machine Slurm that each case starts and stops (scripts/slurm-local,
# on ports no other holds): a job equal to mpirun's, a job over two nodes (network namespaces) a
# datacenter each, a time limit that ends in a checkpoint and a --resume, SIGTERM to the batch
# shell, a wrong --ntasks, a benchmark table. Exits 77 (skipped, with the reason) without root or
# the Slurm packages. About 2 minutes in all (docs/slurm.md).
foreach(case train nodes time_limit sigterm_shell bad_ntasks bench)
  add_test(NAME slurm_${case}
           COMMAND ${STRAIT_PY} ${CMAKE_CURRENT_LIST_DIR}/slurm_test.py ${case}
                   --strait $<TARGET_FILE:strait> --source ${CMAKE_SOURCE_DIR})
  set_tests_properties(slurm_${case} PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endforeach()
