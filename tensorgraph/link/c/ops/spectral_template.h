/* ---- the spectral LAPACK template compiled alone (tensorgraph/link/c/ops/spectral_template.h)
 * spectral.h is a template: linalg_spectral.py pastes it once per element type with its
 * placeholder names replaced (TGT the C type, TGS LAPACK's letter, LAPACK_ the library's
 * symbol prefix). Generated code never includes this file: it gives the placeholders one
 * meaning (double, unprefixed Fortran symbols) so that the template can be compile-checked as
 * a file. Needs spectral_common.h. */
#define TGT double
/* a template defines kernels for the code that calls them, none of which is here */
#pragma GCC diagnostic ignored "-Wunused-function"
