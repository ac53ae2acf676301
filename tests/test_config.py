"""JAX's config switches do what JAX's do: debug_nans/debug_infs, disable_jit, numpy rank and
dtype promotion, matmul precision values, the threefry scheme and the PRNG implementation.
Expected values and messages were recorded from JAX 0.10.2 (never imported here)."""
import re
import warnings

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax, random
from pullback.config import config
from pullback.dtypes import TypePromotionError

_HERE = __file__

# JAX 0.10.2's behaviour was recorded in its default (32-bit) mode
pytestmark = pytest.mark.x32


def _line_of(fn, text):
    """The line number in this file of ``text`` inside function ``fn``."""
    import inspect
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(src) if text in line)


def _raises_at(kind, prim, line, doing="created"):
    return pytest.raises(FloatingPointError, match=re.escape(
        f"invalid value ({kind}) encountered in {prim} ({doing} at {_HERE}:{line} "))


# ---- jax_debug_nans / jax_debug_infs ----

def _log_of_shifted(x):
    y = jnp.sin(x)
    return jnp.log(y - 2.0)  # nan: sin(x) - 2 < 0


def _sqrt_times_zero(x):
    return (jnp.sqrt(x) * 0.0).sum()  # backward: 0 * (0.5 / sqrt(0)) = nan


def _scan_body(c, x):
    return c + jnp.log(x), c  # nan at x = -1


def test_debug_nans_off_by_default_and_eager_op_names_itself_and_line():
    x = jnp.array([0.0, 1.0])
    assert not config.jax_debug_nans and not config.jax_debug_infs
    assert np.isnan(np.asarray(jnp.log(x - 1.0))[0])  # off: nothing raised
    with pb.debug_nans(True):
        with pytest.raises(FloatingPointError,
                           match=r"^invalid value \(nan\) encountered in log \(created at "):
            jnp.log(x - 1.0)
        line = _line_of(_log_of_shifted, "jnp.log(y - 2.0)")
        with _raises_at("nan", "log", line):
            _log_of_shifted(x)
        z = jnp.zeros(3)
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in div"):
            z / z  # the short binary path of two Arrays of one aval
        jnp.log(x)  # -inf is not a nan
        jnp.array([1, 2]) // jnp.array([1, 1])  # integers are never checked
    assert not config.jax_debug_nans


def test_debug_infs_raises_on_inf_only():
    x = jnp.array([0.0, 1.0])
    with pb.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered in log"):
            jnp.log(x)
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
            1.0 / x
        jnp.log(x - 1.0 + 2.0)  # finite
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in log"):
            jnp.log(jnp.zeros(2, jnp.bfloat16))  # bfloat16 (an ml_dtypes float) too


def test_debug_nans_complex_and_float16_results():
    with pb.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in mul"):
            jnp.array([np.inf + 0j]) * jnp.array([0j])
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in sub"):
            jnp.full(2, np.inf, jnp.float16) - jnp.full(2, np.inf, jnp.float16)


def test_debug_nans_inside_jit_reruns_op_by_op(capsys):
    x = jnp.array([0.0, 1.0])
    f = pb.jit(_log_of_shifted)
    assert np.isnan(np.asarray(f(x))).all()  # off: compiled, fast path and all
    line = _line_of(_log_of_shifted, "jnp.log(y - 2.0)")
    with pb.debug_nans(True):
        for _ in range(3):  # the fast path must not skip the check on later calls
            with _raises_at("nan", "log", line):
                f(x)
        assert "Calling the de-optimized version" in capsys.readouterr().out
        d = x + 0.0  # an Array alone holding its buffer: donation would take it
        with _raises_at("nan", "log", line):
            pb.jit(_log_of_shifted, donate_argnums=0)(d)
        compiled = pb.jit(_log_of_shifted).lower(x).compile()
        with _raises_at("nan", "log", line):
            compiled(x)
        g = pb.jit(lambda x: jnp.log(x) + 1.0)
        np.testing.assert_allclose(np.asarray(g(x + 1.0)), np.log([1.0, 2.0]) + 1.0, rtol=1e-6)
        g(x + 1.0)  # a clean call must not install a path that skips the check
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in log"):
            g(x - 1.0)


