"""The baseline registry (flowsched.baselines.make / available / families) and the
Policy protocol that baselines, SB3 models and RLlib policies share."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from flowsched import baselines
from flowsched.baselines import MaskablePolicy, Policy, registry
from flowsched.baselines.types import EpisodeSeeded

FAMILY_KWARGS = {"token": {}, "switch": {}, "thresholds": {"workload": "websearch", "load": 0.8}}


def test_every_family_lists_its_rules():
    assert list(baselines.BASELINES) == ["token", "switch", "thresholds"]
    assert baselines.available("token") == ["fifo", "edf", "ssdf", "lsdf", "srpt", "llf", "fair_slack", "random"]
    assert baselines.available("switch") == ["fifo", "srpt", "asrpt", "las", "pias", "edf", "fair"]
    assert baselines.available("thresholds") == ["pias_static", "pias_optimal"]
    assert baselines.families("edf") == ["token", "switch"] and baselines.families("las") == ["switch"]
    assert baselines.families("nope") == []
    assert dict(baselines.BASELINES) == {f: tuple(baselines.available(f)) for f in baselines.BASELINES}


@pytest.mark.parametrize(("family", "name"), [(f, n) for f in ("token", "switch", "thresholds")
                                              for n in baselines.available(f)])
def test_every_rule_is_a_policy(family, name):
    p = baselines.make(family, name, **FAMILY_KWARGS[family])
    assert isinstance(p, Policy) and isinstance(p, MaskablePolicy)
    sig = inspect.signature(p.predict).parameters
    assert list(sig)[:4] == ["observation", "state", "episode_start", "deterministic"]
    assert sig["state"].default is None and sig["episode_start"].default is None
    assert sig["deterministic"].default is False and sig["action_masks"].default is None


def test_threshold_rule_honours_the_protocol():
    """ThresholdRule is no longer a subclass of an ABC whose _act it could not implement:
    it satisfies the protocol as it is, single and batched, with or without masks."""
    p = baselines.make("thresholds", "pias_static")
    assert not isinstance(p, baselines.MaskedRule)
    obs = np.zeros(10, np.float32)
    a, state = p.predict(obs)
    assert a.shape == p.action.shape and state is None
    b, state = p.predict(np.zeros((3, 10), np.float32), state=("h",), deterministic=True, action_masks=None)
    assert b.shape == (3, *p.action.shape) and state == ("h",)


def test_sb3_models_and_rllib_policies_are_policies():
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    assert issubclass(PPO, Policy) and issubclass(MaskablePPO, MaskablePolicy)

    class Constant:
        def predict(self, observation, state=None, episode_start=None, deterministic=False):
            return np.zeros(1), state

    assert isinstance(Constant(), Policy) and not isinstance(object(), Policy)
    rllib = pytest.importorskip("flowsched.agents.rllib")
    assert issubclass(rllib.RLlibPolicy, MaskablePolicy)


def test_make_forwards_keyword_arguments():
    p = baselines.make("thresholds", "pias_optimal", workload="datamining", load=0.5, n_queues=4)
    assert len(p.thresholds_bytes) == 3
    assert baselines.make("switch", "pias", thresholds_bytes=[1e4, 1e5]).thresholds_mb == pytest.approx([0.01, 0.1])
    r = baselines.make("token", "random", seed=7)
    assert isinstance(r, EpisodeSeeded) and r.seed == 7


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("token", "edf"), {"workload": "websearch"},
     "baseline 'edf' of env 'token' (TokenRule) got unexpected keyword argument 'workload'; it accepts: seed"),
    (("switch", "srpt"), {"thresholds": [1.0], "load": 1},
     "baseline 'srpt' of env 'switch' (SwitchRule) got unexpected keyword arguments 'thresholds', 'load'; "
     "it accepts: thresholds_bytes"),
    (("thresholds", "pias_static"), {"n_queue": 4},
     "got unexpected keyword argument 'n_queue'; it accepts: workload, load, n_queues, link_gbps, "
     "min_threshold_bytes, max_threshold_bytes (did you mean 'n_queues'?)"),
])
def test_make_rejects_unknown_keyword_arguments(args, kwargs, message):
    with pytest.raises(TypeError) as e:
        baselines.make(*args, **kwargs)
    assert message in str(e.value)


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown token-scheduling baseline 'sjf'; valid: fifo, edf, .*random"):
        baselines.make("token", "sjf")
    with pytest.raises(
        ValueError, match=r"unknown switch-scheduling baseline 'lsa'; valid: .* \(did you mean 'las'\?\)"
    ):
        baselines.make("switch", "lsa")
    with pytest.raises(ValueError, match="no baselines for env 'tokn'; known: token, switch, thresholds"):
        baselines.make("tokn", "fifo")
    with pytest.raises(ValueError, match="no baselines for env 'tokn'"):
        baselines.available("tokn")


def test_a_new_rule_registers_itself(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {f: dict(r) for f, r in registry._REGISTRY.items()})

    @baselines.rules("token", "token-scheduling")
    class Newest(baselines.MaskedRule):
        RULES = ("newest",)

        def __init__(self, rule: str, *, tie: str = "last") -> None:
            self.tie = tie

        def _act(self, observation, mask):
            return mask.shape[-1] - 1 - np.argmax(mask[..., ::-1], axis=-1)

    assert "newest" in baselines.available("token") and baselines.families("newest") == ["token"]
    p = baselines.make("token", "newest", tie="first")
    assert p.tie == "first" and p.predict({"action_mask": np.array([1, 1, 0], np.float32)})[0] == 1
    with pytest.raises(TypeError, match="it accepts: tie"):
        baselines.make("token", "newest", seed_=1)
    with pytest.raises(ValueError, match="already registered"):
        baselines.register("token", "newest", lambda name: None)


@pytest.mark.slow
def test_policies_satisfy_the_protocol_statically(tmp_path):
    """mypy agrees: the rules, SB3 models and RLlibPolicy are Policy (and MaskablePolicy)
    by their signatures, not only by having a predict (what isinstance checks)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("mypy")
    root = Path(__file__).resolve().parents[1]
    pkg = tmp_path / "pkg" / "flowsched"  # the package as mypy sees it (the install maps top-level folders)
    pkg.mkdir(parents=True)
    for f in (root / "flowsched").iterdir():
        (pkg / f.name).symlink_to(f)
    for d in ("baselines", "agents", "envs", "configs"):
        (pkg / d).symlink_to(root / d)
    check = tmp_path / "check_protocol.py"
    check.write_text(
        "from stable_baselines3 import PPO\nfrom sb3_contrib import MaskablePPO\n"
        "from flowsched.baselines import MaskablePolicy, Policy, SwitchRule, ThresholdRule, TokenRule\n"
        "from flowsched.agents.rllib import RLlibPolicy\n\n"
        "def f(p: Policy) -> None: ...\ndef g(p: MaskablePolicy) -> None: ...\n\n"
        "def check(ppo: PPO, mppo: MaskablePPO, r: RLlibPolicy) -> None:\n"
        "    f(ThresholdRule('pias_static')); g(ThresholdRule('pias_static'))\n"
        "    f(TokenRule('edf')); g(TokenRule('edf')); f(SwitchRule('las')); g(SwitchRule('las'))\n"
        "    f(ppo); f(mppo); g(mppo); f(r); g(r)\n"
        "reveal_type(TokenRule('edf').predict)\n")
    shutil.rmtree(tmp_path / ".mypy_cache", ignore_errors=True)
    p = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
                        "--cache-dir", str(tmp_path / ".mypy_cache"), str(check)], cwd=tmp_path / "pkg",
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:]
    assert "observation: numpy.ndarray" in p.stdout  # flowsched was analysed, not taken as Any


def test_mask_reading_rules_need_the_dict_observation():
    with pytest.raises(TypeError, match="TokenRule reads the env's Dict observation"):
        baselines.make("token", "edf").predict(np.zeros(5, np.float32))
