# `cmake --install build --prefix P`: the core library and its components
# (api/CMakeLists.txt says what each holds), the public headers, the hostir
# binary and a CMake package, so that a consumer writes
#   find_package(hostir CONFIG REQUIRED)                  # the core
#   find_package(hostir CONFIG REQUIRED COMPONENTS mpi)   # and <hostir/mpi.h>
#   target_link_libraries(app PRIVATE hostir::hostir)     # (hostir::mpi)
# The `cuda` component is a library the core loads when CUDA is asked for;
# asking for it only checks that it is installed.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HOSTIR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/hostir)

install(TARGETS hostir_shared EXPORT hostirTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS hostir_mpi_shared EXPORT hostirMpiTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(HOSTIR_CUDA)
  install(TARGETS hostir_cuda_plugin EXPORT hostirCudaTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# Only the API's headers; <hostir/mpi.h> is the mpi component's.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hostir
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# The binary runs on the installed libraries beside it.
set_target_properties(hostir PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
  INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS hostir RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

foreach(_set IN ITEMS hostirTargets hostirMpiTargets)
  install(EXPORT ${_set} NAMESPACE hostir:: FILE ${_set}.cmake DESTINATION ${HOSTIR_INSTALL_CMAKEDIR})
endforeach()
if(HOSTIR_CUDA)
  install(EXPORT hostirCudaTargets NAMESPACE hostir:: FILE hostirCudaTargets.cmake
          DESTINATION ${HOSTIR_INSTALL_CMAKEDIR})
endif()
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
