"""kernelcheck from Python: run kcheck and read its report (run, read_report), and the
pytest plugin (kernelcheck.pytest_plugin: one test item per case and backend).

The package is pure Python and needs only the kcheck binary: the explicit argument, else
$KCHECK, else kcheck on PATH (docs/python.md, "pytest").
"""
from .report import Backend, Check, Report, ReportError, Result, Worst, parse_report, read_report
from .run import KcheckError, KcheckNotFound, find_kcheck, run

__all__ = ["Backend", "Check", "KcheckError", "KcheckNotFound", "Report", "ReportError", "Result", "Worst",
           "find_kcheck", "parse_report", "read_report", "run"]
__version__ = "0.1.0"
