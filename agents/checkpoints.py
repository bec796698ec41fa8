"""Crash-safe files of a training run: every checkpoint, ``model.zip``, ``run.json`` and
RLlib's checkpoint directory is written to a temporary name in the same directory,
flushed to disk (fsync) and then renamed over the old one (``os.replace``), so a crash
or a full disk leaves the previous complete file, never a truncated one.

Readers fall back: :func:`load_newest_readable` tries candidates newest first and warns,
naming each damaged file it skips.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def warn(msg: str) -> None:
    """A warning of this module's logger (``train.log`` and stderr under Hydra; printed on
    stderr as ``WARNING: ...`` beside tqdm's progress bar when logging is not set up)."""
    from flowsched.agents.runlog import emit

    emit(logging.getLogger(__name__), msg, logging.WARNING)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _fsync_file(p: Path) -> None:
    with open(p, "rb+") as f:
        os.fsync(f.fileno())


def _tmp_name(path: Path, tag: str = "tmp") -> Path:
    # a dot name never matches the readers' globs (step_*.zip, model.zip); the suffix is kept
    # because some writers (SB3's save) append one when it is missing
    return path.with_name(f".{path.stem}.{os.getpid()}.{tag}{path.suffix}")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """``with atomic_path(p) as tmp: write(tmp)``: ``p`` appears complete or not at all.

    The body writes the file ``tmp`` (same directory, same suffix); on success it is
    fsynced and renamed over ``p``, and the directory is fsynced; on an exception it is
    removed and ``p`` keeps its old content."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_name(path)
    try:
        yield tmp
        _fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def save_sb3(model: Any, path: str | Path) -> None:
    """``model.save(path)`` atomically, and (before it, so the zip is the commit point)
    the VecNormalize statistics beside it as ``<stem>.vecnormalize.pkl``."""
    path = Path(path)
    from stable_baselines3.common.vec_env import unwrap_vec_normalize

    # VecNormalize (of the reward only: it has no obs_rms, which an earlier check looked for,
    # so no statistics were saved and a resumed run restarted them): keep them for resume
    vec_normalize = unwrap_vec_normalize(model.get_env())
    if vec_normalize is not None:
        with atomic_path(path.with_suffix(".vecnormalize.pkl")) as tmp:
            vec_normalize.save(str(tmp))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            model.save(f)


def replace_dir(path: str | Path, write: Callable[[Path], None]) -> None:
    """Writes a checkpoint directory with ``write(tmp_dir)``, then swaps it in.

    A directory cannot be renamed over a non-empty one, so the swap is two renames: the
    current ``path`` becomes ``<path>.prev`` (complete: it was itself swapped in), then
    the new one becomes ``path``. At every moment one of the two is complete;
    :func:`dir_candidates` lists them newest first."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    prev = path.with_name(path.name + ".prev")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        write(tmp)
        for root, _, files in os.walk(tmp):
            for f in files:
                _fsync_file(Path(root) / f)
            _fsync_dir(Path(root))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        shutil.rmtree(prev, ignore_errors=True)
        os.replace(path, prev)
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def dir_candidates(path: str | Path) -> list[Path]:
    """``path`` and its previous version ``<path>.prev`` (see :func:`replace_dir`), those that exist."""
    path = Path(path)
    return [p for p in (path, path.with_name(path.name + ".prev")) if p.is_dir()]


def sb3_candidates(run_dir: str | Path) -> list[Path]:
    """A run's SB3 checkpoints, newest first: ``model.zip`` (written when a run finishes),
    then ``checkpoints/step_<n>.zip`` by decreasing ``n``."""
    run_dir = Path(run_dir)
    out = [run_dir / "model.zip"] if (run_dir / "model.zip").is_file() else []

    def step(p: Path) -> int:
        try:
            return int(p.stem.split("_", 1)[1])
        except (IndexError, ValueError):
            return -1

    ckpts = [p for p in (run_dir / "checkpoints").glob("step_*.zip") if step(p) >= 0]
    return out + sorted(ckpts, key=step, reverse=True)


def load_newest_readable(
    candidates: Sequence[Path], load: Callable[[Path], T], what: str = "checkpoint"
) -> tuple[T, Path]:
    """``load(c)`` for the first candidate that loads; each one that fails is named in a
    warning with its error. Raises ``FileNotFoundError`` when there is none, and
    ``RuntimeError`` naming every failure when none loads."""
    if not candidates:
        raise FileNotFoundError(f"no {what} found")
    failures = []
    for c in candidates:
        try:
            obj = load(c)
        except Exception as e:  # noqa: BLE001 - a damaged file can fail in many ways
            failures.append(f"{c}: {type(e).__name__}: {e}")
            warn(f"{what} {c} is damaged or unreadable ({type(e).__name__}: {e}); trying an older one")
            continue
        if failures:
            warn(f"using {what} {c} (skipped {len(failures)} damaged: "
                 f"{', '.join(str(f).split(':')[0] for f in failures)})")
        return obj, c
    raise RuntimeError(f"no readable {what}; every candidate failed:\n  " + "\n  ".join(failures))


__all__ = ["atomic_path", "atomic_write_text", "dir_candidates", "load_newest_readable", "replace_dir", "save_sb3",
           "sb3_candidates", "warn"]
