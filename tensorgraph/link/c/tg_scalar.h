/* Scalar helpers of the elementwise kernels: numpy's semantics for the operations C spells
 * differently (floor division and modulo signs, nan-propagating max/min, stable sigmoid ...).
 * Pasted into every module that has Elemwise code. Suffixes: f = float (also float16
 * computations), d = double, i8..i64 / u8..u64 = the integer types (u8 also holds bools). */
#ifndef TG_SCALAR_H
#define TG_SCALAR_H

#include <math.h>
#include <stdint.h>

/* Math functions: tg_expf, tg_exp, tg_logf, ... (every function glibc's libmvec vectorizes).
 * Generated code calls these, never libm's names, so that every element of a loop gets the
 * same function. gcc vectorizes a `#pragma omp simd` loop calling a `declare simd` function
 * with the function's vector variants and computes what is left over (a loop's tail or
 * peeled head, a strided loop) with narrower variants or the scalar function. libmvec's
 * variants and libm's scalar functions are different implementations that differ by an ulp
 * here and there: exp of 20 equal floats gave 16 results in the vector body and another in
 * the scalar tail, and argmax then picked a tail element.
 *
 * Here, with libmvec on x86-64, the scalar function and every vector variant gcc may call
 * (ISA 'b' SSE, 'c' AVX, 'd' AVX2, 'e' AVX-512 of the x86 vector function ABI, those the
 * target has) are defined through ONE libmvec variant, the widest of 'b', 'c', 'd' the target
 * has: a scalar call runs it on a vector of copies, a narrower variant on a padded vector, a
 * wider one in pieces; the loop body's calls reach it directly. Elsewhere (no libmvec,
 * another architecture) these are libm's scalar functions, not vectorized: one function for
 * every element there too.
 *
 * Declarations are here; the definitions of a function (a scalar one and up to four
 * variants) cost ~15 ms of compiling (2026-11-25 at bc008ae), so a module gets only those
 * its code calls: the code
 * generators add `tg_vector_math(...)` of dtypes.py to their support code. */
#define TG_MATH1_OLD(X) X(exp) X(log) X(sin) X(cos)
#define TG_MATH2_OLD(X) X(pow)
#define TG_MATH1_NEW(X) X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(cosh) X(erf) \
    X(erfc) X(exp2) X(expm1) X(log10) X(log1p) X(log2) X(sinh) X(tan) X(tanh)
#define TG_MATH2_NEW(X) X(atan2)
#define TG_LIBM1(fn) static inline float tg_##fn##f(float x) { return fn##f(x); }            \
    static inline double tg_##fn(double x) { return fn(x); }
#define TG_LIBM2(fn) static inline float tg_##fn##f(float x, float y) { return fn##f(x, y); } \
    static inline double tg_##fn(double x, double y) { return fn(x, y); }

#if defined(TG_USE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__)
#define TG_MV 1
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
#define TG_MV_NEW 1  /* libmvec before glibc 2.35 has only exp, log, sin, cos and pow */
#endif
#if defined(__AVX2__)
#define TG_MV_ISA "d"
#define TG_MV_BYTES 32
#elif defined(__AVX__)
#define TG_MV_ISA "c"
#define TG_MV_BYTES 32
#else
#define TG_MV_ISA "b"
#define TG_MV_BYTES 16
#endif
#if TG_MV_BYTES == 32
#define TG_MV_LANES_float "8"
#define TG_MV_LANES_double "4"
#else
#define TG_MV_LANES_float "4"
#define TG_MV_LANES_double "2"
#endif
typedef float tg_mv_float __attribute__((vector_size(TG_MV_BYTES)));
typedef double tg_mv_double __attribute__((vector_size(TG_MV_BYTES)));
#define TG_MV_LANES(T) (TG_MV_BYTES / (int)sizeof(T))
/* in every unit that calls it (the linker keeps one copy), never exported; at -O3 a variant
 * as wide as the chosen one is a jump to it (at -O1 a copy through the stack, no faster to
 * compile) */
#define TG_MV_DEF __attribute__((weak, visibility("hidden"), noinline))

#define TG_MV_DECL1(fn) _Pragma("omp declare simd notinbranch")                              \
    float tg_##fn##f(float) __attribute__((const));                                           \
    _Pragma("omp declare simd notinbranch") double tg_##fn(double) __attribute__((const));
#define TG_MV_DECL2(fn) _Pragma("omp declare simd notinbranch")                              \
    float tg_##fn##f(float, float) __attribute__((const));                                    \
    _Pragma("omp declare simd notinbranch")                                                   \
    double tg_##fn(double, double) __attribute__((const));
