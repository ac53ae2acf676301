"""pullback.io: safetensors checkpoints of pytrees (round trips, like= checks, corrupt files,
atomic writes, interoperability with the safetensors package)."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import pickle
import re
import struct
from collections import OrderedDict, defaultdict
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import pytest
import safetensors
import safetensors.numpy

import pullback
import pullback.numpy as jnp
from pullback import tree_util
from pullback.io import CheckpointFormatError, StructureMismatchError

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
          "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]


def np_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def random_array(name: str, shape: tuple, seed: int = 0) -> np.ndarray:
    """Random bit patterns of dtype ``name`` (NaNs with payloads, -0.0, infs included)."""
    dt = np_dtype(name)
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    raw = rng.integers(0, 256, math.prod(shape) * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape)


def bits(a: Any) -> bytes:
    a = np.asarray(a)
    return a.dtype.str.encode() + repr(a.shape).encode() + np.ascontiguousarray(a).tobytes()


def special_floats(name: str) -> np.ndarray:
    """-0.0, infinities and NaNs with a sign and a payload, as bits of dtype ``name``."""
    dt = np_dtype(name)
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    base = np.array([0.0, -0.0, 1.0, -1.5], dtype=dt)
    if name in ("float16", "bfloat16", "float32", "float64"):
        ones = (1 << (dt.itemsize * 8)) - 1
        # 0x7f..fe: a positive NaN with a payload; 0xff..fd: a negative one with another
        extra = np.array([(ones >> 1) ^ 1, ones ^ 2], dtype=width).view(dt)
        assert np.isnan(extra.astype(np.float64)).all()
        base = np.concatenate([base, extra, np.array([np.inf, -np.inf], dt)])
    return base


# ---------------------------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_round_trips_bit_exactly(tmp_path, name):
    dense = random_array(name, (5, 6), seed=1)
    tree = {
        "dense": dense,
        "scalar": random_array(name, (), seed=2),
        "empty": random_array(name, (0, 3), seed=3),
        "empty_last": random_array(name, (2, 0), seed=3),
        "strided": dense[::2, 1::3],           # non-contiguous NumPy view
        "flipped": dense[::-1],                 # negative strides
        "fortran": np.asfortranarray(dense),
        "pb": jnp.asarray(dense),               # a pullback Array
        "big_endian": dense.astype(dense.dtype.newbyteorder(">")) if dense.dtype.itemsize > 1
        and dense.dtype.kind in "iufc" else dense,
    }
    if name in ("float16", "bfloat16", "float32", "float64"):
        tree["special"] = special_floats(name)
    path = tmp_path / "ckpt.safetensors"
    pullback.io.save(path, tree)
    for out in (pullback.io.load(path), pullback.io.load(path, like=tree)):
        assert set(out) == set(tree)
        for k, v in tree.items():
            assert isinstance(out[k], pullback.Array), k
            assert out[k].dtype == np_dtype(name), k
            assert out[k].shape == np.shape(v), k
            want = np.asarray(v).astype(np_dtype(name))  # native byte order, same values
            assert bits(out[k]) == bits(want), k


def test_nested_structure_and_python_values_round_trip(tmp_path):
    tree = {
        "params": {"layers": [{"w": np.ones((2, 3), np.float32), "b": np.zeros(3, np.float32)},
                              {"w": np.full((3, 1), 2.0, np.float32), "b": None}]},
        "step": 12345678901234567890,        # a Python int beyond int64 stays a Python int
        "flags": (True, False),
        "floats": [-0.0, float("inf"), -float("inf"), 1e-310, 0.1],
        "nan": float("nan"),
        "z": complex(-0.0, 2.5),
        "names": ("adam", "ünïcødé / ~ \"quoted\"", ""),
        "empties": ({}, [], ()),
        "by_index": {0: np.arange(3), 7: "seven", -1: None},
        "slash/key": {"a~b": np.int8(-3)},
        "none": None,
    }
    path = tmp_path / "tree.safetensors"
    pullback.io.save(path, tree)
    out = pullback.io.load(path)
    assert tree_util.tree_structure(out) == tree_util.tree_structure(tree)
    assert out["step"] == 12345678901234567890 and type(out["step"]) is int
    assert out["flags"] == (True, False) and type(out["flags"][0]) is bool
    assert [struct.pack("<d", f) for f in out["floats"]] == [struct.pack("<d", f)
                                                             for f in tree["floats"]]
    assert math.isnan(out["nan"]) and type(out["nan"]) is float
    assert struct.pack("<dd", out["z"].real, out["z"].imag) == struct.pack("<dd", -0.0, 2.5)
    assert out["names"] == tree["names"]
    assert out["empties"] == ({}, [], ())
    assert out["by_index"][7] == "seven" and out["by_index"][-1] is None
    np.testing.assert_array_equal(out["by_index"][0], np.arange(3))
    assert out["slash/key"]["a~b"].dtype == np.int8 and int(out["slash/key"]["a~b"]) == -3
    np.testing.assert_array_equal(out["params"]["layers"][1]["w"], np.full((3, 1), 2.0))
    assert isinstance(out["params"]["layers"][0]["w"], pullback.Array)


def test_root_leaf_and_root_none_round_trip(tmp_path):
    for tree in (np.arange(4, dtype=np.int16), None, 3.5, "s", [], {}):
        path = tmp_path / "root.safetensors"
        pullback.io.save(str(path), tree)
        out = pullback.io.load(str(path))
        if isinstance(tree, np.ndarray):
            assert bits(out) == bits(tree)
        else:
            assert out == tree and type(out) is type(tree)
    # NumPy scalars are 0-d arrays, also as like leaves (np.float64 is a Python float subclass)
    pullback.io.save(path, {"s": np.float64(2.5), "p": 2.5})
    out = pullback.io.load(path, like={"s": np.float64(0), "p": 0.0})
    assert out["s"].dtype == np.float64 and out["s"].shape == () and float(out["s"]) == 2.5
    assert type(out["p"]) is float
    with pytest.raises(StructureMismatchError, match="the file has a Python float, like has a "
                                                     "float64\\[\\] array"):
        pullback.io.load(path, like={"s": np.float64(0), "p": np.float64(0)})


def test_tensor_names_are_key_paths_readable_by_safetensors(tmp_path):
    """Interop: the file is plain safetensors; NumPy dtypes load with safetensors.numpy."""
    tree = {"params": {"dense": [{"w": random_array("float32", (3, 2))}],
                       "a/b": np.arange(3, dtype=np.uint16)},
            "opt": (AdamState(np.int32(2), {"w": random_array("float64", (2,))}, None),),
            "c": random_array("complex64", (2, 2)), "mask": np.array([True, False]),
            "h": random_array("float16", (0, 2))}
    path = tmp_path / "interop.safetensors"
    pullback.io.save(path, tree)
    loaded = safetensors.numpy.load_file(path)
    assert set(loaded) == {"params/dense/0/w", "params/a~1b", "opt/0/count", "opt/0/mu/w",
                           "c", "mask", "h"}
    assert bits(loaded["params/dense/0/w"]) == bits(tree["params"]["dense"][0]["w"])
    assert bits(loaded["params/a~1b"]) == bits(tree["params"]["a/b"])
    assert bits(loaded["opt/0/count"]) == bits(np.int32(2))
    assert bits(loaded["opt/0/mu/w"]) == bits(tree["opt"][0].mu["w"])
    assert bits(loaded["c"]) == bits(tree["c"])
    assert bits(loaded["mask"]) == bits(tree["mask"])
    assert loaded["h"].shape == (0, 2) and loaded["h"].dtype == np.float16
    with safetensors.safe_open(path, framework="numpy") as f:
        assert set(json.loads(f.metadata()["pullback"])) == {"version", "tree"}


def test_complex128_is_stored_as_float64_pairs(tmp_path):
    z = random_array("complex128", (2, 3))
    path = tmp_path / "c.safetensors"
    pullback.io.save(path, {"z": z})
    raw = safetensors.numpy.load_file(path)["z"]
    assert raw.dtype == np.float64 and raw.shape == (2, 3, 2)
    assert bits(raw[..., 0]) == bits(np.ascontiguousarray(z.real))
    assert bits(raw[..., 1]) == bits(np.ascontiguousarray(z.imag))


def test_user_metadata(tmp_path):
    path = tmp_path / "m.safetensors"
    pullback.io.save(path, {"x": np.ones(2)}, metadata={"epoch": "3", "note": "ok"})
    assert pullback.io.load_metadata(path) == {"epoch": "3", "note": "ok"}
    with pytest.raises(ValueError, match="reserved"):
        pullback.io.save(path, {}, metadata={"pullback": "x"})
    with pytest.raises(TypeError, match="metadata must map str to str"):
        pullback.io.save(path, {}, metadata={"epoch": 3})
    assert pullback.io.load_metadata(path) == {"epoch": "3", "note": "ok"}


@pytest.mark.x32
def test_x32_mode_loads_64_bit_leaves_as_32_bit_like_asarray(tmp_path):
    path = tmp_path / "x64.safetensors"
    tree = {"f": np.array([1.5, -0.0], np.float64), "i": np.array([1, 2], np.int64),
            "h": np.array([1.0], np.float16)}
    pullback.io.save(path, tree)
    out = pullback.io.load(path)
    assert out["f"].dtype == np.float32 and out["i"].dtype == np.int32
    assert out["h"].dtype == np.float16  # only the 64-bit types narrow
    np.testing.assert_array_equal(out["f"], [1.5, -0.0])
    like = {"f": jnp.zeros(2), "i": jnp.zeros(2, jnp.int32), "h": jnp.zeros(1, jnp.float16)}
    with pytest.raises(StructureMismatchError, match=re.escape("['f']: dtype float64 in the "
                                                               "file, float32 in like")):
        pullback.io.load(path, like=like)
    narrowed = pullback.io.load(path, like={k: np.asarray(v) for k, v in tree.items()})
    assert narrowed["f"].dtype == np.float32 and narrowed["i"].dtype == np.int32
    with pullback.enable_x64():
        exact = pullback.io.load(path)
    assert exact["f"].dtype == np.float64 and exact["i"].dtype == np.int64


# ---------------------------------------------------------------------------------------------
# like=: namedtuples, optimizer states, custom nodes
# ---------------------------------------------------------------------------------------------

class AdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


class EmptyState(NamedTuple):
    pass


class LionState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


@tree_util.register_dataclass
@dataclasses.dataclass
class Model:
    w: Any
    b: Any
    name: str = dataclasses.field(default="m", metadata={"static": True})


def params_like(scale: float = 0.0) -> dict:
    return {"dense": {"w": jnp.full((3, 2), scale, jnp.float32),
                      "b": jnp.zeros(2, jnp.float32)},
            "out": [jnp.full((2,), scale, jnp.float32), None]}


def adam_state(p: dict, count: int = 0) -> tuple:
    zeros = tree_util.tree_map(jnp.zeros_like, p)
    return (AdamState(jnp.asarray(count, jnp.int32), zeros, zeros), EmptyState())


def test_like_rebuilds_namedtuple_optimizer_states(tmp_path):
    params = params_like(1.5)
    state = adam_state(params, count=7)
    state = (state[0]._replace(mu=tree_util.tree_map(lambda x: x + 0.25, state[0].mu)), state[1])
    path = tmp_path / "opt.safetensors"
    pullback.io.save(path, {"params": params, "opt_state": state, "step": 7})

    plain = pullback.io.load(path)
    assert type(plain["opt_state"][0]) is tuple and plain["opt_state"][1] == ()

    like = {"params": params_like(), "opt_state": adam_state(params_like()), "step": 0}
    out = pullback.io.load(path, like=like)
    assert tree_util.tree_structure(out) == tree_util.tree_structure(like)
    assert type(out["opt_state"][0]) is AdamState and type(out["opt_state"][1]) is EmptyState
    assert int(out["opt_state"][0].count) == 7 and out["step"] == 7
    np.testing.assert_array_equal(out["opt_state"][0].mu["dense"]["w"], np.full((3, 2), 0.25))
    np.testing.assert_array_equal(out["params"]["dense"]["w"], np.full((3, 2), 1.5))

    # ShapeDtypeStruct templates, as with jax.eval_shape
    abstract = tree_util.tree_map(
        lambda x: pullback.ShapeDtypeStruct(x.shape, x.dtype) if hasattr(x, "shape") else x, like)
    out2 = pullback.io.load(path, like=abstract)
    assert tree_util.tree_all(tree_util.tree_map(lambda a, b: bits(a) == bits(b), out, out2))


def test_like_rebuilds_registered_dataclasses_with_their_static_fields(tmp_path):
    path = tmp_path / "dc.safetensors"
    pullback.io.save(path, [Model(np.ones(2, np.float32), np.zeros(1, np.float32), "saved")])
    plain = pullback.io.load(path)
    assert isinstance(plain[0], dict) and set(plain[0]) == {"w", "b"}
    out = pullback.io.load(path, like=[Model(jnp.zeros(2, jnp.float32),
                                             jnp.zeros(1, jnp.float32), "template")])
    assert type(out[0]) is Model and out[0].name == "template"  # static data comes from like
    np.testing.assert_array_equal(out[0].w, np.ones(2))


@tree_util.register_pytree_node_class
class Pair:
    """A custom node flattened without keys (its children get FlattenedIndexKey entries)."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def tree_flatten(self) -> tuple:
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux: Any, children: tuple) -> "Pair":
        return cls(*children)


