# cmake -P driver for the kcheck commands end to end: what run does with folders holding
# entries it cannot use, the options that must be refused, and every command's --help.
#   -DKCHECK=path -DWORK=dir -DCASES=the project's cases/ folder -DPLUGIN=the example plugin
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")

# A folder's *.yaml entries that are not case files, and folders that cannot be listed,
# are INVALID with the reason, never skipped silently.
set(dir "${WORK}/walk")
file(MAKE_DIRECTORY "${dir}")
file(COPY "${CASES}/conv/conv1d.yaml" DESTINATION "${dir}")
file(CREATE_LINK "nowhere.yaml" "${dir}/dangling.yaml" SYMBOLIC)
execute_process(COMMAND mkfifo "${dir}/fifo.yaml")
kcheck(2 run "${dir}" --backend reference)
expect_match("INVALID[^\n]*dangling.yaml[^\n]*\n[^\n]*a symbolic link to 'nowhere.yaml', which does not exist"
             "a dangling *.yaml link in a folder is not INVALID with the reason")
expect_match("INVALID[^\n]*fifo.yaml[^\n]*\n[^\n]*is not a regular file" "a FIFO *.yaml in a folder is not INVALID")
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT uid STREQUAL "0")  # root reads a folder of mode 000
  file(REMOVE "${dir}/dangling.yaml" "${dir}/fifo.yaml")
  file(WRITE "${dir}/locked/bad.yaml" "op: conv\n")
  execute_process(COMMAND chmod 000 "${dir}/locked")
  kcheck(2 run "${dir}" --backend reference)
  execute_process(COMMAND chmod 755 "${dir}/locked")
  expect_match("locked: cannot list the folder: Permission denied" "an unreadable folder is not named")
endif()

# --in-process cannot time a case out: with --timeout it is refused, not ignored.
kcheck(2 run "${CASES}/conv/conv1d.yaml" --in-process --timeout 3)
expect_match("--timeout cannot be used with --in-process" "run --in-process --timeout is not refused")
kcheck(0 run "${CASES}/conv/conv1d.yaml" --in-process --backend reference)

# A check that can never apply to the case is refused at load (exit 2), naming the line.
file(WRITE "${WORK}/argmax_on_conv.yaml" "op: conv\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3}\nchecks: [argmax]\n")
kcheck(2 run "${WORK}/argmax_on_conv.yaml" --backend reference)
expect_match("argmax_on_conv.yaml:4: checks: argmax never applies to this case: argmax applies to max pooling only"
             "checks: [argmax] on a conv is not refused naming the line")

# Every command prints its own usage for --help (exit 0), wherever the flag is.
foreach(cmd run explain gen fuzz backends)
  kcheck(0 ${cmd} --help)
  expect_match("^usage: kcheck ${cmd}" "kcheck ${cmd} --help does not print its usage")
endforeach()
kcheck(0 run "${CASES}" -h)
expect_match("^usage: kcheck run" "kcheck run PATH -h does not print its usage")
# A single-dash word is an option kcheck does not know, not a case file named "-v".
kcheck(2 run "${CASES}/conv/conv1d.yaml" -v --backend reference)
expect_match("unknown option '-v'" "run -v: the unknown option is named")

