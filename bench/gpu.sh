#!/usr/bin/env bash
# The cuda backend on a GPU machine, from a bare copy of the working tree:
# builds build/cartsim (the machine's own C compiler and CUDA toolkit, no
# package installs: inih, stb and SDL2 are optional, and a bare machine builds
# without them), then prints
#   1. the seed paper's ablation, CartPole 2048 envs x 10,000 steps: fusion
#      none / rules / full, unroll 1 and 10, one launch per U steps or one
#      persistent launch, as env-steps/s with speedups over rules + unroll 1;
#   2. an env-count sweep from 1 to 1,048,576 (x4 each step), cuda (and the
#      cpu up to 65,536 envs, for the crossover);
#   3. compile times: cold (--no-cache) and from the kernel cache;
#   4. every built-in environment's rate, f32, 65,536 envs, cuda beside cpu.
# Every figure comes from `build/cartsim --backend cuda --json`. About 3 to 5
# minutes on an H100 machine (16 cores); each run is capped (RUN_TIMEOUT).
#
#   bench/gpu.sh                  on the GPU machine
#   bench/gpu.sh --quick          fewer repeats and a shorter sweep (a smoke run)
#   GPU_SH_BACKEND=cpu bench/gpu.sh --quick   the script's own dry run, no GPU
#   CARTSIM_BIN=path bench/gpu.sh            a cartsim built elsewhere; no build
#
# Non-persistent runs pass --no-persistent (cs_config.persistent, [run] persistent).
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "gpu.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

BACKEND=${GPU_SH_BACKEND:-cuda}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
REPEATS=$([ $QUICK = 1 ] && echo 1 || echo 3)
T0=$(date +%s)

# ---- build ----
BIN=${CARTSIM_BIN:-build/cartsim}
if [ -z "${CARTSIM_BIN:-}" ]; then
    echo "== build"
    make -j"$(nproc)" build/cartsim >/tmp/gpu_sh_build.log 2>&1 ||
        { tail -30 /tmp/gpu_sh_build.log; echo "gpu.sh: make build/cartsim failed" >&2; exit 1; }
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
command -v nvcc >/dev/null && nvcc --version | tail -1 || true
echo "built in $(( $(date +%s) - T0 )) s"

# ---- helpers ----
field() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" | head -1; }

# run ARGS... -> the JSON on stdout (fails the script with the message)
run() {
    local out
    if ! out=$(timeout "$RUN_TIMEOUT" "$BIN" --backend "$BACKEND" --json "$@" 2>&1); then
        echo "gpu.sh: cartsim $* failed: $out" >&2
        return 1
    fi
    printf '%s\n' "$out"
}

