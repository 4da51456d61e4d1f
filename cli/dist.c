/* The program over several processes: `mpirun -n K build/cartsim ...`.
 *
 * Each rank runs its share of the work (cs_config.first_env, cs_split) and
 * the root (rank 0) reports; this file is the only one that knows MPI, and
 * the library links none. Built without Open MPI, the program is one process
 * and refuses an mpirun launch of several.
 *
 * Failing together, never hanging: every rank meets the others at the same
 * agreement points (after its local work, at the start of every exchange and
 * at exit), where the worst exit status wins and the lowest rank that failed
 * prints its messages (held back until then, so that bad input given to
 * every rank is reported once). A rank that fails after the ranks started
 * exchanging cannot be waited for safely: it ends the job (MPI_Abort). A lost
 * rank ends the job through mpirun. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#ifdef CS_HAVE_MPI
#include <mpi.h>
#endif

/* The program's own state, one per process (the library has none). */
static struct {
    int rank, ranks;
    int local_rank;        /* among the ranks on this node */
    int local_ranks;       /* on this node */
    bool started;          /* MPI_Init done */
    bool exchanging;       /* an agreement passed: ranks may be inside collectives */
    bool failure_agreed;   /* an agreement found a failure: no collective follows */
    int agreed_status;
    cli_buf held;          /* this rank's messages, until an agreement says who prints */
    double exchange_ms;
    int64_t exchange_bytes, exchanges;
} dist = {.ranks = 1, .local_ranks = 1};

int cli_dist_rank(void) { return dist.rank; }
int cli_dist_local_rank(void) { return dist.local_rank; }
int cli_dist_local_ranks(void) { return dist.local_ranks; }

#ifdef CS_HAVE_MPI
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
#endif
int cli_dist_ranks(void) { return dist.ranks; }

/* A launcher's word for how many processes it started (0: none). */
static int launcher_size(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int cli_dist_start(int *argc, char ***argv)
{
#ifdef CS_HAVE_MPI
    if (launcher_size() > 1) {
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return cli_error(CLI_EXIT_FAIL, "MPI did not start");
        dist.started = true;
        MPI_Comm_rank(MPI_COMM_WORLD, &dist.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &dist.ranks);
        /* The ranks sharing this node, for one GPU each. */
        MPI_Comm node;
        if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, dist.rank, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS) {
            MPI_Comm_rank(node, &dist.local_rank);
            MPI_Comm_size(node, &dist.local_ranks);
            MPI_Comm_free(&node);
        }
        /* The root reports; the other ranks' output would repeat it. */
        if (dist.rank != 0 && !freopen("/dev/null", "w", stdout))
            return cli_error(CLI_EXIT_FAIL, "rank %d: cannot silence its output", dist.rank);
    }
    return 0;
#else
    (void)argc;
    (void)argv;
    int n = launcher_size();
    if (n > 1) {
        const char *r = getenv("OMPI_COMM_WORLD_RANK");
        if (!r || atoi(r) == 0)
            fprintf(stderr, "cartsim: this build has no MPI, so it cannot run as %d processes "
                            "(install libopenmpi-dev and openmpi-bin, then rebuild: make)\n", n);
        return CLI_EXIT_USAGE;
    }
    return 0;
#endif
}

bool cli_dist_hold(const char *line)
{
    if (dist.ranks <= 1 || dist.failure_agreed)
        return false;
    if (dist.exchanging) {
        /* No agreement will come: say it now, with the rank. */
        fprintf(stderr, "cartsim: rank %d: %s\n", dist.rank, line);
        return true;
    }
    cli_buf_printf(&dist.held, "cartsim: %s\n", line);
    return true;
}

#ifdef CS_HAVE_MPI
/* The worst status of all ranks; on a failure the lowest rank that failed
 * prints what it held, and no collective follows. */
