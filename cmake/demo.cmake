# Build and run the headline example, on Debian 12 with only cmake and g++ to start with:
#
#   cmake -P cmake/demo.cmake
#
# Installs missing Debian packages when run as root (otherwise prints the apt-get line and stops),
# configures build/ (Release, the same settings as cmake/test.cmake, so the two share the directory),
# builds the examples with 2 jobs, and runs build/examples/xgboost_hyperband: XGBoost on Fashion-MNIST
# tuned with Hyperband. Optional: -DBUILD_DIR=... and the other settings listed in cmake/deps.cmake.
cmake_minimum_required(VERSION 3.24)
include("${CMAKE_CURRENT_LIST_DIR}/deps.cmake")

if(NOT DEFINED FASHION_MNIST_DIR)
    set(FASHION_MNIST_DIR /usr/share/datasets/fashion-mnist)  # from dataset-fashion-mnist
endif()

hypertune_ensure_packages()
hypertune_configure()
hypertune_run("building the examples"
    "${CMAKE_COMMAND}" --build "${HYPERTUNE_BUILD_DIR}" --parallel ${JOBS} --target hypertune_examples)

set(_examples "${HYPERTUNE_BUILD_DIR}/examples")
if(EXISTS "${_examples}/xgboost_hyperband")
    set(_demo "${_examples}/xgboost_hyperband" "${FASHION_MNIST_DIR}")
elseif(EXISTS "${_examples}/quickstart")
    # XGBoost or the data set was not found at configure time: show the library anyway.
    message(STATUS "[hypertune] xgboost_hyperband was not built (see the configure output); "
        "running quickstart instead")
    set(_demo "${_examples}/quickstart")
else()
    message(FATAL_ERROR "[hypertune] no demo program was built in ${_examples}")
endif()
list(JOIN _demo " " _printable)
message(STATUS "[hypertune] running the demo in ${_examples}\n--   $ ${_printable}")
execute_process(COMMAND ${_demo} WORKING_DIRECTORY "${_examples}" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "[hypertune] the demo failed (exit status ${_rc}): ${_printable}")
endif()
message(STATUS "[hypertune] demo finished; its output files are in ${_examples}")
