# Findcmocka: the cmocka unit test library, for find_package(cmocka).
# cmocka's own CMake package where it has one (Debian's libcmocka-dev
# ships cmocka-config.cmake, which sets CMOCKA_LIBRARY and
# CMOCKA_INCLUDE_DIR but makes no target), else its pkg-config module,
# else the header and library in the usual places.  Sets cmocka_FOUND and
# makes the imported target cmocka::cmocka.  As for any package,
# -DCMAKE_DISABLE_FIND_PACKAGE_cmocka=ON hides it.
include(FindPackageHandleStandardArgs)
find_package(cmocka CONFIG QUIET)
if(NOT cmocka_FOUND OR NOT CMOCKA_LIBRARY OR NOT CMOCKA_INCLUDE_DIR)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(PC_CMOCKA QUIET cmocka)
  endif()
  find_path(CMOCKA_INCLUDE_DIR cmocka.h HINTS ${PC_CMOCKA_INCLUDE_DIRS})
  find_library(CMOCKA_LIBRARY cmocka HINTS ${PC_CMOCKA_LIBRARY_DIRS})
  if(PC_CMOCKA_VERSION)
    set(cmocka_VERSION ${PC_CMOCKA_VERSION})
  endif()
endif()
find_package_handle_standard_args(cmocka REQUIRED_VARS CMOCKA_LIBRARY CMOCKA_INCLUDE_DIR
                                  VERSION_VAR cmocka_VERSION)
mark_as_advanced(CMOCKA_INCLUDE_DIR CMOCKA_LIBRARY)
if(cmocka_FOUND AND NOT TARGET cmocka::cmocka)
  add_library(cmocka::cmocka UNKNOWN IMPORTED)
  set_target_properties(cmocka::cmocka PROPERTIES IMPORTED_LOCATION "${CMOCKA_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${CMOCKA_INCLUDE_DIR}")
endif()