def test_debug_nans_jit_not_reproduced_by_the_deoptimized_function():
    xn = jnp.array([np.nan, 1.0])
    with pb.debug_nans(True):
        with pytest.raises(FloatingPointError, match=re.escape(
                "invalid value (nan) encountered in jit(<lambda>). Because "
                "jax_config.debug_nans.value and/or config.jax_debug_infs is set, the "
                "de-optimized function")):
            pb.jit(lambda x: x)(xn)  # no primitive makes the nan: it came in


def test_debug_nans_in_the_backward_pass_names_the_forward_line():
    x = jnp.array([0.0, 1.0])
    line = _line_of(_sqrt_times_zero, "jnp.sqrt(x) * 0.0")
    assert np.isnan(np.asarray(pb.grad(_sqrt_times_zero)(x))[0])
    with pb.debug_nans(True):
        with _raises_at("nan", "mul", line, "while transposing 'mul' created"):
            pb.grad(_sqrt_times_zero)(x)
        with _raises_at("nan", "mul", line, "while transposing 'mul' created"):
            pb.jit(pb.grad(_sqrt_times_zero))(x)


def test_debug_nans_in_scan_body_and_under_vmap():
    xs = jnp.array([1.0, -1.0])
    line = _line_of(_scan_body, "jnp.log(x)")
    with pb.debug_nans(True):
        with _raises_at("nan", "log", line):
            lax.scan(_scan_body, 0.0, xs)
        with _raises_at("nan", "log", line):
            pb.jit(lambda xs: lax.scan(_scan_body, 0.0, xs))(xs)
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in log"):
            pb.vmap(jnp.log)(jnp.array([-1.0, 1.0]))
        with _raises_at("nan", "log", line):
            pb.vmap(lambda x: lax.scan(_scan_body, 0.0, x))(jnp.array([[1.0, -1.0]]))


# ---- jax_disable_jit ----

def test_disable_jit_runs_the_function_op_by_op():
    seen = []

    def f(x, n):
        seen.append(type(x).__name__)
        return x * n

    jf = pb.jit(f, static_argnums=1)
    x = jnp.ones(2)
    jf(x, 2)
    assert seen == ["JaxprTracer"]
    with pb.disable_jit():
        assert config.jax_disable_jit
        np.testing.assert_array_equal(np.asarray(jf(x, 3)), [3.0, 3.0])
        assert seen[-1] == "Array"  # the function itself, on the concrete Array
        jf(x, np.ones(2))  # static arguments are not hashed (JAX: no error)
        assert seen[-1] == "Array"
        y = jnp.ones(2) + 0.0
        pb.jit(lambda a: a + 1, donate_argnums=0)(y)
        assert not y.is_deleted()  # nothing donated
        a = np.ones(2, np.float32)
        assert pb.jit(lambda v: v)(a) is a  # as JAX: the function's own result
        assert "mul" in jf.lower(x, 3).as_text()  # lower still traces
        assert seen[-1] == "JaxprTracer"
    assert not config.jax_disable_jit
    n = len(seen)
    jf(x, 2)
    assert len(seen) == n  # compiled again (cached), not run


# ---- jax_numpy_rank_promotion ----

_RANK_URL = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"


