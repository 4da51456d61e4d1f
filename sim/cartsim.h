/* cartsim: thousands of reinforcement-learning environments stepped at once by
 * one fused, JIT-compiled kernel.
 *
 * A complete program (tests/example.c builds and runs this very code):
 *
 *     #include <cartsim.h>
 *     #include <stdio.h>
 *
 *     int main(void)
 *     {
 *         cs_config cfg;
 *         cs_config_init(&cfg);
 *         cfg.env = "cartpole";              // a name from envs/, or a path to a .env file
 *         cfg.num_envs = 8;
 *
 *         cs_env *env;
 *         if (cs_env_open(&cfg, &env) != CS_OK) {
 *             fprintf(stderr, "cartsim: %s\n", env ? cs_env_error(env) : "out of memory");
 *             cs_env_close(env);
 *             return 1;
 *         }
 *         cs_env_reset(env, 42);
 *         int32_t actions[8];
 *         double total = 0;
 *         for (int t = 0; t < 100; t++) {
 *             const float *obs = cs_env_obs(env);        // [obs_dim][num_envs]
 *             for (int i = 0; i < 8; i++)
 *                 actions[i] = obs[2 * 8 + i] > 0;       // push toward the pole's lean
 *             cs_env_step_discrete(env, actions);
 *             for (int i = 0; i < 8; i++)
 *                 total += cs_env_rewards(env)[i];
 *         }
 *         cs_rollout_stats stats;                      // 10,000 fused steps, random policy
 *         cs_env_rollout(env, 10000, &stats);
 *         printf("return %.0f, %lld episodes\n", total, (long long)stats.episodes);
 *         cs_env_close(env);
 *         return 0;
 *     }
 *
 * Conventions: every function returns a cs_status (or a value that cannot
 * fail). The library never prints and never exits. Where the message of a
 * failure goes:
 *   - a call on a handle (cs_env, cs_renderer; cs_evaluate too) keeps it on the handle:
 *     cs_env_error(), cs_renderer_error(); the opening calls hand out a
 *     handle holding the message even when they fail;
 *   - a call without a handle (cs_dump, cs_train, cs_policy_load,
 *     cs_config_set, ...) writes it into the caller's buffer, its last two
 *     parameters `char *err, size_t err_size`: NUL-terminated, cut to fit,
 *     "" on success; err NULL or err_size 0: no message. Nothing to free. Buffers are struct-of-arrays: component k of
 * environment i is at [k * num_envs + i]. Returned pointers stay valid until
 * the next call on the same handle. A handle is used by one thread at a time
 * (the Python package takes a lock per batch); different handles are
 * independent. Files the library writes (policy files, frames, videos, the
 * kernel cache) replace only a regular file, through a temporary renamed into
 * place (docs/hardening.md, "Output files"). Past a file size limit a write
 * kills the process with SIGXFSZ unless the program ignores that signal, as
 * the cartsim program and Python do: then it fails with EFBIG, reported.
 */
#ifndef CARTSIM_H
#define CARTSIM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every function this header declares is exported from libcartsim.so, and
 * nothing else is: the library is compiled with -fvisibility=hidden, and a
 * declaration seen here gives its definition default visibility. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define CS_VERSION_MAJOR 1
#define CS_VERSION_MINOR 0
#define CS_VERSION_PATCH 0
#define CS_VERSION_STRING "1.0.0"

const char *cs_version(void);

typedef enum {
    CS_OK = 0,
    CS_ERR_ARGUMENT,     /* a bad argument or configuration value */
    CS_ERR_PARSE,        /* the .env source is malformed ("file:line:col: ...") */
    CS_ERR_NOT_FOUND,    /* no such environment or file */
    CS_ERR_COMPILE,      /* the kernel did not compile */
    CS_ERR_UNAVAILABLE,  /* the backend cannot run here (no GPU, no compiler) */
    CS_ERR_NUMERIC,      /* strict mode: a state became NaN or infinite */
    CS_ERR_LIMIT,        /* a size or count beyond what can be held */
    CS_ERR_IO,           /* reading or writing a file failed */
    CS_ERR_NOMEM,
    CS_ERR_STATE,        /* called in the wrong order (step before reset) or on a failed handle */
    CS_ERR_TIMEOUT,      /* a time limit passed (the C compiler's: cs_config.cc_timeout_s) */
    CS_ERR_INTERRUPTED,  /* a signal caught while the C compiler ran stopped it */
    CS_STATUS_COUNT
} cs_status;

const char *cs_status_string(cs_status s);

typedef enum { CS_BACKEND_AUTO, CS_BACKEND_CPU, CS_BACKEND_CUDA, CS_BACKEND_INTERP, CS_BACKEND_COUNT } cs_backend;
typedef enum { CS_FUSION_FULL, CS_FUSION_RULES, CS_FUSION_NONE, CS_FUSION_COUNT } cs_fusion;
typedef enum { CS_DTYPE_F32, CS_DTYPE_F64 } cs_dtype;
/* How f64 computes sin, cos, tan, exp, log, tanh, atan2, pow, fmod and %:
 * EXACT with glibc's functions (Gymnasium's bits; a scalar pass of their
 * own on the cpu), FAST with cartsim's branch-free ones (jit/mathd.h, each
 * within the ULP bound docs/math.md states), which vectorize. f32 always
 * computes with cartsim's own (jit/mathf.h). */
typedef enum { CS_MATH_EXACT, CS_MATH_FAST } cs_math;
typedef enum { CS_AUTORESET_NEXT_STEP, CS_AUTORESET_SAME_STEP, CS_AUTORESET_DISABLED } cs_autoreset;

const char *cs_backend_name(cs_backend b);
const char *cs_fusion_name(cs_fusion f);

/* The limits of cs_config's settings (cs_config_set and cs_env_open check them). */
#define CS_MAX_PARAM_OVERRIDES 64
#define CS_MAX_ENVS INT32_MAX   /* num_envs */
#define CS_MAX_UNROLL 1024
#define CS_MAX_THREADS 256
#define CS_MAX_BLOCK 1024       /* CUDA threads per block */
#define CS_MAX_DEVICE (1 << 20) /* a CUDA device ordinal (taken modulo the devices there are) */
#define CS_MAX_CC_TIMEOUT_S 1000000000        /* seconds */
#define CS_MAX_CACHE_MAX_MB (INT64_C(1) << 40) /* MiB */

