# The compiler and linker flags a manifest may add ("flags", "cuda_flags",
# "link_flags"). Submissions are untrusted and their build runs outside the
# sandbox, so a flag that loads code into the compiler, runs another
# program, or reads or writes files of its choosing (gcc's -fplugin=,
# -wrapper, -B, -specs=, @file, -MF, -fdump-*, -Wl,/-Wa,/-Xlinker options;
# nvcc's -ccbin, --run, -odir, --keep) would run its code with the user's
# rights. Only flags that choose how code is generated are allowed:
# optimisation, target, language standard, warnings, debug information,
# macros, and libraries to link by name.

# Sets out_var to why `flag` is refused for a host compiler, or to "".
function(_harness_host_flag_refusal flag out_var)
  set(_why "")
  if(flag MATCHES "^-f(plugin|profile|auto-profile|dump|opt-info|save-optimization-record|self-test|lto|use-ld|use-linker-plugin|debug-prefix-map|file-prefix-map|macro-prefix-map|profile-prefix-map|sanitize|instrument|diagnostics-format|diagnostics-add-output|diagnostics-set-output|offload|module|compare-debug|deps)")
    set(_why "loads code or reads or writes files of its own choosing")
  elseif(flag MATCHES "^-W[lap]([,=]|$)")
    set(_why "passes options to the linker, assembler or preprocessor")
  elseif(flag MATCHES "^-O([0-3sgz]|fast)?$"
         OR flag MATCHES "^-(march|mtune|mcpu)=[A-Za-z0-9_.+-]+$"
         OR flag MATCHES "^-m(no-)?[a-z0-9][a-z0-9.-]*(=[A-Za-z0-9_.+-]+)?$"
         OR flag MATCHES "^-f(no-)?[A-Za-z0-9][A-Za-z0-9-]*(=[A-Za-z0-9_.+-]+)?$"
         OR flag MATCHES "^-W(no-)?[a-z0-9][a-z0-9=+-]*$"
         OR flag MATCHES "^-std=(c|c\\+\\+|gnu|gnu\\+\\+)[0-9a-z]+$"
         OR flag MATCHES "^-g(gdb|dwarf(-[0-9])?)?[0-3]?$"
         OR flag MATCHES "^-[DU][A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.,+:/=-]*)?$"
         OR flag MATCHES "^-(pthread|pedantic|pedantic-errors|w)$")
    set(_why "")
  else()
    set(_why "not a flag the build allows")
  endif()
  set(${out_var} "${_why}" PARENT_SCOPE)
endfunction()

function(_harness_cuda_flag_refusal flag out_var)
  set(_why "not a flag the build allows")
  if(flag MATCHES "^-Xcompiler=(.+)$")
    # Host compiler flags, each checked as one.
    string(REPLACE "," ";" _host_flags "${CMAKE_MATCH_1}")
    set(_why "")
    foreach(_host IN LISTS _host_flags)
      _harness_host_flag_refusal("${_host}" _host_why)
      if(_host_why)
        set(_why "-Xcompiler: ${_host}: ${_host_why}")
        break()
      endif()
    endforeach()
  elseif(flag MATCHES "^-O[0-3]$"
         OR flag MATCHES "^--?(use_fast_math|lineinfo|generate-line-info|expt-relaxed-constexpr|expt-extended-lambda|extended-lambda|resource-usage|res-usage)$"
         OR flag MATCHES "^-(G|g)$"
         OR flag MATCHES "^--?(arch|gpu-architecture)=((sm|compute)_[0-9]+[af]?|native|all|all-major)$"
         OR flag MATCHES "^-(gencode|-generate-code)=arch=compute_[0-9]+[af]?,code=(sm|compute)_[0-9]+[af]?$"
         OR flag MATCHES "^--?maxrregcount=[0-9]+$"
         OR flag MATCHES "^--(ftz|prec-div|prec-sqrt|fmad)=(true|false)$"
         OR flag MATCHES "^-Xptxas=(-v|--verbose|-O[0-3]|--warn-on-spills|--warn-on-local-memory-usage|--allow-expensive-optimizations=(true|false)|-dlcm=c[ag])$"
         OR flag MATCHES "^-std=c\\+\\+[0-9]+$"
         OR flag MATCHES "^--?(threads|diag-suppress)=[0-9,]+$"
         OR flag MATCHES "^-Wno-deprecated-gpu-targets$"
         OR flag MATCHES "^-[DU][A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.,+:/=-]*)?$")
    set(_why "")
  endif()
  set(${out_var} "${_why}" PARENT_SCOPE)
endfunction()

function(_harness_link_flag_refusal flag out_var)
  set(_why "not a flag the build allows")
  if(flag MATCHES "^-l[A-Za-z0-9_+.-]+$"
     OR flag MATCHES "^-(pthread|fopenmp)$"
     OR flag MATCHES "^-Wl,(--as-needed|--no-as-needed|--gc-sections|-O[0-3])$")
    set(_why "")
  endif()
  set(${out_var} "${_why}" PARENT_SCOPE)
endfunction()

# Sets out_var to a message naming the first refused flag of the three
# lists, or to "" when every flag is allowed.
function(_harness_refused_flags flags cuda_flags link_flags out_var)
  set(_kind_of_flags host)
  set(_kind_of_cuda_flags cuda)
  set(_kind_of_link_flags link)
  foreach(_key flags cuda_flags link_flags)
    set(_kind ${_kind_of_${_key}})
    foreach(_flag IN LISTS ${_key})
      cmake_language(CALL _harness_${_kind}_flag_refusal "${_flag}" _why)
      if(_why)
        set(${out_var} "submission.json: \"${_key}\": '${_flag}': ${_why} (see README: compiler flags)" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
  set(${out_var} "" PARENT_SCOPE)
endfunction()
