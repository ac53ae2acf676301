"""pullback.scipy.spatial.transform (Rotation, Slerp) against scipy.spatial.transform over
hypothesis-drawn rotations (f32 and f64, single and batched), every Euler sequence intrinsic and
extrinsic, JAX's values where JAX's conventions matter (quaternion signs, gimbal lock, Slerp
past the ends; hard-coded, and JAX as an optional oracle), derivatives to second order in both
modes, vmap against a loop, jit against eager, and errors naming the argument."""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
from pullback import numpy as jnp
from pullback.scipy.spatial import transform
from pullback.scipy.spatial.transform import Rotation, Slerp
from pullback.test_util import check_grads, check_vmap

sst = pytest.importorskip("scipy.spatial.transform")
SR, SSlerp = sst.Rotation, sst.Slerp

SEQS3 = ["".join(p) for p in itertools.product("xyz", repeat=3)
         if p[0] != p[1] and p[1] != p[2]]  # the 12 Tait-Bryan and proper Euler sequences
ALL_SEQS3 = SEQS3 + [s.upper() for s in SEQS3]
SHORT_SEQS = ["x", "Y", "z", "xy", "YZ", "zx", "XZ"]
DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-11, atol=1e-11)}

batch_shapes = st.sampled_from([(), (1,), (3,), (2, 2)])


def quats(seed, shape, dtype):
    q = np.random.default_rng(seed).standard_normal(shape + (4,))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q.astype(dtype)


def scipy_rot(q):
    return SR.from_quat(np.asarray(q, np.float64).reshape(-1, 4))


def close(got, want, dtype, **kw):
    got = np.asarray(got)
    assert got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64),
                               **{**TOL[dtype], **kw})


