"""conv_general_dilated: XLA's general convolution (backends/cpu/csrc/conv.c).

Semantics (JAX's / XLA's): ``lhs`` is read through ``dimension_numbers.lhs_spec`` as
(batch, feature, spatial...), ``rhs`` through ``rhs_spec`` as (out feature, in feature,
spatial...), and the result is written through ``out_spec``. ``lhs`` is dilated by
``lhs_dilation`` (holes between elements), padded by ``padding`` (negative pads crop), and
correlated with ``rhs`` dilated by ``rhs_dilation`` at ``window_strides``. Feature groups split
the lhs features and the output features into ``feature_group_count`` group-major blocks;
batch groups split the lhs batch and the output features into ``batch_group_count``
group-major blocks (output feature ``o`` reads lhs batch ``(o // (O / B)) * (N / B) + n``).

Dtypes: both operands share one dtype (bool and float8 are rejected). float16/bfloat16
accumulate in float32, integers in 64 bits (wrapping to the result's width);
``preferred_element_type`` picks the result dtype (an integer at least as wide as the
operands', or a floating dtype), and the accumulation follows it.

Derivatives are JAX's: the conv is bilinear; the cotangent of ``lhs`` is a convolution of the
cotangent with the spatially reversed kernel (strides and lhs dilation swapped, features
regrouped), that of ``rhs`` a convolution of ``lhs`` with the cotangent (batch and feature
swapped, feature groups become batch groups). vmap folds the mapped axis into the batch or the
feature groups, as JAX.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from .conversion import check_dtype, convert_element_type_p, convert_reference
from .dot import _accumulation_dtype
from .movement import reshape_p, rev_p
from .rules import Kernel, Zero, add_tangents, check_examples, is_undefined, zeros_like_aval

MAX_SPATIAL = 6  # conv.c's limit on spatial dimensions


class ConvDimensionNumbers(NamedTuple):
    """Describes batch, spatial and feature dimensions of a convolution.

    Args:
      lhs_spec: (batch dimension, feature dimension, spatial dimensions...) of ``lhs``.
      rhs_spec: (out feature dimension, in feature dimension, spatial dimensions...) of ``rhs``.
      out_spec: (batch dimension, feature dimension, spatial dimensions...) of the output.
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


_OP = "conv_general_dilated"


def dilate_dim(d: int, r: int) -> int:
    return 0 if d == 0 else 1 + r * (d - 1)


def _check_spec(name: str, spec, ndim: int) -> tuple[int, ...]:
    spec = tuple(int(i) for i in spec)
    if sorted(spec) != list(range(ndim)):
        raise TypeError(f"{_OP}: dimension_numbers.{name} must be a permutation of the "
                        f"{ndim} dimensions of the operands, got {spec}")
    return spec


def _check_positive(name: str, v, n: int) -> tuple[int, ...]:
    v = tuple(v)
    if len(v) != n:
        raise ValueError(f"{_OP}: argument '{name}' must have one entry per spatial dimension "
                         f"({n}), got {v}")
    if any(int(i) < 1 for i in v):
        raise ValueError(f"{_OP}: argument '{name}' must be positive, got {v}")
    return tuple(int(i) for i in v)


def result_dtype(lhs: np.dtype, rhs: np.dtype, preferred) -> np.dtype:
    """The result dtype, raising the user-facing dtype errors."""
    for arg, d in (("lhs", lhs), ("rhs", rhs)):
        if d == dtypes.bool_ or d in dtypes.FLOAT8:
            raise TypeError(f"{_OP}: argument '{arg}' must be an integer, floating or complex "
                            f"array (not bool or float8), got {d}")
    if lhs != rhs:
        raise TypeError(f"{_OP}: arguments 'lhs' and 'rhs' must have the same dtype, got {lhs} "
                        f"and {rhs}")
    if preferred is None:
        return lhs
    p = check_dtype(_OP, "preferred_element_type", preferred)
    if dtypes.is_integer(lhs):
        ok = dtypes.is_float(p) or (dtypes.is_integer(p) and p.itemsize >= lhs.itemsize)
        want = f"an integer dtype at least as wide as {lhs}, or a floating dtype"
    elif dtypes.is_complex(lhs):
        ok, want = dtypes.is_complex(p), "a complex dtype"
    else:
        ok, want = dtypes.is_float(p) and p not in dtypes.FLOAT8, "a floating dtype"
    if not ok:
        raise TypeError(f"{_OP}: argument 'preferred_element_type' must be {want} for operands "
                        f"of dtype {lhs}, got {p}")
    return p