typedef struct {
    const char *env;            /* "cartpole" (or its Gymnasium id "CartPole-v1"), or a path ending in .env */
    const char *env_dir;        /* where names are looked up; NULL: $CARTSIM_ENV_DIR, then the built-in list */
    /* Every setting's default, range and meaning: `cartsim --print-config`,
     * `cartsim COMMAND --help`, or cs_config_setting_at (the one table that
     * declares them; cs_config_init applies its defaults). */
    int64_t num_envs;
    cs_backend backend;
    cs_fusion fusion;
    cs_dtype dtype;
    cs_math math;               /* f64's library functions (EXACT: glibc's) */
    int unroll;                 /* steps per loop iteration */
    int threads;                /* 0: every core, for calls with the work to pay for waking them
                                   (64K env-steps a thread); N: N, whatever the call */
    int block;                  /* CUDA threads per block; 0: from the occupancy API */
    int device;                 /* CUDA device ordinal, taken modulo the devices there are (so a
                                   rank's index on its node picks one GPU each) */
    cs_autoreset autoreset;     /* the default is Gymnasium's */
    const char *params[CS_MAX_PARAM_OVERRIDES];  /* "NAME=VALUE" or "NAME=LO:HI" */
    int n_params;
    const char *cache_dir;      /* NULL: $XDG_CACHE_HOME/cartsim, else ~/.cache/cartsim */
    bool no_cache;
    /* cpu, a kernel not in the cache: run a quick (-Og) build at once while
     * the optimized one builds in the background, swapped in between two
     * calls once ready (the same results: cs_env_info.optimizing). false:
     * wait for the optimized build. */
    bool tier;
    const char *cc;             /* C compiler for the cpu backend; NULL: $CC, else "cc" */
    /* The C compiler's time limit in seconds (0 too means CS_CC_TIMEOUT_S_DEFAULT);
     * past it its whole process group is killed and opening fails with
     * CS_ERR_TIMEOUT, whatever the backend asked (no silent fallback). */
    double cc_timeout_s;
    /* Set by the program's signal handler (Ctrl-C), it stops a compile in
     * progress: opening fails with CS_ERR_INTERRUPTED (and cs_train, in one
     * process, between generations); other signals the
     * program handles (a timer's) do not. NULL: any handled signal that
     * interrupts the compile's wait stops it (a program whose handler cannot
     * run during the call, as Python's). (The compiler runs in a process
     * group of its own, out of the terminal's reach.) */
    const volatile sig_atomic_t *interrupt;
    /* The kernel cache's size bound in MiB; least recently used kernels go
     * beyond it (0, the default: its note in cs_config_setting_at). */
    int64_t cache_max_mb;
    /* An environment whose next state is NaN or infinite is restarted and
     * counted (cs_rollout_stats.nonfinite; stepped, it ends its episode with
     * terminated set). strict makes that, a reward that is not finite,
     * (stepped) such an observation, or a run-time index of the step out of
     * range (clamped or dropped otherwise: docs/dsl.md) an error:
     * CS_ERR_NUMERIC naming the first environment and step. A rollout finishes first: its stats and state are
     * those of the whole call. */
    bool strict;
    const char *policy;         /* what rollouts run in the kernel (see "Policies"); NULL: "random" */
    /* Fusion full: a rollout is one launch, however many steps (true), or
     * one launch per `unroll` steps (false: the paper's XLA
     * loop). On the cpu and the interpreter a launch is one call into the
     * compiled rollout. Results are the same either way. Fusion rules and
     * none launch every kernel every step whatever this says. */
    bool persistent;
    /* The global index of this handle's first environment, for a batch split
     * over several handles or processes (MPI ranks, Ray workers): environment
     * i of the handle draws exactly what environment first_env + i of the
     * whole batch draws, so the slices together are the whole batch.
     * first_env + num_envs must not exceed 2^32. 0 after cs_config_init. */
    int64_t first_env;
} cs_config;

#define CS_CC_TIMEOUT_S_DEFAULT 300   /* seconds; cs_config_init sets it */

void cs_config_init(cs_config *cfg);

typedef struct cs_env cs_env;

/* The environments compiled into the library (the files of envs/), in name
 * order: the i-th one's name ("frozen_lake"), with the Gymnasium id that
 * names it (its title, "FrozenLake-v1") written to `title`, or "" when its
 * title names another (cartpole_concat's is cartpole's). NULL past the last. */
const char *cs_builtin_env_at(size_t i, char *title, size_t title_size);

/* Parses, compiles and allocates. On failure *out is still a handle that
 * holds the message (or NULL when memory ran out); close it either way. */
cs_status cs_env_open(const cs_config *cfg, cs_env **out);
void cs_env_close(cs_env *env);        /* NULL is fine */
const char *cs_env_error(const cs_env *env);

