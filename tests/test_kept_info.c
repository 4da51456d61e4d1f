/* Kept state variables and info values, on the interpreter (the reference):
 * a kept counter survives every auto-reset (step API in both modes, rollout)
 * and takes its reset value only at an explicit reset; an info value is the
 * step's, or the restart's where a lane restarted; an observation may not
 * read a kept variable. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jit.h"

/* x counts up by the action (0 or 1) and ends at 3; `episodes` (kept) counts
 * the episodes that ended; info "gain" is the action as a real in a step,
 * -1 at a restart, and "twice" the i32 vector (x, 2x) after the step. */
static cs_program *counter(bool observe_kept)
{
    cs_program *p = cs_program_new(CS_F64);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "counter");
    int x = cs_program_add_state(p, "x", CS_I32, CS_SCALAR);
    int ep = cs_program_add_state(p, "episodes", CS_I32, CS_SCALAR);
    cr_assert(x == 0 && ep == 1);
    p->vars[ep].kept = true;
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 2;
    cs_program_add_input(p, "action", CS_I32, 0, 1);
    cs_node X = cs_leaf(g, CS_OP_CARRIED, CS_I32, 0), E = cs_leaf(g, CS_OP_CARRIED, CS_I32, 1);
    cs_node a = cs_leaf(g, CS_OP_INPUT, CS_I32, 0);
    cs_node nx = cs_binary(g, CS_OP_ADD, X, a);
    cs_node done = cs_binary(g, CS_OP_GE, nx, cs_const(g, CS_I32, 3));
    p->next[x] = nx;
    p->next[ep] = cs_binary(g, CS_OP_ADD, E, cs_cast(g, CS_I32, done));
    p->restart[x] = cs_const(g, CS_I32, 0);
    p->restart[ep] = cs_const(g, CS_I32, 0);
    p->reward = cs_const(g, CS_F64, 1);
    p->terminated = done;
    int gain = cs_program_add_info(p, "gain", CS_F64, CS_SCALAR);
    unsigned two[1] = {2};
    int twice = cs_program_add_info(p, "twice", CS_I32, cs_shape_id(g, 1, two));
    cr_assert(gain == 0 && twice == 1);
    p->info_items[gain].step = cs_cast(g, CS_F64, a);
    p->info_items[gain].restart = cs_const(g, CS_F64, -1);
    cs_node pair[2] = {nx, cs_binary(g, CS_OP_MUL, nx, cs_const(g, CS_I32, 2))};
    cs_node zeros[2] = {cs_const(g, CS_I32, 0), cs_const(g, CS_I32, 0)};
    p->info_items[twice].step = cs_stack(g, 2, pair);
    p->info_items[twice].restart = cs_stack(g, 2, zeros);
    cs_program_add_obs(p, "x", observe_kept ? E : X, CS_OBS_DISCRETE, 0, 0, 4);
    return p;
}

typedef struct {
    int x[4], ep[4], segstep[4];
    void *carried[2];
    int32_t actions[4];
    void *inputs[1];
    float obs[1];
    long long obs_int[4], final_obs_int[4];
    double reward[4], info[3 * 4], final_info[3 * 4], seg_return[4], return_sum[4];
    unsigned char terminated[4], truncated[4], pending[4], ep_bool[4];
    long long segments[4], nonfinite[4];
    cs_lanes l;
} lanes4;

static void lanes_init(lanes4 *b)
{
    memset(b, 0, sizeof *b);
    b->carried[0] = b->x;
    b->carried[1] = b->ep;
    b->inputs[0] = b->actions;
    b->l = (cs_lanes){.begin = 0, .end = 4, .stride = 4, .carried = b->carried, .segstep = b->segstep,
                      .inputs = b->inputs, .obs = b->obs, .obs_int = b->obs_int, .final_obs_int = b->final_obs_int,
                      .info = b->info, .final_info = b->final_info, .reward = b->reward, .terminated = b->terminated, .truncated = b->truncated,
                      .pending = b->pending, .seg_return = b->seg_return, .segments = b->segments,
                      .return_sum = b->return_sum, .nonfinite = b->nonfinite};
}

static cs_program *finished(bool observe_kept)
{
    cs_program *p = counter(observe_kept);
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    return p;
}

