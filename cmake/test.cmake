# Build everything and run the whole test suite, on Debian 12 with only cmake and g++ to start with:
#
#   cmake -P cmake/test.cmake
#
# Installs missing Debian packages when run as root (otherwise prints the apt-get line and stops;
# the tests also need python3-pandas and chromium),
# configures build/ (Release) with tests, examples and benchmarks, builds with 2 jobs, and runs
#   ctest --test-dir build --output-on-failure -j2
# Optional -D settings (before -P), see cmake/deps.cmake for the build ones:
#   -DBUILD_DIR=build-asan -DHYPERTUNE_SANITIZE=address,undefined   a sanitizer build in its own directory
#   -DSANITIZE_OPTIMIZE=-O0                 a sanitizer build that compiles faster (default -O1)
#   -DSANITIZE_GP_OPTIMIZE=-O1              ... with the Gaussian-process code at its own -O (.ci/run)
#   -DHYPERTUNE_BUILD_EXAMPLES=OFF -DHYPERTUNE_BUILD_BENCH=OFF       build the tests only
#   -DHYPERTUNE_WARNINGS_AS_ERRORS=ON
#   -DHYPERTUNE_TEST_MODE=header-only       tests and benchmarks without hypertune::compiled
#   -DBUILD_TARGET=hypertune_tests_tuner    build only this target instead of all
#   -DCTEST_LABELS=unit                     run only tests whose labels match this regex (ctest -L);
#                                           if none match, say so and succeed
#   -DCTEST_EXCLUDE_LABELS=package          skip tests whose labels match (ctest -LE)
#   -DCTEST_ARGS=...                        more ctest arguments (a ;-list)
cmake_minimum_required(VERSION 3.24)
include("${CMAKE_CURRENT_LIST_DIR}/deps.cmake")

hypertune_ensure_packages(${HYPERTUNE_TEST_DEBIAN_PACKAGES})
hypertune_configure()

set(_build "${CMAKE_COMMAND}" --build "${HYPERTUNE_BUILD_DIR}" --parallel ${JOBS})
if(BUILD_TARGET)
    list(APPEND _build --target ${BUILD_TARGET})
endif()
hypertune_run("building" ${_build})

set(_select "")
if(NOT "${CTEST_LABELS}" STREQUAL "")
    list(APPEND _select -L "${CTEST_LABELS}")
endif()
if(NOT "${CTEST_EXCLUDE_LABELS}" STREQUAL "")
    list(APPEND _select -LE "${CTEST_EXCLUDE_LABELS}")
endif()

if(_select)
    # A filtered run may legitimately select nothing yet (e.g. no `tuner` tests written so far).
    execute_process(
        COMMAND "${CMAKE_CTEST_COMMAND}" --test-dir "${HYPERTUNE_BUILD_DIR}" -N ${_select}
        OUTPUT_VARIABLE _listing RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "[hypertune] ctest -N failed (${_rc}):\n${_listing}")
    endif()
    string(REGEX MATCH "Total Tests: ([0-9]+)" _ "${_listing}")
    if("${CMAKE_MATCH_1}" STREQUAL "0")
        list(JOIN _select " " _printable)
        message(STATUS "[hypertune] no tests match ctest ${_printable}: nothing to run")
        return()
    endif()
endif()

hypertune_run("testing"
    "${CMAKE_CTEST_COMMAND}" --test-dir "${HYPERTUNE_BUILD_DIR}" --output-on-failure -j${JOBS}
    --no-tests=error ${_select} ${CTEST_ARGS})
