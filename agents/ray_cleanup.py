"""Leftovers of a local Ray whose driver was killed with SIGKILL.

A SIGKILL cannot be caught, so a driver killed that way (``kill -9``, the OOM killer)
cannot stop the Ray it started. Ray's own reaper stops most of that Ray's processes
(GCS server, raylet, monitors, workers), but two children of the raylet,
``ray::DashboardAgent`` and ``ray::RuntimeEnvAgent``, were seen to stay alive,
orphaned, holding memory and their session's log files (Ray 2.60, Linux).

They exit by themselves after about a minute (66 s seen), but meanwhile they are
orphans of a dead Ray node that serve nothing. A Ray process names its raylet in its
environment (``RAY_RAYLET_PID``, until its title overwrites it) and holds files of its
session directory (``/tmp/ray/session_*``); a running raylet names its session on its
command line. :func:`cleanup_stale_ray` ends exactly the Ray processes of this user
whose raylet or session has no running raylet (by pid), and never touches a live Ray,
of this user or another. ``init_ray()`` runs it before starting a
local Ray; from the shell::

    python -m flowsched.agents.ray_cleanup            # list and stop the leftovers
    python -m flowsched.agents.ray_cleanup --dry-run  # only list them
"""
from __future__ import annotations

import importlib.util
import os
import re
import signal
import sys
import time
from pathlib import Path


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    out = {}
    for item in raw.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep:
            out[k.decode(errors="replace")] = v.decode(errors="replace")
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


_SESSION = re.compile(r"^(.*/session_\d{4}-\d\d-\d\d_[\d-]+_\d+_\d+)(/|$)")


def _ray_dir() -> str:
    spec = importlib.util.find_spec("ray")
    return os.path.dirname(spec.origin) if spec is not None and spec.origin else "/nonexistent-ray"


def _sessions_of_fds(pid: int) -> set[str]:
    out: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            m = _SESSION.match(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
        if m:
            out.add(m.group(1))
    return out


def _raylets() -> tuple[set[int], set[str]]:
    """Pids and session directories of every running raylet (any user)."""
    pids, sessions = set(), set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        cmd = _cmdline(int(d.name))
        if not cmd or not cmd.split(" ", 1)[0].endswith("/raylet"):
            continue
        pids.add(int(d.name))
        for tok in cmd.split(" "):
            m = _SESSION.match(tok.split("=", 1)[-1])
            if m:
                sessions.add(m.group(1))
    return pids, sessions


def _ppid_and_age(pid: int) -> tuple[int, float]:
    """(parent pid, seconds since start) of ``pid``; (-1, 0) when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        ppid, start_ticks = int(fields[1]), int(fields[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return ppid, uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return -1, 0.0


def stale_ray_processes(min_age_s: float = 10.0) -> list[tuple[int, str]]:
    """(pid, command) of this user's Ray processes (``ray::*`` titles, or programs of the
    installed ``ray`` package) that belong to a Ray node whose raylet no longer runs: the
    raylet named by ``RAY_RAYLET_PID`` in their environment is gone, or the Ray session
    directories they hold files of have no running raylet. Only orphans (parent pid 1)
    older than ``min_age_s`` are listed, so a Ray that is starting (its GCS server runs
    before its raylet, under a live driver) is never taken for a dead one, nor is a live
    Ray (any session with a raylet). Linux only (``/proc``); elsewhere an empty list."""
    if not Path("/proc").is_dir():
        return []
    uid, me, ray_dir = os.getuid(), os.getpid(), _ray_dir()
    raylet_pids, live_sessions = _raylets()
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me or int(d.name) in raylet_pids:
            continue
        pid = int(d.name)
        try:
            if d.stat().st_uid != uid:
                continue
        except OSError:
            continue
        ppid, age = _ppid_and_age(pid)
        if ppid != 1 or age < min_age_s:
            continue
        cmd = _cmdline(pid)
        head = cmd.split(" ")[:3]
        if not (cmd.startswith("ray::") or any(t.startswith(ray_dir + os.sep) for t in head)):
            continue
        raylet = _environ(pid).get("RAY_RAYLET_PID", "")
        sessions = _sessions_of_fds(pid)
        dead_raylet = raylet.isdigit() and int(raylet) not in raylet_pids
        dead_session = bool(sessions) and not (sessions & live_sessions)
        if dead_raylet or dead_session:
            out.append((pid, cmd))
    return sorted(out)


def cleanup_stale_ray(grace_s: float = 3.0, dry_run: bool = False, min_age_s: float = 10.0) -> list[tuple[int, str]]:
    """Stops :func:`stale_ray_processes` (SIGTERM, then SIGKILL after ``grace_s``);
    returns what it found."""
    found = stale_ray_processes(min_age_s)
    if dry_run or not found:
        return found
    for pid, _ in found:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + grace_s
    alive = [pid for pid, _ in found]
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if Path(f"/proc/{p}").exists() and _state(p) != "Z"]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return found


def _state(pid: int) -> str:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("State:"):
                return line.split()[1]
    except OSError:
        pass
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    dry = "--dry-run" in argv
    found = cleanup_stale_ray(dry_run=dry)
    if not found:
        print("no leftover Ray processes (every Ray process of this user has its raylet)")
    for pid, cmd in found:
        print(f"{'found' if dry else 'stopped'} {pid}: {cmd[:120]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