def conv_shape(lhs_shape, rhs_shape, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count) -> tuple[int, ...]:
    """The output shape, raising every user-facing shape error."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"{_OP}: arguments 'lhs' and 'rhs' must have the same rank, got shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    nd = len(lhs_shape)
    if nd < 2 or nd - 2 > MAX_SPATIAL:
        raise TypeError(f"{_OP}: argument 'lhs' must have rank 2 to {MAX_SPATIAL + 2} (batch, "
                        f"feature and spatial dimensions), got shape {tuple(lhs_shape)}")
    if not isinstance(dimension_numbers, ConvDimensionNumbers):
        raise TypeError(f"{_OP}: argument 'dimension_numbers' must be a ConvDimensionNumbers, "
                        f"got {dimension_numbers!r}")
    ls, rs, os_ = (_check_spec(n, s, nd) for n, s in zip(ConvDimensionNumbers._fields,
                                                         dimension_numbers))
    nsp = nd - 2
    strides = _check_positive("window_strides", window_strides, nsp)
    lhs_dil = _check_positive("lhs_dilation", lhs_dilation, nsp)
    rhs_dil = _check_positive("rhs_dilation", rhs_dilation, nsp)
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{_OP}: argument 'padding' must be a sequence of (low, high) integer "
                        f"pairs, got {padding!r}") from None
    if len(pads) != nsp:
        raise TypeError(f"{_OP}: argument 'padding' must have one (low, high) pair per spatial "
                        f"dimension ({nsp}), got {pads}")
    fgc, bgc = feature_group_count, batch_group_count
    for name, g in (("feature_group_count", fgc), ("batch_group_count", bgc)):
        if not isinstance(g, (int, np.integer)) or g < 1:
            raise ValueError(f"{_OP}: argument '{name}' must be a positive integer, got {g!r}")
    if fgc > 1 and bgc > 1:
        raise ValueError(f"{_OP}: at most one of 'batch_group_count' and 'feature_group_count' "
                         f"may be > 1, got batch_group_count={bgc} and "
                         f"feature_group_count={fgc}")
    n, c = lhs_shape[ls[0]], lhs_shape[ls[1]]
    o, i = rhs_shape[rs[0]], rhs_shape[rs[1]]
    shapes = f"(lhs shape {tuple(lhs_shape)}, rhs shape {tuple(rhs_shape)})"
    if c % fgc:
        raise ValueError(f"{_OP}: argument 'feature_group_count' ({fgc}) must divide the lhs "
                         f"feature dimension size {c} {shapes}")
    if c // fgc != i:
        raise ValueError(f"{_OP}: the lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension size, "
                         f"but {c} // {fgc} != {i} {shapes}")
    if o % fgc:
        raise ValueError(f"{_OP}: the rhs output feature dimension size {o} must be a multiple "
                         f"of feature_group_count ({fgc}) {shapes}")
    if n % bgc:
        raise ValueError(f"{_OP}: argument 'batch_group_count' ({bgc}) must divide the lhs "
                         f"batch dimension size {n} {shapes}")
    if o % bgc:
        raise ValueError(f"{_OP}: the rhs output feature dimension size {o} must be a multiple "
                         f"of batch_group_count ({bgc}) {shapes}")
    out_t = [n // bgc, o]
    for d in range(nsp):
        size = dilate_dim(lhs_shape[ls[2 + d]], lhs_dil[d]) + pads[d][0] + pads[d][1]
        if size < 0:
            raise ValueError(f"{_OP}: negative padding {pads[d]} is larger than the (dilated) "
                             f"lhs spatial dimension {d} of size "
                             f"{dilate_dim(lhs_shape[ls[2 + d]], lhs_dil[d])} {shapes}")
        win = dilate_dim(rhs_shape[rs[2 + d]], rhs_dil[d])
        out_t.append(max(0, (size - win) // strides[d] + 1) if size >= win else 0)
    out = [0] * nd
    for k, ax in enumerate(os_):
        out[ax] = out_t[k]
    return tuple(out)


def _conv_aval(lhs: ShapedArray, rhs: ShapedArray, *, window_strides, padding, lhs_dilation,
               rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
               precision=None, preferred_element_type=None) -> ShapedArray:
    shape = conv_shape(lhs.shape, rhs.shape, window_strides=window_strides, padding=padding,
                       lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                       dimension_numbers=dimension_numbers,
                       feature_group_count=feature_group_count,
                       batch_group_count=batch_group_count)
    dt = result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    weak = preferred_element_type is None and lhs.weak_type and rhs.weak_type
    return ShapedArray(shape, dt, weak)


# ---- the NumPy reference ----

def _dilate_pad(x: np.ndarray, dil, pads) -> np.ndarray:
    """x's trailing len(dil) dims dilated (zeros between elements) then padded (negative
    pads crop)."""
    lead = x.ndim - len(dil)
    if any(d > 1 for d in dil):
        shape = x.shape[:lead] + tuple(dilate_dim(s, d) for s, d in zip(x.shape[lead:], dil))
        y = np.zeros(shape, x.dtype)
        y[(Ellipsis,) + tuple(slice(None, None, d) for d in dil)] = x
        x = y
    if pads is None:
        return x
    crop = tuple(slice(max(0, -lo), s - max(0, -hi)) for (lo, hi), s in zip(pads, x.shape[lead:]))
    x = x[(Ellipsis,) + crop]
    return np.pad(x, [(0, 0)] * lead + [(max(0, lo), max(0, hi)) for lo, hi in pads])


def _masked_taps(win, valid, w, wvalid, nsp: int) -> np.ndarray:
    """The reference's product (``win`` (b, n, g, c, out..., taps...) with ``w`` (b, g, o, c,
    taps...) summed over c and the taps, as (n, b, g, o, out...)) with the padding and dilation
    holes (``valid``, ``wvalid`` False) skipped rather than multiplied, so that an infinity
    against them adds nothing, as in XLA's convolution (0 * inf would be NaN)."""
    bb, n, g, _ = win.shape[:4]
    o = w.shape[2]
    out = np.zeros((bb, n, g, o) + win.shape[4:4 + nsp], np.result_type(win, w))
    for t in np.ndindex(*w.shape[4:]):
        if not wvalid[(Ellipsis,) + t].any():
            continue  # a hole of the rhs dilation
        wt = w[(Ellipsis,) + t].reshape((bb, 1, g) + w.shape[2:4] + (1,) * nsp)
        with np.errstate(over="ignore", invalid="ignore"):
            prod = win[(Ellipsis,) + t][:, :, :, None] * wt
        out += np.where(valid[(Ellipsis,) + t][:, :, :, None], prod, 0).sum(axis=4)
    return out.transpose((1, 0, 2, 3) + tuple(range(4, 4 + nsp)))


