# Warning and sanitizer flags for hypertune's own tests, examples and benchmarks.
# Never applied to the hypertune target itself, so consumers keep their own flags.
#
#   hypertune_target_warnings(<target>)    warnings; -Werror when HYPERTUNE_WARNINGS_AS_ERRORS
#   hypertune_target_sanitizers(<target>)  -fsanitize=${HYPERTUNE_SANITIZE} when it is not empty
#   HYPERTUNE_SANITIZER_ENVIRONMENT        list of VAR=value for the ENVIRONMENT test property
include_guard(GLOBAL)

# --- validate HYPERTUNE_SANITIZE once ---------------------------------------------------------
set(HYPERTUNE_SANITIZER_ENVIRONMENT "")
if(NOT "${HYPERTUNE_SANITIZE}" STREQUAL "")
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        message(FATAL_ERROR "HYPERTUNE_SANITIZE needs GCC or Clang (compiler is ${CMAKE_CXX_COMPILER_ID})")
    endif()
    string(REPLACE "," ";" _hypertune_sanitizers "${HYPERTUNE_SANITIZE}")
    foreach(_s IN LISTS _hypertune_sanitizers)
        if(NOT _s MATCHES "^(address|undefined|thread|leak)$")
            message(FATAL_ERROR "HYPERTUNE_SANITIZE='${HYPERTUNE_SANITIZE}': unknown sanitizer '${_s}' "
                "(use address, undefined, address,undefined or thread)")
        endif()
    endforeach()
    if("thread" IN_LIST _hypertune_sanitizers AND "address" IN_LIST _hypertune_sanitizers)
        message(FATAL_ERROR "HYPERTUNE_SANITIZE: thread and address cannot be combined")
    endif()
    # Fail the test on the first report instead of printing it and carrying on.
    list(APPEND HYPERTUNE_SANITIZER_ENVIRONMENT
        "ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1"
        "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
        "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1")
endif()

function(hypertune_target_warnings target)
    if(MSVC)
        target_compile_options(${target} PRIVATE /W4 /permissive-)
        if(HYPERTUNE_WARNINGS_AS_ERRORS)
            target_compile_options(${target} PRIVATE /WX)
        endif()
        return()
    endif()

    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wpedantic
        -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-align
        -Wimplicit-fallthrough -Wmisleading-indentation -Wformat=2 -Wundef)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE -Wduplicated-cond -Wlogical-op)
    endif()

    if(HYPERTUNE_WARNINGS_AS_ERRORS)
        target_compile_options(${target} PRIVATE -Werror)
        if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
            # GCC 12's flow-based diagnostics give false positives inside libstdc++ (std::variant,
            # std::optional, std::string, std::vector) at -O2 and more so under sanitizers. They
            # stay visible as warnings but do not fail the build.
            target_compile_options(${target} PRIVATE
                -Wno-error=maybe-uninitialized -Wno-error=array-bounds -Wno-error=stringop-overflow
                -Wno-error=stringop-overread -Wno-error=restrict -Wno-error=dangling-pointer
                -Wno-error=free-nonheap-object -Wno-error=null-dereference)
        endif()
    endif()
endfunction()

function(hypertune_target_sanitizers target)
    if("${HYPERTUNE_SANITIZE}" STREQUAL "")
        return()
    endif()
    set(_flags "-fsanitize=${HYPERTUNE_SANITIZE}" -fno-omit-frame-pointer)
    if(HYPERTUNE_SANITIZE MATCHES "undefined")
        list(APPEND _flags -fno-sanitize-recover=undefined)
    endif()
    target_compile_options(${target} PRIVATE ${_flags})
    target_link_options(${target} PRIVATE "-fsanitize=${HYPERTUNE_SANITIZE}")
endfunction()
