#!/usr/bin/env bash
# One session on a lent GPU machine, as one command: the machine's facts, the
# device tests (test_suite --filter 'cuda_device/*'), the seed paper's JAX
# variants (bench/paper_jax_cartpole.py) and bench/gpu.sh, each under a time
# limit, every log under $OUT. It runs binaries built here and carried there
# (a bare GPU machine has no Criterion): `make gpu-carry` builds them without
# the optional libraries and gathers them, with Criterion's shared libraries,
# in .gpu/. Then, with the device tool:
#
#   run  command: bash bench/gpu_session.sh   carry: [".gpu"]   timeout_s: 590
#
# About 8 minutes on an H200 (bench/gpu-logs/h200-2026-11-27 is one such run).
# T_TESTS, T_JAX and T_GPU (seconds) bound the three parts. PARTS picks some
# of: probe tests jax gpu ppo (default: probe tests jax gpu); facts always.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-session}; mkdir -p "$OUT"
[ -x .gpu/test_suite ] && [ -x .gpu/cartsim ] || { echo "gpu_session.sh: no .gpu/ (make gpu-carry, then carry it)" >&2; exit 2; }
T0=$(date +%s)
el() { echo "[t+$(( $(date +%s) - T0 )) s] $*"; }
{
el facts
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
nproc; uname -r; head -2 /etc/os-release
command -v cc gcc make nvcc python3; cc --version | head -1; nvcc --version | tail -2
} 2>&1 | tee "$OUT/facts.log"
NVDIR=$(find /usr/local/cuda*/ /usr/local /opt -name 'libnvrtc.so.13*' 2>/dev/null | head -1 | xargs -r dirname)
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${NVDIR}:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export XDG_CACHE_HOME=/tmp/cs-cache CARTSIM_ROOT=$PWD CARTSIM_BIN=$PWD/.gpu/cartsim
mkdir -p -m 700 "$XDG_CACHE_HOME"
PARTS=" ${PARTS:-probe tests jax gpu} "
want() { [[ $PARTS == *" $1 "* ]]; }
if want probe; then
el probe
.gpu/cartsim --backend cuda --envs 2048 --steps 10000 --unroll 10 --json 2>&1 | tee "$OUT/probe.json"
.gpu/cartsim --backend cuda --envs 1048576 --steps 1000 --json 2>&1 | tee "$OUT/probe_1m.json"
fi
if want tests; then
el "device tests"
timeout "${T_TESTS:-240}" .gpu/test_suite --filter 'cuda_device/*' --jobs 8 --verbose 2>&1 | tee "$OUT/device_tests.log" |
    grep -E '^device:|^\[(PASS|FAIL|SKIP)\]|Synthesis'
fi
if want jax; then
el "paper jax"
timeout "${T_JAX:-100}" env PYTHONUNBUFFERED=1 python3 bench/paper_jax_cartpole.py 2>&1 | tee "$OUT/paper_jax.log"
timeout 60 env PYTHONUNBUFFERED=1 python3 bench/paper_jax_cartpole.py --envs 1048576 --steps 1000 --variants split 2>&1 |
    tee -a "$OUT/paper_jax.log"
fi
if want gpu; then
el gpu.sh
CARTSIM_BIN=.gpu/cartsim RUN_TIMEOUT=60 timeout "${T_GPU:-240}" bench/gpu.sh 2>&1 | tee "$OUT/gpu_sh.log"
fi
# PPO with its rollouts on each backend: configs/ppo_cartpole.ini's settings as
# flags (the carried build has no inih), seeds 1-5, one thread, and a large batch
# (4096 environments x 32 steps, 10 iterations). UPDATE=cuda adds --update cuda.
if want ppo; then
el ppo
PPO="--env cartpole --algo ppo --agent mlp:64 --out /tmp/ppo.pol --json ${UPDATE:+--update $UPDATE}"
for seed in 1 2 3 4 5; do
    for b in cpu cuda; do
        echo "cartpole config seed $seed $b: $(timeout 60 .gpu/cartsim train $PPO --num-envs 16 --num-steps 32 \
            --learning-rate 0.002 --update-epochs 2 --episodes 100 --backend $b --seed $seed --threads 1 2>&1 | tail -1)"
    done
done 2>&1 | tee "$OUT/ppo.log"
for b in cpu cuda; do
    echo "cartpole 4096x32 $b: $(timeout 120 .gpu/cartsim train $PPO --num-envs 4096 --num-steps 32 \
        --total-timesteps 1310720 --target 1e9 --backend $b --seed 1 2>&1 | tail -1)"
done 2>&1 | tee -a "$OUT/ppo.log"
fi
el done
