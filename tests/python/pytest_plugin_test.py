"""The pytest plugin (python/kernelcheck/pytest_plugin.py) and kernelcheck.run() end to end,
on the real kcheck ($KCHECK): each test runs an inner pytest session with pytester on a few
small corpus files and asserts what a pytest user sees. Label python; ctest runs it with
Debian's python3 (numpy for the example backends).
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import kernelcheck

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
KCHECK = os.environ.get("KCHECK") or str(ROOT / "build" / "harness" / "kcheck")
EXAMPLE = ROOT / "examples" / "python" / "numpy_kernels.py"
CONV1D_CASES = 13  # cases/conv/conv1d.yaml
PLANTED_FAILURES = 11  # of them, the ones numpy.conv.one_sample_dw fails (2 have too little to see it)


@pytest.fixture
def kc(pytester, monkeypatch):
    """An inner pytest session's folder with cases/ (conv1d, pool_nan, avgpool1d), and a runner
    that loads the plugin. Path options use `=` so that pytest's rootdir stays the folder."""
    monkeypatch.setenv("KCHECK", KCHECK)
    cases = pytester.mkdir("cases")
    for name in ("conv/conv1d.yaml", "maxpool/pool_nan.yaml", "avgpool/avgpool1d.yaml"):
        shutil.copy(ROOT / "cases" / name, cases)

    def run(*args):
        return pytester.runpytest("-p", "kernelcheck.pytest_plugin", "--kcheck-jobs=2", "-p", "no:cacheprovider", *args)

    return run


def reproducers(text):
    return re.findall(r"^reproducer: (.*)$", text, re.M)


def test_one_item_per_case_and_backend_and_collecting_checks_nothing(kc, pytester):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=reference,numpy.conv",
                f"--kcheck-python={EXAMPLE}", "--kcheck-report=out", "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert len(ids) == 2 * CONV1D_CASES
    assert "cases/conv1d.yaml::conv1d k3 s1 valid, the plain sliding window[reference]" in ids
    assert "cases/conv1d.yaml::conv1d k3 s1 valid, the plain sliding window[numpy.conv]" in ids
    assert not (pytester.path / "out" / "report.json").exists()


def test_a_passing_subset_passes(kc):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=reference,numpy.conv",
                f"--kcheck-python={EXAMPLE}")
    result.assert_outcomes(passed=2 * CONV1D_CASES)
    result.stdout.fnmatch_lines(["*kcheck*", "report: *report.json", "  numpy.conv: 13 cases, 13 passed*"])


def test_a_planted_bug_fails_with_its_diagnosis_and_a_reproducer_that_outlives_the_run(kc):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=numpy.conv.one_sample_dw",
                f"--kcheck-python={EXAMPLE}")
    result.assert_outcomes(failed=PLANTED_FAILURES, passed=CONV1D_CASES - PLANTED_FAILURES)
    text = result.stdout.str()
    assert "weight_share: FAILED: partial sum (dw = sample 0 alone: the sum over the batch is missing)" in text
    assert "FAILED on numpy.conv.one_sample_dw: backward FAILED" in text
    paths = reproducers(text)
    assert len(paths) == PLANTED_FAILURES
    for path in paths:  # still there after the session ended
        assert Path(path).is_file()
    assert "rerun: kcheck run " in text


def test_kcheck_report_names_the_folder(kc, pytester):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=numpy.conv.one_sample_dw",
                f"--kcheck-python={EXAMPLE}", "--kcheck-report=out")
    result.assert_outcomes(failed=PLANTED_FAILURES, passed=CONV1D_CASES - PLANTED_FAILURES)
    assert all(Path(p).parent == pytester.path / "out" / "failures" for p in reproducers(result.stdout.str()))
    report = kernelcheck.read_report(pytester.path / "out" / "report.json")
    assert report.summary["failed"] == PLANTED_FAILURES


def _onednn_available():
    done = subprocess.run([KCHECK, "backends"], stdout=subprocess.PIPE, text=True, check=True)
    return re.search(r"^onednn +available", done.stdout, re.M) is not None


def test_a_waived_failure_is_xfail(kc):
    if not _onednn_available():
        pytest.skip("oneDNN is not built in: its waivers have nothing to waive")
    result = kc("--kcheck-cases=cases/pool_nan.yaml", "--kcheck-backend=onednn",
                f"--kcheck-waivers={ROOT / 'peers/onednn/waivers.yaml'}", "-rxs")
    result.assert_outcomes(xfailed=4, skipped=4)
    result.stdout.fnmatch_lines(["XFAIL cases/pool_nan.yaml::pool1d NaN first*[[]onednn[]]*waived: *waivers.yaml:*"
                                 "never selects NaN*"])


