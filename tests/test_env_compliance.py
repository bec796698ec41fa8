"""Every registered id works with the usual RL tooling, out of the box (issue 17).

Over every id of ``flowsched.envs.ENV_IDS`` and every vectorization mode: Gymnasium's
and SB3's env checkers without a single warning, 1,000 steps of random actions drawn
from ``action_space``, the same seed giving the same rollout, the action mask reachable
through wrappers and vector envs, rendering, ``gym.make_vec`` options, SB3's
``make_vec_env``, the flat layouts, and the removed ``-v0`` ids. Small configs keep it
fast (the thresholds env simulates a whole control interval per step).
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from nested import assert_same
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import flowsched  # noqa: F401  (registers the envs)
from flowsched.envs import ENV_IDS, REMOVED_IDS
from flowsched.envs.wrappers import NormalizeFeatures, mask_of

TOKEN, SWITCH, THRESHOLDS, ARTEMIS = ENV_IDS
SMALL = {
    TOKEN: {"n_bursts": 6, "burst_rate_hz": 40.0},
    ARTEMIS: {"n_bursts": 6},  # the packet model in the thesis' setting
    SWITCH: {"n_flows": 40, "hosts": 4, "max_flows": 16},
    THRESHOLDS: {"n_flows": 60, "hosts": 4, "interval_flows": 20},
}
MODES = ("sync", "async", "vector_entry_point")


def test_every_env_is_tested_here():
    assert set(SMALL) == set(ENV_IDS)
    assert set(ENV_IDS) == {k for k in gym.registry if k.startswith("flowsched/")}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_check_env_passes_without_warnings(env_id):
    env = gym.make(env_id, **SMALL[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped)  # also makes and renders every declared render mode


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_check_env_passes_without_warnings(env_id):
    env = gym.make(env_id, **SMALL[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(env, warn=True, skip_render_check=False)


def _random_rollout(env_id: str, mode: str | None, steps: int, seed: int = 0) -> list:
    """(obs, reward, terminated, truncated) of ``steps`` env-steps of actions sampled from
    the action space (seeded), in ``mode`` (None: one env through gym.make)."""
    if mode is None:
        env = gym.make(env_id, **SMALL[env_id])
    else:
        env = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, **SMALL[env_id])
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    out = [obs]
    n = 1 if mode is None else 2
    for _ in range(steps // n):
        obs, r, term, trunc, _ = env.step(env.action_space.sample())
        assert obs in env.observation_space
        out.append((obs, r, term, trunc))
        if mode is None and (term or trunc):
            obs, _ = env.reset()
            out.append(obs)
    env.close()
    return out


@pytest.mark.parametrize("mode", (None, *MODES))
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_1000_random_actions_from_the_action_space_and_the_same_seed_gives_the_same_rollout(env_id, mode):
    a = _random_rollout(env_id, mode, 1000)
    # the thresholds env simulates a whole interval per step: compare its first 200 steps
    b = _random_rollout(env_id, mode, 200 if env_id == THRESHOLDS else 1000)
    assert_same(a[:len(b)], b)
    done = [x[2] for x in a[1:] if isinstance(x, tuple)]
    assert np.any(done), "the rollout should cross an episode end"


def test_masked_token_actions_admit_the_oldest_and_are_counted():
    env = gym.make(TOKEN, **SMALL[TOKEN])
    obs, _ = env.reset(seed=3)
    masked, done = 0, False
    while not done:
        free = np.flatnonzero(obs["action_mask"] == 0)
        action = int(free[0]) if free.size else 0
        obs, _, done, _, info = env.step(action)
        masked += bool(info.get("masked_action", False))
    assert masked > 0
    strict = gym.make(TOKEN, masked_action="raise", **SMALL[TOKEN])
    obs, _ = strict.reset(seed=3)
    while obs["action_mask"].all():
        obs, *_ = strict.step(0)
    with pytest.raises(ValueError, match="masked_action='raise'"):
        strict.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    venv = gym.make_vec(TOKEN, num_envs=4, vectorization_mode="vector_entry_point", **SMALL[TOKEN])
    obs, _ = venv.reset(seed=3)
    seen = False
    for _ in range(200):
        obs, _, _, _, infos = venv.step(np.full(4, 4))
        if "masked_action" in infos:
            assert infos["_masked_action"].dtype == bool
            seen = True
    assert seen


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_box_actions_outside_the_bounds_raise_naming_them(env_id):
    env = gym.make(env_id, **SMALL[env_id])
    if not isinstance(env.action_space, gym.spaces.Box):
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"expected 0 to 4 "):
            env.step(5)
        return
    env.reset(seed=0)
    bad = np.zeros(env.action_space.shape, np.float32)
    bad[-1] = 1.001
    with pytest.raises(ValueError, match=r"must be within \[-1, 1\]"):
        env.step(bad)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **SMALL[env_id])
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"^env 1: .*must be within \[-1, 1\]") as err:
        venv.step(np.stack([np.zeros_like(bad), bad]))
    assert str(err.value).count("env 1") == 1


def test_action_masks_through_wrappers_and_every_vector_mode():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    env = gym.make(TOKEN, **SMALL[TOKEN])
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), obs["action_mask"] > 0)
    np.testing.assert_array_equal(get_action_masks(env), obs["action_mask"] > 0)
    vec = make_vec_env(f"flowsched:{TOKEN}", n_envs=2, env_kwargs=SMALL[TOKEN])  # passes render_mode="rgb_array"
    assert is_masking_supported(vec)
    obs = vec.reset()
    np.testing.assert_array_equal(get_action_masks(vec), obs["action_mask"] > 0)
    for mode in MODES:
        venv = gym.make_vec(TOKEN, num_envs=2, vectorization_mode=mode, **SMALL[TOKEN])
        obs, _ = venv.reset(seed=0)
        masks = np.stack(venv.call("action_masks"))
        np.testing.assert_array_equal(masks, obs["action_mask"] > 0, err_msg=mode)
        venv.close()


@pytest.mark.parametrize("mode", (None, "vector_entry_point"))
def test_the_terminal_observation_keeps_the_last_real_mask(mode):
    if mode is None:
        env = gym.make(TOKEN, **SMALL[TOKEN])
        obs, _ = env.reset(seed=1)
        done = False
        while not done:
            last = obs["action_mask"]
            obs, _, done, _, _ = env.step(0)
        np.testing.assert_array_equal(obs["action_mask"], last)
        np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), last > 0)
        return
    venv = gym.make_vec(TOKEN, num_envs=2, vectorization_mode=mode, **SMALL[TOKEN])
    obs, _ = venv.reset(seed=1)
    for _ in range(500):
        last = obs["action_mask"]
        obs, _, term, _, _ = venv.step(np.zeros(2, np.int64))
        if term.any():
            i = int(np.flatnonzero(term)[0])
            assert obs["action_mask"][i].any()
            np.testing.assert_array_equal(obs["action_mask"][i], last[i])
            return
    pytest.fail("no episode ended")


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", MODES)
def test_make_vec_takes_max_episode_steps_and_render_mode_in_every_mode(env_id, mode):
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, max_episode_steps=2, render_mode="rgb_array",
                        **SMALL[env_id])
    venv.reset(seed=0)
    venv.action_space.seed(0)
    _, _, term, trunc, _ = venv.step(venv.action_space.sample())
    assert not trunc.any()
    _, _, term, trunc, _ = venv.step(venv.action_space.sample())
    assert (trunc | term).all()
    frames = venv.render()
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    venv.step(venv.action_space.sample())  # the truncated lanes reset
    venv.close()


@pytest.mark.parametrize("mode", ("sync", "async"))
def test_make_vec_wrappers_in_the_python_modes(mode):
    venv = gym.make_vec(TOKEN, num_envs=2, vectorization_mode=mode, wrappers=[gym.wrappers.FlattenObservation],
                        **SMALL[TOKEN])
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (2, 5 + 5 + 35)
    venv.close()


def test_make_vec_wrappers_are_refused_by_gymnasium_in_vector_entry_point_mode():
    """Gymnasium 1.2 itself refuses ``wrappers=`` (single-env wrappers) with a
    ``vector_entry_point`` before calling the creator; the native vector env takes
    Gymnasium's vector wrappers instead."""
    with pytest.raises(gym.error.Error, match="wrappers argument"):
        gym.make_vec(TOKEN, num_envs=2, wrappers=[gym.wrappers.FlattenObservation])
    venv = gym.wrappers.vector.FlattenObservation(gym.make_vec(TOKEN, num_envs=2, **SMALL[TOKEN]))
    assert venv.reset(seed=0)[0].shape == (2, 45)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_make_vec_env_works(env_id):
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env(f"flowsched:{env_id}", n_envs=2, env_kwargs=SMALL[env_id], seed=0)
    vec.reset()
    vec.step(np.stack([vec.action_space.sample() for _ in range(2)]))
    img = vec.render()
    assert img is not None and img.dtype == np.uint8
    vec.close()