Test(kept_info, a_kept_counter_survives_auto_resets_in_both_step_modes)
{
    for (int mode = CS_MODE_SAME_STEP; mode <= CS_MODE_NEXT_STEP; mode++) {
        cs_program *p = finished(false);
        lanes4 b;
        lanes_init(&b);
        b.ep[0] = b.ep[1] = b.ep[2] = b.ep[3] = 7;   /* an explicit reset clears it */
        cs_interp_restart(p, &b.l);
        for (int i = 0; i < 4; i++) {
            cr_assert_eq(b.ep[i], 0);
            cr_assert_eq(b.info[0 * 4 + i], -1, "a restart's info");
        }
        b.l.mode = mode;
        /* lane i steps with action 1 every step except lane 3 (0): lanes 0-2 end every third step */
        for (int t = 0; t < 12; t++) {
            for (int i = 0; i < 4; i++)
                b.actions[i] = i < 3;
            b.l.t = t;
            cs_interp_step(p, &b.l);
            for (int i = 0; i < 3; i++) {
                /* next-step: the pending restart's step; same-step: the step that ended, its
                 * own info kept in final_info */
                bool restarted = mode == CS_MODE_NEXT_STEP ? t % 4 == 3 : t % 3 == 2;
                cr_assert_eq(b.info[0 * 4 + i], restarted ? -1 : 1, "mode %d t %d lane %d gain", mode, t, i);
                if (mode == CS_MODE_SAME_STEP && restarted) {
                    cr_assert_eq(b.final_info[0 * 4 + i], 1);
                    cr_assert_eq(b.final_info[1 * 4 + i], 3, "twice = (3, 6) at the end");
                    cr_assert_eq(b.final_info[2 * 4 + i], 6);
                }
            }
            cr_assert_eq(b.info[0 * 4 + 3], 0);
            cr_assert_eq(b.info[1 * 4 + 3], 0);   /* twice = (x, 2x) = (0, 0) */
            cr_assert_eq(b.info[2 * 4 + 3], 0);
        }
        /* same-step: 4 episodes of 3 steps; next-step: 3 episodes of 3 steps + a restart step */
        int want = mode == CS_MODE_SAME_STEP ? 4 : 3;
        for (int i = 0; i < 3; i++)
            cr_assert_eq(b.ep[i], want, "mode %d lane %d: %d episodes counted", mode, i, b.ep[i]);
        cr_assert_eq(b.ep[3], 0);
        b.l.mode = CS_RESTART_EXPLICIT;
        cs_interp_restart(p, &b.l);
        cr_assert_eq(b.ep[0], 0, "an explicit reset gives the reset value");
        cs_program_free(p);
    }
}

Test(kept_info, a_rollout_keeps_the_counter_across_its_restarts)
{
    cs_program *p = finished(false);
    p->policy[0] = cs_const(p->graph, CS_I32, 1);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    lanes4 b;
    lanes_init(&b);
    cs_interp_restart(p, &b.l);
    b.l.steps = 30;
    cs_interp_rollout(p, &b.l);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(b.segments[i], 10);
        cr_assert_eq(b.ep[i], 10, "the kept counter counted every episode");
    }
    b.l.mode = CS_RESTART_AUTO;   /* a pending restart handed to the restart entry: kept */
    cs_interp_restart(p, &b.l);
    cr_assert_eq(b.ep[0], 10);
    cs_program_free(p);
}

Test(kept_info, an_observation_of_a_kept_variable_is_refused)
{
    cs_program *p = counter(true);
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), CS_FINISH_PROGRAM);
    cr_assert(strstr(err, "kept"), "%s", err);
    cs_program_free(p);
}

Test(kept_info, an_info_value_needs_both_of_its_values)
{
    cs_program *p = counter(false);
    p->info_items[1].restart = 0;
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), CS_FINISH_RESET);
    cr_assert(strstr(err, "info 'twice'"), "%s", err);
    cs_program_free(p);
}

/* ---- through the language and the public API (tests/envs/tally.env) ---- */

#include "cartsim.h"

