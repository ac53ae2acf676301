/* Special functions of lax (igamma, igammac, igamma_grad_a, random_gamma_grad, betainc,
 * zeta, polygamma, bessel_i0e, bessel_i1e): scalar functions for elementwise.c's rows.
 *
 * The algorithms are XLA's (as JAX lowers these ops): the incomplete gamma function is a power
 * series below max(1, a) and a continued fraction above, each carrying its derivative in a for
 * the gradient modes; the incomplete beta function is the Lentz continued fraction of DLMF
 * 8.17.22 with the symmetry 8.17.4; zeta is the Euler-Maclaurin sum. Every function computes in
 * double (float32 and the half types round once at the end), so loops run per element until
 * that element converges. `logmax` is log(max) of the operand's dtype: XLA's underflow test for
 * the exp(a log x - x - lgamma a) prefactor uses the operand type's range.
 */
#ifndef PB_SPECIAL_MATH_H
#define PB_SPECIAL_MATH_H

#include <float.h>
#include <math.h>

#define PB_SP_EPS (DBL_EPSILON / 2)
#define PB_SP_LOGMAX_F 88.72283905206835 /* log(FLT_MAX) */
#define PB_SP_LOGMAX_D 709.782712893384  /* log(DBL_MAX) */

enum { PB_IG_VALUE, PB_IG_DERIVATIVE, PB_IG_SAMPLE_DERIVATIVE };

static inline double pb_sp_lgamma(double x) { int s; return lgamma_r(x, &s); }

/* sum_{n>=0} x^n / ((a+1)...(a+n)) and its a-derivative; converges for x <= max(1, a). */
static double pb_igamma_series(double ax, double x, double a, int enabled, int mode) {
  double r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
  while (enabled) {
    r += 1;
    dc_da = dc_da * (x / r) - (c * x) / (r * r);
    dans_da += dc_da;
    c *= x / r;
    ans += c;
    enabled = mode == PB_IG_VALUE ? c / ans > PB_SP_EPS : fabs(dc_da / dans_da) > PB_SP_EPS;
  }
  if (mode == PB_IG_VALUE) return ans * ax / a;
  const double dlogax_da = log(x) - pb_digamma(a + 1);
  if (mode == PB_IG_DERIVATIVE) return ax * (ans * dlogax_da + dans_da) / a;
  return -(dans_da + ans * dlogax_da) * x / a;
}

/* Legendre's continued fraction of Q(a, x) by its three-term recurrence (rescaled when it
 * grows), with the a-derivatives of the recurrence's numerators and denominators. */
static double pb_igammac_cf(double ax, double x, double a, int enabled, int mode) {
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double ans = pkm1 / qkm1;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double dans = (dpkm1 - ans * dqkm1) / qkm1;
  while (enabled && c < 2000) {
    c += 1;
    y += 1;
    z += 2;
    const double yc = y * c;
    const double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    const int nonzero = qk != 0;
    const double r = pk / qk;
    const double t = nonzero ? fabs((ans - r) / r) : 1;
    if (nonzero) ans = r;
    const double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    const double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    const double dans_new = nonzero ? (dpk - ans * dqk) / qk : dans;
    const double grad_change = nonzero ? fabs(dans_new - dans) : 1;
    pkm2 = pkm1; pkm1 = pk; qkm2 = qkm1; qkm1 = qk;
    dpkm2 = dpkm1; dqkm2 = dqkm1; dpkm1 = dpk; dqkm1 = dqk;
    if (fabs(pk) > 1 / PB_SP_EPS) {
      pkm2 *= PB_SP_EPS; pkm1 *= PB_SP_EPS; qkm2 *= PB_SP_EPS; qkm1 *= PB_SP_EPS;
      dpkm2 *= PB_SP_EPS; dqkm2 *= PB_SP_EPS; dpkm1 *= PB_SP_EPS; dqkm1 *= PB_SP_EPS;
    }
    dans = dans_new;
    enabled = mode == PB_IG_VALUE ? t > PB_SP_EPS : grad_change > PB_SP_EPS;
  }
  if (mode == PB_IG_VALUE) return ans * ax;
  const double dlogax_da = log(x) - pb_digamma(a);
  if (mode == PB_IG_DERIVATIVE) return ax * (ans * dlogax_da + dans);
  return -(dans + ans * dlogax_da) * x;
}

