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


def _copy_saved_run(tmp_path):
    import shutil
    from pathlib import Path

    src = Path(__file__).parent / "data" / "sb3_run_before_registry"
    dst = tmp_path / "run"
    shutil.copytree(src, dst)
    return dst


def test_evaluate_loads_a_v1_run(tmp_path):
    from flowsched.agents.evaluation import load_checkpoint

    spec, cfg = load_checkpoint(_copy_saved_run(tmp_path))
    assert cfg.env.id == "flowsched/TokenScheduling-v1" and spec.source.endswith("model.zip")


def test_evaluate_refuses_a_v0_run_naming_its_successor(tmp_path):
    from flowsched.agents.evaluation import load_checkpoint

    run = _copy_saved_run(tmp_path)
    conf = run / ".hydra" / "config.yaml"
    conf.write_text(conf.read_text().replace("flowsched/TokenScheduling-v1", "flowsched/TokenScheduling-v0"))
    with pytest.raises(ValueError, match=r"TokenScheduling-v0, which was removed.*set env.id to "
                                         r"flowsched/TokenScheduling-v1"):
        load_checkpoint(run)
