# cmake -P driver: the PyTorch peer (peers/torch/torch_peer.py) where torch is missing:
# its backends are listed unavailable with the reason (the module still imports), and
# naming one is exit 2 with it. The corpus run itself is the test torch.corpus.
#   -DKCHECK=path -DWORK=dir -DROOT=source tree
include("${CMAKE_CURRENT_LIST_DIR}/../support/kcheck_driver.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/hidden/torch")
# A torch package that fails to import, first on the embedded interpreter's path.
file(WRITE "${WORK}/hidden/torch/__init__.py" "raise ImportError('No module named torch (hidden by the test)')\n")
set(peer "${ROOT}/peers/torch/torch_peer.py")
set(case "${ROOT}/cases/conv/conv1d.yaml")

execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${WORK}/hidden" "${KCHECK}" run "${case}" --python "${peer}"
                        --backend reference --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_exit(0 "the corpus with the peer loaded and torch missing")
expect_match("torch +unavailable: No module named torch \\(hidden by the test\\) \\(apt-get install python3-torch"
             "torch missing is not named as the reason")
expect_match("torch.cuda +unavailable: No module named torch" "torch.cuda's reason is not given")

execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${WORK}/hidden" "${KCHECK}" run "${case}" --python "${peer}"
                        --backend torch --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_exit(2 "naming the torch peer where torch is missing")
expect_match("--backend torch: unavailable \\(No module named torch" "the reason is not in the usage error")

# Where torch is there: its CPU backend is available, torch.cuda says why it is not
# (Debian's torch has no CUDA; with a CUDA torch and no device, that).
kcheck(0 run "${case}" --python "${peer}" --backend torch --quiet)
expect_match("torch +available, 13 cases: 13 passed" "the torch peer does not pass conv1d")
expect_match("torch.cuda +(unavailable: torch [^\n]*(without CUDA|no CUDA device)|available)" "torch.cuda's state")
