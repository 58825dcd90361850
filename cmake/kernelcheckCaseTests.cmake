# kc_add_case_tests: one ctest test per case file of a folder, each a `kcheck run` of that
# file, so that a project's own cases run in its ctest (installed with the package and
# included by its config; usable in this tree too).
#
#   kc_add_case_tests(PREFIX my DIR ${CMAKE_CURRENT_SOURCE_DIR}/cases
#                     [BACKENDS my.conv2d ...] [PLUGIN my_kernels|/path/lib.so]
#                     [PYTHON my_kernels.py ...] [WAIVERS known.yaml ...] [LABELS kernels ...]
#                     [ARGS --timeout 120 ...])
#
# Tests are named PREFIX/<path under DIR> and labelled kernelcheck plus LABELS. PLUGIN is a
# target of the project (its file is used) or a path; PYTHON, Python modules that declare
# backends (kcheck run --python; relative paths are taken from the calling folder).
# KERNELCHECK_CASES is the shipped corpus.
function(kc_add_case_tests)
  cmake_parse_arguments(A "" "PREFIX;DIR;PLUGIN" "BACKENDS;PYTHON;WAIVERS;LABELS;ARGS" ${ARGN})
  if(NOT A_PREFIX OR NOT A_DIR)
    message(FATAL_ERROR "kc_add_case_tests: PREFIX and DIR are required")
  endif()
  if(NOT IS_DIRECTORY "${A_DIR}")
    message(FATAL_ERROR "kc_add_case_tests: DIR ${A_DIR} is not a folder")
  endif()
  if(TARGET kc::kcheck)
    set(kcheck kc::kcheck)
  else()
    set(kcheck kcheck)  # inside the kernelcheck tree
  endif()
  set(args ${A_ARGS})
  if(A_BACKENDS)
    list(JOIN A_BACKENDS "," backends)
    list(APPEND args --backend ${backends})
  endif()
  if(A_PLUGIN AND TARGET ${A_PLUGIN})
    list(APPEND args --plugin $<TARGET_FILE:${A_PLUGIN}>)
  elseif(A_PLUGIN)
    list(APPEND args --plugin ${A_PLUGIN})
  endif()
  foreach(module IN LISTS A_PYTHON)
    get_filename_component(module "${module}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${module}")
      message(FATAL_ERROR "kc_add_case_tests: PYTHON ${module}: no such file")
    endif()
    list(APPEND args --python "${module}")
  endforeach()
  foreach(waivers IN LISTS A_WAIVERS)
    get_filename_component(waivers "${waivers}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args --waivers "${waivers}")
  endforeach()
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${A_DIR}/*.yaml" "${A_DIR}/*.yml")
  list(SORT files)
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${A_DIR}" "${file}")
    add_test(NAME "${A_PREFIX}/${rel}" COMMAND ${kcheck} run "${file}" ${args})
    set_tests_properties("${A_PREFIX}/${rel}" PROPERTIES LABELS "kernelcheck;${A_LABELS}")
  endforeach()
endfunction()
