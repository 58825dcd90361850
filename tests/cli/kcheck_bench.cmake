# cmake -P driver for kcheck bench end to end: a run that times, re-checks and writes
# Google Benchmark JSON; a planted fast-but-wrong backend that fails it (exit 1); bad
# input (exit 2, naming the file); the layer set left out of a corpus scan.
#   -DKCHECK=path -DWORK=dir -DCASES=the project's cases/ folder -DTRAPS=the kc_traps plugin
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")

set(quick --min-reps 2 --min-time 0 --max-time 1)
kcheck(0 bench "${CASES}/bench/cpu/maxpool.yaml" --backend reference ${quick} --out "${WORK}/pool.json")
expect_match("host triad[^\n]*GB/s" "the bandwidth ceiling is not measured in the run")
expect_match("eigen gemm f64[^\n]*GFLOP/s" "the GEMM ceiling is not measured in the run")
expect_match("pool_backward/warm[^\n]*passed" "a timed op is not re-checked")
expect_match("Max pool training against inference" "the pool table is not printed")
file(READ "${WORK}/pool.json" json)
foreach(field "\"benchmarks\"" "\"run_type\": \"iteration\"" "\"time_unit\": \"us\"" "\"kc_op\": \"pool_training\""
        "\"kc_recheck\": \"passed\"" "\"kc_tables\"" "\"kc_targets\"" "\"kc_commit\"" "\"kc_machine\""
        "\"GB/s\"" "\"fraction_of_ceiling\"" "\"name\": \"ceiling/cpu/host triad\"")
  string(FIND "${json}" "${field}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "bench JSON lacks ${field}")
  endif()
endforeach()

# A kernel fast because it is wrong fails the bench: relu applied before the bias.
kcheck(1 bench "${CASES}/bench/cpu/fused.yaml" --plugin "${TRAPS}" --backend trap.relu_before_bias ${quick}
       --no-ceilings)
expect_match("fused_forward/warm[^\n]*FAILED" "a wrong fused forward passes its re-check")

# Bad input: an invalid case names its file (exit 2); an unknown backend and a bad option too.
file(WRITE "${WORK}/bad.yaml" "op: conv\ninput: {batch: 1, channels: 2, spatial: [5]}\nconv: {out_channels: 0, kernel: 3}\n")
kcheck(2 bench "${WORK}/bad.yaml" --no-ceilings)
expect_match("bad.yaml:[0-9]+" "an invalid case is not named by file and line")
kcheck(2 bench "${CASES}/bench/cpu/maxpool.yaml" --backend nosuch)
expect_match("unknown backend 'nosuch'" "an unknown backend is not refused")
kcheck(2 bench "${CASES}/bench/cpu/maxpool.yaml" --cache tepid)
expect_match("--cache: expected warm, cold or both" "a bad --cache is not refused")
kcheck(2 bench)
expect_match("no case file or folder given" "bench without a path is not refused")

# Every file of the layer set loads: the CPU set under the default cap, the GPU set under
# the cap gpu-bench.sh gives it.
file(GLOB cpu_set "${CASES}/bench/cpu/*.yaml")
file(GLOB gpu_set "${CASES}/bench/gpu/*.yaml")
foreach(f IN LISTS cpu_set)
  kcheck(0 explain "${f}")
endforeach()
foreach(f IN LISTS gpu_set)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env KC_MAX_CASE_BYTES=32G "${KCHECK}" explain "${f}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  expect_exit(0 "the GPU layer set's ${f} does not load under KC_MAX_CASE_BYTES=32G")
endforeach()

# The layer set is timed, not part of the corpus: a scan of cases/ leaves cases/bench out,
# naming it reads it.
file(MAKE_DIRECTORY "${WORK}/corpus/bench")
file(COPY "${CASES}/conv/conv1d.yaml" DESTINATION "${WORK}/corpus")
file(WRITE "${WORK}/corpus/bench/KCHECK_SCAN_SKIP" "timed, not checked\n")
file(WRITE "${WORK}/corpus/bench/big.yaml" "op: conv\ninput: {batch: 1, channels: 1, spatial: [5]}\nconv: {out_channels: 1, kernel: 3}\n")
kcheck(0 run "${WORK}/corpus" --backend reference)
string(FIND "${out}" "big.yaml" seen)
if(NOT seen EQUAL -1)
  message(FATAL_ERROR "a folder marked KCHECK_SCAN_SKIP was scanned:\n${out}")
endif()
kcheck(0 run "${WORK}/corpus/bench" --backend reference)
expect_match("1 case|1 passed|PASSED" "a marked folder named itself is not read")
