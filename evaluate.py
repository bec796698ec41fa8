"""Evaluate policies (Hydra): baselines and checkpoints, mixed, over workloads x loads x seeds.

    python evaluate.py                                           # the token baselines, Artemis A v1
    python evaluate.py 'policies=[edf,ssdf,outputs/<run dir>]' seeds=20 'loads=[null,0.72]'
    python evaluate.py env=switch workload=websearch 'policies=[fifo,srpt,las]'

Writes results.parquet (one row per episode), flows.parquet (one row per flow),
summary.csv (mean, std and 95% CI across seeds), figures/*.png and report.md into the
Hydra run directory. Same entry point as the ``flowsched-evaluate`` console script.
"""
from flowsched.agents.cli import evaluate_main

if __name__ == "__main__":
    evaluate_main()
