# What a manifest hands the build of its submission (run as
# `cmake -P`): the flags it may add, and values carried into the build's
# plan intact, never run as CMake code.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/HarnessSubmissions.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/submission_flags.cmake)

function(expect_refused flags cuda_flags link_flags)
  _harness_refused_flags("${flags}" "${cuda_flags}" "${link_flags}" _why)
  if(NOT _why)
    message(FATAL_ERROR "allowed, but must be refused: flags='${flags}' cuda_flags='${cuda_flags}' link_flags='${link_flags}'")
  endif()
endfunction()

function(expect_allowed flags cuda_flags link_flags)
  _harness_refused_flags("${flags}" "${cuda_flags}" "${link_flags}" _why)
  if(_why)
    message(FATAL_ERROR "refused, but must be allowed: ${_why}")
  endif()
endfunction()

# Flags that run code of the submission's choosing in the compiler, or
# another program, or write or read files where it chooses.
foreach(_flag -fplugin=/tmp/p.so -fplugin-arg-p-x=1 -wrapper -B/tmp/evil -specs=/tmp/s @/tmp/args -MF -MD
              -fdump-tree-all -fprofile-generate=out -fauto-profile=x -fopt-info=log -save-temps -o -Wl,--plugin=x
              -Wa,-a=listing -Wp,-MD,x -Wl -Xlinker -fuse-ld=x -fdiagnostics-format=sarif-file "-O2 -fplugin=x"
              --param=x -fsanitize-blacklist=x -foffload-options=x -I/etc -include -x -fmodule-mapper=x -fmodules-ts
              -fcompare-debug=-Bx -fdeps-file=x -fdiagnostics-add-output=sarif)
  expect_refused("${_flag}" "" "")
endforeach()
foreach(_flag -ccbin=/tmp/cc --compiler-bindir=/tmp --run -odir=/tmp --keep -Xcompiler=-fplugin=/tmp/p.so
              -Xcompiler=-O2,-wrapper "-Xptxas=-o,harness" -Xlinker=--plugin --dependency-output=x)
  expect_refused("" "${_flag}" "")
endforeach()
foreach(_flag -Wl,--plugin=x -Wl,-Map=out -L/tmp -o -l:x.so -Xlinker -Wl,--wrap=malloc)
  expect_refused("" "" "${_flag}")
endforeach()

# Flags that choose how code is generated.
expect_allowed("-fPIC;-fno-lto;-fno-sanitize=all;-fdiagnostics-color=always;-ggdb3;-O2;-march=native;-mtune=znver3;-mavx2;-mno-fma;-ffast-math;-funroll-loops;-fno-tree-vectorize;-fopenmp;-Wall;-Wno-unused;-Werror=return-type;-std=c++20;-g;-DBLOCK=256;-UNDEBUG;-pthread"
               "-O3;--use_fast_math;-lineinfo;-arch=sm_90a;-gencode=arch=compute_90a,code=sm_90a;--expt-relaxed-constexpr;-maxrregcount=64;-Xptxas=-v;-Xcompiler=-O3,-march=native;--ftz=true;--threads=0;--diag-suppress=177;-Wno-deprecated-gpu-targets"
               "-lcublas;-lm;-fopenmp;-pthread;-Wl,--as-needed")

# Values that would reach a compiler's command line with characters a shell
# (nvcc runs its steps through one) or CMake's list splitting would act on.
function(expect_value key value pattern want_refused)
  unset(_why)
  _harness_check_value(${key} "${value}" "${pattern}" _why)
  if(want_refused AND NOT DEFINED _why)
    message(FATAL_ERROR "${key} value '${value}' allowed, but must be refused")
  elseif(NOT want_refused AND DEFINED _why)
    message(FATAL_ERROR "${_why}: must be allowed")
  endif()
endfunction()
expect_value(defines "X=$(touch pwned)" "${_HARNESS_SAFE_DEFINE}" TRUE)
expect_value(defines "A\\;-fplugin=x" "${_HARNESS_SAFE_DEFINE}" TRUE)
expect_value(defines "Y=`id`" "${_HARNESS_SAFE_DEFINE}" TRUE)
expect_value(flags "-DX=\\;-wrapper" "${_HARNESS_SAFE_FLAG}" TRUE)
expect_value(include_dirs "a b" "${_HARNESS_SAFE_PATH}" TRUE)
expect_value(sources "k$(id).cu" "${_HARNESS_SAFE_PATH}" TRUE)
expect_value(include_dirs "x\"y" "${_HARNESS_SAFE_PATH}" TRUE)
expect_value(defines "BLOCK=256" "${_HARNESS_SAFE_DEFINE}" FALSE)
expect_value(defines "NDEBUG" "${_HARNESS_SAFE_DEFINE}" FALSE)
expect_value(include_dirs "../../common" "${_HARNESS_SAFE_PATH}" FALSE)
expect_value(sources "vendor/kernel.cu" "${_HARNESS_SAFE_PATH}" FALSE)

# A value that closes a fixed bracket argument and goes on as CMake code
# (a define in a manifest once did, at build time): carried intact.
string(RANDOM LENGTH 12 _stamp)
set(_marker "${CMAKE_CURRENT_BINARY_DIR}/injected-${_stamp}")
foreach(_value "X]==])\nfile(WRITE ${_marker} ran)\nset(Y [==[y" "tail]==" "a]=]b]==]c]===]" "plain;list")
  set(_text "")
  _harness_plan_set(_text VALUE "${_value}")
  set(_plan "${CMAKE_CURRENT_BINARY_DIR}/plan-${_stamp}.cmake")
  file(WRITE ${_plan} "${_text}")
  unset(VALUE)
  include(${_plan})
  file(REMOVE ${_plan})
  if(EXISTS ${_marker})
    file(REMOVE ${_marker})
    message(FATAL_ERROR "a value in the plan ran as CMake code: ${_value}")
  endif()
  if(NOT VALUE STREQUAL _value)
    message(FATAL_ERROR "the plan changed a value: '${_value}' became '${VALUE}'")
  endif()
endforeach()
message(STATUS "submission build inputs: every check held")