TG_MATH1_OLD(TG_MV_DECL1) TG_MATH2_OLD(TG_MV_DECL2)
#if defined(TG_MV_NEW)
TG_MATH1_NEW(TG_MV_DECL1) TG_MATH2_NEW(TG_MV_DECL2)
#else
TG_MATH1_NEW(TG_LIBM1) TG_MATH2_NEW(TG_LIBM2)
#endif

/* The variant of tg_NAME for ISA X (L lanes of T), through the chosen libmvec variant:
 * vectors of the chosen width are filled from the arguments (repeating them when it is wider
 * than L lanes) and the results copied back. */
#define TG_MV_VARIANT(NAME, T, X, L, ARGS, PARAMS, DECL, FILL, CALL)                         \
typedef T tg_mv_##NAME##_##X __attribute__((vector_size(L * sizeof(T))));                   \
TG_MV_DEF tg_mv_##NAME##_##X tg_mv_##NAME##_##X##_fn PARAMS                                 \
    __asm__("_ZGV" #X "N" #L ARGS "_tg_" #NAME);                                             \
tg_mv_##NAME##_##X tg_mv_##NAME##_##X##_fn PARAMS {                                         \
    tg_mv_##NAME##_##X r;                                                                   \
    for (int k = 0; k < L; k += TG_MV_LANES(T)) {                                           \
        DECL;                                                                               \
        for (int i = 0; i < TG_MV_LANES(T); i++) { FILL; }                                  \
        const tg_mv_##T w = CALL;                                                           \
        for (int i = 0; i < TG_MV_LANES(T) && k + i < L; i++) r[k + i] = w[i];              \
    }                                                                                       \
    return r;                                                                               \
}
/* the ISAs gcc may call a variant of: those the target has */
#define TG_MV_IF_b(...) TG_MV_VARIANT(__VA_ARGS__)
#if defined(__AVX__)
#define TG_MV_IF_c(...) TG_MV_VARIANT(__VA_ARGS__)
#else
#define TG_MV_IF_c(...)
#endif
#if defined(__AVX2__)
#define TG_MV_IF_d(...) TG_MV_VARIANT(__VA_ARGS__)
#else
#define TG_MV_IF_d(...)
#endif
#if defined(__AVX512F__)
#define TG_MV_IF_e(...) TG_MV_VARIANT(__VA_ARGS__)
#else
#define TG_MV_IF_e(...)
#endif
#define TG_MV1_VARIANT(NAME, T, X, L)                                                       \
    TG_MV_IF_##X(NAME, T, X, L, "v", (tg_mv_##NAME##_##X x), tg_mv_##T u,                   \
                 u[i] = x[(k + i) % L], tg_mvu_##NAME(u))
#define TG_MV2_VARIANT(NAME, T, X, L)                                                       \
    TG_MV_IF_##X(NAME, T, X, L, "vv", (tg_mv_##NAME##_##X x, tg_mv_##NAME##_##X y),         \
                 tg_mv_##T u; tg_mv_##T v, u[i] = x[(k + i) % L]; v[i] = y[(k + i) % L],    \
                 tg_mvu_##NAME(u, v))

/* The definitions of tg_NAME of one argument of type T: the chosen libmvec variant, the
 * scalar function (one lane of a vector of copies) and the variants of ISAs b, c, d, e
 * (LB, LC, LD, LE lanes). */