static cs_env *open_tally(int64_t n, cs_autoreset autoreset)
{
    static char path[4096];
    const char *root = getenv("CARTSIM_ROOT");
    snprintf(path, sizeof path, "%s/tests/envs/tally.env", root ? root : ".");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = n;
    cfg.backend = CS_BACKEND_INTERP;
    cfg.autoreset = autoreset;
    cfg.threads = 1;
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    return env;
}

Test(kept_info, the_language_declares_info_and_kept_states)
{
    cs_env *env = open_tally(2, CS_AUTORESET_NEXT_STEP);
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
    cr_assert_eq(info.n_info_items, 2);
    cr_assert_eq(info.info_dim, 3);
    cs_info_item_desc d;
    cr_assert_eq(cs_env_info_item(env, 1, &d), CS_OK);
    cr_assert_str_eq(d.name, "allowed");
    cr_assert(d.type == CS_VALUE_BOOL && d.rank == 1 && d.dims[0] == 2 && d.offset == 1 && d.size == 2);
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    const double *v = cs_env_info_values(env);
    cr_assert(v && v[0] == 1 && v[1] == 1 && v[2 * 2] == 1, "the reset's info");
    int32_t a[2] = {1, 1};
    int ended = 0;
    for (int t = 0; t < 40; t++) {
        cr_assert_eq(cs_env_step_discrete(env, a), CS_OK);
        ended += cs_env_terminated(env)[0];
        v = cs_env_info_values(env);
        cr_assert(v[0] == 1.0 || v[0] == 0.25 || v[0] == 0.75, "prob %g", v[0]);
    }
    double state[2 * 2];
    cr_assert_eq(cs_env_get_state(env, state), CS_OK);
    cr_assert_eq(state[1 * 2 + 0], ended, "the kept tally counts every episode: %g of %d", state[2], ended);
    cr_assert_gt(ended, 2);
    cs_env_close(env);
}

static const char *parse_error(const char *src)
{
    static char err[512];
    cs_program *p = NULL;
    int rc = cs_parse(src, strlen(src), "t.env", CS_F64, NULL, 0, &p, err, sizeof err);
    cs_program_free(p);
    return rc ? err : "";
}

#define HEAD "env t \"T\"\nstate x: int\naction discrete 2\nobserve x\n"

Test(kept_info, mistakes_with_info_and_keep)
{
    cr_assert_str_eq(parse_error(HEAD "info p\nreset { x = 0 }\nstep { x' = x; reward = 1.0; terminated = false; p = 0.5 }\n"),
                     "t.env:6:1: reset does not assign info 'p' (both reset and step assign every info value)");
    cr_assert_str_eq(parse_error(HEAD "info p\nreset { x = 0; p = 1.0 }\nstep { x' = x; reward = 1.0; terminated = false }\n"),
                     "t.env:7:1: step does not assign info 'p' (both reset and step assign every info value)");
    cr_assert_str_eq(parse_error(HEAD "info p\nreset { x = 0; p = 1.0; p = 2.0 }\n"),
                     "t.env:6:25: info 'p' is assigned twice");
    cr_assert_str_eq(parse_error(HEAD "info p: int\nreset { x = 0; p = 1.5 }\n"),
                     "t.env:6:16: info 'p' must be int, got real (convert it with int(...))");
    cr_assert_str_eq(parse_error(HEAD "info p\nreset { x = 0; q = p; p = 1.0 }\n"),
                     "t.env:6:20: info 'p' is read before it is assigned");
    cr_assert_str_eq(parse_error(HEAD "keep y\n"), "t.env:5:6: 'y' is not a state: only states can be kept");
    cr_assert_str_eq(parse_error(HEAD "keep x, x\n"), "t.env:5:9: state 'x' is kept twice");
    cr_assert_str_eq(parse_error("env t \"T\"\nkeep x\n"), "t.env:2:1: declare 'state' before 'keep'");
    cr_assert_str_eq(parse_error(HEAD "reset { x = 0 }\ninfo p\n"),
                     "t.env:6:6: declare info 'p' before reset and step (both assign it)");
    /* a kept state cannot be observed */
    const char *kept = "env t \"T\"\nstate x: int\nkeep x\naction discrete 2\nobserve x\nreset { x = 0 }\n"
                       "step { x' = x; reward = 1.0; terminated = false }\n";
    cr_assert(strstr(parse_error(kept), "an observation reads a kept state"), "%s", parse_error(kept));
}
