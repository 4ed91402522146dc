# cmake -DNM=<nm> -DOBJECT=<random_search.o> -P check_vtables.cmake: fails when the object file of
# bench/compile/random_search.cpp, header-only, holds the vtable of a scheduler or sampler that the
# program never constructs.
cmake_minimum_required(VERSION 3.16)
execute_process(COMMAND "${NM}" -C "${OBJECT}" OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${OBJECT}")
endif()
string(REGEX MATCHALL "vtable for hypertune::[A-Za-z_:<>]+" vtables "${symbols}")
list(REMOVE_DUPLICATES vtables)
message(STATUS "vtables in the random-search translation unit: ${vtables}")
foreach(unused ASHA Hyperband GridSampler GridSearch GPSampler Bayesian ModelBasedSampler MedianStopping)
    if("vtable for hypertune::${unused}" IN_LIST vtables)
        message(FATAL_ERROR "a translation unit that only uses RandomSearch compiles hypertune::${unused}'s vtable "
                            "and virtual functions: declare its out-of-line virtual functions HYPERTUNE_INLINE in the "
                            "class (see <hypertune/linkage.hpp>)")
    endif()
endforeach()
if(NOT "vtable for hypertune::RandomSampler" IN_LIST vtables)
    message(FATAL_ERROR "the check reads nothing: RandomSampler's vtable is not in ${OBJECT}")
endif()
