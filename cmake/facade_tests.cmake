# Tests of the facade as a user sees it (included from the top level when
# tests are built).

# The usage example in include/parasim/parasim.h, compiled and run as written.
set(PARASIM_HEADER_EXAMPLE_CC ${CMAKE_BINARY_DIR}/generated/header_example.cc)
add_custom_command(
  OUTPUT ${PARASIM_HEADER_EXAMPLE_CC}
  COMMAND ${CMAKE_COMMAND} -DHEADER=${PROJECT_SOURCE_DIR}/include/parasim/parasim.h -DOUT=${PARASIM_HEADER_EXAMPLE_CC}
          -P ${PROJECT_SOURCE_DIR}/cmake/extract_header_example.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/include/parasim/parasim.h ${PROJECT_SOURCE_DIR}/cmake/extract_header_example.cmake
  COMMENT "Extracting the usage example of parasim/parasim.h")
add_executable(header_example ${PARASIM_HEADER_EXAMPLE_CC})
# Built against the shared library and the public headers only, as installed.
target_link_libraries(header_example PRIVATE parasim::parasim)
add_test(NAME header_example COMMAND header_example)

# Install to a temporary prefix, then build and run examples/scheduler (a
# separate CMake project) and a pkg-config build against it. Not under the
# sanitizers: the example would need their runtime flags too.
if(NOT PARASIM_SANITIZE)
  add_test(NAME install_scheduler
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/install-test.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(install_scheduler PROPERTIES LABELS install RUN_SERIAL TRUE)
endif()
