# Submissions are built by cmake/build_submission.cmake, one custom command
# each, so that a submission that fails to compile records the failure in its
# build.json and never fails the project's build. Every folder under
# submissions/ (any depth) holding a submission.json is one, plus the folders
# named in HARNESS_EXTRA_SUBMISSIONS. The harness finds them through
# ${PROJECT_BINARY_DIR}/submission_index.json.

set(_HARNESS_SUBMISSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/build_submission.cmake)

# Reads an optional JSON array of strings `key` from `json` into out_var.
function(_harness_json_string_array json key out_var)
  set(_values "")
  string(JSON _type ERROR_VARIABLE _err TYPE "${json}" ${key})
  if(NOT _err AND _type STREQUAL "ARRAY")
    string(JSON _count LENGTH "${json}" ${key})
    if(_count GREATER 0)
      math(EXPR _last "${_count} - 1")
      foreach(_i RANGE ${_last})
        string(JSON _value GET "${json}" ${key} ${_i})
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
  _harness_json_string_array("${_json}" sources _sources)
  _harness_json_string_array("${_json}" include_dirs _include_dirs)
  _harness_json_string_array("${_json}" defines _defines)
  _harness_json_string_array("${_json}" flags _flags)
  _harness_json_string_array("${_json}" cuda_flags _cuda_flags)
  _harness_json_string_array("${_json}" link_flags _link_flags)
  _harness_abs_paths(${_dir} _sources ${_sources})
  _harness_abs_paths(${_dir} _include_dirs ${_include_dirs})

  # Rebuild when anything the submission can include changes: its folder,
  # the folders of its sources, its include folders and the ABI headers.
  set(_watch_dirs ${_dir} ${_include_dirs})
  foreach(_s IN LISTS _sources)
    get_filename_component(_sd ${_s} DIRECTORY)
    list(APPEND _watch_dirs ${_sd})
  endforeach()
  list(REMOVE_DUPLICATES _watch_dirs)
  set(_depends ${manifest} ${_HARNESS_SUBMISSION_SCRIPT})
  foreach(_wd IN LISTS _watch_dirs)
    file(GLOB _files ${_wd}/*.h ${_wd}/*.hpp ${_wd}/*.cuh ${_wd}/*.inc ${_wd}/*.c ${_wd}/*.cc ${_wd}/*.cpp ${_wd}/*.cu)
    list(APPEND _depends ${_files})
  endforeach()
  file(GLOB _abi_headers ${PROJECT_SOURCE_DIR}/harness/include/*.h ${PROJECT_SOURCE_DIR}/challenges/*/*.h)
  list(APPEND _depends ${_abi_headers})
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})

  set(_cuda_lib_dir "")
  if(HARNESS_HAVE_CUDA)
    set(_cuda_lib_dir ${CUDAToolkit_LIBRARY_DIR})
  endif()
  set(_plan ${_out}/plan.cmake)
  file(MAKE_DIRECTORY ${_out})
  # Bracket arguments keep quotes and backslashes of the values intact.
  file(WRITE ${_plan}
    "set(MANIFEST [==[${manifest}]==])\n"
    "set(MANIFEST_ERROR [==[${_manifest_error}]==])\n"
    "set(NAME [==[${_name}]==])\n"
    "set(CHALLENGE [==[${_challenge}]==])\n"
    "set(DEVICE [==[${_device}]==])\n"
    "set(KIND [==[${_kind}]==])\n"
    "set(SOURCES [==[${_sources}]==])\n"
    "set(INCLUDE_DIRS [==[${_include_dirs}]==])\n"
    "set(DEFINES [==[${_defines}]==])\n"
    "set(FLAGS [==[${_flags}]==])\n"
    "set(CUDA_FLAGS [==[${_cuda_flags}]==])\n"
    "set(LINK_FLAGS [==[${_link_flags}]==])\n"
    "set(OUT_DIR [==[${_out}]==])\n"
    "set(COMMON_INCLUDES [==[${PROJECT_SOURCE_DIR}/harness/include;${PROJECT_SOURCE_DIR}/challenges/${_challenge};${PROJECT_SOURCE_DIR}/kernels]==])\n"
    "set(C_COMPILER [==[${CMAKE_C_COMPILER}]==])\n"
    "set(CXX_COMPILER [==[${CMAKE_CXX_COMPILER}]==])\n"
    "set(CUDA_COMPILER [==[${CMAKE_CUDA_COMPILER}]==])\n"
    "set(CUDA_ARCHITECTURES [==[${CMAKE_CUDA_ARCHITECTURES}]==])\n"
    "set(CUDA_LIBRARY_DIR [==[${_cuda_lib_dir}]==])\n"
    "set(CUDA_INCLUDE_DIRS [==[${CUDAToolkit_INCLUDE_DIRS}]==])\n")

  add_custom_command(
    OUTPUT ${_out}/build.json
    COMMAND ${CMAKE_COMMAND} -DPLAN=${_plan} -P ${_HARNESS_SUBMISSION_SCRIPT}
    DEPENDS ${_depends}
    COMMENT "Building submission ${_challenge}/${_name} (${_device})"
    VERBATIM)
  add_custom_target(${_target} ALL DEPENDS ${_out}/build.json)

  foreach(_v manifest _out)
    string(REPLACE "\\" "\\\\" _json_${_v} "${${_v}}")
    string(REPLACE "\"" "\\\"" _json_${_v} "${_json_${_v}}")
  endforeach()
  set(_entry "{\"manifest\": \"${_json_manifest}\", \"build_dir\": \"${_json__out}\"}")
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
