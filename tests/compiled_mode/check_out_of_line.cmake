# cmake -DNM=<nm> -DOBJECT=<schedulers_out_of_line.o> -P check_out_of_line.cmake: fails when the
# object file of schedulers_out_of_line.cpp defines a constructor, special member or destructor of
# Hyperband or ASHA, or any member of the rung structures they hold.
cmake_minimum_required(VERSION 3.16)
execute_process(COMMAND "${NM}" -C "${OBJECT}" OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${OBJECT}")
endif()
string(REPLACE ";" "," symbols "${symbols}")  # keep each line whole in the list below
string(REPLACE "\n" ";" lines "${symbols}")
set(referenced FALSE)
foreach(line IN LISTS lines)
    # nm: "<address> <type> <name>" for a definition, "<spaces> U <name>" for a reference.
    if(line MATCHES "^ +U hypertune::Hyperband::Hyperband\\(hypertune::HyperbandOptions")
        set(referenced TRUE)
    endif()
    if(line MATCHES "^[0-9a-f]+ [A-Za-z] (hypertune::(Hyperband::~?Hyperband|ASHA::~?ASHA|Hyperband::operator=|ASHA::operator=|detail::(HalvingRungs|StopRungs|PromotionRungs|SynchronousBrackets)::).*)$")
        message(FATAL_ERROR "a compiled-mode translation unit defines ${CMAKE_MATCH_1}: declare it in the class and "
                            "define it in impl/ with HYPERTUNE_INLINE (see <hypertune/linkage.hpp>)")
    endif()
endforeach()
if(NOT referenced)
    message(FATAL_ERROR "the check reads nothing: ${OBJECT} does not call Hyperband's constructor from the library")
endif()
