/* The rollout and main() of every hand-written reference but
 * ref_cartpole.c, included at the end of bench/ref_X.c, after it defines
 * REF_NAME (the JSON line's "env"), REF_VARS (its state variables: arrays of
 * floats, ref_batch's var) and its own physics:
 *
 *   static void restart_lane(const ref_batch *b, long long lane,
 *                            unsigned long long seed, unsigned long long tau);
 *   static int step(const ref_batch *b, long long base,
 *                   const unsigned int *words, int *done, int n);
 *
 * restart_lane resets one lane from the restart stream at step tau; step
 * steps lanes [base, base + n) with its random words, sets done[j] where
 * lane base + j's episode ended and returns how many did. Included, not
 * called through pointers, so that GCC inlines and vectorizes each step as
 * it would a loop written in place.
 *
 * Optional, for the grid games:
 *   REF_INT_VARS   state variables that are arrays of ints (ref_batch's
 *                  int_var), after the floats; 0 when not defined.
 *   REF_DRAWS      step-stream words a step takes, 1, 2 or 4 (1 when not
 *                  defined): one Philox block serves 4 / REF_DRAWS steps, and
 *                  lane j's draw d is words[d * REF_BLOCK + j].
 *   REF_CHECKSUM   a function (const ref_batch *) -> uint64_t for the JSON
 *                  line; without it the float state variables in order, then
 *                  the episode counts. */
#ifndef REF_ROLLOUT_H
#define REF_ROLLOUT_H

#ifndef REF_INT_VARS
#define REF_INT_VARS 0
#endif
#ifndef REF_DRAWS
#define REF_DRAWS 1
#endif
#define REF_STEPS_PER_BLOCK (4 / REF_DRAWS)   /* steps one Philox block serves */
_Static_assert(REF_VARS <= REF_MAX_VARS && REF_INT_VARS <= REF_MAX_INT_VARS, "more state variables than ref_batch holds");
_Static_assert(REF_DRAWS == 1 || REF_DRAWS == 2 || REF_DRAWS == 4, "a step takes 1, 2 or 4 words of a Philox block");

/* Blocks of REF_BLOCK lanes kept in L1 for the whole rollout, one Philox
 * block per lane for REF_STEPS_PER_BLOCK steps' draws, the step over the
 * block, then a scalar pass restarting the lanes it ended. */
static void ref_rollout(ref_batch *b, unsigned long long seed, long long steps)
{
    for (long long i = 0; i < b->n; i++) {
        restart_lane(b, i, seed, 0);
        b->segstep[i] = 0;
        b->seg_return[i] = 0.0;
        b->episodes[i] = 0;
        b->return_sum[i] = 0.0;
    }
    static unsigned int words[4 * REF_BLOCK];   /* word k of lane j's block: words[k * REF_BLOCK + j] */
    static int done[REF_BLOCK];
    for (long long base = 0; base < b->n; base += REF_BLOCK) {
        int n = b->n - base < REF_BLOCK ? (int)(b->n - base) : REF_BLOCK;
        for (long long t = 0; t < steps; t++) {
            unsigned long long within = (unsigned long long)t % REF_STEPS_PER_BLOCK;
            if (within == 0)
                for (int j = 0; j < n; j++) {
                    unsigned int out[4];
                    cs_rng_block(seed, (unsigned int)(base + j), (unsigned long long)t / REF_STEPS_PER_BLOCK, 0u, out);
                    for (int k = 0; k < 4; k++)
                        words[k * REF_BLOCK + j] = out[k];
                }
            if (step(b, base, words + within * REF_DRAWS * REF_BLOCK, done, n) == 0)
                continue;
            for (int j = 0; j < n; j++) {
                if (!done[j])
                    continue;
                long long lane = base + j;
                b->episodes[lane] += 1;
                b->return_sum[lane] += b->seg_return[lane];
                b->seg_return[lane] = 0.0;
                b->segstep[lane] = 0;
                restart_lane(b, lane, seed, (unsigned long long)t + 1);
            }
        }
    }
}

#ifndef REF_CHECKSUM
/* The float state variables in order, then the episode counts. */
static uint64_t ref_checksum(const ref_batch *b)
{
    size_t nf = (size_t)b->n;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int k = 0; k < b->vars; k++)
        h = ref_fnv1a(h, b->var[k], nf * sizeof(float), sizeof(float));
    return ref_fnv1a(h, b->episodes, nf * sizeof(long long), sizeof(long long));
}
#define REF_CHECKSUM ref_checksum
#endif

/* The arguments, the best of --repeat timed rollouts, and the JSON line. */
int main(int argc, char **argv)
{
    ref_args a;
    int status;
    if (ref_parse("ref_" REF_NAME, argc, argv, &a, &status))
        return status;
    size_t nf = (size_t)a.envs;
    ref_batch b = {.n = a.envs, .vars = REF_VARS, .int_vars = REF_INT_VARS, .segstep = malloc(nf * sizeof(int)),
                   .seg_return = malloc(nf * sizeof(double)), .return_sum = malloc(nf * sizeof(double)),
                   .episodes = malloc(nf * sizeof(long long))};
    int ok = b.segstep && b.seg_return && b.return_sum && b.episodes;
    for (int k = 0; k < REF_VARS; k++)
        ok &= (b.var[k] = malloc(nf * sizeof(float))) != NULL;
    for (int k = 0; k < REF_INT_VARS; k++)
        ok &= (b.int_var[k] = malloc(nf * sizeof(int))) != NULL;
    if (!ok) {
        fprintf(stderr, "ref_" REF_NAME ": out of memory\n");
        ref_batch_free(&b);
        return 1;
    }
    double best_ms = 0;
    for (long long r = 0; r < a.repeat; r++) {
        double t0 = ref_now_ms();
        ref_rollout(&b, a.seed, a.steps);
        double ms = ref_now_ms() - t0;
        if (r == 0 || ms < best_ms)
            best_ms = ms;
    }
    long long episodes = 0;
    double return_sum = 0;
    for (long long i = 0; i < a.envs; i++) {
        episodes += b.episodes[i];
        return_sum += b.return_sum[i];
    }
    ref_print(REF_NAME, &a, best_ms, episodes, return_sum, REF_CHECKSUM(&b));
    ref_batch_free(&b);
    return 0;
}

#endif
