/* Scalar helpers of the elementwise kernels: numpy's semantics for the operations C spells
 * differently (floor division and modulo signs, nan-propagating max/min, stable sigmoid ...).
 * Pasted into every module that has Elemwise code. Suffixes: f = float (also float16
 * computations), d = double, i8..i64 / u8..u64 = the integer types (u8 also holds bools). */
#ifndef TG_SCALAR_H
#define TG_SCALAR_H

#include <math.h>
#include <stdint.h>

#if defined(TG_USE_LIBMVEC)
/* glibc's libmvec has SIMD versions of these; declaring them lets gcc vectorize loops that call
 * them (no -ffast-math needed, so nan/inf keep their IEEE meaning). */
#define TG_SIMD_DECL1(fn) _Pragma("omp declare simd notinbranch") double fn(double); \
    _Pragma("omp declare simd notinbranch") float fn##f(float);
#define TG_SIMD_DECL2(fn) _Pragma("omp declare simd notinbranch") double fn(double, double); \
    _Pragma("omp declare simd notinbranch") float fn##f(float, float);
TG_SIMD_DECL1(exp) TG_SIMD_DECL1(log) TG_SIMD_DECL1(sin) TG_SIMD_DECL1(cos)
TG_SIMD_DECL2(pow)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
TG_SIMD_DECL1(acos) TG_SIMD_DECL1(acosh) TG_SIMD_DECL1(asin) TG_SIMD_DECL1(asinh)
TG_SIMD_DECL1(atan) TG_SIMD_DECL1(atanh) TG_SIMD_DECL1(cosh) TG_SIMD_DECL1(erf)
TG_SIMD_DECL1(erfc) TG_SIMD_DECL1(exp2) TG_SIMD_DECL1(expm1) TG_SIMD_DECL1(log10)
TG_SIMD_DECL1(log1p) TG_SIMD_DECL1(log2) TG_SIMD_DECL1(sinh) TG_SIMD_DECL1(tan)
TG_SIMD_DECL1(tanh) TG_SIMD_DECL2(atan2)
#endif
#endif

#define TG_INT_HELPERS(S, T, MIN)                                                            \
static inline T tg_floordiv_##S(T a, T b) {                                                   \
    if (b == 0) return 0;                                                                     \
    if (MIN != 0 && b == (T)-1) return (T)(0 - (uint64_t)a); /* wraps like numpy */            \
    T q = (T)(a / b);                                                                         \
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;                                             \
    return q;                                                                                 \
}                                                                                             \
static inline T tg_mod_##S(T a, T b) {                                                        \
    if (b == 0 || (MIN != 0 && b == (T)-1)) return 0;                                         \
    T r = (T)(a % b);                                                                         \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                                        \
    return r;                                                                                 \
}                                                                                             \
static inline T tg_max_##S(T a, T b) { return a > b ? a : b; }                                \
static inline T tg_min_##S(T a, T b) { return a < b ? a : b; }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wunused-function"
TG_INT_HELPERS(i8, int8_t, INT8_MIN)
TG_INT_HELPERS(i16, int16_t, INT16_MIN)
TG_INT_HELPERS(i32, int32_t, INT32_MIN)
TG_INT_HELPERS(i64, int64_t, INT64_MIN)
TG_INT_HELPERS(u8, uint8_t, 0)
TG_INT_HELPERS(u16, uint16_t, 0)
TG_INT_HELPERS(u32, uint32_t, 0)
TG_INT_HELPERS(u64, uint64_t, 0)

#define TG_FLOAT_HELPERS(S, T, F)                                                            \
static inline T tg_mod_##S(T a, T b) {                                                        \
    T mod = fmod##F(a, b);                                                                    \
    if (!b) return mod;                                                                       \
    if (mod) { if ((b < 0) != (mod < 0)) mod += b; }                                          \
    else mod = copysign##F((T)0, b);                                                          \
    return mod;                                                                               \
}                                                                                             \
static inline T tg_floordiv_##S(T a, T b) {                                                   \
    if (!b) return a / b;                                                                     \
    T mod = fmod##F(a, b);                                                                    \
    T div = (a - mod) / b;                                                                    \
    if (mod) { if ((b < 0) != (mod < 0)) div -= (T)1; }                                       \
    T floordiv;                                                                               \
    if (div) { floordiv = floor##F(div); if (div - floordiv > (T)0.5) floordiv += (T)1; }     \
    else floordiv = copysign##F((T)0, a / b);                                                 \
    return floordiv;                                                                          \
}                                                                                             \
static inline T tg_max_##S(T a, T b) { return (a > b || a != a) ? a : b; }                    \
static inline T tg_min_##S(T a, T b) { return (a < b || a != a) ? a : b; }                    \
static inline T tg_sigmoid_##S(T x) {                                                         \
    T e = exp##F(-fabs##F(x));                                                                \
    return x >= 0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);                                       \
}                                                                                             \
static inline T tg_softplus_##S(T x) {                                                        \
    return log1p##F(exp##F(-fabs##F(x))) + (x > 0 ? x : (T)0);                                \
}                                                                                             \
static inline T tg_log1mexp_##S(T x) {                                                        \
    return x < (T)-0.6931471805599453 ? log1p##F(-exp##F(x)) : log##F(-expm1##F(x));          \
}                                                                                             \
static inline T tg_sign_##S(T x) { return x > 0 ? (T)1 : (x < 0 ? (T)-1 : x); }

TG_FLOAT_HELPERS(f, float, f)
TG_FLOAT_HELPERS(d, double, )
#pragma GCC diagnostic pop

#endif /* TG_SCALAR_H */
