# Submissions are built by cmake/build_submission.cmake, one custom command
# each, so that a submission that fails to compile records the failure in its
# build.json and never fails the project's build. Every folder under
# submissions/ (any depth) holding a submission.json is one, plus the folders
# named in HARNESS_EXTRA_SUBMISSIONS. The harness finds them through
# ${PROJECT_BINARY_DIR}/submission_index.json.

set(_HARNESS_SUBMISSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/build_submission.cmake)

# What each manifest value that reaches a compiler's command line may hold.
# nvcc runs its steps through /bin/sh without quoting, so "$(...)" in a
# define once ran at build time; a ";" (or "\;") split one checked flag
# into several unchecked ones; quotes, spaces and brackets have no honest
# use there either.
set(_HARNESS_SAFE_PATH "^[A-Za-z0-9_./+@-]+$")
set(_HARNESS_SAFE_DEFINE "^[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.,+:/=-]*)?$")
set(_HARNESS_SAFE_FLAG "^[A-Za-z0-9_.,+:/=@-]+$")
set(_HARNESS_SAFE_NAME "^[A-Za-z0-9_.-]+$")

# Sets error_var to why `value` (of manifest field `key`) is refused by
# `pattern`, or leaves it alone.
function(_harness_check_value key value pattern error_var)
  if(NOT value MATCHES "${pattern}")
    set(${error_var} "submission.json: \"${key}\": '${value}' holds characters the build does not allow there (letters, digits and _ . , + : / = @ - only)" PARENT_SCOPE)
  endif()
endfunction()

# Reads an optional JSON array of strings `key` from `json` into out_var,
# each value checked against `pattern` (a refusal goes to error_var).
function(_harness_json_string_array json key pattern out_var error_var)
  set(_values "")
  unset(_refused)
  if(${error_var})  # the first refusal is the one reported
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  string(JSON _type ERROR_VARIABLE _err TYPE "${json}" ${key})
  if(NOT _err AND _type STREQUAL "ARRAY")
    string(JSON _count LENGTH "${json}" ${key})
    if(_count GREATER 0)
      math(EXPR _last "${_count} - 1")
      foreach(_i RANGE ${_last})
        string(JSON _value GET "${json}" ${key} ${_i})
        _harness_check_value(${key} "${_value}" "${pattern}" _refused)
        if(DEFINED _refused)
          set(${error_var} "${_refused}" PARENT_SCOPE)
          set(${out_var} "" PARENT_SCOPE)
          return()
        endif()
        list(APPEND _values "${_value}")
      endforeach()
    endif()
  endif()
  set(${out_var} "${_values}" PARENT_SCOPE)
endfunction()

function(_harness_abs_paths base out_var)
  set(_result "")
  foreach(_p IN LISTS ARGN)
    get_filename_component(_abs "${_p}" ABSOLUTE BASE_DIR "${base}")
    list(APPEND _result "${_abs}")
  endforeach()
  set(${out_var} "${_result}" PARENT_SCOPE)
endfunction()

# Appends `set(KEY <value>)` to text_var, the value in a bracket argument
# whose closing "]=...=]" it does not hold: values come from a manifest, and
# a fixed bracket let a define holding "]==])" end the argument and run its
# own CMake code when the build included the plan.
function(_harness_plan_set text_var key value)
  set(_eq "=")
  # The value's own tail could complete a closing bracket too: "a]==".
  while("${value}]" MATCHES "]${_eq}]")
    string(APPEND _eq "=")
  endwhile()
  set(${text_var} "${${text_var}}set(${key} [${_eq}[${value}]${_eq}])\n" PARENT_SCOPE)
endfunction()

