"""``pullback.scipy.spatial.transform``: 3-D rotations (``jax.scipy.spatial.transform``).

``Rotation`` and ``Slerp`` are NamedTuples of arrays, as JAX's, so they are pytrees that pass
through jit, vmap and grad. Quaternions are stored scalar-last ``(x, y, z, w)``; every function
works on any number of leading batch dimensions by indexing the last axis (no per-rotation
vmap). The formulas and their branch points are JAX's, so values agree with JAX to rounding;
where JAX's branches take a NaN derivative at the identity (``from_rotvec``, ``as_rotvec``), the
branch not taken is fed a safe value so the derivative there is finite, with the same values.
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple, Sequence

import numpy as np

from ... import numpy as jnp
from ... import random as _random
from ...numpy._promotion import promote_dtypes_inexact

__all__ = ["Rotation", "Slerp"]

Array = Any


# ---- quaternion helpers: (..., 4) scalar-last arrays ----

def _norm(v: Array) -> Array:
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _safe_norm(v: Array) -> Array:
    """|v|, with a zero (not NaN) derivative at v = 0."""
    s = jnp.sum(v * v, axis=-1)
    zero = s == 0
    return jnp.where(zero, 0, jnp.sqrt(jnp.where(zero, 1, s)))


def _normalize(q: Array) -> Array:
    return q / _norm(q)[..., None]


def _compose(p: Array, q: Array) -> Array:
    """The Hamilton product p q (rotation q first, then p), in JAX's order of operations."""
    p0, p1, p2, p3 = (p[..., n] for n in range(4))
    q0, q1, q2, q3 = (q[..., n] for n in range(4))
    c0 = p1 * q2 - p2 * q1
    c1 = p2 * q0 - p0 * q2
    c2 = p0 * q1 - p1 * q0
    return jnp.stack([p3 * q0 + q3 * p0 + c0,
                      p3 * q1 + q3 * p1 + c1,
                      p3 * q2 + q3 * p2 + c2,
                      p3 * q3 - p0 * q0 - p1 * q1 - p2 * q2], axis=-1)


def _as_matrix(q: Array) -> Array:
    x, y, z, w = (q[..., n] for n in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m: Array) -> Array:
    """Shepperd's method as JAX: the largest of (m00, m11, m22, trace) picks the formula."""
    e = [[m[..., r, c] for c in range(3)] for r in range(3)]
    trace = e[0][0] + e[1][1] + e[2][2]
    choice = jnp.argmax(jnp.stack([e[0][0], e[1][1], e[2][2], trace], axis=-1), axis=-1)
    quat = jnp.stack([e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1], 1 + trace],
                     axis=-1)
    for i in range(3):
        j = (i + 1) % 3
        k = (j + 1) % 3
        comp = [None] * 4
        comp[i] = 1 - trace + 2 * e[i][i]
        comp[j] = e[j][i] + e[i][j]
        comp[k] = e[k][i] + e[i][k]
        comp[3] = e[k][j] - e[j][k]
        quat = jnp.where((choice == i)[..., None], jnp.stack(comp, axis=-1), quat)
    return _normalize(quat)


def _from_rotvec(rotvec: Array) -> Array:
    s = jnp.sum(rotvec * rotvec, axis=-1)
    angle = _safe_norm(rotvec)
    small = angle <= 1e-3
    # Taylor branches in the squared angle, smooth at 0; the other branch sees a safe angle
    safe = jnp.where(small, 1, angle)
    scale = jnp.where(small, 0.5 - s / 48 + s * s / 3840, jnp.sin(safe / 2) / safe)
    w = jnp.where(small, 1 - s / 8 + s * s / 384, jnp.cos(safe / 2))
    return jnp.concatenate([scale[..., None] * rotvec, w[..., None]], axis=-1)