/* log of x^a e^-x / Gamma(a), and whether it underflows the dtype (XLA's test). */
static inline double pb_igamma_logax(double a, double x, double logmax, int *underflow) {
  const double l = a * log(x) - x - pb_sp_lgamma(a);
  *underflow = l < -logmax;
  return l;
}

/* P(a, x), the regularized lower incomplete gamma function. */
static double pb_igamma(double a, double x, double logmax) {
  if (isnan(a) || isnan(x) || x < 0 || a < 0 || (a == 0 && x == 0)) return NAN;
  if (x == 0) return 0;
  if (x == INFINITY) return 1;
  int underflow;
  const double ax = exp(pb_igamma_logax(a, x, logmax, &underflow));
  if (x >= 1 && x > a) return 1 - pb_igammac_cf(ax, x, a, !underflow, PB_IG_VALUE);
  return pb_igamma_series(ax, x, a, !underflow, PB_IG_VALUE);
}

/* Q(a, x) = 1 - P(a, x). */
static double pb_igammac(double a, double x, double logmax) {
  if (isnan(a) || isnan(x) || x < 0 || a < 0 || (a == 0 && x == 0)) return NAN;
  if (x == INFINITY || a == 0) return 0;
  int underflow;
  const double ax = exp(pb_igamma_logax(a, x, logmax, &underflow));
  if (x < 1 || x < a) return 1 - pb_igamma_series(ax, x, a, !underflow, PB_IG_VALUE);
  return pb_igammac_cf(ax, x, a, !underflow, PB_IG_VALUE);
}

/* dP(a, x)/da (mode PB_IG_DERIVATIVE), or the derivative of a Gamma(a, 1) sample x with
 * respect to a at fixed P (PB_IG_SAMPLE_DERIVATIVE: -dP/da / dP/dx). */
static double pb_igamma_grad(double a, double x, double logmax, int mode) {
  if (isnan(a) || isnan(x) || x < 0 || a <= 0) return NAN;
  if (x == 0) return 0;
  int underflow;
  const double ax = exp(pb_igamma_logax(a, x, logmax, &underflow));
  if (x > 1 && x > a) return -pb_igammac_cf(ax, x, a, !underflow, mode);
  return pb_igamma_series(ax, x, a, !underflow, mode);
}

/* I_x(a, b), the regularized incomplete beta function: the continued fraction of DLMF 8.17.22
 * by the modified Lentz method, on the side of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a)
 * where it converges fast. */
static double pb_betainc(double a, double b, double x, int is_double) {
  const int a_zero = a == 0 || b == INFINITY, b_zero = b == 0 || a == INFINITY;
  if (isnan(a) || isnan(b) || isnan(x) || a < 0 || b < 0 || x < 0 || x > 1 ||
      (a_zero && b_zero))
    return NAN;
  if ((b_zero && x != 1) || (a_zero && x == 0)) return 0;
  if ((a_zero && x != 0) || (b_zero && x == 1)) return 1;
  const int direct = x < (a + 1) / (a + b + 2);
  if (!direct) { const double t = a; a = b; b = t; x = 1 - x; }
  const double small = PB_SP_EPS;
  const int max_iter = is_double ? 600 : 200;
  /* partial denominators: 0 for the first term, then 1; partial numerators below */
  double h = small, cc = small, d = 0;
  for (int n = 1; n < max_iter; ++n) {
    double num;
    if (n == 1) {
      num = 1;
    } else {
      const double m = (double)((n - 1) / 2);
      if (n % 2 == 0)
        num = m == 0 ? -(a + b) * x / (a + 1)
                     : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      else
        num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    }
    cc = 1 + num / cc;
    if (fabs(cc) < small) cc = small;
    d = 1 + num * d;
    if (fabs(d) < small) d = small;
    d = 1 / d;
    const double delta = cc * d;
    h *= delta;
    if (!(fabs(delta - 1) >= small)) break;
  }
  double factor;
  const double lbeta_small_a = pb_sp_lgamma(b) - pb_sp_lgamma(a + b);
  if (a < 2 * (is_double ? DBL_MIN : FLT_MIN))
    factor = exp(log1p(-x) * b - lbeta_small_a);
  else
    factor = exp(log(x) * a + log1p(-x) * b - (pb_sp_lgamma(a) + lbeta_small_a)) / a;
  const double r = h * factor;
  return direct ? r : 1 - r;
}

