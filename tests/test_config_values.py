"""Config values that passed the checks of train.py / evaluate.py and failed only later
(after training, inside SB3 or RLlib, as a traceback that left the run directory), or were
silently ignored: each is now refused before anything is built or trained, with one
message naming the key and the value; sweeps refuse them as single runs do."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

import flowsched.agents  # noqa: F401  (resolvers)
from flowsched.agents import cli
from flowsched.agents.config_checks import (
    ENV_INFO_METRICS,
    ConfigError,
    check_evaluate_config,
    check_evaluate_envs,
    check_sweep,
    check_train_config,
    episode_metrics,
    group_options,
)
from flowsched.agents.training import main_config_check

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORKLOAD = {"token": "artemis_a1", "token_artemis": "artemis_a1", "switch": "websearch",
                    "switch_packet": "websearch", "thresholds": "websearch", "thresholds_packet": "websearch"}
SMALL = {"token": "env.kwargs.n_bursts=2", "token_artemis": "env.kwargs.n_bursts=2", "switch": "env.kwargs.n_flows=30",
         "switch_packet": "env.kwargs.n_flows=30", "thresholds": "env.kwargs.n_flows=300",
         "thresholds_packet": "env.kwargs.n_flows=100"}


def cfg_of(main: str, *overrides: str):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name=main, overrides=list(overrides))


def evaluate_check(cfg) -> None:
    check_evaluate_config(cfg)
    check_evaluate_envs(cfg)


def refused(check, cfg, *needles: str) -> str:
    with pytest.raises(ConfigError) as e:
        check(cfg)
    msg = str(e.value)
    for n in needles:
        assert n in msg, (n, msg)
    assert "Traceback" not in msg
    return msg


def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    return subprocess.run([sys.executable, str(ROOT / name), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def one_error(p: subprocess.CompletedProcess, prefix: str) -> str:
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert prefix in p.stderr and "Traceback" not in p.stderr, p.stderr
    return p.stderr


# ---------------------------------------------------------------- 1, 2: env families, in sweeps too


def test_agent_of_another_env_family_is_a_config_error_with_hints_that_exist():
    # it was a SystemExit suggesting experiment=token (no such experiment)
    msg = refused(main_config_check, cfg_of("train", "agent=equivariant_ppo"),
                  "agent 'equivariant_ppo' works with env ['switch'], not env.family='token'", "maskable_ppo",
                  "env=switch|switch_packet", "experiment=switch")
    assert "experiment=token" not in msg and "experiment=None" not in msg


def test_workload_of_another_env_family_names_the_workloads_that_fit():
    refused(main_config_check, cfg_of("train", "workload=websearch"),
            "workload 'websearch' is for env ['switch', 'thresholds'], not env.family='token'",
            "workloads for token: artemis_a1, artemis_a2")


def test_a_sweep_checks_the_env_families_of_every_job_before_the_first():
    with pytest.raises(ConfigError, match=r"sweep job agent=equivariant_ppo: agent 'equivariant_ppo' works with env"):
        check_sweep(["-m", "agent=fifo,equivariant_ppo", "eval.final_episodes=1"], cli._check_train_job)


def test_train_py_sweep_with_an_agent_of_another_env_trains_no_job(tmp_path):
    # job 0 (fifo) ran to its end before job 1 failed
    p = script("train.py", "-m", "agent=fifo,equivariant_ppo", "eval.final_episodes=1", "total_timesteps=256",
               "eval.every=0", "checkpoint.every=0", "logger=none", "progress_bar=false", cwd=tmp_path)
    err = one_error(p, "train.py: error: sweep job agent=equivariant_ppo: agent 'equivariant_ppo' works with env")
    assert "experiment=switch" in err
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob(".hydra"))


# ---------------------------------------------------------------- 3: nulls


@pytest.mark.parametrize("key", ["workload.name", "agent.name", "env.id", "env.family"])
def test_null_names_are_refused(key):
    refused(check_train_config, cfg_of("train", f"{key}=null"), f"{key}=None: must be a string")


@pytest.mark.parametrize("key", ["workload.name", "env.id", "env.family"])
def test_null_names_are_refused_by_evaluate(key):
    refused(check_evaluate_config, cfg_of("evaluate", f"{key}=null"), f"{key}=None: must be a string")


@pytest.mark.parametrize("main", ["train", "evaluate"])
def test_null_env_kwargs_are_refused(main):
    check = check_train_config if main == "train" else check_evaluate_config
    refused(check, cfg_of(main, "env.kwargs=null"), "env.kwargs=None: must be a mapping")


# ---------------------------------------------------------------- 4: an agent named like a baseline


def test_agent_named_like_a_baseline_is_refused():
    # its rows were merged with the fifo baseline's in the final table
    refused(check_train_config, cfg_of("train", "agent.name=fifo"),
            "agent.name='fifo': also the name of a baseline of eval.baselines", "eval.baselines=[edf,")
    refused(check_train_config, cfg_of("train", "agent=rule", "agent.rule=edf", "agent.name=fifo"),
            "agent.name='fifo'")
    # a rule agent is the baseline of its name (evaluated once); other names pass
    check_train_config(cfg_of("train", "agent=fifo"))
    check_train_config(cfg_of("train", "agent.name=fifo", "eval.baselines=[edf]"))
    check_train_config(cfg_of("train", "agent.name=my_ppo"))


# ---------------------------------------------------------------- 5: SB3 hyperparameters


@pytest.mark.parametrize(("override", "needle"), [
    ("agent.model.ent_coef=abc", "agent.model.ent_coef='abc': must be a finite number >= 0"),
    ("agent.model.ent_coef=auto", "agent.model.ent_coef='auto'"),
    ("agent.model.ent_coef=-0.1", "agent.model.ent_coef=-0.1"),
    ("agent.model.learning_rate=abc", "agent.model.learning_rate='abc': must be a finite number > 0"),
    ("agent.model.learning_rate=-1", "agent.model.learning_rate=-1"),
    ("agent.model.learning_rate=0", "agent.model.learning_rate=0"),
    ("agent.model.learning_rate=null", "agent.model.learning_rate=None"),
    ("agent.model.clip_range=-1", "agent.model.clip_range=-1: must be a finite number > 0"),
    ("agent.model.clip_range=0", "agent.model.clip_range=0"),
    ("+agent.model.clip_range_vf=-1", "agent.model.clip_range_vf=-1: must be a finite number > 0 or null"),
    ("agent.model.gae_lambda=1.5", "agent.model.gae_lambda=1.5"),
    ("agent.model.vf_coef=-1", "agent.model.vf_coef=-1"),
    ("+agent.model.max_grad_norm=0", "agent.model.max_grad_norm=0"),
    ("+agent.model.normalize_advantage=maybe", "agent.model.normalize_advantage='maybe': must be true or false"),
    ("+agent.model.use_sde=1", "agent.model.use_sde=1: must be true or false"),
    ("agent.model.batch_size=1", "agent.model.batch_size=1: must be > 1 with normalize_advantage=true"),
])
def test_bad_sb3_hyperparameters_are_refused(override, needle):
    refused(check_train_config, cfg_of("train", override), needle)


def test_a2c_hyperparameters_are_checked():
    refused(check_train_config, cfg_of("train", "agent=a2c", "+agent.model.use_rms_prop=yes"),
            "agent.model.use_rms_prop='yes'")
    refused(check_train_config, cfg_of("train", "agent=a2c", "agent.model.gae_lambda=-0.5"),
            "agent.model.gae_lambda=-0.5")


def test_sb3_values_that_are_allowed_pass_beside_those_that_are_not():
    refused(check_train_config, cfg_of("train", "+agent.model.clip_range_vf=0"), "agent.model.clip_range_vf=0")
    check_train_config(cfg_of("train", "+agent.model.clip_range_vf=null", "agent.model.ent_coef=0",
                              "+agent.model.normalize_advantage=false", "agent.model.batch_size=1"))
    # a schedule built by Hydra is left to SB3
    check_train_config(cfg_of("train", "agent.model.learning_rate={_target_:stable_baselines3.common.utils."
                                       "LinearSchedule,start:0.001,end:0.0,end_fraction:1.0}"))


# ---------------------------------------------------------------- 6: RLlib algo


@pytest.mark.parametrize(("override", "needle"), [
    ("agent.algo.gae_lambda=2", "agent.algo.gae_lambda=2: must be a finite number >= 0 <= 1"),
    ("agent.algo.use_kl_loss=maybe", "agent.algo.use_kl_loss='maybe': must be true or false"),
    ("agent.algo.hidden=abc", "agent.algo.hidden='abc': must be a non-empty list of layer widths"),
    ("agent.algo.hidden=[64,0]", "agent.algo.hidden=[64, 0]"),
    ("agent.algo.hidden=[]", "agent.algo.hidden=[]"),
    ("agent.algo.minibatch_size=8192", "agent.algo.minibatch_size=8192: must be <= agent.algo.train_batch_size=4096"),
    ("agent.algo.entropy_coeff=abc", "agent.algo.entropy_coeff='abc': must be a finite number >= 0"),
    ("agent.algo.vf_loss_coeff=-1", "agent.algo.vf_loss_coeff=-1"),
])
def test_bad_rllib_algo_values_are_refused(override, needle):
    refused(check_train_config, cfg_of("train", "agent=rllib_ppo", override), needle)


def test_rllib_minibatch_must_fit_in_the_train_batch():
    refused(check_train_config, cfg_of("train", "agent=rllib_ppo", "agent.algo.train_batch_size=200",
                                       "agent.algo.minibatch_size=201"),
            "agent.algo.minibatch_size=201: must be <= agent.algo.train_batch_size=200")
    check_train_config(cfg_of("train", "agent=rllib_ppo", "agent.algo.train_batch_size=200",
                              "agent.algo.minibatch_size=100", "agent.algo.hidden=[16]"))


# ---------------------------------------------------------------- 7: env and topology built at check time


@pytest.mark.parametrize(("override", "needle"), [
    ("env.kwargs.k=abc", "env.kwargs: flowsched/TokenScheduling-v1 cannot be built for training: k must be an integer "
                         ">= 1, got 'abc'"),
    ("env.kwargs.burst_rate_hz=null", "env.kwargs: flowsched/TokenScheduling-v1 cannot be built for training: "
                                      "burst_rate_hz must be a finite number > 0, got None"),
    ("+env.kwargs.not_an_argument=1", "unknown option(s) ['not_an_argument'] of the token env"),
    ("topology.hosts=abc", "topology: flowsched.BigSwitch(hosts='abc', link_gbps=1.0) cannot be built: BigSwitch: "
                           "hosts must be an integer >= 2, got 'abc'"),
    ("topology.hosts=0", "topology: flowsched.BigSwitch(hosts=0, "),
    ("topology.hosts=null", "topology: flowsched.BigSwitch(hosts=None, "),
])
def test_env_and_topology_errors_are_config_errors(override, needle):
    msg = refused(main_config_check, cfg_of("train", override), needle)
    assert "Error in call to target" not in msg and "\n" not in msg
    needle = needle.replace(" for training", " for workload artemis_a1")
    msg = refused(evaluate_check, cfg_of("evaluate", override), needle)
    assert "Error in call to target" not in msg


def test_evaluate_builds_the_env_of_every_workload_and_load():
    refused(evaluate_check, cfg_of("evaluate", "env=switch", "workload=websearch", "workloads=[websearch,datamining]",
                                   "loads=[0.5,1.5]"),
            "env.kwargs / loads: flowsched/SwitchScheduling-v1 cannot be built for workload websearch at load 1.5: "
            "load must be")
    refused(evaluate_check, cfg_of("evaluate", "env=switch", "workload=websearch", "workloads=[websearch,artemis_a1]"),
            "workloads: workload 'artemis_a1' is for env ['token'], not env.family='switch'")


def test_a_load_the_env_refuses_names_workload_load():
    refused(main_config_check, cfg_of("train", "experiment=switch", "workload.load=1.5"),
            "env.kwargs / workload.load=1.5: flowsched/SwitchScheduling-v1 cannot be built for training: load must be")


def test_train_py_refuses_a_bad_env_argument_in_one_line_and_removes_the_run_dir(tmp_path):
    p = script("train.py", "env.kwargs.k=abc", "logger=none", "hydra.run.dir=run", cwd=tmp_path)
    err = one_error(p, "train.py: error: env.kwargs: flowsched/TokenScheduling-v1 cannot be built")
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_evaluate_py_refuses_a_bad_topology_in_one_line_and_removes_the_run_dir(tmp_path):
    p = script("evaluate.py", "topology.hosts=abc", "policies=[fifo]", "seeds=1", "hydra.run.dir=ev", cwd=tmp_path)
    err = one_error(p, "evaluate.py: error: topology: flowsched.BigSwitch(hosts='abc'")
    assert len(err.strip().splitlines()) == 1 and "Error in call to target" not in err
    assert not (tmp_path / "ev").exists()


# ---------------------------------------------------------------- 8: metric names


@pytest.mark.parametrize("env", group_options("env"))
def test_the_metrics_the_checks_know_are_those_of_an_episode(env):
    """ENV_INFO_METRICS (and so the names the checks take) are the numbers of an episode's row."""
    from flowsched.agents.evaluation import baseline_kwargs, resolve_policies, run_episodes

    cfg = cfg_of("train", f"env={env}", f"workload={DEFAULT_WORKLOAD[env]}", SMALL[env])
    spec = resolve_policies([cfg.env.baselines[0]], cfg.env.family, baseline_kwargs=baseline_kwargs(cfg))[0]
    rows, _ = run_episodes(spec, cfg, [0], per_flow=False)
    assert set(rows[0]) - {"seed"} == set(episode_metrics(cfg.env.family))
    rows, _ = run_episodes(spec, cfg, [0], per_flow=False, fct_metrics=False)  # the periodic evaluation's
    assert set(rows[0]) - {"seed"} == set(episode_metrics(cfg.env.family, flows=False))
    assert cfg.env.family in ENV_INFO_METRICS


