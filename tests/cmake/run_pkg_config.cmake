# Build tests/cmake/main.cpp without CMake, with the flags that the installed hypertune.pc gives, run
# it and check what it prints (cmake -P; the package.pkg_config test, after package.install).
#   PREFIX PKGCONFIGDIR   the install prefix and where hypertune.pc is under it
#   PKG_CONFIG CXX_COMPILER SOURCE BINARY EXPECT
cmake_minimum_required(VERSION 3.24)

set(_pc_dir "${PREFIX}/${PKGCONFIGDIR}")
if(NOT EXISTS "${_pc_dir}/hypertune.pc")
    message(FATAL_ERROR "not installed: ${_pc_dir}/hypertune.pc")
endif()
# Only the installed file may be found, besides the system's own .pc files (eigen3, fmt, ...).
set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs hypertune
    OUTPUT_VARIABLE _flags ERROR_VARIABLE _error RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs hypertune failed (${_rc}): ${_error}")
endif()
message(STATUS "pkg-config --cflags --libs hypertune: ${_flags}")
separate_arguments(_flags UNIX_COMMAND "${_flags}")

# The include directory must be the prefix's, wherever the prefix was moved to.
set(_include "")
foreach(_flag IN LISTS _flags)
    if(_flag MATCHES "^-I(.*)$")  # (${CMAKE_MATCH_1} is expanded before the if() runs: test it apart)
        set(_dir "${CMAKE_MATCH_1}")
        if(EXISTS "${_dir}/hypertune/hypertune.hpp")
            file(REAL_PATH "${_dir}" _include)
        endif()
    endif()
endforeach()
file(REAL_PATH "${PREFIX}/include" _expected)
if(NOT _include STREQUAL _expected)
    message(FATAL_ERROR "hypertune.pc points to the headers in '${_include}', not '${_expected}'")
endif()
foreach(_needed IN ITEMS -lfmt -pthread)
    if(NOT _needed IN_LIST _flags)
        message(FATAL_ERROR "pkg-config --cflags --libs hypertune lacks ${_needed}: ${_flags}")
    endif()
endforeach()
# The language standard is the user's: a -std=c++20 here, after a trainer's own -std=c++23, made it
# C++20 without a word.
if(_flags MATCHES "-std=")
    message(FATAL_ERROR "pkg-config --cflags hypertune sets the language standard: ${_flags}")
endif()

file(REMOVE_RECURSE "${BINARY}")
file(MAKE_DIRECTORY "${BINARY}")
execute_process(COMMAND "${CXX_COMPILER}" -std=c++20 "${SOURCE}" -o "${BINARY}/consumer" ${_flags} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "g++ -std=c++20 with pkg-config's flags failed (${_rc})")
endif()
# An older standard is refused by name, not by a page of errors about concepts.
execute_process(COMMAND "${CXX_COMPILER}" -std=c++17 -fsyntax-only "${SOURCE}" ${_flags}
    RESULT_VARIABLE _rc ERROR_VARIABLE _error OUTPUT_QUIET)
if(_rc EQUAL 0 OR NOT _error MATCHES "hypertune needs C\\+\\+20")
    message(FATAL_ERROR "g++ -std=c++17 did not stop at hypertune's C++20 check (${_rc}): ${_error}")
endif()
execute_process(COMMAND "${BINARY}/consumer" WORKING_DIRECTORY "${BINARY}"
    OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
message(STATUS "consumer printed: ${_out}")
if(NOT _rc EQUAL 0 OR NOT _out MATCHES "${EXPECT}")
    message(FATAL_ERROR "the consumer exited with ${_rc}; its output does not match '${EXPECT}'")
endif()
