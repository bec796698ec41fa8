"""Train an agent (Hydra): ``python train.py [group=option ...] [key=value ...]``.

    python train.py                                  # masked PPO, Artemis workload A v1, then the baseline table
    python train.py agent=artemis total_timesteps=50000
    python train.py experiment=switch                # equivariant PPO on the switch env
    python train.py -m agent=maskable_ppo,artemis seed=0,1
    python train.py resume=outputs/<run dir>         # continue an interrupted run

The code lives in ``flowsched.agents`` (``flowsched.agents.training``); this file is the
same entry point as the ``flowsched-train`` console script.
"""
from flowsched.agents.cli import train_main

if __name__ == "__main__":
    train_main()
