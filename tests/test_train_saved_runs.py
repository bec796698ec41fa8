"""Runs and configs saved before the baseline registry and the one training loop (issue 18,
item 4) still load, evaluate and resume: their Hydra ``_target_`` paths
(``flowsched.baselines.make`` with the rule's keyword arguments), their agent configs
without ``trainer``/``rule`` and their SB3 checkpoint (tests/data/README.md)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

import flowsched.agents  # noqa: F401  (resolvers)
from flowsched import baselines
from flowsched.agents.config_checks import check_train_config
from flowsched.agents.training import RuleTrainer, build_trainer, main_config_check, train

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
CONFIGS = sorted((DATA / "configs_before_registry").glob("*.yaml"))


def saved(name: str):
    return OmegaConf.load(DATA / "configs_before_registry" / f"{name}.yaml")


def new(*overrides: str):
    from hydra import compose, initialize_config_module

    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name="train", overrides=list(overrides))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_saved_configs_pass_the_checks(path):
    cfg = OmegaConf.load(path)
    assert "trainer" not in cfg.agent  # saved before trainers existed: the kind's default is used
    check_train_config(cfg)
    main_config_check(cfg)


@pytest.mark.parametrize(("name", "overrides"), [
    ("train_edf", ["agent=edf"]),
    ("train_las", ["experiment=switch", "agent=las"]),
    ("train_pias_optimal", ["experiment=thresholds", "agent=pias_optimal"]),
])
def test_saved_rule_configs_build_the_same_policy_as_today(name, overrides, tmp_path):
    old = saved(name)
    assert old.agent.policy._target_ == "flowsched.baselines.make"
    trainer = build_trainer(old, tmp_path)
    assert isinstance(trainer, RuleTrainer) and not trainer.learns
    cfg = new(*overrides)
    p_old, p_new = trainer.policy(), instantiate(cfg.agent.policy)
    assert isinstance(p_old, baselines.Policy) and repr(p_old) == repr(p_new)
    assert list(cfg.agent.env_families) == list(old.agent.env_families)


def test_saved_rule_run_config_trains(tmp_path):
    """train() on the config a rule-agent run saved (``agent=edf``): the rule's held-out table."""
    cfg = saved("train_edf")
    cfg.eval.final_episodes, cfg.eval.baselines, cfg.env.kwargs.n_bursts = 2, ["fifo"], 2
    status = train(cfg, tmp_path)
    assert status["status"] == "finished" and status["num_timesteps"] == 0
    assert [r["policy"] for r in status["summary"]] == ["edf", "fifo"]
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "finished"


def test_saved_rllib_config_gets_the_rllib_trainer(tmp_path):
    pytest.importorskip("ray")
    from flowsched.agents.rllib import RLlibTrainer

    t = build_trainer(saved("train_rllib_ppo"), tmp_path)
    assert isinstance(t, RLlibTrainer) and t.learns and t.ckpt == tmp_path / "rllib_checkpoint"


@pytest.fixture
def old_run(tmp_path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(DATA / "sb3_run_before_registry", run)
    return run


def test_saved_sb3_run_evaluates(old_run):
    from flowsched.agents.evaluation import resolve_policies, run_episodes

    cfg = OmegaConf.load(old_run / ".hydra" / "config.yaml")
    (spec,) = resolve_policies([str(old_run)], "token", device="cpu")
    assert spec.label == f"maskable_ppo@{old_run.name}" and spec.uses_masks
    assert isinstance(spec.policy, baselines.MaskablePolicy) and spec.policy.num_timesteps == 2048
    cfg.env.kwargs.n_bursts = 2
    rows, _ = run_episodes(spec, cfg, [0], per_flow=False)
    assert rows[0]["steps"] > 0 and 0 <= rows[0]["deadline_hit_ratio"] <= 1


def test_saved_sb3_run_resumes(old_run, tmp_path):
    env = {**os.environ, "WANDB_MODE": "disabled"}
    p = subprocess.run([sys.executable, str(ROOT / "train.py"), f"resume={old_run}", "total_timesteps=2560",
                        "eval.baselines=[fifo]", "eval.final_episodes=2", "eval.every=0", "progress_bar=false",
                        "hydra.run.dir=resumed"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert f"Loaded {old_run / 'model.zip'} at step 2048" in p.stdout
    status = json.loads((old_run / "run.json").read_text())
    assert status["status"] == "finished" and status["num_timesteps"] == 2560


def test_policies_with_one_label_are_told_apart_and_a_policy_listed_twice_is_refused(tmp_path):
    # two sweeps' job directories share their names: their labels read alike, and the
    # results (grouped by label) merged them, counting 2 x seeds episodes in one CI
    from flowsched.agents.config_checks import ConfigError
    from flowsched.agents.evaluation import resolve_policies

    a, b = tmp_path / "sweep1" / "job-0", tmp_path / "sweep2" / "job-0"
    for run in (a, b):
        shutil.copytree(DATA / "sb3_run_before_registry", run)
    specs = resolve_policies(["fifo", str(a), str(b)], "token", device="cpu")
    labels = [s.label for s in specs]
    assert labels == ["fifo", f"maskable_ppo@job-0 ({a})", f"maskable_ppo@job-0 ({b})"]
    for twice in (["fifo", "fifo"], [str(a), "fifo", str(a)]):
        with pytest.raises(ConfigError, match="is listed twice among the policies"):
            resolve_policies(twice, "token", device="cpu")


def test_a_run_directory_without_a_checkpoint_is_a_config_error_naming_it(tmp_path):
    # a rule agent's or a refused run's directory: a FileNotFoundError traceback before
    from flowsched.agents.config_checks import ConfigError
    from flowsched.agents.evaluation import resolve_policies

    (tmp_path / "run" / ".hydra").mkdir(parents=True)
    with pytest.raises(ConfigError, match="holds no trained policy to evaluate: no model.zip"):
        resolve_policies(["fifo", str(tmp_path / "run")], "token", device="cpu")
