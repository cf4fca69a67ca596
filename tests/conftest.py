"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import CORPUS
from tests.harness import BACKENDS, backend_url


def pytest_configure(config: pytest.Config) -> None:
    # Most tests read real documents: without them the suite would not test what it says.
    if not (CORPUS / "manifest.json").is_file():
        raise pytest.UsageError(f"The shared corpus of real documents is not at {CORPUS}: check it out beside "
                                "the repository (../shared/corpus) or set FOREMAN_CORPUS to its directory.")
    if _xdist_controller(config) and _runs(config, TYPES_TEST) and not config.option.collectonly:
        from tests import test_types  # mypy starts now, before the workers, and its test runs last (`_start_order`)

        test_types.start_for_the_workers()
        _STARTED.append(test_types.stop_beside_the_suite)


TYPES_TEST = Path(__file__).with_name("test_types.py")


def _xdist_controller(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not os.environ.get("PYTEST_XDIST_WORKER")


def _runs(config: pytest.Config, test_file: Path) -> bool:
    """Whether the command line's paths hold `test_file` (none given: the configured test paths do)."""
    given = [Path(str(arg).split("::", 1)[0]).resolve() for arg in config.args] or [Path(config.rootpath)]
    return any(path == test_file or path in test_file.parents for path in given)

pytest_plugins = ["tests.openai_stub", "tests.realmodel"]  # one llama.cpp server per model and worker
_STARTED: list[Callable[[], None]] = []  # the stops of the checks started beside the tests


def pytest_collection_finish(session: pytest.Session) -> None:
    """A check that runs as a process of its own (mypy, `start_beside_the_suite` in its test module)
    starts now, beside the tests, when its `test_the_tree...` test is to run."""
    if session.config.option.collectonly:
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # under pytest-xdist every worker collects every test: the check starts in the one that runs it (first there)
    for item in session.items:
        module = getattr(item, "module", None)
        if hasattr(module, "start_beside_the_suite") and item.name.startswith("test_the_tree"):
            module.start_beside_the_suite()
            _STARTED.append(module.stop_beside_the_suite)


REAL_MODEL_MODULES = "test_realmodel"  # the prefix of every module of `realmodel` tests


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The real-model tests live in modules of their own (the scheduler below keeps them together);
    under pytest-xdist the longest modules go first (`_start_order`)."""
    for item in items:
        if item.get_closest_marker("realmodel") and not item.path.name.startswith(REAL_MODEL_MODULES):
            raise pytest.UsageError(f"{item.nodeid}: a realmodel test belongs in a module named {REAL_MODEL_MODULES}*.py")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_start_order)


def _start_order(item: pytest.Item) -> int:
    """Under pytest-xdist the modules start in this order (the longest first, so that no long module
    runs alone at the end while the others idle): a check run as a process of its own (mypy; last
    when the controller started it before the workers, `pytest_configure`: it is done by then),
    then the real-model modules (one scope, over ten minutes), then the modules marked `heavy`
    (a minute or more each: the crash and takeover tests, the fuzzer), then the rest as collected.
    The sort is stable and every worker sorts alike, so the workers' collections stay equal."""
    if hasattr(getattr(item, "module", None), "start_beside_the_suite"):
        return 4 if os.environ.get(item.module.LOG_ENV) else 0  # started by the controller: read last
    if item.path.name.startswith(REAL_MODEL_MODULES):
        return 1
    return 2 if item.get_closest_marker("heavy") else 3


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (the README's command): a test module runs whole in one worker (its
    module-scoped servers start once), the real-model modules all in one (one llama.cpp server per
    model in the whole run: two would share the two cores with everything else), in collection order."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Modules(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "realmodel" if module.rsplit("/", 1)[-1].startswith(REAL_MODEL_MODULES) else module

    config.option.loadscopereorder = False  # in the workers' order (`_start_order`), not the most tests first
    return Modules(config, log)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A check started beside the tests and still running (the session stopped before its test) ends."""
    for stop in _STARTED:
        stop()


@pytest.fixture(scope="session", autouse=True)
def _worker_pools() -> Iterator[None]:
    """The worker processes the session's live servers share (`LiveServer`) end with the session."""
    yield
    from agents.toolkit.cpu import stop_processes
    from extractors.runner import shutdown_pool

    stop_processes()
    shutdown_pool()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """'' (SQLite in the test's data dir) or a fresh PostgreSQL database when FOREMAN_TEST_PG_URL is set."""
    yield from backend_url(request.param)


@pytest.fixture(scope="module", params=BACKENDS)
def module_database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The same, one for a whole module (for a server the module's tests share)."""
    yield from backend_url(request.param)


@pytest.fixture
def postgres_url(database_url: str) -> str:
    """The PostgreSQL run only: tests of several processes on one database."""
    if not database_url:
        pytest.skip("scale-out needs PostgreSQL")
    return database_url


@pytest.fixture(autouse=True)
def _loopback_only(no_remote_network: None) -> None:
    """Every test fails loudly if anything dials a host other than loopback (no real provider)."""
