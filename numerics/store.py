"""A run stored as arrays and JSON: the on-disk format of :class:`numerics.cache.RunCache`.

A cache folder may sit on a shared disk (the Ray backend's case), so reading an entry must
never run code that someone else wrote: no pickle.  A result is walked into a JSON skeleton
and a flat set of arrays, written together as one ``.npz`` (:func:`save`) and read back with
``numpy.load(..., allow_pickle=False)`` (:func:`load`).  What the skeleton may name:

* ``None``, ``bool``, ``int``, ``float`` (NaN and infinities included), ``complex``, ``str``;
  ``list``, ``tuple``, ``dict`` (any keys the walk accepts, order kept), ``set``,
  ``frozenset``;
* ``numpy`` arrays (not of dtype ``object``) and scalars, ``numpy`` dtypes;
* ``torch`` tensors (dense, strided; stored as arrays, restored with their dtype, device
  and ``requires_grad``), ``torch.dtype``, ``torch.device``;
* dataclass instances and named tuples whose type is defined in this project's
  ``numerics`` or ``theory`` packages (:func:`allowed_type`).  A type is found by its module
  and qualified name, imported only from those packages' own files, and must be a
  dataclass (or a ``tuple`` subclass with ``_fields``); an instance is rebuilt field by
  field (``object.__new__``, then its attributes: no ``__init__`` or ``__post_init__`` runs,
  as with pickle).

The skeleton carries :data:`SCHEMA` and the entry's key; :func:`load` raises
:class:`StoreError` on anything else (another schema, another key, a pickle, an array of
objects, a type outside the allow-list), and the cache then recomputes the run.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SCHEMA", "SUFFIX", "StoreError", "allowed_type", "decode", "encode", "load",
           "made_on", "save"]

#: Version of the skeleton's layout; an entry of another version is not read (recomputed).
SCHEMA = 1
#: File suffix of a stored run.
SUFFIX = ".npz"
_FORMAT = "tdcheck-run"
_SKELETON = "__skeleton__"
_PACKAGES = ("numerics", "theory")
_ROOT = Path(__file__).resolve().parent.parent


class StoreError(ValueError):
    """A value that cannot be stored, or an entry that must not be read."""


# --------------------------------------------------------------------------- types
def _project_module(module: str):
    """The project module ``module`` of ``numerics``/``theory``, imported only from its file
    under this checkout; :class:`StoreError` for any other name."""
    parts = module.split(".")
    if parts[0] not in _PACKAGES or not all(p.isidentifier() for p in parts):
        raise StoreError(f"module {module!r} is not in numerics/ or theory/")
    loaded = sys.modules.get(module)
    if loaded is None:
        path = _ROOT.joinpath(*parts).with_suffix(".py")
        if not path.is_file() and not _ROOT.joinpath(*parts, "__init__.py").is_file():
            raise StoreError(f"module {module!r} has no file in this project")
        loaded = importlib.import_module(module)
    file = getattr(loaded, "__file__", None)
    if file is None or _ROOT not in Path(file).resolve().parents:
        raise StoreError(f"module {module!r} is not this project's")
    return loaded


def allowed_type(cls: type) -> bool:
    """Whether instances of ``cls`` may be stored: a dataclass, or a named tuple, defined at
    module level (any nesting of classes) in this project's ``numerics``/``theory``."""
    if not isinstance(cls, type):
        return False
    module, qualname = getattr(cls, "__module__", ""), getattr(cls, "__qualname__", "")
    if module.split(".")[0] not in _PACKAGES or "<" in qualname:
        return False
    if not (dataclasses.is_dataclass(cls) or _is_namedtuple(cls)):
        return False
    try:
        return _resolve(module, qualname) is cls
    except StoreError:
        return False


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _resolve(module: str, qualname: str) -> type:
    """The allowed type named (``module``, ``qualname``), or :class:`StoreError`."""
    if not isinstance(module, str) or not isinstance(qualname, str):
        raise StoreError("a type name must be two strings")
    obj: Any = _project_module(module)
    for part in qualname.split("."):
        if not part.isidentifier() or part.startswith("__"):
            raise StoreError(f"bad qualified name {qualname!r}")
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or obj.__module__ != module or obj.__qualname__ != qualname:
        raise StoreError(f"{module}.{qualname} is not a class of {module}")
    if not (dataclasses.is_dataclass(obj) or _is_namedtuple(obj)):
        raise StoreError(f"{module}.{qualname} is neither a dataclass nor a named tuple")
    return obj


