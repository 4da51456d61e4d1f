#!/usr/bin/env bash
# Scaling over MPI ranks on one machine (issue 19's figures): strong scaling
# (a fixed batch split over K ranks), weak scaling (a fixed share per rank),
# and ES: time per generation split into rollout and exchange, bytes per
# generation. Rounds are round-robin over K; each figure is the median of
# ROUNDS runs. Every rank runs one thread; mpirun binds ranks to cores.
#   bench/mpi.sh [MAX_RANKS]        (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CARTSIM_BIN:-build/cartsim}
MAX=${1:-$(nproc)}
ROUNDS=${ROUNDS:-3}
ROOT=()
[ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)
command -v mpirun >/dev/null || { echo "bench/mpi.sh needs mpirun (apt-get install openmpi-bin libopenmpi-dev)"; exit 1; }

launch() {   # K ARGS... -> the JSON of one run
    local k=$1; shift
    if [ "$k" = 1 ]; then "$BIN" "$@"; else mpirun --quiet --oversubscribe "${ROOT[@]}" -n "$k" "$BIN" "$@"; fi
}
field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# MPI scaling, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## Strong scaling: 4096 CartPoles x 20,000 steps, f32, split over K ranks"
echo
echo "| ranks | env-steps/s (median of $ROUNDS) | speedup | checksum |"
echo "|---|---|---|---|"
declare -A rate sum
for r in $(seq "$ROUNDS"); do
    for k in $(seq "$MAX"); do
        j=$(launch "$k" --envs 4096 --steps 20000 --threads 1 --json)
        rate[$k]+="$(echo "$j" | field env_steps_per_sec) "
        sum[$k]=$(echo "$j" | field checksum)
    done
done
base=$(echo "${rate[1]}" | tr ' ' '\n' | grep . | median)
for k in $(seq "$MAX"); do
    m=$(echo "${rate[$k]}" | tr ' ' '\n' | grep . | median)
    printf "| %d | %.3g | %.2fx | %s |\n" "$k" "$m" "$(echo "$m / $base" | bc -l)" "${sum[$k]}"
done
echo
echo "## Weak scaling: 2048 CartPoles per rank x 20,000 steps, f32"
echo
echo "| ranks | envs | env-steps/s (median of $ROUNDS) | efficiency |"
echo "|---|---|---|---|"
declare -A wrate
for r in $(seq "$ROUNDS"); do
    for k in $(seq "$MAX"); do
        wrate[$k]+="$(launch "$k" --envs $((2048 * k)) --steps 20000 --threads 1 --json | field env_steps_per_sec) "
    done
done
wbase=$(echo "${wrate[1]}" | tr ' ' '\n' | grep . | median)
for k in $(seq "$MAX"); do
    m=$(echo "${wrate[$k]}" | tr ' ' '\n' | grep . | median)
    printf "| %d | %d | %.3g | %.2f |\n" "$k" $((2048 * k)) "$m" "$(echo "$m / ($wbase * $k)" | bc -l)"
done
echo
echo "## ES on CartPole: population 1024, linear policy, 20 generations"
echo
echo "| ranks | rollout ms / generation | exchange ms / generation | bytes gathered / generation |"
echo "|---|---|---|---|"
for k in $(seq 2 "$MAX"); do
    line=$(launch "$k" train --algo es --pop 1024 --generations 20 --target 1e9 --threads 1 | grep '^ranks')
    ro=$(echo "$line" | sed -n 's/.*generation \([0-9.]*\) ms of rollout.*/\1/p')
    ex=$(echo "$line" | sed -n 's/.*and \([0-9.]*\) ms of exchange.*/\1/p')
    by=$(echo "$line" | sed -n 's/.*rank 0, \([0-9]*\) bytes.*/\1/p')
    echo "| $k | $ro | $ex | $by |"
done
