"""The registry of rule-based baselines: rules register themselves per env family, and
:func:`make` builds one by name, forwarding keyword arguments to its constructor.

A rule class registers every name of its ``RULES`` with the :func:`rules` decorator::

    @rules("token", "token-scheduling")
    class TokenRule(MaskedRule):
        RULES = ("fifo", "edf", ...)
        def __init__(self, rule: str, seed: int | None = 0) -> None: ...

``make("token", "edf")`` is then ``TokenRule("edf", seed=0)``. A constructor's
parameters after the rule name are the keyword arguments that rule accepts; any other
keyword is refused with a ``TypeError`` naming the rule, the key and the accepted ones.
Nothing outside this module keeps a list of names: :func:`available`,
:func:`families` and :data:`BASELINES` read the registry.
"""
from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from flowsched.baselines.types import Policy


@dataclass(frozen=True)
class Rule:
    """One registered baseline: ``factory(name, **kwargs)`` builds it."""

    family: str
    name: str
    factory: Callable[..., Policy]

    def parameters(self) -> tuple[list[str], bool]:
        """(the keyword arguments the rule accepts, whether it takes any keyword)."""
        target = self.factory.__init__ if isinstance(self.factory, type) else self.factory  # type: ignore[misc]
        params = list(inspect.signature(target).parameters.values())
        if isinstance(self.factory, type):
            params = params[1:]  # self
        params = params[1:]  # the rule name
        any_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        names = [
            p.name
            for p in params
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        ]
        return names, any_kw


_REGISTRY: dict[str, dict[str, Rule]] = {}
_DESCRIPTIONS: dict[str, str] = {}

C = TypeVar("C", bound=type)


def register(family: str, name: str, factory: Callable[..., Policy], description: str | None = None) -> None:
    """Registers ``factory`` (called as ``factory(name, **kwargs)``) as the baseline
    ``name`` of env family ``family``. A name registered twice in a family is an error."""
    rules_of = _REGISTRY.setdefault(family, {})
    if name in rules_of and rules_of[name].factory is not factory:
        raise ValueError(f"baseline {name!r} of env {family!r} is already registered ({rules_of[name].factory!r})")
    _DESCRIPTIONS.setdefault(family, description or family)
    rules_of[name] = Rule(family, name, factory)


def rules(family: str, description: str | None = None) -> Callable[[C], C]:
    """Class decorator: registers every name of the class's ``RULES`` for ``family``
    (``description`` names the family in errors, e.g. ``"token-scheduling"``)."""

    def deco(cls: C) -> C:
        for name in cls.RULES:  # type: ignore[attr-defined]
            register(family, name, cls, description)
        return cls

    return deco


def _unknown(what: str, name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(str(name), valid, n=1, cutoff=0.6)
    return f"unknown {what} {name!r}; valid: {', '.join(valid)}" + (f" (did you mean {close[0]!r}?)" if close else "")


def lookup(env: str, name: str) -> Rule:
    """The registered rule ``name`` of env family ``env``; ``ValueError`` listing the valid
    families or names otherwise."""
    if env not in _REGISTRY:
        raise ValueError(f"no baselines for env {env!r}; known: {', '.join(_REGISTRY)}")
    try:
        return _REGISTRY[env][name]
    except KeyError:
        raise ValueError(_unknown(f"{_DESCRIPTIONS[env]} baseline", name, list(_REGISTRY[env]))) from None


def make(env: str, name: str, seed: int | None = 0, **kwargs: Any) -> Policy:
    """The baseline ``name`` of the env family ``env`` (``"token"``, ``"switch"`` or
    ``"thresholds"``; :func:`available` lists the names).

    ``kwargs`` go to the rule's constructor (e.g. ``workload`` and ``load`` for the
    threshold rules, ``thresholds_bytes`` for the switch rule ``pias``); a keyword the
    rule does not take raises ``TypeError`` naming the rule, the key and the accepted
    keywords. ``seed`` seeds randomized rules (those whose constructor takes ``seed``,
    e.g. the token rule ``random``); deterministic rules ignore it.

    Until issue 18 the token rules ignored every keyword argument: see CHANGELOG.md.
    """
    rule = lookup(env, name)
    accepted, any_kw = rule.parameters()
    if not any_kw:
        bad = [k for k in kwargs if k not in accepted or k == "seed"]
        if bad:
            close = difflib.get_close_matches(bad[0], accepted, n=1, cutoff=0.6)
            raise TypeError(f"baseline {name!r} of env {env!r} ({rule.factory.__qualname__}) got unexpected keyword "
                            f"argument{'s' if len(bad) > 1 else ''} {', '.join(repr(k) for k in bad)}; it accepts: "
                            + (", ".join(accepted) if accepted else "no keyword arguments")
                            + (f" (did you mean {close[0]!r}?)" if close else ""))
    if "seed" in accepted or any_kw:
        kwargs["seed"] = seed
    return rule.factory(name, **kwargs)


def from_config(env: str, name: str, kwargs: Mapping[str, Any] | None = None, seed: int | None = 0) -> Policy:
    """``make(env, name, seed=seed, **kwargs)`` with the keyword arguments as one mapping:
    the ``_target_`` of the rule-agent config (``configs/agent/rule.yaml``), whose
    ``kwargs`` are the env config's ``baseline_kwargs`` (absent or null: none)."""
    return make(env, name, seed=seed, **dict(kwargs or {}))


def available(env: str) -> list[str]:
    """The baseline names of env family ``env``, in registration order (every family's:
    :data:`BASELINES`)."""
    if env not in _REGISTRY:
        raise ValueError(f"no baselines for env {env!r}; known: {', '.join(_REGISTRY)}")
    return list(_REGISTRY[env])


def families(name: str) -> list[str]:
    """The env families that have a baseline called ``name`` (empty when none has)."""
    return [f for f, r in _REGISTRY.items() if name in r]


def accepted_kwargs(env: str, name: str) -> list[str]:
    """The keyword arguments :func:`make` forwards to the rule ``name`` of ``env``."""
    return lookup(env, name).parameters()[0]


class _Names(Mapping[str, tuple[str, ...]]):
    """``{family: (names, ...)}``, a read-only view of the registry (``BASELINES``)."""

    def __getitem__(self, family: str) -> tuple[str, ...]:
        return tuple(_REGISTRY[family])

    def __iter__(self) -> Iterator[str]:
        return iter(_REGISTRY)

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __repr__(self) -> str:
        return repr(dict(self))


#: ``{family: (rule names, ...)}`` read from the registry (kept for code written against
#: the old hand-kept dict)
BASELINES: Mapping[str, tuple[str, ...]] = _Names()

__all__ = [
    "BASELINES",
    "Rule",
    "accepted_kwargs",
    "available",
    "families",
    "from_config",
    "lookup",
    "make",
    "register",
    "rules",
]
