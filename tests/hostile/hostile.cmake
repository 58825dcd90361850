# cmake -P driver of the hostile-plugin suite: each behaviour of kc_hostile and of the
# kc_hostile_* libraries through kcheck, with the disposition, message and exit status it
# must give (docs/plugins.md, "Trust").
#   -DKCHECK=path -DWORK=dir -DCASES=the project's cases/ -Dkc_hostile=lib -Dkc_hostile_<name>=lib ...
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")

# Two small cases: a conv (the forward hook of every behaviour) and a max pool.
set(small "${WORK}/small")
file(WRITE "${small}/conv.yaml" "name: hostile conv\nop: conv\ndtype: f32\ninput: {batch: 2, channels: 2, spatial: [6, 5]}\n"
           "conv: {out_channels: 3, kernel: 3, padding: 1, bias: true}\ndata: {seed: 5}\n")
file(WRITE "${small}/pool.yaml" "name: hostile pool\nop: maxpool\ndtype: f32\ninput: {batch: 1, channels: 2, spatial: [6, 6]}\n"
           "maxpool: {kernel: 2, stride: 2, mode: training}\ndata: {seed: 5}\n")

# kcheck run on the small cases with the in-call plugin and one backend; the report's
# text is left in `report`.
function(hostile want_rc backend)
  set(r "${WORK}/${backend}.json")
  execute_process(COMMAND "${KCHECK}" run "${small}" --plugin "${kc_hostile}" --backend ${backend} --report "${r}" ${ARGN}
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  expect_exit(${want_rc} "${backend} ${ARGN}")
  set(report "")
  if(EXISTS "${r}")
    file(READ "${r}" report)
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(report "${report}" PARENT_SCOPE)
endfunction()

# Every pid a behaviour recorded in ${WORK}/pids is gone.
function(expect_no_survivor what)
  if(NOT EXISTS "${WORK}/pids")
    message(FATAL_ERROR "${what}: the backend recorded no process it started")
  endif()
  file(STRINGS "${WORK}/pids" pids)
  foreach(pid IN LISTS pids)
    execute_process(COMMAND kill -0 ${pid} RESULT_VARIABLE alive OUTPUT_QUIET ERROR_QUIET)
    if(alive EQUAL 0)
      execute_process(COMMAND kill -9 ${pid})
      message(FATAL_ERROR "${what}: process ${pid} the backend started survived the run")
    endif()
  endforeach()
  file(REMOVE "${WORK}/pids")
endfunction()

set(ENV{HOSTILE_DIR} "${WORK}")

# The control: the same plugin, no behaviour, passes beside the reference.
hostile(0 reference,hostile.control)
expect_match("hostile.control +2 +0" "the control does not pass both cases")

# Ending or hanging the worker: CRASHED or TIMEOUT, the run goes on, exit 1.
hostile(1 hostile.segfault)
expect_match("signal 11" "a segfault is not named")
hostile(1 hostile.kill_self)
expect_match("signal 15" "SIGTERM from the backend is not named")
hostile(1 hostile.throw)
expect_match("hostile: thrown from conv_forward" "an exception is not named")
hostile(1 hostile.exit0)
expect_match("exited with status 0 without a complete result" "exit(0) in a worker is not CRASHED")
hostile(1 hostile.stack_overflow)
expect_match("CRASHED" "a stack overflow is not CRASHED")
hostile(1 hostile.garbage_fds)
expect_match("CRASHED" "garbage on every descriptor is not CRASHED")
hostile(1 hostile.hang --timeout 2)
expect_match("no result within the timeout of 2 s" "a hang that ignores SIGTERM is not TIMEOUT")

# Descendants: a result that arrived is used, the whole process group is killed, and a
# process that left the group is killed too: none survives the run.
string(TIMESTAMP t0 "%s")
hostile(0 hostile.fork_hold --timeout 30)
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
if(took GREATER 20)
  message(FATAL_ERROR "a descendant holding the pipe stalled the run ${took} s")
endif()
set(out "${report}")
expect_match("still running when the case ended" "lingering descendants are not reported")
expect_no_survivor("fork_hold")
hostile(0 hostile.setsid --timeout 30)
set(out "${report}")
expect_match("left the worker's process group were killed" "a descendant that left the group is not reported")
expect_no_survivor("setsid")

# Writes after return and the floating-point environment: FAILED integrity naming them.
hostile(1 hostile.late_write)
expect_match("integrity: FAILED[^\n]*y changed after the call returned" "a write after return is not named")
hostile(1 reference,hostile.ftz_leak)
expect_match("conv_forward left FTZ/DAZ set" "a leaked FTZ/DAZ is not named")
expect_match("reference +2 +0" "a leaked FTZ/DAZ changed the oracle's own verdicts")
hostile(1 hostile.round_leak,reference --in-process)
expect_match("left rounding toward \\+inf" "a leaked rounding mode is not named")
expect_match("reference +2 +0" "a leaked rounding mode under --in-process changed the oracle's verdicts")

# Messages are cut at 4 KiB; the environment is read once, before any backend runs.
hostile(1 hostile.huge_message)
expect_match("bytes cut" "a 1 MiB message is not cut")
string(LENGTH "${report}" size)
if(size GREATER 200000)
  message(FATAL_ERROR "a 1 MiB backend message made a report of ${size} bytes")
endif()
hostile(0 hostile.set_limits)

# --in-process: an exit() is exit 2 with a message; a chdir does not move the report.
hostile(2 hostile.exit0 --in-process)
expect_match("exit\\(\\) was called before the command finished" "exit(0) under --in-process is not exit 2")
execute_process(COMMAND "${KCHECK}" run "${small}" --plugin "${kc_hostile}" --backend hostile.chdir --in-process
                        --report rel/chdir.json WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                        ERROR_VARIABLE err TIMEOUT 120)
expect_exit(0 "chdir under --in-process")
if(NOT EXISTS "${WORK}/rel/chdir.json")
  message(FATAL_ERROR "a chdir under --in-process moved the report away from ${WORK}/rel/chdir.json")
endif()

# Reports first: stdout closed early (`| head -c 1`) costs neither the report, nor the
# reproducers, nor the exit status.
file(REMOVE_RECURSE "${WORK}/piped")
execute_process(COMMAND "${KCHECK}" run "${small}" --plugin "${kc_hostile}" --backend hostile.late_write
                        --report "${WORK}/piped/r.json" COMMAND head -c 1 RESULTS_VARIABLE rcs OUTPUT_QUIET ERROR_QUIET
                        TIMEOUT 120)
list(GET rcs 0 rc)
if(NOT rc EQUAL 1 OR NOT EXISTS "${WORK}/piped/r.json" OR NOT EXISTS "${WORK}/piped/failures")
  message(FATAL_ERROR "with stdout closed early: exit ${rc} (want 1), report or failures/ missing")
endif()

# Plugin code that ends, aborts or hangs while loading or probing: exit 2 naming the plugin
# and the stage, before kcheck's own process loads it.
function(refused lib regex)
  execute_process(COMMAND "${KCHECK}" run "${small}" --plugin "${${lib}}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120)
  expect_exit(2 "${lib}")
  expect_match("--plugin [^\n]*${lib}[^\n]*${regex}" "${lib} is not refused with the reason")
endfunction()
refused(kc_hostile_init_exit "exited with status 0 while loading the library")
refused(kc_hostile_init_abort "killed by signal 6 .Aborted. while loading the library")
refused(kc_hostile_init_hang "did not finish within 3 s while loading the library" --timeout 3)
refused(kc_hostile_available_exit "exited with status 0 while calling hostile.plain_math's available\\(\\)")
refused(kc_hostile_name_comma "may hold only letters, digits and ._\\+-")
refused(kc_hostile_name_long "is 309 characters long, over 64")
refused(kc_hostile_name_builtin "\"reference\" is already registered")

# -ffast-math: loading the library sets FTZ/DAZ. The oracle keeps its own environment (its
# goldens of special values pass with the library loaded), and the library's kernel runs in
# the environment it set, so that its flushes are found; built without the flag it passes.
# (The kernel's relu turns NaN into 0, so the fused files are left out of its runs.)
kcheck(0 run "${CASES}/special" --plugin "${kc_hostile_fast_math}" --backend reference)
set(unfused "${CASES}/special/conv_fill.yaml" "${CASES}/special/golden_conv.yaml" "${CASES}/special/maxpool_fill.yaml"
            "${CASES}/special/golden_maxpool.yaml")
kcheck(1 run ${unfused} --plugin "${kc_hostile_fast_math}" --backend hostile.fast_math)
expect_match("subnormal flushed to zero" "the fast-math kernel's flushes are not diagnosed")
kcheck(0 run ${unfused} --plugin "${kc_hostile_plain_math}" --backend hostile.plain_math)
kcheck(0 backends --plugin "${kc_hostile_fast_math}")
expect_match("hostile.fast_math available\n[^\n]*runs with FTZ/DAZ set" "kcheck backends does not say the library set FTZ/DAZ")
