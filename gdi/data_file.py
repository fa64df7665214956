"""Files that hold data and nothing else: gdi's checkpoints and bundles.

A data file is one safetensors file. Its tensors (and NumPy arrays) are safetensors' tensors;
everything else in the saved tree (dicts, lists, tuples, numbers, strings, ``None``, bytes and
the few record classes of :data:`RECORDS`) is JSON in the file's metadata, under the key
``"gdi"``, with each tensor's place in the tree marked by its name. Loading it parses a JSON
header and copies tensor bytes: nothing in the file names code to run, so a file made by anyone
can be loaded (safetensors' own promise, and JSON's). A record is rebuilt only if its name is
one of :data:`RECORDS`, classes of gdi's own that hold plain fields; any other name is refused.

:func:`dumps` turns a tree into bytes, :func:`loads` bytes into the tree, and what is not data
(an arbitrary object, a NumPy array of Python objects) is refused when saving with the path of
the value in the tree, so a checkpoint that cannot be loaded exactly is never written.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import json
import struct

import numpy as np
import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

__all__ = ["MAGIC", "RECORDS", "NotADataFile", "dumps", "is_data_file", "loads"]

#: The metadata key that holds the tree (and says the file is gdi's).
MAGIC = "gdi"
#: Record classes a data file may hold, by the name it records them under. Each is a dataclass
#: of plain fields, rebuilt from them; the class is looked up here, never from the file.
RECORDS = {
    "EpisodeRecord": "gdi.runtime.acting.actor:EpisodeRecord",
}

# Markers of the JSON tree; a dict of the tree is encoded with ``"__kind__"`` only when it is
# one of these, so plain dicts are plain JSON objects.
_KIND = "__kind__"


class NotADataFile(ValueError):
    """The bytes are not a data file of gdi's (not safetensors, or no gdi tree in them)."""


def dumps(tree) -> bytes:
    """``tree`` as the bytes of a data file. Raises TypeError naming the first value (by its
    path in the tree, e.g. ``learner.optimizer.state.0``) that is not data."""
    tensors: dict[str, torch.Tensor] = {}
    encoded = _encode(tree, "", tensors)
    text = json.dumps(encoded, separators=(",", ":"), allow_nan=True)
    return save_tensors(tensors, metadata={MAGIC: text})


def loads(data: bytes):
    """The tree of a data file's bytes. Raises :class:`NotADataFile` (one line) for anything
    else, before any of it is interpreted beyond the safetensors header."""
    header = _header(data)
    text = header.get("__metadata__", {}).get(MAGIC)
    if not isinstance(text, str):
        raise NotADataFile("a safetensors file, but not one of gdi's (no gdi metadata)")
    try:
        tensors = load_tensors(data)
    except Exception as err:
        raise NotADataFile(f"its tensors do not load ({_one_line(err)})") from None
    try:
        return _decode(json.loads(text), tensors)
    except (KeyError, TypeError, ValueError) as err:
        raise NotADataFile(f"its metadata is not a gdi tree ({_one_line(err)})") from None


def is_data_file(data: bytes) -> bool:
    """Whether ``data`` starts like a safetensors file (an 8-byte header size, then JSON)."""
    try:
        _header(data)
    except NotADataFile:
        return False
    return True


def _header(data: bytes) -> dict:
    if len(data) < 8:
        raise NotADataFile(f"{len(data)} bytes, shorter than a safetensors header")
    (size,) = struct.unpack("<Q", data[:8])
    if size > len(data) - 8 or size > 100_000_000:
        raise NotADataFile("not a safetensors file, or truncated (its header runs past its end)")
    try:
        header = json.loads(data[8:8 + size])
    except (UnicodeDecodeError, ValueError):
        raise NotADataFile("not a safetensors file (its header is not JSON)") from None
    if not isinstance(header, dict):
        raise NotADataFile("not a safetensors file (its header is not a JSON object)")
    return header


def _encode(value, path: str, tensors: dict):
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float) and type(value) in (int, float):
        return value
    if isinstance(value, np.generic):  # a NumPy scalar keeps its dtype
        return {_KIND: "scalar", "dtype": value.dtype.str, "value": value.item()}
    if isinstance(value, torch.Tensor):
        name = f"t{len(tensors)}"
        # A private, contiguous CPU copy: safetensors refuses tensors that share storage.
        tensors[name] = value.detach().to("cpu", copy=True).contiguous()
        return {_KIND: "tensor", "name": name}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"{path or 'the tree'}: a NumPy array of dtype {value.dtype} is not "
                            "data (only booleans and numbers are)")
        name = f"t{len(tensors)}"
        tensors[name] = torch.from_numpy(np.ascontiguousarray(value).copy())
        return {_KIND: "array", "name": name, "dtype": value.dtype.str}
    if isinstance(value, bytes | bytearray):
        return {_KIND: "bytes", "base64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        items = [(k, _encode(v, _join(path, k), tensors)) for k, v in value.items()]
        if all(isinstance(k, str) and k != _KIND for k, _ in items):
            return dict(items)
        return {_KIND: "dict", "items": [[_encode(k, path, tensors), v] for k, v in items]}
    if isinstance(value, list):
        return [_encode(v, _join(path, i), tensors) for i, v in enumerate(value)]
    if isinstance(value, tuple) and type(value) is tuple:
        return {_KIND: "tuple", "items": [_encode(v, _join(path, i), tensors)
                                          for i, v in enumerate(value)]}
    name = _record_name(type(value))
    if name is not None:
        fields = {f.name: _encode(getattr(value, f.name), _join(path, f.name), tensors)
                  for f in dataclasses.fields(value)}
        return {_KIND: "record", "name": name, "fields": fields}
    raise TypeError(f"{path or 'the tree'}: a {type(value).__module__}.{type(value).__qualname__}"
                    " is not data (allowed: tensors, NumPy arrays and scalars, numbers, strings, "
                    "bytes, None, lists, tuples, dicts and gdi's records)")


def _decode(value, tensors: dict):
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get(_KIND)
    if kind is None:
        return {k: _decode(v, tensors) for k, v in value.items()}
    if kind == "tensor":
        return tensors[value["name"]]
    if kind == "array":
        return tensors[value["name"]].numpy().astype(np.dtype(value["dtype"]), copy=False)
    if kind == "scalar":
        return np.dtype(value["dtype"]).type(value["value"])
    if kind == "bytes":
        return base64.b64decode(value["base64"])
    if kind == "tuple":
        return tuple(_decode(v, tensors) for v in value["items"])
    if kind == "dict":
        return {_hashable(_decode(k, tensors)): _decode(v, tensors) for k, v in value["items"]}
    if kind == "record":
        if value["name"] not in RECORDS:
            raise ValueError(f"record {value['name']!r} is not one of gdi's "
                             f"({', '.join(RECORDS)})")
        cls = _record_class(value["name"])
        return cls(**{k: _decode(v, tensors) for k, v in value["fields"].items()})
    raise ValueError(f"unknown kind {kind!r}")


def _record_class(name: str):
    module, qualname = RECORDS[name].split(":")
    return getattr(importlib.import_module(module), qualname)


def _record_name(cls) -> str | None:
    for name, where in RECORDS.items():
        module, qualname = where.split(":")
        if cls.__module__ == module and cls.__qualname__ == qualname:
            return name
    return None


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _one_line(err: Exception) -> str:
    text = " ".join(str(err).split())
    return text if len(text) <= 160 else text[:157] + "..."
