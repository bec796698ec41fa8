"""Hydra config composition for every option of every group (train.yaml, evaluate.yaml),
and the agents' building blocks (no training)."""
from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from hydra.utils import instantiate

import flowsched.agents  # noqa: F401  (resolvers)
from flowsched.agents.envs import effective_load, env_kwargs, make_env, make_vec_env


def options(group: str) -> list[str]:
    d = resources.files("flowsched.configs") / group
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".yaml"))


def family_of(cfg_group_option) -> str:
    fams = cfg_group_option.get("env_families")
    return "token" if fams is None or "token" in fams else fams[0]


DEFAULT_WORKLOAD = {"token": "artemis_a1", "token_artemis": "artemis_a1", "switch": "websearch",
                    "switch_packet": "websearch", "thresholds": "websearch", "thresholds_packet": "websearch"}
SMALL = {"token": "env.kwargs.n_bursts=2", "token_artemis": "env.kwargs.n_bursts=2", "switch": "env.kwargs.n_flows=30",
         "switch_packet": "env.kwargs.n_flows=30", "thresholds": "env.kwargs.n_flows=300",
         "thresholds_packet": "env.kwargs.n_flows=100"}


def train_cfg(*overrides: str):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name="train", overrides=list(overrides))


def test_groups_have_options():
    assert {"token", "switch"} <= set(options("env"))
    assert {"artemis_a1", "artemis_a2", "websearch", "datamining"} <= set(options("workload"))
    assert {"bigswitch", "leafspine"} <= set(options("topology"))
    assert {"none", "tensorboard", "wandb"} <= set(options("logger"))
    assert {"maskable_ppo", "ppo", "a2c", "artemis", "equivariant_ppo"} <= set(options("agent"))
    from flowsched import baselines

    for fam, names in baselines.BASELINES.items():
        assert set(names) <= set(options("agent")), fam


def test_default_config():
    cfg = train_cfg()
    assert (cfg.env.family, cfg.workload.name, cfg.agent.name) == ("token", "artemis_a1", "maskable_ppo")
    assert cfg.eval.baselines == cfg.env.baselines
    assert effective_load(cfg) == pytest.approx(0.24)


@pytest.mark.parametrize("env", options("env"))
@pytest.mark.parametrize("topology", options("topology"))
def test_env_and_topology(env, topology):
    cfg = train_cfg(f"env={env}", f"workload={DEFAULT_WORKLOAD[env]}", f"topology={topology}", SMALL[env])
    e = make_env(cfg, evaluation=True)
    obs, _ = e.reset(seed=0)
    assert e.observation_space.contains(obs)


@pytest.mark.parametrize("workload", options("workload"))
def test_workload(workload):
    w = train_cfg(f"workload={workload}").workload
    fam = family_of(w)
    cfg = train_cfg(f"env={fam}", f"workload={workload}", SMALL[fam])
    kw = env_kwargs(cfg)
    assert kw["workload"] == workload
    make_env(cfg).reset(seed=0)


def test_token_load_sets_burst_rate():
    cfg = train_cfg("workload.load=0.72")
    assert env_kwargs(cfg)["burst_rate_hz"] == pytest.approx(30.0)


@pytest.mark.parametrize("agent", options("agent"))
def test_agent(agent):
    # agent=rule is the one rule-agent config: it needs agent.rule (agent=<rule> sets it)
    rule = ["agent.rule=las"] if agent == "rule" else []
    a = train_cfg(f"agent={agent}", *rule).agent
    fam = family_of(a)
    cfg = train_cfg(f"env={fam}", f"workload={DEFAULT_WORKLOAD[fam]}", f"agent={agent}", *rule, "env.num_envs=2",
                    SMALL[fam])
    assert cfg.agent.name == (cfg.agent.rule if rule else agent)
    if cfg.agent.kind == "baseline":
        policy = instantiate(cfg.agent.policy)
        env = make_env(cfg, evaluation=True)
        obs, _ = env.reset(seed=0)
        action, _ = policy.predict(obs)
        env.step(action)
        return
    if cfg.agent.kind == "rllib":  # the PPOConfig and the project's RLModule for this env (no Ray started)
        pytest.importorskip("ray.rllib", reason="agent=rllib_ppo needs the [ray] extra")
        from flowsched.agents.rllib import module_for, ppo_config

        c = ppo_config(cfg.env.id, env_kwargs(cfg), hidden=tuple(cfg.agent.algo.hidden))
        assert c.rl_module_spec.module_class is module_for(cfg.env.id)
        env = make_env(cfg)
        m = c.rl_module_spec.module_class(observation_space=env.observation_space, action_space=env.action_space,
                                          model_config={"hidden": list(cfg.agent.algo.hidden)})
        assert sum(p.numel() for p in m.parameters()) > 0
        return
    env = make_vec_env(cfg, 2, masked=cfg.agent.masked)
    model = instantiate(cfg.agent.model, env=env, seed=0, device="cpu", _convert_="all")
    obs = env.reset()
    kwargs = {"action_masks": np.stack(env.env_method("action_masks"))} if cfg.agent.masked else {}
    actions, _ = model.predict(obs, **kwargs)
    assert env.action_space.contains(actions[0])