@pytest.mark.parametrize("env_id", (TOKEN, SWITCH))
def test_flat_layout_is_flatten_observation_of_the_dict(env_id):
    d, f = gym.make(env_id, **SMALL[env_id]), gym.make(env_id, obs_format="flat", **SMALL[env_id])
    od, _ = d.reset(seed=5)
    of, _ = f.reset(seed=5)
    np.testing.assert_array_equal(gym.spaces.flatten(d.observation_space, od), of)
    assert gym.spaces.flatten_space(d.observation_space) == f.observation_space
    d.action_space.seed(0)
    for _ in range(20):
        a = d.action_space.sample()
        od, *_ = d.step(a)
        of, *_ = f.step(a)
        np.testing.assert_array_equal(gym.spaces.flatten(d.observation_space, od), of)


def test_normalize_features_leaves_the_mask_alone_and_rllib_format_holds_it():
    env = NormalizeFeatures(gym.make(TOKEN, obs_format="flat", **SMALL[TOKEN]))
    raw = gym.make(TOKEN, obs_format="flat", **SMALL[TOKEN])
    o, _ = env.reset(seed=2)
    r, _ = raw.reset(seed=2)
    for _ in range(30):
        np.testing.assert_array_equal(o[:5], r[:5])
        np.testing.assert_array_equal(mask_of(o, 5), env.get_wrapper_attr("action_masks")())
        o, *_ = env.step(0)
        r, *_ = raw.step(0)
    assert np.abs(o[5:]).max() < 10 and np.abs(r[5:]).max() > 10  # features rescaled, the mask not
    rl = gym.make(TOKEN, obs_format="rllib", **SMALL[TOKEN])
    o, _ = rl.reset(seed=2)
    assert set(o) == {"action_mask", "observations"}
    np.testing.assert_array_equal(o["observations"], raw.reset(seed=2)[0][5:])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_render_modes_and_fps(env_id):
    env = gym.make(env_id, render_mode="ansi", **SMALL[env_id])
    assert env.metadata["render_fps"] > 0 and set(env.metadata["render_modes"]) == {"ansi", "rgb_array"}
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(30):
        _, _, done, _, _ = env.step(env.action_space.sample())
        text = env.render()
        assert isinstance(text, str) and "-0.000" not in text
        if done:
            env.reset()
    img = gym.make(env_id, render_mode="rgb_array", **SMALL[env_id])
    img.reset(seed=0)
    frame = img.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 2
    with pytest.raises(ValueError, match="render_mode must be None, 'ansi' or 'rgb_array'"):
        type(img.unwrapped)(render_mode="svg", **SMALL[env_id])


