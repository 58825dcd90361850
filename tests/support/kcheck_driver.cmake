# Shared by the cmake -P drivers that run kcheck end to end (tests/cli, tests/gen):
#   kcheck(want_rc args...)   runs ${KCHECK} args..., fails unless it exits want_rc,
#                             and leaves stdout + stderr in `out`;
#   expect_exit(want_rc what) after an execute_process of its own into rc, out and err
#                             (for what kcheck() cannot pass: an empty argument, which
#                             ARGN drops, or an environment): the same as kcheck()'s end;
#   expect_match(regex what)  fails with `what` unless `out` matches regex.
macro(expect_exit want_rc what)
  set(out "${out}${err}")
  if(NOT rc EQUAL ${want_rc})
    message(FATAL_ERROR "${what}: exit ${rc}, want ${want_rc}\n${out}")
  endif()
endmacro()

function(kcheck want_rc)
  execute_process(COMMAND "${KCHECK}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  expect_exit(${want_rc} "kcheck ${ARGN}")
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect_match regex what)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what}:\n${out}")
  endif()
endfunction()