def test_an_unknown_train_metric_is_refused():
    # the learning curve was all NaN
    refused(check_train_config, cfg_of("train", "env.metric=bogus"),
            "env.metric='bogus': unknown token metric 'bogus'; valid: return, steps, masked_action_rate, "
            "deadline_hit_ratio")
    # not in the periodic evaluation's rows (computed from the flows for the final table only)
    refused(check_train_config, cfg_of("train", "env.metric=mean_fct_ms"), "env.metric='mean_fct_ms'",
            "for the final table only")
    refused(check_train_config, cfg_of("train", "env.report_metrics=[mean_fct_ms,bogus]"),
            "env.report_metrics[1]='bogus'")
    check_train_config(cfg_of("train", "env.metric=return", "env.report_metrics=[mean_fct_ms,deadlines_met]"))


def test_an_unknown_evaluate_metric_is_refused():
    # it was silently left out
    refused(check_evaluate_config, cfg_of("evaluate", "metric=bogus"), "metric='bogus': unknown token metric",
            "p99_slowdown")
    check_evaluate_config(cfg_of("evaluate", "metric=mean_fct_ms"))
    refused(check_evaluate_config, cfg_of("evaluate", "env=switch", "workload=websearch", "metric=deadline_hit_ratio"),
            "metric='deadline_hit_ratio': unknown switch metric")


