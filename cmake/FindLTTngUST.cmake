# FindLTTngUST: LTTng-UST 2.13 or later (pkbench's LTTng-UST row), for
# find_package(LTTngUST), through its pkg-config module lttng-ust.  Sets
# LTTngUST_FOUND, LTTngUST_VERSION, LTTngUST_INCLUDE_DIRS and the imported
# target LTTngUST::LTTngUST.  -DCMAKE_DISABLE_FIND_PACKAGE_LTTngUST=ON
# hides it.
include(FindPackageHandleStandardArgs)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_LTTNG_UST QUIET IMPORTED_TARGET lttng-ust>=2.13)
endif()
set(LTTngUST_VERSION ${PC_LTTNG_UST_VERSION})
set(LTTngUST_INCLUDE_DIRS ${PC_LTTNG_UST_INCLUDE_DIRS})
set(pk_lttng_found ${PC_LTTNG_UST_FOUND})
find_package_handle_standard_args(LTTngUST REQUIRED_VARS pk_lttng_found
                                  VERSION_VAR LTTngUST_VERSION)
if(LTTngUST_FOUND AND NOT TARGET LTTngUST::LTTngUST)
  add_library(LTTngUST::LTTngUST INTERFACE IMPORTED)
  target_link_libraries(LTTngUST::LTTngUST INTERFACE PkgConfig::PC_LTTNG_UST)
endif()
