"""``pullback.io``: checkpoints of pytrees in the safetensors format, loaded without running code.

:func:`save` writes a pytree of arrays (with Python scalars, strings and ``None`` in its
structure) to a standard safetensors file; :func:`load` reads it back, either as plain
containers or into the structure of a template ``like`` (e.g. freshly initialised
``(params, opt_state)``), checking structure, shapes and dtypes.

The file format
---------------
* One safetensors tensor per array leaf, named by its key path: the entries of the path
  (dict key, sequence index, attribute name) joined with ``"/"``, e.g. ``params/layers/0/w``
  or ``opt_state/0/mu/w`` (a root that is itself an array is named ``""``). ``"~"`` and
  ``"/"`` inside a key are escaped as ``"~0"`` and ``"~1"`` (as in JSON Pointer), so names are
  unique. Any safetensors reader sees these tensors; dtypes NumPy has load with
  ``safetensors.numpy.load_file``.
* dtypes: bool, int8..int64, uint8..uint64, float16, bfloat16, float32, float64, complex64 and
  the float8 formats (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz) are stored
  as the safetensors dtype of the same name, bit for bit. safetensors has no complex128: it is
  stored as F64 with a trailing dimension of 2 (real, imaginary), and the structure records
  the true dtype and shape.
* The structure lives in the header's ``__metadata__`` under the key ``"pullback"`` as JSON:
  dicts (str and int keys; others are refused by :func:`save`), lists, tuples, ``None``, and
  Python ``bool``/``int``/``float``/``complex``/``str`` leaves kept as Python values (floats bit
  for bit). Namedtuples and registered custom nodes (dataclasses, optimizer states) record
  their class name and keys for the error messages only: no class is ever looked up or
  imported from a file. Their auxiliary (static) data is not saved.
* The other ``__metadata__`` entries are the caller's ``metadata`` strings
  (:func:`load_metadata` reads them back).

Loading never executes code from the file (no pickle, no eval, no import by name). The whole
file is validated before any array is built: a truncated or oversized file, a header that is
not JSON or lacks the pullback structure, out-of-range, overlapping or gapped data offsets, a
tensor whose byte size disagrees with its shape and dtype, or a non-safetensors file raises
:class:`CheckpointFormatError` (a ``ValueError``) naming the file and the defect.

Writes are atomic: :func:`save` writes a temporary file in the target's directory, flushes
and fsyncs it, then renames it over ``path``; on any failure the temporary file is removed
and an existing checkpoint at ``path`` is left as it was.
"""
from __future__ import annotations

import json
import math
import os
import struct
from collections import OrderedDict, defaultdict
from collections.abc import Mapping
from typing import Any, Union

import ml_dtypes
import numpy as np
import safetensors  # >= 0.8: TensorSpec, and the C64 and float8 *fnuz dtypes

from . import numpy as jnp
from .tracer.array import Array
from .tree_util import (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr,
                        tree_flatten_with_path, tree_unflatten, treedef_is_leaf)

__all__ = ["save", "load", "load_metadata", "CheckpointFormatError", "StructureMismatchError"]

PathLike = Union[str, "os.PathLike[str]"]

FORMAT_KEY = "pullback"  # the __metadata__ entry holding the structure
FORMAT_VERSION = 1
# safetensors' own bound on the header (its Rust reader refuses larger ones)
MAX_HEADER_BYTES = 100_000_000


class CheckpointFormatError(ValueError):
    """A file that is not a valid pullback checkpoint (corrupt, truncated, tampered, foreign)."""


class StructureMismatchError(ValueError):
    """A checkpoint whose structure, shapes or dtypes differ from ``load``'s ``like``."""


