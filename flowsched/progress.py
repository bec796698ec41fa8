"""Progress display for long runs (``Simulation.run``, ``flowsched simulate``/``generate``,
evaluation's episodes), the way the ecosystem shows it: a tqdm bar on stderr when tqdm is
installed (the ``[train]`` extra brings it), else one plain line rewritten in place.

``progress`` arguments take ``True`` (shown from the start, to any stream, terminal or
not), ``False`` (never) or ``None`` (auto, the default: shown only when stdout and the
stream written to (stderr) are terminals, and only once the work has lasted
:data:`AUTO_DELAY_S` seconds, so short runs print nothing). Nothing here imports tqdm
until a display is made.
"""
from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any, TypeVar

#: Seconds of work after which an automatic (``progress=None``) display appears.
AUTO_DELAY_S = 2.0

T = TypeVar("T")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or replaced streams
        return False


def resolve(progress: bool | None, file: IO[str] | None = None) -> tuple[bool, float]:
    """(show, delay in seconds) for a ``progress`` argument written to ``file`` (default
    stderr): ``True`` -> shown at once; ``None`` -> shown after :data:`AUTO_DELAY_S` if
    stdout and ``file`` are terminals; ``False`` -> not shown."""
    if progress is None:
        stream = sys.stderr if file is None else file
        return (_isatty(stream) and _isatty(sys.stdout)), AUTO_DELAY_S
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (auto), got {progress!r}")
    return progress, 0.0


def _size(stream: Any) -> tuple[int, int]:
    """The terminal's (columns, lines), 0 where unknown: not a terminal, or a pty with no
    size, where tqdm would take 0 columns or -1 rows and draw nothing."""
    try:
        size = os.get_terminal_size(stream.fileno())
        return size.columns, size.lines
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return 0, 0


class _Line:
    """The fallback display without tqdm: one line on ``file``, rewritten with ``\\r`` at
    most every 0.2 s, and ended with a newline at :meth:`close`."""

    def __init__(self, total: float | None, desc: str, unit: str, delay: float, file: IO[str]) -> None:
        self.total, self.desc, self.unit, self.file = total, desc, unit, file
        self.n: float = 0
        self.postfix = ""
        self._t0 = time.perf_counter()
        self._shown_at = self._t0 + delay
        self._last = 0.0
        self._drawn = False

    def update(self, n: float = 1) -> None:
        self.n += n
        self.refresh(force=False)

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        self.postfix = s

    def refresh(self, force: bool = True) -> None:
        now = time.perf_counter()
        if now < self._shown_at or (not force and now - self._last < 0.2):
            return
        self._last = now
        el = now - self._t0
        done = f"{self.n:,.0f}/{self.total:,.0f}" if self.total else f"{self.n:,.0f}"
        pct = f"{100 * self.n / self.total:3.0f}% " if self.total else ""
        line = f"{self.desc}: {pct}{done} {self.unit} [{el:.0f} s]" + (f" {self.postfix}" if self.postfix else "")
        self._drawn = True
        self.file.write("\r" + line + "\033[K" if _isatty(self.file) else "\r" + line)
        self.file.flush()

    def close(self) -> None:
        if self._drawn:
            self.refresh(force=True)
            self.file.write("\n")
            self.file.flush()


class _Tracked:
    """``file`` for tqdm, remembering whether the last thing written left the cursor in the
    middle of a line (so that :meth:`_Bar.close` can end it: tqdm's ``close`` skips its
    newline when Ctrl-C lands between its write and its bookkeeping)."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.mid_line = False

    def write(self, s: str) -> int:
        if s:
            self.mid_line = not s.endswith("\n")
        return self._file.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class _Bar:
    """A tqdm bar, made (and tqdm imported) only once ``delay`` seconds have passed, so that
    short runs pay nothing for it; :meth:`close` always leaves the cursor at the start of a
    line."""

    def __init__(self, stream: IO[str], total: float | None, desc: str, unit: str, delay: float) -> None:
        self._file, self._total, self._desc, self._unit = stream, total, desc, unit
        self._t0 = time.perf_counter()
        self._due = self._t0 + delay
        self._stream = _Tracked(stream)
        self._bar: Any = None
        self.n: float = 0
        self._postfix = ""

    def _make(self) -> Any:
        from tqdm import tqdm

        cols, lines = _size(self._file)
        sized = (cols > 0 and lines > 0) or not _isatty(self._file)  # else tqdm would draw nothing
        b = tqdm(
            total=self._total,
            desc=self._desc,
            unit=self._unit,
            initial=self.n,
            file=self._stream,
            dynamic_ncols=sized and cols > 0,
            ncols=None if sized else (cols or 100),
            nrows=None if sized else 20,
            unit_scale=self._total is None or self._total >= 10_000,
            mininterval=0.2,
            postfix=self._postfix or None,
        )
        b.start_t = b._time() - (time.perf_counter() - self._t0)  # elapsed time and rate from the start
        b.initial = 0  # of the work, not from the bar's appearance
        return b

    def update(self, n: float = 1) -> None:
        self.n += n
        if self._bar is not None:
            self._bar.update(n)
        elif time.perf_counter() >= self._due:
            self._bar = self._make()

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        self._postfix = s
        if self._bar is not None:
            self._bar.set_postfix_str(s, refresh=refresh)

    def refresh(self) -> None:
        if self._bar is not None:
            self._bar.refresh()

    def close(self) -> None:
        try:
            if self._bar is not None:
                self._bar.close()
        finally:
            if self._stream.mid_line:
                self._stream.write("\n")
                self._stream.flush()


def bar(total: float | None, desc: str, unit: str, *, progress: bool | None = None,
        file: IO[str] | None = None) -> Any:
    """A progress bar (tqdm's interface: ``update``, ``set_postfix_str``, ``refresh``,
    ``close``), or None where ``progress`` says nothing is shown."""
    show, delay = resolve(progress, file)
    if not show:
        return None
    stream = sys.stderr if file is None else file
    try:
        import importlib.util

        has_tqdm = importlib.util.find_spec("tqdm") is not None
    except (ImportError, ValueError):  # a None entry in sys.modules (tests), a broken install
        has_tqdm = False
    if not has_tqdm:
        return _Line(total, desc, unit, delay, stream)
    b = _Bar(stream, total, desc, unit, delay)
    if delay <= 0:
        b._bar = b._make()
    return b


def track(items: Iterable[T], desc: str, unit: str = "it", *, total: int | None = None,
          progress: bool | None = None, file: IO[str] | None = None) -> Iterator[T]:
    """``items``, with a bar counting them (see :func:`bar`); the bar is closed when the
    loop ends, breaks or raises (Ctrl-C included), leaving the cursor on a fresh line."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    b = bar(total, desc, unit, progress=progress, file=file)
    if b is None:
        yield from items
        return
    try:
        for x in items:
            yield x
            b.update(1)
    finally:
        b.close()
