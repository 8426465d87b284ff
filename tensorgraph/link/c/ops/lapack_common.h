/* ---- what the LAPACK kernels share whatever the type (tensorgraph/link/c/ops/lapack_common.h)
 * Pasted once per unit before the per-type templates (lapack.h and the kernels written on it):
 * the library's thread count, set to one as for the BLAS calls (blas.py says why; a batch is
 * split across tensorgraph's pool instead), the math each type's kernels call, and the rows
 * and columns of an item view. */
#include <float.h>
#include <math.h>

void scipy_openblas_set_num_threads(int num_threads);

static inline void tg_lapack_threads(void)
{
    static int done = 0;
    if (!__atomic_load_n(&done, __ATOMIC_RELAXED)) {
        scipy_openblas_set_num_threads(1);
        __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
    }
}

/* rows and columns of an item view (a vector is one column, a scalar 1 x 1) */
static inline int64_t tg_la_rows(const tg_array *a) { return a->ndim >= 1 ? a->shape[0] : 1; }
static inline int64_t tg_la_cols(const tg_array *a) { return a->ndim == 2 ? a->shape[1] : 1; }

/* the math of each type (TG_LA_TGS_LOG in a template is TG_LA_s_LOG or TG_LA_d_LOG) */
#define TG_LA_s_LOG(x) logf(x)
#define TG_LA_s_EXP(x) expf(x)
#define TG_LA_s_EPS FLT_EPSILON
#define TG_LA_d_LOG(x) log(x)
#define TG_LA_d_EXP(x) exp(x)
#define TG_LA_d_EPS DBL_EPSILON