# pullback dtype name -> (safetensors dtype, how many storage elements per element).
# complex128 has no safetensors dtype: its (real, imag) pairs are stored as F64.
_DTYPES: dict[str, tuple[str, int]] = {
    "bool": ("BOOL", 1), "int8": ("I8", 1), "int16": ("I16", 1), "int32": ("I32", 1),
    "int64": ("I64", 1), "uint8": ("U8", 1), "uint16": ("U16", 1), "uint32": ("U32", 1),
    "uint64": ("U64", 1), "float16": ("F16", 1), "bfloat16": ("BF16", 1),
    "float32": ("F32", 1), "float64": ("F64", 1), "complex64": ("C64", 1),
    "complex128": ("F64", 2), "float8_e4m3fn": ("F8_E4M3", 1), "float8_e5m2": ("F8_E5M2", 1),
    "float8_e4m3fnuz": ("F8_E4M3FNUZ", 1), "float8_e5m2fnuz": ("F8_E5M2FNUZ", 1),
}
_NP_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(getattr(ml_dtypes, name, None) or name) for name in _DTYPES}
# the safetensors dtype codes we write, as the NumPy dtype they are read as
_ST_DTYPES: dict[str, np.dtype] = {
    "BOOL": np.dtype(bool), "I8": np.dtype("<i1"), "I16": np.dtype("<i2"),
    "I32": np.dtype("<i4"), "I64": np.dtype("<i8"), "U8": np.dtype("<u1"),
    "U16": np.dtype("<u2"), "U32": np.dtype("<u4"), "U64": np.dtype("<u8"),
    "F16": np.dtype("<f2"), "BF16": _NP_DTYPES["bfloat16"], "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"), "C64": np.dtype("<c8"),
    "F8_E4M3": _NP_DTYPES["float8_e4m3fn"], "F8_E5M2": _NP_DTYPES["float8_e5m2"],
    "F8_E4M3FNUZ": _NP_DTYPES["float8_e4m3fnuz"], "F8_E5M2FNUZ": _NP_DTYPES["float8_e5m2fnuz"],
}
_SCALARS = ("bool", "int", "float", "complex", "str")
# the members of each stored node type, besides the scalars' {"type", "value"}
_FIELDS = {"none": {"type"}, "array": {"type", "name", "dtype", "shape"},
           "list": {"type", "children"}, "tuple": {"type", "children"},
           "dict": {"type", "keys", "children"},
           "namedtuple": {"type", "name", "fields", "children"},
           "custom": {"type", "name", "keys", "children"}}


# ---------------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------------

def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _name_part(k: Any) -> str:
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return _escape(k.name)
    if isinstance(k, DictKey):
        return _escape(str(k.key))
    return _escape(str(k))


def _key_entry(k: Any) -> dict:
    """A custom node's child key as JSON (used for names and messages, never to build)."""
    if isinstance(k, GetAttrKey):
        return {"attr": k.name}
    if isinstance(k, DictKey) and type(k.key) in (str, int):
        return {"key": k.key}
    if isinstance(k, (SequenceKey, FlattenedIndexKey)):
        return {"index": k.idx if isinstance(k, SequenceKey) else k.key}
    return {"repr": str(getattr(k, "key", k))}


def _float_bits(x: float) -> str:
    return struct.pack("<d", x).hex()  # bit-exact: keeps -0.0, inf and NaN payloads


def _bits_float(s: str) -> float:
    return struct.unpack("<d", bytes.fromhex(s))[0]


def _qualname(t: type) -> str:
    return getattr(t, "__qualname__", t.__name__)