def test_ordered_dicts_defaultdicts_and_keyless_custom_nodes(tmp_path):
    path = tmp_path / "kinds.safetensors"
    od = OrderedDict([("z", np.int8(1)), ("a", np.int8(2))])
    dd = defaultdict(list, {"k": np.int8(3)})
    pullback.io.save(path, {"od": od, "dd": dd, "pair": Pair(np.int8(4), "four")})
    plain = pullback.io.load(path)
    assert type(plain["od"]) is dict and list(plain["od"]) == ["z", "a"]  # order kept
    assert type(plain["dd"]) is dict and int(plain["dd"]["k"]) == 3
    assert type(plain["pair"]) is tuple and plain["pair"][1] == "four"
    like = {"od": OrderedDict([("z", np.int8(0)), ("a", np.int8(0))]),
            "dd": defaultdict(list, {"k": np.int8(0)}), "pair": Pair(np.int8(0), "")}
    out = pullback.io.load(path, like=like)
    assert type(out["od"]) is OrderedDict and list(out["od"]) == ["z", "a"]
    assert [int(v) for v in out["od"].values()] == [1, 2]
    assert type(out["dd"]) is defaultdict and out["dd"].default_factory is list
    assert type(out["pair"]) is Pair and int(out["pair"].a) == 4 and out["pair"].b == "four"
    with pytest.raises(StructureMismatchError, match=re.escape(
            "at ['pair']: the file has a node of type Pair, like has a node of type Model")):
        pullback.io.load(path, like={**like, "pair": Model(np.int8(0), "")})


