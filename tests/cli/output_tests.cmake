# The command-line tests judged by their output: one row each, name | regex | command.
# Included by tests/CMakeLists.txt after the plugins are defined (kc_plugin_case is the
# conv case they run). Labels: cpu;smoke. Named parameters keep a ';' inside a regex or
# a shell script whole (a list argument would split there).

# kc_output_test(NAME REGEX COMMAND...): the command's output must match REGEX.
function(kc_output_test name regex)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "cpu;smoke" PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

# kc_shell_test(NAME REGEX SCRIPT ARGS...): `sh -c SCRIPT ARGS...` (stderr and the exit
# status folded into the output by the script) must match REGEX.
function(kc_shell_test name regex script)
  add_test(NAME ${name} COMMAND sh -c "${script}" ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "cpu;smoke" PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

set(kc_cases "${PROJECT_SOURCE_DIR}/cases")
set(kc_example $<TARGET_FILE:kc_example_plugin>)
set(kc_crashed "CRASHED  conv2d bias true[^\n]*")

# kcheck-dashboard
kc_shell_test(dashboard.cli_unreadable_run_exits_2_naming_it "/nonexistent/run.json: cannot be read.*exit=2"
  "\"$0\" /nonexistent/run.json 2>&1; echo \"exit=$?\"" $<TARGET_FILE:kcheck-dashboard>)
kc_output_test(dashboard.cli_judges_the_committed_cpu_run
  "reference conv fwd / Eigen GEMM \\(f64\\) +target >= 0.40 +newest (MET|MISSED)"
  kcheck-dashboard "${PROJECT_SOURCE_DIR}/reports/cpu/kcheck-bench.json")

# kcheck explain: the 50-layer stacks (valid erodes 128x128 to 28x28, same keeps it), a
# stack refused because a layer erodes to nothing (the layers up to that one), the
# accumulation, and a receptive field past INT64_MAX.
kc_output_test(explain.valid_stack_names_the_erosion
  "extent 128x128 -> 28x28 after 50 layers; erosion: 100, 100 pixels lost per dimension"
  kcheck explain "${kc_cases}/stack/valid_50_layers.yaml")
kc_output_test(explain.same_stack_keeps_the_extent "extent 128x128 -> 128x128 after 50 layers; erosion: 0, 0 pixels"
  kcheck explain "${kc_cases}/stack/same_50_layers.yaml")
kc_output_test(explain.refused_stack_shows_the_layers_up_to_the_empty_one
  "INVALID: .*stack layer 37: .*\n  36 +\\[1, 2, 4, 4\\] +\\[1, 2, 2, 2\\] *\n  37 +\\[1, 2, 2, 2\\] +empty +<- refused\n"
  kcheck explain "${kc_cases}/stack/erodes_to_nothing.yaml")
kc_output_test(explain.names_the_accumulation
  "conv f16, accumulation f16  .*conv f16, accumulation f32  .*conv f32, accumulation f64"
  kcheck explain "${kc_cases}/dtype/accumulation.yaml")
kc_output_test(explain.receptive_field_past_int64
  "receptive field: \\[9223372036854775807\\]\n.*receptive field: \\[more than 2\\^63 - 1\\]\n"
  kcheck explain "${CMAKE_CURRENT_SOURCE_DIR}/cli/cases/deep_strided_stacks.yaml")

# --plugin: a planted bug is caught, a library built for another ABI is refused without
# being called; a plugin's exceptions are its case's CRASHED or its probe's unavailable,
# naming the call, and kcheck goes on.
kc_output_test(plugin.planted_bug_is_caught "backward: FAILED: dw:"
  kcheck run ${kc_plugin_case} --plugin ${kc_example} --backend example.scaled_dw)
# --report with {backend}: one report per backend, each holding only its own results and
# its own failures/ (the planted bug's reproducers under its backend's folder only).
kc_shell_test(run.report_per_backend
  "reference: 7 results, 0 failures\nexample.scaled_dw: 7 results, 7 failures\nexit=1"
  "d=\$(mktemp -d) && \"$0\" run \"$1\" --plugin \"$2\" --backend reference,example.scaled_dw --quiet --report \"\$d/{backend}/r.json\" >/dev/null 2>&1; e=\$?; for b in reference example.scaled_dw; do n=\$(grep -c '\"backend\": \"'\$b'\"' \"\$d/\$b/r.json\"); f=\$(ls \"\$d/\$b/failures\" 2>/dev/null | wc -l); echo \"\$b: \$n results, \$f failures\"; done; echo exit=\$e; rm -rf \"\$d\""
  $<TARGET_FILE:kcheck> ${kc_plugin_case} ${kc_example})
kc_output_test(plugin.listed_by_backends "example.scaled_dw +available" kcheck backends --plugin ${kc_example})
kc_output_test(plugin.wrong_abi_is_refused "built for plugin ABI version [0-9]+, this kcheck has version [0-9]+; rebuild"
  kcheck backends --plugin $<TARGET_FILE:kc_wrong_abi_plugin>)
kc_output_test(plugin.exception_is_a_crash_of_its_case
  "${kc_crashed}\\[example.throws\\][^\n]*\n +exception: example forward throws"
  kcheck run ${kc_plugin_case} --plugin ${kc_example} --backend example.throws)
# An exception from a backend's name(), outside the checks' own catch: in a worker and in
# kcheck's own process (--in-process) alike.
kc_output_test(plugin.exception_from_name_is_a_crash_of_its_case.worker
  "${kc_crashed}\\[example.throws_name\\][^\n]*\n +exception: example name throws"
  kcheck run ${kc_plugin_case} --plugin ${kc_example} --backend example.throws_name)
kc_output_test(plugin.exception_from_name_is_a_crash_of_its_case.in_process
  "${kc_crashed}\\[example.throws_name\\][^\n]*\n +exception: example name throws"
  kcheck run ${kc_plugin_case} --plugin ${kc_example} --backend example.throws_name --in-process)
kc_output_test(plugin.exception_in_the_probe_is_unavailable
  "example.throws_probe +unavailable \\(its available\\(\\) threw: example probe throws\\)"
  kcheck backends --plugin ${kc_example})
# Named with --backend, the throwing probe makes the backend unavailable: exit 2, naming the call.
kc_shell_test(plugin.exception_in_the_probe_is_refused_when_named
  "--backend example.throws_probe: unavailable \\(its available\\(\\) threw: example probe throws\\)\n.*exit=2\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.throws_probe 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case})
# A run that checks nothing is never green: a plugin backend that supports no case exits 2
# naming it and why its cases were skipped, unless --allow-empty; the summary lists every
# backend considered with its state.
kc_shell_test(run.nothing_checked_on_a_plugin_exits_2
  "nothing was checked on example.refuses_all: 7 of 7 SKIPPED, top reasons: [^\n]*runs nothing \\(7\\)\n.*exit=2\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.refuses_all 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case})
kc_shell_test(run.allow_empty_accepts_a_run_that_checks_nothing
  "example.refuses_all +available, 7 cases: 0 passed, 7 skipped, [0-9.]+ s\n.*exit=0\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.refuses_all --allow-empty 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case})
kc_output_test(run.summary_names_every_backend_considered
  "backends considered:\n  reference +available, 7 cases: 7 passed, 0 skipped, [0-9.]+ s\n  cuda +(unavailable: [^\n]+|available[^\n]*)\n  cuda.direct +(unavailable: [^\n]+|available[^\n]*)\n  cudnn +(unavailable: [^\n]+|available[^\n]*)\n"
  kcheck run ${kc_plugin_case} --backend reference)
# A plugin whose registration throws: named with the exception, exit 2 (not an abort), in
# every command that loads plugins; a static constructor that throws inside dlopen too.
set(kc_throws "--plugin [^\n]*kc_throwing_plugin[^\n]*: kc_register_backends threw: throwing plugin: cannot register\n.*exit=2\n")
kc_shell_test(plugin.registration_that_throws_is_refused.backends "${kc_throws}"
  "\"$0\" backends --plugin \"$1\" 2>&1; echo \"exit=$?\"" $<TARGET_FILE:kcheck> $<TARGET_FILE:kc_throwing_plugin>)
kc_shell_test(plugin.registration_that_throws_is_refused.run "${kc_throws}"
  "\"$0\" run ${kc_plugin_case} --plugin \"$1\" 2>&1; echo \"exit=$?\"" $<TARGET_FILE:kcheck> $<TARGET_FILE:kc_throwing_plugin>)
kc_shell_test(plugin.registration_that_throws_is_refused.fuzz "${kc_throws}"
  "\"$0\" fuzz --count 1 --plugin \"$1\" 2>&1; echo \"exit=$?\"" $<TARGET_FILE:kcheck> $<TARGET_FILE:kc_throwing_plugin>)
kc_shell_test(plugin.registration_that_throws_a_non_standard_type_is_refused
  "kc_register_backends threw an exception of a non-standard type\n.*exit=2\n"
  "\"$0\" backends --plugin \"$1\" 2>&1; echo \"exit=$?\"" $<TARGET_FILE:kcheck> $<TARGET_FILE:kc_throwing_odd_plugin>)
kc_shell_test(plugin.static_constructor_that_throws_is_refused
  "kcheck: --plugin [^\n]*kc_throwing_static_plugin[^\n]*: a static constructor threw while the library loaded: throwing plugin: static constructor failed\n.*exit=2\n"
  "\"$0\" run \"$2\" --backend reference --plugin \"$1\" 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> $<TARGET_FILE:kc_throwing_static_plugin> ${kc_plugin_case})

# Fast failure: after K crashed or timed-out results in a row on a backend (3 by
# default) its other cases are not started; after --max-failures N failed results no
# case is. Either way they are SKIPPED with why, and the run still fails.
kc_shell_test(run.crashes_in_a_row_stop_a_backend
  "skipped on gen.crash_on_stride: [0-9]+ x not run: 3 cases in a row crashed or timed out on gen.crash_on_stride \\(--max-crashes 3\\)\n.*exit=1\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend gen.crash_on_stride 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> $<TARGET_FILE:kc_gen_planted_bug> "${kc_cases}/conv")
kc_shell_test(run.max_failures_stops_the_run
  "example.scaled_dw +0 +2 +0 +[0-9]+ .*skipped on example.scaled_dw: [0-9]+ x not run: --max-failures 2 reached\n.*exit=1\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.scaled_dw --max-failures 2 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} "${kc_cases}/conv")

# Waivers: failures they name are XFAIL (exit 0, skipped in JUnit), an expired waiver is
# ignored and named; a waived failure that does not happen is XPASS (exit 1); a bad
# waiver file is refused naming the file, line and field (exit 2).
kc_shell_test(run.waived_failures_are_xfail
  "waivers: 7 XFAIL, 0 XPASS\n  expired, ignored: [^\n]*scaled_dw.yaml:7 \\(expired 2020-01-01\\): long fixed\n.*exit=0\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.scaled_dw --waivers \"$3\" 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case} "${CMAKE_CURRENT_SOURCE_DIR}/cli/waivers/scaled_dw.yaml")
# Several --waivers files apply together (one per library): the second file's waivers
# make the failures XFAIL; the first's, for another backend, are counted.
kc_shell_test(run.waiver_files_apply_together
  "waivers: 7 XFAIL, 0 XPASS\n.*waiver\\(s\\) for cases or backends not in this run\n.*exit=0\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.scaled_dw --waivers \"$3\" --waivers \"$4\" 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case} "${CMAKE_CURRENT_SOURCE_DIR}/cli/waivers/stale.yaml"
  "${CMAKE_CURRENT_SOURCE_DIR}/cli/waivers/scaled_dw.yaml")
kc_shell_test(run.a_waived_failure_that_passes_is_xpass
  "XPASS  [^\n]*\n    backward: XPASS: a waived failure did not happen .*waivers: 0 XFAIL, 7 XPASS\n.*exit=1\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.correct --waivers \"$3\" 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case} "${CMAKE_CURRENT_SOURCE_DIR}/cli/waivers/stale.yaml")
kc_shell_test(run.a_bad_waiver_file_is_refused
  "--waivers: [^\n]*conv_bias.yaml:3: defaults: unknown key; allowed: waivers\n.*exit=2\n"
  "\"$0\" run \"$1\" --waivers \"$2\" 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_plugin_case} "${PROJECT_SOURCE_DIR}/cases/conv/conv_bias.yaml")

# --opt=value is --opt value; reports carry the schema version, the host and each
# result's fields; JUnit's file is the path, the line its own attribute.
kc_shell_test(run.options_take_an_equals_sign_and_reports_carry_fields
  "\"schema_version\": 2,.*\"host_cores\": \"[0-9]+\".*\"fields\": \\{\"op\": \"conv\", \"dtype\": \"f32\", \"input\": \"\\[2, 3, 6, 6\\]\", \"file\": \"[^\"]*conv_bias.yaml\", \"line\": 9\\}.*file=\"[^\"]*conv_bias.yaml\" line=\"9\".*exit=0\n"
  "\"$0\" run \"$1\" --backend=reference --report=\"$2/fields.json\" --junit=\"$2/fields.xml\" >/dev/null 2>&1; s=$?; cat \"$2/fields.json\" \"$2/fields.xml\"; echo \"exit=$s\""
  $<TARGET_FILE:kcheck> ${kc_plugin_case} "${CMAKE_CURRENT_BINARY_DIR}")

# An output that cannot be written is refused before the run, not after it (here a file
# under /proc, which even root cannot create): exit 2, and no case was run.
kc_shell_test(run.an_unwritable_report_is_refused_before_the_run
  "--report: '/proc/kcheck-nowhere/r.json' cannot be written: [^\n]+\n.*exit=2\n"
  "\"$0\" run \"$1\" --report /proc/kcheck-nowhere/r.json 2>&1; echo \"exit=$?\"" $<TARGET_FILE:kcheck> ${kc_plugin_case})
set_tests_properties(run.an_unwritable_report_is_refused_before_the_run PROPERTIES FAIL_REGULAR_EXPRESSION "results in")

# Fuzzing fits the backend: against a plugin that runs f32 2-D conv only, the draws its
# supports() refuses are passed over, so (nearly) every generated case runs.
kc_shell_test(fuzz.steers_to_what_a_narrow_backend_runs
  "steered away from [0-9]+ draws the backend's supports\\(\\) refused\n.*exit=0\n"
  "cd \"$3\" && \"$0\" fuzz --count 1500 --seed 1 --plugin \"$1\" --backend example.f32_conv2d --save \"$2\" 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} "${CMAKE_CURRENT_BINARY_DIR}/fuzz_narrow" "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(fuzz.steers_to_what_a_narrow_backend_runs PROPERTIES
  FAIL_REGULAR_EXPRESSION "skip rate ([2-9][0-9]|100)\\.[0-9]%|generated\\) in [^\n]*\n[^\n]*passed 0,")
# A backend that hangs costs K timeouts, not one per case: 3 TIMEOUT, the rest SKIPPED.
kc_shell_test(run.a_hanging_backend_costs_three_timeouts
  "example.hangs +0 +0 +0 +4 +0 +0 +3\n.*not run: 3 cases in a row crashed or timed out on example.hangs.*exit=1\n"
  "\"$0\" run \"$2\" --plugin \"$1\" --backend example.hangs --timeout 1 --jobs 1 2>&1; echo \"exit=$?\""
  $<TARGET_FILE:kcheck> ${kc_example} ${kc_plugin_case})