def same_rotation(q1, q2, dtype):
    """Quaternions of one rotation: equal up to sign."""
    q1, q2 = np.asarray(q1, np.float64).reshape(-1, 4), np.asarray(q2, np.float64).reshape(-1, 4)
    s = np.where(np.sum(q1 * q2, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    np.testing.assert_allclose(q1, s * q2, **TOL[dtype])


# ---- conversions against SciPy ----

@given(st.integers(0, 2**32 - 1), batch_shapes, st.sampled_from(DTYPES))
def test_conversions_match_scipy(seed, shape, dtype):
    q = quats(seed, shape, dtype)
    r, s = Rotation.from_quat(q), scipy_rot(q)
    assert r.quat.shape == shape + (4,) and r.single == (shape == ())
    close(r.as_matrix(), s.as_matrix().reshape(shape + (3, 3)), dtype)
    close(r.as_rotvec(), s.as_rotvec().reshape(shape + (3,)), dtype)
    close(r.as_rotvec(degrees=True), s.as_rotvec(degrees=True).reshape(shape + (3,)), dtype,
          atol=TOL[dtype]["atol"] * 60)
    close(r.as_mrp(), s.as_mrp().reshape(shape + (3,)), dtype)
    close(r.magnitude(), s.magnitude().reshape(shape), dtype)
    close(r.as_quat(canonical=True), s.as_quat(canonical=True).reshape(shape + (4,)), dtype)
    close(r.as_quat(scalar_first=True), s.as_quat(scalar_first=True).reshape(shape + (4,)), dtype)
    close(r.inv().as_matrix(), s.inv().as_matrix().reshape(shape + (3, 3)), dtype)
    # the constructors, back from SciPy's representations
    m = s.as_matrix().reshape(shape + (3, 3)).astype(dtype)
    same_rotation(Rotation.from_matrix(m).quat, s.as_quat(), dtype)
    rv = s.as_rotvec().reshape(shape + (3,)).astype(dtype)
    same_rotation(Rotation.from_rotvec(rv).quat, s.as_quat(), dtype)
    close(Rotation.from_rotvec(np.rad2deg(rv), degrees=True).as_matrix(),
          s.as_matrix().reshape(shape + (3, 3)), dtype)
    mrp = s.as_mrp().reshape(shape + (3,)).astype(dtype)
    same_rotation(Rotation.from_mrp(mrp).quat, s.as_quat(), dtype)
    sf = np.roll(q, 1, axis=-1)
    close(Rotation.from_quat(sf, scalar_first=True).quat, Rotation.from_quat(q).quat, dtype)


@given(st.integers(0, 2**32 - 1), st.sampled_from(DTYPES))
def test_small_and_zero_rotation_vectors(seed, dtype):
    """The Taylor branches (angle <= 1e-3) against SciPy, on both sides of the switch."""
    rng = np.random.default_rng(seed)
    axis = rng.standard_normal(3)
    axis /= np.linalg.norm(axis)
    rv = np.stack([axis * a for a in [0.0, 1e-7, 1e-4, 9.99e-4, 1.001e-3, 1e-2, 3.0]])
    r = Rotation.from_rotvec(rv.astype(dtype))
    close(r.as_matrix(), SR.from_rotvec(rv).as_matrix(), dtype)
    close(r.as_rotvec(), SR.from_rotvec(rv).as_rotvec(), dtype)


@pytest.mark.parametrize("seq", ALL_SEQS3)
@settings(max_examples=15)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(), (4,)]), st.sampled_from(DTYPES))
def test_euler_matches_scipy(seq, seed, shape, dtype):
    q = quats(seed, shape, dtype)
    s = scipy_rot(q)
    want = s.as_euler(seq).reshape(shape + (3,))
    middle = want[..., 1] if seq[0].lower() == seq[2].lower() else want[..., 1] + np.pi / 2
    regular = np.minimum(np.abs(middle), np.abs(middle - np.pi)) > 1e-2
    got = np.asarray(Rotation.from_quat(q).as_euler(seq))
    assert got.shape == shape + (3,) and got.dtype == dtype
    # away from gimbal lock the angles are SciPy's (near it they are ill-conditioned)
    np.testing.assert_allclose(got[regular].astype(np.float64), want[regular],
                               rtol=1e-3 if dtype == np.float32 else 1e-9,
                               atol=1e-3 if dtype == np.float32 else 1e-9)
    gd = np.asarray(Rotation.from_quat(q).as_euler(seq, degrees=True), np.float64)
    np.testing.assert_allclose(gd[regular], np.rad2deg(want[regular]),
                               atol=0.06 if dtype == np.float32 else 1e-7)
    # everywhere, the angles give the rotation back (SciPy's from_euler of our angles)
    back = SR.from_euler(seq, got.astype(np.float64).reshape(-1, 3)).as_matrix()
    np.testing.assert_allclose(back, s.as_matrix(), atol=1e-3 if dtype == np.float32 else 1e-9)
    # and from_euler agrees with SciPy's
    close(Rotation.from_euler(seq, want.astype(dtype)).as_matrix(),
          SR.from_euler(seq, want.reshape(-1, 3)).as_matrix().reshape(shape + (3, 3)), dtype)
    close(Rotation.from_euler(seq, np.rad2deg(want).astype(dtype), degrees=True).as_matrix(),
          SR.from_euler(seq, want.reshape(-1, 3)).as_matrix().reshape(shape + (3, 3)), dtype,
          atol=TOL[dtype]["atol"] * 10)


@pytest.mark.parametrize("seq", SHORT_SEQS)
@given(st.integers(0, 2**32 - 1), st.sampled_from(DTYPES))
def test_from_euler_short_sequences(seq, seed, dtype):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-np.pi, np.pi, (3, len(seq)))
    close(Rotation.from_euler(seq, angles.astype(dtype)).as_matrix(),
          SR.from_euler(seq, angles).as_matrix(), dtype)
    # one angle for a one-axis sequence: a single rotation, as JAX
    if len(seq) == 1:
        r = Rotation.from_euler(seq, dtype(angles[0, 0]))
        assert r.single
        close(r.as_matrix(), SR.from_euler(seq, angles[0, 0]).as_matrix(), dtype)
        with pytest.raises(ValueError, match="angles"):  # as JAX and SciPy 1.17
            Rotation.from_euler(seq, angles[:, 0].astype(dtype))


