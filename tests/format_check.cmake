# The formatter's check (cmake -P): every C++ and CUDA source of the project as
# clang-format writes it under .clang-format. Prints "SKIPPED: ..." (the test's skip
# pattern) when clang-format is absent; .ci/run installs it.
#   -D CLANG_FORMAT=path (empty or NOTFOUND: skipped)  -D ROOT=source tree
if(NOT CLANG_FORMAT)
  message("SKIPPED: clang-format not found (apt-get install clang-format)")
  return()
endif()
set(sources "")
foreach(dir harness reference gpu peers apps tests)
  file(GLOB_RECURSE found "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cu" "${ROOT}/${dir}/*.cuh")
  list(APPEND sources ${found})
endforeach()
list(LENGTH sources count)
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run -Werror --style=file ${sources}
                WORKING_DIRECTORY "${ROOT}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  string(SUBSTRING "${err}" 0 4000 err)
  message(FATAL_ERROR "${err}\nnot as .clang-format writes them (of ${count} files); run clang-format -i on them")
endif()
message(STATUS "${count} files formatted as .clang-format says")
