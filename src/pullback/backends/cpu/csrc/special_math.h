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

/* e^-|x| I_nu(|x|) for nu = 0, 1: the power series below 25, the asymptotic expansion
 * (whose smallest term is below 1e-21 there) above. */
static double pb_bessel_ie(double x, int nu) {
  if (isnan(x)) return x;
  const double ax = fabs(x);
  double s;
  if (ax <= 25) {
    const double q = 0.25 * ax * ax;
    double t = nu ? exp(-ax) * 0.5 * ax : exp(-ax);
    s = t;
    for (int k = 1; k < 500; ++k) {
      t *= q / ((double)k * (double)(k + nu));
      s += t;
      if (t <= PB_SP_EPS * s) break;
    }
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
