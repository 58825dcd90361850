# kcheck-dashboard over the fixtures of tests/apps/dashboard/fixtures: --check's exit
# status, committed history (--git-dir), and the page in headless chromium (skipped with
# the reason where it is absent). Included by tests/CMakeLists.txt; labels cpu;smoke.
set(kc_dash_fixtures "${CMAKE_CURRENT_SOURCE_DIR}/apps/dashboard/fixtures")
set(kc_dash $<TARGET_FILE:kcheck-dashboard>)

kc_shell_test(dashboard.check_passes_one_clean_run "check: ok.*exit=0"
  "\"$0\" --check \"$1\"/kc_machine_a_run1.json 2>&1; echo \"exit=$?\"" ${kc_dash} ${kc_dash_fixtures})
kc_shell_test(dashboard.check_fails_on_a_regression
  "REGRESSION conv_resnet / conv_forward / warm f32 mykern.*check: FAILED.*exit=1"
  "\"$0\" --check \"$1\"/kc_machine_a_run1.json \"$1\"/kc_machine_a_run2.json 2>&1; echo \"exit=$?\""
  ${kc_dash} ${kc_dash_fixtures})
kc_shell_test(dashboard.check_fails_on_a_missed_target_and_failures
  "target missed: mykern conv_forward / onednn.*1 failure\\(s\\) recorded.*exit=1"
  "\"$0\" --check \"$1\"/kc_machine_b_run1.json 2>&1; echo \"exit=$?\"" ${kc_dash} ${kc_dash_fixtures})
kc_shell_test(dashboard.without_check_a_failed_run_exits_0 "check: FAILED.*exit=0"
  "\"$0\" \"$1\"/kc_machine_b_run1.json 2>&1; echo \"exit=$?\"" ${kc_dash} ${kc_dash_fixtures})
kc_shell_test(dashboard.bad_input_exits_2_naming_file_and_field
  "bad.json: benchmarks\\[0\\].real_time: missing or not a number.*exit=2"
  "d=$(mktemp -d) && echo '{\"benchmarks\": [{\"name\": \"a\"}]}' > $d/bad.json && \"$0\" --check $d/bad.json 2>&1; echo \"exit=$?\"; rm -rf $d"
  ${kc_dash})
kc_shell_test(dashboard.unknown_option_exits_2 "unknown option '--frobnicate'.*exit=2"
  "\"$0\" --frobnicate 2>&1; echo \"exit=$?\"" ${kc_dash})
# Every committed bench JSON under reports/ (kcheck run reports there are skipped).
kc_shell_test(dashboard.git_dir_reads_the_committed_reports
  "reference conv fwd / Eigen GEMM \\(f64\\) +target >= 0.40.*dashboard: .*exit=0"
  "cd \"$1\" && \"$0\" --git-dir reports -o \"$2\" 2>&1; echo \"exit=$?\""
  ${kc_dash} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/dashboard_committed.html)

add_test(NAME dashboard.renders_in_headless_chromium
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/apps/dashboard/browser_check.sh ${kc_dash} ${kc_dash_fixtures}
                 ${CMAKE_CURRENT_BINARY_DIR}/dashboard_browser)
set_tests_properties(dashboard.renders_in_headless_chromium PROPERTIES LABELS "cpu" TIMEOUT 120
                     SKIP_REGULAR_EXPRESSION "SKIPPED: " PASS_REGULAR_EXPRESSION "PASS: ")
