# cmake -P driver: Python backends through kcheck --python (docs/python.md): the numpy
# example passes the conv and max-pool corpus, its planted bug is caught, and each way a
# module can misbehave has its disposition, message and exit status.
#   -DKCHECK=path -DWORK=dir -DROOT=source tree
include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(example "${ROOT}/examples/python/numpy_kernels.py")
set(fixture "${CMAKE_CURRENT_LIST_DIR}/fixture_backends.py")
set(small "${WORK}/small.yaml")
file(WRITE "${small}" "name: python conv\nop: conv\ndtype: f32\ninput: {batch: 2, channels: 2, spatial: [6, 5]}\n"
                      "conv: {out_channels: 3, kernel: 3, padding: 1, bias: true}\ndata: {seed: 5}\n")

# The example passes the conv, max-pool and fused cases it supports (the whole corpus
# takes 45 s: docs/python.md), ties, -inf windows and NaN through relu among them.
kcheck(0 run ${ROOT}/cases/conv/conv1d.yaml ${ROOT}/cases/conv/conv2d_groups.yaml ${ROOT}/cases/maxpool/pool_neg_inf.yaml
       ${ROOT}/cases/maxpool/pool_ties.yaml ${ROOT}/cases/conv_bias_relu/golden_fused.yaml --python "${example}"
       --backend numpy.conv --jobs 2 --quiet)
expect_match("numpy.conv +[1-9][0-9]+ +0 +0 " "the numpy example does not pass the corpus")
# Its planted bug is caught, and named for what it is.
kcheck(1 run ${ROOT}/cases/conv/conv1d.yaml --python "${example}" --backend numpy.conv.one_sample_dw --quiet)
expect_match("partial sum \\(dw = sample 0 alone" "the planted one-sample dw is not diagnosed")

# A Python exception is the check's failure, with the traceback; its reproducer reruns it.
kcheck(1 run "${small}" --python "${fixture}" --backend py.raises --quiet --report "${WORK}/raises/report.json")
expect_match("Traceback.*ValueError: planted in conv_forward" "an exception's traceback is not in the result")
file(GLOB reproducers "${WORK}/raises/failures/*.yaml")
list(GET reproducers 0 reproducer)
file(STRINGS "${reproducer}" rerun LIMIT_COUNT 1)
if(NOT rerun MATCHES "--backend 'py.raises' --python '[^']*fixture_backends.py'")
  message(FATAL_ERROR "the reproducer's rerun line does not load the module: ${rerun}")
endif()
# A missing op is unimplemented: SKIPPED, as for a C++ backend.
kcheck(0 run "${small}" --python "${fixture}" --backend py.no_ops --quiet --allow-empty)
expect_match("py.no_ops has no conv_forward\\(\\)" "a missing op is not named")
kcheck(1 run "${small}" --python "${fixture}" --backend py.wrong_shape --quiet)
expect_match("y: shape \\[3, 4, 7, 6\\] where \\[2, 3, 6, 5\\] is due" "a wrong shape is not named")
kcheck(1 run "${small}" --python "${fixture}" --backend py.wrong_dtype --quiet)
expect_match("format 'd' \\(8 bytes\\) where the case's f32" "a wrong dtype is not named")
kcheck(1 run "${small}" --python "${fixture}" --backend py.writes_input --quiet)
expect_match("read-only" "a write into an input is not refused")
kcheck(2 run "${small}" --python "${fixture}" --backend py.unavailable --quiet)
expect_match("py.unavailable.*needs a device this machine lacks" "available()'s reason is not given")

# Python runs in workers only, and a worker serves many cases: 6 cases, 2 workers.
set(many "${WORK}/many")
file(MAKE_DIRECTORY "${many}")
foreach(i RANGE 1 6)
  file(WRITE "${many}/c${i}.yaml" "name: c${i}\nop: conv\ndtype: f32\ninput: {batch: 1, channels: 1, spatial: [4]}\n"
                                  "conv: {out_channels: 1, kernel: 1}\ndata: {seed: ${i}}\nchecks: [forward]\n")
endforeach()
set(ENV{KC_PY_TEST_PIDS} "${WORK}/pids")
kcheck(1 run "${many}" --python "${fixture}" --backend py.pid --jobs 2 --quiet)
file(STRINGS "${WORK}/pids" pids)
list(LENGTH pids calls)
list(REMOVE_DUPLICATES pids)
list(LENGTH pids processes)
if(NOT calls EQUAL 6 OR processes GREATER 2)
  message(FATAL_ERROR "py.pid: ${calls} calls in ${processes} processes, want 6 calls in at most 2 workers")
endif()

# Bad input: exit 2 naming the file and why.
kcheck(2 run "${small}" --python "${CMAKE_CURRENT_LIST_DIR}/import_error.py")
expect_match("import_error.py.*ModuleNotFoundError: No module named 'kernelcheck_no_such_module'"
             "an import error is not exit 2 with its traceback")
kcheck(2 run "${small}" --python "${WORK}/absent.py")
expect_match("--python .*absent.py: no such file" "a missing module file is not named")
# A module whose import hangs is the module's error, within the probe's time, leaving no process.
file(WRITE "${WORK}/hangs.py" "import time\ntime.sleep(600)\n")
kcheck(2 run "${small}" --python "${WORK}/hangs.py" --timeout 2)
expect_match("hangs.py: importing it and asking its backends took more than 1.8 s" "a hung import is not named")
execute_process(COMMAND pgrep -f "${WORK}/hangs.py" RESULT_VARIABLE found OUTPUT_QUIET)
if(found EQUAL 0)
  message(FATAL_ERROR "a process importing hangs.py outlived kcheck")
endif()

# The other commands take --python too: backends lists the module's, fuzz checks generated
# cases on one (its reproduce line loads the module; a worker imports it once for many
# cases), bench times one.
kcheck(0 backends --python "${example}")
expect_match("numpy.conv +available\n +numerics: accumulation f64" "backends --python does not list the module's")
kcheck(0 fuzz --python "${example}" --backend numpy.conv --op maxpool --count 12 --seed 3 --jobs 2
       --save "${WORK}/fuzz")
expect_match("backend numpy.conv" "fuzz --python did not run the module's backend")
kcheck(1 fuzz --python "${example}" --backend numpy.conv.one_sample_dw --op conv --count 12 --seed 3 --jobs 2
       --save "${WORK}/fuzz_planted" --max-failures 1)
expect_match("reproduce: kcheck run [^\n]* --backend numpy.conv.one_sample_dw --python [^\n]*numpy_kernels.py"
             "fuzz's reproduce line does not load the module")
kcheck(0 bench "${ROOT}/cases/bench/python/maxpool.yaml" --python "${example}" --backend numpy.conv --no-ceilings
       --min-reps 3 --max-reps 3 --out "${WORK}/bench.json")
file(READ "${WORK}/bench.json" bench)
if(NOT bench MATCHES "\"kc_backend\": \"numpy.conv\"")
  message(FATAL_ERROR "bench --python timed nothing of numpy.conv:\n${bench}")
endif()