def test_rank_promotion_warn_and_raise_with_jax_wording():
    a, b = jnp.ones((2, 3)), jnp.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a + b  # "allow" (the default)
    with pb.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning) as rec:
            a + b
        assert str(rec[0].message) == (
            "Following NumPy automatic rank promotion for add on shapes (2, 3) (3,). Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
            f"information, see {_RANK_URL}.")
    with pb.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError) as err:
            jnp.maximum(a, b)
        assert str(err.value) == (
            "Operands could not be broadcast together for maximum on shapes (2, 3) (3,) and "
            "with the config option jax_numpy_rank_promotion='raise'. For more information, "
            f"see {_RANK_URL}.")
        for fn, name in [(lambda: a * np.ones(3), "multiply"),
                         (lambda: jnp.arctan2(a, b), "arctan2"),
                         (lambda: jnp.ones((0,)) + jnp.ones((2, 0)), "add"),
                         (lambda: jnp.isclose(a, b), "isclose"),
                         (lambda: jnp.logical_and(a > 0, b > 0), "logical_and"),
                         (lambda: jnp.divmod(a, b), "divmod"),
                         (lambda: pb.jit(lambda u, v: u - v)(a, b), "subtract")]:
            with pytest.raises(ValueError, match=f"broadcast together for {name} on shapes"):
                fn()
        # as JAX: 0-d operands and scalars do not count; where/heaviside/matmul/dot do not check
        a + 1.0, a + jnp.ones(()), a * jnp.float32(2)
        jnp.where(b > 0, a, 0.0), jnp.heaviside(a, b), a @ b, jnp.dot(a, b)
        jnp.broadcast_arrays(a, b), jnp.ones((2, 3)) + jnp.ones((1, 3))


# ---- jax_numpy_dtype_promotion="strict" ----

def _strict_msg(*names):
    return re.escape(f"Input dtypes {names} have no available implicit dtype promotion path "
                     "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to "
                     "the desired output type, or set jax_numpy_dtype_promotion=standard.")


def test_strict_dtype_promotion_refuses_mixed_dtypes():
    f32, f16 = jnp.ones(2, jnp.float32), jnp.ones(2, jnp.float16)
    i32, i8, u8 = jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int8), jnp.ones(2, jnp.uint8)
    b, c64, bf = jnp.ones(2, bool), jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.bfloat16)
    assert (f32 + f16).dtype == np.float32  # standard
    assert issubclass(TypePromotionError, ValueError)
    with pb.numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError, match=_strict_msg("float32", "float16")):
            f32 + f16
        for x, y in [(f32, i32), (i32, i8), (i8, u8), (f32, c64), (f32, b), (i32, b), (bf, f16)]:
            with pytest.raises(TypePromotionError, match="no available implicit dtype promotion"):
                x + y
        with pytest.raises(TypePromotionError, match=_strict_msg("int32", "<class 'float'>")):
            i32 + 1.0
        with pytest.raises(TypePromotionError, match=_strict_msg("float32", "<class 'complex'>")):
            f32 + 1j
        for bad in [lambda: i32 + True, lambda: jnp.asarray(1.0) + i32,
                    lambda: jnp.promote_types(jnp.float32, jnp.float16),
                    lambda: jnp.result_type(f32, f16), lambda: jnp.where(b, f32, i32),
                    lambda: jnp.concatenate([f32, i32]), lambda: jnp.matmul(f32, f16),
                    lambda: pb.jit(lambda u, v: u * v)(f32, i32)]:
            with pytest.raises(TypePromotionError):
                bad()
        # weak Python scalars still adapt, as in JAX's strict lattice
        for r, dt in [(f32 + 1, np.float32), (f32 + 1.0, np.float32), (i32 + 1, np.int32),
                      (u8 + 1, np.uint8), (f16 + 2.0, np.float16), (c64 + 1.0, np.complex64),
                      (bf + 1.0, jnp.bfloat16), (b | True, np.bool_), (b & b, np.bool_),
                      (jnp.asarray(1) + f32, np.float32), (jnp.asarray(1.0) + c64, np.complex64),
                      (f32 + np.ones(2, np.float32), np.float32)]:
            assert r.dtype == dt and not r.aval.weak_type
        r = jnp.asarray(1.0) + jnp.asarray(1)  # weak with weak: as standard
        assert r.dtype == np.float32 and r.aval.weak_type
    assert (f32 + i32).dtype == np.float32