# rate ARGS... -> the median env-steps/s of REPEATS runs (after one warm-up)
rate() {
    run "$@" >/dev/null
    local k rates=""
    for k in $(seq "$REPEATS"); do
        rates="$rates $(run "$@" | field env_steps_per_sec)"
    done
    printf '%s\n' $rates | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# cpu_rate ARGS... -> the cpu backend's env-steps/s of one run, beside the GPU's
cpu_rate() { timeout "$RUN_TIMEOUT" "$BIN" --backend cpu --json "$@" | field env_steps_per_sec; }

probe=$(run --envs 1 --steps 1) || {
    echo "gpu.sh: no usable CUDA device (--backend $BACKEND); nothing to measure" >&2
    exit 2
}
dev=$(printf '%s\n' "$probe" | field device)
echo "device: ${dev:-none} ($(printf '%s\n' "$probe" | field sm_count) SMs, sm_$(printf '%s\n' "$probe" | field arch)), backend $BACKEND"
[ "$BACKEND" = cuda ] || echo "(dry run on the $BACKEND backend: the figures are not the GPU's)"

# ---- 1. the ablation ----
N=2048 STEPS=10000
echo
echo "== ablation: CartPole-v1, f32, $N envs x $STEPS steps, median of $REPEATS"
printf '%-30s %7s %9s %10s %6s %6s %16s %8s\n' config launches block registers spill kernels env-steps/s speedup
base=""
ablation() {   # label persistent fusion unroll
    local label=$1 pers=--persistent; [ "$2" = 1 ] || pers=--no-persistent; shift 2
    local j
    j=$(run $pers --envs $N --steps $STEPS --fusion "$1" --unroll "$2")
    local r
    r=$(rate $pers --envs $N --steps $STEPS --fusion "$1" --unroll "$2")
    [ -n "$base" ] || base=$r
    printf '%-30s %7s %9s %10s %6s %6s %16.4g %7.2fx\n' "$label" "$(printf '%s\n' "$j" | field launches)" \
        "$(printf '%s\n' "$j" | field block)" "$(printf '%s\n' "$j" | field registers)" \
        "$(printf '%s\n' "$j" | field spill_bytes)" "$(printf '%s\n' "$j" | field kernels_per_step)" "$r" \
        "$(awk -v a="$r" -v b="$base" 'BEGIN { print a / b }')"
}
ablation "rules, unroll 1 (baseline)" 0 rules 1
ablation "rules, unroll 10" 0 rules 10
ablation "none, unroll 1" 0 none 1
ablation "full, unroll 1" 0 full 1
ablation "full, unroll 10" 0 full 10
ablation "full, persistent" 1 full 1
ablation "full, persistent, unroll 10" 1 full 10

# ---- 2. the env-count sweep ----
echo
SWEEP_MAX=$([ $QUICK = 1 ] && echo 4096 || echo 1048576)
echo "== sweep: full, persistent, f32, $STEPS steps; cpu up to 65536 envs"
printf '%10s %16s %16s\n' envs "$BACKEND env-steps/s" "cpu env-steps/s"
n=1
while [ $n -le $SWEEP_MAX ]; do
    g=$(REPEATS=1 rate --envs $n --steps $STEPS)
    c="-"
    if [ $n -le 65536 ] && [ "$BACKEND" != cpu ]; then
        c=$(cpu_rate --envs $n --steps $STEPS)
    fi
    printf '%10d %16.4g %16s\n' $n "$g" "$c"
    n=$((n * 4))
done

# ---- 3. compile times ----
echo
echo "== compile: cold (--no-cache) and cached, CartPole f32 (ms)"
printf '%-20s %12s %12s\n' config cold cached
for cfg in "full 1" "full 10" "rules 1" "none 1"; do
    set -- $cfg
    cold=$(run --envs 64 --steps 1 --fusion "$1" --unroll "$2" --no-cache | field compile_ms)
    run --envs 64 --steps 1 --fusion "$1" --unroll "$2" >/dev/null
    hot=$(run --envs 64 --steps 1 --fusion "$1" --unroll "$2")
    printf '%-20s %12.1f %12.1f %s\n' "$1, unroll $2" "$cold" "$(printf '%s\n' "$hot" | field compile_ms)" \
        "$( [ "$(printf '%s\n' "$hot" | field cache_hit)" = true ] && echo "" || echo "(no cache hit?)")"
done
# ---- 4. every environment ----
echo
E_N=$([ $QUICK = 1 ] && echo 4096 || echo 65536) E_STEPS=1000
echo "== every environment: full, persistent, f32, $E_N envs x $E_STEPS steps, median of $REPEATS"
printf '%-26s %16s %16s %8s\n' env "$BACKEND env-steps/s" "cpu env-steps/s" ratio
for env in $(sed -n 's/^\([a-z0-9_]*\)\.env$/\1/p' <(ls envs)); do
    g=$(rate --env "$env" --envs $E_N --steps $E_STEPS) || { echo "$env: failed"; continue; }
    c=$(cpu_rate --env "$env" --envs $E_N --steps $E_STEPS) || c=0
    printf '%-26s %16.4g %16.4g %7.1fx\n' "$env" "$g" "$c" "$(awk -v a="$g" -v b="$c" 'BEGIN { print (b > 0 ? a / b : 0) }')"
done
echo
echo "done in $(( $(date +%s) - T0 )) s"
