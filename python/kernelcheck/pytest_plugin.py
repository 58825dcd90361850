"""The pytest plugin: `pytest --kcheck-cases cases/ --kcheck-backend b` makes one test item
per case and backend (docs/python.md, "pytest").

kcheck runs twice per session, never checking anything twice: at session start a listing
run with every check left out (--skip-checks, about a second) names the cases and backends
the items are made of, and before the first item one run checks what is still selected
after -k, -m, --deselect or --lf (its case files on its backends), its report under the
session's tmp path or --kcheck-report DIR so that the reproducers outlive the session.
Inert unless --kcheck-cases (or the ini option kcheck_cases) names something.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import pytest

from .pytest_items import KcheckFile, KcheckItem, Key, result_key
from .report import Report, Result
from .run import KcheckError, check_names, find_kcheck, run

_STATE = pytest.StashKey["KcheckSession"]()

# option, ini name, metavar, ini type, help; the ini value is used when the option is not given.
_OPTIONS = (
    ("--kcheck-cases", "kcheck_cases", "PATH", "paths", "case files or folders to check (repeatable)"),
    ("--kcheck-backend", "kcheck_backend", "NAMES", "args", "backends, comma-separated (default: kcheck's: the "
     "reference and every available candidate)"),
    ("--kcheck-python", "kcheck_python", "FILE", "paths", "a Python module of backends, kcheck --python (repeatable)"),
    ("--kcheck-plugin", "kcheck_plugin", "LIB", "paths", "a backend plugin library, kcheck --plugin (repeatable)"),
    ("--kcheck-waivers", "kcheck_waivers", "FILE", "paths", "known failures, kcheck --waivers: XFAIL; XPASS fails "
     "(repeatable)"),
    ("--kcheck-jobs", "kcheck_jobs", "N", "string", "kcheck's worker processes, kcheck --jobs"),
    ("--kcheck-timeout", "kcheck_timeout", "S", "string", "seconds per case and backend, kcheck --timeout"),
    ("--kcheck-report", "kcheck_report", "DIR", "paths", "folder for report.json and failures/ (default: under "
     "pytest's tmp path)"),
    ("--kcheck", "kcheck", "PATH", "paths", "the kcheck binary (default: $KCHECK, else kcheck on PATH)"),
    ("--kcheck-allow-empty", "kcheck_allow_empty", None, "bool", "accept a backend on which every case was "
     "SKIPPED, kcheck --allow-empty"),
)
_REPEATABLE = ("--kcheck-cases", "--kcheck-backend", "--kcheck-python", "--kcheck-plugin", "--kcheck-waivers")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernelcheck", "kernelcheck: kcheck cases as test items")
    for opt, ini, metavar, kind, text in _OPTIONS:
        if kind == "bool":
            group.addoption(opt, action="store_true", default=None, dest=ini, help=text)
        else:
            group.addoption(opt, action="append" if opt in _REPEATABLE else "store", default=None, dest=ini,
                            metavar=metavar, help=text)
        default = {"paths": [], "args": [], "bool": False}.get(kind)
        parser.addini(ini, f"kernelcheck: {text}", type=kind, default=default)


@dataclass
class Options:
    """The plugin's settings: the command line's where given, else the ini file's."""

    cases: List[str]
    backends: List[str]
    python: List[str]
    plugins: List[str]
    waivers: List[str] = field(default_factory=list)
    jobs: Optional[int] = None
    timeout: Optional[float] = None
    report_dir: Optional[str] = None
    kcheck: Optional[str] = None
    allow_empty: bool = False


def _setting(config: pytest.Config, name: str) -> List[str]:
    given = config.getoption(name)
    if given is not None:
        return [given] if isinstance(given, str) else list(given)
    value = config.getini(name)
    if not value:  # unset: None, "" or []
        return []
    return [os.fspath(v) for v in value] if isinstance(value, list) else [value]


def _number(config: pytest.Config, name: str, kind):
    values = _setting(config, name)
    if not values:
        return None
    try:
        return kind(values[-1])
    except ValueError:
        raise pytest.UsageError(f"--{name.replace('_', '-')}: not a number: {values[-1]!r}") from None