class _Saver:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}  # tensor name -> C-contiguous storage array

    def encode(self, x: Any, path: tuple) -> dict:
        where = keystr(path) or "the root"
        if x is None:
            return {"type": "none"}
        if isinstance(x, (Array, np.ndarray, np.generic)):
            return self._array(np.asarray(x), path, where)
        if isinstance(x, bool):
            return {"type": "bool", "value": bool(x)}
        if isinstance(x, int):
            return {"type": "int", "value": int(x)}
        if isinstance(x, float):
            return {"type": "float", "value": _float_bits(float(x))}
        if isinstance(x, complex):
            return {"type": "complex", "value": [_float_bits(x.real), _float_bits(x.imag)]}
        if isinstance(x, str):
            return {"type": "str", "value": str(x)}
        # one level of the pytree: the node's children with their keys
        pairs, td = tree_flatten_with_path(x, is_leaf=lambda y: y is not x)
        if treedef_is_leaf(td):
            if hasattr(x, "__array__"):
                return self._array(np.asarray(x), path, where)
            raise TypeError(f"pullback.io.save: the leaf at {where} is a {type(x).__name__}; "
                            "expected an array, a Python bool/int/float/complex/str or None")
        keys = [p[0] for p, _ in pairs]
        children = [self.encode(c, path + (k,)) for k, c in zip(keys, (c for _, c in pairs))]
        t = type(x)
        if t is list or t is tuple:
            return {"type": t.__name__, "children": children}
        if isinstance(x, tuple) and hasattr(t, "_fields"):
            return {"type": "namedtuple", "name": _qualname(t), "fields": list(t._fields),
                    "children": children}
        if t in (dict, OrderedDict, defaultdict):
            for k in keys:
                if type(k.key) not in (str, int):
                    raise TypeError(
                        f"pullback.io.save: the dict key {k.key!r} at {where} is a "
                        f"{type(k.key).__name__}; only str and int dict keys can be stored")
            return {"type": "dict", "keys": [k.key for k in keys], "children": children}
        return {"type": "custom", "name": _qualname(t), "keys": [_key_entry(k) for k in keys],
                "children": children}

    def _array(self, a: np.ndarray, path: tuple, where: str) -> dict:
        name = "/".join(_name_part(k) for k in path)
        if _NP_DTYPES.get(a.dtype.name) != a.dtype.newbyteorder("="):
            raise TypeError(f"pullback.io.save: the array at {where} has dtype {a.dtype}; "
                            f"supported dtypes: {', '.join(_DTYPES)}")
        if name in self.arrays:
            raise ValueError(f"pullback.io.save: two leaves map to the tensor name {name!r} "
                             f"(the second at {where}); give them distinct keys")
        dtype = a.dtype.name
        code, per = _DTYPES[dtype]
        st = np.asarray(a, dtype=a.dtype.newbyteorder("<"), order="C")  # safetensors is LE
        if per == 2:  # complex128 -> (..., 2) float64
            st = st.reshape(-1).view("<f8").reshape(a.shape + (2,))
        self.arrays[name] = st
        return {"type": "array", "name": name, "dtype": dtype, "shape": list(a.shape)}


def save(path: PathLike, tree: Any, metadata: Mapping[str, str] | None = None) -> None:
    """Saves a pytree to a safetensors file, atomically.

    Args:
      path: the file to write (``str`` or ``os.PathLike``); its directory must exist. An
        existing file is replaced only once the new one is completely written and synced.
      tree: a pytree whose leaves are arrays (pullback Arrays, NumPy arrays or scalars, or
        anything with ``__array__``) or Python ``bool``/``int``/``float``/``complex``/``str``
        values, with ``None`` allowed anywhere. Dict keys must be ``str`` or ``int``.
      metadata: optional ``str -> str`` annotations stored in the safetensors header (the key
        ``"pullback"`` is reserved); read them back with :func:`load_metadata`.

    Raises:
      TypeError: for a leaf, dtype, dict key or metadata entry that cannot be stored.
      OSError: if the file cannot be written; ``path`` is then left as it was.

    Example::

      pullback.io.save("ckpt.safetensors", {"params": params, "opt_state": opt_state,
                                            "step": 100})
    """
    path = os.fspath(path)
    meta: dict[str, str] = {}
    for k, v in (metadata or {}).items():
        if type(k) is not str or type(v) is not str:
            raise TypeError("pullback.io.save: metadata must map str to str, got "
                            f"{type(k).__name__} -> {type(v).__name__} for {k!r}")
        if k == FORMAT_KEY:
            raise ValueError(f"pullback.io.save: the metadata key {FORMAT_KEY!r} is reserved")
        meta[k] = v
    saver = _Saver()
    root = saver.encode(tree, ())
    meta[FORMAT_KEY] = json.dumps({"version": FORMAT_VERSION, "tree": root},
                                  allow_nan=False, separators=(",", ":"))
    # the storage arrays' dtype names are safetensors' serializer names ("bfloat16", ...)
    specs = {name: safetensors.TensorSpec(dtype=st.dtype.name, shape=list(st.shape),
                                          data_ptr=st.ctypes.data, data_len=st.nbytes)
             for name, st in saver.arrays.items()}
    _write_atomic(path, specs, meta, keep_alive=saver.arrays)