#define TG_MV1(NAME, T, LB, LC, LD, LE)                                                     \
tg_mv_##T tg_mvu_##NAME(tg_mv_##T) __asm__("_ZGV" TG_MV_ISA "N" TG_MV_LANES_##T "v_" #NAME);\
TG_MV_DEF T tg_mvs_##NAME(T x) __asm__("tg_" #NAME);                                        \
T tg_mvs_##NAME(T x) {                                                                      \
    tg_mv_##T u;                                                                            \
    for (int i = 0; i < TG_MV_LANES(T); i++) u[i] = x;                                      \
    return tg_mvu_##NAME(u)[0];                                                             \
}                                                                                           \
TG_MV1_VARIANT(NAME, T, b, LB) TG_MV1_VARIANT(NAME, T, c, LC)                               \
TG_MV1_VARIANT(NAME, T, d, LD) TG_MV1_VARIANT(NAME, T, e, LE)
#define TG_MV2(NAME, T, LB, LC, LD, LE)                                                     \
tg_mv_##T tg_mvu_##NAME(tg_mv_##T, tg_mv_##T)                                               \
    __asm__("_ZGV" TG_MV_ISA "N" TG_MV_LANES_##T "vv_" #NAME);                              \
TG_MV_DEF T tg_mvs_##NAME(T x, T y) __asm__("tg_" #NAME);                                   \
T tg_mvs_##NAME(T x, T y) {                                                                 \
    tg_mv_##T u, v;                                                                         \
    for (int i = 0; i < TG_MV_LANES(T); i++) { u[i] = x; v[i] = y; }                        \
    return tg_mvu_##NAME(u, v)[0];                                                          \
}                                                                                           \
TG_MV2_VARIANT(NAME, T, b, LB) TG_MV2_VARIANT(NAME, T, c, LC)                               \
TG_MV2_VARIANT(NAME, T, d, LD) TG_MV2_VARIANT(NAME, T, e, LE)
/* what tg_vector_math() of dtypes.py emits, once per function a unit calls */
#define TG_MV_FLOAT1(fn) TG_MV1(fn##f, float, 4, 8, 8, 16)
#define TG_MV_DOUBLE1(fn) TG_MV1(fn, double, 2, 4, 4, 8)
#define TG_MV_FLOAT2(fn) TG_MV2(fn##f, float, 4, 8, 8, 16)
#define TG_MV_DOUBLE2(fn) TG_MV2(fn, double, 2, 4, 4, 8)
#else
TG_MATH1_OLD(TG_LIBM1) TG_MATH2_OLD(TG_LIBM2) TG_MATH1_NEW(TG_LIBM1) TG_MATH2_NEW(TG_LIBM2)
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

/* Float -> integer conversions (dtypes.py's cast(), both tiers). C leaves a value the integer
 * type cannot hold (a negative value into an unsigned type, a huge one, inf, nan) undefined,
 * and gcc compiled it differently at -O0 and -O3, and in one loop's vector body and scalar
 * tail. These give numpy's result on x86-64 for every value (its truncating instructions: an
 * int32 or int64 conversion out of range is the type's minimum; narrower types and uint32 are
 * the low bits of that; uint64 converts [2^63, 2^64) offset by 2^63). For uint32 that is
 * numpy's result for a 0-d array, a strided one and its loops' tails (its contiguous vector
 * loop differs on some values; perform converts through int64 to agree: scalar/basic.py). */
static inline int32_t tg_f2i_i32(double x)
{
    return (x >= -2147483648.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}
static inline int64_t tg_f2i_i64(double x)
{
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;
}
static inline int8_t tg_f2i_i8(double x) { return (int8_t)(uint8_t)(uint32_t)tg_f2i_i32(x); }
static inline uint8_t tg_f2i_u8(double x) { return (uint8_t)(uint32_t)tg_f2i_i32(x); }
static inline int16_t tg_f2i_i16(double x) { return (int16_t)(uint16_t)(uint32_t)tg_f2i_i32(x); }
static inline uint16_t tg_f2i_u16(double x) { return (uint16_t)(uint32_t)tg_f2i_i32(x); }
static inline uint32_t tg_f2i_u32(double x) { return (uint32_t)(uint64_t)tg_f2i_i64(x); }
static inline uint64_t tg_f2i_u64(double x)
{
    return x >= 9223372036854775808.0
        ? (uint64_t)tg_f2i_i64(x - 9223372036854775808.0) ^ 0x8000000000000000ULL
        : (uint64_t)tg_f2i_i64(x);
}

#define TG_FLOAT_HELPERS(S, T, F)                                                             \
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
    T e = tg_exp##F(-fabs##F(x));                                                             \
    return x >= 0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);                                       \
}                                                                                             \
static inline T tg_softplus_##S(T x) {                                                        \
    return tg_log1p##F(tg_exp##F(-fabs##F(x))) + (x > 0 ? x : (T)0);                          \
}                                                                                             \
static inline T tg_log1mexp_##S(T x) {                                                        \
    return x < (T)-0.6931471805599453 ? tg_log1p##F(-tg_exp##F(x))                            \
                                      : tg_log##F(-tg_expm1##F(x));                           \
}                                                                                             \
static inline T tg_sign_##S(T x) { return x > 0 ? (T)1 : (x < 0 ? (T)-1 : x); }

TG_FLOAT_HELPERS(f, float, f)
TG_FLOAT_HELPERS(d, double, )
#pragma GCC diagnostic pop

#endif /* TG_SCALAR_H */
