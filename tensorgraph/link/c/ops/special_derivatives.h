/* The derivatives of the incomplete gamma and beta functions in their shape parameters, and of
   Gauss's hypergeometric function 2F1 in its parameters:
   tensorgraph/scalar/special_derivatives.py says what and how; this is the same algorithm,
   operation for operation. psi is scipy's (the pointer tg_sf_psi_d, dtypes.scipy_pointer). */
#ifndef TG_SFD_HAVE_DERIVATIVES
#define TG_SFD_HAVE_DERIVATIVES
#include <math.h>

#define TG_SFD_MAX_TERMS 10000
#define TG_SFD_EPS 1e-16
#define TG_SFD_TINY 1e-300
#define TG_SFD_HYP2F1_MAX_TERMS 1000000
#define TG_SFD_HYP2F1_SPREAD 1e4

#ifndef TG_SF_HAVE_tg_sf_psi_d  /* as dtypes._scipy_pointers defines it; the file compiles alone */
#define TG_SF_HAVE_tg_sf_psi_d
__attribute__((weak)) void *tg_sf_psi_d;
#endif

static double tg_sfd_psi(double x)
{
    return ((double (*)(double, int))tg_sf_psi_d)(x, 0);
}

/* dP(k, x)/dk */
static double tg_sfd_gammainc_dk(double k, double x)
{
    if (isnan(k) || isnan(x) || k <= 0 || x < 0 || isinf(k))
        return NAN;
    if (x == 0 || isinf(x))
        return 0.0;
    const double log_x = log(x);
    if (x < k + 1) {
        double term = exp(k * log_x - x - lgamma(k + 1));
        double digamma = tg_sfd_psi(k + 1);
        double total = term * (log_x - digamma);
        for (int n = 1; n < TG_SFD_MAX_TERMS; n++) {
            term *= x / (k + n);
            digamma += 1 / (k + n);
            const double change = term * (log_x - digamma);
            total += change;
            if (fabs(change) <= TG_SFD_EPS * fabs(total) && term <= TG_SFD_EPS)
                return total;
        }
        return NAN;
    }
    double b = x + 1 - k, db = -1.0;
    double c = 1 / TG_SFD_TINY, dc = 0.0;
    double d = 1 / b, dd = -db / (b * b);
    double h = d, dh = dd;
    for (int i = 1; i < TG_SFD_MAX_TERMS; i++) {
        const double an = -i * (i - k), dan = (double)i;
        b += 2;
        double nd = an * d + b, ndd = dan * d + an * dd + db;
        d = nd; dd = ndd;
        if (fabs(d) < TG_SFD_TINY)
            d = TG_SFD_TINY;
        const double nc = b + an / c, ndc = db + (dan * c - an * dc) / (c * c);
        c = nc; dc = ndc;
        if (fabs(c) < TG_SFD_TINY)
            c = TG_SFD_TINY;
        nd = 1 / d; ndd = -dd / (d * d);
        d = nd; dd = ndd;
        const double delta = d * c, ddelta = dd * c + d * dc;
        const double step = h * ddelta;
        dh = dh * delta + step;
        h = h * delta;
        if (fabs(delta - 1) <= TG_SFD_EPS && fabs(step) <= TG_SFD_EPS * fabs(dh)) {
            const double front = exp(k * log_x - x - lgamma(k));
            return -front * (h * (log_x - tg_sfd_psi(k)) + dh);
        }
    }
    return NAN;
}

/* a value with its derivatives in the two shape parameters */
typedef struct { double v, p, q; } tg_sfd_dual;

static tg_sfd_dual tg_sfd_div(tg_sfd_dual a, tg_sfd_dual b)
{
    tg_sfd_dual r = {a.v / b.v, (a.p * b.v - a.v * b.p) / (b.v * b.v),
                     (a.q * b.v - a.v * b.q) / (b.v * b.v)};
    return r;
}

static tg_sfd_dual tg_sfd_mul(tg_sfd_dual a, tg_sfd_dual b)
{
    tg_sfd_dual r = {a.v * b.v, a.p * b.v + a.v * b.p, a.q * b.v + a.v * b.q};
    return r;
}

static tg_sfd_dual tg_sfd_add(tg_sfd_dual a, tg_sfd_dual b)
{
    tg_sfd_dual r = {a.v + b.v, a.p + b.p, a.q + b.q};
    return r;
}

static tg_sfd_dual tg_sfd_clamp(tg_sfd_dual a)
{
    if (fabs(a.v) < TG_SFD_TINY)
        a.v = TG_SFD_TINY;
    return a;
}

/* Lentz's continued fraction of I_x(a, b) / front with its derivatives; 0 if it does not
   converge */
