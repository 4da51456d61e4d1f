/* libFuzzer target: the .env parser and everything a parsed program meets
 * next (make fuzz).
 *
 * Each input is a .env source. It is parsed in f32 without overrides, in f64
 * with overrides of the first params it declares (a value of 0, the classic
 * division by zero, and a range), and whatever parses goes on through the
 * random policy, the passes, the partitioner, both emitter dialects and a
 * short run of the interpreter on a few lanes, and its picture (a draw
 * block) is drawn for lanes holding 0, NaN, infinity and 1e30, scaled down
 * and at full size: a source that parses must compile, run and draw
 * without a sanitizer report. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jit.h"
#include "render/render.h"

#define LANES 3
#define STEPS 8
#define INTERP_NODES_MAX 20000   /* keep each run quick */
#define INTERP_ELEMENTS_MAX 200000   /* array nodes: the interpreter holds every element */

/* The names after "param" at the start of a line, as the overrides name them. */
static unsigned find_params(const char *src, size_t len, char names[][CS_NAME_MAX], unsigned max)
{
    unsigned n = 0;
    for (size_t i = 0; i + 6 < len && n < max; i++) {
        if ((i > 0 && src[i - 1] != '\n') || memcmp(src + i, "param ", 6) != 0)
            continue;
        size_t j = i + 6, k = 0;
        while (j < len && src[j] == ' ')
            j++;
        while (j < len && k + 1 < CS_NAME_MAX &&
               (src[j] == '_' || (src[j] >= 'a' && src[j] <= 'z') || (src[j] >= 'A' && src[j] <= 'Z') ||
                (k > 0 && src[j] >= '0' && src[j] <= '9')))
            names[n][k++] = src[j++];
        names[n][k] = 0;
        if (k > 0)
            n++;
    }
    return n;
}

static void run_interp(const cs_program *p)
{
    uint32_t count = cs_graph_count(p->graph);
    if (count > INTERP_NODES_MAX)
        return;
    size_t elements = 0;
    for (cs_node n = 1; n < count; n++)
        elements += cs_node_shape(p->graph, n)->size;
    if (elements > INTERP_ELEMENTS_MAX)
        return;
    size_t rs = p->real == CS_F32 ? sizeof(float) : sizeof(double);
    unsigned nc = p->n_carried, np = p->n_params, ni = p->n_inputs, no = p->n_obs ? p->n_obs : 1;
    void **carried = calloc(nc + 1, sizeof *carried), **params = calloc(np + 1, sizeof *params);
    void **inputs = calloc(ni + 1, sizeof *inputs);
    int *segstep = calloc(LANES, sizeof *segstep);
    float *obs = calloc((size_t)no * LANES, sizeof *obs), *final_obs = calloc((size_t)no * LANES, sizeof *obs);
    unsigned noi = p->n_obs_int ? p->n_obs_int : 1;
    long long *obs_int = calloc((size_t)noi * LANES, sizeof *obs_int);
    long long *final_obs_int = calloc((size_t)noi * LANES, sizeof *obs_int);
    double *reward = calloc(LANES, sizeof *reward), *seg_return = calloc(LANES, sizeof *seg_return);
    double *return_sum = calloc(LANES, sizeof *return_sum);
    unsigned char *term = calloc(LANES, 1), *trunc = calloc(LANES, 1), *pending = calloc(LANES, 1);
    long long *segments = calloc(LANES, sizeof *segments), *nonfinite = calloc(LANES, sizeof *nonfinite);
    for (unsigned k = 0; k < nc; k++)
        carried[k] = calloc(LANES, sizeof(double));   /* wide enough for any slot type */
    for (unsigned k = 0; k < np; k++)
        params[k] = calloc(LANES, rs);
    for (unsigned k = 0; k < ni; k++)
        inputs[k] = calloc(LANES, sizeof(double));     /* actions 0 / 0.0 */
    cs_lanes l = {.begin = 0, .end = LANES, .seed = 7, .stride = LANES, .carried = carried, .params = params,
                  .segstep = segstep, .inputs = inputs, .obs = obs, .final_obs = final_obs, .obs_int = obs_int,
                  .final_obs_int = final_obs_int, .reward = reward,
                  .terminated = term, .truncated = trunc, .pending = pending, .seg_return = seg_return,
                  .segments = segments, .return_sum = return_sum, .nonfinite = nonfinite};
    cs_interp_restart(p, &l);
    for (int mode = CS_MODE_NO_RESTART; mode <= CS_MODE_NEXT_STEP; mode++) {
        l.mode = mode;
        cs_interp_step(p, &l);
        l.t++;
    }
    l.steps = STEPS;
    cs_interp_rollout(p, &l);
    for (unsigned k = 0; k < nc; k++)
        free(carried[k]);
    for (unsigned k = 0; k < np; k++)
        free(params[k]);
    for (unsigned k = 0; k < ni; k++)
        free(inputs[k]);
    free(carried);
    free(params);
    free(inputs);
    free(segstep);
    free(obs);
    free(final_obs);
    free(obs_int);
    free(final_obs_int);
    free(reward);
    free(seg_return);
    free(return_sum);
    free(term);
    free(trunc);
    free(pending);
    free(segments);
    free(nonfinite);
}

