#!/usr/bin/env bash
# One device session: facts, the device tests, the paper's JAX variants, bench/gpu.sh.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "[t+$(( $(date +%s) - T0 )) s] $*"; }
{
el facts
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
nproc; uname -r; cat /etc/os-release | head -2
command -v cc gcc make nvcc python3; cc --version | head -1; nvcc --version | tail -2
NV=$(find /usr/local /opt /usr/lib -name 'libnvrtc.so*' 2>/dev/null | head -5); echo "nvrtc: $NV"
CU=$(ldconfig -p | grep libcuda.so.1 | head -2); echo "libcuda: $CU"
} 2>&1 | tee "$OUT/facts.log"
NVDIR=$(find /usr/local/cuda*/ /usr/local /opt -name 'libnvrtc.so.13*' 2>/dev/null | head -1 | xargs -r dirname)
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${NVDIR}:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export XDG_CACHE_HOME=/tmp/cs-cache CARTSIM_ROOT=$PWD CARTSIM_BIN=$PWD/.gpu/cartsim
mkdir -p -m 700 $XDG_CACHE_HOME
el "probe"; .gpu/cartsim --backend cuda --envs 2048 --steps 10000 --unroll 10 --json 2>&1 | tee "$OUT/probe.json" | head -40
el "device tests"
timeout ${T_TESTS:-220} .gpu/test_suite --filter 'cuda_device/*' --jobs 8 --verbose 2>&1 | tee "$OUT/device_tests.log" | grep -v "^\[----\]" | tail -120
el "paper jax"
timeout ${T_JAX:-100} env PYTHONUNBUFFERED=1 python3 bench/paper_jax_cartpole.py 2>&1 | tee "$OUT/paper_jax.log"
timeout 60 env PYTHONUNBUFFERED=1 python3 bench/paper_jax_cartpole.py --envs 1048576 --steps 1000 --variants split 2>&1 | tee -a "$OUT/paper_jax.log"
el "gpu.sh"
CARTSIM_BIN=.gpu/cartsim RUN_TIMEOUT=60 timeout ${T_GPU:-240} bench/gpu.sh 2>&1 | tee "$OUT/gpu_sh.log"
el done
