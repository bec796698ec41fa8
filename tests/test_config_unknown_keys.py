"""Unknown keys under ``env`` and ``topology`` of train.py / evaluate.py configs: refused by
the config check with the key and the valid keys (``+env.bogus=1`` was ignored, and
``+topology.bogus=1`` failed only as Hydra's instantiate TypeError), while every shipped
experiment and env x topology combination still passes."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from hydra.utils import get_class
from omegaconf import OmegaConf

import flowsched.agents  # noqa: F401  (resolvers)
from flowsched.agents.config_checks import (
    ENV_KEYS,
    ConfigError,
    check_evaluate_config,
    check_train_config,
    group_options,
)

ROOT = Path(__file__).resolve().parents[1]
CHECKS = {"train": check_train_config, "evaluate": check_evaluate_config}


def cfg_of(main: str, *overrides: str):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name=main, overrides=list(overrides))


def accepted(topology: str) -> list[str]:
    """The keyword arguments of a topology option's ``_target_`` class."""
    target = OmegaConf.load(ROOT / "configs" / "topology" / f"{topology}.yaml")._target_
    return [p for p in inspect.signature(get_class(target).__init__).parameters if p != "self"]


# ---------------------------------------------------------------- env


@pytest.mark.parametrize("main", ["train", "evaluate"])
def test_unknown_env_key_is_refused(main):
    with pytest.raises(ConfigError) as e:
        CHECKS[main](cfg_of(main, "+env.bogus=1"))
    msg = str(e.value)
    assert f"invalid {main} config" in msg
    assert "env.bogus: unknown key (valid: family, id, hosts, link_gbps, num_envs" in msg
    assert "kwargs" in msg


def test_unknown_env_key_has_a_did_you_mean():
    with pytest.raises(ConfigError, match=r"env.kwarg: unknown key \(valid: .*\(did you mean 'kwargs'\?\)\)"):
        check_train_config(cfg_of("train", "+env.kwarg={}"))


@pytest.mark.parametrize("env", group_options("env"))
def test_env_keys_are_those_of_the_env_configs(env):
    """ENV_KEYS covers every key of every env config, so no shipped env config is refused."""
    keys = set(OmegaConf.load(ROOT / "configs" / "env" / f"{env}.yaml").keys())
    assert keys <= set(ENV_KEYS), keys - set(ENV_KEYS)


def test_every_env_key_is_used_by_an_env_config():
    used: set[str] = set()
    for env in group_options("env"):
        used |= {str(k) for k in OmegaConf.load(ROOT / "configs" / "env" / f"{env}.yaml").keys()}
    assert set(ENV_KEYS) == used


@pytest.mark.parametrize("main", ["train", "evaluate"])
def test_env_kwargs_keys_are_left_to_the_env(main):
    """env.kwargs are the env constructor's arguments: the env checks them, not the config check."""
    CHECKS[main](cfg_of(main, "+env.kwargs.not_an_argument=1"))


# ---------------------------------------------------------------- topology


@pytest.mark.parametrize("main", ["train", "evaluate"])
@pytest.mark.parametrize("topology", group_options("topology"))
def test_unknown_topology_key_names_the_accepted_keys(main, topology):
    with pytest.raises(ConfigError) as e:
        CHECKS[main](cfg_of(main, f"topology={topology}", "+topology.bogus=1"))
    msg = str(e.value)
    target = OmegaConf.load(ROOT / "configs" / "topology" / f"{topology}.yaml")._target_
    assert f"topology.bogus: not an argument of {target} (valid: {', '.join(accepted(topology))})" in msg
    assert "unexpected keyword argument" not in msg


def test_topology_key_of_another_topology_is_refused():
    with pytest.raises(ConfigError, match=r"topology.k: not an argument of flowsched.BigSwitch \(valid: hosts, "
                                          r"link_gbps\)"):
        check_train_config(cfg_of("train", "topology=bigswitch", "+topology.k=4"))
    with pytest.raises(ConfigError, match=r"topology.ecmp_sed: .*did you mean 'ecmp_seed'"):
        check_train_config(cfg_of("train", "topology=leafspine", "+topology.ecmp_sed=1"))


@pytest.mark.parametrize("main", ["train", "evaluate"])
def test_no_topology_and_hydra_keys_pass(main):
    CHECKS[main](cfg_of(main, "~topology"))  # null: the env's default
    CHECKS[main](cfg_of(main, "topology=parkinglot", "+topology._recursive_=false"))


def test_bad_topology_target_is_named():
    with pytest.raises(ConfigError, match=r"topology._target_='flowsched.NoSuchTopology': cannot be imported"):
        check_train_config(cfg_of("train", "topology._target_=flowsched.NoSuchTopology"))


