#!/usr/bin/env bash
# The core install (no extras), as a user of the environments gets it: build the wheel once
# (cargo reuses fabric/target, so this costs seconds after the editable install), install it
# in a fresh venv with its declared dependencies only, and run .ci/core_install_check.py there
# (gym.make + steps on every registered id, flowsched generate/simulate, no training stack).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
tmp=$(mktemp -d "${TMPDIR:-/tmp}/flowsched-core.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
# `pip`, as .ci/run's `pip install -e` calls it: setuptools-rust passes the interpreter that
# runs pip as PYO3_PYTHON, and cargo rebuilds pyo3 and _fabric (about a minute) when it changes
pip wheel . --no-deps -q -w "$tmp/wheel"
echo "[core-install] wheel built in $((SECONDS - start)) s: $(basename "$tmp"/wheel/*.whl)"
# one wheel for every CPython >= 3.11 (the stable ABI; [tool.distutils.bdist_wheel] in pyproject.toml)
case "$(basename "$tmp"/wheel/*.whl)" in
    *-cp311-abi3-*) ;;
    *) echo "[core-install] the wheel is not tagged cp311-abi3" >&2; exit 1 ;;
esac
python -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check "$tmp"/wheel/*.whl
"$tmp/venv/bin/python" -m pip check
echo "[core-install] installed in a fresh venv: $("$tmp/venv/bin/python" -m pip list --format=freeze | tr '\n' ' ')"
# from outside the repository, so that the installed package is the one imported
cd "$tmp" && "$tmp/venv/bin/python" "$repo/.ci/core_install_check.py"
echo "[core-install] done in $((SECONDS - start)) s"
