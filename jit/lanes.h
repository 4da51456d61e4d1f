/* The calling convention between the runtime and a generated kernel.
 *
 * This file is pasted verbatim in front of every generated source, C and CUDA
 * alike, so it compiles as C11 and as CUDA C++ and includes nothing. Bump
 * CS_LANES_ABI whenever a field changes: it is part of the kernel cache key.
 *
 * Buffers are struct-of-arrays indexed by the global lane number, so a call
 * on lanes [begin, end) of a bigger batch touches only its own slice.
 */
#ifndef CS_LANES_H
#define CS_LANES_H

#define CS_LANES_ABI 7

/* A rollout's arrays of per-environment parameters (params[k]) hold
 * CS_LANES_PAD lanes past the batch's last (stride lanes and CS_LANES_PAD
 * more): the C rollout steps a block's last lanes padded to that many (a
 * vector), and its pad lanes read their parameters there. Past the batch's
 * end those are copies of the last lane's, which the kernel writes before
 * it steps them; a call that ends inside the batch (a rerun of some of its
 * lanes) leaves them as they are and its pad lanes read the next lanes'. */
#define CS_LANES_PAD 8

/* cs_lanes.mode for the step entry point */
#define CS_MODE_NO_RESTART 0  /* never restart (replays, the DISABLED mode) */
#define CS_MODE_SAME_STEP 1   /* restart at once; obs of the ending step go to final_obs */
#define CS_MODE_NEXT_STEP 2   /* the step after the ending one restarts instead of stepping */
/* cs_lanes.mode for the restart entry point */
#define CS_RESTART_EXPLICIT 0 /* a reset: every state variable takes its reset value */
#define CS_RESTART_AUTO 1     /* an episode's end: kept variables (cs_state_var.kept) keep theirs */

typedef struct cs_lanes {
    long long begin, end;     /* global lanes of this call */
    long long t;              /* global step count before this call's first step */
    long long steps;          /* rollout: steps to take */
    int launch;               /* rollout: 0 runs whole steps; k > 0 runs kernel k - 1 of one
                                 step only (a launch, as on a GPU), its values kept in blocks */
    void *blocks;             /* launch > 0: the blocks of lanes [begin, end), each
                                 cs_kernel_block_bytes() long, zeroed at first, kept between launches */
    unsigned long long seed;
    unsigned long long key0;  /* Philox key of lane 0: the global index of the batch's first
                                 environment (cs_config.first_env), so a slice draws as the whole */
    int mode;                 /* step: CS_MODE_*; restart: CS_RESTART_* */
    long long stride;         /* lanes in the whole batch: the row length of obs */
    void **carried;           /* [n_carried] arrays of the carried slot's type: float or double
                                 (the real type), int (i32), unsigned char (bool) */
    void **params;            /* [n_params] arrays of the program's real type */
    int *segstep;             /* steps since the lane's last restart */
    void **inputs;            /* step: [n_inputs] arrays, int (discrete) or float (box) */
    float *obs;               /* [n_obs][stride]: box observations */
    float *final_obs;         /* [n_obs][stride], same-step mode */
    long long *obs_int;       /* [n_obs_int][stride]: discrete observations */
    long long *final_obs_int; /* [n_obs_int][stride], same-step mode */
    double *info;             /* [n_info][stride]: the last step's (or restart's) info values */
    double *final_info;       /* [n_info][stride], same-step mode: the info of the step that ended an episode */
    double *reward;
    unsigned char *terminated, *truncated;
    unsigned char *pending;   /* next-step mode: restart at the lane's next step */
    double *seg_return;       /* return of the running episode */
    long long *segments;      /* episodes finished */
    double *return_sum;       /* sum of the finished episodes' returns */
    long long *nonfinite;     /* restarts forced by a NaN or infinite state */
    /* Replaying recorded random outcomes (tests against a reference): when
     * not NULL, draw k of the step stream at this call's step (and of the
     * restart stream at a restart) is the word words[k * stride + lane]
     * instead of Philox's. Only the step and restart entry points read them. */
    const unsigned int *step_words;    /* [n_step_draws][stride] */
    const unsigned int *restart_words; /* [n_restart_draws][stride] */
    void **record;            /* rollout: [n_records] arrays [steps][stride] where every step's records
                                 go, float (a real) or int (i32, bool); NULL: none kept */
    long long record_t0;      /* rollout: the global step of the records' row 0 */
    /* Strict mode (a program with index_fault roots): a lane's first index
     * out of range since the caller zeroed its word, (1 + site) << 32 |
     * (unsigned)value (program.h's index_sites); 0: none. NULL: not kept. */
    long long *index_fault;
} cs_lanes;

#endif
