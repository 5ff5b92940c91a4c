# Writes OUTPUT, a source file naming the commit of SOURCE_DIR that this
# build is compiled from ("-dirty" when tracked files had changes, "unknown"
# outside a git checkout). Runs at every build, not only at configure, so
# that results name the commit of the binaries that produced them even when
# the checkout moved on since (or the build was carried to another machine).
# configure_file leaves OUTPUT untouched when its content is unchanged, so
# nothing is recompiled unless the commit moved.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P build_stamp.cmake
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
                OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE _rev_parse ERROR_QUIET)
if(NOT _rev_parse EQUAL 0 OR _commit STREQUAL "")
  set(HARNESS_BUILT_COMMIT "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE _changes RESULT_VARIABLE _status ERROR_QUIET)
  set(HARNESS_BUILT_COMMIT "${_commit}")
  if(NOT _status EQUAL 0 OR NOT _changes STREQUAL "")
    set(HARNESS_BUILT_COMMIT "${_commit}-dirty")
  endif()
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/build_stamp.cpp.in" "${OUTPUT}" @ONLY)