def test_one_rule_config_and_a_shorthand_per_registered_rule():
    """configs/agent/rule.yaml is the one rule-agent config; agent=<rule> only sets the
    name, and the env families come from the registry (no yaml lists them)."""
    from omegaconf import OmegaConf

    from flowsched import baselines

    d = resources.files("flowsched.configs") / "agent"
    for fam, names in baselines.BASELINES.items():
        for name in names:
            short = OmegaConf.create((d / f"{name}.yaml").read_text())
            assert OmegaConf.to_container(short) == {"defaults": ["rule", "_self_"], "rule": name}
            env = ["experiment=thresholds"] if fam == "thresholds" else ["experiment=switch"] if fam == "switch" else []
            a, b = train_cfg(*env, f"agent={name}"), train_cfg(*env, "agent=rule", f"agent.rule={name}")
            assert OmegaConf.to_container(a.agent, resolve=True) == OmegaConf.to_container(b.agent, resolve=True)
            assert a.agent.name == name and list(a.agent.env_families) == baselines.families(name)
            assert fam in a.agent.env_families


@pytest.mark.parametrize("logger", options("logger"))
def test_logger(logger):
    cfg = train_cfg(f"logger={logger}")
    assert "tensorboard" in cfg.logger


@pytest.mark.parametrize("experiment", options("experiment"))
@pytest.mark.parametrize("main", ["train", "evaluate"])
def test_experiment(experiment, main):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        cfg = compose(config_name=main, overrides=[f"experiment={experiment}"])
    assert cfg.env.family in ("token", "switch", "thresholds")
    assert cfg.workload.get("env_families") is None or cfg.env.family in cfg.workload.env_families
    if main == "train":
        assert cfg.env.family in cfg.agent.env_families


def test_artemis_agent_is_masked_a2c():
    cfg = train_cfg("agent=artemis", "env.num_envs=4")
    m = cfg.agent.model
    assert m.batch_size == m.n_steps * cfg.env.num_envs == 32 and m.n_epochs == 1 and m.gae_lambda == 1.0
    assert m.n_steps == 8 and m.gamma == 0.99 and list(m.policy_kwargs.net_arch) == [16]


def test_equivariant_policy_permutes_scores():
    import torch as th

    cfg = train_cfg("experiment=switch", "env.num_envs=1", "env.kwargs.n_flows=30")
    env = make_vec_env(cfg, 1, normalize_reward=False)
    model = instantiate(cfg.agent.model, env=env, seed=0, device="cpu", _convert_="all")
    obs = env.reset()
    for _ in range(5):
        obs, *_ = env.step(np.zeros((1, cfg.env.kwargs.max_flows), np.float32))
    n = int(obs["flow_mask"].sum())
    assert n >= 2
    m = obs["flow_mask"].shape[1]
    perm = np.arange(m)
    perm[:n] = np.random.default_rng(0).permutation(n)
    flows = obs["flows"].reshape(1, m, -1)  # one row per slot (the env may lay them out flat)
    pobs = {"flows": flows[:, perm].reshape(obs["flows"].shape), "flow_mask": obs["flow_mask"][:, perm]}
    a, _ = model.predict(obs, deterministic=True)
    b, _ = model.predict(pobs, deterministic=True)
    np.testing.assert_allclose(a[:, perm], b, rtol=1e-5, atol=1e-6)
    with th.no_grad():
        v1 = model.policy.predict_values(model.policy.obs_to_tensor(obs)[0])
        v2 = model.policy.predict_values(model.policy.obs_to_tensor(pobs)[0])
    np.testing.assert_allclose(v1.numpy(), v2.numpy(), rtol=1e-5, atol=1e-5)


