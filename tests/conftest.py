"""Shared pytest configuration.

Tests marked ``@pytest.mark.slow`` (long fuzz runs, long trainings) are skipped by
default, so that ``pytest`` (what README's Quickstart and CI run) stays short. Run them
with ``pytest --runslow`` (or ``FLOWSCHED_SLOW=1 pytest``).
"""
from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow") or os.environ.get("FLOWSCHED_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow or FLOWSCHED_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_pytests_tmp(tmp_path_factory: pytest.TempPathFactory):
    """SB3 models learning without a logger of their own (the tests and examples that use
    SB3 directly) make a directory for their logs, by default a new ``SB3-<time>`` one in
    the system's temp directory per run; ``SB3_LOGDIR`` puts them in pytest's own temp
    directory, which pytest cleans up (subprocesses, e.g. the examples, inherit it)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
    yield
    mp.undo()