def read_options(config: pytest.Config) -> Options:
    single = {k: (_setting(config, k) or [None])[-1] for k in ("kcheck_report", "kcheck")}
    return Options(cases=_setting(config, "kcheck_cases"),
                   backends=[n.strip() for v in _setting(config, "kcheck_backend") for n in v.split(",") if n.strip()],
                   python=_setting(config, "kcheck_python"), plugins=_setting(config, "kcheck_plugin"),
                   waivers=_setting(config, "kcheck_waivers"), jobs=_number(config, "kcheck_jobs", int),
                   timeout=_number(config, "kcheck_timeout", float), report_dir=single["kcheck_report"],
                   kcheck=single["kcheck"],
                   allow_empty=bool(config.getoption("kcheck_allow_empty") or config.getini("kcheck_allow_empty")))


@dataclass
class KcheckSession:
    """The plugin's state for one pytest session: the listing, and the results of the run."""

    config: pytest.Config
    options: Options
    base: str  # kcheck's working directory: where pytest was invoked
    binary: str = ""
    listing: Optional[Report] = None
    listed_files: Dict[str, List[Result]] = field(default_factory=dict)  # by real path
    collected: Set[str] = field(default_factory=set)  # the listed files pytest has collected
    report: Optional[Report] = None
    results: Dict[Key, Result] = field(default_factory=dict)
    ran: bool = False

    def _run(self, paths, backends, report_dir, extra_args) -> Report:
        o = self.options
        return run(paths, backends, python=o.python, plugins=o.plugins, waivers=o.waivers, jobs=o.jobs,
                   timeout=o.timeout, extra_args=extra_args, kcheck=self.binary, report_dir=report_dir, cwd=self.base)

    def list_cases(self) -> None:
        """The listing run: every check left out, so that it only names the cases and backends."""
        try:
            self.binary = find_kcheck(self.options.kcheck)
            skip_all = ["--skip-checks", ",".join(check_names(self.binary)), "--allow-empty"]
            with tempfile.TemporaryDirectory(prefix="kcheck-list-") as folder:
                try:
                    self.listing = self._run(self.options.cases, self.options.backends, folder, skip_all)
                except KcheckError as e:
                    # An invalid case file is exit 2 with a report: its INVALID item fails; other
                    # exit-2 reasons (a missing module, an unknown backend) stop the session.
                    if e.report is None or not e.report.by_disposition("INVALID"):
                        raise
                    self.listing = e.report
        except KcheckError as e:
            raise pytest.UsageError(str(e)) from None
        for r in self.listing.results:
            self.listed_files.setdefault(os.path.realpath(os.path.join(self.base, r.file)), []).append(r)

    def run_selected(self, items: List[pytest.Item]) -> None:
        """The one checking run, for the selected items' case files and backends."""
        self.ran = True
        chosen = [i for i in items if isinstance(i, KcheckItem) and i.listed.backend != "-"]
        if not chosen:
            return
        everything = {result_key(r, self.base) for r in self.listing.results if r.backend != "-"}
        narrowed = {i.key for i in chosen} != everything or len(everything) < len(self.listing.results)
        paths, backends = self.options.cases, self.options.backends
        extra = ["--allow-empty"] if self.options.allow_empty else []
        if narrowed:  # only the selected files and backends; one of them may have nothing to check
            paths = list(dict.fromkeys(i.listed.file for i in chosen))
            backends = list(dict.fromkeys(i.listed.backend for i in chosen))
            extra = ["--allow-empty"]
        maxfail = self.config.getoption("maxfail", 0)
        # kcheck counts a failure before waivers apply: with waivers its count is not pytest's.
        if maxfail > 0 and not self.options.waivers:
            extra += ["--max-failures", str(maxfail)]
        try:
            self.report = self._run(paths, backends, self.report_folder(), extra)
        except KcheckError as e:
            raise pytest.UsageError(str(e)) from None
        self.results = {result_key(r, self.base): r for r in self.report.results}

    def report_folder(self) -> str:
        if self.options.report_dir:
            return os.path.join(self.base, self.options.report_dir)
        factory = getattr(self.config, "_tmp_path_factory", None)  # pytest's tmp_path_factory
        if factory is not None:
            return str(factory.mktemp("kcheck", numbered=True))
        return tempfile.mkdtemp(prefix="kcheck-")

    def result_for(self, item: KcheckItem) -> Result:
        if item.listed.backend == "-":
            return item.listed  # an invalid file is invalid whatever is checked
        if not self.ran:  # an item run without the run loop (a plugin driving items itself)
            self.run_selected(item.session.items)
        result = self.results.get(item.key)
        if result is None:
            where = self.report.path if self.report is not None else "no report"
            pytest.fail(f"kcheck reported no result for this case and backend ({where})", pytrace=False)
        return result


