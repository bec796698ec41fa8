"""RLlib PPO on a registered flowsched env: with RLlib's default module on the flat
observation, or with action masking through the module flowsched ships.

* default: ``obs_format="flat"`` (one Box), RLlib's default MLP module; a masked
  action admits the oldest request, as the env documents.
* ``--masking``: ``obs_format="rllib"`` (RLlib's convention, ``Dict(action_mask,
  observations)``) and :class:`flowsched.envs.rllib.ActionMaskingPPOModule`, RLlib's
  default PPO module whose masked logits are set to ``FLOAT_MIN``.

    python examples/rllib_ppo.py --iterations 5
    python examples/rllib_ppo.py --masking --iterations 1 --batch 256
"""
from __future__ import annotations

import argparse
import os


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--masking", action="store_true", help="RLlib's masking convention and flowsched's module")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--batch", type=int, default=2000, help="train_batch_size_per_learner")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local Ray with no token (Ray 2.60)
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    config = (
        PPOConfig()
        .environment(
            "flowsched:flowsched/TokenScheduling-v1", env_config={"obs_format": "rllib" if a.masking else "flat"}
        )
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=a.batch, minibatch_size=min(128, a.batch), num_epochs=2)
        .debugging(seed=a.seed)
    )
    if a.masking:
        from flowsched.envs.rllib import ActionMaskingPPOModule

        config = config.rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingPPOModule))
    algo = config.build_algo()
    for i in range(a.iterations):
        result = algo.train()
        ret = result.get("env_runners", {}).get("episode_return_mean", float("nan"))
        print(f"iteration {i + 1}: episode_return_mean {ret:.1f} (deadlines met per episode)")
    algo.stop()
    ray.shutdown()
    print("masked module" if a.masking else "default module", "done")


if __name__ == "__main__":
    main()
