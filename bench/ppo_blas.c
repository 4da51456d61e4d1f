/* PPO's dense layers: train/mlp.c's own loops against OpenBLAS's sgemm
 * (Debian's libopenblas-dev, one thread), on the shapes PPO updates: a
 * minibatch of 128 rows through CartPole's actor (4 inputs, 2 outputs) as
 * mlp:64 and as mlp:64x64, forward and backward, feature-major as train/
 * uses them. Prints microseconds per forward+backward, best of 7 rounds.
 *
 *   make bench-ppo-blas     (needs libopenblas-dev)
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train.h"

/* the same tanh as train/mlp.c's (jit/mathf.h's), so that only the products differ */
#define CS_INLINE static inline
#define CS_MATHF_SIMD_FN static inline __attribute__((always_inline))
#include "mathf.h"

void openblas_set_num_threads(int);

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The same network through sgemm: y = W x + b per layer, tanh between;
 * backward: dW += dY X^T, db += row sums, dX = W^T dY then times 1 - h^2. */
static void blas_forward(const cs_mlp *m, const float *params, float *const *act, int rows)
{
    for (unsigned l = 0; l < m->n_layers; l++) {
        int n_in = (int)m->width[l], n_out = (int)m->width[l + 1];
        const float *w = params + m->offset[l];
        float *y = act[l + 1];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n_out, rows, n_in, 1.0f, w, n_in + 1, act[l], rows,
                    0.0f, y, rows);
        for (int o = 0; o < n_out; o++)
            for (int r = 0; r < rows; r++) {
                float v = y[o * rows + r] + w[o * (n_in + 1) + n_in];
                y[o * rows + r] = l + 1 < m->n_layers ? cs_tanhf(v) : v;
            }
    }
}

static void blas_backward(const cs_mlp *m, const float *params, float *const *act, float *delta, float *scratch,
                          int rows, float *grad)
{
    float *dz = delta, *dx = scratch;
    for (unsigned l = m->n_layers; l-- > 0;) {
        int n_in = (int)m->width[l], n_out = (int)m->width[l + 1];
        const float *w = params + m->offset[l];
        float *g = grad + m->offset[l];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n_out, n_in, rows, 1.0f, dz, rows, act[l], rows, 1.0f, g,
                    n_in + 1);
        for (int o = 0; o < n_out; o++) {
            float s = 0;
            for (int r = 0; r < rows; r++)
                s += dz[o * rows + r];
            g[o * (n_in + 1) + n_in] += s;
        }
        if (l == 0)
            break;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_in, rows, n_out, 1.0f, w, n_in + 1, dz, rows, 0.0f, dx,
                    rows);
        const float *h = act[l];
        for (int k = 0; k < n_in * rows; k++)
            dx[k] *= 1.0f - h[k] * h[k];
        float *t = dz;
        dz = dx;
        dx = t;
    }
}

static void bench(const char *arch)
{
    enum { ROWS = 128, REPS = 2000, ROUNDS = 7 };
    cs_agent a;
    char err[256];
    cs_agent_parse(arch, &a, err, sizeof err);
    cs_mlp m;
    cs_mlp_shape(&m, &a, 4, 2, 0);
    float *params = malloc(m.count * sizeof *params), *grad = calloc(m.count, sizeof *grad);
    float *act[4], *delta = malloc(64 * ROWS * sizeof *delta), *scratch = malloc(64 * ROWS * sizeof *scratch);
    for (unsigned l = 0; l <= m.n_layers; l++)
        act[l] = malloc(m.width[l] * ROWS * sizeof(float));
    srand(1);
    for (unsigned k = 0; k < m.count; k++)
        params[k] = (float)rand() / RAND_MAX - 0.5f;
    for (int k = 0; k < 4 * ROWS; k++)
        act[0][k] = (float)rand() / RAND_MAX - 0.5f;
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < ROUNDS; round++)
        for (int which = 0; which < 2; which++) {   /* interleaved: the load falls on both */
            double t0 = now_us();
            for (int i = 0; i < REPS; i++) {
                for (int k = 0; k < 2 * ROWS; k++)
                    delta[k] = 0.01f * (float)(k % 7);
                if (which == 0) {
                    cs_mlp_forward(&m, params, act, ROWS);
                    cs_mlp_backward(&m, params, act, delta, scratch, ROWS, grad);
                } else {
                    blas_forward(&m, params, act, ROWS);
                    blas_backward(&m, params, act, delta, scratch, ROWS, grad);
                }
            }
            double us = (now_us() - t0) / REPS;
            best[which] = us < best[which] ? us : best[which];
        }
    printf("%-10s %3d rows: train/mlp.c %7.1f us, OpenBLAS sgemm %7.1f us per forward + backward (%.2fx)\n", arch,
           ROWS, best[0], best[1], best[1] / best[0]);
    for (unsigned l = 0; l <= m.n_layers; l++)
        free(act[l]);
    free(params);
    free(grad);
    free(delta);
    free(scratch);
}

int main(void)
{
    openblas_set_num_threads(1);
    bench("mlp:64");
    bench("mlp:64x64");
    return 0;
}
