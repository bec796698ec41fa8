"""Progress display (issue 22 item 4): shown when asked or on terminals, silent otherwise,
and never changing a result."""
from __future__ import annotations

import hashlib
import io
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import flowsched
from flowsched import progress, workloads
from flowsched.cli import main


def _digest(res: flowsched.sim.Results) -> str:
    """Every bit of every per-flow column (NA included), in order."""
    h = hashlib.sha256()
    for c in res.flows.columns:
        col = res.flows[c]
        h.update(f"{c}:{col.dtype}".encode())
        if col.dtype == "boolean":
            h.update(col.isna().to_numpy().tobytes() + col.fillna(False).to_numpy(bool).tobytes())
        else:
            h.update(col.to_numpy().tobytes())
    return h.hexdigest()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    return workloads.poisson_all_to_all("websearch", 0.8, 144, 10.0, 3000, seed=3)


CASES = [
    ("srpt", "bigswitch", {}),
    ("ps", "bigswitch", {}),
    ("pias", "leafspine", {}),
    ("las", "bigswitch", {}),
    ("gtcp:srpt", "bigswitch", {}),
    ("fifo", "leafspine", {"admission": "edf", "k": 2}),
    ("edf", "bigswitch", {"terminate_missed": True, "delay_us": 1.0}),
]


@pytest.mark.parametrize(("scheduler", "topology", "kw"), CASES, ids=[f"{s}-{t}" for s, t, _ in CASES])
def test_results_bit_identical_with_and_without_progress(trace, scheduler, topology, kw):
    topo = flowsched.BigSwitch(144, 10.0) if topology == "bigswitch" else flowsched.LeafSpine(9, 16, 4, 10.0, 40.0)
    tr = trace
    if kw.get("terminate_missed") or scheduler == "edf":
        tr = trace.assign(deadline_s=0.002 + trace["size_bytes"] / 1.25e9 * 3)
    off = flowsched.simulate(tr, topo, scheduler, progress=False, **kw)
    out = io.StringIO()
    sim = flowsched.Simulation(tr, topo, scheduler, **kw)
    sim.run(progress=True, file=out)
    on = sim.results()
    assert sim.done
    assert _digest(on) == _digest(off)
    assert on.stats == off.stats  # the same events, not only the same outcome
    assert f"simulate {scheduler}" in out.getvalue() and out.getvalue().endswith("\n")


@pytest.mark.parametrize(("scheduler", "topology", "kw"), CASES[:4], ids=[f"{s}-{t}" for s, t, _ in CASES[:4]])
@pytest.mark.parametrize("max_times", [1, 7])
def test_bounded_native_steps_are_bit_identical_to_one_run(trace, scheduler, topology, kw, max_times):
    """The drain after the last arrival is shown by pausing every few event times (the native
    ``step``'s ``max_times``): pausing there, even after every single event time, changes
    nothing, where a pause at a time between events would."""
    topo = flowsched.BigSwitch(144, 10.0) if topology == "bigswitch" else flowsched.LeafSpine(9, 16, 4, 10.0, 40.0)
    tr = trace.iloc[:800]
    whole = flowsched.sim.native_simulator(tr, topo, scheduler, **kw)
    whole.run()
    paused = flowsched.sim.native_simulator(tr, topo, scheduler, **kw)
    calls = 0
    while (kind := paused.step(float("inf"), max_times=max_times)[0]) == "paused":
        calls += 1
    assert kind == "done"
    assert calls >= whole.stats()["events"] // max_times // 2  # it did pause, again and again
    a, b = whole.results(), paused.results()
    for c in ("finish_s", "bytes_sent"):
        assert a[c].tobytes() == b[c].tobytes(), c
    assert whole.stats() == paused.stats()
    with pytest.raises(ValueError, match="max_times must be at least 1"):
        paused.step(float("inf"), max_times=0)


def test_packet_run_with_progress_is_bit_identical():
    tr = workloads.poisson_all_to_all("websearch", 0.8, 16, 10.0, 300, seed=2)
    off = flowsched.simulate(tr, flowsched.BigSwitch(16, 10.0), "srpt", model="packet", progress=False)
    out = io.StringIO()
    sim = flowsched.Simulation(tr, flowsched.BigSwitch(16, 10.0), "srpt", model="packet")
    sim.run(progress=True, file=out)
    assert _digest(sim.results()) == _digest(off)
    assert sim.results().packet == off.packet
    assert "300/300" in out.getvalue()


def test_forced_progress_shows_flows_time_and_events(trace):
    out = io.StringIO()
    flowsched.Simulation(trace, flowsched.BigSwitch(144, 10.0), "srpt").run(progress=True, file=out)
    text = out.getvalue()
    assert "simulate srpt" in text and "3000/3000" in text
    assert "s simulated" in text and "events/s" in text