# ---- jax_default_matmul_precision and precision= ----

def test_precision_values_as_jax_accepts():
    a = jnp.ones((2, 2))
    P = lax.Precision
    assert P("highest") is P.HIGHEST and P("fastest") is P.DEFAULT and P(1) is P.HIGH
    assert repr(P.HIGHEST) == "Precision.HIGHEST" and str(P.HIGH) == "HIGH"
    good = [None, "default", "high", "highest", "fastest", "bfloat16", "tensorfloat32", "float32",
            "DEFAULT", "F32_F32_F32", P.HIGHEST, (P.HIGH, P.DEFAULT), ("highest", "default"),
            lax.DotAlgorithmPreset.F32_F32_F32]
    for p in good:
        np.testing.assert_array_equal(np.asarray(jnp.dot(a, a, precision=p)), 2 * np.ones((2, 2)))
    for p in ["HIGHEST", "bogus", 3, (None, None), (P.HIGH,)]:
        with pytest.raises(ValueError, match=r"dot: Precision argument must be one of:"):
            jnp.dot(a, a, precision=p)
    for fn, name in [(lambda p: jnp.matmul(a, a, precision=p), "matmul"),
                     (lambda p: jnp.einsum("ij,jk", a, a, precision=p), "einsum"),
                     (lambda p: jnp.tensordot(a, a, precision=p), "tensordot"),
                     (lambda p: jnp.inner(a, a, precision=p), "inner"),
                     (lambda p: jnp.vdot(a, a, precision=p), "vdot"),
                     (lambda p: lax.dot_general(a, a, (((1,), (0,)), ((), ())), precision=p),
                      "dot_general")]:
        fn("high")
        with pytest.raises(ValueError, match=f"{name}: Precision argument"):
            fn("bogus")


def test_default_matmul_precision_has_no_effect_on_cpu_float32():
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((16, 32)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal((32, 8)).astype(np.float32))
    ref = np.asarray(a @ b)
    for p in ["bfloat16", "tensorfloat32", "float32", "highest"]:
        with pb.default_matmul_precision(p):
            np.testing.assert_array_equal(np.asarray(a @ b), ref)
            np.testing.assert_array_equal(np.asarray(pb.jit(jnp.matmul)(a, b)), ref)


# ---- jax_threefry_partitionable ----

