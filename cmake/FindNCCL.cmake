# FindNCCL: NVIDIA's collective communications library.
#
# Looks under NCCL_ROOT (variable or environment), then beside the CUDA
# toolkit (CUDAToolkit_ROOT, CUDAToolkit_LIBRARY_DIR, /usr/local/cuda), then
# in the system directories (/usr). Defines
#
#   NCCL_FOUND, NCCL_INCLUDE_DIR, NCCL_LIBRARY, NCCL_VERSION
#   NCCL::NCCL    imported target (the shared library and its headers)

set(_nccl_hints)
foreach(_root IN ITEMS "${NCCL_ROOT}" "$ENV{NCCL_ROOT}" "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}")
  if(_root)
    list(APPEND _nccl_hints "${_root}")
  endif()
endforeach()
if(CUDAToolkit_LIBRARY_DIR)
  # <root>/lib64 or <root>/targets/<arch>/lib: the toolkit root is one or three levels up.
  get_filename_component(_nccl_up1 "${CUDAToolkit_LIBRARY_DIR}" DIRECTORY)
  list(APPEND _nccl_hints "${_nccl_up1}")
endif()
list(APPEND _nccl_hints /usr/local/cuda /usr)

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl
  HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu lib/aarch64-linux-gnu)

# The version from the header's NCCL_MAJOR/MINOR/PATCH defines.
if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines
       REGEX "^#define[ \t]+NCCL_(MAJOR|MINOR|PATCH)[ \t]+[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${_part}[ \t]+([0-9]+)" _match "${_nccl_version_lines}")
    set(NCCL_VERSION_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  if(NOT NCCL_VERSION_MAJOR STREQUAL "")
    set(NCCL_VERSION "${NCCL_VERSION_MAJOR}.${NCCL_VERSION_MINOR}.${NCCL_VERSION_PATCH}")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::NCCL)
  add_library(NCCL::NCCL UNKNOWN IMPORTED)
  set_target_properties(NCCL::NCCL PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()

mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
unset(_nccl_hints)
unset(_nccl_up1)
unset(_nccl_version_lines)
unset(_match)
