"""Checks a core install of flowsched (no extras), run inside that install's venv.

Called by ``.ci/core_install_check.sh`` from a directory outside the repository, so that
``import flowsched`` finds the installed wheel, not the source tree. It checks that:

* the training stack (torch, SB3, sb3-contrib, Hydra, OmegaConf, matplotlib, TensorBoard,
  Ray, W&B) is not installed, and ``import flowsched``, ``flowsched.envs`` and
  ``flowsched.baselines`` import none of it;
* ``gym.make`` and one step work on every registered ``flowsched/`` id (the defaults a user
  gets), and Gymnasium's ``check_env`` passes on small configs, and ``gym.make_vec`` with
  the envs' own vector entry points steps;
* ``flowsched generate`` and ``flowsched simulate`` run on a small trace (console script);
* ``import flowsched.agents`` fails with an ImportError naming ``flowsched[train]``.

``--allow-training`` skips the "not installed" check (to run the env part in a full
environment, e.g. when checking several Gymnasium versions).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import warnings

TRAINING = ("torch", "stable_baselines3", "sb3_contrib", "hydra", "omegaconf", "matplotlib",
            "tensorboard", "ray", "wandb")
SMALL = {
    "flowsched/TokenScheduling-v1": {"n_bursts": 6, "burst_rate_hz": 40.0},
    "flowsched/TokenScheduling-Artemis-v0": {"n_bursts": 6},  # the packet model in the thesis' setting
    "flowsched/SwitchScheduling-v1": {"n_flows": 40, "hosts": 4, "max_flows": 16},
    "flowsched/QueueThresholds-v1": {"n_flows": 60, "hosts": 4, "interval_flows": 20},
}
STEPS = 300


def imported_training() -> list[str]:
    return sorted({m.split(".")[0] for m in sys.modules} & set(TRAINING))


def step(msg: str) -> None:
    print(f"[core-install] {msg}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--allow-training", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()

    if not args.allow_training:
        installed = [m for m in TRAINING if importlib.util.find_spec(m) is not None]
        assert not installed, f"a core install must not bring the training stack; installed: {installed}"
        step(f"not installed: {', '.join(TRAINING)}")

    import flowsched
    import flowsched.baselines  # noqa: F401
    import flowsched.envs

    assert "site-packages" in flowsched.__file__, f"not the installed package: {flowsched.__file__}"
    assert not imported_training(), f"import flowsched imported {imported_training()}"
    step(f"flowsched {flowsched.__version__} from {os.path.dirname(flowsched.__file__)}; "
         f"imports nothing of the training stack")

    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    ids = sorted(k for k, spec in gym.registry.items() if k.startswith("flowsched/"))
    live = [k for k in ids if k not in flowsched.envs.REMOVED_IDS]
    assert set(live) == set(flowsched.envs.ENV_IDS) == set(SMALL), (live, flowsched.envs.ENV_IDS)
    for env_id in live:
        env = gym.make(env_id)
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs), env_id
        out = env.step(env.action_space.sample())
        assert len(out) == 5, env_id
        env.close()
        env = gym.make(env_id, **SMALL[env_id])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped, skip_render_check=True)
        env.close()
        env = gym.make(env_id, **SMALL[env_id])
        env.reset(seed=1)
        env.action_space.seed(1)
        for _ in range(STEPS):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        env.close()
        for mode in ("sync", "vector_entry_point"):
            venv = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, **SMALL[env_id])
            venv.reset(seed=0)
            for _ in range(3):
                venv.step(venv.action_space.sample())
            venv.close()
        step(f"{env_id}: gym.make + step (defaults), check_env, {STEPS} random steps, "
             f"make_vec (sync, vector_entry_point) + steps: ok")
    for old in flowsched.envs.REMOVED_IDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                gym.make(old)
            except gym.error.Error:
                continue
        raise AssertionError(f"{old} should be removed")

    try:
        import flowsched.agents  # noqa: F401
    except ImportError as e:
        assert 'flowsched[train]' in str(e), str(e)
        step(f"import flowsched.agents: ImportError: {e}")
    else:
        if not args.allow_training:
            raise AssertionError("import flowsched.agents should fail without the [train] extra")

    exe = os.path.join(os.path.dirname(sys.executable), "flowsched")
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.parquet")
        for cmd in (["--help"],
                    ["generate", "--workload", "websearch", "--load", "0.6", "--hosts", "16",
                     "--flows", "2000", "--seed", "0", "--out", trace],
                    ["simulate", "--trace", trace, "--scheduler", "srpt", "--hosts", "16",
                     "--out", os.path.join(d, "results.csv")]):
            r = subprocess.run([exe, *cmd], capture_output=True, text=True)
            assert r.returncode == 0, f"flowsched {' '.join(cmd)}: {r.returncode}\n{r.stdout}\n{r.stderr}"
            step(f"flowsched {cmd[0]}: ok ({len(r.stdout.splitlines())} lines of output)")
        # the CLI in-process: still nothing of the training stack
        import contextlib
        import io

        from flowsched.cli import main as cli_main
        with contextlib.redirect_stdout(io.StringIO()):
            cli_main(["simulate", "--trace", trace, "--scheduler", "fair", "--hosts", "16"])
    assert not imported_training(), f"the envs or the CLI imported {imported_training()}"
    step(f"all checks passed in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
