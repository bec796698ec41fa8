"""MkDocs hook: lets mkdocstrings find flowsched's subpackages.

pyproject.toml maps top-level folders into the package (``envs/`` is ``flowsched.envs``,
``baselines/`` is ``flowsched.baselines``, ...). Griffe reads a package from one
directory, so this hook lays out the package as it is installed, as a tree of symlinks
in a temporary directory, and puts that first on the Python handler's ``paths``.
"""
from __future__ import annotations

import shutil
import tempfile
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]
_TREE: list[Path] = []


@event_priority(100)
def on_config(config):  # noqa: ANN001, ANN201
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    tree = Path(tempfile.mkdtemp(prefix="flowsched-docs-src-"))
    _TREE.append(tree)
    for pkg, src in sorted(mapping.items()):  # "flowsched" before "flowsched.envs"
        dest = tree.joinpath(*pkg.split("."))
        dest.mkdir(parents=True, exist_ok=True)
        for item in sorted((ROOT / src).iterdir()):
            if item.name != "__pycache__" and not (dest / item.name).exists():
                (dest / item.name).symlink_to(item)
    handler = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    handler["paths"] = [str(tree), *handler.get("paths", [])]
    return config


def on_post_build(config):  # noqa: ANN001, ANN201
    while _TREE:
        shutil.rmtree(_TREE.pop(), ignore_errors=True)
