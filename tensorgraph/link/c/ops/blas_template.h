/* ---- the BLAS templates compiled alone (tensorgraph/link/c/ops/blas_template.h) ----
 * blas_cblas.h, blas_own.h, blas_split.h and gemv_pair.h are templates: blas.py and
 * gemv_pair.py paste each once per element type with its placeholder names replaced, and paste
 * before them what they call. Generated code never includes this file: it gives the
 * placeholders and those definitions one meaning (double, the standard CBLAS, no thread
 * control) so that each template can be compile-checked, highlighted and formatted as a file.
 * Needs blas.h. */
#define TGT double
#define TGFMA fma
typedef int tg_blasint;
#define TG_BLAS_MAXINT 2147483647LL
#define tg_blas_threads() ((void)0)
/* a template defines kernels for the code that calls them, none of which is here */
#pragma GCC diagnostic ignored "-Wunused-function"
