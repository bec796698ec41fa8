"""The examples in the env specs (docstrings) and the simulate() docstring run and hold."""
import doctest

import pytest

import flowsched.envs.switch
import flowsched.envs.thresholds
import flowsched.envs.token
import flowsched.sim


@pytest.mark.parametrize(
    "module", [flowsched.envs.token, flowsched.envs.switch, flowsched.envs.thresholds, flowsched.sim]
)
def test_docstring_examples(module):
    res = doctest.testmod(module)
    assert res.attempted > 0 and res.failed == 0
