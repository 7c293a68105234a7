# Debian packages, made by CPack from the install components
# (cmake/install.cmake): `make deb`, or in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (so that GNUInstallDirs picks Debian's
# multiarch library directory), `cpack -G DEB`.
#   libprintk1     (runtime) the shared library, pkmsg, pkmsg(1),
#                  libprintk(7); Depends from dpkg-shlibdeps; a shlibs file
#                  (libprintk 1 libprintk1 (>= VERSION)) and ldconfig
#   libprintk-dev  (dev) headers, libprintk.a, the libprintk.so link,
#                  libprintk.pc, the CMake package, the pages of section 3;
#                  Depends on libprintk1 of the same version
# The package of the shared library is named after its soname
# (libprintk.so.1), as Debian names library packages.
set(CPACK_PACKAGE_NAME libprintk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kernel-style printk() logging for user space")
set(CPACK_PACKAGE_DESCRIPTION "libprintk gives programs the Linux kernel's printk(): \
a lockless record store (optionally a persistent file that survives a crash), \
consoles, flush modes, a crash path and the pkmsg reader.")
set(CPACK_PACKAGE_CONTACT "libprintk developers <libprintk@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

get_target_property(pk_soversion printk_shared SOVERSION)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libprintk${pk_soversion})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# The shlibs file (and the ldconfig trigger) for the package that holds a
# shared library: CPack takes this setting for all components alone.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "${CPACK_PACKAGE_DESCRIPTION_SUMMARY} (shared library and pkmsg)")
if(PK_HAVE_RELP)
  # Loaded with dlopen() by the first RELP console, never linked.
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS librelp0)
endif()

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libprintk-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${CPACK_DEBIAN_RUNTIME_PACKAGE_NAME} (= ${CPACK_DEBIAN_PACKAGE_VERSION})")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "${CPACK_PACKAGE_DESCRIPTION_SUMMARY} (development files)")

include(CPack)
