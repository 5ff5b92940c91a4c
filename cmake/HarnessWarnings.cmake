# Warnings and sanitizers applied to the project's own targets (not to
# submissions, which are built by cmake/build_submission.cmake with their own
# manifest flags).
add_library(harness_warnings INTERFACE)
target_compile_options(harness_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

if(HARNESS_SANITIZE)
  target_compile_options(harness_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(harness_warnings INTERFACE -fsanitize=address,undefined)
endif()
