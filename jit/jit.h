/* The compiler's internal interface, one banner per defining file.
 *
 * One driver, cs_compile (jit/compile.c), runs every stage once, in order,
 * and can stop after any of them (`cartsim dump`):
 *
 *   .env text --cs_parse--> program --policy fragment (agents/, a callback)-->
 *     --fold--> --scalarize--> --concat (fusion full only)--> --dce-->  (stage PASSES)
 *     --cs_plan_build: the partitions, once (none | rules | full)-->  (PARTITION)
 *     --cs_emit (C | CUDA dialect, reading the plan)-->               (EMIT)
 *     backend: cpu (cc + dlopen) | cuda (nvrtc.c, then cuda_driver.c) | interp,
 *              auto picking the first that works; objects cached (cache.c)
 *   => a cs_kernel (program, plan, entry points, notice) or a cs_compile_error
 *
 * sim/env.c only calls the driver; the interpreter (interp.c) runs the
 * program itself, the tests' oracle.
 */
#ifndef CS_JIT_H
#define CS_JIT_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cartsim.h"
#include "ir.h"
#include "lanes.h"
#include "program.h"

/* text.c: a growing string; a failed allocation sticks (failed = true). */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} cs_text;

void cs_text_printf(cs_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_text_vprintf(cs_text *t, const char *fmt, va_list ap);
void cs_text_append(cs_text *t, const char *s, size_t n);
void cs_text_free(cs_text *t);
/* The shortest decimal that reads back as exactly v ("%.17g" at most). */
void cs_text_real(cs_text *t, double v);
/* Length of the valid UTF-8 sequence at s (n >= 1 bytes left), or 0:
 * overlong forms, surrogates and code points past U+10FFFF are invalid. */
size_t cs_utf8_length(const unsigned char *s, size_t n);
/* s as a message may echo it to a terminal: control characters (C0, DEL,
 * C1) and bytes that are not valid UTF-8 as \xNN, the rest as it is;
 * truncated to fit out (size bytes with the NUL). Returns out. Every reader
 * that quotes its input in a message passes it through here. */
char *cs_escape(const char *s, char *out, size_t size);

/* output_file.c: the one way cartsim writes a file (policy files, frames,
 * videos, cache entries, kernel sources). A destination that exists must be a
 * regular file (anything else is refused: CS_ERR_ARGUMENT); the bytes go to a
 * temporary made exclusively (never through a link) with a fresh name in its
 * directory, ".NAME.XXXXXXXXXXXX.tmp", renamed over the destination by commit
 * once written and closed without error; abort (or a failed commit) removes
 * it. Messages read "cannot write PATH: why"; a missing directory is
 * CS_ERR_NOT_FOUND, one that refuses the file CS_ERR_ARGUMENT, a failed write
 * (a full disk, "File too large") CS_ERR_IO. */
typedef struct {
    int dir;               /* the destination's directory; -1 when nothing is begun */
    int fd;                /* the temporary, open for writing */
    FILE *stream;          /* over fd, once cs_output_stream made it */
    int error;             /* errno of the first failed cs_output_write */
    char name[256];        /* the destination in dir */
    char temp[256];        /* the temporary in dir */
    char path[4096];       /* the destination as named, for messages */
} cs_output;

/* "a FIFO", "a directory", "a device", "a socket", "a symbolic link" or
 * "not a regular file", for a stat's st_mode. */
const char *cs_file_kind(unsigned mode);
/* Before long work: whether `path` could be written (its directory exists
 * and takes a new file; the destination is absent or a regular file). */
cs_status cs_output_check(const char *path, char *err, size_t err_size);
/* mode: of a new file, before the umask (a file replaced keeps its own). */
cs_status cs_output_begin(cs_output *o, const char *path, unsigned mode, char *err, size_t err_size);
/* The same for `name` in the directory open as dir (path: for messages). */
cs_status cs_output_begin_at(cs_output *o, int dir, const char *name, const char *path, unsigned mode, char *err,
                             size_t err_size);
FILE *cs_output_stream(cs_output *o);   /* a stdio stream over the temporary; NULL: out of memory */
cs_status cs_output_write(cs_output *o, const void *data, size_t n);
cs_status cs_output_commit(cs_output *o, char *err, size_t err_size);
void cs_output_abort(cs_output *o);   /* harmless when nothing is begun */

/* parse.c, lex.c: the .env DSL (docs/dsl.md). */
typedef struct {
    char name[CS_NAME_MAX];
    bool is_range;      /* NAME=LO:HI, drawn per lane at every restart */
    double value;       /* NAME=VALUE */
    double low, high;
} cs_param_override;

/* Parses "NAME=VALUE" or "NAME=LO:HI". 0, or -1 with a message. */
int cs_parse_override(const char *text, cs_param_override *out, char *err, size_t err_size);

/* Parses a whole .env source (not NUL-terminated: len counts). On success
 * *out is a finished program (cs_program_finish done) and 0 is returned; on
 * failure -1 with "file:line:col: message" in err and *out NULL, or -2 when
 * the overrides are at fault (an unknown parameter, named with the list of
 * the file's params; a const; one overridden twice). */
int cs_parse(const char *src, size_t len, const char *filename, cs_type real,
             const cs_param_override *overrides, unsigned n_overrides,
             cs_program **out, char *err, size_t err_size);

/* fold.c, scalarize.c, concat.c, dce.c: passes. Each rewrites the program's roots (the
 * graph is append-only; dce rebuilds it with the live nodes only) and returns
 * how many nodes it changed, or -1 when memory ran out. */
int cs_pass_fold(cs_program *p);    /* IEEE-safe constant folding */
int cs_pass_concat(cs_program *p);  /* index(stack(..)) forwards the operand */
int cs_pass_dce(cs_program *p);     /* keep only what the roots reach */
/* scalarize.c: arrays of at most CS_SCALARIZE_MAX elements become their
 * elements (then folds what that made constant). */
#define CS_SCALARIZE_MAX 16
int cs_pass_scalarize(cs_program *p);

typedef struct {
    const char *name;
    int (*run)(cs_program *p);
    const char *what;
} cs_pass_info;

extern const cs_pass_info cs_pass_table[];   /* in pipeline order, ends with {0} */

/* partition.c: which nodes of an entry share a kernel, under a fusion mode
 * (cs_fusion, cartsim.h's). */

#define CS_NO_KERNEL UINT32_MAX

typedef struct {
    cs_fusion fusion;
    unsigned n_kernels;
    uint32_t *kernel;     /* [cs_graph_count] kernel of each computed node; CS_NO_KERNEL for
                             nodes outside the entry and for leaves loaded in place
                             (CONST, CARRIED, INPUT, PARAM, SEGSTEP) */
    char (*reason)[160];  /* [n_kernels] why kernel k does not fuse with k-1 ("" for 0) */
} cs_partition;

int cs_partition_build(const cs_graph *g, const cs_node *roots, unsigned n_roots,
                       cs_fusion fusion, cs_partition *out);
void cs_partition_free(cs_partition *part);

/* The partitions of a program's entries, built once by the driver and handed
 * to the emitter and the dump: the rollout step and cs_env_step's step under
 * the fusion mode, and the step fully fused (the CUDA dialect's step kernel
 * is always one launch). */
typedef struct {
    cs_node *roll_roots, *step_roots;   /* cs_program_step_roots with and without the policy */
    unsigned n_roll, n_step;
    cs_partition roll, step, step_fused;
} cs_plan;

int cs_plan_build(const cs_program *p, cs_fusion fusion, cs_plan *out);   /* 0, or -1: out of memory */
void cs_plan_free(cs_plan *plan);


/* The roots of a step: with_policy, the rollout's (roll_next, roll_reward,
 * roll_terminated, roll_truncated, the records); otherwise next, obs_next, reward,
 * terminated, truncated. Returns the count; `roots` holds at least
 * cs_program_step_root_max(p). */
unsigned cs_program_step_roots(const cs_program *p, bool with_policy, cs_node *roots);
unsigned cs_program_step_root_max(const cs_program *p);

/* dump.c */
int cs_dump_graph(const cs_program *p, bool dot, cs_text *out);
int cs_dump_partition(const cs_program *p, const cs_partition *part, cs_text *out);

/* emit.c: one emitter, two dialects. */
typedef struct {
    cs_fusion fusion;
    int unroll;           /* steps per loop iteration (>= 1) */
    int block;            /* CUDA: threads per block the source assumes (0: any) */
    int arch;             /* CUDA: sm_XY as XY (0: unknown) */
} cs_schedule;

typedef enum { CS_DIALECT_C, CS_DIALECT_CUDA } cs_dialect;

/* The first line of C whose step loops over array elements (nests): the
 * cpu backend compiles such source at -O2 with -O3's loop passes, the rest
 * at -O3 (jit/backend_cpu.c, opt_level: -O3 doubled Breakout-MinAtar's
 * compile, past issue 26's 1 s, for no speed). */
#define CS_ELEMENT_LOOPS_MARK "/* cartsim: element loops */\n"

/* The plan must be the program's, built under s->fusion. */
int cs_emit(const cs_program *p, const cs_plan *plan, const cs_schedule *s, cs_dialect d, cs_text *out,
            char *err, size_t err_size);

extern const char cs_prelude_text[];   /* lanes.h, philox.h, rng.h, mathf.h, mathd.h (generated) */

/* interp.c: the reference evaluator, the oracle of the tests. */
void cs_interp_restart(const cs_program *p, const cs_lanes *l);
void cs_interp_step(const cs_program *p, const cs_lanes *l);
void cs_interp_rollout(const cs_program *p, const cs_lanes *l);
/* Chosen roots of one lane at a time (render/'s pictures): their live nodes
 * are found once (NULL when memory ran out), then each call evaluates them
 * over lane `lane` of l's CARRIED and PARAM values into out[n_roots] (a
 * root left 0 reads 0). The program must outlive the handle. */
typedef struct cs_interp_roots cs_interp_roots;
cs_interp_roots *cs_interp_roots_new(const cs_program *p, const cs_node *roots, unsigned n_roots);
void cs_interp_roots_eval(cs_interp_roots *r, const cs_lanes *l, long long lane, double *out);
void cs_interp_roots_free(cs_interp_roots *r);

/* hash.c: 128-bit content hashes for cache keys and entry checksums. */
typedef struct {
    uint64_t lo, hi;
} cs_hash128;

cs_hash128 cs_hash_bytes(const void *data, size_t n, cs_hash128 seed);
void cs_hash_hex(cs_hash128 h, char out[33]);
/* clock.c: milliseconds of CLOCK_MONOTONIC, for compile and run times. */
double cs_now_ms(void);

/* 64-bit FNV-1a, chained from CS_FNV1A_START: h = cs_fnv1a(h, data, n). The
 * checksums users see (rollouts, policy files) are FNV-1a by definition. */
#define CS_FNV1A_START 0xcbf29ce484222325ull
uint64_t cs_fnv1a(uint64_t h, const void *data, size_t n);

/* cache.c: the on-disk kernel cache (DESIGN.md: private, atomic, verified,
 * bounded in size, never waited on for long). */
#define CS_CACHE_LOCK_WAIT_S 10      /* the longest wait for the cache's lock; $CARTSIM_CACHE_LOCK_WAIT_S */
#define CS_CACHE_LOCK_WAIT_MAX_S 3600 /* ... which may be 0 (no wait) up to this */
#define CS_CACHE_MAX_MB_DEFAULT 512  /* the size bound; $CARTSIM_CACHE_MAX_MB, cs_config.cache_max_mb */
#define CS_CACHE_NAME_MAX 65         /* an entry's name: 32 hex digits, its suffix, a NUL */
#define CS_CACHE_WHAT_MAX 112        /* an entry's description, NUL included */

typedef struct {
    char dir[4096];        /* "" when running without a cache */
    char warning[512];     /* why the cache was refused or degraded, or "" */
    int dfd;               /* the verified directory, open while dir[0] */
    double lock_wait_ms;
    long long max_bytes;   /* stores evict down to this; <= 0: no bound */
    char what[CS_CACHE_WHAT_MAX];   /* what the next stores hold, for `cartsim cache list` (cs_cache_describe) */
} cs_cache;

/* Opens `dir` (NULL: $XDG_CACHE_HOME/cartsim, else ~/.cache/cartsim),
 * creating it 0700, after checking it and every ancestor (owned by root or
 * the user, not writable by others unless sticky). Never fails: a refused
 * directory falls back to a private temporary one or to no cache, and says
 * why in c->warning. Sweeps what killed processes left. */
void cs_cache_open(cs_cache *c, const char *dir);
/* 1 and the entry's path when `key` (32 hex digits) has a verified entry
 * with that suffix (".so", ".cubin"); 0 otherwise (a corrupt one is removed). */
int cs_cache_lookup(cs_cache *c, const char *key, const char *suffix, char *path, size_t path_size);
/* The same, as a descriptor open on the entry that was verified (read it, or
 * load /proc/self/fd/N: it stays valid if the entry is evicted); -1 on a miss.
 * A hit counts as a use for eviction. */
int cs_cache_open_entry(cs_cache *c, const char *key, const char *suffix);
/* Says what the next stores hold, from a kernel's source (the emitter's
 * first line, "cartsim kernel: cartpole (CartPole-v1), f32, fusion full,
 * unroll 10, C dialect") and where it runs ("cpu", "cuda sm_90"): kept in
 * each entry's record, shown by cs_cache_list. */
void cs_cache_describe(cs_cache *c, const char *source, const char *backend);
/* Installs the file at `built` as the entry for key: written to a temporary
 * name with its checksum, then renamed; then evicts the least recently used
 * entries beyond max_bytes. 0, or -1 (entry not stored; warning set). */
int cs_cache_store(cs_cache *c, const char *key, const char *suffix, const char *built,
                   char *path, size_t path_size);
/* A build directory: made in a directory open as `parent`, named
 * prefix<pid>-<8 hex digits>; `path` (/proc/PID/fd/FD) reaches it through
 * its descriptor, whatever is renamed meanwhile. */
typedef struct {
    int fd, parent;
    char name[64];
    char path[4160];   /* /proc/PID/fd/FD, or parent_path/name where /proc is missing */
} cs_build_dir;

int cs_build_dir_make(cs_build_dir *b, int parent, const char *parent_path, const char *prefix);
/* Removes it and the flat files in it. */
void cs_build_dir_remove(cs_build_dir *b);
/* Removes the build directories prefix<pid>-* in parent, owned by this user,
 * whose process is gone. */
void cs_build_dir_sweep(int parent, const char *prefix);
/* A new build directory inside the cache (cs_build_dir_remove removes it);
 * one left by a killed process is removed by the next cs_cache_open. -1
 * without a cache. */
int cs_cache_build_dir(cs_cache *c, cs_build_dir *b);

typedef struct {
    char name[CS_CACHE_NAME_MAX];   /* the entry's file name */
    char what[CS_CACHE_WHAT_MAX];   /* "cartpole (CartPole-v1), f32, fusion full, unroll 10, cpu"; "" if unknown */
    unsigned long long bytes;       /* the entry and its metadata */
    long long last_use;             /* seconds since the epoch */
} cs_cache_item;

/* The entries, least recently used first (*items malloc'ed), and *total the
 * bytes of every file in the directory. 0, or -1. */
int cs_cache_list(cs_cache *c, cs_cache_item **items, size_t *count, unsigned long long *total);
/* Removes every entry (and stale leftovers) under the exclusive lock: the
 * number of entries removed (a kernel, or a kernel's side record: an entry
 * and its metadata count once), or -1 (with the warning set when some files
 * could not be removed); *leftovers (may be NULL) the other files and build
 * folders that went. */
long cs_cache_clear(cs_cache *c, long *leftovers);
/* Removes the private temporary directory, if one was made; closes the rest. */
void cs_cache_close(cs_cache *c);

/* supervise.c: a command (the C compiler) under a supervisor process that
 * ends the command's whole tree of processes when the command ends, when
 * stopped, and when the program dies (even by SIGKILL); a grandchild that
 * left the command's process group (setsid) too. The command's stdout goes
 * to /dev/null, its stderr to err_path. */
typedef struct {
    int pid;               /* the supervisor, or -1 */
    int stop_fd;           /* the program's end of the pipe: closing it stops the command */
} cs_supervised;

int cs_supervised_start(cs_supervised *s, const char *path, char *const argv[], char *const envp[],
                        const char *err_path, char *err, size_t err_size);
/* 1 with *status as waitpid gives it (the command's exit status or signal),
 * 0 while it runs, -1 on an error. */
int cs_supervised_poll(cs_supervised *s, int *status);
/* Ends the command and everything it started; returns once they are gone. */
void cs_supervised_stop(cs_supervised *s);

/* backend_cpu.c: C source -> shared object -> entry points. */
typedef void (*cs_entry)(const cs_lanes *l);

typedef struct {
    cs_entry restart, step, rollout;
    unsigned long long block_bytes;   /* cs_lanes.blocks: bytes per block of lanes */
    void *handle;
    bool cache_hit;
    double compile_ms;
} cs_cpu_kernel;

/* 0, or with the message in err: CS_CPU_NO_CC (the compiler named by cc,
 * else $CC, else "cc", is not on PATH), CS_CPU_FAIL (it failed, or the
 * object did not load), CS_CPU_TIMEOUT (it ran past timeout_s seconds;
 * <= 0: no limit) or CS_CPU_INTERRUPTED (a signal was handled meanwhile, or
 * *interrupt became nonzero): on the last two its whole process group was killed. */
#define CS_CPU_FAIL (-1)
#define CS_CPU_NO_CC (-2)
#define CS_CPU_TIMEOUT (-3)
#define CS_CPU_INTERRUPTED (-4)
int cs_cpu_compile(const char *source, const char *cc, double timeout_s, const volatile sig_atomic_t *interrupt,
                   cs_cache *cache, cs_cpu_kernel *out, char *err, size_t err_size);
/* The same at a chosen optimization level (cs_cpu_compile: SPEED). COMPILE
 * (-O1) is for a kernel that runs a few hundred steps per compile, PPO's
 * recording rollout: a fraction of the compile, the same bits. QUICK (-Og)
 * is a tiered compile's first kernel (tier.c): the fastest to build, the
 * same bits again, cached under a key of its own. */
typedef enum { CS_CPU_OPT_SPEED, CS_CPU_OPT_COMPILE, CS_CPU_OPT_QUICK } cs_cpu_opt;
int cs_cpu_compile_opt(const char *source, const char *cc, cs_cpu_opt opt, double timeout_s,
                       const volatile sig_atomic_t *interrupt, cs_cache *cache, cs_cpu_kernel *out, char *err,
                       size_t err_size);
/* The cache's kernel of source at opt, without compiling: 0 and the kernel,
 * 1 when the cache has none, or CS_CPU_NO_CC. */
int cs_cpu_load_cached(const char *source, const char *cc, cs_cpu_opt opt, cs_cache *cache, cs_cpu_kernel *out,
                       char *err, size_t err_size);
void cs_cpu_unload(cs_cpu_kernel *k);

/* tier.c: a tiered compile's optimized build, in a thread of its own while
 * the quick kernel runs. It builds as cs_cpu_compile_opt does (the cache
 * stores its kernel) with a copy of the source and the compiler's name, and
 * uses `cache` alone until it is taken or stopped: the caller leaves the
 * cache be meanwhile. */
typedef struct cs_cpu_background cs_cpu_background;
/* 0 and *out, or -1 (no thread or no memory: err says why). defer: the
 * thread starts a moment later (tier.c's DEFER_MS), at a take. */
int cs_cpu_background_start(const char *source, const char *cc, cs_cpu_opt opt, double timeout_s, cs_cache *cache,
                            bool defer, cs_cpu_background **out, char *err, size_t err_size);
/* 0 while it builds (never, with wait: then it waits for the end); 1 once it
 * is over, *b freed and NULL, with the kernel in *out (its compile_ms the
 * build's), or -1 with why in err. A deferred build due starts here. */
int cs_cpu_background_take(cs_cpu_background **b, bool wait, cs_cpu_kernel *out, char *err, size_t err_size);
/* Stops it: the compiler's processes ended and reaped, the thread joined,
 * what it built unloaded, *b freed. NULL is fine. */
void cs_cpu_background_stop(cs_cpu_background *b);

/* The cuda backend in two halves: nvrtc.c, CUDA C -> NVRTC -> cubin (cached
 * like the cpu objects, suffix ".cubin"; PTX, when NVRTC is older than the
 * device: ".ptx"); cuda_driver.c, the driver API (load, buffers, launch).
 * libnvrtc and libcuda.so.1 are opened with dlopen (cuda_lib.c;
 * $CARTSIM_NVRTC / $CARTSIM_CUDA_DRIVER name other files), so no CUDA
 * header is needed to build and nothing is needed to run on the cpu.
 * Every handle owns its own function tables (no global state); every driver
 * and NVRTC call is checked, and a failure becomes a message with the
 * library's own text. Functions return 0, or one of the codes below with the
 * message in err. */
#define CS_CUDA_FAIL (-1)
#define CS_CUDA_LIMIT (-2)       /* more device memory than is free */
#define CS_CUDA_ARCH (-3)        /* compiling: NVRTC cannot target that architecture */
#define CS_CUDA_NO_DRIVER (-4)   /* opening: no libcuda.so.1 (or only the toolkit's stub) */
#define CS_CUDA_NO_DEVICE (-5)   /* opening: a driver, but no device */
#define CS_CUDA_NO_NVRTC (-6)    /* opening: no libnvrtc */
#define CS_CUDA_NOT_INSTALLED (-7)   /* opening: no libcuda.so.1 where the loader looks: no NVIDIA driver here */

typedef struct cs_nvrtc cs_nvrtc;

/* nvrtc.c. Opens NVRTC alone: compiling needs no GPU and no driver. */
int cs_nvrtc_open(cs_nvrtc **out, char *err, size_t err_size);
void cs_nvrtc_close(cs_nvrtc *nv);
void cs_nvrtc_version(const cs_nvrtc *nv, int *major, int *minor);

typedef struct {
    unsigned char *data;   /* the cubin, or the PTX text (NUL-terminated, the NUL counted in size); malloc'ed */
    size_t size;
    bool ptx;              /* PTX for the driver to compile, not a cubin */
    int arch;              /* what it targets: sm_<arch>, or compute_<arch> when ptx */
    int spill_bytes;       /* ptxas's spill stores per thread, the most of the rollout kernels; -1 unknown (PTX) */
    bool cache_hit;
    double compile_ms;
} cs_cubin;

/* Whether the cuda backend lets NVRTC contract a multiply and an add into a
 * fused multiply-add: never, in f32 as in f64, because the cpu backend
 * compiles with -ffp-contract=off and the interpreter and folding round each
 * op; contracted, f32 kernels on an H200 gave other bits than the cpu for
 * every environment with real-valued physics (bench/gpu-logs/h200-2026-11-27). */
#define CS_CUDA_FMAD false

/* Source -> cubin for sm_<arch> (arch = 10 * major + minor). fmad false
 * passes --fmad=false. Cached under a key of the source, the NVRTC
 * version, the architecture, the options and CS_LANES_ABI; a failed compile
 * is never cached and its message carries NVRTC's log. An architecture
 * NVRTC does not know: CS_CUDA_ARCH. */
int cs_cuda_compile(cs_nvrtc *nv, const char *source, int arch, bool fmad, cs_cache *cache, cs_cubin *out,
                    char *err, size_t err_size);
/* The same for a device of that architecture: where NVRTC does not know
 * sm_<arch> (a device newer than NVRTC), PTX for the newest compute_B <= arch
 * it knows (out->ptx), which cuModuleLoadData compiles for the device. PTX
 * never runs on an architecture older than its own, so an arch older than
 * NVRTC's oldest stays CS_CUDA_ARCH. */
int cs_cuda_compile_or_ptx(cs_nvrtc *nv, const char *source, int arch, bool fmad, cs_cache *cache, cs_cubin *out,
                           char *err, size_t err_size);
void cs_cubin_free(cs_cubin *bin);
/* "sm_90", "sm_90a", "90" or "9.0" -> 90; -1 when malformed. */
int cs_cuda_parse_arch(const char *text);
/* The most bytes of spill stores ptxas's verbose log reports for a function
 * whose name starts with `prefix`; -1 when it reports none (ptxas_log.c). */
long cs_ptxas_spill_bytes(const char *log, const char *prefix);

/* cuda_driver.c: device 0 and its primary context (shared with any CUDA
 * runtime code in the process, so the device pointers are theirs to use
 * too), one loaded module, and the device copies of a cs_lanes buffer set. */
typedef struct cs_cuda cs_cuda;

typedef struct {
    char name[256];
    int arch;              /* compute capability, 10 * major + minor */
    int sm_count;
    size_t total_bytes;
} cs_cuda_device;

/* Opens the driver, device `device` (modulo the devices there are) and
 * NVRTC. 0, or why no device is usable:
 * CS_CUDA_NOT_INSTALLED, CS_CUDA_NO_DRIVER, CS_CUDA_NO_DEVICE, CS_CUDA_NO_NVRTC, or CS_CUDA_FAIL
 * with the driver's own message. */
int cs_cuda_open(cs_cuda **out, int device, char *err, size_t err_size);
void cs_cuda_close(cs_cuda *c);   /* NULL is fine */
/* cs_cuda_open then close: 1 when a device is usable, else 0 and why. */
int cs_cuda_probe(char *why, size_t why_size);
const cs_cuda_device *cs_cuda_device_info(const cs_cuda *c);
cs_nvrtc *cs_cuda_nvrtc(cs_cuda *c);

typedef struct {
    cs_fusion fusion;      /* full: cs_kernel_rollout; rules, none: cs_rollout_k0 .. k{K-1} */
    int unroll;            /* the steps one non-persistent launch takes (full) */
    bool persistent;       /* full: the whole rollout in one launch */
    int block;             /* threads per block; 0: from the occupancy API */
} cs_cuda_schedule;

typedef struct {
    int block;             /* of the rollout kernel (the first one under rules/none) */
    int registers;         /* per thread, the most of the rollout kernels */
    int local_bytes;       /* local memory per thread (spills), the most of the rollout kernels */
    unsigned kernels_per_step, scratch_bytes_per_lane;   /* the module's exported constants */
} cs_cuda_kernel_info;

/* Loads a module (a cubin, or PTX the driver compiles) and finds its entry
 * points, block sizes, registers and spills. A module already loaded is
 * unloaded first. */
int cs_cuda_load(cs_cuda *c, const cs_cubin *bin, const cs_cuda_schedule *s, cs_cuda_kernel_info *info,
                 char *err, size_t err_size);
void cs_cuda_unload(cs_cuda *c);

/* The buffers of a cs_lanes, one bit each in the masks below. CS_BUF_OBS and
 * CS_BUF_FINAL_OBS carry the int64 observations (obs_int, final_obs_int) too,
 * and the info values (info, final_info) likewise. */
typedef enum {
    CS_BUF_CARRIED, CS_BUF_PARAMS, CS_BUF_SEGSTEP, CS_BUF_INPUTS, CS_BUF_OBS, CS_BUF_FINAL_OBS,
    CS_BUF_REWARD, CS_BUF_TERMINATED, CS_BUF_TRUNCATED, CS_BUF_PENDING, CS_BUF_SEG_RETURN,
    CS_BUF_SEGMENTS, CS_BUF_RETURN_SUM, CS_BUF_NONFINITE, CS_BUF_INDEX_FAULT, CS_BUF_COUNT
} cs_buf;
#define CS_BUF_BIT(b) (1u << (b))
#define CS_BUF_ALL ((1u << CS_BUF_COUNT) - 1)

typedef struct {
    long long n;           /* lanes: the stride */
    unsigned n_carried, n_params, n_obs, n_inputs;
    size_t real_size;      /* of params and real carried slots; inputs are 4 bytes (int or float) */
    const size_t *slot_size;   /* [n_carried] bytes of each carried slot's element (real, int, bool) */
    unsigned n_obs_int;    /* int64 observation rows */
    unsigned n_info;       /* info rows (doubles) */
    unsigned n_step_draws, n_restart_draws;   /* rows of replayed words a step or restart may upload
                                                 (lanes.h's step_words, restart_words); 0: none */
    unsigned n_records;    /* a recording policy's values per step (lanes.h's record); 0: none */
} cs_lanes_layout;

/* Device bytes a layout needs with the loaded module's scratch. */
long long cs_cuda_bytes_needed(const cs_cuda *c, const cs_lanes_layout *lay);
/* Allocates the device buffers (zeroed), after checking the request against
 * the device's free memory (CS_CUDA_LIMIT: nothing allocated). Needs a
 * loaded module (its scratch size). */
int cs_cuda_alloc(cs_cuda *c, const cs_lanes_layout *lay, char *err, size_t err_size);

/* Host <-> device. `host` holds the host buffers (a runtime's lanes
 * template). A launch marks every buffer it may write as newer on the device;
 * fetch copies back only the buffers of `mask` so marked, and unmarks them;
 * read copies them back whatever the marks (for what a CUDA caller wrote);
 * upload copies the host's buffers of `mask` to the device; zero clears them
 * on both sides. */
int cs_cuda_fetch(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size);
int cs_cuda_read(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size);
int cs_cuda_upload(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size);
int cs_cuda_zero(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size);
/* Buffers newer on the device than on the host (a mask). */
unsigned cs_cuda_dirty(const cs_cuda *c);

/* The device buffers, for CUDA callers: one allocation per cs_buf, laid out
 * like the host's ([slot][n] for carried, params and inputs); 0 where a
 * buffer is empty. Valid until the next cs_cuda_alloc or close. */
typedef struct {
    int ordinal;                        /* the CUDA device */
    void *context;                      /* its primary context (a CUcontext) */
    unsigned long long buf[CS_BUF_COUNT];
} cs_cuda_buffers;
/* CS_CUDA_FAIL before cs_cuda_alloc. */
int cs_cuda_buffers_of(const cs_cuda *c, cs_cuda_buffers *out);

/* The entries, over lanes [l->begin, l->end) with l's t, seed, mode; the
 * pointers in l are ignored (the device copies are used). step uploads the
 * inputs from l->inputs first, unless a CUDA caller wrote them on the device
 * (inputs_on_device). rollout takes l->steps steps and
 * adds its launches to *launches. Each returns once the device is done. */
int cs_cuda_restart(cs_cuda *c, const cs_lanes *l, char *err, size_t err_size);
int cs_cuda_step(cs_cuda *c, const cs_lanes *l, bool inputs_on_device, char *err, size_t err_size);
int cs_cuda_rollout(cs_cuda *c, const cs_lanes *l, long long *launches, char *err, size_t err_size);

/* cuda_driver.c's generic half, for kernels of the library's own beside the
 * environment's (train/ppo_cuda.c, PPO's update): modules loaded from
 * NVRTC's output (as many as wanted, apart from the environment's), device
 * memory, and launches of kernels whose one parameter is a pointer (to a
 * struct in device memory: `extern "C" __global__ void f(const T *args)`).
 * Each enters the handle's context itself; errors as the functions above. */
typedef struct cs_cuda_module_st *cs_cuda_module;       /* a CUmodule */
typedef struct cs_cuda_function_st *cs_cuda_function;   /* a CUfunction */
typedef unsigned long long cs_cuda_ptr;                 /* a CUdeviceptr */
int cs_cuda_module_load(cs_cuda *c, const cs_cubin *bin, cs_cuda_module *out, char *err, size_t err_size);
void cs_cuda_module_unload(cs_cuda *c, cs_cuda_module m);   /* 0 is fine */
int cs_cuda_module_function(cs_cuda *c, cs_cuda_module m, const char *name, cs_cuda_function *out, char *err,
                            size_t err_size);
int cs_cuda_mem_alloc(cs_cuda *c, size_t bytes, cs_cuda_ptr *out, char *err, size_t err_size);
void cs_cuda_mem_free(cs_cuda *c, cs_cuda_ptr p);   /* 0 is fine */
int cs_cuda_mem_upload(cs_cuda *c, cs_cuda_ptr dst, const void *src, size_t bytes, char *err, size_t err_size);
int cs_cuda_mem_download(cs_cuda *c, void *dst, cs_cuda_ptr src, size_t bytes, char *err, size_t err_size);
/* `threads` threads (one per item: the kernel checks its index against its
 * count) in blocks of CS_CUDA_LAUNCH_BLOCK, their argument `arg`; returns at
 * once (launches run in order). `name` is for messages. */
#define CS_CUDA_LAUNCH_BLOCK 128
int cs_cuda_launch_ptr(cs_cuda *c, cs_cuda_function fn, const char *name, long long threads, cs_cuda_ptr arg,
                       char *err, size_t err_size);
/* Waits for every launch so far; a kernel's fault is reported here. */
int cs_cuda_synchronize(cs_cuda *c, const char *what, char *err, size_t err_size);

/* compile.c: the driver, every stage once, in order (the picture at the top
 * of this file). It stops after the stage the request names: `cartsim dump`
 * is this driver stopped early. */
typedef enum {
    CS_COMPILE_OK = 0,
    CS_COMPILE_ARGUMENT,       /* a bad request: a --param override (malformed, or naming no param), no arch */
    CS_COMPILE_SYNTAX,         /* the .env source is malformed ("file:line:col: ...") */
    CS_COMPILE_POLICY,         /* the policy fragment refused (an unknown policy, a bad shape) */
    CS_COMPILE_UNKNOWN_PASS,   /* `after` names no pass */
    CS_COMPILE_EMIT,           /* the emitter refused the program */
    CS_COMPILE_NO_CC,          /* no C compiler on PATH */
    CS_COMPILE_CC,             /* the C compiler failed, or its object did not load */
    CS_COMPILE_CC_TIMEOUT,     /* the C compiler ran past its time limit (its process group killed) */
    CS_COMPILE_INTERRUPTED,    /* a signal (Ctrl-C) stopped the compile */
    CS_COMPILE_NO_DRIVER,      /* no CUDA driver */
    CS_COMPILE_NOT_INSTALLED,  /* no NVIDIA driver on this machine at all: auto runs the cpu without a notice */
    CS_COMPILE_NO_DEVICE,      /* a CUDA driver, but no device */
    CS_COMPILE_NO_NVRTC,       /* no libnvrtc */
    CS_COMPILE_DEVICE_OPEN,    /* the driver failed while opening the device */
    CS_COMPILE_NVRTC,          /* NVRTC failed (its log in the message), or cannot build for the device */
    CS_COMPILE_UNKNOWN_ARCH,   /* NVRTC does not know the architecture asked for */
    CS_COMPILE_DEVICE,         /* the driver failed loading the module on a usable device */
    CS_COMPILE_LIMIT,          /* more device memory than is free */
    CS_COMPILE_NOMEM,
    CS_COMPILE_ERROR_COUNT
} cs_compile_error;

/* The status the public API reports for each kind. */
cs_status cs_compile_status(cs_compile_error e);

typedef enum {
    CS_STAGE_PASSES,      /* parse, the policy, the passes up to `after` */
    CS_STAGE_PARTITION,   /* ... and the plan */
    CS_STAGE_EMIT,        /* ... and the source of `dialect` */
    CS_STAGE_BACKEND,     /* ... and a kernel ready to run (or, with `cubin`, NVRTC's cubin) */
} cs_stage;

/* Binds the policy fragment (sets p->policy[]): agents/ hands it in, so jit/
 * never reaches up a floor. A status and the reason in err. */
typedef cs_status (*cs_policy_binder)(cs_program *p, void *ctx, char *err, size_t err_size);

typedef struct {
    const char *source;               /* the .env text (not NUL-terminated: len counts) */
    size_t len;
    const char *filename;             /* as messages name it */
    cs_type real;
    bool fast_f64;                    /* f64 math by jit/mathd.h (cs_config.math FAST) */
    bool strict;                      /* cs_config.strict: the kernels report an index out of range */
    const char *const *params;        /* "NAME=VALUE" or "NAME=LO:HI" overrides */
    unsigned n_params;
    cs_policy_binder bind_policy;     /* NULL: the program's own p->policy[] */
    void *policy_ctx;
    cs_fusion fusion;
    int unroll, block;                /* block: CUDA threads per block, 0: the occupancy API's */
    int device;                       /* CUDA device ordinal, modulo the devices there are */
    bool persistent;                  /* cuda, fusion full: the whole rollout in one launch */
    const char *after;                /* the last pass (NULL: all; "parse": none) */
    cs_stage stop;
    cs_dialect dialect;               /* stop EMIT: the source's dialect */
    int arch;                         /* stop EMIT, CUDA: the sm_XY it assumes; cubin: its target (0: the device's) */
    bool cubin;                       /* stop BACKEND: NVRTC's cubin only, no device needed with arch */
    cs_backend backend;               /* stop BACKEND: auto, cpu, cuda or interp */
    const char *cc;                   /* the cpu's C compiler (NULL: $CC, else "cc") */
    double cc_timeout_s;              /* its time limit in seconds (<= 0: none) */
    const volatile sig_atomic_t *interrupt;   /* nonzero: stop compiling (NULL: none) */
    int64_t cache_max_mb;             /* the cache's size bound (0: $CARTSIM_CACHE_MAX_MB, else its default) */
    const char *cache_dir;            /* NULL: the default chain (cs_cache_open) */
    bool no_cache;
    bool tier;                        /* cpu, a kernel not in the cache: run a quick one while the optimized
                                         one builds (cs_config.tier, tier.c) */
} cs_compile_request;

/* What the runtime needs of a compiled environment. */
typedef struct {
    cs_program *prog;
    cs_plan plan;                     /* from stage PARTITION on */
    unsigned kernels_per_step;        /* of the rollout step under the fusion mode */
    cs_text source;                   /* stop EMIT */
    cs_cubin cubin;                   /* cubin */
    cs_backend backend;               /* what runs it: cpu, cuda or interp (never auto) */
    cs_cache cache;                   /* the optimizing build's alone while it runs */
    cs_cpu_kernel cpu;
    cs_cpu_background *optimizing;    /* tier: the optimized build of cpu's quick kernel, or NULL */
    cs_cuda *cuda;                    /* the device, its module (buffers are the runtime's to allocate) */
    cs_cuda_kernel_info cuda_kernel;
    int unroll;                       /* cuda may lower it (spills) */
    int spill_bytes;                  /* cuda: ptxas's spill stores; -1 unknown (PTX) */
    double compile_ms;
    bool cache_hit;
    char notice[512];                 /* a fallback, a lowered unroll, PTX, a cache warning; or "" */
} cs_kernel;

/* OK and the kernel, or a kind with its message in err (out then holds
 * nothing to free). */
cs_compile_error cs_compile(const cs_compile_request *rq, cs_kernel *out, char *err, size_t err_size);
void cs_kernel_free(cs_kernel *k);
/* tier.c: once the optimized build is over, its kernel replaces the quick
 * one (or, if it failed, the notice says so); meanwhile nothing. Called
 * between two calls of the kernel, on the thread that makes them. _wait
 * waits for the build's end first. */
void cs_kernel_tier_up(cs_kernel *k);
void cs_kernel_tier_wait(cs_kernel *k);
/* Whether work that would take the quick kernel quick_ms_left more is
 * better done by waiting for the optimized build (its time left estimated
 * from the quick compile's) and running it: false when there is none. */
bool cs_kernel_tier_worth_waiting(const cs_kernel *k, double quick_ms_left);

/* The pass stage alone: the passes a fusion mode calls for (concat only under
 * `full`), stopping after the pass named `after` (NULL: all; "parse": none).
 * 0, -1 for an unknown pass, -2 when memory ran out; the message in err. */
int cs_optimize(cs_program *p, cs_fusion fusion, const char *after, char *err, size_t err_size);

#endif