def test_optax_states_load_into_an_optax_template(tmp_path):
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))
    params = {"w": jax.numpy.ones((2, 2)), "b": jax.numpy.zeros(2)}
    state = opt.init(params)
    grads = {"w": jax.numpy.full((2, 2), 0.5), "b": jax.numpy.ones(2)}
    _, state = opt.update(grads, state, params)
    path = tmp_path / "optax.safetensors"
    pullback.io.save(path, state)
    out = pullback.io.load(path, like=opt.init(params))
    assert jax.tree_util.tree_structure(out) == jax.tree_util.tree_structure(state)
    for a, b in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(state)):
        assert bits(a) == bits(b)


# ---------------------------------------------------------------------------------------------
# like=: mismatches name the first differing path and what differs
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def saved_state(tmp_path):
    path = tmp_path / "state.safetensors"
    tree = {"params": params_like(1.0), "opt": adam_state(params_like()), "step": 3}
    pullback.io.save(path, tree)
    return path, tree


def _mismatch(path, like, where: str, what: str) -> str:
    with pytest.raises(StructureMismatchError) as info:
        pullback.io.load(path, like=like)
    msg = str(info.value)
    assert str(path) in msg and f"at {where}: " in msg, msg
    assert re.search(what, msg), msg
    return msg


def test_mismatch_missing_and_extra_keys(saved_state):
    path, tree = saved_state
    like = {**tree, "params": {**tree["params"], "emb": jnp.zeros(2, jnp.float32)}}
    _mismatch(path, like, "['params']['emb']", r"missing from the file \(like has a float32")
    like = {**tree, "params": {"dense": tree["params"]["dense"]}}
    _mismatch(path, like, "['params']['out']", r"extra in the file \(a list of length 2\)")
    like = {k: v for k, v in tree.items() if k != "step"}
    _mismatch(path, like, "['step']", r"extra in the file \(a Python int\)")
    like = {**tree, "params": {**tree["params"], "out": [tree["params"]["out"][0]]}}
    _mismatch(path, like, r"['params']['out'][1]", r"extra in the file \(None\)")