@pytest.mark.parametrize("old,new", sorted(REMOVED_IDS.items()))
def test_removed_v0_ids_name_their_successor(old, new):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(gym.error.DeprecatedEnv, match=new.replace("/", "/")):
            gym.make(old)
        with pytest.raises(gym.error.DeprecatedEnv, match=new):
            gym.make(f"flowsched:{old}")


def test_training_configs_with_a_removed_id_fail_with_the_successor_named():
    from flowsched.agents.envs import check_env_id

    assert check_env_id(TOKEN) == TOKEN
    with pytest.raises(ValueError, match="TokenScheduling-v0, which was removed.*set env.id to "
                                         "flowsched/TokenScheduling-v1"):
        check_env_id("flowsched/TokenScheduling-v0", "run dir outputs/x")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_adapter_of_the_native_vector_env_renders_and_forwards_methods(env_id):
    from flowsched.envs.sb3 import SB3VecEnv

    venv = SB3VecEnv(gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", render_mode="rgb_array",
                                  max_episode_steps=3, **SMALL[env_id]))
    venv.reset()
    img = venv.render()
    assert img.dtype == np.uint8 and img.ndim == 3
    assert venv.env_method("render_mode") == ["rgb_array", "rgb_array"]
    for _ in range(3):
        _, _, dones, infos = venv.step(np.stack([venv.action_space.sample() for _ in range(2)]))
    assert dones.all() and all("terminal_observation" in i for i in infos)  # the step limit of 3 ends every lane