# --------------------------------------------------------------------------- encode
class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, a: np.ndarray) -> str:
        if a.dtype.hasobject:
            raise StoreError("an array of Python objects cannot be stored")
        ref = f"a{len(self.arrays)}"
        self.arrays[ref] = np.ascontiguousarray(a) if a.ndim else a
        return ref

    def __call__(self, v: Any) -> Any:  # noqa: C901, PLR0911, PLR0912 (one case per type)
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, np.generic):  # before int/float: np.float64 is a float
            return {"@": "npscalar", "ref": self.array(np.asarray(v))}
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v
        if isinstance(v, complex):
            return {"@": "complex", "re": v.real, "im": v.imag}
        if isinstance(v, np.ndarray):
            if type(v) is not np.ndarray:
                raise StoreError(f"numpy subclass {type(v).__name__} cannot be stored")
            return {"@": "nd", "ref": self.array(v)}
        if isinstance(v, np.dtype):
            if v.hasobject:
                raise StoreError("dtype object cannot be stored")
            return {"@": "npdtype", "str": v.str}
        torch = sys.modules.get("torch")
        if torch is not None:
            if isinstance(v, torch.Tensor):
                return self.tensor(v, torch)
            if isinstance(v, torch.dtype):
                return {"@": "torchdtype", "name": str(v).removeprefix("torch.")}
            if isinstance(v, torch.device):
                return {"@": "torchdevice", "name": str(v)}
        cls = type(v)
        if dataclasses.is_dataclass(v) or _is_namedtuple(cls):
            if not allowed_type(cls):
                raise StoreError(f"{cls.__module__}.{cls.__qualname__} is not an allowed type "
                                 "(a dataclass or named tuple of numerics/ or theory/)")
            name = {"module": cls.__module__, "qualname": cls.__qualname__}
            if _is_namedtuple(cls):
                return {"@": "namedtuple", **name, "items": [self(x) for x in v]}
            if hasattr(v, "__dict__"):
                state = dict(vars(v))
            else:
                state = {f.name: getattr(v, f.name) for f in dataclasses.fields(v)
                         if hasattr(v, f.name)}
            return {"@": "dataclass", **name,
                    "fields": [[k, self(x)] for k, x in state.items()]}
        if cls is list:
            return [self(x) for x in v]
        if cls is tuple:
            return {"@": "tuple", "items": [self(x) for x in v]}
        if cls is dict:
            return {"@": "dict", "items": [[self(k), self(x)] for k, x in v.items()]}
        if cls in (set, frozenset):
            return {"@": cls.__name__, "items": [self(x) for x in v]}
        raise StoreError(f"a {cls.__module__}.{cls.__qualname__} cannot be stored")

    def tensor(self, t: Any, torch: Any) -> dict:
        if t.layout != torch.strided or t.is_quantized or type(t) not in (
                torch.Tensor, torch.nn.Parameter):
            raise StoreError(f"only dense tensors can be stored, not {type(t).__name__}"
                             f" ({t.layout})")
        data = t.detach().to("cpu")
        if data.dtype == torch.bfloat16:  # numpy has no bfloat16: float32 holds it exactly
            data = data.to(torch.float32)
        if data.is_conj():
            data = data.resolve_conj()
        return {"@": "torch", "ref": self.array(data.numpy()),
                "dtype": str(t.dtype).removeprefix("torch."), "device": str(t.device),
                "requires_grad": bool(t.requires_grad),
                "parameter": isinstance(t, torch.nn.Parameter)}