# JAX 0.10.2, key(42): {flag: {name: value}}
_JAX_RANDOM = {
    False: {
        ("bits", (), "uint32"): 1832780943,
        ("bits", (1,), "uint32"): [1832780943],
        ("bits", (5,), "uint32"): [3134548294, 3733159049, 843694964, 894150801, 801545058],
        ("bits", (2, 3), "uint32"): [[3134548294, 3733159049, 3746501087],
                                     [894150801, 801545058, 2363201431]],
        ("bits", (7,), "uint8"): [45, 179, 215, 3, 244, 131, 208],
        ("bits", (3,), "uint16"): [45869, 983, 33780],
        ("bits", (5,), "uint16"): [8426, 37627, 63599, 6563, 55571],
        ("bits", (0,), "uint32"): [],
        "split3": [[3134548294, 3733159049], [3746501087, 894150801], [801545058, 2363201431]],
        "split2x2": [[[2954079971, 2575172198], [1139032965, 1035738655]],
                     [[3276725750, 1223413151], [173471767, 13772463]]],
        "split1": [[64467757, 2916123636]],
        "fold_in7": [2547012911, 1371500959],
        "uniform5": [0.7298188209533691, 0.8691937923431396, 0.19643795490264893,
                     0.20818567276000977, 0.1866241693496704],
        "normal3": [0.18693546950817108, -1.2806504964828491, -1.559313178062439],
        "randint5": [12, 43, 7, 29, 84],
        "perm6": [3, 0, 2, 1, 5, 4],
        "vmap_bits": [[3164236999, 3572326544, 3923418436], [1224796891, 2628283514, 754422081]],
        "batched_split": [[[3754883976, 518794995], [2307307231, 1768497676],
                           [2692899483, 2533649164]],
                          [[1245536116, 3554031723], [2395711293, 1211085833],
                           [3735526216, 3692299482]]],
    },
    True: {
        ("bits", (), "uint32"): 2098992034,
        ("bits", (1,), "uint32"): [2098992034],
        ("bits", (5,), "uint32"): [2098992034, 2919706841, 2646866425, 2409546199, 1935504149],
        ("bits", (2, 3), "uint32"): [[2098992034, 2919706841, 2646866425],
                                     [2409546199, 1935504149, 2516274904]],
        ("bits", (7,), "uint8"): [162, 217, 249, 215, 21, 216, 153],
        ("bits", (3,), "uint16"): [5026, 12505, 63993],
        ("bits", (5,), "uint16"): [5026, 12505, 63993, 49623, 29461],
        ("bits", (0,), "uint32"): [],
        "split3": [[1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]],
        "split2x2": [[[1832780943, 270669613], [64467757, 2916123636]],
                     [[2465931498, 255383827], [3134548294, 894150801]]],
        "split1": [[1832780943, 270669613]],
        "fold_in7": [2547012911, 1371500959],
        "uniform5": [0.48870956897735596, 0.6797971725463867, 0.6162714958190918,
                     0.5610160827636719, 0.4506446123123169],
        "normal3": [-0.02830461598932743, 0.4671318531036377, 0.2957029640674591],
        "randint5": [44, 14, 71, 69, 9],
        "perm6": [4, 2, 5, 3, 0, 1],
        "vmap_bits": [[2277453133, 1345880512, 3872043189], [3125294276, 3383865362, 780371127]],
        "batched_split": [[[1012194634, 3152801799], [1705926158, 899080142],
                           [4095997477, 317277840]],
                          [[3187376881, 129218101], [2350016172, 1168365246],
                           [257214496, 567757975]]],
    },
}
# JAX 0.10.2 under enable_x64, key(42), bits(..., (3,), uint64), partitionable=False
_JAX_BITS64_ORIGINAL = [13462782411356743825, 16033796027023006562, 16091099645456652183]


def _draws(k):
    kd = random.key_data
    out = {("bits", s, d): random.bits(k, s, getattr(jnp, d)) for s, d in
           [((), "uint32"), ((1,), "uint32"), ((5,), "uint32"), ((2, 3), "uint32"),
            ((7,), "uint8"), ((3,), "uint16"), ((5,), "uint16"), ((0,), "uint32")]}
    ks = random.split(k, 2)
    out.update(split3=kd(random.split(k, 3)), split2x2=kd(random.split(k, (2, 2))),
               split1=kd(random.split(k, 1)), fold_in7=kd(random.fold_in(k, 7)),
               uniform5=random.uniform(k, (5,)), normal3=random.normal(k, (3,)),
               randint5=random.randint(k, (5,), 0, 100), perm6=random.permutation(k, 6),
               vmap_bits=pb.vmap(lambda kk: random.bits(kk, (3,)))(ks),
               batched_split=kd(pb.vmap(lambda kk: random.split(kk, 3))(ks)))
    return out


@pytest.mark.parametrize("flag", [False, True])
def test_threefry_partitionable_matches_jax_bit_for_bit(flag):
    with pb.threefry_partitionable(flag):
        got = _draws(random.key(42))
        jitted = pb.jit(lambda kd: random.bits(random.wrap_key_data(kd), (5,)))(
            random.key_data(random.key(42)))
    for name, want in _JAX_RANDOM[flag].items():
        g = np.asarray(got[name])
        if g.dtype.kind == "f":
            np.testing.assert_array_equal(g, np.asarray(want, np.float32), err_msg=str(name))
        else:
            assert g.tolist() == want, name
    assert np.asarray(jitted).tolist() == _JAX_RANDOM[flag][("bits", (5,), "uint32")]


