# Discovers challenges: every folder challenges/<name>/ that holds a
# challenge.json. Its host/*.cpp (cases, checks, driver) join the harness, its
# worker/*.cpp (the ABI adapter) join the worker, and reference/<name>/*.cpp
# (float64 ground truth) join the harness. Registration happens in those
# sources; nothing here lists challenges by hand.

set(HARNESS_CHALLENGE_NAMES "")
set(HARNESS_CHALLENGE_HOST_SOURCES "")
set(HARNESS_CHALLENGE_WORKER_SOURCES "")
set(HARNESS_REFERENCE_SOURCES "")

file(GLOB _challenge_configs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/challenges/*/challenge.json)
foreach(_config IN LISTS _challenge_configs)
  get_filename_component(_dir ${_config} DIRECTORY)
  get_filename_component(_name ${_dir} NAME)
  list(APPEND HARNESS_CHALLENGE_NAMES ${_name})

  file(GLOB _host CONFIGURE_DEPENDS ${_dir}/host/*.cpp)
  file(GLOB _worker CONFIGURE_DEPENDS ${_dir}/worker/*.cpp)
  file(GLOB _reference CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/reference/${_name}/*.cpp)
  list(APPEND HARNESS_CHALLENGE_HOST_SOURCES ${_host})
  list(APPEND HARNESS_CHALLENGE_WORKER_SOURCES ${_worker})
  list(APPEND HARNESS_REFERENCE_SOURCES ${_reference})

  # challenge.json is compiled into the harness so that a moved binary keeps
  # its weights and tolerances.
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_config})
  file(READ ${_config} HARNESS_CHALLENGE_JSON)
  set(HARNESS_CHALLENGE_NAME ${_name})
  set(_generated ${PROJECT_BINARY_DIR}/generated/challenge_config_${_name}.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/challenge_config.cpp.in ${_generated} @ONLY)
  list(APPEND HARNESS_CHALLENGE_HOST_SOURCES ${_generated})
endforeach()
message(STATUS "harness: challenges ${HARNESS_CHALLENGE_NAMES}")
