# Configure, build and run one consumer project of tests/cmake/ (cmake -P; see CMakeLists.txt there).
#   CONSUMER_SOURCE CONSUMER_BINARY  the consumer project and a scratch build directory (wiped first)
#   CONSUMER_ARGS                    one extra -D for the consumer's configure step
#   EXPECTED_HYPERTUNE_DIR           optional, forwarded: where find_package must find hypertune
#   GENERATOR MAKE_PROGRAM CXX_COMPILER BUILD_TYPE   the parent build's toolchain
#   EXPECT EXPECT_FILE               regex the program's output must match; file it must leave non-empty
cmake_minimum_required(VERSION 3.24)

foreach(_var IN ITEMS CONSUMER_SOURCE CONSUMER_BINARY GENERATOR CXX_COMPILER BUILD_TYPE)
    if("${${_var}}" STREQUAL "")
        message(FATAL_ERROR "run_consumer.cmake: -D${_var}=... is required")
    endif()
endforeach()

function(run_step what)
    message(STATUS "${what}: ${ARGN}")
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "${what} failed (${_rc})")
    endif()
endfunction()

file(REMOVE_RECURSE "${CONSUMER_BINARY}")

set(_configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE}" -B "${CONSUMER_BINARY}" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
    # Only what the test passes may be found: no user or system package registry.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
    list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CONSUMER_ARGS)
    list(APPEND _configure "${CONSUMER_ARGS}")
endif()
if(CONSUMER_TARGET)
    list(APPEND _configure "-DHYPERTUNE_TARGET=${CONSUMER_TARGET}")
endif()
if(DEFINED EXPECTED_HYPERTUNE_DIR)
    list(APPEND _configure "-DEXPECTED_HYPERTUNE_DIR=${EXPECTED_HYPERTUNE_DIR}")
endif()
run_step("configure" ${_configure})
run_step("build" "${CMAKE_COMMAND}" --build "${CONSUMER_BINARY}" --config "${BUILD_TYPE}" --parallel 2)

set(_exe "${CONSUMER_BINARY}/consumer")
if(NOT EXISTS "${_exe}")
    set(_exe "${CONSUMER_BINARY}/${BUILD_TYPE}/consumer")  # multi-config generators
endif()
message(STATUS "run: ${_exe}")
execute_process(COMMAND "${_exe}"
    WORKING_DIRECTORY "${CONSUMER_BINARY}"
    RESULT_VARIABLE _rc
    OUTPUT_VARIABLE _out ERROR_VARIABLE _out
    ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "the consumer program failed (${_rc})")
endif()
if(NOT "${EXPECT}" STREQUAL "" AND NOT _out MATCHES "${EXPECT}")
    message(FATAL_ERROR "the consumer's output does not match '${EXPECT}'")
endif()
if(NOT "${EXPECT_FILE}" STREQUAL "")
    file(SIZE "${CONSUMER_BINARY}/${EXPECT_FILE}" _size)  # fails if the file is missing
    if(_size EQUAL 0)
        message(FATAL_ERROR "the consumer left ${EXPECT_FILE} empty")
    endif()
endif()
message(STATUS "consumer OK")
