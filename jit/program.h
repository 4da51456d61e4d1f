/* A lane program: what the compiler compiles. One step function over N
 * independent lanes, each with carried values, plus the graph that gives a lane
 * a fresh start (the reset) when its `done` condition holds.
 *
 * Everything is a node of one graph. Step-side nodes may read CARRIED (the
 * value before the step), INPUT (the per-step inputs: an action), PARAM,
 * SEGSTEP and UNIFORM draws of the step stream; restart-side nodes read PARAM
 * and UNIFORM draws of the restart stream. Observations are written as
 * functions of CARRIED (an observation of a state); the program holds them
 * already substituted for the state after a step and after a restart.
 */
#ifndef CS_PROGRAM_H
#define CS_PROGRAM_H

#include "ir.h"

/* UNIFORM's imm.i: stream in the high bits, draw number in the low 32 (a
 * stream's 65536 draws and, after them, the random policy's). */
enum { CS_STREAM_STEP = 0, CS_STREAM_RESTART = 1 };
#define CS_UNIFORM_ID(stream, k) (((int64_t)(stream) << 32) | (int64_t)(k))
#define CS_UNIFORM_STREAM(imm) ((int)((imm) >> 32))
#define CS_UNIFORM_DRAW(imm) ((unsigned)((imm) & 0xffffffff))

#define CS_NAME_MAX 48

typedef struct {
    char name[CS_NAME_MAX];
    cs_type type;
} cs_slot;

typedef enum { CS_ACTION_DISCRETE, CS_ACTION_BOX } cs_action_kind;

/* A policy the source declares (`policy NAME { action = ... }`): a node per
 * input over CARRIED and PARAM, ready to become the program's `policy`. */
typedef struct {
    char name[CS_NAME_MAX];
    cs_node *action;              /* [n_inputs] */
} cs_named_policy;

typedef struct cs_program {
    cs_graph *graph;
    cs_type real;                 /* CS_F32 or CS_F64, fixed per compile */
    bool fast_f64;                /* f64 math by jit/mathd.h, not glibc (cs_config.math) */

    unsigned n_carried;
    cs_slot *carried;
    cs_node *next;                /* [n_carried] value after one step */
    cs_node *restart;             /* [n_carried] fresh value */

    unsigned n_obs;
    cs_node *obs;                 /* [n_obs] over CARRIED */
    cs_node *obs_next;            /* [n_obs] of the state after the step */
    cs_node *obs_restart;         /* [n_obs] of the fresh state */

    cs_node reward;               /* real */
    cs_node terminated;           /* bool */
    cs_node truncated;            /* bool */

    /* The inputs (action components). A rollout computes them in the kernel
     * from `policy` (over CARRIED, PARAM, step-stream UNIFORM); 0 there means
     * the program has no in-kernel policy yet. */
    cs_action_kind action_kind;
    unsigned n_actions;           /* discrete: number of choices */
    unsigned n_inputs;            /* components per step (1 for discrete) */
    cs_slot *inputs;              /* i32 for discrete, real for box */
    double *input_low, *input_high;
    cs_node *policy;              /* [n_inputs] */
    /* The step with the policy spliced in for the inputs: what a rollout
     * computes (cs_program_bind_policy). */
    cs_node *roll_next;           /* [n_carried] */
    cs_node roll_reward, roll_terminated, roll_truncated;

    /* Per-lane parameters, read from buffers (domain randomization, policy
     * weights). param_restart[k] != 0 redraws it at every restart. */
    unsigned n_params;
    cs_slot *params;
    cs_node *param_restart;

    /* The policies the source declares, in declaration order. */
    unsigned n_named;
    cs_named_policy *named;

    /* Draws per step in each stream: one past the largest draw number used. */
    unsigned n_step_draws, n_restart_draws;

    /* Facts about the environment, carried through to the runtime. */
    char name[CS_NAME_MAX];       /* short name, e.g. "cartpole" */
    char title[CS_NAME_MAX];      /* e.g. "CartPole-v1" */
    int64_t max_steps;            /* truncation limit; 0 = none */
    double reward_threshold;      /* NaN when not declared */
} cs_program;

/* Allocation helpers (jit/program.c). A program owns its graph. */
cs_program *cs_program_new(cs_type real);
void cs_program_free(cs_program *p);
/* Append a slot; returns its index or -1 when out of memory. */
int cs_program_add_carried(cs_program *p, const char *name, cs_type t);
int cs_program_add_input(cs_program *p, const char *name, cs_type t, double low, double high);
int cs_program_add_param(cs_program *p, const char *name, cs_type t);
int cs_program_add_obs(cs_program *p, cs_node over_carried);
/* A declared policy with every action node 0 (the inputs must exist). Its
 * index, or -1 when out of memory. */
int cs_program_add_named(cs_program *p, const char *name);
/* The declared policy of that name, or NULL. */
const cs_named_policy *cs_program_find_named(const cs_program *p, const char *name);
/* Derive obs_next/obs_restart, truncated (from max_steps), the draw counts;
 * checks that every slot has a node. Returns 0, or where the fault lies with
 * the reason in err: CS_FINISH_RESET, CS_FINISH_STEP (a block lacks a value),
 * CS_FINISH_PROGRAM (no action, or building the program failed). */
#define CS_FINISH_PROGRAM (-1)
#define CS_FINISH_RESET (-2)
#define CS_FINISH_STEP (-3)
int cs_program_finish(cs_program *p, char *err, size_t err_size);

/* Sets roll_* from next/reward/terminated/truncated with every INPUT k
 * replaced by policy[k], and recounts the draws. 0, or -1. */
int cs_program_bind_policy(cs_program *p);

/* Calls visit on every non-zero root slot (next, restart, obs*, policy,
 * param_restart, reward, terminated, truncated, the declared policies'
 * actions): how passes rewrite them. */
void cs_program_visit_roots(cs_program *p, void (*visit)(void *ctx, cs_node *root), void *ctx);

/* Marks in `live` (cs_graph_count entries, zeroed) every node the roots
 * reach, in one downward sweep (operands have smaller ids: no recursion);
 * returns the largest operand count among them. */
unsigned cs_program_mark_live(const cs_program *p, bool *live);
/* A pass's rule for one live node `d` whose operands are already rewritten
 * to `in`: the node to use instead, 0 to keep it (rebuilt on `in` if they
 * changed), or CS_REWRITE_FAILED when memory ran out. */
#define CS_REWRITE_FAILED UINT32_MAX
typedef cs_node (*cs_rewrite_rule)(void *ctx, cs_graph *g, const cs_node_data *d, const cs_node *in);
/* Applies `rule` to every live node in id order (no recursion) and remaps the
 * roots; returns how many nodes the rule replaced, or -1. */
int cs_program_rewrite(cs_program *p, cs_rewrite_rule rule, void *ctx);

/* Every root r becomes map[r]: how a pass that rebuilt nodes commits. */
void cs_program_remap_roots(cs_program *p, const cs_node *map);

#endif
