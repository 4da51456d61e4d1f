/* libFuzzer target: the random-program differential test on any seed (make
 * fuzz; the fixed set is tests/test_differential.c).
 *
 * The input's first 8 bytes are the generator's seed (tests/random_env.h),
 * the 9th picks f32 or f64. The program runs on the cpu backend and the
 * interpreter from the same reset seed; any difference in the checksum, the
 * episodes or the non-finite restarts aborts with both and the program. Each
 * input compiles one kernel with the system C compiler: expect a few
 * executions a second, not thousands. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "../random_env.h"

static int rollout(const char *path, cs_backend backend, cs_dtype dtype, cs_rollout_stats *st)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = 32;
    cfg.backend = backend;
    cfg.dtype = dtype;
    cfg.threads = 1;
    cfg.no_cache = true;
    cs_env *env = NULL;
    int ok = cs_env_open(&cfg, &env) == CS_OK && cs_env_reset(env, 1) == CS_OK && cs_env_rollout(env, 60, st) == CS_OK;
    if (!ok)
        fprintf(stderr, "%s: %s\n", cs_backend_name(backend), env ? cs_env_error(env) : "out of memory");
    cs_env_close(env);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t seed = 0;
    memcpy(&seed, data, size < 8 ? size : 8);
    cs_dtype dtype = size > 8 && (data[8] & 1) ? CS_DTYPE_F64 : CS_DTYPE_F32;
    static char program[1 << 16];
    size_t len = random_env_program(seed, program, sizeof program);
    char path[] = "/tmp/cartsim-fuzz-differential-XXXXXX.env";
    int fd = mkstemps(path, 4);
    if (fd < 0)
        return 0;
    int written = write(fd, program, len) == (ssize_t)len;
    close(fd);
    cs_rollout_stats cpu, interp;
    int ran = written && rollout(path, CS_BACKEND_CPU, dtype, &cpu) && rollout(path, CS_BACKEND_INTERP, dtype, &interp);
    unlink(path);
    if (!ran) {
        fprintf(stderr, "a generated program did not run (a generator bug):\n%s", program);
        abort();
    }
    if (cpu.checksum != interp.checksum || cpu.episodes != interp.episodes || cpu.nonfinite != interp.nonfinite) {
        fprintf(stderr, "seed %llu, %s: cpu %016llx (%lld episodes, %lld non-finite), interpreter %016llx (%lld, %lld)\n%s",
                (unsigned long long)seed, dtype == CS_DTYPE_F64 ? "f64" : "f32", (unsigned long long)cpu.checksum,
                (long long)cpu.episodes, (long long)cpu.nonfinite, (unsigned long long)interp.checksum,
                (long long)interp.episodes, (long long)interp.nonfinite, program);
        abort();
    }
    return 0;
}