@pytest.mark.parametrize("seq", ["xyz", "ZYX", "zxz", "XYX"])
def test_gimbal_lock_third_angle_is_zero(seq):
    """At gimbal lock (middle angle 0 or pi, or +-pi/2) SciPy and JAX put the whole turn in
    the first angle and set the third to 0. A middle angle of pi comes out as -pi: JAX wraps
    every angle into [-pi, pi) (SciPy into [-pi, pi])."""
    symmetric = seq[0].lower() == seq[2].lower()
    for middle in ([0.0, np.pi] if symmetric else [np.pi / 2, -np.pi / 2]):
        angles = np.array([[0.3, middle, 0.4], [-1.1, middle, 0.2]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            want = SR.from_euler(seq, angles).as_euler(seq)
        got = np.asarray(Rotation.from_euler(seq, angles).as_euler(seq))
        np.testing.assert_allclose(np.angle(np.exp(1j * (got - want))), 0, atol=1e-7)
        assert np.all((got >= -np.pi) & (got < np.pi))
        np.testing.assert_array_equal(got[:, 2], 0.0)
        # jax 0.10.2: Rotation.from_euler(seq, angles).as_euler(seq)[0], x64
        jax_first = {"zxz": {0.0: [0.7, 0.0, 0.0], np.pi: [-0.1, -np.pi, 0.0]},
                     "xyz": {np.pi / 2: [-0.1, np.pi / 2, 0.0]}}
        if middle in jax_first.get(seq, {}):
            np.testing.assert_allclose(got[0], jax_first[seq][middle], atol=1e-12)


# ---- the rest of the API against SciPy ----

@given(st.integers(0, 2**32 - 1), st.sampled_from(DTYPES))
def test_apply_broadcasts_as_scipy(seed, dtype):
    rng = np.random.default_rng(seed)
    q, v = quats(seed, (4,), dtype), rng.standard_normal((4, 3)).astype(dtype)
    r, s = Rotation.from_quat(q), scipy_rot(q)
    for inverse in (False, True):
        close(r.apply(v, inverse=inverse), s.apply(v, inverse=inverse), dtype)     # N by N
        close(r.apply(v[0], inverse=inverse), s.apply(v[0], inverse=inverse), dtype)  # N by 1
        close(r[1].apply(v, inverse=inverse), s[1].apply(v, inverse=inverse), dtype)  # 1 by N
        close(r[1].apply(v[0], inverse=inverse), s[1].apply(v[0], inverse=inverse), dtype)
    assert r[1].apply(v[0]).shape == (3,)


@given(st.integers(0, 2**32 - 1), st.sampled_from(DTYPES))
def test_compose_index_concatenate_mean(seed, dtype):
    q1, q2 = quats(seed, (3,), dtype), quats(seed + 1, (3,), dtype)
    r1, r2, s1, s2 = Rotation.from_quat(q1), Rotation.from_quat(q2), scipy_rot(q1), scipy_rot(q2)
    close((r1 * r2).as_matrix(), (s1 * s2).as_matrix(), dtype)
    close((r1 * r2[0]).as_matrix(), (s1 * s2[0]).as_matrix(), dtype)
    close((r1 * r1.inv()).magnitude(), np.zeros(3), dtype, atol=2e-3 if dtype == np.float32
          else 1e-7)  # arctan2 of a rounding-level vector part
    assert len(r1) == 3 and not r1.single and r1[0].single and len(r1[1:]) == 2
    close(r1[::-1].quat, q1[::-1], dtype)
    both = Rotation.concatenate([r1, r2[0], r2[1:]])
    assert both.quat.shape == (6, 4)
    close(both.as_matrix(), SR.concatenate([s1, s2[0], s2[1:]]).as_matrix(), dtype)
    w = np.random.default_rng(seed).uniform(0.1, 2.0, 3)
    close(r1.mean().as_matrix(), s1.mean().as_matrix(), dtype, atol=1e-4 if dtype == np.float32
          else 1e-9)
    close(r1.mean(w.astype(dtype)).as_matrix(), s1.mean(w).as_matrix(), dtype,
          atol=1e-4 if dtype == np.float32 else 1e-9)


def test_identity_and_random():
    i = Rotation.identity()
    assert i.single and i.quat.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(i.as_matrix()), np.eye(3))
    i3 = Rotation.identity(3, dtype=np.float32)
    assert i3.quat.shape == (3, 4) and i3.quat.dtype == np.float32
    key = pb.random.PRNGKey(7)
    one = Rotation.random(key)
    assert one.single
    r = Rotation.random(key, 4000)
    np.testing.assert_array_equal(np.asarray(r.quat), np.asarray(Rotation.random(key, 4000).quat))
    np.testing.assert_allclose(np.linalg.norm(np.asarray(r.quat), axis=-1), 1.0, atol=1e-12)
    # uniform on SO(3): E[R] = 0 and the angle has density (1 - cos t) / pi
    m = np.asarray(r.as_matrix()).mean(axis=0)
    assert np.abs(m).max() < 0.05, m
    t = np.asarray(r.magnitude())
    assert abs(np.mean(t) - (np.pi / 2 + 2 / np.pi)) < 0.05
    # uniform on the 3-sphere: E[q_i^4] = 1/8 (normalised uniform-cube draws give 0.107)
    assert abs(np.mean(np.asarray(r.quat) ** 4) - 1 / 8) < 0.006
    # SciPy's construction: normalised standard-normal quaternions
    g = np.asarray(pb.random.normal(key, (4000, 4)))
    np.testing.assert_allclose(np.asarray(r.quat), g / np.linalg.norm(g, axis=1, keepdims=True),
                               rtol=1e-13)
    other = Rotation.random(pb.random.PRNGKey(8), 4000)
    assert not np.allclose(np.asarray(other.quat), np.asarray(r.quat))


@given(st.integers(0, 2**32 - 1), st.sampled_from(DTYPES))
def test_slerp_matches_scipy(seed, dtype):
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(0.2, 2.0, 4))
    q = quats(seed, (4,), dtype)
    sl = Slerp.init(times.astype(dtype), Rotation.from_quat(q))
    ss = SSlerp(times, scipy_rot(q))
    t = np.concatenate([times, rng.uniform(times[0], times[-1], 6)])
    got = sl(t.astype(dtype))
    assert got.quat.shape == (10, 4)
    close(got.as_matrix(), ss(t).as_matrix(), dtype, atol=1e-4 if dtype == np.float32 else 1e-9)
    single = sl(dtype(t[5]))
    assert single.single
    close(single.as_matrix(), ss(t[5]).as_matrix(), dtype,
          atol=1e-4 if dtype == np.float32 else 1e-9)