static int tg_sfd_beta_fraction(double a, double b, double x, tg_sfd_dual *out)
{
    const tg_sfd_dual one = {1.0, 0.0, 0.0};
    const tg_sfd_dual qab = {a + b, 1.0, 1.0}, qap = {a + 1, 1.0, 0.0}, qam = {a - 1, 1.0, 0.0};
    tg_sfd_dual c = one;
    const tg_sfd_dual start = {-(a + b) * x, -x, -x};
    tg_sfd_dual d = tg_sfd_clamp(tg_sfd_add(one, tg_sfd_div(start, qap)));
    d = tg_sfd_div(one, d);
    tg_sfd_dual h = d;
    for (int m = 1; m < TG_SFD_MAX_TERMS; m++) {
        const int m2 = 2 * m;
        tg_sfd_dual num = {m * (b - m) * x, 0.0, m * x};
        const tg_sfd_dual e1 = {qam.v + m2, 1.0, 0.0}, e2 = {a + m2, 1.0, 0.0};
        tg_sfd_dual aa = tg_sfd_div(num, tg_sfd_mul(e1, e2));
        d = tg_sfd_div(one, tg_sfd_clamp(tg_sfd_add(one, tg_sfd_mul(aa, d))));
        c = tg_sfd_clamp(tg_sfd_add(one, tg_sfd_div(aa, c)));
        h = tg_sfd_mul(h, tg_sfd_mul(d, c));
        const tg_sfd_dual o1 = {-(a + m) * x, -x, 0.0}, o2 = {qab.v + m, 1.0, 1.0};
        const tg_sfd_dual o3 = {a + m2, 1.0, 0.0}, o4 = {qap.v + m2, 1.0, 0.0};
        num = tg_sfd_mul(o1, o2);
        aa = tg_sfd_div(num, tg_sfd_mul(o3, o4));
        d = tg_sfd_div(one, tg_sfd_clamp(tg_sfd_add(one, tg_sfd_mul(aa, d))));
        c = tg_sfd_clamp(tg_sfd_add(one, tg_sfd_div(aa, c)));
        const tg_sfd_dual delta = tg_sfd_mul(d, c);
        const double step_p = h.v * delta.p, step_q = h.v * delta.q;
        h = tg_sfd_mul(h, delta);
        if (fabs(delta.v - 1) <= TG_SFD_EPS
                && (fabs(step_p) <= TG_SFD_EPS * fabs(h.p) || step_p == 0)
                && (fabs(step_q) <= TG_SFD_EPS * fabs(h.q) || step_q == 0)) {
            *out = h;
            return 1;
        }
    }
    return 0;
}

/* dI_x(a, b)/da */
static double tg_sfd_betainc_da(double a, double b, double x)
{
    if (isnan(a) || isnan(b) || isnan(x) || a <= 0 || b <= 0 || !(x >= 0 && x <= 1)
            || isinf(a) || isinf(b))
        return NAN;
    if (x == 0 || x == 1)
        return 0.0;
    const int swap = x >= (a + 1) / (a + b + 2);
    const double p = swap ? b : a, q = swap ? a : b, y = swap ? 1 - x : x;
    tg_sfd_dual h;
    if (!tg_sfd_beta_fraction(p, q, y, &h))
        return NAN;
    const double digamma_sum = tg_sfd_psi(p + q);
    const double log_front = p * log(y) + q * log1p(-y) - log(p)
        - (lgamma(p) + lgamma(q) - lgamma(p + q));
    const double front = exp(log_front);
    const double dlog_dp = log(y) - 1 / p - tg_sfd_psi(p) + digamma_sum;
    const double dlog_dq = log1p(-y) - tg_sfd_psi(q) + digamma_sum;
    if (swap)
        return -front * (h.v * dlog_dq + h.q);
    return front * (h.v * dlog_dp + h.p);
}

/* 2F1(a, b; c; z), its derivative in the direction (da, db, dc) of (a, b, c), and the sums of
   the absolute values of their terms, by the power series; 0 where it is not summed or does
   not converge in TG_SFD_HYP2F1_MAX_TERMS terms */