def session_state(config: pytest.Config) -> KcheckSession:
    return config.stash[_STATE]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kcheck: a kcheck case on one backend (the kernelcheck plugin)")
    options = read_options(config)
    if not options.cases:
        given = [opt for opt, ini, *_ in _OPTIONS if config.getoption(ini) is not None]
        if given:
            raise pytest.UsageError(f"{', '.join(given)} without --kcheck-cases: name the case files or folders")
        return
    config.stash[_STATE] = KcheckSession(config, options, str(config.invocation_params.dir))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    state.list_cases()
    # The case paths become arguments for pytest to collect, unless an argument already
    # narrows one (a file or node id inside it), as `pytest cases/x.yaml::name --kcheck-cases cases` does.
    # They go first: pytest does not skip a file argument that another argument's folder
    # walk already reached, but a walk after it is skipped by pytest_collect_file.
    config = session.config
    given = [os.path.realpath(os.path.join(state.base, a.split("::")[0])) for a in _explicit_args(config)]
    added = []
    for path in state.options.cases:
        real = os.path.realpath(os.path.join(state.base, path))
        if not any(g == real or g.startswith(real.rstrip(os.sep) + os.sep) for g in given):
            added.append(os.path.join(state.base, path))
    config.args[:0] = added


def _explicit_args(config: pytest.Config) -> List[str]:
    """The paths and node ids given on the command line, not pytest's defaults (testpaths, the current folder)."""
    source = getattr(config, "args_source", None)  # pytest 7.2 and later
    if source is not None:
        return list(config.args) if source == pytest.Config.ArgsSource.ARGS else []
    return [] if config.args == [str(config.invocation_params.dir)] else list(config.args)


def pytest_collect_file(file_path, parent: pytest.Collector) -> Optional[KcheckFile]:
    state = parent.config.stash.get(_STATE, None)
    if state is None:
        return None
    real = os.path.realpath(file_path)
    results = state.listed_files.get(real)
    if not results or real in state.collected:  # not a case file kcheck listed, or reached twice
        return None
    state.collected.add(real)
    return KcheckFile.from_parent(parent, path=file_path, results=results, base=state.base)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    # pytest's own loop stops these sessions before any item runs: no kcheck run for them.
    stopping = session.testsfailed and not session.config.option.continue_on_collection_errors
    if state is None or stopping or session.config.option.collectonly:
        return
    state.run_selected(session.items)


def pytest_report_header(config: pytest.Config) -> Optional[str]:
    state = config.stash.get(_STATE, None)
    if state is None or state.listing is None:
        return None
    info = state.listing.info
    ran = [b.name for b in state.listing.backends if b.ran]
    return (f"kcheck: {state.binary} {info.get('kc_version', '?')} ({info.get('kc_commit', '?')[:12]}), "
            f"backends: {', '.join(ran) or 'none'}")


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    report = state.report if state is not None else None
    if report is None:
        return
    tr = terminalreporter
    tr.section("kcheck")
    reproducers = sum(1 for r in report.results if r.reproducer_file)
    tr.line(f"report: {report.path}" + (f" (failures/ beside it: {reproducers} reproducer(s))" if reproducers else ""))
    for b in report.backends:
        if b.ran:
            tr.line(f"  {b.name}: {b.cases} cases, {b.passed} passed, {b.skipped} skipped, {b.seconds:.1f} s")
        elif not b.available:
            tr.line(f"  {b.name}: unavailable: {b.reason}")
