# How the project's MPI programs are launched in ctest (tests/mpi and examples/mpi).
include_guard(GLOBAL)

# Sets <flags_var> to mpiexec's flags and <env_var> to the test environment. More ranks than cores
# is expected here, so Open MPI is told to oversubscribe and not to pin (pinned oversubscribed ranks
# would share one core); CI runs as root, which Open MPI refuses unless allowed.
function(hypertune_mpiexec_settings flags_var env_var)
    set(_flags ${MPIEXEC_PREFLAGS})
    set(_env "")
    if(MPI_CXX_LIBRARY_VERSION_STRING MATCHES "Open MPI")
        list(APPEND _flags --oversubscribe --bind-to none)
        list(APPEND _env OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
    endif()
    set(${flags_var} ${_flags} PARENT_SCOPE)
    set(${env_var} ${_env} PARENT_SCOPE)
endfunction()