/* The picture of lanes holding odd values, into a small frame: the whole
 * canvas scaled down, then a window of it at full size. */
static void draw_picture(const cs_program *p)
{
    render_picture *pic;
    char err[512];
    if (!p->canvas_width || cs_graph_count(p->graph) > INTERP_NODES_MAX ||
        render_picture_new(p, &pic, err, sizeof err) != CS_OK)
        return;
    enum { W = 64, H = 48, DRAWN = 4 };
    const double values[DRAWN] = {0, NAN, INFINITY, 1e30};
    unsigned nc = p->n_carried, np = p->n_params;
    void **carried = calloc(nc + 1, sizeof *carried), **params = calloc(np + 1, sizeof *params);
    for (unsigned k = 0; k < nc; k++)
        carried[k] = calloc(DRAWN, sizeof(double));
    for (unsigned k = 0; k < np; k++)
        params[k] = calloc(DRAWN, sizeof(double));
    for (unsigned k = 0; k < nc + np; k++)
        for (int i = 0; i < DRAWN; i++) {
            void *a = k < nc ? carried[k] : params[k - nc];
            if (p->real == CS_F32)
                ((float *)a)[i] = (float)values[i];
            else
                ((double *)a)[i] = values[i];
        }
    cs_lanes l = {.begin = 0, .end = DRAWN, .stride = DRAWN, .carried = carried, .params = params};
    static uint8_t rgb[W * H * 3];
    for (int i = 0; i < DRAWN; i++) {
        render_canvas c;
        render_canvas_init(&c, rgb, W * 3, (render_rect){0, 0, W, H}, 0, 0, (double)W / p->canvas_width,
                           p->canvas_height);
        render_picture_draw(pic, &c, &l, i);
        render_canvas_init(&c, rgb, W * 3, (render_rect){0, 0, W, H}, -p->canvas_width / 2.0,
                           -p->canvas_height / 2.0, 1, p->canvas_height);
        render_picture_draw(pic, &c, &l, i);
    }
    for (unsigned k = 0; k < nc; k++)
        free(carried[k]);
    for (unsigned k = 0; k < np; k++)
        free(params[k]);
    free(carried);
    free(params);
    render_picture_free(pic);
}

/* What the runtime does with a parsed program, minus the C compiler. */
static void compile_and_run(cs_program *p)
{
    char err[512];
    if (cs_policy_random(p) || cs_program_bind_policy(p))
        return;
    if (cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err))
        return;
    cs_text text = {0};
    cs_dump_graph(p, false, &text);
    cs_text_free(&text);
    static const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES, CS_FUSION_NONE};
    for (size_t k = 0; k < 3; k++) {
        cs_schedule s = {fusions[k], k == 0 ? 4 : 1, 0, 0};
        cs_text src = {0};
        cs_plan plan;
        if (cs_plan_build(p, fusions[k], &plan))
            continue;
        cs_emit(p, &plan, &s, k == 2 ? CS_DIALECT_CUDA : CS_DIALECT_C, &src, err, sizeof err);
        cs_text_free(&src);
        cs_plan_free(&plan);
    }
    run_interp(p);
    draw_picture(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *src = (const char *)data;
    char err[512];
    cs_program *p = NULL;
    if (cs_parse(src, size, "fuzz.env", CS_F32, NULL, 0, &p, err, sizeof err) == 0) {
        compile_and_run(p);
        cs_program_free(p);
    }

    char names[2][CS_NAME_MAX];
    unsigned n = find_params(src, size, names, 2);
    cs_param_override ov[2];
    memset(ov, 0, sizeof ov);
    for (unsigned k = 0; k < n; k++) {
        memcpy(ov[k].name, names[k], sizeof ov[k].name);
        ov[k].is_range = k == 1;
        ov[k].value = 0;
        ov[k].low = -1;
        ov[k].high = 1;
    }
    p = NULL;
    if (cs_parse(src, size, "fuzz.env", CS_F64, ov, n, &p, err, sizeof err) == 0) {
        compile_and_run(p);
        cs_program_free(p);
    }
    return 0;
}
