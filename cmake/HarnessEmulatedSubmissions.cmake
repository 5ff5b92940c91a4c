# CUDA submissions built for the warp emulator (tests/support/warp_emulation),
# so that the harness judges their code on a machine without a GPU. Each
# source is compiled by the host's compiler after cuda_to_host.py rewrites
# what only nvcc reads (launches, `extern __shared__`), against the
# emulator's stand-in CUDA headers, into a library the CPU worker loads: the
# C ABI is the same, and the "device" pointers it is handed are the shared
# buffers.
# Beside the library, its manifest is the submission's own, renamed
# emulated-<name>, with "device": "cpu" (and a baseline's role "submission").
#
# harness_build_emulated_submissions(index_file manifests...) builds them all
# (target emulated_submissions) and writes their index, for
# HARNESS_SUBMISSION_INDEX.

# Uses the manifest readers of HarnessSubmissions.cmake, included before it.
set(_HARNESS_CUDA_TO_HOST ${PROJECT_SOURCE_DIR}/tests/support/warp_emulation/cuda_to_host.py)

function(_harness_add_emulated_submission manifest index_var)
  get_filename_component(_dir ${manifest} DIRECTORY)
  file(READ ${manifest} _json)
  set(_error "")
  foreach(_key name challenge)
    string(JSON _${_key} ERROR_VARIABLE _key_error GET "${_json}" ${_key})
    if(_key_error)
      message(FATAL_ERROR "${manifest}: cannot read \"${_key}\": ${_key_error}")
    endif()
  endforeach()
  _harness_json_string_array("${_json}" sources "${_HARNESS_SAFE_PATH}" _sources _error)
  _harness_json_string_array("${_json}" include_dirs "${_HARNESS_SAFE_PATH}" _include_dirs _error)
  _harness_json_string_array("${_json}" defines "${_HARNESS_SAFE_DEFINE}" _defines _error)
  if(_error)
    message(FATAL_ERROR "${manifest}: ${_error}")
  endif()
  _harness_abs_paths(${_dir} _sources ${_sources})
  _harness_abs_paths(${_dir} _include_dirs ${_include_dirs})

  set(_out ${CMAKE_CURRENT_BINARY_DIR}/emulated_submissions/${_challenge}/${_name})
  string(MAKE_C_IDENTIFIER "emulated_${_challenge}_${_name}" _target)

  # Quoted includes are looked for beside the original source first.
  set(_rewritten "")
  set(_source_dirs "")
  set(_i 0)
  foreach(_source IN LISTS _sources)
    get_filename_component(_base ${_source} NAME_WE)
    get_filename_component(_source_dir ${_source} DIRECTORY)
    set(_copy ${_out}/src/${_i}_${_base}.cpp)
    add_custom_command(
      OUTPUT ${_copy}
      COMMAND Python3::Interpreter ${_HARNESS_CUDA_TO_HOST} ${_source} ${_copy}
      DEPENDS ${_source} ${_HARNESS_CUDA_TO_HOST}
      COMMENT "Rewriting ${_challenge}/${_name}'s ${_base} for the warp emulator"
      VERBATIM)
    list(APPEND _rewritten ${_copy})
    list(APPEND _source_dirs ${_source_dir})
    math(EXPR _i "${_i} + 1")
  endforeach()

  add_library(${_target} MODULE ${_rewritten})
  set_target_properties(${_target} PROPERTIES OUTPUT_NAME submission LIBRARY_OUTPUT_DIRECTORY ${_out})
  target_include_directories(${_target} PRIVATE ${_source_dirs} ${_include_dirs} ${PROJECT_SOURCE_DIR}/harness/include
                                                ${PROJECT_SOURCE_DIR}/challenges/${_challenge} ${PROJECT_SOURCE_DIR}/kernels)
  target_compile_definitions(${_target} PRIVATE ${_defines})
  # The emulator brings the project's warnings; a submission is held to
  # -Wall -Wextra alone. (A source's options come after its target's.)
  set_source_files_properties(${_rewritten} PROPERTIES COMPILE_OPTIONS "-Wno-conversion;-Wno-shadow;-Wno-pedantic")
  # A symbol the emulator lacks fails the build here, not the worker's load.
  target_link_options(${_target} PRIVATE -Wl,--no-undefined)
  target_link_libraries(${_target} PRIVATE harness_warp_emulation)
  add_dependencies(emulated_submissions ${_target})

  set(_emulated "${_json}")
  string(JSON _description GET "${_json}" description)
  string(REPLACE "\\" "\\\\" _description "${_description}")
  string(REPLACE "\"" "\\\"" _description "${_description}")
  string(JSON _emulated SET "${_emulated}" name "\"emulated-${_name}\"")
  string(JSON _emulated SET "${_emulated}" device "\"cpu\"")
  string(JSON _emulated SET "${_emulated}" description
         "\"${_description} (CUDA source built for the warp emulator)\"")
  string(JSON _emulated ERROR_VARIABLE _no_include_dirs REMOVE "${_emulated}" include_dirs)
  # The baseline a challenge names is its CPU one: another is refused.
  string(JSON _role ERROR_VARIABLE _no_role GET "${_json}" role)
  if(_role STREQUAL "baseline")
    string(JSON _emulated SET "${_emulated}" role "\"submission\"")
  endif()
  set(_source_list "")
  foreach(_source IN LISTS _sources)
    string(APPEND _source_list ",\"${_source}\"")
  endforeach()
  string(SUBSTRING "${_source_list}" 1 -1 _source_list)
  string(JSON _emulated SET "${_emulated}" sources "[${_source_list}]")
  file(WRITE ${_out}/submission.json "${_emulated}\n")
  file(GENERATE OUTPUT ${_out}/build.json
       CONTENT "{\"status\": \"ok\", \"reason\": \"\", \"library\": \"$<TARGET_FILE:${_target}>\", \"log\": \"\"}\n")

  set(_entry "{\"manifest\": \"${_out}/submission.json\", \"build_dir\": \"${_out}\", \"root\": \"${_dir}\"}")
  set(${index_var} "${${index_var}};${_entry}" PARENT_SCOPE)
endfunction()

function(harness_build_emulated_submissions index_file)
  add_custom_target(emulated_submissions ALL)
  set(_index "")
  foreach(_manifest IN LISTS ARGN)
    _harness_add_emulated_submission(${_manifest} _index)
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_manifest})
  endforeach()
  list(REMOVE_ITEM _index "")
  list(JOIN _index ",\n  " _body)
  file(WRITE ${index_file} "[\n  ${_body}\n]\n")
endfunction()
