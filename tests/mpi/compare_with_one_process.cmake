# parasim-mpi prints byte for byte what parasim prints: runs one command with
# `parasim` and with `mpirun -n 2` and `-n 3` (an uneven split) `parasim-mpi`,
# and compares stdout. -D: PARASIM, PARASIM_MPI, MPIEXEC, OUT_DIR, NAME, ARGS
# (a ;-list). As root on a CI machine, with more ranks than cores.
file(MAKE_DIRECTORY ${OUT_DIR})
set(one ${OUT_DIR}/${NAME}-1.out)
execute_process(COMMAND ${PARASIM} ${ARGS} OUTPUT_FILE ${one} RESULT_VARIABLE rc_one)
if(NOT rc_one EQUAL 0)
  message(FATAL_ERROR "parasim ${ARGS} exited ${rc_one}")
endif()
file(SIZE ${one} one_size)
if(one_size EQUAL 0)
  message(FATAL_ERROR "parasim ${ARGS} printed nothing")
endif()
foreach(ranks 2 3)
  set(many ${OUT_DIR}/${NAME}-${ranks}.out)
  execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -n ${ranks} ${PARASIM_MPI} ${ARGS}
                  OUTPUT_FILE ${many} ERROR_VARIABLE err RESULT_VARIABLE rc_many)
  if(NOT rc_many EQUAL 0)
    message(FATAL_ERROR "mpirun -n ${ranks} parasim-mpi ${ARGS} exited ${rc_many}:\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${one} ${many} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "mpirun -n ${ranks} parasim-mpi ${ARGS}: output differs from one process (${one} vs ${many})")
  endif()
  message(STATUS "-n ${ranks}: identical to one process")
endforeach()