function(_harness_add_submission manifest root index_var)
  get_filename_component(_dir ${manifest} DIRECTORY)
  file(RELATIVE_PATH _rel ${root} ${_dir})
  if(_rel STREQUAL "")
    get_filename_component(_rel ${_dir} NAME)
  endif()
  get_filename_component(_root_name ${root} NAME)
  set(_out ${PROJECT_BINARY_DIR}/submissions/${_root_name}/${_rel})
  string(MAKE_C_IDENTIFIER "submission_${_root_name}_${_rel}" _target)

  file(READ ${manifest} _json)
  set(_manifest_error "")
  foreach(_key name challenge device)
    string(JSON _v ERROR_VARIABLE _err GET "${_json}" ${_key})
    if(_err)
      set(_manifest_error "submission.json: cannot read \"${_key}\": ${_err}")
      set(_v "")
    endif()
    set(_${_key} "${_v}")
  endforeach()
  string(JSON _kind ERROR_VARIABLE _kind_error GET "${_json}" kind)
  if(_kind_error)
    set(_kind "library")
  endif()
  string(JSON _role ERROR_VARIABLE _role_error GET "${_json}" role)
  if(_role_error)
    set(_role "submission")
  endif()
  foreach(_key name challenge device kind)
    if(NOT _manifest_error)
      _harness_check_value(${_key} "${_${_key}}" "${_HARNESS_SAFE_NAME}" _manifest_error)
    endif()
  endforeach()
  _harness_json_string_array("${_json}" sources "${_HARNESS_SAFE_PATH}" _sources _manifest_error)
  _harness_json_string_array("${_json}" include_dirs "${_HARNESS_SAFE_PATH}" _include_dirs _manifest_error)
  _harness_json_string_array("${_json}" defines "${_HARNESS_SAFE_DEFINE}" _defines _manifest_error)
  _harness_json_string_array("${_json}" flags "${_HARNESS_SAFE_FLAG}" _flags _manifest_error)
  _harness_json_string_array("${_json}" cuda_flags "${_HARNESS_SAFE_FLAG}" _cuda_flags _manifest_error)
  _harness_json_string_array("${_json}" link_flags "${_HARNESS_SAFE_FLAG}" _link_flags _manifest_error)
  if(_manifest_error)
    # Nothing of a refused manifest reaches a command line.
    foreach(_v name challenge device kind sources include_dirs defines flags cuda_flags link_flags)
      string(MAKE_C_IDENTIFIER "${_${_v}}" _${_v})
    endforeach()
  endif()
  _harness_abs_paths(${_dir} _sources ${_sources})
  _harness_abs_paths(${_dir} _include_dirs ${_include_dirs})

  # Rebuild when anything the submission can include changes: its folder,
  # the folders of its sources, its include folders and the ABI headers.
  # CONFIGURE_DEPENDS: a file moved out of a watched folder would otherwise
  # stay a dependency, and the build stop at "No rule to make target".
  set(_watch_dirs ${_dir} ${_include_dirs})
  foreach(_s IN LISTS _sources)
    get_filename_component(_sd ${_s} DIRECTORY)
    list(APPEND _watch_dirs ${_sd})
  endforeach()
  list(REMOVE_DUPLICATES _watch_dirs)
  set(_depends ${manifest} ${_HARNESS_SUBMISSION_SCRIPT})
  foreach(_wd IN LISTS _watch_dirs)
    file(GLOB _files CONFIGURE_DEPENDS ${_wd}/*.h ${_wd}/*.hpp ${_wd}/*.cuh ${_wd}/*.inc ${_wd}/*.c ${_wd}/*.cc ${_wd}/*.cpp
         ${_wd}/*.cu)
    list(APPEND _depends ${_files})
  endforeach()
  file(GLOB _abi_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/harness/include/*.h ${PROJECT_SOURCE_DIR}/challenges/*/*.h)
  list(APPEND _depends ${_abi_headers})
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})

  set(_cuda_lib_dir "")
  if(HARNESS_HAVE_CUDA)
    set(_cuda_lib_dir ${CUDAToolkit_LIBRARY_DIR})
  endif()
  set(_plan ${_out}/plan.cmake)
  file(MAKE_DIRECTORY ${_out})
  set(_plan_text "")
  _harness_plan_set(_plan_text MANIFEST "${manifest}")
  _harness_plan_set(_plan_text MANIFEST_ERROR "${_manifest_error}")
  _harness_plan_set(_plan_text NAME "${_name}")
  _harness_plan_set(_plan_text CHALLENGE "${_challenge}")
  _harness_plan_set(_plan_text DEVICE "${_device}")
  _harness_plan_set(_plan_text KIND "${_kind}")
  _harness_plan_set(_plan_text SOURCES "${_sources}")
  _harness_plan_set(_plan_text INCLUDE_DIRS "${_include_dirs}")
  _harness_plan_set(_plan_text DEFINES "${_defines}")
  _harness_plan_set(_plan_text FLAGS "${_flags}")
  _harness_plan_set(_plan_text CUDA_FLAGS "${_cuda_flags}")
  _harness_plan_set(_plan_text LINK_FLAGS "${_link_flags}")
  _harness_plan_set(_plan_text OUT_DIR "${_out}")
  _harness_plan_set(_plan_text COMMON_INCLUDES "${PROJECT_SOURCE_DIR}/harness/include;${PROJECT_SOURCE_DIR}/challenges/${_challenge};${PROJECT_SOURCE_DIR}/kernels")
  _harness_plan_set(_plan_text C_COMPILER "${CMAKE_C_COMPILER}")
  _harness_plan_set(_plan_text CXX_COMPILER "${CMAKE_CXX_COMPILER}")
  _harness_plan_set(_plan_text CUDA_COMPILER "${CMAKE_CUDA_COMPILER}")
  _harness_plan_set(_plan_text CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  _harness_plan_set(_plan_text CUDA_LIBRARY_DIR "${_cuda_lib_dir}")
  _harness_plan_set(_plan_text CUDA_INCLUDE_DIRS "${CUDAToolkit_INCLUDE_DIRS}")
  file(WRITE ${_plan} "${_plan_text}")

  add_custom_command(
    OUTPUT ${_out}/build.json
    COMMAND ${CMAKE_COMMAND} -DPLAN=${_plan} -P ${_HARNESS_SUBMISSION_SCRIPT}
    DEPENDS ${_depends}
    COMMENT "Building submission ${_challenge}/${_name} (${_device})"
    VERBATIM)
  add_custom_target(${_target} ALL DEPENDS ${_out}/build.json)
  # What `harness run` judges without --with-mutants (is_unranked_role in
  # harness/results/results_json.cpp): the main job builds these and no more.
  if(NOT _role MATCHES "^(mutant|exploit|control|float32-control)$")
    set_property(GLOBAL APPEND PROPERTY HARNESS_JUDGED_SUBMISSION_TARGETS ${_target})
  endif()

  foreach(_v manifest _out root)
    string(REPLACE "\\" "\\\\" _json_${_v} "${${_v}}")
    string(REPLACE "\"" "\\\"" _json_${_v} "${_json_${_v}}")
  endforeach()
  set(_entry "{\"manifest\": \"${_json_manifest}\", \"build_dir\": \"${_json__out}\", \"root\": \"${_json_root}\"}")
  set(${index_var} "${${index_var}};${_entry}" PARENT_SCOPE)
endfunction()

# Builds every submission found under `roots` and writes their index.
function(harness_build_submission_set index_file)
  set(_index "")
  foreach(_root IN LISTS ARGN)
    file(GLOB_RECURSE _manifests CONFIGURE_DEPENDS ${_root}/submission.json)
    list(SORT _manifests)
    foreach(_m IN LISTS _manifests)
      _harness_add_submission(${_m} ${_root} _index)
    endforeach()
  endforeach()
  list(REMOVE_ITEM _index "")
  list(JOIN _index ",\n  " _body)
  file(WRITE ${index_file} "[\n  ${_body}\n]\n")
endfunction()

# The project's submissions: submissions/ and HARNESS_EXTRA_SUBMISSIONS.
function(harness_build_submissions)
  set(_roots ${PROJECT_SOURCE_DIR}/submissions)
  foreach(_extra IN LISTS HARNESS_EXTRA_SUBMISSIONS)
    get_filename_component(_abs ${_extra} ABSOLUTE)
    if(NOT IS_DIRECTORY ${_abs})
      message(FATAL_ERROR "HARNESS_EXTRA_SUBMISSIONS: '${_extra}' is not a folder")
    endif()
    list(APPEND _roots ${_abs})
  endforeach()
  harness_build_submission_set(${PROJECT_BINARY_DIR}/submission_index.json ${_roots})
endfunction()
