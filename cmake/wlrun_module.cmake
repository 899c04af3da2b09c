# wlrun_add_module: builds precompiled device code with nvcc for wl.kernel{file = ...}
# (docs/kernels.md, "Precompiled code"). From a recipe's own CMakeLists.txt (CUDA enabled):
#
#   include(path/to/wlrun/cmake/wlrun_module.cmake)
#   wlrun_add_module(OUTPUT ${CMAKE_BINARY_DIR}/gemm.cubin SOURCE kernels/gemm.cu FORMAT cubin ARCHS 90)
#   add_custom_target(kernels ALL DEPENDS ${CMAKE_BINARY_DIR}/gemm.cubin)
#
# FORMAT cubin: machine code for the first of ARCHS (90 gives sm_90);
#        fatbin: machine code for each of ARCHS, and PTX of the last (JIT-compiled on newer GPUs);
#        ptx: PTX for the first of ARCHS.
# OPTIONS go to nvcc as they are (-lineinfo, -DTILE=64, --use_fast_math, ...).
# Without CMake, the one-liner: nvcc -cubin -arch=sm_90 -o gemm.cubin kernels/gemm.cu
function(wlrun_add_module)
  cmake_parse_arguments(M "" "OUTPUT;SOURCE;FORMAT" "ARCHS;OPTIONS" ${ARGN})
  if(NOT M_OUTPUT OR NOT M_SOURCE OR NOT M_ARCHS)
    message(FATAL_ERROR "wlrun_add_module: OUTPUT, SOURCE and ARCHS are required")
  endif()
  list(GET M_ARCHS 0 first)
  if(M_FORMAT STREQUAL "cubin")
    set(flags -cubin -arch=sm_${first})
  elseif(M_FORMAT STREQUAL "ptx")
    set(flags -ptx -arch=compute_${first})
  elseif(M_FORMAT STREQUAL "fatbin")
    set(flags -fatbin)
    foreach(a IN LISTS M_ARCHS)
      list(APPEND flags -gencode=arch=compute_${a},code=sm_${a})
    endforeach()
    list(GET M_ARCHS -1 last)
    list(APPEND flags -gencode=arch=compute_${last},code=compute_${last})
  else()
    message(FATAL_ERROR "wlrun_add_module: FORMAT must be cubin, fatbin or ptx, not '${M_FORMAT}'")
  endif()
  get_filename_component(src ${M_SOURCE} ABSOLUTE)
  get_filename_component(dir ${M_OUTPUT} DIRECTORY)
  add_custom_command(OUTPUT ${M_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_CUDA_COMPILER} ${flags} ${M_OPTIONS} -o ${M_OUTPUT} ${src}
    DEPENDS ${src}
    COMMENT "nvcc: ${M_FORMAT} of ${M_SOURCE} for ${M_ARCHS}"
    VERBATIM)
endfunction()