typedef struct {
    const char *name;           /* "cartpole" */
    const char *title;          /* "CartPole-v1" */
    int64_t num_envs;
    int64_t first_env;          /* cs_config.first_env: the global index of environment 0 */
    unsigned state_dim, obs_dim;
    bool discrete;              /* discrete: actions are int32 in [0, n_actions) */
    unsigned n_actions;
    unsigned action_dim;        /* box: float32 components per environment */
    const double *action_low, *action_high;
    int64_t max_steps;
    double reward_threshold;    /* NaN when the environment declares none */
    const char *const *state_names;
    cs_backend backend;         /* the backend actually used */
    cs_fusion fusion;
    cs_dtype dtype;
    cs_math math;               /* what ran: cs_config.math for f64; EXACT for f32, whose functions are
                                   cartsim's own in either mode (the same kernel) */
    int unroll, threads;
    int kernels_per_step;       /* fused kernels (loops on the cpu) per step */
    bool persistent;            /* fusion full and cs_config.persistent: a rollout is one launch */
    double compile_ms;          /* tiered (cs_config.tier): the quick build's, and the time rollouts
                                   have waited for the optimized one since */
    bool cache_hit;
    const char *notice;         /* one line worth telling, or "": why AUTO fell back, a lowered unroll,
                                   PTX for a GPU newer than NVRTC, an unusable kernel cache */
    /* The cuda backend's (NULL and 0 on the others). */
    const char *device;         /* the GPU's name */
    int sm_count;               /* its multiprocessors */
    int arch;                   /* its compute capability as 10 * major + minor: 90 for sm_90 */
    int block;                  /* threads per block of the rollout kernel */
    int registers;              /* registers per thread of the rollout kernel */
    int spill_bytes;            /* register spill stores per thread, the most of the rollout kernels (ptxas's
                                   report); -1 when unknown: PTX that the driver compiled */
    int local_bytes;            /* local memory per thread of the rollout kernel: spills and stack frames */
    /* The state and observations as the .env file declares them: variables
     * and observation items, each a scalar or an array (cs_env_state_info,
     * cs_env_obs_info); discrete observations are int64 (cs_env_obs_int). */
    unsigned n_state_vars;      /* state_dim counts their elements */
    unsigned n_obs_items;       /* obs_dim counts the box items' elements */
    unsigned obs_int_dim;       /* the discrete items' elements */
    unsigned n_step_draws, n_restart_draws;   /* random words per step and per restart (cs_env_replay_draws) */
    unsigned n_info_items;      /* the .env's info values (cs_env_info_item) */
    unsigned info_dim;          /* their elements (cs_env_info_values) */
    bool shared_weights;        /* the policy's weights are one set for the whole batch ("ppo:" policies) */
    unsigned n_records;         /* values its rollouts record at every step (cs_env_record); 0: none */
    bool optimizing;            /* cs_config.tier: the quick kernel runs while the optimized one builds */
} cs_env_info;

cs_status cs_env_get_info(cs_env *env, cs_env_info *out);

/* A state variable: rows [first, first + size) of cs_env_get_state's array,
 * its elements row-major. Integers and bools are exact there (doubles). */
typedef enum { CS_VALUE_REAL, CS_VALUE_INT, CS_VALUE_BOOL } cs_value_type;

typedef struct {
    const char *name;
    cs_value_type type;         /* REAL: the batch's dtype; INT: int32 */
    unsigned rank;              /* 0: a scalar */
    unsigned dims[3];           /* dims[k] for k < rank */
    unsigned first, size;
} cs_state_info;

cs_status cs_env_state_info(cs_env *env, unsigned k, cs_state_info *out);   /* k < n_state_vars */

/* An observation item: its space and where its elements are, row-major:
 * rows [offset, offset + size) of cs_env_obs (box: float32) or of
 * cs_env_obs_int (discrete: int64, values in [0, n)). A box without
 * declared bounds has low -inf and high inf. */
typedef enum { CS_SPACE_BOX, CS_SPACE_DISCRETE } cs_space;

typedef struct {
    const char *name;           /* the observed state's name, or "" for an expression */
    cs_space space;
    cs_value_type type;         /* of the value before it is stored */
    unsigned rank;
    unsigned dims[3];
    unsigned offset, size;
    double low, high;           /* box */
    int64_t n;                  /* discrete */
} cs_obs_info;

cs_status cs_env_obs_info(cs_env *env, unsigned k, cs_obs_info *out);       /* k < n_obs_items */

/* An info value (Gymnasium's info dict: toy text's "prob", Taxi's
 * "action_mask"): rows [offset, offset + size) of cs_env_info_values. */
typedef struct {
    const char *name;
    cs_value_type type;
    unsigned rank;
    unsigned dims[3];
    unsigned offset, size;
} cs_info_item_desc;

cs_status cs_env_info_item(cs_env *env, unsigned k, cs_info_item_desc *out); /* k < n_info_items */

/* Every environment starts a fresh episode drawn from `seed`. */
cs_status cs_env_reset(cs_env *env, uint64_t seed);

/* One step of every environment. The element type of `actions` depends on
 * the environment (cs_env_info.discrete): int32_t[num_envs], each in
 * [0, n_actions), for discrete spaces; float[action_dim][num_envs] (finite)
 * for box spaces. The typed entry points below check the type against the
 * environment first (CS_ERR_ARGUMENT naming the right one); prefer them. */
cs_status cs_env_step(cs_env *env, const void *actions);
cs_status cs_env_step_discrete(cs_env *env, const int32_t *actions);   /* [num_envs] */
/* The same as int64_t (NumPy's and PyTorch's integers), each checked against
 * [0, n_actions) whole, before it is narrowed: 2^32 is refused, not wrapped to 0. */
cs_status cs_env_step_discrete_i64(cs_env *env, const int64_t *actions);   /* [num_envs] */
cs_status cs_env_step_box(cs_env *env, const float *actions);          /* [action_dim][num_envs] */
/* The same as doubles, converted to float (the actions' type in the batch). */
cs_status cs_env_step_box_f64(cs_env *env, const double *actions);     /* [action_dim][num_envs] */

const float *cs_env_obs(cs_env *env);            /* [obs_dim][num_envs] */
const float *cs_env_final_obs(cs_env *env);      /* same-step mode: obs that ended an episode */
/* The discrete observations, [obs_int_dim][num_envs] int64 (NULL with the
 * message when the batch has none). */
const int64_t *cs_env_obs_int(cs_env *env);
const int64_t *cs_env_final_obs_int(cs_env *env);
/* The info values of the last step or reset, [info_dim][num_envs] doubles
 * (ints and bools exact): after a step, each environment's step values, or
 * its restart's where the step restarted it (next-step mode's pending
 * restart; same-step mode's restart after an episode's end). NULL with the
 * message when the environment declares none. */
const double *cs_env_info_values(cs_env *env);
/* Same-step mode: the info values of the steps that ended an episode. */
const double *cs_env_final_info_values(cs_env *env);
/* The same observations a row per environment, [num_envs][obs_dim] (obs of
 * environment i at out[i * obs_dim ...], as neural-network frameworks take a
 * batch), copied into out, which holds out_count floats (at least num_envs x
 * obs_dim). The batch itself stays [obs_dim][num_envs]: the transpose is made
 * by this call only, so rollouts are as fast as before. */
