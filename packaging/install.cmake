# Install rules for the user-facing parts beside libamxblas.so (whose own rule is in
# shim/CMakeLists.txt): the launcher and the report tool in bin/, a pkg-config file, and the
# README. Included from the top-level CMakeLists.txt after GNUInstallDirs.
#
#   <prefix>/bin/amxblas-run             the launcher, with the library's folder written in
#   <prefix>/bin/amxblas-report
#   <prefix>/<libdir>/pkgconfig/amxblas.pc
#   <prefix>/share/doc/amxblas/README.md

include(GNUInstallDirs)
set(amxblas_packaging_dir ${CMAKE_CURRENT_LIST_DIR})
set(amxblas_scripts_dir ${CMAKE_CURRENT_LIST_DIR}/../scripts)

# The installed launcher looks for the library in <prefix>/<libdir> first, where <libdir> is
# this build's CMAKE_INSTALL_LIBDIR (relative; an absolute one is used as it is).
file(READ ${amxblas_scripts_dir}/amxblas-run amxblas_run_text)
string(REPLACE "\ninstalled_libdir=lib\n" "\ninstalled_libdir=${CMAKE_INSTALL_LIBDIR}\n"
       amxblas_run_installed "${amxblas_run_text}")
if(amxblas_run_installed STREQUAL amxblas_run_text AND NOT CMAKE_INSTALL_LIBDIR STREQUAL "lib")
  message(FATAL_ERROR "packaging/install.cmake: no 'installed_libdir=lib' line in scripts/amxblas-run")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  string(REPLACE "\"$prefix/$installed_libdir\"" "\"$installed_libdir\""
         amxblas_run_installed "${amxblas_run_installed}")
endif()
# Written through a copy so the output's time stamp changes only with its content.
file(WRITE ${CMAKE_BINARY_DIR}/packaging/amxblas-run.new "${amxblas_run_installed}")
configure_file(${CMAKE_BINARY_DIR}/packaging/amxblas-run.new
               ${CMAKE_BINARY_DIR}/packaging/amxblas-run COPYONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${amxblas_scripts_dir}/amxblas-run)

install(PROGRAMS ${CMAKE_BINARY_DIR}/packaging/amxblas-run ${amxblas_scripts_dir}/amxblas-report
        DESTINATION ${CMAKE_INSTALL_BINDIR})

# pkg-config: `pkg-config --variable=libdir amxblas` finds the library to preload,
# `--variable=launcher` the launcher.
set(AMXBLAS_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(AMXBLAS_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
set(AMXBLAS_PC_BINDIR "${CMAKE_INSTALL_FULL_BINDIR}")
configure_file(${amxblas_packaging_dir}/amxblas.pc.in ${CMAKE_BINARY_DIR}/packaging/amxblas.pc
               @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/amxblas.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(EXISTS ${amxblas_packaging_dir}/../README.md)
  install(FILES ${amxblas_packaging_dir}/../README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()
