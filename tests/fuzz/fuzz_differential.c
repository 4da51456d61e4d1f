/* libFuzzer target: the random-program differential test on any seed (make
 * fuzz; the fixed set is tests/test_differential.c).
 *
 * The input's first 8 bytes are the generator's seed (tests/random_env.h),
 * the 9th picks f32 or f64. The program runs on the cpu backend and the
 * interpreter from the same reset seed; any difference in the checksum, the
 * episodes, the non-finite restarts, the mean return, or the bits of the
 * observations and rewards of the steps after (random_env_results_differ)
 * aborts with both and the program. Each input compiles one kernel with the
 * system C compiler: expect a few executions a second, not thousands. What
 * went wrong goes to stdout: `make fuzz` closes the targets' stderr
 * (-close_fd_mask=2, for the other targets' expected complaints). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "../random_env.h"

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
    /* libFuzzer's watchdog (-timeout) raises SIGALRM every few seconds: a
     * flag that is never set makes only the flag stop a compile */
    static volatile sig_atomic_t never = 0;
    static random_env_result cpu, interp;
    char why[1024];
    int ran = written && random_env_run(path, CS_BACKEND_CPU, dtype, 32, 1, 60, &never, &cpu, why, sizeof why) &&
              random_env_run(path, CS_BACKEND_INTERP, dtype, 32, 1, 60, &never, &interp, why, sizeof why);
    unlink(path);
    if (!ran) {
        fprintf(stdout, "a generated program did not run (a generator bug): %s\n%s", why, program);
        fflush(stdout);
        abort();
    }
    if (random_env_results_differ(&cpu, &interp, why, sizeof why)) {
        fprintf(stdout, "seed %llu, %s: %s\n%s", (unsigned long long)seed, dtype == CS_DTYPE_F64 ? "f64" : "f32", why,
                program);
        fflush(stdout);
        abort();
    }
    return 0;
}
