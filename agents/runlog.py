"""The Python ``logging`` of ``train.py`` and ``evaluate.py``: the handler and formatters
that ``hydra.job_logging`` in ``configs/train.yaml`` and ``configs/evaluate.yaml`` names.

Under Hydra every message of the training and evaluation path (progress lines, evaluation
results, the tables, checkpoint and resume messages, warnings) is a record of its
module's logger (``logging.getLogger(__name__)``), written

* to the console by :class:`ConsoleHandler`, as the scripts printed it before: the bare
  message, INFO on stdout and WARNING and above on stderr prefixed ``WARNING:``, through
  ``tqdm.write`` so that it lands above a progress bar;
* to ``<run dir>/<job name>.log`` (``train.log``, ``evaluate.log``) with a timestamp,
  the logger's name and the level (:class:`FileFormatter`).

Third-party loggers (matplotlib's font manager and the like) are held at WARNING there.

This module imports nothing heavy: Hydra loads it before the run starts.
"""
from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

FILE_FORMAT = "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"


def _write(msg: str, stream: TextIO) -> None:
    from tqdm import tqdm  # the [train] extra, which flowsched.agents needs

    tqdm.write(msg, file=stream)
    stream.flush()


class ConsoleFormatter(logging.Formatter):
    """The message as it was printed: bare for INFO, ``WARNING: ...`` (the level name) above."""

    def format(self, record: logging.LogRecord) -> str:
        msg = super().format(record)
        return msg if record.levelno < logging.WARNING else f"{record.levelname}: {msg}"


class FileFormatter(logging.Formatter):
    """``[time][logger][LEVEL] - message``; the blank lines that separate blocks on the
    console are dropped around the message, and a message of several lines (a table)
    starts on the next line."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        record.message = record.message.strip("\n")
        if "\n" in record.message:  # a table: on its own lines, columns aligned
            record.message = "\n" + record.message
        return super().formatMessage(record)


class ConsoleHandler(logging.Handler):
    """INFO and below to ``sys.stdout``, WARNING and above to ``sys.stderr`` (the streams of
    the moment, so a progress bar that redirects them still works), via ``tqdm.write``."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = self.format(record)
            _write(msg, sys.stderr if record.levelno >= logging.WARNING else sys.stdout)
        except Exception:  # noqa: BLE001 - logging's contract: report, never raise
            self.handleError(record)


def _handlers(logger: logging.Logger) -> Iterator[logging.Handler]:
    c: logging.Logger | None = logger
    while c is not None:
        yield from c.handlers
        if not c.propagate:
            return
        c = c.parent


def _shown(logger: logging.Logger, level: int) -> bool:
    """Whether a record of ``level`` reaches a handler that shows it (pytest's capture
    handlers do not count)."""
    return logger.isEnabledFor(level) and any(
        level >= h.level and not type(h).__module__.startswith("_pytest") for h in _handlers(logger))


def emit(logger: logging.Logger, msg: str, level: int = logging.INFO) -> None:
    """``logger.log(level, msg)``; when logging is not set up to show it (``train()`` or
    ``evaluate()`` called from a script of your own without ``logging`` configured), the
    message is also printed as the console handler would (stdout, or stderr with
    ``WARNING:`` for warnings), so that nothing the scripts used to print is lost."""
    if logger.isEnabledFor(level) and any(True for _ in _handlers(logger)):
        logger.log(level, msg, stacklevel=2)
    if not _shown(logger, level):
        if level >= logging.WARNING:
            _write(f"{logging.getLevelName(level)}: {msg}", sys.stderr)
        else:
            _write(msg, sys.stdout)


@contextlib.contextmanager
def also_log_to(path: str | Path) -> Iterator[None]:
    """While inside, the root logger's records also go to ``path`` (appended, in the
    format of :class:`FileFormatter`; level INFO). ``train.py resume=<run dir>`` appends
    the resumed session's log to the run's own ``train.log`` this way. Nothing is added
    when a handler of the root logger already writes ``path``."""
    path = Path(path).resolve()
    root = logging.getLogger()
    if any(isinstance(h, logging.FileHandler) and Path(h.baseFilename).resolve() == path for h in root.handlers):
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    h = logging.FileHandler(path, mode="a", encoding="utf-8")
    h.setFormatter(FileFormatter(FILE_FORMAT))
    h.setLevel(logging.INFO)
    root.addHandler(h)
    try:
        yield
    finally:
        root.removeHandler(h)
        h.close()


__all__ = ["FILE_FORMAT", "ConsoleFormatter", "ConsoleHandler", "FileFormatter", "also_log_to", "emit"]
