# `cmake --install build --prefix P`: libhostir.so (hostir_shared, see
# api/CMakeLists.txt), the public headers, the hostir binary and a CMake
# package, so that a consumer writes
#   find_package(hostir CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE hostir::hostir)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HOSTIR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/hostir)

install(TARGETS hostir_shared
  EXPORT hostirTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Only the API's headers; <hostir/mpi.h> goes too, for callers that use MPI.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hostir
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# The binary links the internal libraries statically (not libhostir.so), so
# only the CUDA toolkit's and NCCL's directories need to be in its RPATH.
set_target_properties(hostir PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS hostir RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT hostirTargets
  NAMESPACE hostir::
  FILE hostirTargets.cmake
  DESTINATION ${HOSTIR_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/hostirConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hostirConfig.cmake
  INSTALL_DESTINATION ${HOSTIR_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API, so only the same minor matches.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/hostirConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/hostirConfig.cmake
  ${PROJECT_BINARY_DIR}/hostirConfigVersion.cmake
  DESTINATION ${HOSTIR_INSTALL_CMAKEDIR})
