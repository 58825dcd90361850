"""kcheck's report.json (schema_version 2, docs/cli.md "Reports") as Python objects.

Report holds the run (command, build, host, summary), every backend considered and one
Result per case and backend, each with its checks. Parsing is lenient about keys it does
not know, so that a report with more fields still reads; a different schema_version is
refused, since the meaning of the fields may have changed.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

SCHEMA_VERSION = 2

# Dispositions that are a problem in a case's result (kcheck's exit status 1 or 2).
PROBLEMS = ("FAILED", "MISTRUSTED", "CRASHED", "TIMEOUT", "INVALID", "XPASS")


class ReportError(ValueError):
    """A report that cannot be read: not JSON, another schema_version, a missing field."""


@dataclass
class Worst:
    """One of a check's worst elements: the tensor, its index, the two values, the bound."""

    tensor: str
    index: Tuple[int, ...]
    candidate: float
    reference: float
    bound: float

    def __str__(self) -> str:
        where = f"[{','.join(str(i) for i in self.index)}]" if self.index else ""
        return f"{self.tensor}{where}: got {self.candidate:.9g}, want {self.reference:.9g} (bound {self.bound:.3g})"


@dataclass
class Check:
    """One check of a result; `waiver` is the waiver that made it XFAIL or XPASS."""

    name: str
    disposition: str
    message: str
    max_error_ratio: float = 0.0
    max_abs_error: float = 0.0
    seconds: float = 0.0
    worst: List[Worst] = field(default_factory=list)

    @property
    def waiver(self) -> Optional[str]:
        """"FILE:LINE: reason" of the waiver applied to this check, or None.

        The report carries the waiver only inside the check's message, which kcheck writes
        as "waived (FILE:LINE: reason): ..." (XFAIL) or "a waived failure did not happen
        (FILE:LINE: reason); remove the waiver" (XPASS).
        """
        prefixes = {"XFAIL": "waived (", "XPASS": "a waived failure did not happen ("}
        prefix = prefixes.get(self.disposition)
        if prefix is None or not self.message.startswith(prefix):
            return None
        return _balanced(self.message, len(prefix))