cs_status cs_env_obs_rows(cs_env *env, float *out, size_t out_count);
cs_status cs_env_final_obs_rows(cs_env *env, float *out, size_t out_count);
const double *cs_env_rewards(cs_env *env);       /* [num_envs] */
const uint8_t *cs_env_terminated(cs_env *env);   /* [num_envs] */
const uint8_t *cs_env_truncated(cs_env *env);    /* [num_envs] */

/* A batch of one environment (a Gymnasium Env) in one call: cs_env_step
 * with its action (int32_t, or float[action_dim]), then its observation
 * into obs (obs_dim floats: its box observations; discrete ones and info
 * values stay where cs_env_obs_int and cs_env_info_values give them), its
 * reward, terminated and truncated (0 or 1) into the caller's memory. A
 * batch of more environments: CS_ERR_ARGUMENT. For bindings, where each
 * call and each result costs more than the step. */
cs_status cs_env_step_one(cs_env *env, const void *action, float *obs, double *reward, uint8_t *terminated,
                          uint8_t *truncated);

/* The raw state, always as doubles: [state_dim][num_envs]; and the steps
 * taken in each running episode. set_state is for replays and tests; it
 * refuses a value that is not finite in the batch's dtype. */
cs_status cs_env_get_state(cs_env *env, double *out);
cs_status cs_env_set_state(cs_env *env, const double *state, const int32_t *episode_steps);

/* Replaying a reference's random outcomes (the suite's golden tests): the
 * next cs_env_step or cs_env_reset (once) takes its random words from
 * these arrays instead of Philox: step_words[k * num_envs + i] is draw k of
 * the step of environment i (n_step_draws of them), restart_words likewise
 * for a restart in that call (n_restart_draws). Either may be NULL (Philox
 * as usual). The arrays must stay valid until that call returns. */
cs_status cs_env_replay_draws(cs_env *env, const uint32_t *step_words, const uint32_t *restart_words);

/* Makes dst continue from where src is: src's state, per-environment
 * parameters, episode steps and running returns, observations, rewards and
 * flags (next-step restarts pending included), its seed and step count, so
 * that dst's next steps and rollouts draw what src's would. dst and src are
 * batches of the same environment, num_envs, first_env and dtype (else
 * CS_ERR_ARGUMENT saying what differs); their policies (and so their
 * weights, which stay dst's), backends, threads and unroll may differ. A
 * rollout with another policy from a batch's current state: copy into a
 * sibling opened with that policy, roll it out, copy back. src must have
 * been reset (CS_ERR_STATE). Messages go to dst. */
cs_status cs_env_copy_state(cs_env *dst, cs_env *src);

typedef struct {
    int64_t steps;              /* per environment */
    int64_t env_steps;          /* steps x num_envs */
    int64_t episodes;           /* finished */
    double mean_return;         /* over finished episodes; NaN when none */
    int64_t nonfinite;          /* environments restarted for a NaN/inf state */
    int64_t launches;           /* kernel launches, counted alike on every backend: fusion full,
                                   1 (persistent) or one per `unroll` steps; rules and none, each
                                   kernel every step (on the cpu, loops inside one call) */
    double run_ms;              /* less any wait for a tiered compile's optimized kernel (compile_ms) */
    uint64_t checksum;          /* hash of the final state's bits, episode steps and running returns */
} cs_rollout_stats;

/* `steps` steps of every environment with the configured policy
 * (cs_config.policy: random actions by default), same-step auto-reset, all
 * inside the compiled kernel. Continues from the current state (reset first). */
cs_status cs_env_rollout(cs_env *env, int64_t steps, cs_rollout_stats *out);
/* One call of a rollout made of several (cartsim run's chunks): as
 * cs_env_rollout, but out->checksum is 0. The checksum hashes every
 * environment's state byte by byte, which at millions of environments costs
 * more than several steps: take it once, after the last call
 * (cs_env_checksum_part, below, or a last cs_env_rollout of 0 steps). */
cs_status cs_env_rollout_part(cs_env *env, int64_t steps, cs_rollout_stats *out);

/* The rollout checksum of a batch split over handles (cs_config.first_env),
 * equal to the whole batch's cs_rollout_stats.checksum. The checksum hashes
 * cs_env_checksum_parts() parts in turn, each over every environment in
 * global order, so the slices take turns: start with h = CS_CHECKSUM_START;
 * for each part p, each slice in global order calls
 * cs_env_checksum_part(its env, p, &h) and hands h to the next slice. With
 * one handle this is the rollout's checksum. */
#define CS_CHECKSUM_START 0xcbf29ce484222325ull
unsigned cs_env_checksum_parts(cs_env *env);
cs_status cs_env_checksum_part(cs_env *env, unsigned part, uint64_t *h);

/* Looking inside the compiler (`cartsim dump`). `after` names the last pass
 * to run ("parse", "fold", "concat", "dce"; NULL: all of them); `format` is
 * "text" (graph, partition into kernels with the reason for each boundary),
 * "dot" (Graphviz), "c" or "cuda" (the generated source). On CS_OK *text is
 * malloc'ed: free() it. */
cs_status cs_dump(const cs_config *cfg, const char *after, const char *format, char **text, char *err,
                  size_t err_size);

/* The compiled CUDA kernel (a cubin, binary) for `arch` ("sm_90", or NULL:
 * the device's own). Needs NVRTC, not a GPU. An architecture NVRTC does not
 * know is CS_ERR_ARGUMENT (never PTX instead). On CS_OK *cubin is malloc'ed
 * (free() it) and holds *size bytes. */
cs_status cs_dump_cubin(const cs_config *cfg, const char *arch, void **cubin, size_t *size, char *err,
                        size_t err_size);

