# cmake -P driver: the torch.library example (docs/python.md, "A torch.library operator"):
# its backend, calling the kc_examples operators through torch.ops, passes a corpus subset,
# and its planted bug (the output zero-padded instead of the input) is caught and named.
#   -DKCHECK=path -DWORK=dir -DROOT=source tree
include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(example "${ROOT}/examples/python/torch_library_ops.py")

# Conv with groups, ceil-mode pool shapes, ties, the fused op's golden values (the whole
# conv, maxpool and conv_bias_relu folders take about 45 s on 2 cores).
kcheck(0 run ${ROOT}/cases/conv/conv1d.yaml ${ROOT}/cases/conv/conv2d_groups.yaml
       ${ROOT}/cases/maxpool/pool_ceil_mode.yaml ${ROOT}/cases/maxpool/pool_ties.yaml
       ${ROOT}/cases/conv_bias_relu/golden_fused.yaml --python "${example}" --backend torch_library.conv --jobs 2 --quiet)
expect_match("torch_library.conv +[1-9][0-9]+ +0 +0 " "the torch.library example does not pass the corpus")
# The planted bug: border outputs 0, and the padding check says why.
kcheck(1 run ${ROOT}/cases/conv/conv2d_padding_forms.yaml --python "${example}"
       --backend torch_library.conv.no_padding --jobs 2 --quiet)
set(named "padding: FAILED: y differs [^\n]*\\(the border\\), all in windows that overlap the padding")
expect_match("${named}: padded positions read 0" "the planted output padding is not diagnosed")
