# Shared by cmake/demo.cmake and cmake/test.cmake (script mode, cmake -P). Not used by the build.
#
#   hypertune_ensure_packages()   install missing Debian packages (as root) or say how to (otherwise)
#   hypertune_configure()         configure BUILD_DIR with the options below; sets HYPERTUNE_BUILD_DIR
#   hypertune_run(<what> <command>...)   run a command, stop with FATAL_ERROR if it fails
#
# Variables the caller may pass with -D (all optional):
#   BUILD_DIR                     build directory, relative to the source tree (default: build)
#   CMAKE_BUILD_TYPE              default Release; with HYPERTUNE_SANITIZE, RelWithDebInfo set to -O1 -g1
#   HYPERTUNE_SANITIZE            "", address,undefined, thread, ... (see CMakeLists.txt)
#   SANITIZE_OPTIMIZE             the -O of a sanitizer build (default -O1)
#   SANITIZE_GP_OPTIMIZE          in a sanitizer build, another -O for the Gaussian-process code
#                                 (src/gaussian_process.cpp and the bayesian test area),
#                                 whose tests do most of the sanitized work (default: none)
#   HYPERTUNE_WARNINGS_AS_ERRORS  default OFF
#   HYPERTUNE_BUILD_EXAMPLES      default ON
#   HYPERTUNE_BUILD_BENCH         default ON
#   HYPERTUNE_TEST_MODE           compiled (default) or header-only: how tests and benchmarks link
#   JOBS                          parallel build and test jobs (default 2)
include_guard(GLOBAL)

get_filename_component(HYPERTUNE_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

# Everything the build, the tests and the headline example need, by Debian 12 package name.
set(HYPERTUNE_DEBIAN_PACKAGES
    libeigen3-dev libfmt-dev nlohmann-json3-dev doctest-dev libbenchmark-dev
    liblbfgspp-dev zlib1g-dev libxgboost-dev dataset-fashion-mnist libopenmpi-dev openmpi-bin)
# What only the test suite needs besides: pandas reads the CSV export, Chromium opens the HTML
# report (cmake/test.cmake installs them too, so that a fresh machine's run skips no test).
set(HYPERTUNE_TEST_DEBIAN_PACKAGES python3-pandas chromium)

if(NOT DEFINED JOBS)
    set(JOBS 2)
endif()

function(hypertune_run what)
    message(STATUS "[hypertune] ${what}")
    list(JOIN ARGN " " _printable)
    message(STATUS "[hypertune]   $ ${_printable}")
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "[hypertune] ${what} failed (exit status ${_rc}): ${_printable}")
    endif()
endfunction()

# Sets <out> to the packages of <packages...> that dpkg does not report as installed.
function(_hypertune_missing_packages out)
    set(_missing "")
    foreach(_package IN LISTS ARGN)
        execute_process(
            COMMAND dpkg-query -W "-f=\${Status}" "${_package}"
            RESULT_VARIABLE _rc OUTPUT_VARIABLE _status ERROR_QUIET)
        if(NOT _rc EQUAL 0 OR NOT _status MATCHES "ok installed")  # "install ok installed", "hold ok installed"
            list(APPEND _missing "${_package}")
        endif()
    endforeach()
    set(${out} "${_missing}" PARENT_SCOPE)
endfunction()

