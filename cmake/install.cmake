# ---- install and package (docs/install.md) ----
# The installed wlrun finds what it needs relative to itself: the trace library in
# ../lib/wlrun/ (lua/wlrun/trace/run.lua, traced.library); the Lua library and the help are inside
# the binary. Scenarios, examples and docs go to share/wlrun/; the man page is made from
# docs/cli.md (the text of --help) by the wlrun just built, so that it never drifts.
set(WLRUN_MAN ${CMAKE_BINARY_DIR}/man/wlrun.1)
add_custom_command(OUTPUT ${WLRUN_MAN}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
  COMMAND $<TARGET_FILE:wlrun> ${CMAKE_SOURCE_DIR}/cmake/manpage.lua ${CMAKE_SOURCE_DIR}/docs/cli.md
          ${WLRUN_MAN} ${PROJECT_VERSION}
  DEPENDS wlrun ${CMAKE_SOURCE_DIR}/docs/cli.md ${CMAKE_SOURCE_DIR}/cmake/manpage.lua
  COMMENT "Writing the man page from docs/cli.md" VERBATIM)
add_custom_target(wlrun_man ALL DEPENDS ${WLRUN_MAN})

install(TARGETS wlrun RUNTIME DESTINATION bin)
install(TARGETS wlrun_trace LIBRARY DESTINATION lib/wlrun)
# the header of the ABI of a user's library (docs/libraries.md)
install(FILES include/wlrun/work.h DESTINATION include/wlrun)
install(DIRECTORY scenarios examples DESTINATION share/wlrun)
install(DIRECTORY docs DESTINATION share/wlrun)
install(FILES ${WLRUN_MAN} DESTINATION share/man/man1)
install(FILES completion/wlrun.bash DESTINATION share/bash-completion/completions RENAME wlrun)
# Debian's zsh searches vendor-completions (the .deb's prefix is /usr)
install(FILES completion/_wlrun DESTINATION share/zsh/vendor-completions)

# `cpack -G DEB` in the build directory: wlrun_<version>_<arch>.deb. Its dependencies are
# Debian's packages of the libraries the binaries link (dpkg-shlibdeps, from dpkg-dev). NVRTC is
# the CUDA toolkit's, which no Debian package provides: the toolkit (and, to run on a GPU, the
# driver) must be installed already; wlrun finds NVRTC through its RUNPATH (the build's
# toolkit directory) or the loader's path (docs/install.md).
set(CPACK_PACKAGE_NAME wlrun)
set(CPACK_PACKAGE_VENDOR "wlrun")
set(CPACK_PACKAGE_CONTACT "wlrun maintainers <wlrun@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Lua-scriptable benchmark harness for CUDA workloads")
set(CPACK_PACKAGE_DESCRIPTION "wlrun runs benchmark recipes written in Lua: kernels compiled at run time
with NVRTC, timed with CUDA events and graphs, checked, summarised and compared across runs and
commits. Needs the CUDA toolkit's NVRTC (not a Debian package) and, to measure, a CUDA GPU and driver.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# what wlrun runs rather than links: gnuplot for wlrun plot, git for the history's commits
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gnuplot-nox, git")
include(CPack)