def _conv_reference(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                    dimension_numbers, feature_group_count, batch_group_count, precision=None,
                    preferred_element_type=None) -> np.ndarray:
    shape = conv_shape(lhs.shape, rhs.shape, window_strides=window_strides, padding=padding,
                       lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                       dimension_numbers=dimension_numbers,
                       feature_group_count=feature_group_count,
                       batch_group_count=batch_group_count)
    out_dtype = result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    acc = _accumulation_dtype(out_dtype)
    ls, rs, os_ = dimension_numbers
    nsp = lhs.ndim - 2
    out_t_shape = tuple(shape[a] for a in os_)
    x = convert_reference(np.transpose(lhs, ls), acc)
    w = convert_reference(np.transpose(rhs, rs), acc)
    if 0 in out_t_shape or 0 in w.shape[2:] or x.shape[1] == 0:
        out_t = np.zeros(out_t_shape, acc)
    else:
        finite = np.isfinite(x).all() and np.isfinite(w).all()
        vx = _dilate_pad(np.ones(x.shape, bool), lhs_dilation, padding)
        vw = _dilate_pad(np.ones(w.shape, bool), rhs_dilation, None)
        x = _dilate_pad(x, lhs_dilation, padding)
        w = _dilate_pad(w, rhs_dilation, None)
        b, g = batch_group_count, feature_group_count
        n, c = x.shape[:2]
        o, i = w.shape[:2]
        taps = w.shape[2:]

        def windows(a):
            win = np.lib.stride_tricks.sliding_window_view(a, taps, axis=tuple(range(2, 2 + nsp)))
            win = win[(slice(None), slice(None)) + tuple(slice(None, m * s, s) for m, s in
                                                          zip(out_t_shape[2:], window_strides))]
            return win.reshape((b, n // b, g, c // g) + win.shape[2:])
        win = windows(x)
        w = w.reshape((b, g, o // (b * g), i) + w.shape[2:])
        if finite:
            sp = "".join("stuvwx"[:nsp])
            kk = "".join("klmpqr"[:nsp])
            with np.errstate(over="ignore"):
                out_t = np.einsum(f"bngc{sp}{kk},bgoc{kk}->nbgo{sp}", win, w)
        else:
            out_t = _masked_taps(win, windows(vx), w, vw.reshape(w.shape), nsp)
        out_t = out_t.reshape(out_t_shape)
    return convert_reference(np.transpose(out_t, np.argsort(os_)), out_dtype)


# ---- differentiation (JAX's rules) ----

def _conv_jvp(primals, tangents, **params):
    (lhs, rhs), (tl, tr) = primals, tangents
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    t = Zero.from_primal(out)
    if type(tl) is not Zero:
        t = add_tangents(t, conv_general_dilated_p.bind(tl, rhs, **params))
    if type(tr) is not Zero:
        t = add_tangents(t, conv_general_dilated_p.bind(lhs, tr, **params))
    return out, t


def _spec_transpose(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def reshape_axis_into(src: int, dst: int, x):
    """Merges axis ``src`` of x into axis ``dst`` (numbered with ``src`` removed) as its major
    part."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [shape[i] for i in range(len(shape)) if i != src]
    new[dst] *= shape[src]
    return reshape_p.bind(x, new_sizes=tuple(new), dimensions=tuple(perm))


def reshape_axis_out_of(src: int, size1: int, x):
    """Splits axis ``src`` of x into (size1, rest)."""
    shape = list(get_aval(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None)


def _convert(x, dtype, weak=False):
    if get_aval(x).dtype == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak)


def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
    pads = []
    for i, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                           lhs_dil, rhs_dil):
        before = dilate_dim(k, rd) - lo - 1
        after = dilate_dim(i, ld) + dilate_dim(k, rd) - 1 - dilate_dim(o, s) - before
        pads.append((before, after))
    return tuple(pads)


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
    pads = []
    for i, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                           lhs_dil, rhs_dil):
        hi = (dilate_dim(o, s) - dilate_dim(i, ld)) + (dilate_dim(k, rd) - lo - 1)
        pads.append((lo, hi))
    return tuple(pads)


def _transpose_lhs(g, rhs, lhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    ls, rs, os_ = dimension_numbers
    rhs_aval = get_aval(rhs)
    rsd = rs[2:]
    window = tuple(rhs_aval.shape[d] for d in rsd)
    fgc = feature_group_count
    if feature_group_count > 1:
        rhs = reshape_axis_out_of(rs[0], feature_group_count, rhs)
        rhs = reshape_axis_into(rs[0], rs[1], rhs)
    elif batch_group_count > 1:
        rhs = reshape_axis_out_of(rs[0], batch_group_count, rhs)
        rhs = reshape_axis_into(rs[0], rs[1], rhs)
        fgc = batch_group_count
    dn = ConvDimensionNumbers(os_, _spec_transpose(rs), ls)
    g_shape = get_aval(g).shape
    pads = _vjp_lhs_padding(tuple(lhs_aval.shape[d] for d in ls[2:]), window, window_strides,
                            tuple(g_shape[d] for d in os_[2:]), padding, lhs_dilation,
                            rhs_dilation)
    rhs = _convert(rev_p.bind(rhs, dimensions=tuple(rsd)), get_aval(g).dtype)
    out = conv_general_dilated_p.bind(
        g, rhs, window_strides=tuple(lhs_dilation), padding=pads,
        lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=dn, feature_group_count=fgc, batch_group_count=1,
        precision=precision, preferred_element_type=None)
    if batch_group_count > 1:
        out = reshape_axis_out_of(ls[1], batch_group_count, out)
        out = reshape_axis_into(ls[1], ls[0], out)
    return _convert(out, lhs_aval.dtype, lhs_aval.weak_type)


def _transpose_rhs(g, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    if get_aval(g).size == 0:  # no degenerate convolution with a 0-size kernel
        return zeros_like_aval(rhs_aval)
    ls, rs, os_ = dimension_numbers
    lhs_aval = get_aval(lhs)
    fgc, bgc = feature_group_count, batch_group_count
    if bgc > 1:
        fgc, bgc = bgc, 1
    elif fgc > 1:
        fgc, bgc = 1, fgc
    dn = ConvDimensionNumbers(_spec_transpose(ls), _spec_transpose(os_), _spec_transpose(rs))
    g_shape = get_aval(g).shape
    pads = _vjp_rhs_padding(tuple(lhs_aval.shape[d] for d in ls[2:]),
                            tuple(rhs_aval.shape[d] for d in rs[2:]), window_strides,
                            tuple(g_shape[d] for d in os_[2:]), padding, lhs_dilation,
                            rhs_dilation)
    out = conv_general_dilated_p.bind(
        _convert(lhs, get_aval(g).dtype), g, window_strides=tuple(rhs_dilation), padding=pads,
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
        dimension_numbers=dn, feature_group_count=fgc, batch_group_count=bgc,
        precision=precision, preferred_element_type=None)
    return _convert(out, rhs_aval.dtype, rhs_aval.weak_type)


def _conv_transpose(ct, lhs, rhs, **params):
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError(f"{_OP} transpose: both operands are linear inputs, but the "
                         "convolution is linear in each operand only with the other one fixed")
    if is_undefined(lhs):
        if type(ct) is Zero:
            return [Zero(lhs.aval), None]
        return [_transpose_lhs(ct, rhs, lhs.aval, **params), None]
    if type(ct) is Zero:
        return [None, Zero(rhs.aval)]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


# ---- batching (JAX's rule: the mapped axis joins the batch or the feature groups) ----

def _conv_batch(vals, dims, **params):
    out_aval = check_examples(conv_general_dilated_p, vals, dims, **params)
    (lhs, rhs), (bl, br) = vals, dims
    ls, rs, os_ = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = get_aval(lhs).shape[bl] if bl is not None else get_aval(rhs).shape[br]
    if size == 0:
        return zeros_like_aval(ShapedArray((0,) + out_aval.shape, out_aval.dtype,
                                           out_aval.weak_type)), 0
    bind = conv_general_dilated_p.bind
    if bl is not None and br is not None:
        p = dict(params)
        if bgc > 1:
            new_lhs = reshape_axis_into(bl, ls[0], lhs)
            p["batch_group_count"] = bgc * size
        else:
            new_lhs = reshape_axis_into(bl, ls[1], lhs)
            p["feature_group_count"] = fgc * size
        out = bind(new_lhs, reshape_axis_into(br, rs[0], rhs), **p)
        return reshape_axis_out_of(os_[1], size, out), os_[1]
    if bl is not None:
        if bgc == 1:
            out = bind(reshape_axis_into(bl, ls[0], lhs), rhs, **params)
            return reshape_axis_out_of(os_[0], size, out), os_[0]
        new_lhs = reshape_axis_out_of(ls[0] + int(bl <= ls[0]), bgc, lhs)
        new_lhs = reshape_axis_into(bl + int(ls[0] < bl), ls[0] + 1, new_lhs)
        new_lhs = reshape_axis_into(ls[0], ls[0], new_lhs)
        out = bind(new_lhs, rhs, **params)
        return reshape_axis_out_of(os_[0], size, out), os_[0]
    if fgc == 1 and bgc == 1:
        out = bind(lhs, reshape_axis_into(br, rs[0], rhs), **params)
        return reshape_axis_out_of(os_[1], size, out), os_[1]
    # groups stay outermost in the output features: (group, mapped, per-group)
    group = fgc if fgc > 1 else bgc
    new_rhs = reshape_axis_out_of(rs[0] + int(br <= rs[0]), group, rhs)
    new_rhs = reshape_axis_into(br + int(rs[0] < br), rs[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(rs[0], rs[0], new_rhs)
    out = bind(lhs, new_rhs, **params)
    out = reshape_axis_out_of(os_[1], group, out)
    out = reshape_axis_out_of(os_[1] + 1, size, out)
    return reshape_axis_into(os_[1], os_[1] + 1, out), os_[1]


# ---- the kernel (csrc/conv.c: conv_params) ----

_PARAMS = struct.Struct("=" + "q" * (3 + 3 * (MAX_SPATIAL + 2) + 4 * MAX_SPATIAL))


def _pad_to(v, n):
    return tuple(v) + (0,) * (n - len(v))


def _conv_pack(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None,
               preferred_element_type=None) -> bytes:
    ls, rs, os_ = dimension_numbers
    m, s = MAX_SPATIAL + 2, MAX_SPATIAL
    return _PARAMS.pack(len(ls) - 2, feature_group_count, batch_group_count,
                        *_pad_to(ls, m), *_pad_to(rs, m), *_pad_to(os_, m),
                        *_pad_to(window_strides, s), *_pad_to([lo for lo, _ in padding], s),
                        *_pad_to(lhs_dilation, s), *_pad_to(rhs_dilation, s))


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.abstract_eval = _conv_aval
conv_general_dilated_p.reference = _conv_reference
conv_general_dilated_p.cpu = Kernel(conv_general_dilated_p, "conv_general_dilated", _conv_pack)
conv_general_dilated_p.jvp = _conv_jvp
conv_general_dilated_p.transpose = _conv_transpose
conv_general_dilated_p.batch = _conv_batch