def test_mismatch_shape_and_dtype(saved_state):
    path, tree = saved_state
    like = {**tree, "opt": adam_state({**params_like(),
                                       "out": [jnp.zeros(3, jnp.float32), None]})}
    _mismatch(path, like, "['opt'][0].mu['out'][0]", r"shape \[2\] in the file, \[3\] in like")
    like = {**tree, "opt": adam_state({**params_like(),
                                       "dense": {"w": jnp.zeros((3, 2), jnp.float16),
                                                 "b": jnp.zeros(2, jnp.float32)}})}
    _mismatch(path, like, "['opt'][0].mu['dense']['w']",
              "dtype float32 in the file, float16 in like")


def test_mismatch_container_and_leaf_kinds(saved_state):
    path, tree = saved_state
    like = {**tree, "params": {**tree["params"], "out": tuple(tree["params"]["out"])}}
    _mismatch(path, like, "['params']['out']", "the file has a list of length 2, like has a "
              "tuple of length 2")
    like = {**tree, "opt": (LionState(*tree["opt"][0]), EmptyState())}
    _mismatch(path, like, "['opt'][0]",
              "the file has a node of type AdamState, like has a node of type LionState")
    like = {**tree, "step": jnp.zeros((), jnp.int32)}
    _mismatch(path, like, "['step']", "the file has a Python int, like has an int32\\[\\] array")
    like = {**tree, "params": {**tree["params"],
                               "out": [jnp.zeros(2, jnp.float32), jnp.zeros(1, jnp.float32)]}}
    _mismatch(path, like, "['params']['out'][1]", "the file has None, like has a float32")
    like = {**tree, "params": [tree["params"]]}
    _mismatch(path, like, "['params']", "the file has a dict with keys")
    like = {**tree, "step": 3.0}
    _mismatch(path, like, "['step']", "the file has a Python int, like has a Python float")


