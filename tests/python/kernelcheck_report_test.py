"""Reading report.json into objects (python/kernelcheck/report.py) and the failure text the
pytest items show (pytest_items.py), on hand-written reports: no kcheck needed.
"""
import json

import pytest

from kernelcheck import ReportError, parse_report, read_report
from kernelcheck.pytest_items import failure_text, item_name

WAIVED = "waived (w.yaml:4: strict > (NaN never wins)): y: 3 of 4 elements outside the tolerance"
XPASSED = "a waived failure did not happen (w.yaml:9: known (see #12)); remove the waiver"


def check(name, disposition, message="", worst=()):
    return {"name": name, "disposition": disposition, "message": message, "max_error_ratio": 2.5,
            "max_abs_error": 0.1, "seconds": 0.01, "worst": list(worst)}


def report(**overrides):
    data = {
        "schema_version": 2, "tool": "kcheck", "command": "kcheck run c.yaml", "started": "2026-01-01T00:00:00Z",
        "seconds": 1.5, "kc_version": "0.1.0", "device": "none",
        "summary": {"passed": 0, "failed": 1, "xfail": 1, "xpass": 1, "total": 3},
        "backends": [{"name": "mine", "available": True, "ran": True, "cases": 3, "passed": 0, "skipped": 0},
                     {"name": "cuda", "available": False, "reason": "no NVIDIA driver"}],
        "results": [
            {"case": "conv a", "source": "c.yaml:7", "backend": "mine", "disposition": "FAILED", "message": "",
             "seconds": 0.2, "reproducer": "{name: conv a}",
             "fields": {"op": "conv", "dtype": "f32", "reproducer_file": "/r/failures/001-conv-a.mine.forward.yaml",
                        "file": "c.yaml", "line": 7},
             "checks": [check("shape", "PASSED", "y [1, 2]"),
                        check("forward", "FAILED", "y: 1 of 2 elements outside the tolerance",
                              [{"tensor": "y", "index": [0, 1], "candidate": 1.0, "reference": 2.0, "bound": 1e-5}])]},
            {"case": "pool b", "source": "c.yaml:12", "backend": "mine", "disposition": "XFAIL", "message": "",
             "seconds": 0.1, "reproducer": "", "fields": {"file": "c.yaml", "line": 12},
             "checks": [check("forward", "XFAIL", WAIVED), check("golden", "XFAIL", WAIVED)]},
            {"case": "pool c", "source": "c.yaml:20", "backend": "mine", "disposition": "XPASS", "message": "",
             "seconds": 0.1, "reproducer": "", "fields": {"file": "c.yaml", "line": 20},
             "checks": [check("argmax", "XPASS", XPASSED)]},
        ],
    }
    data.update(overrides)
    return data


def test_results_carry_case_place_backend_disposition_and_reproducer():
    r = parse_report(report())
    first = r.results[0]
    assert (first.case, first.file, first.line, first.backend, first.disposition) == ("conv a", "c.yaml", 7, "mine",
                                                                                    "FAILED")
    assert first.reproducer_file == "/r/failures/001-conv-a.mine.forward.yaml" and first.problem
    assert [c.name for c in first.checks] == ["shape", "forward"]
    assert first.checks[1].worst[0].index == (0, 1)
    assert r.results[1].reproducer_file is None
    assert r.info["kc_version"] == "0.1.0" and r.summary["xpass"] == 1
    assert [(b.name, b.available, b.reason) for b in r.backends] == [("mine", True, ""), ("cuda", False,
                                                                                         "no NVIDIA driver")]


def test_waivers_are_read_from_the_check_messages_parentheses_and_all():
    r = parse_report(report())
    assert r.results[1].waivers == ["w.yaml:4: strict > (NaN never wins)"]  # two checks, one waiver
    assert r.results[2].waivers == ["w.yaml:9: known (see #12)"]
    assert r.results[0].waivers == []


def test_diagnosis_and_headline_as_kcheck_prints_them():
    first = parse_report(report()).results[0]
    assert first.headline() == "forward FAILED; forward: y: 1 of 2 elements outside the tolerance"
    assert first.diagnosis().splitlines() == [
        "forward: FAILED: y: 1 of 2 elements outside the tolerance (max error/bound 2.5)",
        "  y[0,1]: got 1, want 2 (bound 1e-05)"]


def test_failure_text_leads_with_the_headline_and_ends_with_the_reproducer():
    first = parse_report(report()).results[0]
    text = failure_text(first).splitlines()
    assert text[0] == "FAILED on mine: forward FAILED; forward: y: 1 of 2 elements outside the tolerance"
    assert text[-2:] == ["case: conv a (c.yaml:7)", "reproducer: /r/failures/001-conv-a.mine.forward.yaml"]
    assert item_name(first, line_too=False) == "conv a[mine]"
    assert item_name(first, line_too=True) == "conv a (line 7)[mine]"


def test_another_schema_or_tool_is_refused():
    with pytest.raises(ReportError, match="schema_version 3; this package reads 2"):
        parse_report(report(schema_version=3))
    with pytest.raises(ReportError, match="not a kcheck report"):
        parse_report(report(tool="other"))
    with pytest.raises(ReportError, match="unexpected content"):
        parse_report(report(results=[{"source": "c.yaml:1"}]))


def test_read_report_names_the_file(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report()))
    assert read_report(path).path == str(path)
    path.write_text("{")
    with pytest.raises(ReportError, match="report.json: cannot read the report"):
        read_report(path)
