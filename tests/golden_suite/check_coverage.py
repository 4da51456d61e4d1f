#!/usr/bin/env python3
"""Which branches of its environment each golden file covers.

For every STEM.jsonl given (default: all in this folder) it counts the
records that take each branch of docs/suite.md (a slip, a wall hit, a bust,
a brick cleared, truncation, ...) and prints them; the exit status is 1 when
a file misses a branch its environment has. Plain Python, no NumPy: it reads
the records as they are written.

  python3 tests/golden_suite/check_coverage.py [--markdown] [FILE.jsonl ...]

(--markdown: one table row per file, as README.md lists them.)
"""
import glob
import json
import os
import sys


def grid_sum(a):
    return sum(grid_sum(x) for x in a) if isinstance(a, list) else a


def load(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    return lines[0]["meta"], [r for r in lines[1:] if "t" in r], [r for r in lines[1:] if r.get("reset")]


# Each function yields the names of the branches one step record takes; the
# second value is the branches the file must cover.

def frozen_lake(meta, r):
    slippery = meta["options"].get("is_slippery", True)
    s, ns, a = r["state"]["s"], r["next_state"]["s"], r["action"]
    if slippery:
        yield ("slip to (a-1)%4", "intended direction", "slip to (a+1)%4")[r["draws"]["transition"]]
    if ns == s:
        yield "bumped into the edge"
    if r["terminated"]:
        yield "reached the goal" if r["reward"] == 1 else "fell in a hole"
    if r["truncated"]:
        yield "truncated"


def frozen_lake_needs(meta):
    need = ["bumped into the edge", "reached the goal", "fell in a hole", "truncated"]
    if meta["options"].get("is_slippery", True):
        need += ["slip to (a-1)%4", "intended direction", "slip to (a+1)%4"]
    return need


def cliff(meta, r):
    if meta["id"] == "CliffWalkingSlippery-v1":
        yield ("slip to (a-1)%4", "intended direction", "slip to (a+1)%4")[r["draws"]["transition"]]
    if r["reward"] == -100:
        yield "fell off the cliff"
    elif r["next_state"]["s"] == r["state"]["s"]:
        yield "bumped into the edge"
    if r["terminated"]:
        yield "reached the goal"


def cliff_needs(meta):
    need = ["fell off the cliff", "bumped into the edge", "reached the goal"]
    if meta["id"] == "CliffWalkingSlippery-v1":
        need += ["slip to (a-1)%4", "intended direction", "slip to (a+1)%4"]
    return need


TAXI_LOCS = [(0, 0), (0, 4), (4, 0), (4, 3)]
TAXI_MAP = ["+---------+", "|R: | : :G|", "| : | : : |", "| : : : : |", "| | : | : |", "|Y| : |B: |", "+---------+"]


def taxi_decode(i):
    return i // 100, (i // 20) % 5, (i // 4) % 5, i % 4


def taxi(meta, r):
    row, col, p, d = taxi_decode(r["state"]["s"])
    nrow, ncol, np_, nd = taxi_decode(r["next_state"]["s"])
    a, reward = r["action"], r["reward"]
    rainy = meta["options"].get("is_rainy", False)
    if a < 4:
        possible = [row < 4, row > 0, TAXI_MAP[1 + row][2 * col + 2] == ":", TAXI_MAP[1 + row][2 * col] == ":"][a]
        if not possible:
            interior = (a == 2 and col < 4) or (a == 3 and col > 0)
            yield "blocked by a wall" if interior else "blocked at the edge"
            if rainy:
                yield "rainy: blocked, no drift"
        elif rainy:
            yield ("rainy: intended move", "rainy: drifted left", "rainy: drifted right")[r["draws"]["transition"]]
        else:
            yield "moved"
    elif a == 4:
        yield "picked up" if reward == -1 else "illegal pickup"
    else:
        if reward == 20:
            yield "delivered"
        elif reward == -1:
            yield "dropped at another stop"
        else:
            yield "illegal drop-off"
    if "new_destination" in r["draws"]:
        yield "fickle passenger changed destination"
    if r["truncated"]:
        yield "truncated"


def taxi_needs(meta):
    need = ["blocked by a wall", "blocked at the edge", "picked up", "illegal pickup", "delivered",
            "dropped at another stop", "illegal drop-off", "truncated"]
    if meta["options"].get("is_rainy"):
        need += ["rainy: intended move", "rainy: drifted left", "rainy: drifted right", "rainy: blocked, no drift"]
    else:
        need += ["moved"]
    if meta["options"].get("fickle_passenger"):
        need += ["fickle passenger changed destination"]
    return need


def hand_value(hand):
    s = sum(hand)
    return s + 10 if 1 in hand and s + 10 <= 21 else s


def blackjack(meta, r):
    player, dealer = r["state"]["player"], r["state"]["dealer"]
    nplayer, ndealer = r["next_state"]["player"], r["next_state"]["dealer"]
    natural = sorted(player) == [1, 10]
    if r["action"] == 1:
        yield "hit, bust" if hand_value(nplayer) > 21 else "hit"
        if hand_value(player) == sum(player) + 10 and hand_value(nplayer) == sum(nplayer) and hand_value(nplayer) <= 21:
            yield "hit: the ace became 1"
    else:
        yield {1.0: "stick, won", -1.0: "stick, lost", 0.0: "stick, draw", 1.5: "stick, natural paid 1.5"}[r["reward"]]
        if hand_value(ndealer) > 21:
            yield "dealer bust"
        if len(ndealer) > len(dealer):
            yield "dealer drew"
        if natural and sorted(ndealer) == [1, 10]:
            yield "both natural"
        elif natural and hand_value(ndealer) == 21:
            yield "natural against a dealer's 21"
        elif natural:
            yield "natural"
    if r["obs"][2] == 1:
        yield "usable ace"


def blackjack_needs(meta):
    need = ["hit", "hit, bust", "hit: the ace became 1", "stick, won", "stick, lost", "stick, draw", "dealer bust",
            "dealer drew", "both natural", "natural against a dealer's 21", "natural", "usable ace"]
    if meta["options"].get("natural") and not meta["options"].get("sab", True):
        need.append("stick, natural paid 1.5")
    return need


def catch(meta, r):
    s, n = r["state"], r["next_state"]
    if s["prev_done"]:
        yield "prev_done: the ball restarts"
    if r["reward"] == 1:
        yield "caught"
    if r["reward"] == -1:
        yield "missed"
    if n["paddle_x"] == s["paddle_x"] and r["action"] != 1 and not s["prev_done"]:
        yield "paddle at the wall"
    if r["truncated"]:
        yield "truncated"


def deep_sea(meta, r):
    s, n = r["state"], r["next_state"]
    right = r["action"] == s["action_mapping"][s["row"]][s["column"]]
    if right and n["column"] == s["column"] + 1:
        yield "moved right"
    if right and n["column"] == s["column"]:
        yield "right clamped at the edge" if s["column"] == 7 else "right failed (stochastic)"
    if not right:
        yield "moved left" if s["column"] > 0 else "left clamped at column 0"
    if right and s["column"] == 7:
        yield "treasure reward"
    if n["bad_episode"] and not s["bad_episode"]:
        yield "went wrong on the diagonal (bad_episode)"
    if r["terminated"] and r["truncated"]:
        yield "terminated and truncated together"
    if not meta["options"].get("deterministic", True) and s["row"] == 7 and s["column"] in (0, 7):
        yield "noisy reward at the chain's end"


def deep_sea_needs(meta):
    need = ["moved right", "right clamped at the edge", "moved left", "left clamped at column 0", "treasure reward",
            "went wrong on the diagonal (bad_episode)", "terminated and truncated together"]
    if not meta["options"].get("deterministic", True):
        need += ["right failed (stochastic)", "noisy reward at the chain's end"]
    return need


def memory_chain(meta, r):
    yield "context %d" % r["state"]["context"][0]
    if r["reward"] == 1:
        yield "remembered"
    if r["reward"] == -1:
        yield "forgot"
    if r["terminated"]:
        yield "terminated"
    if r["truncated"]:
        yield "truncated"


def umbrella_chain(meta, r):
    s = r["state"]
    if s["time"] + 1 == 10:
        yield "final: umbrella right" if r["reward"] == 1 else "final: umbrella wrong"
    elif s["time"] + 1 < 10:
        yield "random reward +1" if r["reward"] == 1 else "random reward -1"
    if r["terminated"]:
        yield "terminated"
    if r["truncated"]:
        yield "truncated"


def discounting_chain(meta, r):
    if r["reward"] != 0:
        yield "paid context %d" % r["next_state"]["context"]
    if r["truncated"]:
        yield "truncated"


def breakout(meta, r):
    s, n = r["state"], r["next_state"]
    if r["reward"] > 0:
        yield "struck a brick"
    if s["strike"] and n["strike"]:
        yield "passed through a brick (strike already set)"
    if grid_sum(n["brick_map"]) == 30 and grid_sum(s["brick_map"]) < 30:
        yield "bricks respawned"
    nx = s["ball_x"] + (1 if s["ball_dir"] in (1, 2) else -1)
    if nx < 0 or nx > 9:
        yield "bounced off a side wall"
    if s["ball_dir"] in (0, 1) and s["ball_y"] == 0:
        yield "bounced off the top"
    if s["ball_dir"] in (2, 3) and s["ball_y"] == 8 and not r["terminated"]:
        yield "paddle hit"
    if r["terminated"]:
        yield "terminated"
    if r["truncated"]:
        yield "truncated"


def asterix(meta, r):
    s, n = r["state"], r["next_state"]
    if s["spawn_timer"] == 0:
        order = r["draws"]["slot_order"]
        free = [s["entities"][i][4] == 0 for i in order[1:]]
        yield "spawned" if any(free) else "spawn found no free slot"
        yield "spawned gold" if r["draws"]["is_gold"] else "spawned an enemy"
    if r["reward"] > 0:
        yield "gold collected"
    if r["terminated"]:
        yield "hit by an enemy"
    if n["ramp_index"] > s["ramp_index"]:
        yield "difficulty ramped"
    if n["move_speed"] < s["move_speed"]:
        yield "entities sped up"
    if s["move_timer"] == 0 and any(e[4] and (e[0] == 0 and not e[2] or e[0] == 9 and e[2]) for e in s["entities"]):
        yield "an entity left the screen"
    if r["truncated"]:
        yield "truncated"


def freeway(meta, r):
    s, n = r["state"], r["next_state"]
    if r["reward"] > 0:
        yield "crossed (win)"
    elif n["pos"] == 9 and s["pos"] != 9:
        yield "hit by a car"
    elif n["pos"] < s["pos"]:
        yield "moved up"
    elif n["pos"] > s["pos"]:
        yield "moved down"
    if any(c[2] == 0 and (c[0] == 9 and c[3] > 0 or c[0] == 0 and c[3] < 0) for c in s["cars"]):
        yield "a car wrapped around"
    if r["truncated"]:
        yield "truncated"


def space_invaders(meta, r):
    s, n = r["state"], r["next_state"]
    if r["reward"] > 0:
        yield "alien shot"
    if grid_sum(n["alien_map"]) == 24 and grid_sum(s["alien_map"]) < 24:
        yield "aliens respawned"
    if n["enemy_move_interval"] < s["enemy_move_interval"]:
        yield "aliens sped up"
    if n["alien_dir"] != s["alien_dir"]:
        yield "aliens turned and came down"
    if s["alien_shot_timer"] == 0:
        yield "aliens fired"
    if s["shot_timer"] == 0 and r["action"] == 3:
        yield "cannon fired"
    if r["terminated"]:
        yield "cannon destroyed"
    if r["truncated"]:
        yield "truncated"


def four_rooms(meta, r):
    if r["draws"]["random_u"] < 4 / 9:
        yield "random action instead"
    if r["next_state"]["pos"] == r["state"]["pos"]:
        yield "bumped into a wall"
    if r["terminated"]:
        yield "reached the goal"
    if r["truncated"]:
        yield "truncated"


def meta_maze(meta, r):
    if r["reward"] > 0:
        yield "reached the goal (moved elsewhere)"
    if r["next_state"]["pos"] == r["state"]["pos"]:
        yield "bumped into a wall"
    if r["truncated"]:
        yield "truncated"


def point_robot(meta, r):
    if any(abs(x) > 0.1 for x in r["action"]):
        yield "action clipped"
    if r["reward"] > 0:
        yield "goal reached (position resampled)"
    if r["truncated"]:
        yield "truncated"


def bandit(meta, r):
    yield "arm %d, reward %s" % (r["action"], "0" if r["reward"] == 0 else ("1" if r["reward"] == 1 else "real"))
    if r["truncated"]:
        yield "truncated"


def needs(*names):
    return lambda meta: list(names)


FAMILIES = {
    "FrozenLake-v1": (frozen_lake, frozen_lake_needs), "FrozenLake8x8-v1": (frozen_lake, frozen_lake_needs),
    "CliffWalking-v1": (cliff, cliff_needs), "CliffWalkingSlippery-v1": (cliff, cliff_needs),
    "Taxi-v4": (taxi, taxi_needs), "Blackjack-v1": (blackjack, blackjack_needs),
    "Catch-bsuite": (catch, needs("caught", "missed", "paddle at the wall", "prev_done: the ball restarts",
                                  "truncated")),
    "DeepSea-bsuite": (deep_sea, deep_sea_needs),
    "MemoryChain-bsuite": (memory_chain, needs("context 0", "context 1", "remembered", "forgot", "terminated",
                                               "truncated")),
    "UmbrellaChain-bsuite": (umbrella_chain, needs("final: umbrella right", "final: umbrella wrong",
                                                   "random reward +1", "random reward -1", "terminated",
                                                   "truncated")),
    "DiscountingChain-bsuite": (discounting_chain, needs(*["paid context %d" % c for c in range(5)], "truncated")),
    "Breakout-MinAtar": (breakout, needs("struck a brick", "passed through a brick (strike already set)",
                                         "bricks respawned", "bounced off a side wall", "bounced off the top",
                                         "paddle hit", "terminated", "truncated")),
    "Asterix-MinAtar": (asterix, needs("spawned", "spawn found no free slot", "spawned gold", "spawned an enemy",
                                       "gold collected", "hit by an enemy", "difficulty ramped", "entities sped up",
                                       "an entity left the screen", "truncated")),
    "Freeway-MinAtar": (freeway, needs("crossed (win)", "hit by a car", "moved up", "moved down",
                                       "a car wrapped around", "truncated")),
    "SpaceInvaders-MinAtar": (space_invaders, needs("alien shot", "aliens respawned", "aliens sped up",
                                                    "aliens turned and came down", "aliens fired", "cannon fired",
                                                    "cannon destroyed", "truncated")),
    "FourRooms-misc": (four_rooms, needs("random action instead", "bumped into a wall", "reached the goal",
                                         "truncated")),
    "MetaMaze-misc": (meta_maze, needs("reached the goal (moved elsewhere)", "bumped into a wall", "truncated")),
    "PointRobot-misc": (point_robot, needs("action clipped", "goal reached (position resampled)", "truncated")),
    "BernoulliBandit-misc": (bandit, needs("arm 0, reward 0", "arm 0, reward 1", "arm 1, reward 0",
                                           "arm 1, reward 1", "truncated")),
    "GaussianBandit-misc": (bandit, needs("arm 0, reward 0", "arm 1, reward real", "truncated")),
}


def check(path, markdown=False):
    meta, steps, resets = load(path)
    branches, need = FAMILIES[meta["id"]]
    counts = {}
    for r in steps:
        for name in branches(meta, r):
            counts[name] = counts.get(name, 0) + 1
    episodes = len({r["episode"] for r in steps})
    placed = sum(1 for r in resets if "placed" in r)
    auto = sum(1 for r in resets if r.get("auto"))
    missing = [n for n in need(meta) if n not in counts]
    if markdown:
        print("| `%s` | %d | %d | %d | %d KB | %s |" % (
            os.path.basename(path), episodes, len(steps), placed, (os.path.getsize(path) + 512) // 1024,
            "; ".join("%s (%d)" % (n, counts.get(n, 0)) for n in need(meta))
            + ("; MISSING: " + ", ".join(missing) if missing else "")))
        return not missing
    print("%s: %d steps, %d episodes (%d resets%s, %d placed), %d bytes" % (
        os.path.basename(path), len(steps), episodes, len(resets), ", %d auto" % auto if auto else "", placed,
        os.path.getsize(path)))
    for name in need(meta):
        print("  %6d  %s" % (counts.get(name, 0), name))
    for name in sorted(set(counts) - set(need(meta))):
        print("  %6d  %s (also)" % (counts[name], name))
    if missing:
        print("  MISSING: %s" % ", ".join(missing))
    return not missing


def main():
    markdown = "--markdown" in sys.argv[1:]
    paths = [p for p in sys.argv[1:] if p != "--markdown"] or \
        sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.jsonl")))
    if markdown:
        print("| file | episodes | steps | placed | size | branches covered (steps) |\n|---|---|---|---|---|---|")
    ok = all([check(p, markdown) for p in paths])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
