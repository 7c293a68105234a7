# What `cmake --install` puts where (GNUInstallDirs under CMAKE_INSTALL_PREFIX):
#   lib/libprintk.a, lib/libprintk.so.1.2.0 (+ .so.1, .so links)
#   include/printk/*.h
#   lib/pkgconfig/libprintk.pc
#   lib/cmake/printk/ (find_package(printk): printk::printk, printk::printk_static)
#   share/man/man3, man7: the library's pages of docs/man
#   share/doc/libprintk: LICENSE, CHANGELOG.md
#   bin/pkmsg, share/man/man1/pkmsg.1 (PK_INSTALL_TOOLS: at the top level)
#   bin/pkbench, share/man/man1/pkbench.1, lib/libprintk/pkbench-lttng-tp.so
#       (PK_INSTALL_BENCH=ON, with pkbench built)
# Each file is in an install component, which the Debian packages follow
# (cmake/package.cmake):
#   runtime  the shared library (libprintk1), pkmsg, the pages of sections
#            1 and 7, LICENSE and CHANGELOG.md
#   dev      headers, static library, the .so link, libprintk.pc, the CMake
#            package, the pages of section 3 (libprintk-dev)
#   bench    pkbench, its probe and its page (in no package)
include(CMakePackageConfigHelpers)

install(TARGETS printk printk_shared EXPORT printkTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/printk COMPONENT dev
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
foreach(sect 3 7)
  if(sect EQUAL 3)
    set(comp dev)
  else()
    set(comp runtime)
  endif()
  file(GLOB pages CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.${sect})
  install(FILES ${pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sect} COMPONENT ${comp})
endforeach()

if(PK_INSTALL_TOOLS)
  install(TARGETS pkmsg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/man/pkmsg.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT runtime)
endif()
if(PK_INSTALL_BENCH)
  if(NOT TARGET pkbench)
    message(FATAL_ERROR "PK_INSTALL_BENCH=ON needs pkbench built (PK_BENCH=ON)")
  endif()
  install(TARGETS pkbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bench)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/man/pkbench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT bench)
endif()

# pkg-config: `pkg-config --cflags --libs libprintk` (shared), add --static
# for the archive.
# Relocatable: paths are relative to the .pc file itself, so a prefix
# given at install time (cmake --install --prefix, DESTDIR) still works.
file(RELATIVE_PATH PK_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" PK_PC_UP "${PK_PC_UP}")
set(PK_PC_PREFIX "\${pcfiledir}/${PK_PC_UP}")
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(PK_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(PK_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
# librelp is loaded at run time (src/CMakeLists.txt): no Requires of it.
configure_file(${PROJECT_SOURCE_DIR}/cmake/libprintk.pc.in
               ${PROJECT_BINARY_DIR}/libprintk.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/libprintk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)

# CMake package: find_package(printk) gives printk::printk (shared) and
# printk::printk_static.
set(PK_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/printk)
install(EXPORT printkTargets NAMESPACE printk:: DESTINATION ${PK_CMAKEDIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/printkConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/printkConfig.cmake
                              INSTALL_DESTINATION ${PK_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/printkConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/printkConfig.cmake
        ${PROJECT_BINARY_DIR}/printkConfigVersion.cmake DESTINATION ${PK_CMAKEDIR} COMPONENT dev)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
