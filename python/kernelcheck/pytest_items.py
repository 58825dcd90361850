"""The pytest nodes of the kernelcheck plugin: a case file (KcheckFile) and one item per case
and backend in it (KcheckItem), and what each kcheck disposition becomes in pytest.

An item does not run kcheck itself: the plugin's one run for the whole selection
(pytest_plugin.py) holds its result, and the item turns it into pytest's outcome.
"""
from __future__ import annotations

import os
import re
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

from .report import Result

# Dispositions that fail the item; SKIPPED, XFAIL and XPASS have their own handling.
FAILING = ("FAILED", "MISTRUSTED", "CRASHED", "TIMEOUT", "INVALID")

Key = Tuple[str, int, str, str]  # the case file's real path, its line, the case, the backend


def result_key(result: Result, base: str) -> Key:
    """What identifies a result across kcheck runs of the same files (paths relative to `base`)."""
    return (os.path.realpath(os.path.join(base, result.file)), result.line, result.case, result.backend)


def item_name(result: Result, line_too: bool) -> str:
    """The item's readable name: "case[backend]", the line added where a file repeats a name."""
    # A control character in a case name would break the terminal's one line per item.
    case = "invalid case file" if result.backend == "-" else re.sub(r"[\x00-\x1f\x7f]", " ", result.case)
    if line_too:
        case += f" (line {result.line})"
    return f"{case}[{result.backend}]"


class KcheckFile(pytest.File):
    """A case file kcheck listed: its items are the listing's results for it, in kcheck's order."""

    def __init__(self, *, results: List[Result], base: str, **kwargs):
        super().__init__(**kwargs)
        self.results = results
        self.base = base

    def collect(self) -> Iterator["KcheckItem"]:
        seen: Dict[Tuple[str, str], int] = {}
        for r in self.results:
            seen[(r.case, r.backend)] = seen.get((r.case, r.backend), 0) + 1
        for r in self.results:
            yield KcheckItem.from_parent(self, name=item_name(r, seen[(r.case, r.backend)] > 1), listed=r,
                                         key=result_key(r, self.base))


class KcheckItem(pytest.Item):
    """One case on one backend. `listed` is the result of the listing run (the case's name,
    line and backend; the final verdict only for an INVALID file)."""

    def __init__(self, *, listed: Result, key: Key, **kwargs):
        super().__init__(**kwargs)
        self.listed = listed
        self.key = key
        self.add_marker("kcheck")
        # -k matches these too: `-k "maxpool and f16"`, `-k onednn`.
        self.extra_keyword_matches.update(
            k for k in (listed.backend, listed.fields.get("op"), listed.fields.get("dtype")) if k)

    def runtest(self) -> None:
        from .pytest_plugin import session_state  # the plugin module imports this one

        result = session_state(self.config).result_for(self)
        self.user_properties.append(("kcheck_disposition", result.disposition))
        if result.reproducer_file:
            self.user_properties.append(("kcheck_reproducer", result.reproducer_file))
        outcome(result)

    def reportinfo(self):
        line = self.listed.line - 1 if self.listed.line > 0 else None
        return self.path, line, self.name


def outcome(result: Result) -> None:
    """The pytest outcome of a kcheck result: return (pass), or skip, xfail or fail."""
    d = result.disposition
    if d == "PASSED":
        return
    if d == "SKIPPED":
        skip = pytest.skip.Exception(result.message or "SKIPPED by kcheck")
        skip._use_item_location = True  # -rs names the case's file and line, as a skip marker does
        raise skip
    if d == "XFAIL":
        pytest.xfail(f"waived: {'; '.join(result.waivers)}")
    if d == "XPASS":
        xpassed = [c.name for c in result.checks if c.disposition == "XPASS"]
        pytest.fail(f"XPASS on {result.backend}: a waived failure did not happen ({', '.join(xpassed)} passed): "
                    f"remove the waiver\n" + "\n".join(f"  {w}" for w in result.waivers) + _where(result),
                    pytrace=False)
    pytest.fail(failure_text(result), pytrace=False)


def failure_text(result: Result) -> str:
    """A failure's text: the headline first (pytest's short summary shows that line), then
    kcheck's diagnosis, the case's place and the reproducer with the command that reruns it."""
    if result.backend == "-":  # an invalid case file: its message says all, naming file and line
        return f"INVALID case file: {result.message}"
    head = f"{result.disposition} on {result.backend}: {result.headline() or 'no message'}"
    body = result.diagnosis()
    return head + ("\n" + body if body and body != result.headline() else "") + _where(result)


def _where(result: Result) -> str:
    text = f"\ncase: {result.case} ({result.source})"
    if result.reproducer_file:
        text += f"\nreproducer: {result.reproducer_file}"
        rerun = _rerun_line(result.reproducer_file)
        if rerun:
            text += f"\nrerun: {rerun}"
    return text


def _rerun_line(path: str) -> Optional[str]:
    """The command a reproducer starts with ("# rerun: kcheck run ..."), if it can be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline().strip()
    except OSError:
        return None
    return first[len("# rerun: "):] if first.startswith("# rerun: ") else None