def test_mismatch_reports_the_first_path_in_flattening_order(saved_state):
    path, tree = saved_state
    # two differences: ['opt'] sorts before ['params'], so it is the one named
    like = {**tree, "opt": (tree["opt"][0],),
            "params": {**tree["params"], "dense": {"w": jnp.zeros((1, 1)), "b": jnp.zeros(2)}}}
    _mismatch(path, like, "['opt'][1]", r"extra in the file \(a node of type EmptyState\)")


# ---------------------------------------------------------------------------------------------
# Corrupt, truncated, tampered and foreign files
# ---------------------------------------------------------------------------------------------

def _write_raw(path: pathlib.Path, header: dict, data: bytes) -> None:
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)


def _read_raw(path: pathlib.Path) -> tuple[dict, bytes]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


@pytest.fixture
def good_file(tmp_path):
    path = tmp_path / "good.safetensors"
    pullback.io.save(path, {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
                            "b": [np.array([True, False]), np.int64(5)], "c": "text"})
    return path


def _bad(path: pathlib.Path, what: str) -> None:
    with pytest.raises(CheckpointFormatError) as info:
        pullback.io.load(path)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert str(path) in msg and re.search(what, msg), msg


def test_truncated_files(good_file):
    raw = good_file.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    cuts = {0: "shorter than the 8-byte header length", 5: "shorter than the 8-byte",
            8: "runs past the end", 9: "runs past the end", 8 + n // 2: "runs past the end",
            8 + n - 1: "runs past the end", 8 + n: "run past the|cover",
            8 + n + 4: "run past the", len(raw) - 1: "run past the"}
    for cut, what in cuts.items():
        good_file.write_bytes(raw[:cut])
        _bad(good_file, what)