def test_fallback_line_without_tqdm(trace, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    out = io.StringIO()
    flowsched.Simulation(trace, flowsched.BigSwitch(144, 10.0), "srpt").run(progress=True, file=out)
    text = out.getvalue()
    assert "simulate srpt: 100% 3,000/3,000 flow" in text and text.endswith("\n")


def test_auto_is_silent_off_a_terminal(trace, capsys, monkeypatch):
    monkeypatch.setattr(progress, "AUTO_DELAY_S", 0.0)
    flowsched.simulate(trace, flowsched.BigSwitch(144, 10.0), "srpt")  # pytest's streams are no terminal
    assert capsys.readouterr().err == ""
    out = _Tty()
    # a terminal for stderr but not for stdout: still silent
    flowsched.Simulation(trace, flowsched.BigSwitch(144, 10.0), "srpt").run(file=out)
    assert out.getvalue() == ""


def test_auto_shows_on_terminals_after_the_delay(trace, monkeypatch):
    monkeypatch.setattr(progress, "_isatty", lambda s: True)
    out = _Tty()
    flowsched.Simulation(trace, flowsched.BigSwitch(144, 10.0), "srpt").run(file=out)
    assert out.getvalue() == ""  # a short run: under AUTO_DELAY_S
    monkeypatch.setattr(progress, "AUTO_DELAY_S", 0.0)
    flowsched.Simulation(trace, flowsched.BigSwitch(144, 10.0), "srpt").run(file=out)
    assert "simulate srpt" in out.getvalue()
    assert progress.resolve(False) == (False, 0.0)
    with pytest.raises(TypeError):
        progress.resolve("yes")  # type: ignore[arg-type]


def test_cli_quiet_silences_progress(trace, tmp_path, capsys, monkeypatch):
    path = tmp_path / "t.csv"
    flowsched.traces.write_trace(trace, path)
    monkeypatch.setattr(progress, "_isatty", lambda s: True)
    monkeypatch.setattr(progress, "AUTO_DELAY_S", 0.0)
    assert main(["simulate", "--trace", str(path), "--hosts", "144"]) == 0
    assert "simulate srpt" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(path), "--hosts", "144", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    out = tmp_path / "g.parquet"
    assert main(["generate", "--load", "0.5", "--hosts", "8", "--flows", "500", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "generate" in err and "drawing sizes" in err and "writing" in err
    assert main(["generate", "--load", "0.5", "--hosts", "8", "--flows", "500", "--out", str(out), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_track_counts_and_closes():
    out = io.StringIO()
    assert list(progress.track(range(5), "evaluate x", "episode", progress=True, file=out)) == list(range(5))
    assert "5/5" in out.getvalue() and out.getvalue().endswith("\n")
    assert list(progress.track([1, 2], "x", progress=False)) == [1, 2]


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
def test_ctrl_c_during_progress_exits_130_on_a_clean_line(tmp_path):
    import pty

    path = tmp_path / "big.parquet"
    flowsched.traces.write_trace(workloads.poisson_all_to_all("websearch", 0.8, 144, 10.0, 200_000, seed=1), path)
    master, slave = pty.openpty()
    # las: a run of many seconds, so the interrupt lands while it runs also on a machine fast or
    # idle enough to finish ps soon after the bar appears (it shows after 2 s)
    cmd = [sys.executable, "-m", "flowsched.cli", "simulate", "--trace", str(path), "--scheduler", "las"]
    # the child starts with Ctrl-C's default action, as from a terminal: a test run launched in the
    # background (`.ci/run &`) inherits SIGINT ignored, and a Python started with SIGINT ignored
    # installs no KeyboardInterrupt handler (the run would go on to the end and exit 0)
    p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(slave)
    buf = b""
    deadline = time.monotonic() + 120
    try:
        while b"simulate las" not in buf and time.monotonic() < deadline and p.poll() is None:
            import select

            if select.select([master], [], [], 0.5)[0]:
                buf += os.read(master, 65536)
        assert b"simulate las" in buf, buf
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    assert rc == 130
    text = buf.decode(errors="replace").replace("\r\n", "\n")
    assert text.endswith("\nflowsched simulate: interrupted\n"), repr(text[-400:])


def test_generation_phases_are_reported_and_change_nothing():
    seen: list[str] = []
    with_cb = workloads.poisson_all_to_all("websearch", 0.7, 16, 10.0, 5000, seed=4, on_phase=seen.append)
    without = workloads.poisson_all_to_all("websearch", 0.7, 16, 10.0, 5000, seed=4)
    assert seen == ["arrivals", "sources", "destinations", "sizes", "trace"]
    pd.testing.assert_frame_equal(with_cb, without)
