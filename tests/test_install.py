"""Install by need (issue 22 item 6): the core install is the simulator and the environments.

``import flowsched`` (which registers the environments), ``flowsched.envs``,
``flowsched.baselines`` and the ``flowsched`` command line import none of the training stack;
``flowsched.agents`` without the ``[train]`` extra says which extra to install; the core
dependencies in ``pyproject.toml`` hold nothing for training, and the exact Gymnasium pin
that RLlib needs lives in ``[ray]``. Each import check runs in a fresh interpreter
(``sys.modules`` of the test process already holds everything). The wheel installed
without extras in a fresh venv is checked by ``.ci/core_install_check.sh`` in ``.ci/run``.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ("torch", "stable_baselines3", "sb3_contrib", "hydra", "omegaconf", "matplotlib",
            "tensorboard", "ray", "wandb")
TRAINING_DISTS = ("torch", "stable-baselines3", "sb3-contrib", "hydra-core", "omegaconf", "matplotlib",
                  "tensorboard", "ray", "wandb")


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def training_imported_after(code: str) -> list[str]:
    r = run_python(textwrap.dedent(code) + textwrap.dedent(f"""
        import sys
        print(sorted({{m.split(".")[0] for m in sys.modules}} & set({TRAINING!r})))
        """))
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import flowsched",
    "import flowsched.envs",
    "import flowsched.baselines",
    "import flowsched, flowsched.workloads, flowsched.queueing, flowsched.metrics, flowsched.traces",
])
def test_core_imports_no_training_stack(code):
    assert training_imported_after(code) == []


def test_import_flowsched_registers_the_envs_without_training_stack():
    code = """
        import gymnasium as gym
        import flowsched
        assert set(flowsched.envs.ENV_IDS) <= set(gym.registry), sorted(gym.registry)
        env = gym.make(flowsched.envs.ENV_IDS[0])
        env.reset(seed=0)
        env.step(env.action_space.sample())
        """
    assert training_imported_after(code) == []


def test_console_script_imports_no_training_stack(tmp_path):
    trace = tmp_path / "t.csv"
    code = f"""
        import contextlib, io
        from flowsched.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["--help"])
            except SystemExit as e:
                assert e.code == 0
            assert main(["generate", "--load", "0.5", "--hosts", "4", "--flows", "50", "--out", {str(trace)!r}]) == 0
            assert main(["simulate", "--trace", {str(trace)!r}, "--scheduler", "srpt"]) == 0
        """
    assert training_imported_after(code) == []


def test_agents_without_train_extra_names_the_extra():
    # a None entry in sys.modules makes the module absent, to the import system and to find_spec
    r = run_python("""
        import sys
        for m in ("torch", "stable_baselines3", "sb3_contrib"):
            sys.modules[m] = None
        import flowsched.agents
        """)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:"), r.stderr
    assert 'pip install "flowsched[train]"' in last and "torch" in last and "stable-baselines3" in last


def _name(req: str) -> str:
    for sep in "[=<>!~ ;":
        req = req.split(sep)[0]
    return req.strip().lower()


def test_pyproject_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_name(r): r for r in project["dependencies"]}
    assert set(core) == {"numpy", "pandas", "pyarrow", "scipy", "gymnasium", "networkx"}  # networkx: graph topologies
    assert "==" not in core["gymnasium"], "the core takes a range of Gymnasium versions; [ray] pins it"
    extras = project["optional-dependencies"]
    assert {"train", "ray", "wandb", "docs", "dev"} <= set(extras)
    assert {_name(r) for r in extras["train"]} >= set(TRAINING_DISTS) - {"ray", "wandb"}
    assert "gymnasium==1.2.2" in extras["ray"] and any(r.startswith("ray[rllib]==") for r in extras["ray"])
    assert {_name(r) for r in extras["docs"]} == {"mkdocs", "mkdocs-material", "mkdocstrings"}
    assert "flowsched[train,ray,wandb,docs]" in extras["dev"]
    assert {"pytest", "hypothesis", "mypy"} <= {_name(r) for r in extras["dev"]}


def test_import_flowsched_registers_envs_without_pandas_or_the_simulator():
    # registration needs only gymnasium (entry-point strings); the env classes, pandas and
    # the compiled core load on first use, so ``import flowsched`` stays light
    r = run_python("""
        import sys, flowsched, gymnasium as gym
        assert "flowsched/TokenScheduling-v1" in gym.registry
        print(sorted({"pandas", "pyarrow", "flowsched._fabric"} & set(sys.modules)))
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"
