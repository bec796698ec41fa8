"""Reliability of train.py / evaluate.py (issue 16): run directories never shared, unknown
names and bad values refused early with the key and the valid values, overrides at
resume applied or refused, checkpoints written atomically with a fallback to the newest
readable one, exit codes of SIGINT/SIGTERM, and leftovers of a SIGKILLed Ray driver."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

import flowsched.agents  # noqa: F401  (resolvers)
from flowsched.agents import unique_dir
from flowsched.agents.checkpoints import (
    atomic_path,
    atomic_write_text,
    load_newest_readable,
    replace_dir,
    sb3_candidates,
)
from flowsched.agents.config_checks import (
    SEED_MAX,
    ConfigError,
    check_evaluate_config,
    check_group_names,
    check_train_config,
    group_options,
    merge_resume_overrides,
)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
# a baseline agent on tiny episodes: train.py's whole path (Hydra, run dir, final table) in a few seconds
TINY_BASELINE = ["agent=fifo", "eval.baselines=[edf]", "eval.final_episodes=1", "env.kwargs.n_bursts=2", "logger=none"]
# 4 lanes x 128 steps: an update (and a checkpoint) every 512 steps
TINY_PPO = [
    "experiment=smoke",
    "checkpoint.every=512",
    "eval.every=0",
    "eval.baselines=[fifo]",
    "eval.final_episodes=1",
    "env.kwargs.n_bursts=2",
    "logger=none",
]


def cfg_of(main: str, *overrides: str):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name=main, overrides=list(overrides))


def script(name: str, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / name), *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


# ---------------------------------------------------------------- run directories (item 3)


def test_unique_dir_is_atomic_across_threads(tmp_path):
    base = str(tmp_path / "outputs" / "seed0-20261126-120000")
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(unique_dir(base))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 8 and base in got and f"{base}-8" in got
    assert all(Path(p).is_dir() for p in got)


def test_run_and_sweep_dirs_go_through_unique_dir():
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        for main in ("train", "evaluate"):
            h = compose(config_name=main, return_hydra_config=True).hydra
            for key in ("run.dir", "sweep.dir"):
                raw = OmegaConf.to_container(h, resolve=False)
                node = raw["run"]["dir"] if key == "run.dir" else raw["sweep"]["dir"]
                assert node.startswith("${flowsched.unique_dir:"), (main, key, node)
            assert "${hydra.job.num}" in OmegaConf.to_container(h, resolve=False)["sweep"]["subdir"]


def test_two_runs_with_the_same_timestamp_get_their_own_directories(tmp_path):
    # both runs name the same directory (as two runs started in the same second do)
    same = "hydra.run.dir=${flowsched.unique_dir:outputs/same-second}"
    procs = [subprocess.Popen([sys.executable, str(ROOT / "train.py"), *TINY_BASELINE, f"seed={s}", same], cwd=tmp_path,
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for s in (1, 2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    dirs = sorted((tmp_path / "outputs").iterdir())
    assert [d.name for d in dirs] == ["same-second", "same-second-2"]
    seeds = set()
    for d in dirs:  # each directory has its own run's config and status
        seed = OmegaConf.load(d / ".hydra" / "config.yaml").seed
        assert json.loads((d / "run.json").read_text())["run_dir"] == str(d.resolve())
        assert f"run directory: {d.resolve()}" in outs[seed - 1]
        seeds.add(seed)
    assert seeds == {1, 2}


def test_a_fresh_run_refuses_a_directory_that_holds_a_run(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "model.zip").write_bytes(b"x")
    p = script("train.py", *TINY_BASELINE, "hydra.run.dir=run", cwd=tmp_path)
    assert p.returncode == 1 and "already holds a run (model.zip)" in p.stderr and "resume=" in p.stderr, p.stderr
    assert (tmp_path / "run" / "model.zip").read_bytes() == b"x"


# ---------------------------------------------------------------- names and values (items 4, 8, 5 of the brief)


@pytest.mark.parametrize("group", ["env", "workload", "topology", "agent", "logger", "experiment"])
def test_unknown_group_option_lists_the_valid_ones(group):
    valid = group_options(group)
    typo = valid[0][:-1] + "x"
    with pytest.raises(ConfigError) as e:
        check_group_names([f"{group}={typo}"])
    msg = str(e.value)
    assert f"unknown {group} {typo!r}; valid: {', '.join(valid)}" in msg
    check_group_names([f"{group}={valid[0]}"])  # a valid one passes


def test_unknown_option_in_a_sweep_and_did_you_mean():
    with pytest.raises(ConfigError, match=r"unknown agent 'artemiss'.*did you mean 'artemis'\?"):
        check_group_names(["-m", "agent=maskable_ppo,artemiss", "seed=0,1"])
    with pytest.raises(ConfigError, match=r"unknown experiment 'token_highlaod'.*did you mean 'token_highload'\?"):
        check_group_names(["experiment=token_highlaod"])
    check_group_names(["~experiment", "agent.model.n_steps=64", "seed=0,1", "--cfg", "job"])
    with pytest.raises(ConfigError, match=r"experiment=null: a config group cannot be set to null"):
        check_group_names(["experiment=null"])


def test_train_py_unknown_experiment_exits_with_the_valid_names(tmp_path):
    p = script("train.py", "experiment=token_highlaod", cwd=tmp_path)
    assert p.returncode == 1
    assert ("unknown experiment 'token_highlaod'; valid: artemis_packet, artemis_packet_a2, artemis_thesis, smoke, "
            "switch, thresholds, token_highload (did you mean 'token_highload'?)") in p.stderr
    assert not (tmp_path / "outputs").exists()  # refused before Hydra made a run directory


@pytest.mark.parametrize(("override", "expected"), [
    ("total_timesteps=-5", "total_timesteps=-5: must be an integer >= 1"),
    ("total_timesteps=0", "total_timesteps=0: must be an integer >= 1"),
    ("total_timesteps=1.5", "total_timesteps=1.5: must be an integer"),
    ("seed=-1", f"seed=-1: must be an integer in [0, {SEED_MAX}]"),
    (f"seed={SEED_MAX + 1}", f"seed={SEED_MAX + 1}: must be an integer in [0, {SEED_MAX}]"),
    ("time_budget_s=0", "time_budget_s=0: must be a finite number > 0 or null"),
    ("checkpoint.every=-1", "checkpoint.every=-1: must be an integer >= 0"),
    ("eval.final_episodes=0", "eval.final_episodes=0: must be an integer >= 1"),
    ("env.num_envs=0", "env.num_envs=0: must be an integer >= 1"),
    ("progress_bar=maybe", "progress_bar='maybe': must be true or false"),
    ("+eval.evry=100", "eval.evry: unknown key (valid: every, episodes, final_episodes, seed, baselines (did you mean "
                       "'every'?))"),
    ("+agent.model.n_step=64", "agent.model.n_step: not an argument of sb3_contrib.MaskablePPO"),
    ("+total_timestep=5", "total_timestep: unknown key"),
    ("logger.wandb.mode=offlne", "unknown logger.wandb.mode 'offlne'"),
])
def test_train_config_errors_name_key_and_value(override, expected):
    extra = ["logger=wandb"] if override.startswith("logger.wandb") else []
    with pytest.raises(ConfigError) as e:
        check_train_config(cfg_of("train", *extra, override))
    assert expected in str(e.value)


def test_device_must_exist_here():
    """SB3 runs a device=cuda model on the CPU, silently, where torch sees no GPU: the
    config check refuses it instead, and a name torch does not know."""
    import torch

    with pytest.raises(ConfigError, match=r"device='gpu': must be cpu, auto or a torch device"):
        check_train_config(cfg_of("train", "device=gpu"))
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ConfigError, match=r"device='cuda:\d+': torch (sees|\S+ sees no CUDA GPU)"):
        check_train_config(cfg_of("train", f"device=cuda:{n}"))
    if n == 0:
        for main in ("train", "evaluate"):
            with pytest.raises(ConfigError, match=r"device='cuda': torch \S+ sees no CUDA GPU here"):
                (check_train_config if main == "train" else check_evaluate_config)(cfg_of(main, "device=cuda"))
    for ok in ("cpu", "auto"):
        check_train_config(cfg_of("train", f"device={ok}"))


def test_valid_train_configs_pass():
    check_train_config(cfg_of("train"))
    check_train_config(cfg_of("train", "total_timesteps=1e9", f"seed={SEED_MAX}", "time_budget_s=600"))
    for exp in group_options("experiment"):
        check_train_config(cfg_of("train", f"experiment={exp}"))
    for agent in ("artemis", "rllib_ppo", "fifo", "scorer_ppo"):
        check_train_config(cfg_of("train", f"agent={agent}"))


def test_hidden_sizes_refuse_baselines_that_read_sizes():
    """env.kwargs.hide_sizes=true: srpt, fair and asrpt would fail at the first evaluation
    (after training); the config check says so at once, and the same config without them
    passes."""
    with pytest.raises(ConfigError, match=r"eval.baselines: srpt, fair read flow sizes, which env.kwargs.hide_sizes="
                                          r"true hides; leave them out \(e.g. 'eval.baselines=\[fifo,las,pias\]'\)"):
        check_train_config(cfg_of("train", "env=switch_packet", "agent=equivariant_ppo", "env.kwargs.hide_sizes=true"))
    check_train_config(cfg_of("train", "env=switch_packet", "agent=equivariant_ppo", "env.kwargs.hide_sizes=true",
                              "env.baselines=[fifo,las,pias]"))
    with pytest.raises(ConfigError, match=r"policies: srpt, fair read flow sizes"):
        check_evaluate_config(cfg_of("evaluate", "env=switch", "env.kwargs.hide_sizes=true"))
    check_evaluate_config(cfg_of("evaluate", "env=switch", "env.kwargs.hide_sizes=true", "policies=[las,pias]"))


def test_rllib_algo_typo_is_an_error():
    with pytest.raises(ConfigError, match=r"agent.algo.gae_lamda: unknown key .*did you mean 'gae_lambda'"):
        check_train_config(cfg_of("train", "agent=rllib_ppo", "+agent.algo.gae_lamda=0.9"))


@pytest.mark.parametrize(("override", "expected"), [
    ("seeds=0", "seeds=0: must be an integer >= 1"),
    ("seed=-1", f"seed=-1: must be an integer in [0, {SEED_MAX}]"),
    ("policies=[]", "policies=[]: must be a non-empty list of names"),
    ("loads=[0.5,-1]", "loads[1]=-1: must be a number > 0 or null"),
    ("workloads=[artemis_a3]", "unknown workload 'artemis_a3'"),
    ("launcher=slurm", "unknown launcher 'slurm'; valid: local, ray"),
])
def test_evaluate_config_errors(override, expected):
    with pytest.raises(ConfigError) as e:
        check_evaluate_config(cfg_of("evaluate", override))
    assert expected in str(e.value)
    check_evaluate_config(cfg_of("evaluate"))


def test_evaluate_py_seeds_zero_and_unknown_policy(tmp_path):
    p = script("evaluate.py", "policies=[fifo]", "seeds=0", cwd=tmp_path)
    assert p.returncode == 1 and "seeds=0: must be an integer >= 1" in p.stderr and "KeyError" not in p.stderr, p.stderr
    from flowsched.agents.evaluation import resolve_policies

    with pytest.raises(
        ConfigError, match=r"unknown policy 'fif': not a token baseline \(fifo, .*did you mean 'fifo'\?"
    ):
        resolve_policies(["fifo", "fif"], "token")


# ---------------------------------------------------------------- overrides at resume (item 4)


def test_resume_overrides_applied_where_safe_and_refused_otherwise():
    saved = cfg_of("train", "experiment=smoke")
    choices = {"env": "token", "workload": "artemis_a1", "agent": "maskable_ppo", "experiment": "smoke"}

    def merge(*ov: str, now: dict | None = None):
        current = cfg_of("train", "resume=/x", *ov)
        return merge_resume_overrides(saved, current, ["resume=/x", *ov], {**choices, **(now or {})}, choices)

    merged, applied = merge("total_timesteps=250000", "eval.every=0", "logger=none", "time_budget_s=60")
    assert merged.total_timesteps == 250000 and merged.eval.every == 0 and merged.time_budget_s == 60
    assert merged.logger.tensorboard is False and merged.env.num_envs == saved.env.num_envs == 4
    assert "total_timesteps: 2048 -> 250000" in applied
    assert merge("seed=0")[1] == []  # the same value changes nothing
    with pytest.raises(ConfigError) as e:
        merge("seed=1", "agent.model.learning_rate=0.1", "total_timesteps=5000")
    msg = str(e.value)
    assert "seed=1: the run has seed=0" in msg and "agent.model.learning_rate=0.1: the run has" in msg
    assert "total_timesteps" not in msg.split("\n")[1]  # only the refused ones are listed as refused
    with pytest.raises(ConfigError, match="workload=artemis_a2: the run was started with workload=artemis_a1"):
        merge("workload=artemis_a2", now={"workload": "artemis_a2"})


# ---------------------------------------------------------------- atomic checkpoints (item 5)


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    f = tmp_path / "run.json"
    atomic_write_text(f, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(f) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash while writing")
    assert f.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_replace_dir_keeps_a_complete_previous_version(tmp_path):
    d = tmp_path / "rllib_checkpoint"

    def write(n):
        return lambda t: (t.mkdir(), (t / "state").write_text(str(n)))

    replace_dir(d, write(1))
    replace_dir(d, write(2))
    with pytest.raises(OSError):
        replace_dir(d, lambda t: (_ for _ in ()).throw(OSError("disk full")))
    assert (d / "state").read_text() == "2" and (tmp_path / "rllib_checkpoint.prev" / "state").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rllib_checkpoint", "rllib_checkpoint.prev"]


def test_load_newest_readable_names_the_damaged_one(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    for n in (512, 1024, 10240):
        (run / "checkpoints" / f"step_{n}.zip").write_text(str(n))
    (run / "checkpoints" / ".step_2048.123.tmp.zip").write_text("partial")  # a killed writer's temporary file
    cands = sb3_candidates(run)
    assert [c.name for c in cands] == ["step_10240.zip", "step_1024.zip", "step_512.zip"]

    def load(p):
        if p.name == "step_10240.zip":
            raise AssertionError("No data found in the saved file")
        return int(p.read_text())

    assert load_newest_readable(cands, load) == (1024, cands[1])
    err = capsys.readouterr().err
    assert "step_10240.zip is damaged or unreadable (AssertionError: No data found in the saved file)" in err
    with pytest.raises(RuntimeError, match="no readable checkpoint"):
        load_newest_readable(cands, lambda p: 1 / 0)


def test_resume_falls_back_from_a_truncated_checkpoint_and_applies_the_override(tmp_path):
    r = script("train.py", *TINY_PPO, "total_timesteps=1024", "hydra.run.dir=run", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    run = tmp_path / "run"
    assert (run / "checkpoints" / "step_512.zip").exists() and (run / "checkpoints" / "step_1024.zip").exists()
    assert not list(run.rglob(".*.tmp*"))  # no temporary file left behind
    # as if killed while writing the latest checkpoint: no model.zip, step_1024 truncated
    (run / "model.zip").unlink()
    latest = run / "checkpoints" / "step_1024.zip"
    latest.write_bytes(latest.read_bytes()[: latest.stat().st_size // 2])
    r = script("train.py", f"resume={run}", "total_timesteps=1536", "hydra.run.dir=resumed", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"checkpoint {latest} is damaged or unreadable" in r.stderr
    assert f"Loaded {run / 'checkpoints' / 'step_512.zip'} at step 512" in r.stdout
    assert "applied: total_timesteps: 1024 -> 1536" in r.stdout
    status = json.loads((run / "run.json").read_text())
    assert status["status"] == "finished" and status["num_timesteps"] == 1536
    assert status["resume_overrides"] == ["total_timesteps: 1024 -> 1536"]
    assert OmegaConf.load(run / ".hydra" / "config.yaml").total_timesteps == 1536  # kept for a later resume
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(run / "model.zip").num_timesteps == 1536
    assert MaskablePPO.load(latest).num_timesteps == 1024  # rewritten whole when training passed it again
    # a second resume keeps the first one's record (it kept only its own before)
    r = script("train.py", f"resume={run}", "total_timesteps=2048", "hydra.run.dir=resumed2", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert json.loads((run / "run.json").read_text())["resume_overrides"] == [
        "total_timesteps: 1024 -> 1536", "total_timesteps: 1536 -> 2048"]


# ---------------------------------------------------------------- signals (item 8)
# SIGTERM -> 143 end to end: tests/test_train_smoke.py::test_resume_same_step_count


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_exit_code(monkeypatch, tmp_path, sig, code):
    import flowsched.agents.training as training
    from flowsched.agents import cli

    monkeypatch.setattr(training, "train", lambda cfg, run_dir, **kw: {
        "run_dir": str(run_dir), "status": "interrupted", "signal": int(sig), "num_timesteps": 512})
    monkeypatch.setattr(training, "main_config_check", lambda cfg: None)
    monkeypatch.setattr(sys, "argv", ["train.py", f"hydra.run.dir={tmp_path / 'run'}", "hydra.output_subdir=null",
                                      "hydra/job_logging=disabled"])
    monkeypatch.setattr(cli, "check_fresh_run_dir", lambda d: None)
    with pytest.raises(SystemExit) as e:
        cli.train_main()
    assert e.value.code == code


@pytest.mark.slow
def test_sigint_exits_130_after_a_checkpoint(tmp_path):
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *TINY_PPO, "total_timesteps=100000",
                             "hydra.run.dir=run"], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            # Ctrl-C's default action, as from a terminal (a background test run ignores SIGINT)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = tmp_path / "run" / "checkpoints" / "step_512.zip"
    t0 = time.time()
    while not first.exists() and proc.poll() is None and time.time() - t0 < 90:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out[-3000:]
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["status"] == "interrupted" and status["signal"] == signal.SIGINT
    assert Path(status["checkpoint"]).exists() and "Resume with: python train.py resume=" in out


# ---------------------------------------------------------------- Ray leftovers (item 8)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux /proc")
def test_stale_ray_processes_finds_orphans_only(tmp_path):
    """Fake Ray processes (``ray::`` titles via exec -a) holding a file of a session
    directory with no running raylet: the orphan (parent pid 1, as after the driver's
    SIGKILL) is stale; one with a live parent (a Ray that is starting) and a non-Ray
    orphan on the same file are left alone."""
    from flowsched.agents.ray_cleanup import cleanup_stale_ray, stale_ray_processes

    log = tmp_path / "session_2026-11-26_09-50-28_122155_99999" / "logs" / "dashboard_agent.out"
    log.parent.mkdir(parents=True)
    log.write_text("")

    def orphan(title: str) -> int:  # the subshell exits at once: its child is reparented
        out = subprocess.run(
            ["bash", "-c", f"({title} sleep 60 >>{log} 2>&1 & echo $!)"], capture_output=True, text=True
        )
        return int(out.stdout.split()[-1])

    ray_orphan, plain_orphan = orphan("exec -a ray::DashboardAgent"), orphan("exec")
    child = subprocess.Popen(["bash", "-c", f"exec -a ray::RuntimeEnvAgent sleep 60 >>{log}"])
    try:
        t0 = time.time()
        while time.time() - t0 < 5 and ray_orphan not in dict(stale_ray_processes(min_age_s=0)):
            time.sleep(0.05)
        found = dict(stale_ray_processes(min_age_s=0))
        if Path(f"/proc/{ray_orphan}/stat").read_text().split(") ")[1].split()[1] != "1":
            pytest.skip("orphans are not reparented to pid 1 here (a subreaper)")
        assert ray_orphan in found and plain_orphan not in found and child.pid not in found
        assert ray_orphan not in dict(stale_ray_processes(min_age_s=3600))  # too young
        assert ray_orphan in dict(cleanup_stale_ray(grace_s=2, min_age_s=0))
        t0 = time.time()
        while time.time() - t0 < 5 and Path(f"/proc/{ray_orphan}").exists() and \
                Path(f"/proc/{ray_orphan}/stat").read_text().split(") ")[1].split()[0] != "Z":
            time.sleep(0.05)
        assert not Path(f"/proc/{ray_orphan}").exists() or \
            Path(f"/proc/{ray_orphan}/stat").read_text().split(") ")[1].split()[0] == "Z"
        assert Path(f"/proc/{plain_orphan}").exists() and child.poll() is None
    finally:
        for pid in (ray_orphan, plain_orphan):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        child.kill()
        child.wait()
