"""An inline actor's environments as data, so that a checkpoint can resume their episodes
exactly without pickling them (unpickling a checkpoint could run code: issue 72).

:func:`capture` walks an environment object's attributes into a tree of plain values (numbers,
strings, NumPy arrays, the states of NumPy's and Python's random generators, lists, tuples and
dicts of them, and nested objects as their own attributes); :func:`restore` writes such a tree
back into a *freshly built* environment of the same kind, attribute by attribute. No class,
function or module is ever named by the data and rebuilt from it: code comes from the fresh
environment (built from the run's config), values from the checkpoint. Attributes that hold code
(functions, methods, classes, modules) are left as the fresh environment has them. An object
whose state is not in Python attributes (the ALE's emulator, a Box2D world) makes
:func:`capture` raise :class:`NotData`: the actor then saves no environments and their episodes
restart on resume, as they always have on the ALE. Objects shared between attributes stay shared
(minatar's ``Environment.random`` is its game's ``random``).
"""

from __future__ import annotations

import enum
import random
import types

import numpy as np

__all__ = ["NotData", "capture", "restore"]

_OBJECT, _ALIAS, _RNG, _ENUM = "__object__", "__alias__", "__rng__", "__enum__"
#: Leaf types kept as they are (the data file stores them).
_PLAIN = (type(None), bool, int, float, str, bytes, np.generic)
#: Values that are code or descriptions of code, rebuilt with the fresh environment.
_CODE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
         type, staticmethod, classmethod, property)
_BIT_GENERATORS = {"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"}


class NotData(TypeError):
    """An environment's state is not all in plain Python attributes."""


def capture(env) -> dict:
    """The state of ``env`` as a tree of plain values; NotData names the first attribute that
    cannot be one."""
    return _capture(env, "env", {})


def restore(env, state: dict) -> None:
    """Write ``state`` (from :func:`capture` of an environment built the same way) into
    ``env``; NotData when its structure differs from ``env``'s."""
    _restore(env, state, "env", {})


def _is_code(value) -> bool:
    return isinstance(value, _CODE) or (callable(value) and not hasattr(value, "__dict__"))


def _capture(value, path: str, seen: dict):
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise NotData(f"{path}: a NumPy array of {value.dtype}")
        return value.copy()
    if isinstance(value, np.dtype):
        return value.str
    if isinstance(value, enum.Enum):  # a member, found again by name in the fresh one's class
        return {_ENUM: value.name}
    if id(value) in seen:
        return {_ALIAS: seen[id(value)]}
    if isinstance(value, np.random.Generator):
        seen[id(value)] = path
        return {_RNG: "generator", "state": value.bit_generator.state}
    if isinstance(value, np.random.RandomState):
        seen[id(value)] = path
        return {_RNG: "randomstate", "state": value.get_state(legacy=False)}
    if isinstance(value, random.Random):
        seen[id(value)] = path
        return {_RNG: "random", "state": value.getstate()}
    if isinstance(value, list | tuple):
        seen[id(value)] = path
        items = [_capture(v, f"{path}[{i}]", seen) for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        seen[id(value)] = path
        out = {}
        for key, item in value.items():
            if not isinstance(key, str | int) or _is_code(item):
                continue
            out[key] = _capture(item, f"{path}[{key!r}]", seen)
        return out
    attrs = getattr(value, "__dict__", None)
    if attrs is None or (hasattr(value, "__slots__") and type(value).__slots__):
        raise NotData(f"{path}: a {type(value).__module__}.{type(value).__qualname__} keeps its "
                      "state outside Python attributes")
    seen[id(value)] = path
    fields = {}
    for name, item in attrs.items():
        if _is_code(item) or name.startswith("__"):
            continue
        fields[name] = _capture(item, f"{path}.{name}", seen)
    return {_OBJECT: f"{type(value).__module__}.{type(value).__qualname__}", "fields": fields}


def _restore(current, state, path: str, done: dict):
    """The value at ``path`` after restoring: ``current`` itself (changed in place) for objects
    and random generators, a new value for plain data."""
    if isinstance(state, dict) and _ALIAS in state:
        if state[_ALIAS] not in done:
            raise NotData(f"{path}: refers to {state[_ALIAS]}, not restored before it")
        return done[state[_ALIAS]]
    if isinstance(state, dict) and _ENUM in state:
        if not isinstance(current, enum.Enum) or state[_ENUM] not in type(current).__members__:
            raise NotData(f"{path}: the member {state[_ENUM]!r} of an enum the new environment "
                          "does not hold there")
        value = type(current)[state[_ENUM]]
    elif isinstance(state, dict) and _RNG in state:
        value = _generator(current, state, path)
    elif isinstance(state, dict) and _OBJECT in state:
        kind = f"{type(current).__module__}.{type(current).__qualname__}"
        if kind != state[_OBJECT]:
            raise NotData(f"{path}: saved as a {state[_OBJECT]}, the new environment has a {kind}")
        done[path] = current
        for name, item in state["fields"].items():
            now = current.__dict__.get(name)
            current.__dict__[name] = _restore(now, item, f"{path}.{name}", done)
        return current
    elif isinstance(state, list | tuple):
        olds = current if isinstance(current, list | tuple) and len(current) == len(state) \
            else [None] * len(state)
        items = [_restore(o, s, f"{path}[{i}]", done)
                 for i, (o, s) in enumerate(zip(olds, state, strict=True))]
        value = items if isinstance(state, list) else tuple(items)
    elif isinstance(state, dict):
        olds = current if isinstance(current, dict) else {}
        value = dict(olds)  # entries that hold code stay as the new environment has them
        for key, item in state.items():
            value[key] = _restore(olds.get(key), item, f"{path}[{key!r}]", done)
    elif isinstance(state, np.ndarray):
        value = state.copy()
    elif isinstance(state, str) and isinstance(current, np.dtype):
        value = np.dtype(state)
    else:
        value = state
    done[path] = value
    return value


def _generator(current, state: dict, path: str):
    kind = state[_RNG]
    if kind == "generator":
        name = state["state"]["bit_generator"]
        if name not in _BIT_GENERATORS:
            raise NotData(f"{path}: unknown bit generator {name!r}")
        rng = current if isinstance(current, np.random.Generator) and \
            type(current.bit_generator).__name__ == name else \
            np.random.Generator(getattr(np.random, name)())
        rng.bit_generator.state = state["state"]
        return rng
    if kind == "randomstate":
        rng = current if isinstance(current, np.random.RandomState) else np.random.RandomState()
        rng.set_state(state["state"])
        return rng
    if kind == "random":
        rng = current if isinstance(current, random.Random) else random.Random()
        rng.setstate(_tuples(state["state"]))
        return rng
    raise NotData(f"{path}: unknown generator kind {kind!r}")


def _tuples(value):
    """random.Random's state with the tuples it needs (a data file keeps tuples, but be sure)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list | tuple) else value
