# The installed package: one shared library, libparasim.so.<major> with a
# SONAME (docs/DECISIONS.md "install"), built from the facade and the module
# archives linked privately, so yaml-cpp, Boost and nlohmann stay out of the
# interface and a consumer needs no find_dependency; the headers of
# include/parasim/ only; the CLI; a CMake package (find_package(parasim
# CONFIG), target parasim::parasim) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(parasim_shared SHARED ${PARASIM_FACADE_SRCS})
target_include_directories(parasim_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(parasim_shared PRIVATE parasim_planner parasim_simulator parasim_cost_model
                      parasim_topology parasim_core parasim_calibrate)
target_compile_features(parasim_shared PUBLIC cxx_std_20)
set_target_properties(parasim_shared PROPERTIES
  OUTPUT_NAME parasim EXPORT_NAME parasim
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
# Only PARASIM_API declarations (parasim/export.h) leave the library: every
# object is compiled with hidden visibility (top-level CMakeLists.txt).
target_link_options(parasim_shared PRIVATE "LINKER:--no-undefined")
add_library(parasim::parasim ALIAS parasim_shared)

install(TARGETS parasim_shared EXPORT parasimTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS parasim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/parasim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

set(PARASIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/parasim)
install(EXPORT parasimTargets NAMESPACE parasim:: DESTINATION ${PARASIM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/parasimConfig.cmake.in
  ${CMAKE_BINARY_DIR}/generated/parasimConfig.cmake INSTALL_DESTINATION ${PARASIM_CMAKE_DIR})
# 0.x: a minor release may change the interface.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/parasimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/parasimConfig.cmake
              ${CMAKE_BINARY_DIR}/generated/parasimConfigVersion.cmake
        DESTINATION ${PARASIM_CMAKE_DIR})

# The .pc file finds the prefix from its own place, so the tree can move.
file(RELATIVE_PATH PARASIM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" PARASIM_PC_TO_PREFIX "${PARASIM_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/parasim.pc.in ${CMAKE_BINARY_DIR}/generated/parasim.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/parasim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
