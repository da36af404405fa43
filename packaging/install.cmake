# Install rules for the user-facing parts beside libamxblas.so (whose own rule is in
# shim/CMakeLists.txt): the launcher and the report tool in bin/, a pkg-config file, and the
# README with the pages of docs/. Included from the top-level CMakeLists.txt after GNUInstallDirs.
#
#   <prefix>/bin/amxblas-run             the launcher, with the library's folder written in
#   <prefix>/bin/amxblas-report
#   <prefix>/bin/amxblas-replay          (its rule is in scripts/replay/CMakeLists.txt: a built program)
#   <prefix>/<libdir>/pkgconfig/amxblas.pc
#   <prefix>/share/doc/amxblas/README.md, LICENSE, docs/*.md, and the files these link to

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
# --explain's and --calibrate's helpers are installed in <prefix>/<libexecdir>/amxblas
# (shim/CMakeLists.txt, scripts/calibrate/CMakeLists.txt).
string(REPLACE "\ninstalled_libexecdir=libexec\n" "\ninstalled_libexecdir=${CMAKE_INSTALL_LIBEXECDIR}\n"
       amxblas_run_installed "${amxblas_run_installed}")
# The installed launcher has no source tree to read the variant table from: its accepted
# --fp64-products values are written in (0 and the FP64 rows of kernels/common/variants.def).
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../kernels/common/variants.def amxblas_fp64_rows
     REGEX "^AMXBLAS_VARIANT\\([^,]*, *\"[^\"]*\", *fp64,")
set(amxblas_fp64_choices "0")
foreach(row IN LISTS amxblas_fp64_rows)
  string(REGEX REPLACE "^AMXBLAS_VARIANT\\([^,]*, *\"[^\"]*\", *fp64, *[0-9]+, *([0-9]+),.*" "\\1"
         products "${row}")
  string(APPEND amxblas_fp64_choices " ${products}")
endforeach()
if(NOT amxblas_run_installed MATCHES "\nfp64_products_choices=\n" OR amxblas_fp64_choices STREQUAL "0")
  message(FATAL_ERROR "packaging/install.cmake: no 'fp64_products_choices=' line in scripts/amxblas-run "
                      "or no FP64 row in kernels/common/variants.def")
endif()
string(REPLACE "\nfp64_products_choices=\n" "\nfp64_products_choices='${amxblas_fp64_choices}'\n"
       amxblas_run_installed "${amxblas_run_installed}")
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../kernels/common/backends.def amxblas_backend_rows
     REGEX "^AMXBLAS_BACKEND\\(")
set(amxblas_backend_choices "auto")
foreach(row IN LISTS amxblas_backend_rows)
  string(REGEX REPLACE "^AMXBLAS_BACKEND\\(([a-z0-9_]+),.*" "\\1" backend "${row}")
  string(APPEND amxblas_backend_choices " ${backend}")
endforeach()
if(NOT amxblas_run_installed MATCHES "\nbackend_choices=\n" OR amxblas_backend_choices STREQUAL "auto")
  message(FATAL_ERROR "packaging/install.cmake: no 'backend_choices=' line in scripts/amxblas-run "
                      "or no row in kernels/common/backends.def")
endif()
string(REPLACE "\nbackend_choices=\n" "\nbackend_choices='${amxblas_backend_choices}'\n"
       amxblas_run_installed "${amxblas_run_installed}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_LIST_DIR}/../kernels/common/variants.def
             ${CMAKE_CURRENT_LIST_DIR}/../kernels/common/backends.def)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBEXECDIR}")
  string(REPLACE "\"$prefix/$installed_libexecdir/amxblas/$name\"" "\"$installed_libexecdir/amxblas/$name\""
         amxblas_run_installed "${amxblas_run_installed}")
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