/* (2k+2)! / B_{2k+2}: the Euler-Maclaurin correction coefficients of zeta. */
static const double pb_zeta_coef[12] = {
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1892437580.3183792, 74724249600.0,
    -2950130727918.164, 116467828143500.67, -4597978722407473.0, 1.8152105401943546e+17,
    -7.166165256175667e+18};

/* The Hurwitz zeta function sum_{k>=0} (k + q)^-x. */
static double pb_zeta(double x, double q) {
  if (isnan(x) || isnan(q)) return NAN;
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    /* a pole (k + q)^-x with k + q = 0: +inf for even x; the poles of odd (and non-integer)
     * x have no sign, NaN (XLA's values) */
    if (q == floor(q)) return fmod(x, 2) == 0 ? INFINITY : NAN;
    if (x != floor(x)) return NAN; /* q^-x has no real value */
  }
  double s = pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < PB_SP_EPS) return s;
  }
  const double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double fac = 1, k = 0;
  for (i = 0; i < 12; ++i) {
    fac *= x + k;
    b /= w;
    const double t = fac * b / pb_zeta_coef[i];
    s += t;
    if (fabs(t / s) < PB_SP_EPS) break;
    k += 1;
    fac *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

/* psi^(m)(x) = (-1)^(m+1) m! zeta(m + 1, x) for integer m >= 1; digamma for m = 0. */
static double pb_polygamma(double m, double x) {
  if (isnan(m) || isnan(x) || m != floor(m) || m < 0) return NAN;
  if (m == 0) return pb_digamma(x);
  const double sign = fmod(m, 2) == 1 ? 1 : -1;
  return sign * exp(pb_sp_lgamma(m + 1)) * pb_zeta(m + 1, x);
}

/* 1 / (k! (k + nu)!) for k = 0..64: the power series of I_nu(x) (x/2)^-nu in q = x^2 / 4. */
static const double pb_bessel_c0[65] = {
    1.0, 1.0, 0.25, 0.027777777777777776, 0.001736111111111111, 6.944444444444444e-05,
    1.9290123456790124e-06, 3.936759889140842e-08, 6.151187326782565e-10, 7.594058428126624e-12,
    7.594058428126623e-14, 6.276081345559193e-16, 4.358389823304995e-18, 2.5789288895295828e-20,
    1.3157800456783586e-22, 5.8479113141260385e-25, 2.2843403570804838e-27, 7.904291893012054e-30,
    2.4395962632753253e-32, 6.757884385804225e-35, 1.6894710964510564e-37, 3.8310002187098785e-40,
    7.915289708078262e-43, 1.4962740468957016e-45, 2.5976979980828152e-48, 4.156316796932504e-51,
    6.14839762859838e-54, 8.434015951438106e-57, 1.0757673407446564e-59, 1.2791526049282477e-62,
    1.4212806721424974e-65, 1.4789601166935458e-68, 1.4442969889585408e-71,
    1.3262598613026087e-74, 1.147283617043779e-77, 9.365580547296156e-81, 7.226528200074194e-84,
    5.278691161485898e-87, 3.6556032974279072e-90, 2.4034209713529963e-93, 1.5021381070956227e-96,
    8.935979221270807e-100, 5.065747857863269e-103, 2.739723016691871e-106,
    1.4151461863077845e-109, 6.988376228680417e-113, 3.3026352687525603e-116,
    1.4950816064973112e-119, 6.48906947264458e-123, 2.7026528415845812e-126,
    1.0810611366338324e-129, 4.156328860568368e-133, 1.5371038685533903e-136,
    5.472067883778535e-140, 1.876566489635986e-143, 6.203525585573507e-147,
    1.9781650464201234e-150, 6.088535076700903e-154, 1.8099093569265468e-157,
    5.199394877697635e-161, 1.4442763549160097e-164, 3.8814199272131406e-168,
    1.0097346324695995e-171, 2.544052991860921e-175, 6.211066874660451e-179,
};
static const double pb_bessel_c1[65] = {
    1.0, 0.5, 0.08333333333333333, 0.006944444444444444, 0.00034722222222222224,
    1.1574074074074073e-05, 2.755731922398589e-07, 4.920949861426052e-09, 6.834652585313961e-11,
    7.594058428126623e-13, 6.903689480115112e-15, 5.230067787965994e-17, 3.352607556388458e-19,
    1.842092063949702e-21, 8.771866971189057e-24, 3.654944571328774e-26, 1.3437296218120491e-28,
    4.391273273895586e-31, 1.2839980333028028e-33, 3.3789421929021126e-36, 8.045100459290744e-39,
    1.7413637357772174e-41, 3.4414303078601135e-44, 6.234475195398757e-47, 1.0390791992331261e-49,
    1.5985833834355786e-52, 2.2771843068882885e-55, 3.0121485540850376e-58,
    3.7095425542919185e-61, 4.263842016427493e-64, 4.5847763617499917e-67, 4.6217503646673306e-70,
    4.376657542298608e-73, 3.900764297948849e-76, 3.2779531915536543e-79, 2.60155015202671e-82,
    1.9531157297497823e-85, 1.3891292530226046e-88, 9.373341788276685e-92, 6.00855242838249e-95,
    3.6637514807210306e-98, 2.127614100302573e-101, 1.1780808971775045e-104,
    6.2266432197542515e-108, 3.1447693029061876e-111, 1.5192122236261777e-114,
    7.026883550537362e-118, 3.114753346869398e-121, 1.3242998923764447e-124,
    5.405305683169162e-128, 2.1197277188898674e-131, 7.99294011647763e-135,
    2.900195978402623e-138, 1.0133459044034324e-141, 3.411939072065429e-145,
    1.1077724259952691e-148, 3.470464993719515e-152, 1.0497474270173971e-155,
    3.0676429778416047e-159, 8.665658129496058e-163, 2.367666155600016e-166,
    6.260354721311517e-170, 1.6027533848723803e-173, 3.975082799782689e-177,
    9.555487499477619e-181,
};

/* e^-|x| I_nu(|x|) for nu = 0, 1: the power series below 25 by Horner's rule in q = x^2 / 4
 * over the 1.2 |x| + 12 terms that reach double precision (the terms peak near k = |x| / 2 and
 * fall below 1e-17 of the sum by then), the asymptotic expansion (whose smallest term is below
 * 1e-21 there) above. */
static double pb_bessel_ie(double x, int nu) {
  if (isnan(x)) return x;
  const double ax = fabs(x);
  double s;
  if (ax <= 25) {
    const double q = 0.25 * ax * ax;
    const double *c = nu ? pb_bessel_c1 : pb_bessel_c0;
    int n = (int)(1.2 * ax) + 12;
    if (n > 64) n = 64;
    double p = c[n];
    for (int k = n - 1; k >= 0; --k) p = p * q + c[k];
    s = exp(-ax) * (nu ? 0.5 * ax * p : p);
  } else {
    const double mu = 4.0 * nu * nu;
    double t = 1, prev = INFINITY;
    s = 1;
    for (int k = 1; k < 200; ++k) {
      const double odd = 2.0 * k - 1;
      t *= -(mu - odd * odd) / (8.0 * k * ax);
      if (fabs(t) >= prev) break;
      s += t;
      prev = fabs(t);
      if (prev <= PB_SP_EPS * fabs(s)) break;
    }
    s /= sqrt(2 * M_PI * ax);
  }
  return nu && x < 0 ? -s : s;
}

#endif
