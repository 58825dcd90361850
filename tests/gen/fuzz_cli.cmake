# cmake -P driver for kcheck gen and kcheck fuzz on the reference: exit codes, bad
# usage, gen output that sorts and loads, degenerate cases left out, --invalid cases refused as they expect (op:
# stack too), saved regressions replayed first (cases/regressions too), --shard splitting
# one run exactly, and kcheck run's bad numbers.
#   -DKCHECK=path -DWORK=dir
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")

# Bad usage is exit 2 and says what is wrong.
kcheck(2 fuzz --op conv3d)
if(NOT out MATCHES "expected conv, maxpool, avgpool, conv_bias_relu, stack or all")
  message(FATAL_ERROR "a bad --op does not list the op sets:\n${out}")
endif()
kcheck(2 fuzz --shard 2/2)
kcheck(2 fuzz --time -1)
kcheck(2 fuzz --backend no.such.backend)
kcheck(2 gen --count 3)
kcheck(2 gen --boundaries --count 3 -o "${WORK}/x")        # the sweep takes no count
kcheck(0 gen --boundaries --op maxpool -o "${WORK}/sweep")  # one file, every case loads and passes
kcheck(0 run "${WORK}/sweep/boundaries_maxpool.yaml" --backend reference)
kcheck(2 gen --count x -o "${WORK}/x")
kcheck(2 gen --count 1000000000 -o "${WORK}/x")  # over the cap: the message says the cap
if(NOT out MATCHES "--count: expected an integer from 0 to 10000000, got '1000000000'")
  message(FATAL_ERROR "gen --count over the cap does not name the cap:\n${out}")
endif()
# Numbers are whole: no NaN (which would disable the timeout), no trailing letters.
kcheck(2 fuzz --timeout nan)
# A case checked in kcheck's own process cannot be timed out: the pair is refused.
kcheck(2 fuzz --count 0 --in-process --timeout 3)
if(NOT out MATCHES "--timeout cannot be used with --in-process")
  message(FATAL_ERROR "fuzz --in-process --timeout is not refused:\n${out}")
endif()
kcheck(2 run "${WORK}" --timeout nan)
if(NOT out MATCHES "--timeout: expected a positive number of seconds less than 1e9, got 'nan'")
  message(FATAL_ERROR "run --timeout nan does not say what is wrong:\n${out}")
endif()
kcheck(2 run "${WORK}" --timeout 1s)
kcheck(2 run "${WORK}" --jobs 2x)
kcheck(2 run "${WORK}" --jobs 0)
kcheck(2 run "${WORK}" --backend reference,)
# An output that cannot be written is refused before the run, not after it.
kcheck(2 run "${WORK}" --report "${WORK}")
if(NOT out MATCHES "--report: '[^']*' is a folder; give a file name" OR out MATCHES "results in")
  message(FATAL_ERROR "run --report FOLDER is not refused up front:\n${out}")
endif()
file(WRITE "${WORK}/a_file" "")
kcheck(2 run "${WORK}" --junit "${WORK}/a_file/junit.xml")
if(NOT out MATCHES "--junit: '[^']*a_file' is not a folder")
  message(FATAL_ERROR "run --junit under a file is not refused up front:\n${out}")