# pkg-config: `pkg-config --variable=preload amxblas` is the library to preload,
# `--variable=launcher` the launcher. The file is written at install time, not at configure
# time: `cmake --install build --prefix P` changes the prefix after configuring, and a file
# written before named a library that was never installed there. libdir and bindir are
# ${prefix}-relative unless CMAKE_INSTALL_LIBDIR/BINDIR are absolute.
foreach(dir LIBDIR BINDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(amxblas_pc_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(amxblas_pc_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
install(CODE "
  set(AMXBLAS_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(AMXBLAS_PC_LIBDIR [[${amxblas_pc_LIBDIR}]])
  set(AMXBLAS_PC_BINDIR [[${amxblas_pc_BINDIR}]])
  set(PROJECT_VERSION [[${PROJECT_VERSION}]])
  configure_file([[${amxblas_packaging_dir}/amxblas.pc.in]] [[${CMAKE_BINARY_DIR}/packaging/amxblas.pc]] @ONLY)
")
install(FILES ${CMAKE_BINARY_DIR}/packaging/amxblas.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

foreach(doc README.md LICENSE)
  if(EXISTS ${amxblas_packaging_dir}/../${doc})
    install(FILES ${amxblas_packaging_dir}/../${doc} DESTINATION ${CMAKE_INSTALL_DOCDIR})
  endif()
endforeach()
if(EXISTS ${amxblas_packaging_dir}/../docs)
  install(DIRECTORY ${amxblas_packaging_dir}/../docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
          FILES_MATCHING PATTERN "*.md" PATTERN "bench" EXCLUDE)
endif()

# What the pages link to besides each other (docs/bench/'s figures and data, the READMEs of the
# AMX harness and of the captured calls): installed at the same place relative to the pages, so
# that every link of the installed docs resolves as in the source tree (programs_install checks
# them with tests/docs/check_links.py). Read from the pages' relative links, [text](path), at
# configure time, so a link added or a file moved is followed.
get_filename_component(amxblas_source_root ${amxblas_packaging_dir}/.. ABSOLUTE)
file(GLOB amxblas_doc_pages RELATIVE ${amxblas_source_root} ${amxblas_source_root}/README.md
     ${amxblas_source_root}/docs/*.md)
set(amxblas_linked_dirs)
set(amxblas_linked_files)
foreach(page IN LISTS amxblas_doc_pages)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${amxblas_source_root}/${page})
  file(READ ${amxblas_source_root}/${page} page_text)
  # Brackets out first: CMake does not split a list at a ';' inside [ ].
  string(REPLACE "[" "{" page_text "${page_text}")
  string(REPLACE "]" "}" page_text "${page_text}")
  string(REGEX MATCHALL "}\\([^)# ]+" page_links "${page_text}")
  get_filename_component(page_dir ${amxblas_source_root}/${page} DIRECTORY)
  foreach(link IN LISTS page_links)
    string(SUBSTRING "${link}" 2 -1 link)
    if(link MATCHES "^[a-z]+:")  # http:, https:, mailto:
      continue()
    endif()
    get_filename_component(target ${page_dir}/${link} ABSOLUTE)
    file(RELATIVE_PATH relative ${amxblas_source_root} ${target})
    if(relative MATCHES "^\\.\\." OR relative MATCHES "^(README\\.md|LICENSE|docs/[^/]*\\.md)$"
       OR NOT EXISTS ${target})
      continue()  # outside the tree, installed already, or broken (docs.links says so)
    endif()
    if(IS_DIRECTORY ${target})
      list(APPEND amxblas_linked_dirs ${relative})
    else()
      list(APPEND amxblas_linked_files ${relative})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES amxblas_linked_dirs)
list(REMOVE_DUPLICATES amxblas_linked_files)
foreach(dir IN LISTS amxblas_linked_dirs)
  string(REGEX REPLACE "/$" "" dir "${dir}")
  install(DIRECTORY ${amxblas_source_root}/${dir}/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/${dir})
endforeach()
foreach(file IN LISTS amxblas_linked_files)
  get_filename_component(file_dir ${file} DIRECTORY)
  set(inside_linked_dir FALSE)
  foreach(dir IN LISTS amxblas_linked_dirs)
    string(REGEX REPLACE "/$" "" dir "${dir}")
    if(file_dir STREQUAL dir OR file_dir MATCHES "^${dir}/")
      set(inside_linked_dir TRUE)
    endif()
  endforeach()
  if(NOT inside_linked_dir)
    install(FILES ${amxblas_source_root}/${file} DESTINATION ${CMAKE_INSTALL_DOCDIR}/${file_dir})
  endif()
endforeach()