/* ---- CUDA callers: the batch where it lives ----
 *
 * On the cuda backend the batch stays on the GPU: cs_env_obs() and the other
 * readers copy a buffer back only when asked, and only if a launch changed
 * it. A CUDA program can skip the copies and use the device buffers in place,
 * for instance to run its own policy network on the observations:
 *
 *     cs_device_buffers d;
 *     if (cs_env_device_buffers(env, &d) == CS_OK) {         // CS_ERR_UNAVAILABLE off cuda
 *         for (int t = 0; t < T; t++) {
 *             my_policy<<<grid, block>>>((const float *)d.obs, (int32_t *)d.actions, n);
 *             cudaDeviceSynchronize();
 *             cs_env_step_device(env);                      // steps with d.actions
 *         }
 *     }
 *
 * The addresses are CUdeviceptr values in the device's primary context, the
 * one the CUDA runtime uses, so runtime code may use them directly. They stay
 * valid until cs_env_close, laid out like the host buffers. cartsim launches
 * on the legacy default stream and synchronizes before returning: a buffer is
 * ready when a call returns, and work of the caller's must be finished (or on
 * the legacy default stream) before the next cartsim call. Only `actions` is
 * the caller's to write; the rest is read-only (cs_env_set_state writes the
 * state). cs_env_step_device does not look at the actions, which stay on the
 * device: a discrete action outside [0, n_actions) acts as the environment's
 * expressions make it act, and a NaN action makes a NaN state, restarted and
 * counted. Under cs_config.strict it copies them back and refuses a bad one,
 * as cs_env_step does. */
typedef struct {
    int device;                 /* the CUDA device ordinal */
    void *context;              /* its primary context (a CUcontext) */
    uint64_t obs;               /* float[obs_dim][num_envs] */
    uint64_t final_obs;         /* float[obs_dim][num_envs]: same-step mode's ending observations */
    uint64_t rewards;           /* double[num_envs] */
    uint64_t terminated;        /* uint8_t[num_envs] */
    uint64_t truncated;         /* uint8_t[num_envs] */
    uint64_t state;             /* float or double (the dtype)[state_dim][num_envs] */
    uint64_t episode_steps;     /* int32_t[num_envs]: steps taken in each running episode */
    uint64_t actions;           /* int32_t[num_envs] or float[action_dim][num_envs]: written by the caller */
} cs_device_buffers;

cs_status cs_env_device_buffers(cs_env *env, cs_device_buffers *out);
/* cs_env_step with the actions the caller wrote at cs_device_buffers.actions. */
cs_status cs_env_step_device(cs_env *env);

/* ---- Frames: what environments look like (render/) ----
 *
 * RGB images of environments' current states, drawn by each environment's
 * own picture, the draw block of its .env file (docs/dsl.md, "Pictures"),
 * with its parameters as overridden (the classic ones draw as Gymnasium's
 * rgb_array: CartPole-v1 600x400, white background, black cart, brown
 * pole): height x width x 3 bytes, rows top to bottom. A batch is tiled
 * row-major, `columns` tiles a row (0: the smallest square that holds
 * them), tiles past the batch black.
 *
 *     cs_renderer *r;
 *     int w, h;
 *     if (cs_renderer_open(env, &r) == CS_OK &&
 *         cs_render_rgb(r, 0, 1, 1, NULL, 0, &w, &h) == CS_OK) {     // the size
 *         uint8_t *rgb = malloc((size_t)w * h * 3);
 *         cs_render_rgb(r, 0, 1, 1, rgb, (size_t)w * h * 3, &w, &h); // environment 0
 *         ...
 *     }
 *     cs_renderer_close(r);
 *
 * Drawing is done in memory: no display and no window library are needed.
 * For an environment whose .env file has no draw block, cs_renderer_open
 * answers CS_ERR_UNAVAILABLE and says what to add. A renderer borrows its
 * environment (close the renderer first), keeps its own last-error message,
 * and evaluates the picture once per drawn environment per frame. */
typedef struct cs_renderer cs_renderer;

/* On failure *out is still a handle holding the message (or NULL when
 * memory ran out); close it either way. */
cs_status cs_renderer_open(cs_env *env, cs_renderer **out);
void cs_renderer_close(cs_renderer *r);            /* NULL is fine */
const char *cs_renderer_error(const cs_renderer *r);

/* Environments [first, first + count) into rgb, which holds rgb_size bytes
 * (at least width * height * 3). rgb NULL: only sets *width and *height. */
cs_status cs_render_rgb(cs_renderer *r, int64_t first, int count, int columns, uint8_t *rgb, size_t rgb_size,
                        int *width, int *height);
/* The frames per second the picture declares (its draw block's fps;
 * Gymnasium's render_fps for the classic environments): the speed a viewer
 * shows it at, a video's frame rate. 0 for a renderer that failed to open. */
int cs_renderer_fps(const cs_renderer *r);

/* ---- Policies: what rollouts run, fused into the step kernel (agents/) ----
 *
 * cs_config.policy names the policy that cs_env_rollout evaluates inside the
 * kernel, on the observation of the state before each step:
 *
 *   "random"            uniform actions from Philox (the default);
 *   NAME                a policy the .env declares: `policy heuristic { action = ... }`;
 *   "linear"            one layer: z = W obs + b;
 *   "mlp:H", "mlp:HxH"  one or two tanh hidden layers of H units (1..256), then z;
 *   "ppo:" + one of the three above: the actor-critic PPO trains (below).
 *
 * Discrete spaces take the argmax of z (one output per action, the lowest
 * index on ties); box spaces take low + (high - low) * (tanh(z) + 1) / 2.
 * Linear and MLP weights are per environment: N environments run N
 * different policies in one launch. Their order, layer after layer, is each
 * unit's weights over the layer's inputs then its bias (docs/policy_format.md).
 * They are 0 until set.
 *
 * "ppo:ARCH" runs one policy in every environment, its weights shared by
 * the batch (cs_env_info.shared_weights): the actor (ARCH's weights, a
 * dense policy's), a critic of the same shape with one output (the value),
 * for a box space one log standard deviation per component, then a switch
 * (0: sample, 1: act as the dense policy ARCH would: the argmax, the mean).
 * Sampled actions come from Philox after the environment's own draws:
 * discrete from softmax(z), box from a normal of that std around the
 * dense policy's action, clipped to the space. Its rollouts record, at
 * every step (cs_env_record): obs0.., action0.. (box: before the clip),
 * logprob, value, reward, terminated, truncated, final_obs0.. (the
 * observation after the step, before any restart). The cpu backend and the
 * interpreter run it (auto picks the cpu). */

