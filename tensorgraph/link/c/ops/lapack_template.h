/* ---- the LAPACK templates compiled alone (tensorgraph/link/c/ops/lapack_template.h) ----
 * lapack.h and linalg_kernels.h are templates: lapack.py pastes each once per float type with
 * its placeholder names replaced (TGT the C type, TGS LAPACK's letter, LAPACK_ the library's
 * symbol prefix). Generated code never includes this file: it gives the placeholders one
 * meaning (double, unprefixed Fortran symbols) so that each template can be compile-checked as
 * a file. Needs batched.h and lapack_common.h. */
#define TGT double
#define TG_LA_TGS_LOG(x) TG_LA_d_LOG(x)
#define TG_LA_TGS_EXP(x) TG_LA_d_EXP(x)
#define TG_LA_TGS_EPS TG_LA_d_EPS
/* a template defines kernels for the code that calls them, none of which is here */
#pragma GCC diagnostic ignored "-Wunused-function"