static int worst_status(int status)
{
    /* {worst status, K - lowest failing rank} in one reduction. */
    int mine[2] = {status, status ? dist.ranks - dist.rank : 0}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] != 0) {
        dist.failure_agreed = true;
        dist.agreed_status = all[0];
        if (all[1] && dist.ranks - all[1] == dist.rank && dist.held.len)
            fwrite(dist.held.data, 1, dist.held.len, stderr);
    }
    return all[0];
}
#endif

int cli_dist_agree(int status)
{
    if (dist.ranks <= 1)
        return status;
#ifdef CS_HAVE_MPI
    if ((status = worst_status(status)) != 0)
        return status;
    dist.exchanging = true;
    return 0;
#else
    return status;
#endif
}

int cli_dist_compare(int status, const uint64_t *digest, int n, int *slot)
{
    *slot = -1;
    if (dist.ranks <= 1)
        return status;
#ifdef CS_HAVE_MPI
    /* Not yet exchanging: a failure found later is still held and told once. */
    if ((status = worst_status(status)) != 0)
        return status;
    uint64_t lo[CLI_ID_COUNT + 1], hi[CLI_ID_COUNT + 1];
    if (n > CLI_ID_COUNT + 1)
        n = CLI_ID_COUNT + 1;
    MPI_Allreduce(digest, lo, n, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(digest, hi, n, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (int k = 0; k < n && *slot < 0; k++)
        if (lo[k] != hi[k])
            *slot = k;
    return 0;
#else
    (void)digest;
    (void)n;
    return status;
#endif
}

#define TEXT_EACH 256

void cli_dist_gather_text(const char *mine, char *out, size_t size)
{
    snprintf(out, size, "%s on rank 0", mine);
#ifdef CS_HAVE_MPI
    if (dist.ranks <= 1)
        return;
    char buf[TEXT_EACH] = {0};
    snprintf(buf, sizeof buf, "%s", mine);
    char *all = malloc((size_t)dist.ranks * TEXT_EACH);
    if (!all) {   /* the others are inside the collective: no way out but this */
        fprintf(stderr, "cartsim: rank %d: out of memory\n", dist.rank);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAIL);
    }
    MPI_Allgather(buf, TEXT_EACH, MPI_CHAR, all, TEXT_EACH, MPI_CHAR, MPI_COMM_WORLD);
    /* Each value once, in the order of the lowest rank that has it: "8 on
     * ranks 0, 2; 16 on rank 1". */
    out[0] = 0;
    size_t used = 0;
    for (int r = 0; r < dist.ranks && used + 1 < size; r++) {
        const char *v = all + (size_t)r * TEXT_EACH;
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(all + (size_t)q * TEXT_EACH, v) == 0;
        if (seen)
            continue;
        int count = 0;
        for (int q = r; q < dist.ranks; q++)
            count += strcmp(all + (size_t)q * TEXT_EACH, v) == 0;
        used += (size_t)snprintf(out + used, size - used, "%s%s on rank%s", used ? "; " : "", v, count > 1 ? "s" : "");
        for (int q = r, k = 0; q < dist.ranks && used + 1 < size; q++)
            if (strcmp(all + (size_t)q * TEXT_EACH, v) == 0)
                used += (size_t)snprintf(out + used, size - used, k++ ? ", %d" : " %d", q);
    }
    free(all);
#endif
}

int cli_dist_end(int status)
{
    if (dist.ranks > 1 && !dist.failure_agreed) {
        if (status != 0 && dist.exchanging) {
            if (dist.held.len)
                fwrite(dist.held.data, 1, dist.held.len, stderr);
#ifdef CS_HAVE_MPI
            fflush(NULL);
            MPI_Abort(MPI_COMM_WORLD, status);
#endif
        }
        status = cli_dist_agree(status);
    }
    if (dist.failure_agreed)
        status = dist.agreed_status;
    cli_buf_free(&dist.held);
#ifdef CS_HAVE_MPI
    if (dist.started) {
        fflush(NULL);
        MPI_Finalize();
    }
#endif
    return status;
}

cs_status cli_dist_exchange(void *user, double *values, int64_t first, int64_t count, int64_t total)
{
    (void)user;
    if (dist.ranks <= 1)
        return CS_OK;
#ifdef CS_HAVE_MPI
    if (cli_dist_agree(0) != 0)
        return CS_ERR_STATE;
    double t0 = now_ms();
    int64_t mine[2] = {first, count};
    int64_t *ranges = malloc(2 * (size_t)dist.ranks * sizeof *ranges);
    int *counts = malloc((size_t)dist.ranks * sizeof *counts), *displs = malloc((size_t)dist.ranks * sizeof *displs);
    if (!ranges || !counts || !displs) {
        free(ranges);
        free(counts);
        free(displs);
        cli_error(CLI_EXIT_FAIL, "out of memory");
        return CS_ERR_NOMEM;
    }
    MPI_Allgather(mine, 2, MPI_INT64_T, ranges, 2, MPI_INT64_T, MPI_COMM_WORLD);
    for (int r = 0; r < dist.ranks; r++) {
        displs[r] = (int)ranges[2 * r];
        counts[r] = (int)ranges[2 * r + 1];
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, values, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    free(ranges);
    free(counts);
    free(displs);
    dist.exchanges++;
    dist.exchange_bytes += total * (int64_t)sizeof(double);
    dist.exchange_ms += now_ms() - t0;
    return CS_OK;
#else
    (void)values;
    (void)first;
    (void)count;
    (void)total;
    return CS_OK;
#endif
}

void cli_dist_exchange_figures(int64_t *exchanges, int64_t *bytes, double *ms)
{
    *exchanges = dist.exchanges;
    *bytes = dist.exchange_bytes;
    *ms = dist.exchange_ms;
}

void cli_dist_sum(int64_t *values, int n)
{
#ifdef CS_HAVE_MPI
    if (dist.ranks > 1)
        MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
#else
    (void)values;
    (void)n;
#endif
}

void cli_dist_sum_real(double *values, int n)
{
#ifdef CS_HAVE_MPI
    if (dist.ranks > 1)
        MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#else
    (void)values;
    (void)n;
#endif
}

void cli_dist_gather_real(double v, double *all)
{
#ifdef CS_HAVE_MPI
    if (dist.ranks > 1) {
        MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return;
    }
#endif
    all[0] = v;
}

/* The slices take turns for each part of the checksum, in rank order (the
 * global order of their environments). */
cs_status cli_dist_checksum(cs_env *env, uint64_t *out)
{
    uint64_t h = CS_CHECKSUM_START;
    unsigned parts = cs_env_checksum_parts(env);
    cs_status s = CS_OK;
    for (unsigned p = 0; p < parts; p++) {
#ifdef CS_HAVE_MPI
        if (dist.ranks > 1 && dist.rank > 0)
            MPI_Recv(&h, 1, MPI_UINT64_T, dist.rank - 1, (int)p, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (dist.ranks > 1 && p > 0)
            MPI_Recv(&h, 1, MPI_UINT64_T, dist.ranks - 1, (int)p, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
        if (s == CS_OK)
            s = cs_env_checksum_part(env, p, &h);
#ifdef CS_HAVE_MPI
        if (dist.ranks > 1) {
            int next = dist.rank + 1 < dist.ranks ? dist.rank + 1 : p + 1 < parts ? 0 : -1;
            if (next >= 0)
                MPI_Send(&h, 1, MPI_UINT64_T, next, (int)(dist.rank + 1 < dist.ranks ? p : p + 1), MPI_COMM_WORLD);
        }
#endif
    }
#ifdef CS_HAVE_MPI
    /* The last rank holds the result: the root reports it. */
    if (dist.ranks > 1) {
        if (dist.rank == dist.ranks - 1)
            MPI_Send(&h, 1, MPI_UINT64_T, 0, (int)parts, MPI_COMM_WORLD);
        if (dist.rank == 0)
            MPI_Recv(&h, 1, MPI_UINT64_T, dist.ranks - 1, (int)parts, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
#endif
    *out = h;
    return s;
}