endif()
kcheck(2 fuzz --count 1 --report "${WORK}")
# A relative report path under folders that do not exist yet is written, as it always was.
execute_process(COMMAND "${KCHECK}" run "${CMAKE_CURRENT_LIST_DIR}/../../cases/conv/conv1d.yaml" --backend reference --report new/sub/r.json
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/new/sub/r.json")
  message(FATAL_ERROR "run --report new/sub/r.json (relative) was refused or not written: ${rc}\n${out}${err}")
endif()
# Control characters from input reach the terminal escaped, never as escape sequences.
string(ASCII 27 esc)
kcheck(2 run "${WORK}/no${esc}csuch.yaml" --backend reference)  # ESC c resets a terminal
string(FIND "${out}" "${esc}" raw)
if(NOT raw EQUAL -1 OR NOT out MATCHES "no\\\\x1bcsuch.yaml: no such file")
  message(FATAL_ERROR "an escape sequence in a path reaches the terminal:\n${out}")
endif()
kcheck(2 run "${WORK}" --backend "x${esc}c")
string(FIND "${out}" "${esc}" raw)
if(NOT raw EQUAL -1)
  message(FATAL_ERROR "an escape sequence in --backend reaches the terminal:\n${out}")
endif()
kcheck(0 --version)
if(NOT out MATCHES "^kcheck [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ")
  message(FATAL_ERROR "kcheck --version says:\n${out}")
endif()

# gen: N files, named so that they sort in generation order, that load and run (a case
# the oracle cannot trust is passed over, and the next index written).
kcheck(0 gen --op maxpool --count 12 --seed 3 -o "${WORK}/gen")
file(GLOB files RELATIVE "${WORK}/gen" "${WORK}/gen/*.yaml")
list(LENGTH files n)
list(GET files 0 first)
list(GET files 11 last)
if(NOT n EQUAL 12 OR NOT first STREQUAL "000000-maxpool.yaml" OR NOT last MATCHES "^0000(1[1-9])-maxpool.yaml$")
  message(FATAL_ERROR "gen wrote ${files}")
endif()
execute_process(COMMAND "${KCHECK}" run "${WORK}/gen" --backend reference RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc EQUAL 2 OR out MATCHES "INVALID")
  message(FATAL_ERROR "generated cases do not load:\n${out}")
endif()
# gen writes into a folder of its own: one that already holds case files is refused,
# and nothing is added to it.
kcheck(2 gen --op maxpool --count 2 --seed 5 -o "${WORK}/gen")
expect_match("-o: '[^']*gen' already holds 12 case files \\([^)]*000000-maxpool.yaml, ...\\); give an empty or new folder"
             "gen into a folder of earlier cases is not refused")
file(GLOB files "${WORK}/gen/*.yaml")
list(LENGTH files n)
if(NOT n EQUAL 12)
  message(FATAL_ERROR "gen refused the folder but wrote into it: ${files}")
endif()
# A folder given twice, and a file in it again, run once each.
execute_process(COMMAND "${KCHECK}" run "${WORK}/gen" "${WORK}/gen/" "${WORK}/gen/000000-maxpool.yaml" --backend reference
                OUTPUT_VARIABLE out)
if(NOT out MATCHES "\n12 results in")
  message(FATAL_ERROR "paths given twice ran twice:\n${out}")
endif()

# gen leaves out cases whose data cannot judge a kernel (MISTRUSTED on the oracle run as
# a candidate), skipping their numbers: with seed 38, case 0 is one whose dw is NaN at
# every element (a NaN reaches every tap). The rest pass on the reference.
kcheck(0 gen --count 12 --seed 38 -o "${WORK}/gen_trusted")
if(NOT out MATCHES "12 generated cases" OR NOT out MATCHES "1 left out: the oracle run as a candidate is MISTRUSTED on them.*first: case 0: backward: reference dw is NaN at every element")
  message(FATAL_ERROR "gen does not say which cases it left out:\n${out}")
endif()
file(GLOB files RELATIVE "${WORK}/gen_trusted" "${WORK}/gen_trusted/*.yaml")
list(LENGTH files n)
file(GLOB left_out "${WORK}/gen_trusted/000000-*.yaml")
if(NOT n EQUAL 12 OR left_out OR NOT EXISTS "${WORK}/gen_trusted/000012-conv_bias_relu.yaml")
  message(FATAL_ERROR "gen wrote ${files}")
endif()
kcheck(0 run "${WORK}/gen_trusted" --backend reference)

# gen --op stack: stack cases that load (they run; whether the oracle passes them is
# gen_test's GenStack.ReferencePassesTheStackChecks).
kcheck(0 gen --op stack --count 8 --seed 3 -o "${WORK}/gen_stack")
file(GLOB files "${WORK}/gen_stack/*-stack.yaml")
list(LENGTH files n)
if(NOT n EQUAL 8)
  message(FATAL_ERROR "gen --op stack wrote ${files}")
endif()
execute_process(COMMAND "${KCHECK}" run "${WORK}/gen_stack" --backend reference RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc EQUAL 2 OR out MATCHES "INVALID" OR NOT out MATCHES "reference +[0-9]+ +[0-9]+ +[0-9]+ +0 +0 +0 +0")
  message(FATAL_ERROR "generated stack cases do not load or run:\n${out}")
endif()

# gen --invalid: every case is refused with the error it expects, so kcheck run passes.
kcheck(0 gen --invalid --count 40 --seed 4 -o "${WORK}/invalid")
kcheck(0 run "${WORK}/invalid" --backend reference)
kcheck(0 gen --op stack --invalid --count 40 --seed 4 -o "${WORK}/invalid_stack")
kcheck(0 run "${WORK}/invalid_stack" --backend reference)

# fuzz on the reference: the seed is printed first, the run passes.
kcheck(0 fuzz --op conv --count 40 --seed 5 --save "${WORK}/none" --report "${WORK}/whole.json")
if(NOT out MATCHES "^kcheck fuzz: seed 5 ")
  message(FATAL_ERROR "the seed is not printed at the start:\n${out}")
endif()
kcheck(0 fuzz --op stack --count 40 --seed 5 --save "${WORK}/none")
if(NOT out MATCHES "op stack" OR NOT out MATCHES "40 generated")
  message(FATAL_ERROR "fuzz --op stack did not check 40 stacks:\n${out}")
endif()

# --shard i/n: the shards together check exactly the cases of the whole run.
function(case_names report var)
  file(READ "${report}" json)
  string(JSON n LENGTH "${json}" results)
  set(names "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" results ${i} case)
    list(APPEND names "${name}")
  endforeach()
  list(SORT names)
  set(${var} "${names}" PARENT_SCOPE)
endfunction()
kcheck(0 fuzz --op conv --count 40 --seed 5 --save "${WORK}/none" --shard 0/3 --report "${WORK}/s0.json")
kcheck(0 fuzz --op conv --count 40 --seed 5 --save "${WORK}/none" --shard 1/3 --report "${WORK}/s1.json")
kcheck(0 fuzz --op conv --count 40 --seed 5 --save "${WORK}/none" --shard 2/3 --report "${WORK}/s2.json")
case_names("${WORK}/whole.json" whole)
case_names("${WORK}/s0.json" s0)
case_names("${WORK}/s1.json" s1)
case_names("${WORK}/s2.json" s2)
set(shards ${s0} ${s1} ${s2})
list(SORT shards)
list(LENGTH whole n_whole)
if(NOT n_whole EQUAL 40 OR NOT "${shards}" STREQUAL "${whole}")
  message(FATAL_ERROR "shards ${shards}\ndiffer from the whole run ${whole}")
endif()

# Saved regressions are replayed first; an invalid one is named with its line and
# reason, and is invalid input (exit 2), as in kcheck run.
file(WRITE "${WORK}/regressions/bad.yaml" "op: conv\ninput: {spatial: [4]}\nconv: {out_channels: 0, kernel: [3]}\n")
kcheck(2 fuzz --count 0 --save "${WORK}/regressions")
if(NOT out MATCHES "1 cases \\(1 replayed, 0 generated\\)")
  message(FATAL_ERROR "the regression was not replayed:\n${out}")
endif()
if(NOT out MATCHES "invalid replayed case files[^\n]*\n +[^\n]*regressions/bad.yaml:3: conv.out_channels: 0 must be at least 1")
  message(FATAL_ERROR "the invalid regression is not named with its line and reason:\n${out}")
endif()
# Run outside a checkout, fuzz says that the corpus's regressions were not replayed.
expect_match("no cases/regressions folder under the current folder, so none of the corpus's regressions were replayed"
             "fuzz outside a checkout does not say that cases/regressions was not found")
# MISTRUSTED cases are named with the check and its reason, not only counted.
kcheck(0 fuzz --count 100 --seed 3 --save "${WORK}/mistrusted")
expect_match("mistrusted [1-9][0-9]*,[^\n]*\n(.*\n)?  mistrusted \\(the data cannot judge these; not failures\\):\n    fuzz seed 3 case [0-9]+: [a-z_]+: [^\n]+\n"
             "fuzz does not name its MISTRUSTED cases")
# The project's cases/regressions are replayed too when failures go to another folder.
file(WRITE "${WORK}/project/cases/regressions/bad.yaml" "op: conv\ninput: {spatial: [4]}\nconv: {out_channels: 0, kernel: [3]}\n")
execute_process(COMMAND "${KCHECK}" fuzz --count 0 --save "${WORK}/elsewhere" WORKING_DIRECTORY "${WORK}/project"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 2 OR NOT "${out}${err}" MATCHES "1 cases \\(1 replayed, 0 generated\\)")
  message(FATAL_ERROR "fuzz --save elsewhere did not replay cases/regressions (exit ${rc}):\n${out}${err}")
endif()
if("${out}${err}" MATCHES "no cases/regressions folder")
  message(FATAL_ERROR "fuzz in a checkout says cases/regressions was not found:\n${out}${err}")
endif()