def test_a_model_saved_against_the_v0_spaces_is_refused_with_both_spaces_named():
    from types import SimpleNamespace

    from hydra import compose, initialize_config_module

    from flowsched.agents.envs import check_model_spaces, make_env

    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        cfg = compose(config_name="train", overrides=["env=token"])
    env = make_env(cfg)
    check_model_spaces(
        SimpleNamespace(observation_space=env.observation_space, action_space=env.action_space), cfg, "ok"
    )
    inf = np.float32(np.inf)
    v0 = gym.spaces.Dict({  # TokenScheduling-v0's space at the last v0 commit
        "requests": gym.spaces.Box(np.tile(np.float32([0, 0, -inf, 0, 0, 0, 0]), (5, 1)),
                                   np.tile(np.float32([inf, inf, inf, inf, inf, 1, inf]), (5, 1)), dtype=np.float32),
        "active": gym.spaces.Box(np.float32([0, 0, -inf, 0, 0]), np.float32([1, inf, inf, inf, inf]), dtype=np.float32),
        "action_mask": gym.spaces.Box(0.0, 1.0, (5,), dtype=np.float32),
    })
    with pytest.raises(ValueError, match=r"runs/x/model.zip was saved with the observation_space Dict\(.*requests: "
                                         r"Box\(5, 7\)\), but flowsched/TokenScheduling-v1 now has .*requests: "
                                         r"Box\(35,\)\) \(the shapes differ\).*retrain"):
        check_model_spaces(
            SimpleNamespace(observation_space=v0, action_space=env.action_space), cfg, "runs/x/model.zip"
        )
    cfg.env.id = "flowsched/TokenScheduling-v0"
    with pytest.raises(ValueError, match="was removed"):
        check_model_spaces(
            SimpleNamespace(observation_space=v0, action_space=env.action_space), cfg, "runs/x/model.zip"
        )


@pytest.mark.parametrize("env_id,obs_format", [(TOKEN, "flat"), (TOKEN, "rllib"), (SWITCH, "flat")])
def test_the_other_observation_formats_pass_both_checkers_without_warnings(env_id, obs_format):
    env = gym.make(env_id, obs_format=obs_format, **SMALL[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped)
        sb3_check_env(env, warn=True)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", obs_format=obs_format,
                        **SMALL[env_id])
    obs, _ = venv.reset(seed=0)
    assert obs in venv.observation_space
    venv.action_space.seed(0)
    for _ in range(50):
        obs, *_ = venv.step(venv.action_space.sample())
        assert obs in venv.observation_space