def test_xpass_fails_and_a_waiver_of_ones_own_makes_xfail(kc, pytester):
    pytester.makefile(".yaml", waivers="""
        waivers:
          - case: "conv1d pointwise k1*"
            backend: reference
            check: shape
            reason: "shape passes on the reference: this waiver is stale"
          - case: "conv1d k3 s1 valid*"
            backend: numpy.conv.one_sample_dw
            check: [backward, gradcheck, adjoint, weight_share]
            reason: "the one-sample dw, known"
        """)
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=reference,numpy.conv.one_sample_dw",
                f"--kcheck-python={EXAMPLE}", "--kcheck-waivers=waivers.yaml", "-rxf")
    planted_passes = CONV1D_CASES - PLANTED_FAILURES
    result.assert_outcomes(passed=CONV1D_CASES - 1 + planted_passes, failed=1 + PLANTED_FAILURES - 1, xfailed=1)
    result.stdout.fnmatch_lines([
        "XFAIL cases/conv1d.yaml::conv1d k3 s1 valid*[[]numpy.conv.one_sample_dw[]]*waived: waivers.yaml:*known*",
        "FAILED cases/conv1d.yaml::conv1d pointwise k1, a per-position channel mix[[]reference[]]*",
    ])
    xpass = "XPASS on reference: a waived failure did not happen (shape passed): remove the waiver"
    assert xpass in result.stdout.str()


def test_skipped_is_skipped_with_the_reason(kc):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-cases=cases/avgpool1d.yaml",
                "--kcheck-backend=numpy.conv", f"--kcheck-python={EXAMPLE}", "-rs")
    result.assert_outcomes(passed=CONV1D_CASES, skipped=8)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] cases/avgpool1d.yaml:*: numpy.conv does not support this case: "
                                 "numpy.conv runs conv, conv_bias_relu and maxpool"])


def test_k_selects_and_only_the_selected_files_are_checked(kc, pytester):
    result = kc("--kcheck-cases=cases", "--kcheck-backend=reference", "--kcheck-report=out", "-k", "pointwise")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["collected * items / * deselected / 1 selected"])
    report = kernelcheck.read_report(pytester.path / "out" / "report.json")
    assert {r.file for r in report.results} == {"cases/conv1d.yaml"}


def test_x_stops_after_the_first_failure(kc):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=numpy.conv.one_sample_dw",
                f"--kcheck-python={EXAMPLE}", "-x")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1
    assert sum(outcomes.get(k, 0) for k in ("passed", "skipped", "failed")) < CONV1D_CASES
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_an_invalid_case_file_is_a_failing_item(kc, pytester):
    pytester.makefile(".yaml", **{"cases/bad": "name: bad\nop: conv\ndtype: fp16\n"
                                  "input: {batch: 1, channels: 1, spatial: [8]}\nconv: {out_channels: 1, kernel: 3}\n"})
    result = kc("--kcheck-cases=cases/bad.yaml", "--kcheck-cases=cases/conv1d.yaml", "--kcheck-backend=reference")
    result.assert_outcomes(failed=1, passed=CONV1D_CASES)
    result.stdout.fnmatch_lines(["INVALID case file: cases/bad.yaml:3: dtype: expected one of*"])


def test_kcheck_exit_2_is_a_usage_error(kc):
    result = kc("--kcheck-cases=cases/conv1d.yaml", "--kcheck-python=missing.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: kcheck exited 2 (bad usage or invalid input): kcheck: --python missing.py: "
                                 "no such file"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_kcheck_not_found_is_a_usage_error(kc, pytester, monkeypatch):
    monkeypatch.delenv("KCHECK")
    monkeypatch.setenv("PATH", str(pytester.mkdir("empty")))
    result = kc("--kcheck-cases=cases/conv1d.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: kcheck not found: *set KCHECK=*or put kcheck on PATH"])
    with pytest.raises(kernelcheck.KcheckNotFound, match="kcheck not found"):
        kernelcheck.run(ROOT / "cases/conv/conv1d.yaml")


def test_run_returns_the_report_as_objects(tmp_path):
    report = kernelcheck.run(ROOT / "cases/conv/conv1d.yaml", backends="numpy.conv.one_sample_dw", python=EXAMPLE,
                             jobs=2, kcheck=KCHECK, report_dir=tmp_path)
    assert report.returncode == 1 and report.path == str(tmp_path / "report.json")
    assert report.summary["failed"] == PLANTED_FAILURES and len(report.results) == CONV1D_CASES
    first = report.results[0]
    assert (first.case, first.line, first.backend, first.disposition) == (
        "conv1d k3 s1 valid, the plain sliding window", 7, "numpy.conv.one_sample_dw", "FAILED")
    assert first.file.endswith("cases/conv/conv1d.yaml")
    assert Path(first.reproducer_file).parent == tmp_path / "failures" and Path(first.reproducer_file).is_file()
    checks = {c.name: c for c in first.checks}
    assert checks["weight_share"].message.startswith("partial sum") and checks["forward"].disposition == "PASSED"
    assert [b.name for b in report.backends if b.ran] == ["numpy.conv.one_sample_dw"]
    with pytest.raises(kernelcheck.KcheckError, match="no such file") as e:
        kernelcheck.run(ROOT / "cases/conv/conv1d.yaml", python=tmp_path / "missing.py", kcheck=KCHECK,
                        report_dir=tmp_path / "bad")
    assert e.value.returncode == 2 and "missing.py" in e.value.stderr
