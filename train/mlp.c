/* Dense networks on the host, for the PPO update: a whole minibatch at a
 * time, stored feature-major ([unit][row], the rows padded to
 * CS_MLP_ROWS_ALIGN), so that every loop runs down the rows and vectorizes
 * at whatever width the machine has, with each value's operations in one
 * fixed order: sums over the rows keep CS_MLP_ROWS_ALIGN running partial
 * sums, added in a fixed tree. Nothing is reassociated and nothing is
 * split over threads, so the same minibatch gives the same bits anywhere.
 *
 * The forward pass is the kernel's arithmetic for the same weights
 * (agents/dense.c's order, ((w0 x0 + w1 x1) + ...) + b, and jit/mathf.h's
 * tanh): a log-probability or value recorded in the rollout is what the
 * update recomputes before its first step.
 *
 * Weights are in the policy file's order (docs/policy_format.md): for each
 * unit of a layer, its weights over the layer's inputs, then its bias. */
#include <math.h>
#include <string.h>

#include "train.h"

#define CS_INLINE static inline
/* tanh inlined into the loops below (they are short: the reason the
 * kernels call it out of line does not apply) */
#define CS_MATHF_SIMD_FN static inline __attribute__((always_inline))
#include "mathf.h"

/* The update's time is these loops: each is built for AVX-512, AVX2 and
 * the baseline, picked at load time, and vectorized whatever the
 * library's own flags (measured on CartPole's mlp:64 update: 4.6x faster
 * than -O2's baseline build). Every build computes the same bits: the
 * project forbids contraction (-ffp-contract=off), nothing is
 * reassociated, and cs_tanhf's vector clones are its scalar bits. The
 * clones are static, wrapped below: a global one's ifunc resolver would be
 * exported from the library, which exports its cs_ API alone. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CS_MLP_LOOPS __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("O3")))
#else
#define CS_MLP_LOOPS
#endif

void cs_mlp_shape(cs_mlp *m, const cs_agent *a, unsigned n_in, unsigned n_out, unsigned first)
{
    memset(m, 0, sizeof *m);
    m->n_layers = a->n_hidden + 1;
    m->width[0] = n_in;
    for (unsigned l = 0; l < a->n_hidden; l++)
        m->width[l + 1] = a->hidden[l];
    m->width[m->n_layers] = n_out;
    unsigned at = first;
    for (unsigned l = 0; l < m->n_layers; l++) {
        m->offset[l] = at;
        at += (m->width[l] + 1) * m->width[l + 1];
    }
    m->count = at - first;
}

unsigned cs_mlp_widest(const cs_mlp *m)
{
    unsigned w = 0;
    for (unsigned l = 0; l <= m->n_layers; l++)
        w = m->width[l] > w ? m->width[l] : w;
    return w;
}

static CS_MLP_LOOPS void forward(const cs_mlp *m, const float *params, float *const *act, size_t rows)
{
    for (unsigned l = 0; l < m->n_layers; l++) {
        unsigned n_in = m->width[l], n_out = m->width[l + 1];
        bool hidden = l + 1 < m->n_layers;
        const float *x = act[l];
        for (unsigned o = 0; o < n_out; o++) {
            const float *w = params + m->offset[l] + (size_t)o * (n_in + 1);
            float *restrict y = act[l + 1] + (size_t)o * rows;
            const float w0 = w[0];
            for (size_t r = 0; r < rows; r++)
                y[r] = w0 * x[r];
            for (unsigned i = 1; i < n_in; i++) {
                const float wi = w[i];
                const float *restrict xi = x + (size_t)i * rows;
                for (size_t r = 0; r < rows; r++)
                    y[r] = y[r] + wi * xi[r];
            }
            const float b = w[n_in];
            for (size_t r = 0; r < rows; r++)
                y[r] = y[r] + b;
            if (hidden)
                for (size_t r = 0; r < rows; r++)
                    y[r] = cs_tanhf(y[r]);
        }
    }
}

/* CS_MLP_ROWS_ALIGN floats as one vector (GCC's and Clang's vector
 * extension; narrower machines split it): the partial sums below, kept
 * apart lane by lane whatever the width, so the same bits everywhere. */
typedef float rows_vector __attribute__((vector_size(CS_MLP_ROWS_ALIGN * sizeof(float))));

/* sum over the rows of a[r] * b[r] (b NULL: of a[r]), in CS_MLP_ROWS_ALIGN
 * partial sums added in a fixed tree */
static inline float row_sum(const float *restrict a, const float *restrict b, size_t rows)
{
    rows_vector acc = {0}, x, y;
    for (size_t r = 0; r < rows; r += CS_MLP_ROWS_ALIGN) {
        memcpy(&x, a + r, sizeof x);
        if (b) {
            memcpy(&y, b + r, sizeof y);
            x = x * y;
        }
        acc = acc + x;
    }
    float part[CS_MLP_ROWS_ALIGN];
    memcpy(part, &acc, sizeof part);
    for (unsigned w = CS_MLP_ROWS_ALIGN / 2; w; w /= 2)
        for (unsigned k = 0; k < w; k++)
            part[k] = part[k] + part[k + w];
    return part[0];
}

static CS_MLP_LOOPS void backward(const cs_mlp *m, const float *params, float *const *act, float *delta,
                                 float *scratch, size_t rows, float *grad)
{
    float *dz = delta, *dx = scratch;
    for (unsigned l = m->n_layers; l-- > 0;) {
        unsigned n_in = m->width[l], n_out = m->width[l + 1];
        const float *x = act[l];
        for (unsigned o = 0; o < n_out; o++) {
            const float *d = dz + (size_t)o * rows;
            float *g = grad + m->offset[l] + (size_t)o * (n_in + 1);
            for (unsigned i = 0; i < n_in; i++)
                g[i] = g[i] + row_sum(d, x + (size_t)i * rows, rows);
            g[n_in] = g[n_in] + row_sum(d, NULL, rows);
        }
        if (l == 0)
            break;
        /* down to the layer's input, then through its tanh: 1 - h^2 */
        for (unsigned i = 0; i < n_in; i++) {
            float *restrict di = dx + (size_t)i * rows;
            const float *restrict h = x + (size_t)i * rows;
            const float w0 = params[m->offset[l] + i];
            const float *restrict d0 = dz;
            for (size_t r = 0; r < rows; r++)
                di[r] = w0 * d0[r];
            for (unsigned o = 1; o < n_out; o++) {
                const float wo = params[m->offset[l] + (size_t)o * (n_in + 1) + i];
                const float *restrict d = dz + (size_t)o * rows;
                for (size_t r = 0; r < rows; r++)
                    di[r] = di[r] + wo * d[r];
            }
            for (size_t r = 0; r < rows; r++)
                di[r] = di[r] * (1.0f - h[r] * h[r]);
        }
        float *t = dz;
        dz = dx;
        dx = t;
    }
}

void cs_mlp_forward(const cs_mlp *m, const float *params, float *const *act, size_t rows)
{
    forward(m, params, act, rows);
}

void cs_mlp_backward(const cs_mlp *m, const float *params, float *const *act, float *delta, float *scratch,
                     size_t rows, float *grad)
{
    backward(m, params, act, delta, scratch, rows, grad);
}
