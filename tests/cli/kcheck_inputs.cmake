# cmake -P driver for what kcheck run reads: --waivers names a regular file, read as
# strictly as a case file; case folders reached through symbolic links are read, and a
# link that loops is refused by name; every file a scan passes over is counted.
#   -DKCHECK=path -DWORK=dir -DCASES=the project's cases/ folder
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")

set(case "${CASES}/conv/conv1d.yaml")

# A waiver file that is a folder or a FIFO is refused before the run (the FIFO is never
# opened for reading: kcheck() gives up after 120 s if it waits), naming the file.
kcheck(2 run "${case}" --backend reference --waivers "${WORK}")
expect_match("--waivers: [^\n]*cli_kcheck_inputs: is a directory, not a waiver file\n" "a folder as --waivers")
execute_process(COMMAND mkfifo "${WORK}/fifo.yaml")
kcheck(2 run "${case}" --backend reference --waivers "${WORK}/fifo.yaml")
expect_match("--waivers: [^\n]*fifo.yaml: is not a regular file: a FIFO\n" "a FIFO as --waivers")
# A key given twice, and a day that does not exist: the file, line and field.
file(WRITE "${WORK}/twice.yaml"
     "waivers:\n  - case: \"*\"\n    backend: reference\n    check: forward\n    reason: r\n    reason: s\n")
kcheck(2 run "${case}" --backend reference --waivers "${WORK}/twice.yaml")
expect_match("--waivers: [^\n]*twice.yaml:6: waivers\\[0\\].reason: duplicate key\n" "a duplicate key in a waiver")
file(WRITE "${WORK}/date.yaml"
     "waivers:\n  - {case: \"*\", backend: reference, check: forward, reason: r, expires: 2027-02-30}\n")
kcheck(2 run "${case}" --backend reference --waivers "${WORK}/date.yaml")
expect_match("--waivers: [^\n]*date.yaml:2: waivers\\[0\\].expires: 2027-02-30 is not a date: February 2027 has 28 days\n"
             "a waiver expiring on 2027-02-30")

# A failing case in a folder reached through a link fails the run as it does named
# directly; the files passed over are counted with their reasons, in the summary and the
# report.
set(scan "${WORK}/scan")
file(WRITE "${WORK}/elsewhere/fails.yaml"  # valid, so FAILED: it expects to be refused
     "op: conv\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3}\nexpect: {error: \"never\"}\n")
file(COPY "${case}" DESTINATION "${scan}")
file(CREATE_LINK "../elsewhere" "${scan}/linked" SYMBOLIC)
file(WRITE "${scan}/notes.txt" "not a case\n")
file(WRITE "${scan}/timed/KCHECK_SCAN_SKIP" "timed, not checked\n")
file(COPY "${case}" DESTINATION "${scan}/timed")
kcheck(1 run "${WORK}/elsewhere/fails.yaml" --backend reference)
kcheck(1 run "${scan}" --backend reference --report "${WORK}/scan.json")
expect_match("FAILED  [^\n]*scan/linked/fails.yaml:1  \\[reference\\]\n" "the failing case through the link is not FAILED")
expect_match("\n3 files passed over: 1 not \\*\\.yaml/\\*\\.yml, 2 under a folder with the scan-skip marker \\(KCHECK_SCAN_SKIP\\)\n"
             "the files passed over are not counted in the summary")
file(READ "${WORK}/scan.json" json)
foreach(pair "passed_over;3" "passed_over_not_case_file;1" "passed_over_scan_skip;2" "passed_over_broken_link;0"
             "passed_over_reproducer;0")
  list(GET pair 0 key)
  list(GET pair 1 want)
  string(JSON got GET "${json}" ${key})
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "the report's ${key} is '${got}', want ${want}:\n${json}")
  endif()
endforeach()

# A link to a folder above it would be walked for ever: INVALID naming it (exit 2), and
# the other cases still run.
file(COPY "${case}" DESTINATION "${WORK}/loop/sub")
file(CREATE_LINK ".." "${WORK}/loop/sub/up" SYMBOLIC)
kcheck(2 run "${WORK}/loop" --backend reference)
expect_match("INVALID  [^\n]*loop/sub/up[^\n]*\n[^\n]*a symbolic link to '\\.\\.', which is '[^']*loop', a folder above it: following it would loop\n"
             "a looping link is not INVALID naming it")
expect_match("\nreference +[1-9]" "the cases beside a looping link did not run")