def test_slerp_extrapolates_as_jax():
    """Outside the times JAX extrapolates (SciPy raises): before the first time along the first
    interval (0 -> 90 degrees over [0, 1] gives -90 at t = -1); after the last time JAX's
    clamped gathers start from the last time with the last interval's start rotation and
    rate (90 degrees + 0.5 * 90 at t = 2.5, not 225)."""
    key = Rotation.from_euler("z", np.array([[0.0], [90.0], [180.0]]), degrees=True)
    sl = Slerp.init(np.array([0.0, 1.0, 2.0]), key)
    got = np.asarray(sl(np.array([-1.0, 0.5, 2.5])).as_euler("zyx", degrees=True))
    np.testing.assert_allclose(got[:, 0], [-90.0, 45.0, 135.0], atol=1e-9)


def test_empty_batch():
    r = Rotation.from_quat(np.zeros((0, 4)))
    assert len(r) == 0
    assert r.as_matrix().shape == (0, 3, 3) and r.as_euler("xyz").shape == (0, 3)
    assert r.apply(np.ones(3)).shape == (0, 3) and r.as_rotvec().shape == (0, 3)


# ---- JAX's values ----

@pytest.mark.x32  # JAX's default mode, as its docstring ran
def test_jax_docstring_values():
    r = Rotation.from_euler("z", 90, degrees=True)
    np.testing.assert_allclose(np.asarray(r.as_rotvec()), [0.0, 0.0, 1.5707964], rtol=1e-7)
    np.testing.assert_allclose(np.asarray(r.as_matrix()),
                               [[0.0, -0.99999994, 0.0], [0.99999994, 0.0, 0.0],
                                [0.0, 0.0, 0.99999994]], atol=1e-7)
    r3 = r * Rotation.from_euler("x", 90, degrees=True)
    np.testing.assert_allclose(np.asarray(r3.as_matrix()),
                               [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=1e-7)
    keys = Rotation.from_euler("zxy", jnp.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]]),
                               degrees=True)
    sl = Slerp.init([0, 1, 2], keys)
    got = sl(jnp.array([0, 0.5, 1, 1.5, 2])).as_euler("zxy")
    want = [[1.5707963e+00, 0.0000000e+00, 0.0000000e+00],
            [8.5309029e-01, 3.8711953e-01, 1.7768645e-01],
            [-2.3841858e-07, 7.8539824e-01, 0.0000000e+00],
            [-5.6668043e-02, 3.9213133e-01, -2.8347540e-01],
            [0.0000000e+00, 0.0000000e+00, -5.2359891e-01]]
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, atol=3e-7)