def _write_atomic(path: str, specs: dict, meta: dict[str, str], keep_alive: Any) -> None:
    directory, base = os.path.split(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"pullback.io.save: {path!r} is a directory")
    tmp = os.path.join(directory, f".{base}.{os.urandom(6).hex()}.tmp")
    # O_EXCL: never clobber another writer's temporary; 0o666 so the umask applies as usual
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        mode = os.fstat(fd).st_mode & 0o777
        os.close(fd)
        # keep_alive holds the buffers the specs point into until the write is done
        safetensors.serialize_file(specs, tmp, metadata=meta)
        # safetensors writes its own 0o600 temporary and renames it: restore the usual mode
        os.chmod(tmp, mode)
        fd = os.open(tmp, os.O_RDWR)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable; not every platform can open a directory
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# ---------------------------------------------------------------------------------------------
# Reading and validating
# ---------------------------------------------------------------------------------------------

class _Reader:
    """The validated contents of a checkpoint file: its header, data section and structure."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.header, self.data = self._read()
        self.tensors = self._tensors()

    def fail(self, what: str) -> CheckpointFormatError:
        return CheckpointFormatError(f"pullback.io.load: {self.path!r}: {what}")

    def _read(self) -> tuple[dict, bytes]:
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            prefix = f.read(8)
            if len(prefix) < 8:
                raise self.fail(f"not a safetensors file: {size} bytes, shorter than the "
                                "8-byte header length (truncated?)")
            (n,) = struct.unpack("<Q", prefix)
            if n > MAX_HEADER_BYTES:
                raise self.fail(f"header length {n} is over safetensors' limit of "
                                f"{MAX_HEADER_BYTES} bytes (not a safetensors file, or corrupt)")
            if n > size - 8:
                raise self.fail(f"header length {n} runs past the end of the {size}-byte file "
                                "(truncated, or not a safetensors file)")
            raw = f.read(n)
            data = f.read(size - 8 - n)
            if len(raw) != n or len(data) != size - 8 - n or f.read(1):
                raise self.fail("the file changed size while it was being read")
        if not raw.startswith(b"{"):
            raise self.fail("not a safetensors file: the header is not a JSON object")
        try:
            header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates,
                                parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise self.fail(f"the header is not valid JSON ({e})") from None
        if not isinstance(header, dict):
            raise self.fail("not a safetensors file: the header is not a JSON object")
        return header, data

    def _tensors(self) -> dict[str, tuple[str, tuple[int, ...], int, int]]:
        """{name: (safetensors dtype, shape, begin, end)}, checked as safetensors' reader does
        (byte sizes, offsets in range, contiguous, no overlap, no gap, no trailing bytes)."""
        out = {}
        for name, info in self.header.items():
            if name == "__metadata__":
                continue
            if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
                raise self.fail(f"tensor {name!r}: expected an entry with 'dtype', 'shape' and "
                                f"'data_offsets', got {_short(info)}")
            code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            if code not in _ST_DTYPES:
                raise self.fail(f"tensor {name!r}: unsupported dtype {_short(code)}")
            if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
                raise self.fail(f"tensor {name!r}: shape {_short(shape)} is not a list of "
                                "non-negative integers")
            if not (isinstance(offsets, list) and len(offsets) == 2
                    and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1]):
                raise self.fail(f"tensor {name!r}: data_offsets {_short(offsets)} is not a "
                                "pair [begin, end] with 0 <= begin <= end")
            nbytes = math.prod(shape) * _ST_DTYPES[code].itemsize
            if offsets[1] - offsets[0] != nbytes:
                raise self.fail(f"tensor {name!r}: data_offsets {offsets} hold "
                                f"{offsets[1] - offsets[0]} bytes, but {code} {shape} needs "
                                f"{nbytes}")
            if offsets[1] > len(self.data):
                raise self.fail(f"tensor {name!r}: data_offsets {offsets} run past the "
                                f"{len(self.data)}-byte data section (truncated file?)")
            out[name] = (code, tuple(shape), offsets[0], offsets[1])
        end = 0
        for name, (_, _, b, e) in sorted(out.items(), key=lambda kv: (kv[1][2], kv[1][3])):
            if b != end:
                what = "overlap" if b < end else "leave a gap"
                raise self.fail(f"tensor {name!r}: data_offsets [{b}, {e}] {what} with the "
                                f"previous tensor ending at {end}")
            end = e
        if end != len(self.data):
            raise self.fail(f"the tensors cover {end} bytes of the {len(self.data)}-byte data "
                            "section")
        return out

    def metadata(self) -> dict[str, str]:
        meta = self.header.get("__metadata__", {})
        if not (isinstance(meta, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items())):
            raise self.fail(f"__metadata__ {_short(meta)} is not a map of strings to strings")
        return meta

    def structure(self) -> dict:
        """The stored tree, checked throughout against the tensors (each used exactly once)."""
        meta = self.metadata()
        if FORMAT_KEY not in meta:
            raise self.fail(f"no {FORMAT_KEY!r} entry in __metadata__: a safetensors file, "
                            "but not one written by pullback.io.save")
        try:
            doc = json.loads(meta[FORMAT_KEY], object_pairs_hook=_no_duplicates,
                             parse_constant=_no_constant)
        except (ValueError, RecursionError) as e:
            raise self.fail(f"the {FORMAT_KEY!r} metadata is not valid JSON ({e})") from None
        if not (isinstance(doc, dict) and doc.get("version") == FORMAT_VERSION and "tree" in doc):
            raise self.fail(f"the {FORMAT_KEY!r} metadata is not a version-{FORMAT_VERSION} "
                            "pullback structure")
        used: set[str] = set()
        try:
            self._check(doc["tree"], (), used)
        except RecursionError:
            raise self.fail("the stored structure is nested too deeply") from None
        unused = sorted(set(self.tensors) - used)
        if unused:
            raise self.fail(f"tensor {unused[0]!r} is not part of the stored structure")
        return doc["tree"]

    def _check(self, node: Any, path: tuple, used: set[str]) -> None:
        where = keystr(path) or "the root"
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise self.fail(f"the stored structure at {where} is malformed: {_short(node)}")
        t = node["type"]
        fields = _FIELDS.get(t) or ({"type", "value"} if t in _SCALARS else None)
        if fields is None or set(node) != fields:
            raise self.fail(f"the stored structure at {where} is malformed: {_short(node)}")
        if t in _SCALARS:
            v = node["value"]
            ok = {"bool": type(v) is bool, "int": type(v) is int, "str": type(v) is str,
                  "float": _is_bits(v),
                  "complex": isinstance(v, list) and len(v) == 2 and all(map(_is_bits, v))}[t]
            if not ok:
                raise self.fail(f"the stored {t} at {where} is malformed: {_short(v)}")
        elif t == "array":
            self._check_array(node, where, used)
        elif t != "none":
            children = node["children"]
            if not isinstance(children, list):
                raise self.fail(f"the stored {t} at {where} has malformed children")
            keys = _child_keys(node)
            if keys is None or len(keys) != len(children):
                raise self.fail(f"the stored {t} at {where} has malformed keys")
            for k, c in zip(keys, children):
                self._check(c, path + (k,), used)

    def _check_array(self, node: dict, where: str, used: set[str]) -> None:
        name, dtype, shape = node["name"], node["dtype"], node["shape"]
        if dtype not in _DTYPES or not (
                isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
            raise self.fail(f"the stored array at {where} has a malformed dtype or shape: "
                            f"{_short(dtype)} {_short(shape)}")
        if name not in self.tensors or name in used:
            raise self.fail(f"the array at {where} names tensor {_short(name)}, which is "
                            + ("used twice" if name in used else "not in the file"))
        used.add(name)
        code, per = _DTYPES[dtype]
        want = (code, tuple(shape) + ((2,) if per == 2 else ()))
        got = self.tensors[name][:2]
        if got != want:
            raise self.fail(f"tensor {name!r} is {got[0]} {list(got[1])}, but the structure "
                            f"says {dtype} {shape} (stored as {want[0]} {list(want[1])})")
        if dtype == "bool":
            b, e = self.tensors[name][2:]
            if np.frombuffer(self.data, np.uint8, e - b, b).max(initial=0) > 1:
                raise self.fail(f"tensor {name!r}: a BOOL byte is neither 0 nor 1")

    def array(self, node: dict) -> np.ndarray:
        """A checked array node as a read-only view of the file's bytes (``asarray`` copies
        it into the Array, so the bytes are not kept alive by the loaded tree)."""
        code, _, b, e = self.tensors[node["name"]]
        st = _ST_DTYPES[code]
        a = np.frombuffer(self.data, st, (e - b) // st.itemsize, b)
        return a.view(_NP_DTYPES[node["dtype"]]).reshape(node["shape"])


def _no_duplicates(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"duplicate key {dup!r}")
    return d


def _no_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


def _is_bits(v: Any) -> bool:
    if type(v) is not str or len(v) != 16:
        return False
    try:
        bytes.fromhex(v)
    except ValueError:
        return False
    return True


def _short(x: Any, limit: int = 80) -> str:
    r = repr(x)
    return r if len(r) <= limit else r[:limit] + "..."


def _child_keys(node: dict) -> list | None:
    """The key-path entries of a checked container node's children, or None if malformed."""
    t, n = node["type"], len(node["children"])
    if t in ("list", "tuple"):
        return [SequenceKey(i) for i in range(n)]
    if t == "dict":
        keys = node["keys"]
        if not (isinstance(keys, list) and all(type(k) in (str, int) for k in keys)
                and len(set(keys)) == len(keys)):
            return None
        return [DictKey(k) for k in keys]
    if not isinstance(node["name"], str):
        return None
    if t == "namedtuple":
        fields = node["fields"]
        if not (isinstance(fields, list) and all(type(f) is str for f in fields)):
            return None
        return [GetAttrKey(f) for f in fields]
    out = []
    for e in node["keys"] if isinstance(node["keys"], list) else [None]:
        if not (isinstance(e, dict) and len(e) == 1):
            return None
        (kind, v), = e.items()
        if kind == "attr" and type(v) is str:
            out.append(GetAttrKey(v))
        elif kind == "key" and type(v) in (str, int):
            out.append(DictKey(v))
        elif kind == "index" and type(v) is int:
            out.append(FlattenedIndexKey(v))
        elif kind == "repr" and type(v) is str:
            out.append(DictKey(v))
        else:
            return None
    return out


