"""Hydra config groups shipped as package data (``config_path="pkg://flowsched.configs"``).

Primary configs: ``train.yaml`` (train.py) and ``evaluate.yaml`` (evaluate.py). Groups:
``env/`` (token, switch), ``workload/``, ``topology/``, ``agent/`` (learned agents and
every baseline by name), ``logger/`` (none, tensorboard, wandb) and ``experiment/``
(presets, ``# @package _global_``). A new env family is one file ``env/<name>.yaml``
naming its registered Gymnasium id, metric and baselines.
"""
