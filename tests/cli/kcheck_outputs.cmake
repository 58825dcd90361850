# cmake -P driver for what kcheck writes: --report, --junit, the failures/ folder and
# kcheck fuzz --save are checked before the run, never written over an input case file
# or over one another, and a file that could not be written is never reported written.
#   -DKCHECK=path -DWORK=dir -DCASES=the project's cases/ folder
#   -DPLUGIN=the example plugin (example.scaled_dw fails) -DFUZZ_PLUGIN=the planted-bug plugin
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")

# Fails unless `file` still holds `want`.
function(expect_unchanged file want what)
  file(READ "${file}" now)
  if(NOT now STREQUAL want)
    message(FATAL_ERROR "${what}: ${file} was overwritten:\n${now}")
  endif()
endfunction()

# An output that is an input case file is refused before anything runs.
set(c "${WORK}/c")
file(COPY "${CASES}/conv/conv1d.yaml" DESTINATION "${c}")
file(RENAME "${c}/conv1d.yaml" "${c}/victim.yaml")
file(READ "${c}/victim.yaml" victim)
foreach(flag --report --junit)
  kcheck(2 run "${c}/victim.yaml" ${flag} "${c}/victim.yaml" --backend reference)
  expect_match("${flag}: '[^']*victim.yaml' is the input case file '[^']*victim.yaml'" "run ${flag} INPUT is not refused")
  expect_unchanged("${c}/victim.yaml" "${victim}" "run ${flag} INPUT")
  if(out MATCHES "results in")
    message(FATAL_ERROR "run ${flag} INPUT ran the cases before refusing:\n${out}")
  endif()
endforeach()
# The same file by another name: a hard link, a path through a linked folder, a folder
# given as the input.
file(CREATE_LINK "${c}/victim.yaml" "${WORK}/hard.json")
kcheck(2 run "${c}" --report "${WORK}/hard.json" --backend reference)
expect_match("--report: '[^']*hard.json' is the input case file" "a report hard-linked to a case file is not refused")
file(CREATE_LINK "${c}" "${WORK}/linked" SYMBOLIC)
kcheck(2 run "${c}" --junit "${WORK}/linked/victim.yaml" --backend reference)
expect_match("--junit: '[^']*linked/victim.yaml' is the input case file" "a junit path through a linked folder is not refused")
expect_unchanged("${c}/victim.yaml" "${victim}" "run --junit through a link")
# A NAME.expect beside a case file is read too.
file(WRITE "${c}/victim.expect" "")
kcheck(2 run "${c}" --report "${c}/victim.expect" --backend reference)
expect_match("--report: '[^']*victim.expect' is the input case file" "a report over a NAME.expect is not refused")
file(REMOVE "${c}/victim.expect")

# --report and --junit on one file: one would overwrite the other.
kcheck(2 run "${c}" --report "${WORK}/out/same" --junit "${WORK}/out/./same" --backend reference)
expect_match("--report and --junit name the same file" "--report X --junit X is not refused")
if(EXISTS "${WORK}/out/same")
  message(FATAL_ERROR "--report X --junit X wrote X")
