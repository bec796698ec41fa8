"""flowsched.agents.envs: a bad workload load is reported as the load the user gave."""
import pytest
from hydra import compose, initialize_config_module

from flowsched.agents.envs import env_kwargs


@pytest.mark.parametrize("load", ["-0.3", "0", "inf"])
def test_bad_load_names_load_not_burst_rate(load):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        cfg = compose("train", overrides=[f"workload.load={load}"])
    with pytest.raises(ValueError, match=r"workload load must be a number > 0.*got load="):
        env_kwargs(cfg)


def test_load_becomes_the_token_env_burst_rate():
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        cfg = compose("train", overrides=["workload.load=0.5"])
    # Artemis A variant 1: bursts of 10 flows, load = rate * bits per burst / link rate
    kw = env_kwargs(cfg)
    assert kw["burst_rate_hz"] == pytest.approx(20.833333333333332)