# ---------------------------------------------------------------- shipped configs still pass


@pytest.mark.parametrize("env", group_options("env"))
@pytest.mark.parametrize("topology", group_options("topology"))
def test_every_env_and_topology_passes(env, topology):
    check_train_config(cfg_of("train", f"env={env}", f"topology={topology}"))
    check_evaluate_config(cfg_of("evaluate", f"env={env}", f"topology={topology}"))


@pytest.mark.parametrize("experiment", group_options("experiment"))
def test_every_experiment_passes(experiment):
    check_train_config(cfg_of("train", f"experiment={experiment}"))


# ---------------------------------------------------------------- the scripts


def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    return subprocess.run([sys.executable, str(ROOT / name), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_train_py_refuses_an_unknown_env_key_before_training(tmp_path):
    p = script("train.py", "experiment=smoke", "+env.bogus=1", "total_timesteps=256", "eval.every=0", "logger=none",
               cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "env.bogus: unknown key (valid: family, id" in p.stderr
    assert not list(tmp_path.rglob("run.json"))  # nothing trained


def test_evaluate_py_refuses_an_unknown_env_key(tmp_path):
    p = script("evaluate.py", "policies=[fifo]", "seeds=1", "+env.bogus=1", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "env.bogus: unknown key (valid: family, id" in p.stderr


def test_train_py_names_an_unknown_topology_key(tmp_path):
    p = script("train.py", "experiment=smoke", "+topology.bogus=1", "total_timesteps=256", "eval.every=0",
               "logger=none", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "topology.bogus: not an argument of flowsched.BigSwitch (valid: hosts, link_gbps)" in p.stderr
    assert "unexpected keyword argument" not in p.stderr


def test_evaluate_py_takes_an_experiment_preset_and_still_refuses_training_keys_without_one(tmp_path):
    # a preset sets training keys (total_timesteps, eval, checkpoint) that evaluate does not
    # read: evaluate.py experiment=<name> refused every preset before
    p = script("evaluate.py", "experiment=smoke", "policies=[fifo]", "seeds=1", "figures=false", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert list(tmp_path.rglob("summary.csv"))
    p = script("evaluate.py", "policies=[fifo]", "seeds=1", "+total_timesteps=5", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "total_timesteps: unknown key" in p.stderr


def test_evaluate_py_refuses_a_directory_that_holds_an_evaluation(tmp_path):
    # it wrote over the old report and left the old cells' figures beside it
    args = ("policies=[fifo]", "seeds=1", "figures=false", "hydra.run.dir=ev")
    assert script("evaluate.py", *args, cwd=tmp_path).returncode == 0
    p = script("evaluate.py", *args, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "already holds an evaluation (results.parquet, summary.csv, report.md); give a new hydra.run.dir" in p.stderr


def test_refused_runs_leave_no_directories_behind(tmp_path):
    # each left a folder with .hydra/ and an empty log (104 of them in one session)
    for name, args in (("train.py", ("experiment=smoke", "seed=-1")), ("evaluate.py", ("policies=[fifo]", "seeds=0"))):
        p = script(name, *args, cwd=tmp_path)
        assert p.returncode == 1, p.stdout + p.stderr
    assert not list(tmp_path.rglob(".hydra"))
    # a directory that holds a run is left as it is when refused
    held = tmp_path / "held"
    (held / "checkpoints").mkdir(parents=True)
    p = script("train.py", "experiment=smoke", f"hydra.run.dir={held}", cwd=tmp_path)
    assert p.returncode == 1 and "already holds a run" in p.stderr
    assert (held / "checkpoints").is_dir()


def test_a_sweep_with_a_bad_value_in_a_later_job_trains_no_job(tmp_path):
    # Hydra composes the jobs one by one: job 0 trained in full before job 1's seed=-1 failed
    p = script("train.py", "-m", "seed=0,-1", "experiment=smoke", "total_timesteps=256", "logger=none",
               cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "sweep job seed=-1: invalid train config" in p.stderr and "seed=-1: must be an integer" in p.stderr
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob("model.zip"))


def test_an_evaluate_sweep_with_a_bad_value_in_a_later_job_runs_no_job(tmp_path):
    # as train.py's: job 0 evaluated in full before job 1's seeds=0 was refused
    p = script("evaluate.py", "-m", "seeds=1,0", "policies=[fifo]", "env.kwargs.n_bursts=2", "figures=false",
               cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "sweep job seeds=0: invalid evaluate config" in p.stderr, p.stderr
    assert not list(tmp_path.rglob("results.parquet"))