static int tg_sfd_hyp2f1_series(double a, double b, double c, double z, double da, double db,
                                double dc, double out[4])
{
    const double size = fabs(z);
    const int converges = size < 1 || (size == 1 && c > a + b);
    double settled = 0.0;
    if (-a > settled) settled = -a;
    if (-b > settled) settled = -b;
    if (-c > settled) settled = -c;
    settled += 1;
    double term = 1.0, dterm = 0.0, value = 1.0, total = 0.0, spread = 1.0, dspread = 0.0;
    int small = 0, done = 0;
    for (int k = 0; k < TG_SFD_HYP2F1_MAX_TERMS && !done; k++) {
        const double ak = a + k, bk = b + k, ck = c + k;
        if (ck == 0)
            return 0;
        const double den = ck * (k + 1);
        const double ratio = ak * bk * z / den;
        const double slope = (da * bk + db * ak) * z / den - dc * ratio / ck;
        dterm = dterm * ratio + term * slope;
        term = term * ratio;
        value += term;
        total += dterm;
        spread += fabs(term);
        dspread += fabs(dterm);
        if (term == 0 && dterm == 0) {
            done = 1;  /* the series (and the derivative's) ended */
            break;
        }
        if (!(isfinite(total) && isfinite(value)))
            return 0;
        if (k < settled)
            continue;
        if (!converges)
            return 0;
        double q = fabs(ratio);
        if (size != 1 && size > q)
            q = size;
        const int was_small = small;
        small = q < 1 && fabs(dterm) * q <= TG_SFD_EPS * (1 - q) * fabs(total)
            && fabs(term) * q <= TG_SFD_EPS * (1 - q) * fabs(value);
        done = small && was_small;
    }
    if (!done)
        return 0;
    out[0] = value;
    out[1] = total;
    out[2] = spread;
    out[3] = dspread;
    return 1;
}

/* d2F1/d(wrt) by one form (0 the series, 1 and 2 Pfaff's transformations in a and in b,
   3 Euler's) and its spread over its absolute value; 0 where its series is not summed */
static int tg_sfd_hyp2f1_form(double a, double b, double c, double z, int wrt, int form,
                              double *derivative, double *spread_ratio)
{
    static const double directions[4][3][3] = {
        {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {{1, 0, 0}, {0, -1, 0}, {0, 1, 1}},
        {{-1, 0, 0}, {0, 1, 0}, {1, 0, 1}}, {{-1, 0, 0}, {0, -1, 0}, {1, 1, 1}}};
    static const double exponents[4][3] = {{0, 0, 0}, {-1, 0, 0}, {0, -1, 0}, {-1, -1, 1}};
    double p = a, q = b, x = z, exponent = 0.0;
    if (form == 1) {
        q = c - b; x = z / (z - 1); exponent = -a;
    } else if (form == 2) {
        p = c - a; x = z / (z - 1); exponent = -b;
    } else if (form == 3) {
        p = c - a; q = c - b; exponent = c - a - b;
    }
    const double *d = directions[form][wrt];
    double sums[4];
    if (!tg_sfd_hyp2f1_series(p, q, c, x, d[0], d[1], d[2], sums))
        return 0;
    const double slope = form == 0 ? 0.0 : exponents[form][wrt] * log1p(-z);
    const double front = form == 0 ? 1.0 : pow(1 - z, exponent);
    const double value = front * (sums[1] + slope * sums[0]);
    const double spread = front * (sums[3] + fabs(slope) * sums[2]);
    *derivative = value;
    if (value == 0)
        *spread_ratio = spread == 0 ? 0.0 : INFINITY;
    else
        *spread_ratio = spread / fabs(value);
    return 1;
}

/* d2F1(a, b; c; z)/da, /db or /dc (wrt 0, 1, 2): the form that cancels least */
static double tg_sfd_hyp2f1_der(double a, double b, double c, double z, int wrt)
{
    if (!(isfinite(a) && isfinite(b) && isfinite(c) && isfinite(z)))
        return NAN;
    if (z == 0)
        return 0.0;
    int forms[4], n = 0;
    if (fabs(z) < 1) {
        if (z < 0) {
            forms[0] = 1; forms[1] = 2; forms[2] = 3; forms[3] = 0; n = 4;
        } else if (z < 0.5) {
            forms[0] = 0; forms[1] = 3; forms[2] = 1; forms[3] = 2; n = 4;
        } else {
            forms[0] = 0; forms[1] = 3; n = 2;
        }
    } else if (z == -1 && c > a + b) {
        forms[0] = 1; forms[1] = 2; forms[2] = 0; n = 3;
    } else {
        forms[0] = 0; n = 1;
    }
    double best = NAN, best_spread = INFINITY;
    for (int i = 0; i < n; i++) {
        double derivative, spread;
        if (!tg_sfd_hyp2f1_form(a, b, c, z, wrt, forms[i], &derivative, &spread))
            continue;
        if (isnan(best) || spread < best_spread) {
            best = derivative;
            best_spread = spread;
        }
        if (spread <= TG_SFD_HYP2F1_SPREAD)
            break;
    }
    return best;
}
#endif
