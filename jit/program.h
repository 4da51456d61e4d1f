/* A lane program: what the compiler compiles. One step function over N
 * independent lanes, each with carried values, plus the graph that gives a lane
 * a fresh start (the reset) when its `done` condition holds.
 *
 * Everything is a node of one graph. Step-side nodes may read CARRIED (the
 * value before the step), INPUT (the per-step inputs: an action), PARAM,
 * SEGSTEP and UNIFORM/RANDBITS draws of the step stream; restart-side nodes
 * read PARAM and draws of the restart stream. Observations are written as
 * functions of CARRIED (an observation of a state); the program holds them
 * already substituted for the state after a step and after a restart.
 *
 * The state is a list of variables, each a scalar or an array of one type
 * (real, i32 or bool), stored in consecutive scalar slots: the runtime's
 * buffers are per slot ([slot][lane], struct of arrays), so element k of
 * every environment is contiguous. Roots (next, restart) are per variable.
 */
#ifndef CS_PROGRAM_H
#define CS_PROGRAM_H

#include "ir.h"

/* UNIFORM's and RANDBITS's imm.i: stream in the high bits, the first draw
 * number in the low 32 (a stream's 65536 draws and, after them, the random
 * policy's; element e of an array draw is draw number k + e). */
enum { CS_STREAM_STEP = 0, CS_STREAM_RESTART = 1 };
#define CS_UNIFORM_ID(stream, k) (((int64_t)(stream) << 32) | (int64_t)(k))
#define CS_UNIFORM_STREAM(imm) ((int)((imm) >> 32))
#define CS_UNIFORM_DRAW(imm) ((unsigned)((imm) & 0xffffffff))

#define CS_NAME_MAX 48

typedef struct {
    char name[CS_NAME_MAX];   /* a state slot: "x", or "grid[2,3]" for an element */
    cs_type type;
} cs_slot;

/* A state variable: slots [slot, slot + size) hold its elements, row-major.
 * A kept one keeps its value through an auto-reset (an episode ending in a
 * step or rollout): only an explicit reset gives it its reset value (gymnax's
 * DeepSea counts bad episodes across episodes so). */
typedef struct {
    char name[CS_NAME_MAX];
    cs_type type;             /* CS_BOOL, CS_I32 or the program's real */
    uint32_t shape;           /* the graph's shape id (CS_SCALAR: one slot) */
    unsigned slot, size;
    bool kept;
} cs_state_var;

/* An info value: what a step (and a restart) reports beside the observation,
 * Gymnasium's info dict (toy text's "prob", Taxi's "action_mask"). Its
 * elements go to the info buffer ([n_info][lane], doubles: ints and bools
 * exactly) from `offset`. */
typedef struct {
    char name[CS_NAME_MAX];
    cs_type type;             /* CS_BOOL, CS_I32 or the program's real */
    uint32_t shape;
    cs_node step;             /* over the step's values (CARRIED, INPUT, draws, ...) */
    cs_node restart;          /* over the restart's */
    unsigned offset, size;
} cs_info_item;

/* An observation: one value of any shape, and the space it is observed in.
 * Box items go to the float buffer ([n_obs][lane]), discrete ones to the
 * int64 buffer ([n_obs_int][lane]), elements row-major from `offset`. */
typedef enum { CS_OBS_BOX, CS_OBS_DISCRETE } cs_obs_space;

typedef struct {
    char name[CS_NAME_MAX];   /* the expression's text when it is a name, else "" */
    cs_node node;             /* over CARRIED */
    cs_node next, restart;    /* of the state after the step; of the fresh state */
    uint32_t shape;
    cs_obs_space space;
    double low, high;         /* box bounds (-inf and inf when none are declared) */
    int64_t n;                /* discrete: the values are 0 .. n - 1 */
    unsigned offset, size;    /* elements, in the buffer of its space */
} cs_obs_item;

typedef enum { CS_ACTION_DISCRETE, CS_ACTION_BOX } cs_action_kind;