endif()
execute_process(COMMAND "${KCHECK}" run "${c}" --report same --junit ./same --backend reference
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
expect_exit(2 "run --report same --junit ./same (relative)")
expect_match("--report and --junit name the same file" "relative --report X --junit ./X is not refused")

# The failures/ folder next to the report: reproducers must not replace the cases run
# from it, nor the JUnit file.
file(COPY "${c}/victim.yaml" DESTINATION "${WORK}/rerun/failures")
kcheck(2 run "${WORK}/rerun/failures" --report "${WORK}/rerun/r.json" --backend reference)
expect_match("--report: the failures folder '[^']*rerun/failures' next to the report holds the input case file"
             "a report whose failures folder holds the input is not refused")
kcheck(2 run "${c}" --report "${WORK}/r2/r.json" --junit "${WORK}/r2/failures" --backend reference)
expect_match("--junit: '[^']*r2/failures' is or is in '[^']*r2/failures', the failures folder of --report" "--junit on the failures folder is not refused")
# Outputs that clash with nothing are written, as before.
kcheck(0 run "${c}" --report "${WORK}/ok/r.json" --junit "${WORK}/ok/r.xml" --backend reference)
if(NOT EXISTS "${WORK}/ok/r.json" OR NOT EXISTS "${WORK}/ok/r.xml")
  message(FATAL_ERROR "run --report --junit did not write them:\n${out}")
endif()

# kcheck fuzz --report: never over a case file it replays, nor a .yaml where it replays.
file(COPY "${c}/victim.yaml" DESTINATION "${WORK}/saved")
kcheck(2 fuzz --count 0 --save "${WORK}/saved" --report "${WORK}/saved/victim.yaml")
expect_match("--report: '[^']*saved/victim.yaml' has a case file's name under" "fuzz --report over a saved case is not refused")
expect_unchanged("${WORK}/saved/victim.yaml" "${victim}" "fuzz --report over a saved case")
file(CREATE_LINK "${WORK}/saved/victim.yaml" "${WORK}/fuzz_hard.json")
kcheck(2 fuzz --count 0 --save "${WORK}/saved" --report "${WORK}/fuzz_hard.json")
expect_match("--report: '[^']*fuzz_hard.json' is the input case file" "fuzz --report hard-linked to a saved case is not refused")
expect_unchanged("${WORK}/saved/victim.yaml" "${victim}" "fuzz --report hard-linked to a saved case")
kcheck(0 fuzz --count 0 --save "${WORK}/saved" --report "${WORK}/saved/report.json")

# A folder that cannot be written in is refused before the run, naming the option.
file(WRITE "${WORK}/plain" "")
kcheck(2 fuzz --count 1 --save "${WORK}/plain")
expect_match("--save: the folder failures are saved in '[^']*plain' is a file, not a folder" "fuzz --save FILE is not refused")
kcheck(2 fuzz --count 1 --save "${WORK}/plain/sub")
expect_match("--save: the folder failures are saved in '[^']*plain/sub' cannot be created: '[^']*plain' is not a folder"
             "fuzz --save FILE/sub is not refused")
file(MAKE_DIRECTORY "${WORK}/fx")
file(WRITE "${WORK}/fx/failures" "")
kcheck(2 run "${CASES}/conv/conv_bias.yaml" --plugin "${PLUGIN}" --backend example.scaled_dw --report "${WORK}/fx/r.json")
expect_match("--report: the failures folder next to the report '[^']*fx/failures' is a file, not a folder"
             "run --report where failures/ is a file is not refused")
if(EXISTS "${WORK}/fx/r.json" OR out MATCHES "results in")
  message(FATAL_ERROR "run --report where failures/ is a file ran:\n${out}")
endif()

# A file that cannot be written during the run (here a folder stands where it goes):
# named, never said to be written, and the exit status says so (2).
set(first_name "001-conv2d-bias-true-db-sums-dy-over-batch-a.example.scaled_dw.backward.yaml")
file(MAKE_DIRECTORY "${WORK}/mid/failures/${first_name}")
kcheck(2 run "${CASES}/conv/conv_bias.yaml" --plugin "${PLUGIN}" --backend example.scaled_dw --report "${WORK}/mid/r.json")
expect_match("cannot write the failure reproducer [^\n]*${first_name}" "an unwritten reproducer is not named")
# The others are named for what failed and start with the command that reruns them,
# every argument quoted.
file(READ "${WORK}/mid/failures/002-conv2d-bias-false-the-same-problem-witho.example.scaled_dw.backward.yaml" second)
if(NOT second MATCHES "^# rerun: kcheck run '[^\n]*002-[^\n]*' --backend 'example.scaled_dw' --plugin '[^\n]+'\n# kcheck reproducer:")
  message(FATAL_ERROR "a reproducer does not start with the command that reruns it:\n${second}")
endif()
file(READ "${WORK}/mid/r.json" mid_report)
if(NOT mid_report MATCHES "\"reproducer_file\": \"[^\"]*failures/002-conv2d-bias-false[^\"]*backward.yaml\"")
  message(FATAL_ERROR "the report does not give each failure's reproducer file:\n${mid_report}")
endif()
string(REGEX MATCH "([0-9]+) failure reproducers in" said "${out}")
file(GLOB written "${WORK}/mid/failures/*.yaml")
list(LENGTH written n_written)
math(EXPR n_files "${n_written} - 1")  # the folder in the way is not a reproducer
if(NOT said OR NOT CMAKE_MATCH_1 EQUAL n_files)
  message(FATAL_ERROR "run says '${said}' with ${n_files} reproducers written:\n${out}")
endif()
# --skip-checks: the checks named run on no case; one a case names is SKIPPED saying why,
# the summary names them, and a reproducer's rerun line leaves them out too.
kcheck(1 run "${CASES}/conv/conv_bias.yaml" --plugin "${PLUGIN}" --backend example.scaled_dw --skip-checks gradcheck,state
       --report "${WORK}/skip/r.json")
expect_match("checks left out \\(--skip-checks\\): gradcheck,state\n" "the summary does not name the checks left out")
file(GLOB skip_repro "${WORK}/skip/failures/*.yaml")
list(GET skip_repro 0 first_repro)
file(READ "${first_repro}" first_text)
if(NOT first_text MATCHES "^# rerun: kcheck run [^\n]* --skip-checks 'gradcheck,state'\n")
  message(FATAL_ERROR "a reproducer of a --skip-checks run does not rerun with them:\n${first_text}")
endif()
file(READ "${WORK}/skip/r.json" skip_report)
if(skip_report MATCHES "\"name\": \"gradcheck\"" OR NOT skip_report MATCHES "\"skipped_checks\": \"gradcheck,state\"")
  message(FATAL_ERROR "a --skip-checks run ran gradcheck, or its report does not say what it left out:\n${skip_report}")
endif()
file(WRITE "${WORK}/skip/named.yaml" "op: conv\ninput: {batch: 1, channels: 1, spatial: [5]}\nconv: {out_channels: 1, kernel: [3]}\nchecks: [shape, gradcheck]\n")
kcheck(0 run "${WORK}/skip/named.yaml" --backend reference --skip-checks gradcheck --report "${WORK}/skip/named.json")
file(READ "${WORK}/skip/named.json" named_report)
if(NOT named_report MATCHES "\"name\": \"gradcheck\", \"disposition\": \"SKIPPED\", \"message\": \"left out by --skip-checks\"")
  message(FATAL_ERROR "a check the case names and --skip-checks leaves out is not SKIPPED saying why:\n${named_report}")
endif()
kcheck(2 run "${WORK}/skip/named.yaml" --skip-checks gradchek)
expect_match("--skip-checks: no check is named 'gradchek' \\(see kcheck checks\\)" "a misspelt --skip-checks is not refused")
kcheck(2 run "${WORK}/skip/named.yaml" --skip-checks ,)
expect_match("--skip-checks: expected check names separated by commas, got ','" "an empty --skip-checks is not refused")

# kcheck fuzz: the same seed finds the same failure; with a folder where its first file
# goes, that file is NOT saved, the reproduce command names the one that was.
set(fuzz_args fuzz --backend gen.dw_last_position --plugin "${FUZZ_PLUGIN}" --seed 1 --count 200 --max-failures 1
    --shrink-time 5 --jobs 1)
kcheck(1 ${fuzz_args} --save "${WORK}/saved_a")
if(NOT out MATCHES "saved ([^\n]*/)(fuzz-s1-c[0-9]+-[a-z_]+)\\.yaml\n")
  message(FATAL_ERROR "fuzz did not save the planted bug:\n${out}")
endif()
set(stem "${CMAKE_MATCH_2}")
file(MAKE_DIRECTORY "${WORK}/saved_b/${stem}.yaml")
kcheck(2 ${fuzz_args} --save "${WORK}/saved_b")
expect_match("NOT saved \\(cannot write it\\): [^\n]*saved_b/${stem}.yaml\n" "an unwritten fuzz case is not named")
expect_match("saved [^\n]*saved_b/${stem}-shrunk.yaml\n  reproduce: kcheck run [^\n]*${stem}-shrunk.yaml"
             "the written shrunk case is not the one to reproduce")
if(out MATCHES "\n  saved [^\n]*saved_b/${stem}.yaml\n")
  message(FATAL_ERROR "fuzz says it saved a file it could not write:\n${out}")
endif()

# A report written inside a folder the run scans: the same command gives the same result
# twice in a row (its failures/ folder is its own output, not cases to read), and a
# report or JUnit file with a case file's name there is refused before the first run.
set(s "${WORK}/scanned")
file(COPY "${CASES}/conv/conv_bias.yaml" DESTINATION "${s}")
foreach(attempt 1 2)
  kcheck(1 run "${s}" --plugin "${PLUGIN}" --backend example.scaled_dw --report "${s}/report.json")
endforeach()
if(NOT EXISTS "${s}/failures")
  message(FATAL_ERROR "the scanned-folder run wrote no reproducers, so it tests nothing:\n${out}")
endif()
foreach(name r.yml R.YAML conv_bias.expect)
  kcheck(2 run "${s}" --backend reference --report "${s}/sub/${name}")
  expect_match("--report: '[^']*${name}' would be a case file \\(or a NAME.expect\\) inside" "a report named ${name} in a scanned folder is not refused")
endforeach()
file(CREATE_LINK "${s}/linked.yaml" "${WORK}/to_scanned.json" SYMBOLIC)  # dangling: writing it creates linked.yaml
kcheck(2 run "${s}" --backend reference --junit "${WORK}/to_scanned.json")
expect_match("--junit: '[^']*to_scanned.json' would be a case file" "a JUnit file linked into a scanned folder is not refused")
# Files of the user's own in the report's failures folder are read, and then refused.
file(WRITE "${s}/failures/mine.yaml" "")
kcheck(2 run "${s}" --backend reference --report "${s}/report.json")
expect_match("holds the input case file '[^']*mine.yaml'" "a user's file in a scanned failures folder is not refused")
file(REMOVE "${s}/failures/mine.yaml")
kcheck(2 ${fuzz_args} --save "${WORK}/saved_a" --report "${WORK}/saved_a/f.yml")
expect_match("--report: '[^']*f.yml' has a case file's name under" "a fuzz report named .yml in the save folder is not refused")

# `..` after a linked folder is resolved through the link, and a dangling link is
# followed to the file it would create: either way two outputs that are one file clash.
set(l "${WORK}/links")
file(MAKE_DIRECTORY "${l}/c2/inner")
file(CREATE_LINK "${l}/c2/inner" "${l}/l3" SYMBOLIC)
kcheck(2 run "${CASES}/conv/conv1d.yaml" --backend reference --report "${l}/l3/../new.json" --junit "${l}/c2/new.json")
expect_match("--report and --junit name the same file" "'..' after a linked folder hid a clash")
file(CREATE_LINK "${l}/nowhere.json" "${l}/dangling.json" SYMBOLIC)
kcheck(2 run "${CASES}/conv/conv1d.yaml" --backend reference --report "${l}/dangling.json" --junit "${l}/nowhere.json")
expect_match("--report and --junit name the same file" "a dangling link hid a clash")
# A dangling link is written through, so the folder of the file it names must exist:
# refused before the run, not after it.
file(CREATE_LINK "${l}/missing/r.json" "${l}/into_missing.json" SYMBOLIC)
kcheck(2 run "${CASES}/conv/conv1d.yaml" --backend reference --report "${l}/into_missing.json")
expect_match("--report: '[^']*into_missing.json' is a link to '[^']*missing/r.json', whose folder does not exist"
             "a dangling link into a missing folder is not refused before the run")
if(out MATCHES "results in")
  message(FATAL_ERROR "the run went ahead before refusing the report:\n${out}")
endif()