# hypertune_ensure_packages([<more packages>...]): HYPERTUNE_DEBIAN_PACKAGES and these.
function(hypertune_ensure_packages)
    set(_wanted_all ${HYPERTUNE_DEBIAN_PACKAGES} ${ARGN})
    find_program(_dpkg_query dpkg-query)
    if(NOT _dpkg_query)
        list(JOIN _wanted_all " " _list)
        message(WARNING "[hypertune] dpkg-query not found (not Debian?): not checking packages. "
            "The build needs the equivalents of the Debian packages: ${_list}")
        return()
    endif()

    set(_wanted ${HYPERTUNE_DEBIAN_PACKAGES} ${ARGN})
    # cmake alone does not pull in a build tool or a compiler (they are only Recommends).
    if("$ENV{CMAKE_GENERATOR}" MATCHES "Ninja")
        find_program(_ninja NAMES ninja ninja-build)
        if(NOT _ninja)
            list(APPEND _wanted ninja-build)
        endif()
    else()
        find_program(_make NAMES make gmake)
        if(NOT _make)
            list(APPEND _wanted make)
        endif()
    endif()
    find_program(_cxx NAMES c++ g++)
    if(NOT _cxx)
        list(APPEND _wanted g++)
    endif()

    _hypertune_missing_packages(_missing ${_wanted})
    if(NOT _missing)
        message(STATUS "[hypertune] Debian packages: all present")
        return()
    endif()
    list(JOIN _missing " " _missing_line)
    message(STATUS "[hypertune] missing Debian packages: ${_missing_line}")

    execute_process(COMMAND id -u OUTPUT_VARIABLE _uid OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0 OR NOT _uid STREQUAL "0")
        # Not root: say exactly what to run, and stop before a configure step that would fail.
        message(NOTICE "\nhypertune needs these Debian packages, which are not installed: ${_missing_line}\n"
            "Install them with this command, then run this script again:\n\n"
            "sudo apt-get install -y --no-install-recommends ${_missing_line}\n")
        message(FATAL_ERROR "[hypertune] missing Debian packages (not root, so not installing them): "
            "${_missing_line}")
    endif()

    hypertune_run("apt-get update" apt-get update)
    hypertune_run("installing ${_missing_line}"
        "${CMAKE_COMMAND}" -E env DEBIAN_FRONTEND=noninteractive
        apt-get install -y --no-install-recommends ${_missing})
    _hypertune_missing_packages(_still_missing ${_missing})
    if(_still_missing)
        list(JOIN _still_missing " " _still_missing)
        message(FATAL_ERROR "[hypertune] apt-get did not install: ${_still_missing}")
    endif()
endfunction()

function(hypertune_configure)
    if(NOT DEFINED BUILD_DIR OR BUILD_DIR STREQUAL "")
        set(BUILD_DIR build)
    endif()
    get_filename_component(_build_dir "${BUILD_DIR}" ABSOLUTE BASE_DIR "${HYPERTUNE_SOURCE_DIR}")

    if(NOT DEFINED HYPERTUNE_SANITIZE)
        set(HYPERTUNE_SANITIZE "")
    endif()
    set(_build_flags "")
    if(NOT CMAKE_BUILD_TYPE)
        if(HYPERTUNE_SANITIZE STREQUAL "")
            set(CMAKE_BUILD_TYPE Release)
        else()
            # -O1 -g1 (line tables): stack traces with file:line, and with assert() on. GCC 12 compiles
            # a test file with -fsanitize=address,undefined three times faster than at -O2 -g.
            # SANITIZE_OPTIMIZE=-Og compiles faster for tests that run a little slower (.ci/run has
            # the figures).
            if(NOT DEFINED SANITIZE_OPTIMIZE OR SANITIZE_OPTIMIZE STREQUAL "")
                set(SANITIZE_OPTIMIZE -O1)
            endif()
            set(CMAKE_BUILD_TYPE RelWithDebInfo)
            set(_build_flags "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=${SANITIZE_OPTIMIZE} -g1")
        endif()
    endif()
    foreach(_option IN ITEMS HYPERTUNE_BUILD_EXAMPLES HYPERTUNE_BUILD_BENCH)
        if(NOT DEFINED ${_option})
            set(${_option} ON)
        endif()
    endforeach()
    if(NOT DEFINED HYPERTUNE_WARNINGS_AS_ERRORS)
        set(HYPERTUNE_WARNINGS_AS_ERRORS OFF)
    endif()
    if(NOT DEFINED HYPERTUNE_TEST_MODE)
        set(HYPERTUNE_TEST_MODE compiled)
    endif()

    # Every option is passed every time, so a build directory reused with other settings is updated.
    hypertune_run("configuring ${_build_dir}"
        "${CMAKE_COMMAND}" -S "${HYPERTUNE_SOURCE_DIR}" -B "${_build_dir}"
        "-DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}" ${_build_flags}
        -DHYPERTUNE_BUILD_TESTS=ON
        "-DHYPERTUNE_BUILD_EXAMPLES=${HYPERTUNE_BUILD_EXAMPLES}"
        "-DHYPERTUNE_BUILD_BENCH=${HYPERTUNE_BUILD_BENCH}"
        "-DHYPERTUNE_WARNINGS_AS_ERRORS=${HYPERTUNE_WARNINGS_AS_ERRORS}"
        "-DHYPERTUNE_TEST_MODE=${HYPERTUNE_TEST_MODE}"
        "-DHYPERTUNE_SANITIZE=${HYPERTUNE_SANITIZE}"
        "-DHYPERTUNE_SANITIZE_GP_OPTIMIZE=${SANITIZE_GP_OPTIMIZE}")
    set(HYPERTUNE_BUILD_DIR "${_build_dir}" PARENT_SCOPE)
endfunction()
