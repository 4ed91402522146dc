# Install the hypertune build tree into a fresh prefix (cmake -P; the package.install fixture).
#   BUILD_DIR PREFIX BUILD_TYPE CMAKEDIR PKGCONFIGDIR
cmake_minimum_required(VERSION 3.24)

file(REMOVE_RECURSE "${PREFIX}")
execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${BUILD_TYPE}"
    RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${_rc})")
endif()
foreach(_file IN ITEMS
        "${CMAKEDIR}/hypertuneConfig.cmake"
        "${CMAKEDIR}/hypertuneConfigVersion.cmake"
        "${CMAKEDIR}/hypertuneTargets.cmake"
        "${PKGCONFIGDIR}/hypertune.pc"
        "include/hypertune/version.hpp")
    if(NOT EXISTS "${PREFIX}/${_file}")
        message(FATAL_ERROR "not installed: ${PREFIX}/${_file}")
    endif()
endforeach()
# Every header of the source tree's include/ is installed (SOURCE_DIR is this file's ../..).
get_filename_component(_source "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
file(GLOB_RECURSE _headers RELATIVE "${_source}/include" "${_source}/include/*.hpp")
foreach(_header IN LISTS _headers)
    if(NOT EXISTS "${PREFIX}/include/${_header}")
        message(FATAL_ERROR "header not installed: include/${_header} (a header added since the last configure? build again: the header glob is re-run by the build)")
    endif()
endforeach()
list(LENGTH _headers _count)
message(STATUS "installed ${_count} headers and the package config into ${PREFIX}")
