# ---- install and package (docs/install.md) ----
# The installed wlrun finds what it needs relative to itself: the trace library in
# ../lib/wlrun/ (lua/wlrun/trace/run.lua, traced.library); the Lua library and the help are inside
# the binary. Scenarios, examples and docs go to share/wlrun/. The man page is made by the wlrun
# just built from docs/cli.md (the text of --help) and from what each subcommand's --help prints
# (cmake/manpage.lua), so that it never drifts; it is installed gzip'd, as Debian's policy wants.
find_program(WLRUN_GZIP gzip REQUIRED)
set(WLRUN_MAN ${CMAKE_BINARY_DIR}/man/wlrun.1)
add_custom_command(OUTPUT ${WLRUN_MAN} ${WLRUN_MAN}.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
  COMMAND $<TARGET_FILE:wlrun> ${CMAKE_SOURCE_DIR}/cmake/manpage.lua ${CMAKE_SOURCE_DIR}/docs/cli.md
          ${WLRUN_MAN} ${PROJECT_VERSION} $<TARGET_FILE:wlrun>
  COMMAND ${WLRUN_GZIP} -n -9 -f -k ${WLRUN_MAN}
  DEPENDS wlrun ${CMAKE_SOURCE_DIR}/docs/cli.md ${CMAKE_SOURCE_DIR}/cmake/manpage.lua
  COMMENT "Writing the man page from docs/cli.md and each subcommand's --help" VERBATIM)

# Debian's files of a package: the copyright (machine-readable, cmake/debian/copyright), the
# changelog of a native package (changelog.gz) and lintian's overrides, each with its reason
set(WLRUN_PACKAGE_CONTACT "wlrun maintainers <maintainers@users.noreply.a-seed-402d7757.example>"
  CACHE STRING "the .deb's Maintainer (and the changelog's signer): Name <address>")
string(TIMESTAMP WLRUN_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC) # SOURCE_DATE_EPOCH, where set
set(WLRUN_CHANGELOG ${CMAKE_BINARY_DIR}/debian/changelog)
configure_file(cmake/debian/changelog.in ${WLRUN_CHANGELOG} @ONLY)
add_custom_command(OUTPUT ${WLRUN_CHANGELOG}.gz
  COMMAND ${WLRUN_GZIP} -n -9 -f -k ${WLRUN_CHANGELOG}
  DEPENDS ${WLRUN_CHANGELOG} VERBATIM)
add_custom_target(wlrun_man ALL DEPENDS ${WLRUN_MAN}.gz ${WLRUN_CHANGELOG}.gz)

install(TARGETS wlrun RUNTIME DESTINATION bin)
install(TARGETS wlrun_trace LIBRARY DESTINATION lib/wlrun)
# the header of the ABI of a user's library (docs/libraries.md)
install(FILES include/wlrun/work.h DESTINATION include/wlrun)
install(DIRECTORY scenarios examples DESTINATION share/wlrun)
install(DIRECTORY docs DESTINATION share/wlrun)
install(FILES ${WLRUN_MAN}.gz DESTINATION share/man/man1)
install(FILES cmake/debian/copyright ${WLRUN_CHANGELOG}.gz DESTINATION share/doc/wlrun)
install(FILES cmake/debian/lintian-overrides DESTINATION share/lintian/overrides RENAME wlrun)
install(FILES completion/wlrun.bash DESTINATION share/bash-completion/completions RENAME wlrun)
# Debian's zsh searches vendor-completions (the .deb's prefix is /usr)
install(FILES completion/_wlrun DESTINATION share/zsh/vendor-completions)

# `cpack -G DEB` in the build directory: wlrun_<version>_<arch>.deb, lintian-clean
# (tests/e2e/install_spec.lua). Its dependencies are Debian's packages of the libraries the
# binaries link (dpkg-shlibdeps, from dpkg-dev). NVRTC, cuBLAS and CUPTI are the CUDA toolkit's,
# which no Debian package provides: the toolkit (and, to run on a GPU, the driver) must be
# installed already. The binaries carry no RUNPATH (the build tree's have the toolkit's
# directory): wlrun opens those libraries with dlopen from the loader's path, $CUDA_HOME/lib64
# and /usr/local/cuda's lib64 (src/toolkit/toolkit_lib.c; docs/install.md).
set(CPACK_PACKAGE_NAME wlrun)
set(CPACK_PACKAGE_VENDOR "wlrun")
set(CPACK_PACKAGE_CONTACT "${WLRUN_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Lua-scriptable benchmark harness for CUDA workloads")
# (lines of at most 80 characters: lintian's extended-description-line-too-long)
set(CPACK_PACKAGE_DESCRIPTION "wlrun runs benchmark recipes written in Lua: kernels compiled at run
time with NVRTC, timed with CUDA events and graphs, checked, summarised and
compared across runs and commits. Needs the CUDA toolkit's NVRTC (not a
Debian package) and, to measure, a CUDA GPU and driver.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON) # no debugging symbols in the package (lintian: unstripped-binary-or-object)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# what wlrun runs rather than links: gnuplot for wlrun plot, git for the history's commits
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gnuplot-nox, git")
include(CPack)