/* A picture: the source's draw block (docs/dsl.md, "Pictures"). Each item is
 * one statement, drawing `count` shapes (one per component of its vector
 * attributes) whose values are the roots draw[first .. first + count *
 * per_shape), shape after shape. render/picture.c evaluates them for each
 * drawn lane and draws each kind. ORDER DRAW: the attributes of each kind,
 * in the order the roots hold them. */
typedef enum {
    CS_DRAW_RECT,       /* x0, y0, x1, y1, colour */
    CS_DRAW_POLYGON,    /* x, y, angle, colour, then x and y of each corner around (x, y) */
    CS_DRAW_CIRCLE,     /* x, y, radius, colour */
    CS_DRAW_LINE,       /* x0, y0, x1, y1, colour */
    CS_DRAW_CURVE,      /* colour, then x and y of each point */
    CS_DRAW_TEXT,       /* x, y, size, colour, then each number the text shows */
    CS_DRAW_GRID,       /* x, y, cell width, cell height, then the cells' colours, row after row */
    CS_DRAW_KIND_COUNT
} cs_draw_kind;

/* The first draw roots, whatever the items: the canvas's background colour
 * and the view (the world's x from x_min to x_max spans the width, y_min is
 * at the bottom edge). */
enum { CS_DRAW_BACKGROUND, CS_DRAW_X_MIN, CS_DRAW_X_MAX, CS_DRAW_Y_MIN, CS_DRAW_VIEW_ROOTS };

/* In a text's string, where the next number goes. */
#define CS_DRAW_NUMBER '\x01'

typedef struct {
    cs_draw_kind kind;
    unsigned first, count, per_shape;
    unsigned rows, columns;       /* GRID: the cells, per_shape - 4 of them */
    char *text;                   /* TEXT: its string, CS_DRAW_NUMBER for each number (owned) */
} cs_draw_item;

/* A policy the source declares (`policy NAME { action = ... }`): a node per
 * input over CARRIED and PARAM, ready to become the program's `policy`. */
typedef struct {
    char name[CS_NAME_MAX];
    cs_node *action;              /* [n_inputs] */
} cs_named_policy;

/* A run-time index of the step (a gather's or set()'s), where strict mode
 * checks it (cs_program_add_index_faults). */
typedef struct {
    cs_node index;                /* the i32 index */
    unsigned dim;                 /* the length of the axis it indexes */
    char where[24];               /* "LINE:COL" of the index expression */
} cs_index_site;

