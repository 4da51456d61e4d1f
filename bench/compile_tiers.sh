#!/bin/sh
# Time to the first result of a cold compile (compile_ms of a --no-cache run)
# for the classic environments at unroll 10: tiered (the default: the quick
# -Og kernel) against --no-tier (the optimized kernel first, as before
# tiering), and against another build's cartsim when BEFORE names one.
# Round-robin, pinned to one core (CPU, default 1), medians of ROUNDS.
#   bench/compile_tiers.sh [ROUNDS]    (BIN=build/cartsim BEFORE= CPU=1)
set -eu
rounds=${1:-5}
bin=${BIN:-build/cartsim}
cpu=${CPU:-1}
envs="cartpole acrobot pendulum mountain_car mountain_car_continuous"
field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms() { taskset -c "$cpu" "$@" --unroll 10 --steps 1 --no-cache --json | tr -d "\n" | field compile_ms; echo; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
uptime
for r in $(seq "$rounds"); do
    for e in $envs; do
        ms "$bin" --env "$e" >> "$tmp/$e.tier"
        ms "$bin" --env "$e" --no-tier >> "$tmp/$e.off"
        [ -z "${BEFORE:-}" ] || ms "$BEFORE" --env "$e" >> "$tmp/$e.before"
    done
done
uptime
printf '%-24s %10s %10s %10s %8s\n' env tiered no-tier before ratio
for e in $envs; do
    t=$(median < "$tmp/$e.tier")
    o=$(median < "$tmp/$e.off")
    b=-
    [ -z "${BEFORE:-}" ] || b=$(printf %.0f "$(median < "$tmp/$e.before")")
    printf '%-24s %10.0f %10.0f %10s %8.2f\n' "$e" "$t" "$o" "$b" "$(echo "$o / $t" | bc -l)"
done
