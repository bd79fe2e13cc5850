# MPI tests: each binary runs under scripts/mpirun-local with the rank count it needs.
strait_mpi_test(test_equivalence 6 ${CMAKE_CURRENT_LIST_DIR}/test_equivalence.cpp)
strait_mpi_test(test_transport 3 ${CMAKE_CURRENT_LIST_DIR}/test_transport.cpp)
strait_mpi_test(test_control_link 4 ${CMAKE_CURRENT_LIST_DIR}/test_control_link.cpp)