typedef struct cs_program {
    cs_graph *graph;
    cs_type real;                 /* CS_F32 or CS_F64, fixed per compile */
    bool fast_f64;                /* f64 math by jit/mathd.h, not glibc (cs_config.math) */

    unsigned n_carried;           /* slots */
    cs_slot *carried;             /* [n_carried] */
    unsigned n_vars;
    cs_state_var *vars;           /* [n_vars] */
    cs_node *next;                /* [n_vars] value after one step */
    cs_node *restart;             /* [n_vars] fresh value */

    unsigned n_info;              /* info elements */
    unsigned n_info_items;
    cs_info_item *info_items;     /* [n_info_items] */

    unsigned n_obs;               /* float observation elements (box items) */
    unsigned n_obs_int;           /* int64 observation elements (discrete items) */
    unsigned n_obs_items;
    cs_obs_item *obs_items;       /* [n_obs_items] */

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
    cs_node *roll_next;           /* [n_vars] */
    cs_node roll_reward, roll_terminated, roll_truncated;

    /* Per-lane parameters, read from buffers (domain randomization, policy
     * weights). param_restart[k] != 0 redraws it at every restart.
     * param_shared[k]: one value for every lane, read from element 0 of
     * its buffer (weights a whole batch shares: a broadcast, not a load per
     * lane); never redrawn. */
    unsigned n_params;
    cs_slot *params;
    cs_node *param_restart;
    bool *param_shared;

    /* What a rollout records at every step (a trainer's trajectories):
     * record[k] is a root of the rollout step, over what it reads (INPUT
     * too: cs_program_bind_policy puts the policy in, as in roll_next),
     * stored into the caller's buffer k (cs_lanes.record) at [step][lane]:
     * a float for a real, an int for i32 and bool. Rollouts only. */
    unsigned n_records;
    cs_slot *records;
    cs_node *record;

    /* The policies the source declares, in declaration order. */
    unsigned n_named;
    cs_named_policy *named;

    /* The picture; canvas_width 0 when the source has no draw block. */
    int canvas_width, canvas_height, fps;
    unsigned n_draw;
    cs_node *draw;                /* [n_draw]: CS_DRAW_VIEW_ROOTS, then the items' values */
    unsigned n_draw_items;
    cs_draw_item *draw_items;

    /* The step's run-time indices, in source order (recorded always), and
     * in strict mode (cs_program_add_index_faults) the step roots that name
     * the first one out of range: index_fault[0] is 1 + its site (i32, 0:
     * none), index_fault[1] its value; roll_index_fault with the policy in.
     * 0 when not strict: the step is then as without them. */
    unsigned n_index_sites;
    cs_index_site *index_sites;
    cs_node index_fault[2], roll_index_fault[2];
    char *source_name;            /* strict: the file the sites are in, for messages */

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
/* Append a state variable of type t and shape (its slots after the last
 * one's); returns its index, or -1 when out of memory or past 2^31 slots. */
int cs_program_add_state(cs_program *p, const char *name, cs_type t, uint32_t shape);
/* Append an info value of type t and shape (its step and restart nodes 0
 * until set). Returns its index, or -1 when out of memory. */
int cs_program_add_info(cs_program *p, const char *name, cs_type t, uint32_t shape);
/* Append a slot; returns its index or -1 when out of memory. */
int cs_program_add_input(cs_program *p, const char *name, cs_type t, double low, double high);
int cs_program_add_param(cs_program *p, const char *name, cs_type t);
/* Append an observation of `over_carried` in a box (CS_OBS_BOX, low/high)
 * or discrete space (n); its offset follows the items of its space before
 * it. Returns its index, or -1 when out of memory. */
int cs_program_add_obs(cs_program *p, const char *name, cs_node over_carried, cs_obs_space space, double low,
                       double high, int64_t n);
/* The scalar node of float observation element k over CARRIED (built when
 * the item is an array): what a policy reads. 0 when k is out of range or
 * building failed. */
cs_node cs_program_obs_element(cs_program *p, unsigned k);
/* The same of the state after the step (after cs_program_finish). */
cs_node cs_program_obs_next_element(cs_program *p, unsigned k);
/* A parameter every lane reads at element 0 (param_shared). */
int cs_program_add_shared_param(cs_program *p, const char *name, cs_type t);
/* A record named `name` of the value `root` (its type the node's). */
int cs_program_add_record(cs_program *p, const char *name, cs_node root);
/* A declared policy with every action node 0 (the inputs must exist). Its
 * index, or -1 when out of memory. */
int cs_program_add_named(cs_program *p, const char *name);
/* The picture's pieces: n more draw roots, zeroed (the first one's index),
 * and an item (its index; the program owns its text from then on); -1 when
 * out of memory. */
int cs_program_add_draw_roots(cs_program *p, unsigned n);
int cs_program_add_draw_item(cs_program *p, const cs_draw_item *item);
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

/* Records a run-time index of the step (lower.c). 0, or -1 when out of memory. */
int cs_program_add_index_site(cs_program *p, cs_node index, unsigned dim, const char *where);
/* Strict mode: builds index_fault from the sites, which the kernels store
 * into cs_lanes.index_fault (the first per lane), and names the file. Before
 * cs_program_bind_policy. 0, or -1 when out of memory. */
int cs_program_add_index_faults(cs_program *p, const char *source_name);

/* Sets roll_* from next/reward/terminated/truncated with every INPUT k
 * replaced by policy[k], does the same to the records, and recounts the
 * draws. 0, or -1. */
int cs_program_bind_policy(cs_program *p);

/* Calls visit on every non-zero root (next, restart, the observations'
 * node, next and restart, the info values' step and restart, policy,
 * param_restart, reward, terminated, truncated, the records, the declared
 * policies' actions, the picture's values): how passes rewrite them. */
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