# ---------------------------------------------------------------------------------------------
# Building the loaded tree
# ---------------------------------------------------------------------------------------------

def _scalar(node: dict) -> Any:
    t, v = node["type"], node["value"]
    if t == "float":
        return _bits_float(v)
    if t == "complex":
        return complex(_bits_float(v[0]), _bits_float(v[1]))
    return v


def _scalar_type(x: Any) -> str | None:
    """The stored type name of a Python scalar leaf (NumPy scalars are arrays), else None."""
    if isinstance(x, (np.generic, Array)):
        return None
    for t in (bool, int, float, complex, str):  # bool first: it is an int
        if isinstance(x, t):
            return t.__name__
    return None


def _an(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _describe(node: dict) -> str:
    t = node["type"]
    if t == "array":
        return _an(f"{node['dtype']}{node['shape']} array")
    if t in _SCALARS:
        return f"a Python {t}"
    if t == "none":
        return "None"
    if t == "dict":
        return f"a dict with keys {node['keys']!r}"
    if t in ("namedtuple", "custom"):
        return f"a node of type {node['name']}"
    return f"a {t} of length {len(node['children'])}"


def _describe_like(x: Any) -> str:
    if x is None:
        return "None"
    if _scalar_type(x):
        return f"a Python {_scalar_type(x)}"
    if _is_array_like(x):
        return _an(f"{np.dtype(x.dtype).name}{list(x.shape)} array")
    t = type(x)
    if t in (list, tuple):
        return f"a {t.__name__} of length {len(x)}"
    if t in (dict, OrderedDict, defaultdict):
        return f"a dict with keys {list(x)!r}"
    return f"a node of type {_qualname(t)}"


def _is_array_like(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


class _Builder:
    def __init__(self, reader: _Reader) -> None:
        self.reader = reader

    def plain(self, node: dict) -> Any:
        """The stored tree as plain containers (namedtuples as tuples, custom nodes as dicts
        keyed by their attribute/key names, or tuples when they have none)."""
        t = node["type"]
        if t == "none":
            return None
        if t in _SCALARS:
            return _scalar(node)
        if t == "array":
            return jnp.asarray(self.reader.array(node))
        kids = [self.plain(c) for c in node["children"]]
        if t == "list":
            return kids
        if t in ("tuple", "namedtuple"):
            return tuple(kids)
        if t == "dict":
            return dict(zip(node["keys"], kids))
        names = [e.get("attr", e.get("key")) for e in node["keys"]]
        if None not in names and len(set(names)) == len(names):
            return dict(zip(names, kids))
        return tuple(kids)

    def mismatch(self, path: tuple, what: str) -> StructureMismatchError:
        where = keystr(path) or "the root"
        return StructureMismatchError(
            f"pullback.io.load: {self.reader.path!r} does not match `like` at {where}: {what}")

    def like(self, node: dict, like: Any, path: tuple) -> Any:
        """The stored tree put into ``like``'s structure, checking it on the way."""
        t = node["type"]
        if like is None:
            if t != "none":
                raise self.mismatch(path, f"the file has {_describe(node)}, like has None")
            return None
        if _scalar_type(like):
            if t != _scalar_type(like):
                raise self.mismatch(path, f"the file has {_describe(node)}, like has "
                                          f"{_describe_like(like)}")
            return _scalar(node)
        if isinstance(like, (Array, np.ndarray, np.generic)):
            return self._leaf_array(node, like, path)
        pairs, td = tree_flatten_with_path(like, is_leaf=lambda y: y is not like)
        if treedef_is_leaf(td):
            if _is_array_like(like):  # e.g. ShapeDtypeStruct
                return self._leaf_array(node, like, path)
            raise self.mismatch(path, f"like has a leaf of type {type(like).__name__}, which "
                                      "is not an array, a Python scalar or None")
        lt = type(like)
        kind = ("dict" if lt in (dict, OrderedDict, defaultdict) else
                lt.__name__ if lt in (list, tuple) else
                "namedtuple" if isinstance(like, tuple) and hasattr(lt, "_fields") else "custom")
        if t != kind or (kind in ("namedtuple", "custom") and node["name"] != _qualname(lt)):
            raise self.mismatch(path, f"the file has {_describe(node)}, like has "
                                      f"{_describe_like(like)}")
        like_keys = [p[0] for p, _ in pairs]
        like_kids = [c for _, c in pairs]
        file_keys = _child_keys(node)
        if kind == "dict":  # by key, in sorted order: the order pytrees flatten dicts in
            lk = {k.key: (k, c) for k, c in zip(like_keys, like_kids)}
            fk = dict(zip(node["keys"], node["children"]))
            done = {}
            for key in _sorted_union(list(lk), list(fk)):
                if key not in fk:
                    raise self.mismatch(path + (lk[key][0],), "missing from the file (like "
                                        f"has {_describe_like(lk[key][1])})")
                if key not in lk:
                    raise self.mismatch(path + (DictKey(key),), "extra in the file "
                                        f"({_describe(fk[key])}), not in like")
                done[key] = self.like(fk[key], lk[key][1], path + (lk[key][0],))
            out = [done[k.key] for k in like_keys]
        else:  # by position
            for i in range(max(len(like_keys), len(file_keys))):
                if i >= len(file_keys):
                    raise self.mismatch(path + (like_keys[i],), "missing from the file (like "
                                        f"has {_describe_like(like_kids[i])})")
                if i >= len(like_keys):
                    raise self.mismatch(path + (file_keys[i],), "extra in the file "
                                        f"({_describe(node['children'][i])}), not in like")
                if _norm_key(like_keys[i]) != _norm_key(file_keys[i]):
                    raise self.mismatch(path + (like_keys[i],), f"the file has the key "
                                        f"{file_keys[i]} here, like has {like_keys[i]}")
            out = [self.like(f, c, path + (k,))
                   for k, f, c in zip(like_keys, node["children"], like_kids)]
        return tree_unflatten(td, out)

    def _leaf_array(self, node: dict, like: Any, path: tuple) -> Any:
        if node["type"] != "array":
            raise self.mismatch(path, f"the file has {_describe(node)}, like has "
                                      f"{_describe_like(like)}")
        dtype, shape = np.dtype(like.dtype).name, list(like.shape)
        if node["shape"] != shape:
            raise self.mismatch(path, f"shape {node['shape']} in the file, {shape} in like")
        if node["dtype"] != dtype:
            raise self.mismatch(path, f"dtype {node['dtype']} in the file, {dtype} in like")
        return jnp.asarray(self.reader.array(node))


def _norm_key(k: Any) -> tuple:
    """A key-path entry as a comparable tuple (files store custom keys as JSON)."""
    if isinstance(k, (SequenceKey, FlattenedIndexKey)):
        return ("index", k.idx if isinstance(k, SequenceKey) else k.key)
    if isinstance(k, GetAttrKey):
        return ("attr", k.name)
    if isinstance(k, DictKey) and type(k.key) in (str, int):
        return ("key", k.key)
    return ("key", str(getattr(k, "key", k)))


def _sorted_union(a: list, b: list) -> list:
    keys = list(dict.fromkeys([*a, *b]))
    try:
        return sorted(keys)
    except TypeError:
        return keys


# ---------------------------------------------------------------------------------------------
# Public loading API
# ---------------------------------------------------------------------------------------------

def load(path: PathLike, like: Any = None) -> Any:
    """Loads a pytree saved by :func:`save`, without executing anything from the file.

    Args:
      path: the checkpoint file (``str`` or ``os.PathLike``).
      like: optional template pytree with the saved structure, e.g. freshly initialised
        ``{"params": params, "opt_state": opt_state}``. Its leaves may be arrays (or anything
        with ``shape`` and ``dtype``, such as :class:`pullback.ShapeDtypeStruct`), Python
        scalars/strings or ``None``; only their structure, shapes and dtypes are used.

    Returns:
      With ``like``: a pytree of ``like``'s structure and node types (namedtuples, dataclasses
      and other registered nodes rebuilt through ``like``, with ``like``'s static data) holding
      the file's values. Each array's dtype and shape must equal ``like``'s exactly (a
      float64 file leaf does not load into a float32 template, nor the reverse).

      Without ``like``: plain containers: dicts, lists, tuples (namedtuples come back as
      tuples), custom nodes as dicts keyed by their attribute names (tuples if they have no
      names), ``None``, Python scalars and strings as saved. Arrays are pullback Arrays made
      by ``pullback.numpy.asarray``, so they follow the 64-bit policy as JAX does: with
      ``jax_enable_x64`` off, 64-bit leaves arrive as their 32-bit counterparts (use
      ``pullback.enable_x64()`` to get them exactly). Every other dtype is kept bit for bit.
      (The same holds with ``like``: only a NumPy template leaf can ask for a 64-bit dtype
      while 64-bit is disabled, and its Array is then 32-bit.)

    Raises:
      CheckpointFormatError: (a ``ValueError``) if the file is not a valid pullback
        checkpoint: truncated, oversized header, header not JSON or without the pullback
        structure, tensor offsets out of range/overlapping/gapped, a tensor's byte size not
        its shape times its dtype, a dtype not supported, or not a safetensors file at all.
      StructureMismatchError: (a ``ValueError``) if the file's tree differs from ``like``;
        the message names the first differing key path and what differs (missing or extra
        key, container type, shape, dtype).
      OSError: if the file cannot be read.

    Example::

      state = {"params": params, "opt_state": optimizer.init(params), "step": 0}
      pullback.io.save("ckpt.safetensors", state)
      state = pullback.io.load("ckpt.safetensors", like=state)  # same NamedTuple states
    """
    reader = _Reader(os.fspath(path))
    tree = reader.structure()
    builder = _Builder(reader)
    if like is None:
        return builder.plain(tree)
    return builder.like(tree, like, ())


def load_metadata(path: PathLike) -> dict[str, str]:
    """The ``metadata`` strings given to :func:`save` for the checkpoint at ``path``.

    Args:
      path: the checkpoint file.

    Returns:
      A dict of ``str -> str`` (without pullback's own ``"pullback"`` structure entry).

    Raises:
      CheckpointFormatError: as :func:`load` does for a corrupt file.
    """
    reader = _Reader(os.fspath(path))
    reader.structure()
    return {k: v for k, v in reader.metadata().items() if k != FORMAT_KEY}
