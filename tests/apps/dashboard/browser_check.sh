#!/bin/sh
# The dashboard in a real headless browser: renders the fixtures' page, has chromium dump
# its DOM and take a screenshot, and checks the DOM has the charts, the regression row and
# the seed tables. Skipped (the reason on stdout) where chromium is not installed.
# usage: browser_check.sh KCHECK_DASHBOARD FIXTURES_DIR WORK_DIR
set -u
dash=$1 fixtures=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium)"
  exit 0
fi
mkdir -p "$work" || exit 1
page="$work/dashboard.html"
"$dash" "$fixtures"/kc_machine_a_run1.json "$fixtures"/kc_machine_a_run2.json "$fixtures"/kc_machine_b_run1.json \
  -o "$page" >/dev/null || { echo "FAIL: kcheck-dashboard exited $?"; exit 1; }
flags="--headless --no-sandbox --disable-gpu --user-data-dir=$work/profile"
"$browser" $flags --dump-dom "file://$page" >"$work/dom.html" 2>"$work/chromium.log" || {
  echo "FAIL: chromium --dump-dom exited $?"; cat "$work/chromium.log"; exit 1; }
"$browser" $flags --screenshot="$work/dashboard.png" --window-size=1400,3000 "file://$page" \
  >>"$work/chromium.log" 2>&1 || { echo "FAIL: chromium --screenshot exited $?"; exit 1; }
fail=0
expect() {  # expect COUNT PATTERN: the DOM holds PATTERN exactly COUNT times
  n=$(grep -o "$2" "$work/dom.html" | wc -l)
  if [ "$n" -ne "$1" ]; then echo "FAIL: the DOM has '$2' $n times, expected $1"; fail=1; fi
}
expect 4 '<svg class="chart"'
expect 4 '<path class="series"[^>]*stroke="#333333"'
expect 1 '<tr class="regression">'
expect 2 '<table class="seed" data-key="checkpoint">'
expect 2 '<section class="machine"'
size=$(wc -c <"$work/dashboard.png" 2>/dev/null || echo 0)
if [ "$size" -lt 10000 ]; then echo "FAIL: the screenshot $work/dashboard.png has $size bytes"; fail=1; fi
[ $fail -eq 0 ] && echo "PASS: charts, regression row and seed tables in chromium's DOM; screenshot $work/dashboard.png"
exit $fail