def test_request_scorer_permutes_logits_and_respects_masks():
    import torch as th

    cfg = train_cfg("agent=scorer_ppo", "workload.load=0.72", "env.num_envs=1")
    env = make_vec_env(cfg, 1)
    model = instantiate(cfg.agent.model, env=env, seed=0, device="cpu", _convert_="all")
    obs = env.reset()
    for _ in range(40):  # into a backlog: several requests waiting
        obs, *_ = env.step(np.zeros(1, np.int64))
        if obs["action_mask"].sum() >= 3:
            break
    n = int(obs["action_mask"].sum())
    assert n >= 3
    w = obs["action_mask"].shape[1]
    perm = np.arange(w)
    perm[:n] = perm[:n][::-1]
    reqs = obs["requests"].reshape(1, w, -1)  # one row per slot (the env may lay them out flat)
    pobs = {"requests": reqs[:, perm].reshape(obs["requests"].shape), "active": obs["active"],
            "action_mask": obs["action_mask"][:, perm]}
    policy = model.policy
    with th.no_grad():  # (the policy reuses one distribution object: read each before the next call)
        p1 = policy.get_distribution(
            policy.obs_to_tensor(obs)[0], action_masks=obs["action_mask"]
        ).distribution.probs.numpy()
        p2 = policy.get_distribution(
            policy.obs_to_tensor(pobs)[0], action_masks=pobs["action_mask"]
        ).distribution.probs.numpy()
        v1 = policy.predict_values(policy.obs_to_tensor(obs)[0]).numpy()
        v2 = policy.predict_values(policy.obs_to_tensor(pobs)[0]).numpy()
    np.testing.assert_allclose(p1[:, perm], p2, rtol=1e-5, atol=1e-6)  # the same request, the same probability
    np.testing.assert_allclose(v1, v2, rtol=1e-5, atol=1e-6)
    mask = obs["action_mask"].copy()
    mask[0, 1] = 0  # a masked slot is never drawn
    with th.no_grad():
        p3 = policy.get_distribution(policy.obs_to_tensor({**obs, "action_mask": mask})[0], action_masks=mask)
        p3 = p3.distribution.probs.numpy()
    assert p3[0, 1] == 0 and p3.sum() == pytest.approx(1.0, abs=1e-6)


def test_epsilon_schedule():
    from flowsched.agents.callbacks import LinearEpsilon

    cb = LinearEpsilon(0.3, 0.0, 0.5, 1000)
    assert cb.value(0) == pytest.approx(0.3)
    assert cb.value(250) == pytest.approx(0.15)
    assert cb.value(500) == cb.value(900) == pytest.approx(0.0)


def test_namespaced_keys():
    from flowsched.agents.logs import namespaced

    assert namespaced("train/value_loss") == "losses/value_loss"
    assert namespaced("train/learning_rate") == "charts/learning_rate"
    assert namespaced("rollout/ep_rew_mean") == "charts/ep_rew_mean"
    assert namespaced("time/fps") == "charts/SPS"
    assert namespaced("eval/deadline_hit_ratio") == "eval/deadline_hit_ratio"
    assert namespaced("time/iterations") is None


def test_training_envs_keep_the_ids_registered_defaults():
    """make_env / make_vec_env apply the id's registered kwargs under the config's, as
    gym.make does: the Artemis id's packet model and TCP settings are in its registration
    (without them, training and evaluation on it silently ran the fluid model)."""
    from flowsched.agents.envs import make_vec_env

    cfg = train_cfg("experiment=artemis_packet", "env.kwargs.n_bursts=2")
    assert make_env(cfg).unwrapped.model == "packet"
    venv = make_vec_env(cfg, 2)
    assert venv.get_attr("model") == ["packet", "packet"]
    venv.close()


def test_the_configuration_page_lists_every_option_of_each_group():
    # docs/configuration.md is configs/README.md: its table had fallen behind the folders
    import re
    from pathlib import Path

    import flowsched.configs

    root = Path(flowsched.configs.__file__).parent
    rows = {m.group(1): set(re.findall(r"`([a-z0-9_]+)`", m.group(2)))
            for m in re.finditer(r"^\| `(\w+)/` \| (.*?) \|", (root / "README.md").read_text(), re.M)}
    for group in ("env", "workload", "topology", "agent", "logger", "experiment"):
        options = {p.stem for p in (root / group).glob("*.yaml")}
        if group == "agent":  # "and one file per baseline": the learners are named
            options = {o for o in options if "\n  - rule\n" not in (root / group / f"{o}.yaml").read_text()}
        assert options <= rows[group], (group, sorted(options - rows[group]))
