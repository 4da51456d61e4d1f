#!/usr/bin/env bash
# PPO's update on a GPU (--update cuda, train/ppo_cuda.c), on a lent machine,
# from the binaries `make gpu-carry` gathers in .gpu/ (as bench/gpu_session.sh):
#   1. the device tests of the update: one update against the cpu's within
#      tolerance, and two trainings of one seed equal bit for bit
#      (test_suite --filter 'cuda_device/ppo_update*');
#   2. CartPole with the update on the cpu and on the GPU (twice), then the
#      rollout on the GPU too: solved or not, env-steps, seconds, and whether
#      the GPU policies are the same file byte for byte;
#   3. a large batch and network (256 envs x 256 steps, minibatches of
#      16,384 steps, mlp:128x128, 2 iterations), cpu then cuda: seconds each.
# Every log under $OUT. About 1 to 2 minutes (a dry run through the fake driver
# of tests/test_cuda.c: CARTSIM_CUDA_DRIVER=CARTSIM_NVRTC=its .so, part 3 slow).
#
#   run  command: bash bench/gpu_ppo_update.sh   carry: [".gpu"]   timeout_s: 300
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-ppo-update}; mkdir -p "$OUT"
[ -x .gpu/test_suite ] && [ -x .gpu/cartsim ] || { echo "gpu_ppo_update.sh: no .gpu/ (make gpu-carry, then carry it)" >&2; exit 2; }
NVDIR=$(find /usr/local/cuda*/ /usr/local /opt -name 'libnvrtc.so.13*' 2>/dev/null | head -1 | xargs -r dirname)
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${NVDIR}:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export XDG_CACHE_HOME=/tmp/cs-cache CARTSIM_ROOT=$PWD CARTSIM_BIN=$PWD/.gpu/cartsim
mkdir -p -m 700 "$XDG_CACHE_HOME"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee "$OUT/facts.log"

echo "== 1. device tests"
timeout 150 .gpu/test_suite --filter 'cuda_device/ppo_update*' --verbose 2>&1 | tee "$OUT/device_tests.log" |
    grep -v 'Test is disabled' | grep -E '^\[(PASS|FAIL|SKIP)\]|Assertion|Synthesis|SKIPPED'

summary() { grep '"type": "result"' "$1" | sed -E 's/.*"solved": ([a-z]+).*"env_steps": ([0-9]+), "elapsed_s": ([0-9.]+).*/solved \1, env_steps \2, \3 s/'; }

echo "== 2. CartPole, seed 1"
for run in cpu cuda cuda2; do
    timeout 60 .gpu/cartsim train --env cartpole --algo ppo --seed 1 --update "${run%2}" --out "$OUT/cartpole_$run.pol" \
        --json >"$OUT/cartpole_$run.json" 2>&1
    echo "$run (exit $?): $(summary "$OUT/cartpole_$run.json")"
done
timeout 60 .gpu/cartsim train --env cartpole --algo ppo --seed 1 --backend cuda --update cuda \
    --out "$OUT/cartpole_all_cuda.pol" --json >"$OUT/cartpole_all_cuda.json" 2>&1
echo "rollout and update on cuda (exit $?): $(summary "$OUT/cartpole_all_cuda.json")"
cmp -s "$OUT/cartpole_cuda.pol" "$OUT/cartpole_all_cuda.pol" && echo "with the rollout on the GPU too: the same bytes" ||
    echo "with the rollout on the GPU too: the policy DIFFERS"
cmp -s "$OUT/cartpole_cuda.pol" "$OUT/cartpole_cuda2.pol" && echo "the two GPU policies: the same bytes" ||
    echo "the two GPU policies DIFFER"
cmp -s "$OUT/cartpole_cpu.pol" "$OUT/cartpole_cuda.pol" && echo "cpu and GPU policies: the same bytes" ||
    echo "cpu and GPU policies differ (expected only through CUDA's double exp/log/tanh)"

echo "== 3. 256 envs x 256 steps, mlp:128x128, 2 iterations"
for where in cpu cuda; do
    timeout 90 .gpu/cartsim train --env cartpole --algo ppo --seed 1 --agent mlp:128x128 --num-envs 256 --num-steps 256 \
        --total-timesteps 131072 --target 1e9 --update "$where" --out "$OUT/big_$where.pol" --json >"$OUT/big_$where.json" 2>&1
    echo "$where (exit $?): $(summary "$OUT/big_$where.json")"
done
