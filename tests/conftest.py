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