# --require with no name is refused, not ignored (called directly: ARGN drops "").
execute_process(COMMAND "${KCHECK}" run "${CASES}/conv/conv1d.yaml" --require "" --backend reference
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
expect_exit(2 "run --require ''")
expect_match("--require: expected a backend name, got ''" "run --require '' is not refused")

# A backend named twice runs once.
kcheck(0 run "${CASES}/conv/conv1d.yaml" --backend reference)
string(REGEX MATCH "\n[0-9]+ results in" once "${out}")
kcheck(0 run "${CASES}/conv/conv1d.yaml" --backend reference,reference)
string(REGEX MATCH "\n[0-9]+ results in" twice "${out}")
if(NOT once OR NOT once STREQUAL twice)
  message(FATAL_ERROR "--backend reference,reference ran each case twice (${once} vs ${twice}):\n${out}")
endif()

# An unusable KC_MAX_CASE_BYTES is refused, naming the variable, not silently ignored.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env KC_MAX_CASE_BYTES=abc "${KCHECK}" run "${CASES}/conv/conv1d.yaml"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
expect_exit(2 "KC_MAX_CASE_BYTES=abc kcheck run")
expect_match("KC_MAX_CASE_BYTES: expected a positive byte count[^\n]*got 'abc'" "KC_MAX_CASE_BYTES=abc is not named")

# A file name holding a newline is written escaped (\x0a) in result lines, so that it
# cannot forge a result line of its own.
file(WRITE "${WORK}/newline/a\nPASSED  forged.yaml" "op: conv\n")
kcheck(2 run "${WORK}/newline" --backend reference)
if(out MATCHES "\nPASSED  forged")
  message(FATAL_ERROR "a newline in a file name reaches the terminal raw:\n${out}")
endif()
expect_match("INVALID  [^\n]*newline/a\\\\x0aPASSED  forged.yaml:1" "a newline in a file name is not escaped")

# Invalid input wins over failures (exit 2, not 1), and an invalid case file is one
# result on backend "-", however many backends run.
set(mixed "${WORK}/mixed")
foreach(i 1 2)
  file(WRITE "${mixed}/bad${i}.yaml" "op: conv\ninput: {spatial: [4]}\nconv: {out_channels: 0, kernel: [3]}\n")
endforeach()
file(WRITE "${mixed}/fails.yaml"  # valid, so FAILED: it expects to be refused
     "op: conv\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3}\nexpect: {error: \"never\"}\n")
kcheck(2 run "${mixed}" --plugin "${PLUGIN}" --backend reference,example.correct --report "${WORK}/mixed.json"
       --junit "${WORK}/mixed.xml")
expect_match("\n- +0 +0 +0 +0 +2 +0 +0\n" "the invalid files are not one row of 2 on backend -")
expect_match("\nreference +0 +1 +0 +0 +0 +0 +0\n" "the failing case is not counted on reference")
file(READ "${WORK}/mixed.json" json)
string(JSON n_invalid GET "${json}" summary invalid)
string(JSON n_results GET "${json}" summary total)
if(NOT n_invalid EQUAL 2 OR NOT n_results EQUAL 4)
  message(FATAL_ERROR "the report counts ${n_invalid} invalid of ${n_results} results, want 2 of 4:\n${json}")
endif()
foreach(i 0 1)
  string(JSON backend GET "${json}" results ${i} backend)
  string(JSON disposition GET "${json}" results ${i} disposition)
  if(NOT backend STREQUAL "-" OR NOT disposition STREQUAL "INVALID")
    message(FATAL_ERROR "result ${i} is ${disposition} on '${backend}', want INVALID on '-':\n${json}")
  endif()
endforeach()
file(READ "${WORK}/mixed.xml" xml)
if(NOT xml MATCHES "tests=\"4\" failures=\"2\" errors=\"2\"")
  message(FATAL_ERROR "the JUnit counts are wrong:\n${xml}")
endif()
# kcheck fuzz likewise: an invalid replayed file with a failing one is exit 2.
kcheck(2 fuzz --count 0 --save "${mixed}")
expect_match("failed 1, mistrusted 0, skipped 0, invalid 2" "fuzz did not replay the mixed folder")
foreach(cmd run fuzz)
  kcheck(0 ${cmd} --help)
  expect_match("2 wins over 1" "kcheck ${cmd} --help does not say that exit 2 wins over 1")
endforeach()
kcheck(0 --help)
expect_match("2 wins over 1" "kcheck --help does not say that exit 2 wins over 1")

# Options refused alike in run and fuzz, the limit named: --jobs past 1024 (fuzz cut it
# to 1024 without a word), --timeout at 1e9 seconds.
foreach(cmd "run;${CASES}/conv/conv1d.yaml" "fuzz;--count;0")
  kcheck(2 ${cmd} --jobs 100000)
  expect_match("--jobs: expected an integer from 1 to 1024, got '100000'" "${cmd} --jobs 100000 is not refused naming the limit")
  kcheck(2 ${cmd} --timeout 1e9)
  expect_match("--timeout: expected a positive number of seconds less than 1e9, got '1e9'" "${cmd} --timeout 1e9 does not name the limit")
endforeach()
kcheck(2 fuzz --count 0 --time 1e9)
expect_match("--time: expected a positive number of seconds less than 1e9" "fuzz --time 1e9 does not name the limit")
# A single-valued option given twice is refused, not the last kept silently.
kcheck(2 run "${CASES}/conv/conv1d.yaml" --backend reference --backend cuda)
expect_match("--backend: given twice; give it once \\(several backends: --backend a,b\\)" "run --backend twice is not refused")
kcheck(2 run "${CASES}/conv/conv1d.yaml" --report "${WORK}/a.json" --report "${WORK}/b.json")
expect_match("--report: given twice" "run --report twice is not refused")
kcheck(2 fuzz --count 0 --backend reference --backend reference)
expect_match("--backend: given twice" "fuzz --backend twice is not refused")
kcheck(2 fuzz --count 0 --seed 1 --seed 2)
expect_match("--seed: given twice" "fuzz --seed twice is not refused")
kcheck(2 gen --count 1 -o "${WORK}/g1" --out "${WORK}/g2")
expect_match("-o/--out: given twice" "gen -o twice is not refused")

# A sibling NAME.expect whose first line is blank is no expectation (it would match
# almost any error): the file beside it stays INVALID, exit 2.
set(blank "${WORK}/blank_expect")
file(MAKE_DIRECTORY "${blank}")
file(WRITE "${blank}/bad.yaml" "garbage: [\n")
file(WRITE "${blank}/bad.expect" "  \t\nnot this line either\n")
kcheck(2 run "${blank}" --backend reference --report "${WORK}/blank_expect.json")
expect_match("INVALID[^\n]*bad.yaml" "a blank NAME.expect turned an invalid file into a pass")
