"""Training time on the CPU and on a CUDA GPU: the measurement behind ``device: cpu``.

Runs ``train.py <experiment> device=<d> total_timesteps=<n>`` for each experiment and
device, each run in its own directory, with logging, periodic evaluation and checkpoints
off, and prints each run's training wall time (``run.json``'s ``wall_s``) and the ratio
cuda / cpu. By default the runs go one after another; ``--parallel`` starts them side by
side, each pinned to its own core (``taskset``, where there is one), as the table in
docs/training.md ("GPUs") was measured. Without a GPU the cuda runs are skipped (the config
check refuses ``device=cuda`` where torch sees none).

    python benchmarks/bench_device.py
    python benchmarks/bench_device.py --steps 30000 --parallel
    python benchmarks/bench_device.py --experiment smoke --devices cpu
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hostinfo import host  # benchmarks/hostinfo.py, beside this script

ROOT = Path(__file__).resolve().parents[1]


def command(experiment: str, device: str, steps: int, run_dir: Path) -> list[str]:
    return [sys.executable, str(ROOT / "train.py"), f"experiment={experiment}", f"device={device}",
            f"total_timesteps={steps}", "logger=none", "eval.every=0", "checkpoint.every=0", "eval.final_episodes=4",
            "progress_bar=false", "torch_threads=1", f"hydra.run.dir={run_dir}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experiment", action="append", default=None,
                    help="experiment config names (repeatable; default: smoke and switch)")
    ap.add_argument("--devices", nargs="+", default=["cpu", "cuda"])
    ap.add_argument("--steps", type=int, default=30_000, help="total_timesteps of each run")
    ap.add_argument("--parallel", action="store_true", help="start the runs side by side, one core each")
    a = ap.parse_args()
    experiments = a.experiment or ["smoke", "switch"]
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    print(f"# {host()}; torch {torch.__version__}; GPU: {gpu or 'none'}")
    devices = [d for d in a.devices if gpu is not None or not d.startswith("cuda")]
    if len(devices) < len(a.devices):
        print("# no CUDA GPU here: the cuda runs are skipped")
    pin = shutil.which("taskset") is not None and a.parallel
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "WANDB_MODE": "offline"}
    with tempfile.TemporaryDirectory(prefix="bench_device_") as tmp:
        runs = [(e, d, Path(tmp) / f"{e}-{d}") for e in experiments for d in devices]
        procs: list[tuple[str, str, Path, subprocess.Popen[bytes]]] = []
        for k, (e, d, rd) in enumerate(runs):
            cmd = command(e, d, a.steps, rd)
            if pin:
                cmd = ["taskset", "-c", str(k % (os.cpu_count() or 1)), *cmd]
            p = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            procs.append((e, d, rd, p))
            if not a.parallel:
                p.wait()
        wall: dict[tuple[str, str], float] = {}
        for e, d, rd, p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"train.py experiment={e} device={d} failed (exit {p.returncode}):\n{err.decode()[-2000:]}")
            wall[e, d] = float(json.loads((rd / "run.json").read_text())["wall_s"])
    both = {"cpu", "cuda"} <= set(devices)  # then a column of cuda / cpu
    print(f"| experiment | {' | '.join(devices)} |" + (" cuda / cpu |" if both else ""))
    print("|---" * (len(devices) + 1 + both) + "|")
    for e in experiments:
        cells = " | ".join(f"{wall[e, d]:.1f} s" for d in devices)
        ratio = f" {wall[e, 'cuda'] / wall[e, 'cpu']:.2f} |" if both else ""
        print(f"| {e} ({a.steps:,} steps) | {cells} |{ratio}")


if __name__ == "__main__":
    main()