def _as_rotvec(q: Array, degrees: bool) -> Array:
    q = jnp.where((q[..., 3] < 0)[..., None], -q, q)  # w >= 0: 0 <= angle <= pi
    angle = 2 * jnp.arctan2(_safe_norm(q[..., :3]), q[..., 3])
    angle2 = angle * angle
    small = angle <= 1e-3
    safe = jnp.where(small, 1, angle)
    scale = jnp.where(small, 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880,
                      safe / jnp.sin(safe / 2))
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _elementary(axis: int, angle: Array) -> Array:
    zero = jnp.zeros_like(angle)
    comp = [zero, zero, zero, jnp.cos(angle / 2)]
    comp[axis] = jnp.sin(angle / 2)
    return jnp.stack(comp, axis=-1)


def _euler_from_quat(q: Array, axes: list[int], extrinsic: bool) -> Array:
    """Bernardes and Viollet's quaternion-to-Euler algorithm, with JAX's degenerate cases."""
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    qs = [q[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = qs[3], qs[i], qs[j], qs[k] * sign
    else:
        a, b = qs[3] - qs[j], qs[i] + qs[k] * sign
        c, d = qs[j] + qs[3], qs[k] * sign - qs[i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    case = jnp.where(jnp.abs(middle - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(middle) <= eps, 1, case)
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    # gimbal lock: the first angle takes the whole turn and the third is 0
    out = [jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)),
           middle, jnp.zeros_like(middle)]
    first, third = (0, 2) if extrinsic else (2, 0)
    regular = case == 0
    out[first] = jnp.where(regular, half_sum - half_diff, out[first])
    out[third] = jnp.where(regular, half_sum + half_diff, out[third])
    if not symmetric:
        out[third] = out[third] * sign
        out[1] = out[1] - np.pi / 2
    angles = jnp.stack(out, axis=-1)
    return (angles + np.pi) % (2 * np.pi) - np.pi


def _parse_seq(seq: Any, op: str, exactly3: bool) -> tuple[list[int], bool]:
    """The axis indices of an Euler sequence and whether it is extrinsic (lower case)."""
    if not isinstance(seq, str):
        raise TypeError(f"Rotation.{op}: `seq` must be a string of axes, got {seq!r}")
    n = len(seq)
    if exactly3 and n != 3:
        raise ValueError(f"Rotation.{op}: expected 3 axes in `seq`, got {seq!r}")
    if n < 1 or n > 3:
        raise ValueError(f"Rotation.{op}: expected `seq` to be a non-empty string of up to 3 "
                         f"axes, got {seq!r}")
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (extrinsic or re.match(r"^[XYZ]{1,3}$", seq)):
        raise ValueError(f"Rotation.{op}: expected the axes of `seq` to be from ['x', 'y', "
                         f"'z'] (extrinsic) or ['X', 'Y', 'Z'] (intrinsic), got {seq!r}")
    if any(seq[m] == seq[m + 1] for m in range(n - 1)):
        raise ValueError(f"Rotation.{op}: expected consecutive axes of `seq` to be different, "
                         f"got {seq!r}")
    return ["xyz".index(a) for a in seq.lower()], extrinsic


def _inexact(op: str, x: Any) -> Array:
    (x,) = promote_dtypes_inexact(op, jnp.asarray(x))
    return x


def _check_last(op: str, name: str, x: Array, size: int, ndim: int = 1) -> None:
    if x.ndim < ndim or x.shape[x.ndim - ndim:] != (size,) * ndim:
        want = "x".join([str(size)] * ndim)
        raise ValueError(f"Rotation.{op}: expected `{name}` of shape (..., {want}), got shape "
                         f"{x.shape}")


class Rotation(NamedTuple):
    """Rotations in three dimensions (``jax.scipy.spatial.transform.Rotation``).

    A NamedTuple holding unit quaternions ``quat`` of shape ``(4,)`` (a single rotation) or
    ``(..., 4)``, scalar-last. Build one with the ``from_*`` constructors.

    Examples:
      >>> r = Rotation.from_euler('z', 90, degrees=True)
      >>> r.apply(jnp.array([1., 0., 0.]))  # ~ [0, 1, 0]
    """
    quat: Array

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """Stacks the rotations of several ``Rotation`` objects (single ones count as one)."""
        return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """Rotations from Euler angles.

        Args:
          seq: up to 3 axes, as "xyz" (extrinsic: about the fixed frame's axes) or "XYZ"
            (intrinsic: about the rotating frame's axes); consecutive axes differ.
          angles: angles of shape ``(..., len(seq))`` (a scalar for a one-axis sequence).
          degrees: whether the angles are in degrees.
        """
        axes, extrinsic = _parse_seq(seq, "from_euler", exactly3=False)
        angles = jnp.atleast_1d(_inexact("Rotation.from_euler", angles))
        if angles.shape[-1] != len(axes):
            raise ValueError(f"Rotation.from_euler: expected `angles` of shape (..., "
                             f"{len(axes)}) for seq {seq!r}, got shape {angles.shape}")
        if degrees:
            angles = jnp.deg2rad(angles)
        quat = _elementary(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            step = _elementary(axes[n], angles[..., n])
            quat = _compose(step, quat) if extrinsic else _compose(quat, step)
        return cls(quat)

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """Rotations from rotation matrices of shape ``(..., 3, 3)`` (orthonormalised by the
        nearest-quaternion construction)."""
        matrix = _inexact("Rotation.from_matrix", matrix)
        _check_last("from_matrix", "matrix", matrix, 3, ndim=2)
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """Rotations from Modified Rodrigues Parameters of shape ``(..., 3)``."""
        mrp = _inexact("Rotation.from_mrp", mrp)
        _check_last("from_mrp", "mrp", mrp, 3)
        sq1 = jnp.sum(mrp * mrp, axis=-1)[..., None] + 1
        return cls(jnp.concatenate([2 * mrp, 2 - sq1], axis=-1) / sq1)

    @classmethod
    def from_quat(cls, quat: Any, *, scalar_first: bool = False) -> Rotation:
        """Rotations from quaternions of shape ``(..., 4)`` (normalised here).

        Args:
          quat: quaternions, ``(x, y, z, w)``, or ``(w, x, y, z)`` if ``scalar_first``.
          scalar_first: the order of ``quat`` (SciPy's keyword; JAX takes scalar-last only).
        """
        quat = _inexact("Rotation.from_quat", quat)
        _check_last("from_quat", "quat", quat, 4)
        if scalar_first:
            quat = jnp.roll(quat, -1, axis=-1)
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """Rotations from rotation vectors (axis times angle) of shape ``(..., 3)``."""
        rotvec = _inexact("Rotation.from_rotvec", rotvec)
        _check_last("from_rotvec", "rotvec", rotvec, 3)
        if degrees:
            rotvec = jnp.deg2rad(rotvec)
        return cls(_from_rotvec(rotvec))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation, or ``num`` of them."""
        quat = jnp.array([0., 0., 0., 1.], dtype=dtype)
        return cls(quat if num is None else jnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Uniformly distributed rotations: normalised standard-normal quaternions (the
        construction SciPy's ``Rotation.random`` uses), drawn with ``random_key``."""
        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(_random.normal(random_key, shape)))

    def __getitem__(self, indexer: Any) -> Rotation:
        """The rotation(s) at ``indexer`` of a batch of rotations."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations along the first batch axis."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:
        """The composition: ``other`` first, then ``self``."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Array:
        """Rotates ``vectors`` of shape ``(..., 3)`` (broadcast against the rotations); with
        ``inverse``, by the inverse rotation(s)."""
        vectors = jnp.asarray(vectors)
        _check_last("apply", "vectors", vectors, 3)
        matrix = self.as_matrix()
        if isinstance(inverse, (bool, np.bool_)):
            if inverse:
                matrix = jnp.swapaxes(matrix, -1, -2)
        else:  # a traced flag, as JAX allows
            matrix = jnp.where(inverse, jnp.swapaxes(matrix, -1, -2), matrix)
        return jnp.sum(matrix * vectors[..., None, :], axis=-1)

    def as_euler(self, seq: str, degrees: bool = False) -> Array:
        """Euler angles of shape ``(..., 3)`` for a 3-axis ``seq`` (see ``from_euler``); the
        middle angle in [0, pi] (symmetric sequences) or [-pi/2, pi/2], the others in
        [-pi, pi). At gimbal lock the third angle is 0."""
        axes, extrinsic = _parse_seq(seq, "as_euler", exactly3=True)
        angles = _euler_from_quat(self.quat, axes, extrinsic)
        return jnp.rad2deg(angles) if degrees else angles

    def as_matrix(self) -> Array:
        """Rotation matrices of shape ``(..., 3, 3)``."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Array:
        """Modified Rodrigues Parameters of shape ``(..., 3)`` (of norm at most 1)."""
        q = self.quat
        sign = jnp.where(q[..., 3] < 0, -1., 1.).astype(q.dtype)
        return (sign[..., None] * q[..., :3]) / (1. + sign * q[..., 3])[..., None]

    def as_rotvec(self, degrees: bool = False) -> Array:
        """Rotation vectors (axis times angle in [0, pi]) of shape ``(..., 3)``."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """The quaternions, scalar-last unless ``scalar_first``; with ``canonical``, the sign
        with w > 0 (ties broken by the first nonzero of x, y, z)."""
        quat = self.quat
        if canonical:
            neg, zero = quat < 0, quat == 0
            flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0])
                    | (zero[..., 3] & zero[..., 0] & neg[..., 1])
                    | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
            quat = jnp.where(flip[..., None], -quat, quat)
        return jnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self) -> Array:
        """The rotation angle(s), in [0, pi]."""
        q = self.quat
        return 2. * jnp.arctan2(_norm(q[..., :3]), jnp.abs(q[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation of a 1-D batch: the principal eigenvector of
        ``sum_i w_i q_i q_i^T`` (Markley et al.), as SciPy and JAX."""
        q = self.quat
        w = (jnp.ones(q.shape[0], dtype=q.dtype) if weights is None
             else jnp.asarray(weights, dtype=q.dtype))
        if w.ndim != 1:
            raise ValueError(f"Rotation.mean: expected `weights` to be 1 dimensional, got "
                             f"shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(f"Rotation.mean: expected `weights` to have one value per "
                             f"rotation, got {w.shape[0]} values and {len(self)} rotations.")
        k = (w[None, :] * q.T) @ q
        _, v = jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` of shape ``(4,)``)."""
        return np.ndim(self.quat) == 1  # np.ndim: pytree code may hold a placeholder leaf


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations (``jax.scipy.spatial.transform.Slerp``).

    Build with ``Slerp.init(times, rotations)``; calling it interpolates at new times. Outside
    the times it extrapolates as JAX (SciPy raises): before the first along the first interval;
    after the last from the last time with the last interval's start rotation and rate (JAX's
    clamped gathers).
    """
    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator of ``rotations`` (at least 2) at strictly increasing ``times``."""
        if not isinstance(rotations, Rotation):
            raise TypeError("Slerp.init: `rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("Slerp.init: `rotations` must be a sequence of at least 2 "
                             "rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Slerp.init: expected `times` to be 1 dimensional, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Slerp.init: expected as many `times` as rotations, got "
                             f"{len(rotations)} rotations and {times.shape[0]} times.")
        quat = rotations.as_quat()
        start = Rotation(quat[:-1])
        rotvecs = (start.inv() * Rotation(quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=start, rotvecs=rotvecs)

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotations at ``times`` (a scalar gives a single rotation)."""
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("Slerp: `times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result
