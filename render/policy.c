/* Actions chosen on the host, for the viewer and `cartsim render`: the
 * simulation itself only ever sees cs_env_step's actions. Policy files
 * (agents/NAME.pol, compiled into the step kernel) are the later path; they
 * plug in at render_policy_check/open below. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

struct render_policy {
    render_policy_kind kind;
    cs_env_info info;
    const render_rule *rule;
    uint64_t rng;               /* splitmix64 state */
    int64_t calls;
    int32_t *discrete;          /* [num_envs] */
    float *box;                 /* [action_dim][num_envs] */
    double *one;                /* one environment's state */
    double *action;             /* one environment's action */
};

static const char *const kinds[] = {
    [RENDER_POLICY_RANDOM] = "random",
    [RENDER_POLICY_HEURISTIC] = "heuristic",
    [RENDER_POLICY_HUMAN] = "human",
};

static cs_status parse(const char *spec, render_policy_kind *kind, char *err, size_t err_size)
{
    if (!spec)
        spec = "random";
    for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
        if (strcmp(spec, kinds[k]) == 0) {
            *kind = (render_policy_kind)k;
            return CS_OK;
        }
    size_t n = strlen(spec);
    if (strchr(spec, '/') || (n > 4 && strcmp(spec + n - 4, ".pol") == 0))
        return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
                            "policy files ('%s') are not supported here yet; use random, heuristic or human",
                            spec);
    return cs_say(err, err_size, CS_ERR_ARGUMENT, "unknown policy '%s' (random, heuristic or human)", spec);
}

cs_status render_policy_check(const char *spec, char *err, size_t err_size)
{
    render_policy_kind kind;
    return parse(spec, &kind, err, err_size);
}

render_policy_kind render_policy_kind_of(const render_policy *p)
{
    return p->kind;
}

void render_policy_close(render_policy *p)
{
    if (!p)
        return;
    free(p->discrete);
    free(p->box);
    free(p->one);
    free(p->action);
    free(p);
}

cs_status render_policy_open(const char *spec, cs_env *env, uint64_t seed, render_policy **out, char *err,
                             size_t err_size)
{
    *out = NULL;
    render_policy_kind kind;
    cs_status s = parse(spec, &kind, err, err_size);
    if (s != CS_OK)
        return s;
    render_policy *p = calloc(1, sizeof *p);
    if (!p)
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory");
    p->kind = kind;
    if ((s = cs_env_get_info(env, &p->info)) != CS_OK) {
        render_policy_close(p);
        return cs_say(err, err_size, s, "%s", cs_env_error(env));
    }
    p->rule = render_find_rule(&p->info);
    if (kind == RENDER_POLICY_HEURISTIC && (!p->rule || !p->rule->heuristic)) {
        cs_say(err, err_size, CS_ERR_UNAVAILABLE, "no heuristic policy for environment '%s'",
               p->info.name ? p->info.name : "?");
        render_policy_close(p);   /* after the message: it names p's environment */
        return CS_ERR_UNAVAILABLE;
    }
    p->rng = seed ^ UINT64_C(0x6a09e667f3bcc909);
    size_t n = (size_t)p->info.num_envs;
    unsigned dims = p->info.discrete ? 1 : p->info.action_dim;
    if (p->info.discrete)
        p->discrete = calloc(n, sizeof *p->discrete);
    else
        p->box = calloc(n * dims, sizeof *p->box);
    p->one = calloc(p->info.state_dim ? p->info.state_dim : 1, sizeof *p->one);
    p->action = calloc(dims ? dims : 1, sizeof *p->action);
    if ((!p->discrete && !p->box) || !p->one || !p->action) {
        render_policy_close(p);
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory for %zu actions", n);
    }
    *out = p;
    return CS_OK;
}

static uint64_t next_u64(render_policy *p)
{
    uint64_t z = (p->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A box component's bounds; infinite ones are taken as -1..1. */
static void bounds(const render_policy *p, unsigned k, double *lo, double *hi)
{
    *lo = p->info.action_low && isfinite(p->info.action_low[k]) ? p->info.action_low[k] : -1;
    *hi = p->info.action_high && isfinite(p->info.action_high[k]) ? p->info.action_high[k] : 1;
}

/* The human's action in direction drive (-1, 0, +1), into p->action. */
static void human_action(render_policy *p, int drive)
{
    if (p->info.discrete) {
        int32_t last = (int32_t)p->info.n_actions - 1;
        if (drive < 0)
            p->action[0] = 0;
        else if (drive > 0)
            p->action[0] = last;
        else if (p->info.n_actions % 2 == 1)
            p->action[0] = last / 2;                    /* the middle action: no push */
        else
            p->action[0] = p->calls % 2 ? last : 0;    /* no no-op: alternate */
        return;
    }
    for (unsigned k = 0; k < p->info.action_dim; k++) {
        double lo, hi;
        bounds(p, k, &lo, &hi);
        double v = k == 0 && drive < 0 ? lo : k == 0 && drive > 0 ? hi : 0;
        p->action[k] = v < lo ? lo : v > hi ? hi : v;
    }
}

static void store(render_policy *p, int64_t e)
{
    int64_t n = p->info.num_envs;
    if (p->info.discrete) {
        double a = p->action[0];
        int32_t last = (int32_t)p->info.n_actions - 1;
        p->discrete[e] = a >= 0 && a <= last ? (int32_t)a : a > last ? last : 0;
        return;
    }
    for (unsigned k = 0; k < p->info.action_dim; k++) {
        double lo, hi;
        bounds(p, k, &lo, &hi);
        double v = isfinite(p->action[k]) ? p->action[k] : 0;
        p->box[(int64_t)k * n + e] = (float)(v < lo ? lo : v > hi ? hi : v);
    }
}

const void *render_policy_act(render_policy *p, const double *state, int64_t selected, int drive)
{
    int64_t n = p->info.num_envs;
    unsigned dims = p->info.discrete ? 1 : p->info.action_dim;
    for (int64_t e = 0; e < n; e++) {
        switch (p->kind) {
        case RENDER_POLICY_RANDOM:
            if (p->info.discrete) {
                p->action[0] = (double)(((next_u64(p) >> 32) * p->info.n_actions) >> 32);
            } else {
                for (unsigned k = 0; k < dims; k++) {
                    double lo, hi;
                    bounds(p, k, &lo, &hi);
                    p->action[k] = lo + (hi - lo) * ((double)(next_u64(p) >> 11) * 0x1p-53);
                }
            }
            break;
        case RENDER_POLICY_HEURISTIC:
            for (unsigned d = 0; d < p->info.state_dim; d++)
                p->one[d] = state[(int64_t)d * n + e];
            for (unsigned k = 0; k < dims; k++)
                p->action[k] = 0;
            p->rule->heuristic(p->one, p->action);
            break;
        case RENDER_POLICY_HUMAN:
            human_action(p, e == selected ? drive : 0);
            break;
        }
        store(p, e);
    }
    p->calls++;
    return p->info.discrete ? (const void *)p->discrete : (const void *)p->box;
}