# ---------------------------------------------------------------- 9: W&B without TensorBoard


def test_wandb_without_tensorboard_is_refused():
    refused(check_train_config, cfg_of("train", "logger=wandb", "logger.tensorboard=false"),
            "logger.tensorboard=False with logger.wandb", "sync_tensorboard")
    check_train_config(cfg_of("train", "logger=wandb"))
    check_train_config(cfg_of("train", "logger=wandb", "logger.tensorboard=false", "logger.wandb.mode=disabled"))


# ---------------------------------------------------------------- 10: evaluate.py agent=


def test_evaluate_refuses_an_agent_without_an_experiment():
    refused(check_evaluate_config, cfg_of("evaluate", "agent=maskable_ppo"), "agent='maskable_ppo'", "policies=")


def test_evaluate_sweeps_take_experiment_presets_and_refuse_an_agent_override():
    # the preset's training keys were refused in a sweep's pre-check (no HydraConfig there)
    args = ["-m", "experiment=smoke", "seeds=1,2", "policies=[fifo]"]
    check_sweep(args, cli._check_evaluate_job, "evaluate")
    with pytest.raises(ConfigError, match=r"sweep job seeds=1: invalid evaluate config:\n  agent=ppo: evaluate.py "
                                          r"does not read an agent config; choose what is evaluated with policies="):
        check_sweep([*args, "agent=ppo"], cli._check_evaluate_job, "evaluate")


def test_evaluate_py_refuses_an_agent(tmp_path):
    p = script("evaluate.py", "agent=maskable_ppo", "policies=[fifo]", "seeds=1", cwd=tmp_path)
    one_error(p, "evaluate.py: error: invalid evaluate config:\n  agent=maskable_ppo: evaluate.py does not read")
    assert not list(tmp_path.rglob(".hydra"))