def test_threefry_original_64_bit_draws_and_jit_cache_follow_the_flag():
    f = pb.jit(lambda kd: random.bits(kd, (5,)))
    kd = random.PRNGKey(42)
    assert np.asarray(f(kd)).tolist() == _JAX_RANDOM[True][("bits", (5,), "uint32")]
    with pb.threefry_partitionable(False):
        assert np.asarray(f(kd)).tolist() == _JAX_RANDOM[False][("bits", (5,), "uint32")]
        with pb.enable_x64():
            got = random.bits(random.key(42), (3,), jnp.uint64)
        assert np.asarray(got).tolist() == _JAX_BITS64_ORIGINAL
    assert np.asarray(f(kd)).tolist() == _JAX_RANDOM[True][("bits", (5,), "uint32")]


# ---- jax_default_prng_impl ----

def test_prng_impl_arguments():
    assert np.asarray(random.key_data(random.key(3, impl="threefry2x32"))).tolist() == [0, 3]
    assert np.asarray(random.PRNGKey(3, impl="threefry2x32")).tolist() == [0, 3]
    k = random.key(1)
    random.key(0, impl=k.dtype)  # an implementation object, as JAX's key_impl gives
    assert random.key_impl(k) == "threefry2x32"
    for impl in ["rbg", "unsafe_rbg"]:
        for fn in (random.key, random.PRNGKey):
            with pytest.raises(ValueError, match=f"{fn.__name__}: argument 'impl': the PRNG "
                                                 f"implementation \"{impl}\" is not supported on "
                                                 "this backend"):
                fn(0, impl=impl)
    with pytest.raises(ValueError, match="argument 'impl': unrecognized PRNG implementation "
                                         "\"bogus\""):
        random.key(0, impl="bogus")
    with pytest.raises(ValueError, match="jax_default_prng_impl"):
        config.update("jax_default_prng_impl", "rbg")
    assert config.jax_default_prng_impl == "threefry2x32"


def test_disable_jit_runs_control_flow_in_python():
    seen = []

    def body(c, x):
        seen.append(type(c).__name__)
        return c + x, c * 2

    with pb.disable_jit():
        c, ys = lax.scan(body, 0.0, jnp.arange(3.0), reverse=True)
        assert seen == ["float", "Array", "Array"]  # the body itself, init as given
        assert float(c) == 3.0 and np.asarray(ys).tolist() == [6.0, 4.0, 0.0]
        with pytest.raises(ValueError, match="zero-length scan is not supported in "
                                             "disable_jit"):
            lax.scan(body, 0.0, jnp.ones(0))
        kinds = []
        assert lax.fori_loop(0, 3, lambda i, v: kinds.append(type(i)) or v + i, 0.0) == 3.0
        assert kinds == [int, int, int]  # Python ints, as JAX
        assert lax.fori_loop(2, 2, lambda i, v: v + 1, 0.5) == 0.5
        assert float(lax.while_loop(lambda v: v < 3, lambda v: v + 1, 0.0)) == 3.0
        assert lax.cond(True, lambda v: ("t", v), lambda v: ("f", v), 1.0) == ("t", 1.0)
        assert lax.switch(7, [lambda v: v, lambda v: v * 2], 1.5) == 3.0  # clamped index
        # traced predicates (under vmap) fall back to the primitives
        out = pb.vmap(lambda x: lax.while_loop(lambda v: v < 2, lambda v: v + 1, x))(
            jnp.array([0.0, 5.0]))
        assert np.asarray(out).tolist() == [2.0, 5.0]
        out = pb.vmap(lambda x: lax.cond(x > 0, lambda: x, lambda: -x))(jnp.array([-1.0, 2.0]))
        assert np.asarray(out).tolist() == [1.0, 2.0]