def test_oversized_header_length(good_file):
    raw = good_file.read_bytes()
    for n in (2**64 - 1, 2**40, 100_000_001):
        good_file.write_bytes(struct.pack("<Q", n) + raw[8:])
        _bad(good_file, "over safetensors' limit")
    good_file.write_bytes(struct.pack("<Q", len(raw) - 7) + raw[8:])
    _bad(good_file, "runs past the end")


def test_header_not_json(good_file):
    raw = good_file.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    good_file.write_bytes(raw[:8] + b"{" + b"\xff" * (n - 1) + raw[8 + n:])
    _bad(good_file, "not valid JSON")
    good_file.write_bytes(raw[:8] + b"{\"a\": 1" + b" " * (n - 7) + raw[8 + n:])
    _bad(good_file, "not valid JSON")
    good_file.write_bytes(raw[:8] + b"[" + raw[9:])
    _bad(good_file, "not a JSON object")


def test_duplicate_header_keys(good_file):
    header, data = _read_raw(good_file)
    h = json.dumps(header)
    entry = '"a": ' + json.dumps(header["a"])
    h = h[:-1] + ", " + entry + "}"
    h = h.encode() + b" " * (-len(h) % 8)
    good_file.write_bytes(struct.pack("<Q", len(h)) + h + data)
    _bad(good_file, "duplicate key 'a'")