/* Weights per environment (per batch for shared weights): 0 for random and declared policies. */
unsigned cs_env_num_weights(cs_env *env);
/* w[k * num_envs + i] is weight k of environment i (finite); kept until set
 * again. Shared weights (cs_env_info.shared_weights): w[k] is weight k of
 * every environment. */
cs_status cs_env_set_weights(cs_env *env, const double *w);
cs_status cs_env_get_weights(cs_env *env, double *out);

/* What the last cs_env_rollout of a recording policy recorded: value k at
 * step s (of that call) of environment i is data[s * num_envs + i], an
 * int32_t (integer: actions, terminated, truncated) or a float, for s <
 * steps. Valid until the next rollout or cs_env_close. */
typedef struct {
    const char *name;           /* "obs0", "action0", "logprob", "value", ... */
    bool integer;
    int64_t steps;              /* rows: the last rollout's steps (0: none yet) */
    const void *data;           /* [steps][num_envs]; NULL when steps is 0 */
} cs_record;

unsigned cs_env_record_count(cs_env *env);
cs_status cs_env_record(cs_env *env, unsigned k, cs_record *out);

/* Per environment, from the last cs_env_rollout: the mean return of the
 * episodes it finished (NaN where none) and how many it finished. Restarts
 * forced by a NaN or infinite state are not episodes. */
const double *cs_env_episode_returns(cs_env *env);    /* [num_envs] */
const int64_t *cs_env_episode_counts(cs_env *env);    /* [num_envs] */
/* Per environment, the return so far of its running episode, as rollouts
 * keep it (a viewer's tile label between one-step rollouts). */
const double *cs_env_running_returns(cs_env *env);    /* [num_envs] */

/* ---- Training: evolution strategies, the cross-entropy method, PPO ----
 *
 * A generation sets one candidate policy in each environment, resets them all
 * (ES: every candidate from the same state) and rolls out max_steps steps in
 * one fused launch; a candidate's score is the mean return of the episodes
 * it finished. The search then moves its mean policy. Training stops when
 * the mean policy's mean return over eval_episodes fresh episodes reaches
 * the target in two evaluations in a row (checked once some candidate scores
 * that much), or after `generations`. Gaussian noise comes from Philox keyed
 * by the seed: the same seed and configuration train the same weights on the
 * same backend and dtype (threads do not matter).
 *
 * PPO (Schulman et al. 2017, as CleanRL's ppo.py and ppo_continuous_action.py
 * compute it): num_envs environments run the actor-critic ("ppo:" + the
 * policy's architecture, see "Policies") for num_steps steps in one fused
 * rollout that records every step; the update runs on the cpu (train/ppo.c):
 * generalized advantage estimation (a truncated episode bootstrapped from
 * the value of its last observation), update_epochs passes over the batch
 * in num_minibatches shuffled minibatches, clipped surrogate, clipped value
 * loss, entropy bonus, advantages normalized per minibatch, the gradient's
 * global norm clipped, Adam (eps 1e-5) with the learning rate annealed to
 * 0. Episodes go on across iterations. Training stops once the greedy
 * policy (the actor's argmax, or its mean) scores the target over
 * eval_episodes fresh episodes (tried when the training episodes' mean
 * return reaches it), or after total_timesteps env-steps. The result is
 * the actor, a dense policy file any command reads. The same seed trains
 * the same weights, bit for bit, whatever the thread count. */
typedef enum { CS_ALGO_ES, CS_ALGO_CEM, CS_ALGO_PPO } cs_algo;
typedef enum { CS_SWITCH_AUTO, CS_SWITCH_OFF, CS_SWITCH_ON } cs_train_switch;
typedef enum { CS_UPDATE_CPU, CS_UPDATE_CUDA } cs_train_update;

/* Several processes working as one (MPI ranks, or any framework): process
 * `rank` of `ranks` takes its share of the work, and `exchange` makes every
 * process's results everyone's. The library links no MPI: the caller's
 * exchange does the communication. A zeroed cs_split is one process alone. */
typedef struct {
    int rank, ranks;            /* this process, of how many (0 or 1: alone) */
    /* values[0, total) is the same array in every process; this process has
     * filled [first, first + count) (count may be 0). On return every entry
     * holds what its process filled, in every process: an allgather. Not
     * CS_OK: another process failed, and the call gives up with that status. */
    cs_status (*exchange)(void *user, double *values, int64_t first, int64_t count, int64_t total);
    void *user;
} cs_split;

/* The share of n items that process `rank` of `ranks` takes,
 * [*first, *first + *count): contiguous, in rank order, the first n % ranks
 * processes taking one more (n < 0 counts as 0; a NULL pointer is not
 * written). */
void cs_split_share(int64_t n, int rank, int ranks, int64_t *first, int64_t *count);

typedef struct {
    int64_t generation;         /* 1, 2, ... */
    double mean_return;         /* over the population's scores */
    double best_return;
    double eval_return;         /* the mean policy on eval_episodes fresh episodes; NaN when not run */
    int64_t env_steps;          /* of the training rollouts so far */
    double env_steps_per_sec;   /* this generation's rollout (PPO: rollout and update) */
    double elapsed_ms;          /* since cs_train began, compile included */
    /* PPO, from the iteration's last minibatch (NaN for ES and CEM) */
    double policy_loss, value_loss, entropy, approx_kl, learning_rate;
} cs_train_progress;

/* The defaults are cs_train_config_init's alone (`cartsim train --help`
 * prints them from it). The algorithms' settings (sigma ... max_grad_norm)
 * are also a table, as cs_config's are: cs_train_setting_at says each one's
 * name, range, default and meaning, cs_train_config_set sets one from text. */