def test_jax_quaternion_signs():
    """Signs JAX chooses where SciPy's representation leaves a choice: from_matrix keeps the
    sign of the largest-diagonal formula (w may be negative), as_rotvec and as_mrp flip to
    w >= 0, from_euler composes elementary quaternions without canonicalising."""
    m = np.array([[-1.0, 0, 0], [0, -1, 0], [0, 0, 1]])  # 180 degrees about z
    np.testing.assert_allclose(np.asarray(Rotation.from_matrix(m).quat), [0, 0, 1, 0])
    q = Rotation.from_euler("xyz", np.array([3.0, 0.2, 0.1])).quat
    # jax 0.10.2, x64: Rotation.from_euler('xyz', [3.0, 0.2, 0.1]).quat
    np.testing.assert_allclose(np.asarray(q), [0.9909183356558432, 0.05665801952863243,
                                               -0.09594115499713958, 0.07527294110078356],
                               rtol=1e-12)
    neg = Rotation(jnp.array([0.0, 0.0, 0.6, -0.8]))
    np.testing.assert_allclose(np.asarray(neg.as_rotvec()), [0, 0, -2 * np.arctan2(0.6, 0.8)],
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(neg.as_mrp()), [0, 0, -0.6 / 1.8], rtol=1e-12)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=3)  # JAX compiles per sequence: few examples keep it quick
def test_jax_oracle(seed):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.spatial.transform import Rotation as JR, Slerp as JS
    q = quats(seed, (5,), np.float64)
    r, j = Rotation.from_quat(q), JR.from_quat(q)
    m = np.asarray(j.as_matrix())
    np.testing.assert_allclose(np.asarray(Rotation.from_matrix(m).quat),
                               np.asarray(JR.from_matrix(m).quat), atol=1e-12)
    for seq in ALL_SEQS3:
        np.testing.assert_allclose(np.asarray(r.as_euler(seq)), np.asarray(j.as_euler(seq)),
                                   atol=1e-9)
        a = np.asarray(j.as_euler(seq))
        np.testing.assert_allclose(np.asarray(Rotation.from_euler(seq, a).quat),
                                   np.asarray(JR.from_euler(seq, a).quat), atol=1e-12)
    np.testing.assert_allclose(np.asarray(r.as_rotvec()), np.asarray(j.as_rotvec()), atol=1e-12)
    rv = np.asarray(j.as_rotvec())
    np.testing.assert_allclose(np.asarray(Rotation.from_rotvec(rv).quat),
                               np.asarray(JR.from_rotvec(rv).quat), atol=1e-12)
    t = np.array([0.0, 1.0, 2.5, 3.0, 4.0])
    st_ = np.linspace(-1, 5, 9)
    np.testing.assert_allclose(np.asarray(Slerp.init(t, r)(st_).quat),
                               np.asarray(JS.init(t, j)(st_).quat), atol=1e-9)


# ---- transformations ----

def test_grads_apply_and_matrix():
    q = quats(3, (), np.float64)
    v = np.array([0.3, -1.2, 0.7])
    check_grads(lambda q, v: Rotation.from_quat(q).apply(v), (q, v), order=2)
    check_grads(lambda q, v: Rotation.from_quat(q).apply(v, inverse=True), (q, v), order=2)
    check_grads(lambda q: Rotation.from_quat(q).as_matrix(), (q,), order=2)
    check_grads(lambda q: Rotation(q).as_euler("ZXY"), (q,), order=2)
    check_grads(lambda q: Rotation(q).as_rotvec(), (q,), order=2)
    check_grads(lambda a: Rotation.from_euler("xyz", a).as_matrix(), (np.array([.3, .2, -.5]),),
                order=2)
    check_grads(lambda m: Rotation.from_matrix(m).quat, (np.asarray(Rotation(q).as_matrix()),),
                order=2)


def test_grads_at_identity_are_finite():
    """JAX's from_rotvec/as_rotvec take NaN derivatives at the identity; here they are the
    derivatives of the smooth maps (checked against finite differences around 0)."""
    check_grads(lambda v: Rotation.from_rotvec(v).quat, (np.zeros(3),), order=2)
    check_grads(lambda v: Rotation.from_rotvec(v).as_matrix(), (np.zeros(3),), order=2)
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    check_grads(lambda q: Rotation(q).as_rotvec(), (ident,), order=2)
    for jac in (pb.jacfwd, pb.jacrev):
        g = jac(lambda q: Rotation(q).as_rotvec())(jnp.asarray(ident))
        np.testing.assert_allclose(np.asarray(g), np.hstack([2 * np.eye(3), np.zeros((3, 1))]))


