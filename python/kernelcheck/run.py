"""Running `kcheck run` from Python: finding the binary and turning its report into objects.

kcheck's exit status decides: 0 and 1 are a report (everything passed, or something did
not), 2 is bad usage or invalid input and raises KcheckError with kcheck's stderr (and the
report, when kcheck wrote one, as it does for an invalid case file).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import Iterable, List, Optional, Sequence, Union

from .report import Report, ReportError, read_report

PathLike = Union[str, "os.PathLike[str]"]


class KcheckError(RuntimeError):
    """kcheck could not check: bad usage, invalid input, a crash of kcheck itself."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = "",
                 command: Sequence[str] = (), report: Optional[Report] = None):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = list(command)
        self.report = report


class KcheckNotFound(KcheckError):
    """No kcheck binary: none given, $KCHECK unset and none on PATH (or one that is not executable)."""


def find_kcheck(kcheck: Optional[PathLike] = None) -> str:
    """The kcheck to run: `kcheck` if given, else $KCHECK, else `kcheck` on PATH."""
    for value, origin in ((kcheck, "the kcheck argument"), (os.environ.get("KCHECK"), "$KCHECK")):
        if not value:
            continue
        path = os.fspath(value)
        found = shutil.which(path) if os.sep not in path else path
        if found is None or not (os.path.isfile(found) and os.access(found, os.X_OK)):
            raise KcheckNotFound(f"kcheck not found: {origin} names {path!r}, which is not an executable file")
        return os.path.abspath(found)
    found = shutil.which("kcheck")
    if found is None:
        raise KcheckNotFound("kcheck not found: pass its path (kcheck=..., pytest --kcheck PATH), "
                             "set KCHECK=/path/to/kcheck, or put kcheck on PATH")
    return found


def _names(value: Union[None, str, Iterable[str]]) -> List[str]:
    """Backend names from "a,b" or an iterable of names."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [n.strip() for item in items for n in item.split(",") if n.strip()]


def _paths(value: Union[None, PathLike, Iterable[PathLike]]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    return [os.fspath(p) for p in value]


def run_command(kcheck: str, paths: Sequence[str], report: str, backends: Sequence[str] = (),
                python: Sequence[str] = (), plugins: Sequence[str] = (), waivers: Sequence[str] = (),
                jobs: Optional[int] = None, timeout: Optional[float] = None,
                extra_args: Sequence[str] = ()) -> List[str]:
    """The argument list of `kcheck run` for these options."""
    cmd = [kcheck, "run", *paths]
    if backends:
        cmd += ["--backend", ",".join(backends)]
    for p in plugins:
        cmd += ["--plugin", p]
    for m in python:
        cmd += ["--python", m]
    for w in waivers:  # several files apply together (one per library)
        cmd += ["--waivers", w]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    if timeout is not None:
        cmd += ["--timeout", f"{timeout:g}"]
    return cmd + ["--report", report, "--quiet", *extra_args]


def run(paths: Union[PathLike, Iterable[PathLike]], backends: Union[None, str, Iterable[str]] = None,
        python: Union[PathLike, Iterable[PathLike]] = (), plugins: Union[PathLike, Iterable[PathLike]] = (),
        waivers: Union[None, PathLike, Iterable[PathLike]] = None, jobs: Optional[int] = None, timeout: Optional[float] = None,
        extra_args: Sequence[str] = (), kcheck: Optional[PathLike] = None, report_dir: Optional[PathLike] = None,
        cwd: Optional[PathLike] = None) -> Report:
    """Check the cases under `paths` on `backends` (default: kcheck's, the reference and every
    available candidate) and return the report.

    The report is written to `report_dir`/report.json with the failure reproducers in
    `report_dir`/failures/ (default: a new temporary folder, left in place so that the
    reproducers' paths stay valid). Exit status 2 raises KcheckError; a missing kcheck
    KcheckNotFound.
    """
    binary = find_kcheck(kcheck)
    folder = os.fspath(report_dir) if report_dir is not None else tempfile.mkdtemp(prefix="kcheck-")
    os.makedirs(folder, exist_ok=True)
    report_path = os.path.abspath(os.path.join(folder, "report.json"))
    if os.path.exists(report_path):
        os.remove(report_path)  # so that a report left by an earlier run is never read as this one's
    cmd = run_command(binary, _paths(paths), report_path, _names(backends), _paths(python), _paths(plugins),
                      _paths(waivers), jobs, timeout, list(extra_args))
    try:
        done = subprocess.run(cmd, cwd=None if cwd is None else os.fspath(cwd), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as e:
        raise KcheckError(f"cannot start {binary}: {e}", command=cmd) from e
    report = _read(report_path, done, cmd)
    if done.returncode in (0, 1) and report is not None:
        return report
    if report is None and report_dir is None:
        shutil.rmtree(folder, ignore_errors=True)  # the folder made for a report that never came
    why = done.stderr.strip() or done.stdout.strip()[-2000:] or "no message"
    if done.returncode == 2:
        raise KcheckError(f"kcheck exited 2 (bad usage or invalid input): {why}", 2, done.stderr, cmd, report)
    raise KcheckError(f"kcheck exited with status {done.returncode}"
                      f"{'' if report is not None else ' and wrote no report'}: {why}",
                      done.returncode, done.stderr, cmd, report)


def _read(path: str, done: "subprocess.CompletedProcess[str]", cmd: List[str]) -> Optional[Report]:
    """The report kcheck wrote, or None when it wrote none."""
    if not os.path.exists(path):
        return None
    try:
        report = read_report(path)
    except ReportError as e:
        raise KcheckError(str(e), done.returncode, done.stderr, cmd) from e
    report.returncode = done.returncode
    report.stdout = done.stdout
    return report


def check_names(kcheck: Optional[PathLike] = None) -> List[str]:
    """Every check kcheck knows (`kcheck checks`: a name at the start of each entry's first line)."""
    binary = find_kcheck(kcheck)
    done = subprocess.run([binary, "checks"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace")
    if done.returncode != 0:
        raise KcheckError(f"kcheck checks exited with status {done.returncode}: {done.stderr.strip()}",
                          done.returncode, done.stderr, [binary, "checks"])
    return [line.split()[0] for line in done.stdout.splitlines() if line and not line[0].isspace()]