def _balanced(text: str, start: int) -> str:
    """The text from `start` to the ')' that closes the '(' before it (a reason may hold parentheses)."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return text[start:]


@dataclass
class Result:
    """One case on one backend. `file` and `line` locate the case; `reproducer_file` is the
    YAML reproducer kcheck wrote for a problem (None for a pass, a skip or an XFAIL)."""

    case: str
    source: str
    file: str
    line: int
    backend: str
    disposition: str
    message: str
    seconds: float
    reproducer: str
    reproducer_file: Optional[str]
    checks: List[Check]
    fields: Dict[str, Any]

    @property
    def waivers(self) -> List[str]:
        """The waivers ("FILE:LINE: reason") applied to its checks, each once, in order."""
        seen: List[str] = []
        for c in self.checks:
            if c.waiver is not None and c.waiver not in seen:
                seen.append(c.waiver)
        return seen

    @property
    def problem(self) -> bool:
        return self.disposition in PROBLEMS

    def headline(self) -> str:
        """One line: the result's own message, else the checks that did not pass and the first one's message."""
        if self.message:
            return self.message.splitlines()[0]
        bad = [c for c in self.checks if c.disposition not in ("PASSED", "SKIPPED")]
        if not bad:
            return ""
        names = ", ".join(f"{c.name} {c.disposition}" for c in bad)
        return f"{names}; {bad[0].name}: {bad[0].message}"

    def diagnosis(self) -> str:
        """What kcheck prints for a problem: its message, each check that did not pass with its worst elements."""
        lines = [self.message] if self.message else []
        for c in self.checks:
            if c.disposition in ("PASSED", "SKIPPED"):
                continue
            ratio = f" (max error/bound {c.max_error_ratio:.3g})" if c.max_error_ratio > 0 else ""
            lines.append(f"{c.name}: {c.disposition}: {c.message}{ratio}")
            lines.extend(f"  {w}" for w in c.worst)
        return "\n".join(lines)


@dataclass
class Backend:
    """A backend the run considered: available or not (the reason), and what ran on it."""

    name: str
    available: bool
    reason: str = ""
    numerics: str = ""
    ran: bool = False
    cases: int = 0
    passed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    top_skip_reasons: str = ""


@dataclass
class Report:
    """A whole run. `info` holds the run's other top-level fields (kc_version, kc_commit,
    device, host_cpu, case_set, waivers, ...), as kcheck writes them (strings)."""

    schema_version: int
    command: str
    started: str
    seconds: float
    summary: Dict[str, int]
    backends: List[Backend]
    results: List[Result]
    info: Dict[str, Any] = field(default_factory=dict)
    path: Optional[str] = None  # the report.json read; its failures/ folder is beside it
    returncode: Optional[int] = None  # kcheck's exit status, when it came from run()
    stdout: str = ""  # kcheck's summary and diagnoses, when it came from run()

    def by_disposition(self, disposition: str) -> List[Result]:
        return [r for r in self.results if r.disposition == disposition]


def _worst(d: Dict[str, Any]) -> Worst:
    return Worst(d.get("tensor", ""), tuple(d.get("index", ())), float(d.get("candidate", 0.0)),
                 float(d.get("reference", 0.0)), float(d.get("bound", 0.0)))


def _check(d: Dict[str, Any]) -> Check:
    return Check(name=d["name"], disposition=d["disposition"], message=d.get("message", ""),
                 max_error_ratio=float(d.get("max_error_ratio", 0.0)), max_abs_error=float(d.get("max_abs_error", 0.0)),
                 seconds=float(d.get("seconds", 0.0)), worst=[_worst(w) for w in d.get("worst", [])])


def _result(d: Dict[str, Any]) -> Result:
    fields = dict(d.get("fields", {}))
    source = d.get("source", "")
    file, _, line = source.rpartition(":")
    if not file or not line.isdigit():  # a source without ":line" (an unreadable file)
        file, line = source, "0"
    return Result(case=d["case"], source=source, file=str(fields.get("file", file)), line=int(fields.get("line", line)),
                  backend=d["backend"], disposition=d["disposition"], message=d.get("message", ""),
                  seconds=float(d.get("seconds", 0.0)), reproducer=d.get("reproducer", ""),
                  reproducer_file=fields.get("reproducer_file") or None,
                  checks=[_check(c) for c in d.get("checks", [])], fields=fields)


_BACKEND_FIELDS = ("reason", "numerics", "ran", "cases", "passed", "skipped", "seconds", "top_skip_reasons")


def _backend(d: Dict[str, Any]) -> Backend:
    return Backend(name=d["name"], available=bool(d.get("available", False)),
                   **{k: d[k] for k in _BACKEND_FIELDS if k in d})


def parse_report(data: Dict[str, Any], path: Optional[str] = None) -> Report:
    """A Report from report.json's decoded JSON; ReportError when it is not schema_version 2."""
    if not isinstance(data, dict) or data.get("tool") != "kcheck":
        raise ReportError(f"{path or 'the report'}: not a kcheck report")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ReportError(f"{path or 'the report'}: schema_version {version}; this package reads {SCHEMA_VERSION}")
    known = {"schema_version", "tool", "command", "started", "seconds", "summary", "backends", "results"}
    try:
        return Report(schema_version=version, command=data.get("command", ""), started=data.get("started", ""),
                      seconds=float(data.get("seconds", 0.0)), summary=dict(data.get("summary", {})),
                      backends=[_backend(b) for b in data.get("backends", [])],
                      results=[_result(r) for r in data.get("results", [])],
                      info={k: v for k, v in data.items() if k not in known}, path=path)
    except (KeyError, TypeError, ValueError) as e:
        raise ReportError(f"{path or 'the report'}: unexpected content ({type(e).__name__}: {e})") from e


def read_report(path: "os.PathLike[str] | str") -> Report:
    """The report at `path` (a report.json kcheck wrote)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: cannot read the report: {e}") from e
    return parse_report(data, path)