def test_vmap_matches_loop():
    q, v = quats(5, (), np.float64), np.array([0.3, -1.2, 0.7])
    check_vmap(lambda q, v: Rotation.from_quat(q).apply(v), (q, v))
    check_vmap(lambda q: Rotation.from_quat(q).as_euler("zyz"), (q,))
    check_vmap(lambda m: Rotation.from_matrix(m).quat, (np.asarray(Rotation(q).as_matrix()),))
    # a Rotation (a pytree) mapped over directly, and returned
    rs = Rotation.from_quat(quats(6, (4,), np.float64))
    got = pb.vmap(lambda r: (r * r).inv())(rs)
    assert isinstance(got, Rotation)
    want = np.stack([np.asarray((rs[i] * rs[i]).inv().quat) for i in range(4)])
    np.testing.assert_allclose(np.asarray(got.quat), want, atol=1e-14)
    got = pb.vmap(lambda r: r.as_rotvec(), in_axes=(Rotation(1),))(Rotation(rs.quat.T))
    np.testing.assert_allclose(np.asarray(got), np.asarray(rs.as_rotvec()), atol=1e-14)


def test_jit_equals_eager():
    rs = Rotation.from_quat(quats(9, (5,), np.float64))
    t = np.array([0.0, 0.5, 1.5, 2.0, 3.0])

    def f(r, v):
        return r.apply(v), r.as_euler("XZY"), (r * r[0].inv()).as_mrp(), r.mean()

    v = np.arange(15.0).reshape(5, 3)
    for g, e in zip(pb.tree_util.tree_leaves(pb.jit(f)(rs, v)),
                    pb.tree_util.tree_leaves(f(rs, v))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-13, atol=1e-13)
    sl = Slerp.init(t, rs)
    ts = np.linspace(0, 3, 7)
    np.testing.assert_allclose(np.asarray(pb.jit(lambda s, ts: s(ts).quat)(sl, ts)),
                               np.asarray(sl(ts).quat), atol=1e-14)
    # a Rotation passes through tree_map and flatten/unflatten whole
    leaves, tree = pb.tree_util.tree_flatten(sl)
    assert len(leaves) == 4
    assert isinstance(pb.tree_util.tree_unflatten(tree, leaves).rotations, Rotation)
    doubled = pb.tree_util.tree_map(lambda a, b: a + b, rs, rs)
    np.testing.assert_allclose(np.asarray(doubled.quat), 2 * np.asarray(rs.quat))


# ---- errors ----

@pytest.mark.parametrize("seq", ["", "xyzx", "xXy", "xxy", "XYY", "abc", "x y"])
def test_bad_euler_sequence_raises(seq):
    with pytest.raises(ValueError, match="seq"):
        Rotation.from_euler(seq, np.zeros(max(len(seq), 1)))
    with pytest.raises(ValueError, match="seq"):
        Rotation.identity().as_euler(seq)


def test_errors_name_the_argument():
    r = Rotation.from_quat(quats(1, (3,), np.float64))
    with pytest.raises(ValueError, match="3 axes"):
        r.as_euler("xy")
    with pytest.raises(ValueError, match="angles"):
        Rotation.from_euler("xyz", np.zeros((4, 2)))
    with pytest.raises(ValueError, match="quat"):
        Rotation.from_quat(np.zeros(3))
    with pytest.raises(ValueError, match="matrix"):
        Rotation.from_matrix(np.eye(4))
    with pytest.raises(ValueError, match="rotvec"):
        Rotation.from_rotvec(np.zeros(4))
    with pytest.raises(ValueError, match="vectors"):
        r.apply(np.zeros(4))
    with pytest.raises(ValueError, match="weights"):
        r.mean(np.ones(2))
    with pytest.raises(ValueError, match="weights"):
        r.mean(np.ones((3, 1)))
    with pytest.raises(TypeError, match="subscriptable"):
        r[0][0]
    with pytest.raises(TypeError, match="len"):
        len(r[0])
    with pytest.raises(TypeError, match="rotations"):
        Slerp.init([0, 1], r.quat)
    with pytest.raises(ValueError, match="at least 2"):
        Slerp.init([0], r[:1])
    with pytest.raises(ValueError, match="times"):
        Slerp.init([0, 1], r)
    with pytest.raises(ValueError, match="times"):
        Slerp.init([0, 1, 2], r)(np.zeros((2, 2)))


def test_module_exports():
    assert pb.scipy.spatial.transform is transform
    assert set(transform.__all__) == {"Rotation", "Slerp"}