typedef struct {
    cs_algo algo;
    const char *policy;         /* "linear", "mlp:32", "mlp:32x32" (PPO: the actor's and critic's shape) */
    int64_t population;         /* ES, CEM: environments, one candidate each (ES: even) */
    int64_t generations;        /* ES, CEM: at most */
    uint64_t seed;
    double target;              /* NaN: the env's reward_threshold; a NaN threshold: never stop early */
    int64_t eval_episodes;
    /* ES (Salimans et al. 2017): antithetic pairs, centred ranks, Adam on the mean */
    double sigma;               /* perturbation scale */
    double learning_rate;       /* Adam step; 0: the algorithm's (ES 0.1, PPO 2.5e-4 discrete, 3e-4 box) */
    double weight_decay;        /* L2 coefficient */
    /* CEM: elite mean and spread, plus extra noise that fades */
    double elite_fraction;
    double init_std;
    double extra_std;           /* fading to 0 over the generations */
    /* PPO: 0 (NaN for ent_coef, auto for the normalizations) takes CleanRL's
     * default for the action space, discrete (ppo.py) ; box
     * (ppo_continuous_action.py), in that order below */
    int64_t num_envs;           /* environments stepped together (4 ; 1) */
    int64_t num_steps;          /* steps of each per iteration (128 ; 2048) */
    int64_t total_timesteps;    /* env-steps at most (500000 ; 1000000) */
    int64_t num_minibatches;    /* (4 ; 32) */
    int64_t update_epochs;      /* (4 ; 10) */
    bool anneal_lr;             /* the learning rate falls linearly to 0 over the iterations */
    double gamma, gae_lambda;   /* 0.99, 0.95 */
    bool norm_adv;              /* advantages normalized per minibatch */
    double clip_coef;           /* 0.2 */
    bool clip_vloss;            /* the value loss clipped as the surrogate */
    double ent_coef;            /* NaN: (0.01 ; 0) */
    double vf_coef;             /* 0.5 */
    double max_grad_norm;       /* 0.5 */
    double target_kl;           /* stop an update's epochs past this approximate KL; 0: never */
    /* CleanRL's continuous wrappers: observations normalized by running
     * statistics (folded into the first layers' weights, so the rollout and
     * the saved policy read raw observations), rewards scaled by the running
     * spread of the discounted return (clipped to +-10). */
    cs_train_switch norm_obs, norm_reward;   /* auto: (off ; on) */
    /* PPO: where the update runs: the cpu (one core), or a GPU (cs_config.device;
     * for large batches and networks). No usable GPU: CS_ERR_UNAVAILABLE. */
    cs_train_update update;
    /* Called after every generation (NULL: not called). */
    void (*progress)(void *user, const cs_train_progress *p);
    void *user;
    /* Training over several processes: each rolls out its share of the
     * population (cs_split_share) on environments keyed by the candidates'
     * global indices, every one regenerates all perturbations from the seed,
     * and only the scores are exchanged (one value per candidate per
     * generation). The same seed trains the same weights for any number of
     * processes. env_steps and the rates in progress are this process's own. */
    cs_split split;
} cs_train_config;

void cs_train_config_init(cs_train_config *tc);

typedef struct {
    char env[64];               /* the environment's short name */
    char policy[64];            /* the architecture, canonical: "linear", "mlp:32x32" */
    unsigned n_weights;
    double *weights;            /* [n_weights], the mean policy; malloc'ed, free() it */
    bool solved;                /* eval_return reached the target */
    double target;              /* NaN when there was none */
    double eval_return;         /* the final mean policy on eval_episodes fresh episodes */
    int64_t generations;
    int64_t env_steps;
    double elapsed_ms;
    double compile_ms;
    cs_backend backend;         /* where the rollouts ran */
    char notice[512];           /* the environment's cs_env_info.notice, or "" */
} cs_train_result;

/* Trains a policy for cfg's environment (cfg->num_envs and cfg->policy are
 * set by the trainer). On failure out->weights is NULL, but for PPO's
 * CS_ERR_NUMERIC (the loss or a gradient went NaN or infinite): training
 * stopped there, and out->weights is the last policy whose update was
 * finite. */
cs_status cs_train(const cs_config *cfg, const cs_train_config *tc, cs_train_result *out, char *err,
                   size_t err_size);

/* `episodes` fresh episodes of env's policy with `weights` (n_weights of
 * them, set in every environment; NULL: the weights each has), in rounds of
 * num_envs from resets seeded `seed`, `seed` + 1, ...: returns[e] is episode
 * e's whole return. Needs a max_steps. The handle's state and weights change.
 * A failure's message is on the handle (cs_env_error), as every handle call's. */
cs_status cs_evaluate(cs_env *env, const double *weights, int64_t episodes, uint64_t seed, double *returns);
/* cs_evaluate over several processes: env is this process's slice
 * (cs_config.first_env, num_envs) of a batch of global_envs environments,
 * and returns[e] comes out the same in every process, equal to cs_evaluate
 * on the whole batch: episode e runs on environment e % global_envs. */
cs_status cs_evaluate_split(cs_env *env, const double *weights, int64_t episodes, uint64_t seed, double *returns,
                            int64_t global_envs, const cs_split *split);

/* Policy files (docs/policy_format.md): plain text naming the environment,
 * the architecture and the weights, with a checksum. */
typedef struct {
    char env[64];               /* the environment's short name */
    char policy[64];            /* "linear", "mlp:32x32" */
    unsigned n_weights;
    double *weights;            /* malloc'ed */
} cs_policy_file;

/* n_weights must be a count the architecture has for some environment
 * (docs/policy_format.md); an existing path must be a regular file. */
cs_status cs_policy_save(const char *path, const char *env, const char *policy, unsigned n_weights,
                         const double *weights, char *err, size_t err_size);
/* CS_ERR_NOT_FOUND, CS_ERR_ARGUMENT (not a regular file: a FIFO, a directory, ...,
 * or unreadable), CS_ERR_IO, or CS_ERR_PARSE for a damaged file. */
cs_status cs_policy_load(const char *path, cs_policy_file *out, char *err, size_t err_size);
void cs_policy_file_free(cs_policy_file *f);

/* ---- Settings by name and configuration files ----
 *
 * One table in sim/config.c declares every setting of cs_config that has a
 * name: its file section and key, kind, range (CS_MAX_*) or choices,
 * default, what the default means and its help text. cs_config_init applies
 * its defaults, cs_env_open checks against it, and the cartsim program
 * builds its flags (--NAME, '_' spelt '-'), file keys, --help,
 * --print-config and its JSON "config" object from it. */