def encode(value: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """(JSON-able skeleton, arrays) of ``value``; :class:`StoreError` if it cannot be."""
    enc = _Encoder()
    return enc(value), enc.arrays


# --------------------------------------------------------------------------- decode
def _torch_dtype(torch: Any, name: Any) -> Any:
    dtype = getattr(torch, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(dtype, torch.dtype):
        raise StoreError(f"unknown torch dtype {name!r}")
    return dtype


class _Decoder:
    def __init__(self, arrays: Any) -> None:
        self.arrays = arrays

    def array(self, ref: Any) -> np.ndarray:
        if not isinstance(ref, str) or not ref.startswith("a") or ref not in self.arrays:
            raise StoreError(f"no array {ref!r}")
        a = self.arrays[ref]  # np.load(allow_pickle=False): an object array raises here
        if not isinstance(a, np.ndarray) or a.dtype.hasobject:
            raise StoreError(f"array {ref!r} holds objects")
        return a

    def __call__(self, s: Any) -> Any:  # noqa: C901, PLR0911, PLR0912 (one case per tag)
        if s is None or isinstance(s, (bool, int, float, str)):
            return s
        if isinstance(s, list):
            return [self(x) for x in s]
        if not isinstance(s, dict) or not isinstance(s.get("@"), str):
            raise StoreError("malformed skeleton")
        tag = s["@"]
        if tag == "nd":
            return self.array(s["ref"])
        if tag == "npscalar":
            return self.array(s["ref"])[()]
        if tag == "complex":
            return complex(float(s["re"]), float(s["im"]))
        if tag == "npdtype":
            dtype = np.dtype(str(s["str"]))
            if dtype.hasobject:
                raise StoreError("dtype object")
            return dtype
        if tag == "tuple":
            return tuple(self(x) for x in s["items"])
        if tag == "dict":
            return {self(k): self(x) for k, x in s["items"]}
        if tag == "set":
            return {self(x) for x in s["items"]}
        if tag == "frozenset":
            return frozenset(self(x) for x in s["items"])
        if tag in ("torch", "torchdtype", "torchdevice"):
            import torch

            if tag == "torchdtype":
                return _torch_dtype(torch, s["name"])
            if tag == "torchdevice":
                return torch.device(str(s["name"]))
            t = torch.from_numpy(np.array(self.array(s["ref"]))).to(
                _torch_dtype(torch, s["dtype"]))
            device = torch.device(str(s["device"]))
            if device.type != "cpu":
                t = t.to(device)
            if s.get("parameter"):
                return torch.nn.Parameter(t, requires_grad=bool(s["requires_grad"]))
            return t.requires_grad_(bool(s["requires_grad"]))
        if tag == "namedtuple":
            cls = _resolve(s["module"], s["qualname"])
            if not _is_namedtuple(cls):
                raise StoreError(f"{cls.__qualname__} is not a named tuple")
            return cls(*(self(x) for x in s["items"]))
        if tag == "dataclass":
            cls = _resolve(s["module"], s["qualname"])
            if not dataclasses.is_dataclass(cls):
                raise StoreError(f"{cls.__qualname__} is not a dataclass")
            obj = object.__new__(cls)
            for name, x in s["fields"]:
                if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
                    raise StoreError(f"bad field name {name!r}")
                object.__setattr__(obj, name, self(x))
            return obj
        raise StoreError(f"unknown tag {tag!r}")


def decode(skeleton: Any, arrays: Any) -> Any:
    """The value :func:`encode` walked into (``skeleton``, ``arrays``)."""
    return _Decoder(arrays)(skeleton)


# --------------------------------------------------------------------------- files
def save(path: Path, value: Any, key: str, made_on: dict | None = None) -> None:
    """Write ``value`` to ``path`` (atomically: a temporary file in the same folder, then
    renamed); :class:`StoreError` (nothing written) if it cannot be stored.  ``made_on``
    (JSON-able; :func:`numerics.machine.facts`) records the machine that computed it,
    read back by :func:`made_on` and never by :func:`load`."""
    skeleton, arrays = encode(value)
    head = {"format": _FORMAT, "schema": SCHEMA, "key": key, "value": skeleton}
    if made_on is not None:
        head["made_on"] = made_on
    text = json.dumps(head, allow_nan=True, separators=(",", ":")).encode()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("wb") as fh:
            np.savez(fh, **{_SKELETON: np.frombuffer(text, dtype=np.uint8)}, **arrays)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _head(data: Any) -> dict:
    """The JSON head of an opened ``.npz``; :class:`StoreError` if it is not a stored run."""
    if not isinstance(data, np.lib.npyio.NpzFile) or _SKELETON not in data.files:
        raise StoreError("not a stored run")
    raw = data[_SKELETON]
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise StoreError("malformed skeleton")
    head = json.loads(raw.tobytes().decode())
    if not isinstance(head, dict) or head.get("format") != _FORMAT:
        raise StoreError("not a stored run")
    return head


def made_on(path: Path) -> dict | None:
    """The machine facts stored with the run at ``path`` (None: stored without them, or not
    a readable stored run)."""
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            found = _head(data).get("made_on")
    except Exception:  # not a stored run, or unreadable: no facts
        return None
    return found if isinstance(found, dict) else None


def load(path: Path, key: str) -> Any:
    """The value stored at ``path`` under ``key``; :class:`StoreError` (or ``OSError``) for
    a file that is not a stored run of this schema and key -- a pickle included, which
    ``numpy.load(allow_pickle=False)`` refuses to read."""
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            head = _head(data)
            if head.get("schema") != SCHEMA:
                raise StoreError(f"schema {head.get('schema')!r}, this code reads {SCHEMA}")
            if head.get("key") != key:
                raise StoreError("the entry's key is not its file's")
            arrays = {name: data[name] for name in data.files if name != _SKELETON}
            return decode(head["value"], arrays)
    except StoreError:
        raise
    except OSError:
        raise
    except Exception as exc:  # a pickle, a truncated zip, bad JSON, a bad field: not read
        raise StoreError(f"{type(exc).__name__}: {exc}") from exc
