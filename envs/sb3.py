"""Adapter from flowsched's native vector envs (Gymnasium, next-step autoreset) to
Stable-Baselines3's ``VecEnv`` (same-step autoreset)."""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn


class SB3VecEnv(VecEnv):
    """Wraps a flowsched vector env (e.g. ``TokenSchedulingVecEnv``) as an SB3 ``VecEnv``.

    SB3 resets a finished env within the same step: the returned observation is the
    next episode's first, the last one is in ``infos[i]["terminal_observation"]``, and
    the episode statistics of the vector env's infos are copied into ``infos[i]``.
    Lane ``i`` sees exactly the episodes of the wrapped env's lane ``i``.
    ``env_method("action_masks")`` serves sb3-contrib's ``MaskablePPO``; other methods
    go to the vector env's ``call`` (one result per lane), and ``render()`` tiles the
    lanes' frames when the vector env was made with ``render_mode="rgb_array"``.
    Seeds given with ``seed(s)`` apply at the next ``reset()`` (lane i gets ``s + i``).
    """

    def __init__(self, venv: Any) -> None:
        if not hasattr(venv, "reset_done"):
            raise TypeError("SB3VecEnv wraps flowsched's native vector envs (with reset_done()), got "
                            f"{type(venv).__name__}")
        self.venv = venv
        self._actions: np.ndarray | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    def reset(self) -> dict[str, np.ndarray] | np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else [int(s) for s in self._seeds]  # type: ignore[arg-type]
        obs, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions = self._actions
        if isinstance(self.action_space, gym.spaces.Discrete):
            actions = actions.reshape(self.num_envs).astype(np.int64, casting="same_kind")  # a float action raises
        obs, reward, terminated, truncated, infos = self.venv.step(actions)
        self._actions = None
        dones = terminated | truncated
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            for i in np.flatnonzero(dones):
                out[i]["terminal_observation"] = (
                    {k: np.array(v[i]) for k, v in obs.items()} if isinstance(obs, dict) else np.array(obs[i])
                )
                out[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                for key, v in infos.items():
                    if not key.startswith("_") and infos.get("_" + key, dones)[i]:
                        out[i][key] = v[i].item() if isinstance(v, np.ndarray) else v[i]
            obs = self.venv.reset_done()
        return obs, reward.astype(np.float32), dones, out

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self.venv, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError("SB3VecEnv: the lanes of a native vector env share their attributes; cannot set "
                             f"{attr_name!r}")

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        if not hasattr(self.venv, "call"):
            raise AttributeError(f"SB3VecEnv: {type(self.venv).__name__} has no call(); cannot run {method_name!r} per "
                                 "lane")
        out = self.venv.call(method_name, *method_args, **method_kwargs)
        return [out[i] for i in self._get_indices(indices)]

    def get_images(self) -> list[Any]:
        return list(self.venv.call("render")) if getattr(self.venv, "render_mode", None) == "rgb_array" else []

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