typedef enum {
    CS_SETTING_TEXT,            /* a string (the environment) */
    CS_SETTING_INT,             /* an integer in [min, max] */
    CS_SETTING_SECONDS,         /* a time in seconds, (0, max] */
    CS_SETTING_CHOICE,          /* one of choices[0, n_choices) */
    CS_SETTING_BOOL,            /* choices "false", "true" */
    CS_SETTING_LIST,            /* repeatable: each cs_config_set adds one ("param") */
    CS_SETTING_REAL             /* a finite number in [real_min, real_max] (cs_train_setting_at's) */
} cs_setting_kind;

typedef struct {
    const char *name;           /* for cs_config_set and cs_config_get */
    const char *section, *key;  /* in a configuration file ([params]: each key is a parameter; key NULL) */
    const char *field;          /* the cs_config field, as messages name it */
    cs_setting_kind kind;
    const char *metavar;        /* what the value looks like ("N"); NULL for choices and booleans */
    int64_t min, max;           /* CS_SETTING_INT; CS_SETTING_SECONDS: max */
    const char *const *choices; /* CS_SETTING_CHOICE and CS_SETTING_BOOL */
    int n_choices;
    const char *default_value;  /* as cs_config_get spells it; NULL: zero (see cs_config_get) */
    const char *default_note;   /* what the default means ("all cores"); NULL: nothing to say */
    const char *help;           /* one line */
    const char *help_off;       /* CS_SETTING_BOOL: what false means, when it is worth a switch of its own */
    double real_min, real_max;  /* CS_SETTING_REAL */
    bool min_open;              /* CS_SETTING_REAL: real_min itself excluded */
} cs_setting_info;

size_t cs_config_setting_count(void);
/* The i-th setting, i < cs_config_setting_count(); CS_ERR_ARGUMENT past the end.
 * The strings are the library's, valid for the life of the program. */
cs_status cs_config_setting_at(size_t i, cs_setting_info *out);
/* A setting's value in cfg as cs_config_set reads it (booleans "true" or
 * "false"; the list, space-separated; a time of 0 as the default it means).
 * CS_ERR_NOT_FOUND for no such setting, CS_ERR_LIMIT when buf is too small
 * (it then holds the start). */
cs_status cs_config_get(const cs_config *cfg, const char *name, char *buf, size_t size);

/* Sets one setting of cfg from text, checked exactly as cartsim's flags
 * check it (the command line calls this for them), by the name
 * cs_config_setting_at gives ("param" adds one "NAME=VALUE" or
 * "NAME=LO:HI" override; booleans take "true" or "false"). cfg keeps
 * the value pointer itself for "env" and "param": it must outlive cfg's
 * use. CS_ERR_ARGUMENT with a message ("'abc' is not an integer") for a bad
 * value, CS_ERR_LIMIT past CS_MAX_PARAM_OVERRIDES, CS_ERR_NOT_FOUND for no
 * such setting; cfg is unchanged then. */
cs_status cs_config_set(cs_config *cfg, const char *name, const char *value, char *err, size_t err_size);

/* The algorithms' settings by name (sim/config.c's scheme for cs_config):
 * the i-th of cs_train_setting_count() (section "train"; kind INT, REAL,
 * BOOL or CHOICE), tc's value of one as text (a real as the shortest
 * decimal that reads back), and one set from text, checked against its
 * row: CS_ERR_ARGUMENT with a message for a bad value, CS_ERR_NOT_FOUND
 * for no such setting; tc is unchanged then. */
size_t cs_train_setting_count(void);
cs_status cs_train_setting_at(size_t i, cs_setting_info *out);
cs_status cs_train_config_get(const cs_train_config *tc, const char *name, char *buf, size_t size);
cs_status cs_train_config_set(cs_train_config *tc, const char *name, const char *value, char *err,
                              size_t err_size);

/* One "key = value" line of a configuration file. */
typedef struct {
    const char *section;        /* "run", "env", "params", "agent", "train" or "view" */
    const char *key;
    const char *value;          /* spaces around it and a " ; comment" after it removed */
    int line;
    bool applied;               /* set in the cs_config by cs_config_load */
} cs_config_entry;

typedef struct cs_config_file cs_config_file;

/* Reads an INI file (such as configs/cartpole.ini) over what cfg holds:
 *
 *     [run]     envs, unroll, backend, fusion, dtype, math, threads, block, strict,
 *               persistent (applied);
 *               steps, seed (the program's)
 *     [env]     name = NAME, or path = FILE.env (relative to the file's
 *               folder), autoreset = next_step | same_step (applied)
 *     [params]  NAME = VALUE or NAME = LO:HI, as --param (applied)
 *     [agent], [train], [view]: the program's
 *
 * Applied values go through cs_config_set. The program's values are not
 * checked here: the caller reads them (cs_config_file_get) and must refuse
 * the keys it does not know; cartsim maps them onto its flags. Comments are
 * lines starting with ';' or '#', or " ; ..." after a value.
 *
 * Every line is accounted for: an unknown or repeated section, an unknown
 * or duplicate key, a bad value, an indented line, a line inih cannot split
 * fail with "PATH:LINE: message" in err (CS_ERR_PARSE, CS_ERR_ARGUMENT or
 * CS_ERR_LIMIT); a file that cannot be read with "PATH: message"
 * (CS_ERR_NOT_FOUND, CS_ERR_ARGUMENT for what is not a readable regular file,
 * CS_ERR_IO). On failure *file is NULL and cfg may be
 * partly changed. On success *file owns every string cfg now points to
 * (env, params): free it only after the last use of cfg. */
cs_status cs_config_load(cs_config *cfg, const char *path, cs_config_file **file, char *err, size_t err_size);
size_t cs_config_file_count(const cs_config_file *f);
const cs_config_entry *cs_config_file_entry(const cs_config_file *f, size_t i);   /* in file order; NULL past the end */
const cs_config_entry *cs_config_file_get(const cs_config_file *f, const char *section, const char *key);
void cs_config_file_free(cs_config_file *f);    /* NULL is fine */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