@pytest.mark.parametrize("tamper, what", [
    (lambda h: h["a"].update(data_offsets=[0, 10**9]), "hold 1000000000 bytes"),
    (lambda h: h["a"].update(data_offsets=[4, 28]), "overlap|leave a gap"),
    (lambda h: h["a"].update(data_offsets=[-4, 20]), "0 <= begin <= end"),
    (lambda h: h["a"].update(data_offsets=[24, 0]), "0 <= begin <= end"),
    (lambda h: h["a"].update(data_offsets="0,24"), "not a pair"),
    (lambda h: h["a"].update(shape=[2, 4]), "needs 32"),
    (lambda h: h["a"].update(shape=[2, -3]), "non-negative"),
    (lambda h: h["a"].update(shape=[2, 3.0]), "non-negative integers"),
    (lambda h: h["a"].update(dtype="F16"), "needs 12"),
    (lambda h: h["a"].update(dtype="I32"), "is I32 \\[2, 3\\], but the structure says float32"),
    (lambda h: h["a"].update(dtype="F4"), "unsupported dtype"),
    (lambda h: h["a"].update(extra=1), "expected an entry"),
    (lambda h: h.update(z={"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}),
     "'z' is not part of the stored structure"),
    (lambda h: h.pop("a"), r"data_offsets \[\d+, \d+\] leave a gap"),
    (lambda h: h.update(a2=h.pop("a")), "names tensor 'a', which is not in the file"),
    (lambda h: h.pop("__metadata__"), "no 'pullback' entry in __metadata__"),
    (lambda h: h["__metadata__"].pop("pullback"), "no 'pullback' entry"),
    (lambda h: h["__metadata__"].update(pullback="{not json"), "metadata is not valid JSON"),
    (lambda h: h["__metadata__"].update(pullback='{"version": 2, "tree": null}'),
     "not a version-1 pullback structure"),
    (lambda h: h["__metadata__"].update(pullback=7), "not a map of strings"),
    (lambda h: h.update(__metadata__=[1]), "not a map of strings"),
])
def test_tampered_headers(good_file, tamper, what):
    header, data = _read_raw(good_file)
    tamper(header)
    _write_raw(good_file, header, data)
    _bad(good_file, what)


def _tamper_tree(path: pathlib.Path, fn) -> None:
    header, data = _read_raw(path)
    doc = json.loads(header["__metadata__"]["pullback"])
    fn(doc["tree"])
    header["__metadata__"]["pullback"] = json.dumps(doc)
    _write_raw(path, header, data)


@pytest.mark.parametrize("tamper, what", [
    (lambda t: t["children"][0].update(type="pickle"), r"at \['a'\] is malformed"),
    (lambda t: t["children"][0].update(shape=[3, 2]), "structure says float32 \\[3, 2\\]"),
    (lambda t: t["children"][0].update(dtype="complex128"), "structure says complex128"),
    (lambda t: t["children"][0].update(dtype="object"), "malformed dtype or shape"),
    (lambda t: t["children"][1]["children"][0].update(name="a"), "used twice"),
    (lambda t: t["children"][2].update(value=3), r"stored str at \['c'\] is malformed"),
    (lambda t: t["children"][2].update(type="float", value="zz"), "stored float"),
    (lambda t: t.update(keys=["a", "b"]), "malformed keys"),
    (lambda t: t.update(keys=["a", "a", "c"]), "malformed keys"),
    (lambda t: t.update(keys=["a", [1], "c"]), "malformed keys"),
    (lambda t: t.update(children={}), "malformed children"),
    (lambda t: t.update(type="custom", name=7, keys=[]), "malformed"),
    (lambda t: t["children"][0].pop("dtype"), r"structure at \['a'\] is malformed"),
    (lambda t: t["children"][1].update(code="x"), r"structure at \['b'\] is malformed"),
    (lambda t: (t.pop("keys"), t.update(type="namedtuple", name="T", fields=["a", 2, "c"])),
     "malformed keys"),
])
def test_tampered_structure(good_file, tamper, what):
    _tamper_tree(good_file, tamper)
    _bad(good_file, what)


def test_random_corruption_never_crashes(good_file):
    """Byte flips in the header and cuts anywhere: a clean load or a CheckpointFormatError."""
    raw = good_file.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    rng = np.random.default_rng(0)
    outcomes = set()
    for i in range(300):
        buf = bytearray(raw)
        for pos in rng.integers(0, 8 + n, rng.integers(1, 4)):
            buf[pos] = int(rng.integers(0, 256)) if i % 2 else buf[pos] ^ (1 << rng.integers(8))
        if i % 5 == 0:
            buf = buf[:int(rng.integers(0, len(buf)))]
        good_file.write_bytes(bytes(buf))
        try:
            pullback.io.load(good_file)
            outcomes.add("loaded")
        except CheckpointFormatError:
            outcomes.add("refused")
    assert "refused" in outcomes


def test_invalid_bool_bytes(good_file):
    header, data = _read_raw(good_file)
    b, _ = header["b/0"]["data_offsets"]
    data = data[:b] + b"\x02" + data[b + 1:]
    _write_raw(good_file, header, data)
    _bad(good_file, "BOOL byte is neither 0 nor 1")


def test_trailing_bytes_after_the_data(good_file):
    good_file.write_bytes(good_file.read_bytes() + b"\0" * 8)
    _bad(good_file, r"the tensors cover (\d+) bytes of the (?!\1)\d+-byte data section")


class _Boom:
    """Unpickling this makes a directory: the sign that a loader ran code from a file."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (os.mkdir, (self.target,))


def test_foreign_files(tmp_path):
    sentinel = tmp_path / "code-ran"
    cases = {
        "empty": (b"", "shorter than the 8-byte"),
        "text": (b"hello, this is not a checkpoint at all\n", "over safetensors' limit|runs "
                 "past the end"),
        "npy": (b"\x93NUMPY\x01\x00" + b"x" * 100, "over safetensors' limit|runs past"),
        "pickle": (pickle.dumps({"w": _Boom(str(sentinel))}, protocol=2),
                   "over safetensors' limit|runs past|not a JSON object"),
        "pickle5": (pickle.dumps([1, 2, 3], protocol=5), "over safetensors' limit|runs past|"
                    "not a JSON object"),
        "small_header": (struct.pack("<Q", 4) + b"abcd", "not a JSON object"),
    }
    for name, (content, what) in cases.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(content)
        _bad(path, what)
    assert not sentinel.exists()
    plain = tmp_path / "plain.safetensors"
    safetensors.numpy.save_file({"w": np.ones(2, np.float32)}, plain)
    _bad(plain, "not one written by pullback.io.save")


def test_file_names_no_code_to_run(tmp_path):
    """A custom node's recorded class name is only a label: nothing is imported or called."""
    path = tmp_path / "named.safetensors"
    pullback.io.save(path, {"m": Model(np.ones(1, np.float32), np.ones(1, np.float32))})
    _tamper_tree(path, lambda t: t["children"][0].update(name="os.system"))
    out = pullback.io.load(path)
    assert set(out["m"]) == {"w", "b"}
    with pytest.raises(StructureMismatchError, match="the file has a node of type os.system"):
        pullback.io.load(path, like={"m": Model(jnp.ones(1), jnp.ones(1))})


# ---------------------------------------------------------------------------------------------
# Saving: bad input, atomicity
# ---------------------------------------------------------------------------------------------

def test_save_rejects_what_it_cannot_store(tmp_path):
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match=re.escape("at ['x'][1] is a object")):
        pullback.io.save(path, {"x": [1, object()]})
    with pytest.raises(TypeError, match=re.escape("at ['s'] has dtype <U2")):
        pullback.io.save(path, {"s": np.array(["ab"])})
    with pytest.raises(TypeError, match=re.escape("at ['o'] has dtype object")):
        pullback.io.save(path, {"o": np.array([None])})
    with pytest.raises(TypeError, match="the dict key \\(1, 2\\) at \\['d'\\] is a tuple"):
        pullback.io.save(path, {"d": {(1, 2): np.ones(1)}})
    assert not path.exists() and os.listdir(tmp_path) == []


def test_failed_save_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    pullback.io.save(path, {"w": np.ones(3, np.float32), "step": 1})

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed between write and rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        pullback.io.save(path, {"w": np.zeros(3, np.float32), "step": 2})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]  # no temporary left behind
    out = pullback.io.load(path)
    assert out["step"] == 1 and bits(out["w"]) == bits(np.ones(3, np.float32))


def test_crash_while_writing_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    pullback.io.save(path, {"w": np.ones(3, np.float32)})
    real = safetensors.serialize_file

    def partial_write(specs, filename, metadata=None):
        real(specs, filename, metadata=metadata)
        with open(filename, "r+b") as f:  # half the file made it to disk, then the crash
            f.truncate(os.path.getsize(filename) // 2)
        raise OSError("disk full")

    monkeypatch.setattr(safetensors, "serialize_file", partial_write)
    with pytest.raises(OSError, match="disk full"):
        pullback.io.save(path, {"w": np.zeros(3, np.float32)})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert bits(pullback.io.load(path)["w"]) == bits(np.ones(3, np.float32))
    # and a first save that fails leaves nothing at all
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("no")))
    with pytest.raises(OSError):
        pullback.io.save(tmp_path / "new.safetensors", {"w": np.ones(1)})
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_save_replaces_and_keeps_file_permissions_usual(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    pullback.io.save(path, {"v": 1})
    pullback.io.save(path, {"v": 2})
    assert pullback.io.load(path) == {"v": 2}
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(IsADirectoryError):
        pullback.io.save(tmp_path, {"v": 1})
