#!/usr/bin/env python3
"""docs/suite.md, written again in plain Python, against the golden files.

For every record of every STEM.jsonl given (default: all) it recomputes from
the record's `state`, `action` and `draws` what docs/suite.md says the
reference does (next state, observation, reward, flags, info; for a reset, the
state and observation from its draws) and counts the records where anything
differs. It is an independent reading of the semantics: it shares no code with
the references or the generator, and uses no NumPy. Reals the references
compute in float32 are rounded to float32 here; where the reference uses
XLA's float32 sin/cos/sqrt/erf_inv (PointRobot) a relative tolerance of 1e-6
is allowed, and said.

  python3 tests/golden_suite/replay_check.py [FILE.jsonl ...]
"""
import glob
import json
import math
import os
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def fma32(a, b, c):
    """float32 a * b + c rounded once, as XLA's CPU code computes a multiply
    followed by an add (it contracts them into a fused multiply-add)."""
    from fractions import Fraction
    return f32(float(Fraction(a) * Fraction(b) + Fraction(c)))


def time_rep_const(t):
    """time_normalization(t) with its default t_max = 100, as XLA computes it:
    (2 * t) / 100 + -1 with the division by the constant turned into a
    multiplication by float32(0.01), contracted with the add."""
    return fma32(f32(2.0 * t), f32(0.01), -1.0)


def zeros(*shape):
    if len(shape) == 1:
        return [0] * shape[0]
    return [zeros(*shape[1:]) for _ in range(shape[0])]


def copy(x):
    return json.loads(json.dumps(x))


def count_nonzero(grid):
    return sum(count_nonzero(x) for x in grid) if isinstance(grid, list) else int(grid != 0)


def first_above(cumulative, u):
    """categorical_sample's index: the first running sum above u, else 0."""
    for i, c in enumerate(cumulative):
        if c > u:
            return i
    return 0


def running_sums(ps):
    out, s = [], 0.0
    for p in ps:
        s += p
        out.append(s)
    return out


# --------------------------------------------------------------- toy text

FROZEN_MAPS = {"4x4": ["SFFF", "FHFH", "FFFH", "HFFG"],
               "8x8": ["SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF", "FFFHFFFF", "FHHFFFHF", "FHFFHFHF",
                       "FFFHFFFG"]}


def frozen_lake(meta, r):
    m = FROZEN_MAPS["8x8" if meta["id"] == "FrozenLake8x8-v1" else "4x4"]
    n = len(m)
    slippery = meta["options"].get("is_slippery", True)
    if r.get("reset"):
        return {"state": {"s": 0, "lastaction": None, "_elapsed_steps": 0}, "obs": 0, "info": {"prob": 1}}
    st, a = r["state"], r["action"]
    s = st["s"]
    row, col = divmod(s, n)
    fail = (1.0 - 1.0 / 3.0) / 2.0
    if m[row][col] in "GH":
        probs, targets = [1.0], [(s, 0, True)]
    else:
        dirs = [(a - 1) % 4, a, (a + 1) % 4] if slippery else [a]
        probs = [1.0 / 3.0 if b == a else fail for b in dirs] if slippery else [1.0]
        targets = []
        for b in dirs:
            rr, cc = row, col
            if b == 0:
                cc = max(cc - 1, 0)
            elif b == 1:
                rr = min(rr + 1, n - 1)
            elif b == 2:
                cc = min(cc + 1, n - 1)
            else:
                rr = max(rr - 1, 0)
            t = m[rr][cc]
            targets.append((rr * n + cc, 1 if t == "G" else 0, t in "GH"))
    i = first_above(running_sums(probs), r["draws"]["u"])
    assert i == r["draws"]["transition"], "the uniform gives transition %d, the file %d" % (i, r["draws"]["transition"])
    ns, reward, term = targets[i]
    elapsed = st["_elapsed_steps"] + 1
    return {"next_state": {"s": ns, "lastaction": a, "_elapsed_steps": elapsed}, "obs": ns, "reward": reward,
            "terminated": term, "truncated": elapsed >= meta["max_episode_steps"], "info": {"prob": probs[i]}}


def cliff(meta, r):
    slippery = meta["id"] == "CliffWalkingSlippery-v1"
    if r.get("reset"):
        return {"state": {"s": 36, "lastaction": None}, "obs": 36, "info": {"prob": 1}}
    s, a = r["state"]["s"], r["action"]
    row, col = divmod(s, 12)
    deltas = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}
    dirs = [(a - 1) % 4, a, (a + 1) % 4] if slippery else [a]
    p = 1 / len(dirs)
    targets = []
    for b in dirs:
        rr = min(max(row + deltas[b][0], 0), 3)
        cc = min(max(col + deltas[b][1], 0), 11)
        if rr == 3 and 1 <= cc <= 10:
            targets.append((36, -100, False))
        else:
            targets.append((rr * 12 + cc, -1, (rr, cc) == (3, 11)))
    i = first_above(running_sums([p] * len(dirs)), r["draws"]["u"])
    assert i == r["draws"]["transition"]
    ns, reward, term = targets[i]
    return {"next_state": {"s": ns, "lastaction": a}, "obs": ns, "reward": reward, "terminated": term,
            "truncated": False, "info": {"prob": p}}


TAXI_MAP = ["+---------+", "|R: | : :G|", "| : | : : |", "| : : : : |", "| | : | : |", "|Y| : |B: |", "+---------+"]
TAXI_LOCS = [(0, 0), (0, 4), (4, 0), (4, 3)]


def taxi_encode(row, col, p, d):
    return ((row * 5 + col) * 5 + p) * 4 + d


def taxi_decode(i):
    return i // 100, (i // 20) % 5, (i // 4) % 5, i % 4


def taxi_mask(s):
    row, col, p, d = taxi_decode(s)
    return [int(row < 4), int(row > 0), int(col < 4 and TAXI_MAP[row + 1][2 * col + 2] == ":"),
            int(col > 0 and TAXI_MAP[row + 1][2 * col] == ":"), int(p < 4 and (row, col) == TAXI_LOCS[p]),
            int(p == 4 and (row, col) in TAXI_LOCS)]


TAXI_START_SUMS = None


def taxi(meta, r):
    global TAXI_START_SUMS
    rainy = meta["options"].get("is_rainy", False)
    fickle = meta["options"].get("fickle_passenger", False)
    if r.get("reset"):
        if TAXI_START_SUMS is None:
            starts = [s for s in range(500) if taxi_decode(s)[2] < 4 and taxi_decode(s)[2] != taxi_decode(s)[3]]
            sums, acc, k = [], 0.0, 0
            for s in range(500):          # the reference sums all 500 entries, zeros included
                acc += (1.0 / 300.0) if s in starts else 0.0
                sums.append(acc)
            TAXI_START_SUMS = sums
        s = first_above(TAXI_START_SUMS, r["draws"]["u"])
        fs = fickle and r["draws"]["fickle_u"] < 0.3
        return {"state": {"s": s, "lastaction": None, "_elapsed_steps": 0, "fickle_step": fs}, "obs": s,
                "info": {"prob": 1.0, "action_mask": taxi_mask(s)}}
    st, a = r["state"], r["action"]
    s = st["s"]
    row, col, p, d = taxi_decode(s)
    reward, term = -1, False

    def pickup(p):
        return (4, -1) if p < 4 and (row, col) == TAXI_LOCS[p] else (p, -10)

    def dropoff(p):
        if (row, col) == TAXI_LOCS[d] and p == 4:
            return d, 20, True
        if (row, col) in TAXI_LOCS and p == 4:
            return TAXI_LOCS.index((row, col)), -1, False
        return p, -10, False

    def east_open(rr, cc):
        return TAXI_MAP[1 + rr][2 * cc + 2] == ":"

    def west_open(rr, cc):
        return TAXI_MAP[1 + rr][2 * cc] == ":"

    if not rainy or a >= 4:
        nrow, ncol, np_ = row, col, p
        if a == 0:
            nrow = min(row + 1, 4)
        elif a == 1:
            nrow = max(row - 1, 0)
        elif a == 2 and east_open(row, col):
            ncol = min(col + 1, 4)
        elif a == 3 and west_open(row, col):
            ncol = max(col - 1, 0)
        elif a == 4:
            np_, reward = pickup(p)
        elif a == 5:
            np_, reward, term = dropoff(p)
        probs, outcomes = [1.0], [taxi_encode(nrow, ncol, np_, d)]
    else:
        moves = {0: ((1, 0), (0, 1), (0, -1)), 1: ((-1, 0), (0, -1), (0, 1)), 2: ((0, 1), (-1, 0), (1, 0)),
                 3: ((0, -1), (1, 0), (-1, 0))}

        def lateral(dr, dc):
            nr, nc = max(0, min(row + dr, 4)), max(0, min(col + dc, 4))
            if dc == 1 and TAXI_MAP[1 + nr][2 * nc] != ":":
                return row, col
            if dc == -1 and TAXI_MAP[1 + nr][2 * nc + 2] != ":":
                return row, col
            return nr, nc

        possible = [row < 4, row > 0, east_open(row, col), west_open(row, col)][a]
        if possible:
            dr, dc = moves[a][0]
            cells = [(max(0, min(row + dr, 4)), max(0, min(col + dc, 4))), lateral(*moves[a][1]),
                     lateral(*moves[a][2])]
        else:
            cells = [(row, col)] * 3
        lat = (1.0 - 0.8) / 2.0
        probs = [0.8, lat, lat]
        outcomes = [taxi_encode(rr, cc, p, d) for rr, cc in cells]
    i = first_above(running_sums(probs), r["draws"]["u"])
    assert i == r["draws"]["transition"]
    ns = outcomes[i]
    fickle_step = st["fickle_step"]
    nrow, ncol, np_, nd = taxi_decode(ns)
    if fickle and fickle_step and p == 4 and (nrow, ncol) != (row, col):
        fickle_step = False
        dest = r["draws"]["new_destination"]
        assert dest != d
        ns = taxi_encode(nrow, ncol, np_, dest)
    else:
        assert "new_destination" not in r["draws"]
    elapsed = st["_elapsed_steps"] + 1
    return {"next_state": {"s": ns, "lastaction": a, "_elapsed_steps": elapsed, "fickle_step": fickle_step},
            "obs": ns, "reward": reward, "terminated": term, "truncated": elapsed >= 200,
            "info": {"prob": probs[i], "action_mask": taxi_mask(ns)}}


def hand(h):
    s = sum(h)
    usable = 1 in h and s + 10 <= 21
    return (s + 10 if usable else s), int(usable)


def blackjack(meta, r):
    sab = meta["options"].get("sab", True)
    natural = meta["options"].get("natural", False)
    if r.get("reset"):
        d = r["draws"]
        face = {1: "A", 10: d.get("face")}.get(d["dealer"][0], str(d["dealer"][0]))
        st = {"player": d["player"], "dealer": d["dealer"], "dealer_top_card_suit": d["suit"],
              "dealer_top_card_value_str": face}
        return {"state": st, "obs": [hand(d["player"])[0], d["dealer"][0], hand(d["player"])[1]], "info": {}}
    st, a = copy(r["state"]), r["action"]
    player, dealer = st["player"], st["dealer"]
    if a:
        player.append(r["draws"]["card"])
        term = hand(player)[0] > 21
        reward = -1.0 if term else 0.0
    else:
        term = True
        cards = list(r["draws"]["dealer_cards"])
        while hand(dealer)[0] < 17:
            dealer.append(cards.pop(0))
        assert not cards, "the dealer drew more cards than the rule allows"

        def score(h):
            return 0 if hand(h)[0] > 21 else hand(h)[0]

        reward = float(score(player) > score(dealer)) - float(score(player) < score(dealer))
        is_nat = lambda h: sorted(h) == [1, 10]
        if sab and is_nat(player) and not is_nat(dealer):
            reward = 1.0
        elif not sab and natural and is_nat(player) and reward == 1.0:
            reward = 1.5
    return {"next_state": st, "obs": [hand(player)[0], dealer[0], hand(player)[1]], "reward": reward,
            "terminated": term, "truncated": False, "info": {}}


# ------------------------------------------------------------------ gymnax

def catch(meta, r):
    if r.get("reset"):
        st = {"time": 0, "ball_x": r["draws"]["ball_x"], "ball_y": 0, "paddle_x": 2, "paddle_y": 9,
              "prev_done": False}
        return {"state": st, "obs": catch_obs(st)}
    s, a = r["state"], r["action"]
    if s["prev_done"]:
        bx, by, px, py = r["draws"]["ball_x"], 0, 2, 9
    else:
        bx, by, px, py = s["ball_x"], s["ball_y"] + 1, min(max(s["paddle_x"] + a - 1, 0), 4), s["paddle_y"]
    done = by == py
    reward = (1.0 if px == bx else -1.0) if done else 0.0
    n = {"time": s["time"] + 1, "ball_x": bx, "ball_y": by, "paddle_x": px, "paddle_y": py, "prev_done": done}
    return {"next_state": n, "obs": catch_obs(n), "reward": reward, "terminated": by == 9,
            "truncated": n["time"] >= 1000, "info": {"discount": 0.0 if by == 9 else 1.0}}


def catch_obs(st):
    o = zeros(10, 5)
    o[st["ball_y"]][st["ball_x"]] = 1
    o[st["paddle_y"]][st["paddle_x"]] = 1
    return o


DEEP_SEA_MAP = [[0, 0, 1, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0, 0, 0], [0, 0, 0, 1, 1, 0, 0, 0],
                [0, 0, 0, 0, 1, 1, 1, 0], [1, 0, 1, 0, 0, 1, 1, 1], [1, 1, 0, 0, 0, 1, 1, 1],
                [0, 0, 0, 1, 1, 0, 0, 0], [1, 0, 1, 1, 1, 1, 1, 0]]


def deep_sea(meta, r):
    deterministic = meta["options"].get("deterministic", True)
    if r.get("reset"):
        opt = f32(1.0 - f32(0.01)) if deterministic else f32(f32(0.875 ** 7) - f32(0.01))
        st = {"time": 0, "row": 0, "column": 0, "bad_episode": False, "total_bad_episodes": 0,
              "denoised_return": 0, "optimal_return": opt, "action_mapping": DEEP_SEA_MAP}
        if r.get("auto"):    # the counters survive gymnax DeepSea's auto-reset
            st["total_bad_episodes"] = r["state"]["total_bad_episodes"]
            st["denoised_return"] = r["state"]["denoised_return"]
        return {"state": st, "obs": deep_sea_obs(0, 0)}
    s, a = r["state"], r["action"]
    row, col = s["row"], s["column"]
    right = a == s["action_mapping"][min(row, 7)][min(col, 7)]
    trans = f32(r["draws"]["rand_trans_u"]) > f32(0.125)
    right_cond = right and (trans or deterministic)
    treasure = col == 7 and right
    reward = f32(0.0 + treasure)
    if (row == 7 and col in (0, 7)) and not deterministic:
        reward = f32(reward + f32(r["draws"]["rand_reward"]))
    if right:
        reward = f32(reward - f32(f32(0.01) / 8))
    col1 = min(col + 1, 7) if right_cond else col
    bad = True if (not right and row == col1) else s["bad_episode"]
    ncol = col1 if right else max(col - 1, 0)
    nrow = row + 1
    term = nrow == 8
    n = {"time": s["time"] + 1, "row": nrow, "column": ncol, "bad_episode": bad,
         "total_bad_episodes": s["total_bad_episodes"] + (term and bad),
         "denoised_return": s["denoised_return"] + treasure, "optimal_return": s["optimal_return"],
         "action_mapping": s["action_mapping"]}
    return {"next_state": n, "obs": deep_sea_obs(nrow, ncol), "reward": reward, "terminated": term,
            "truncated": n["time"] >= 8, "info": {"discount": 0.0 if term else 1.0}}


def deep_sea_obs(row, col):
    o = zeros(8, 8)
    if row < 8:
        o[row][col] = 1
    return o


def memory_chain(meta, r):
    def obs(st):
        t = st["time"]
        return [f32(1 - f32(t / 5)), st["query"] if t == 4 else 0, 2 * st["context"][0] - 1 if t == 0 else 0]

    if r.get("reset"):
        st = {"time": 0, "context": [int(r["draws"]["context"][0])], "query": r["draws"]["query"],
              "total_perfect": 0, "total_regret": 0.0}
        return {"state": st, "obs": obs(st)}
    s, a = r["state"], r["action"]
    full = s["time"] >= 5
    correct = a == s["context"][s["query"]]
    good, bad = full and correct, full and not correct
    n = dict(s, time=s["time"] + 1, total_perfect=s["total_perfect"] + good, total_regret=s["total_regret"] + 2 * bad)
    term = n["time"] - 1 == 5
    return {"next_state": n, "obs": obs(s), "reward": float(good - bad), "terminated": term,
            "truncated": n["time"] >= 1000, "info": {"discount": 0.0 if term else 1.0}}


def umbrella_chain(meta, r):
    def obs(st):
        return [st["need_umbrella"], st["has_umbrella"], f32(1 - f32(st["time"] / 10))]

    if r.get("reset"):
        st = {"time": 0, "need_umbrella": int(r["draws"]["need_umbrella"]),
              "has_umbrella": int(r["draws"]["has_umbrella"]), "total_regret": 0}
        return {"state": st, "obs": obs(st)}
    s, a = r["state"], r["action"]
    has = a if s["time"] + 1 == 1 else s["has_umbrella"]
    full = s["time"] + 1 == 10
    match = has == s["need_umbrella"]
    reward = int(full and match) - int(full and not match) + (0 if full else r["draws"]["random_reward"] * 2 - 1)
    n = dict(s, has_umbrella=has, total_regret=s["total_regret"] + 2 * (full and not match), time=s["time"] + 1)
    term = n["time"] == 10
    return {"next_state": n, "obs": obs(n), "reward": reward, "terminated": term, "truncated": n["time"] >= 100,
            "info": {"discount": 0.0 if term else 1.0}}


def discounting_chain(meta, r):
    rewards = [f32(1.1), 1.0, 1.0, 1.0, 1.0]
    if r.get("reset"):
        st = {"time": 0, "rewards": rewards, "context": -1}
        return {"state": st, "obs": [-1, 0]}
    s, a = r["state"], r["action"]
    ctx = a if s["time"] == 0 else s["context"]
    t = s["time"] + 1
    reward = rewards[ctx] if t == [1, 3, 10, 30, 100][ctx] else 0.0
    return {"next_state": {"time": t, "rewards": s["rewards"], "context": ctx}, "obs": [ctx, f32(t / 100)],
            "reward": reward, "terminated": False, "truncated": t >= 100, "info": {"discount": 1.0}}


def breakout(meta, r):
    if r.get("reset"):
        b = r["draws"]["ball_start"]
        bricks = zeros(10, 10)
        for y in (1, 2, 3):
            bricks[y] = [1] * 10
        st = {"time": 0, "ball_y": 3, "ball_x": [0, 9][b], "ball_dir": [2, 3][b], "pos": 4, "brick_map": bricks,
              "strike": False, "last_y": 3, "last_x": [0, 9][b], "terminal": False}
        return {"state": st, "obs": breakout_obs(st)}
    s, a = r["state"], [0, 1, 3][min(r["action"], 2)]
    pos = max(0, s["pos"] - 1) if a == 1 else min(9, s["pos"] + 1) if a == 3 else s["pos"]
    d = s["ball_dir"]
    new_x = s["ball_x"] + [-1, 1, 1, -1][d]
    new_y = s["ball_y"] + [-1, -1, 1, 1][d]
    if new_x < 0 or new_x > 9:
        new_x = 0 if new_x < 0 else 9
        d = [1, 0, 3, 2][d]
    bricks = copy(s["brick_map"])
    reward = 0.0
    top = new_y < 0
    if top:
        new_y = 0
        d = [3, 2, 1, 0][d]
    toggle = not top and bricks[new_y][new_x] == 1
    strike_bool = not s["strike"] and toggle
    if strike_bool:
        reward = 1.0
        bricks[new_y][new_x] = 0
        new_y = s["ball_y"]
        d = [3, 2, 1, 0][d]
    cond = not toggle and new_y == 9
    if cond and count_nonzero(bricks) == 0:
        for y in (1, 2, 3):
            bricks[y] = [1] * 10
    r1 = cond and s["ball_x"] == pos
    if r1:
        d = [3, 2, 1, 0][d]
        new_y = s["ball_y"]
    r2 = cond and not r1 and new_x == pos
    if r2:
        d = [2, 3, 0, 1][d]
        new_y = s["ball_y"]
    terminal = cond and not r1 and not r2
    n = {"time": s["time"] + 1, "ball_y": new_y, "ball_x": new_x, "ball_dir": d, "pos": pos, "brick_map": bricks,
         "strike": toggle, "last_y": s["ball_y"], "last_x": s["ball_x"], "terminal": terminal}
    return {"next_state": n, "obs": breakout_obs(n), "reward": reward, "terminated": terminal,
            "truncated": n["time"] >= 1000, "info": {"discount": 0.0 if terminal else 1.0}}


def breakout_obs(st):
    o = [[[0, 0, 0, 0] for _ in range(10)] for _ in range(10)]
    o[9][st["pos"]][0] = 1
    o[st["ball_y"]][st["ball_x"]][1] = 1
    o[st["last_y"]][st["last_x"]][2] = 1
    for y in range(10):
        for x in range(10):
            o[y][x][3] = int(st["brick_map"][y][x] != 0)
    return o


def wrap_index(i, n):
    """JAX's scatter index: negative counts from the end; None (dropped) when out of range."""
    if -n <= i < 0:
        i += n
    return i if 0 <= i < n else None


def asterix(meta, r):
    if r.get("reset"):
        st = {"time": 0, "player_x": 5, "player_y": 5, "shot_timer": 0, "spawn_speed": 10, "spawn_timer": 10,
              "move_speed": 5, "move_timer": 5, "ramp_timer": 100, "ramp_index": 0, "entities": zeros(8, 5),
              "terminal": False}
        return {"state": st, "obs": asterix_obs(st)}
    s, a = r["state"], r["action"]
    d = r["draws"]
    ent = copy(s["entities"])
    spawn_timer = s["spawn_timer"]
    if spawn_timer == 0:
        order = d["slot_order"]
        k, free = 0, 0
        while k < 7 and free == 0:
            k += 1
            free = int(ent[order[k]][4] == 0)
        slot = order[k]
        ent[slot] = [(1 - d["lr"]) * 9, slot + 1, d["lr"], d["is_gold"], free]
        spawn_timer = s["spawn_speed"]
    px = max(0, s["player_x"] - 1) if a == 1 else min(9, s["player_x"] + 1) if a == 3 else s["player_x"]
    py = max(1, s["player_y"] - 1) if a == 2 else min(8, s["player_y"] + 1) if a == 4 else s["player_y"]
    reward, done = 0, 0
    for i in range(8):
        e = ent[i]
        hit = e[4] != 0 and e[0] == px and e[1] == py
        if hit and e[3]:
            reward += 1
            ent[i] = [0] * 5
        if hit and not e[3]:
            done += 1
    move = s["move_timer"] == 0
    move_timer = s["move_speed"] if move else s["move_timer"]
    if move:
        for i in range(8):
            e = ent[i]
            filled = e[4] != 0
            nx = e[0] + (1 if e[2] else -1) if filled else e[0]
            out = nx < 0 or nx > 9
            ent[i] = [0] * 5 if (out or not filled) else [nx] + e[1:]
            hit = filled and nx == px and e[1] == py
            if hit and e[3]:
                reward += 1
                ent[i] = [0] * 5
            if hit and not e[3]:
                done += 1
    spawn_timer -= 1
    move_timer -= 1
    ramp_cond = s["spawn_speed"] > 1 or s["move_speed"] > 1
    timer_cond = ramp_cond and s["ramp_timer"] >= 0
    ramp_timer = s["ramp_timer"] - 1 if timer_cond else 100
    now = ramp_cond and not timer_cond
    move_speed = s["move_speed"] - int(now and s["move_speed"] != 0 and s["ramp_index"] % 2 != 0)
    spawn_speed = s["spawn_speed"] - int(now and s["spawn_speed"] > 1)
    n = dict(s, player_x=px, player_y=py, spawn_speed=spawn_speed, spawn_timer=spawn_timer, move_speed=move_speed,
             move_timer=move_timer, ramp_timer=ramp_timer, ramp_index=s["ramp_index"] + int(now), entities=ent,
             time=s["time"] + 1, terminal=done > 0)
    return {"next_state": n, "obs": asterix_obs(n), "reward": float(reward), "terminated": done > 0,
            "truncated": n["time"] >= 1000, "info": {"discount": 0.0 if done > 0 else 1.0}}


def asterix_obs(st):
    o = [[[0] * 5 for _ in range(10)] for _ in range(10)]
    o[st["player_y"]][st["player_x"]][0] = 1
    for e in st["entities"]:
        c = (3 if e[3] else 1) if e[4] else 4
        y, x = wrap_index(e[1], 10), wrap_index(e[0], 10)
        if y is not None and x is not None:
            o[y][x][c] = 1
        back = e[0] - 1 if e[2] else e[0] + 1
        bx = wrap_index(back, 10)
        if y is not None and bx is not None:
            o[y][bx][2 if e[4] else 4] = int(0 <= back <= 9)
    return [[cell[:4] for cell in row] for row in o]


def freeway(meta, r):
    def cars_from(speeds, dirs, old=None):
        cars = [] if old is None else copy(old)
        for i in range(8):
            v = dirs[i] * speeds[i]
            if old is None:
                cars.append([0, i + 1, abs(v), v])
            else:
                cars[i][2:4] = [abs(v), v]
        return cars

    if r.get("reset"):
        st = {"time": 0, "pos": 9, "cars": cars_from(r["draws"]["speeds"], r["draws"]["directions"]),
              "move_timer": 3, "terminal": False}
        return {"state": st, "obs": freeway_obs(st)}
    s, a = r["state"], [0, 2, 4][min(r["action"], 2)]
    up = a == 2 and s["move_timer"] == 0
    down = a == 4 and s["move_timer"] == 0
    pos = max(0, s["pos"] - 1) if up else min(9, s["pos"] + 1) if down else s["pos"]
    move_timer = 3 if (up or down) else s["move_timer"]
    win = pos == 0
    if win:
        pos = 9
    cars = cars_from(r["draws"]["speeds"], r["draws"]["directions"], s["cars"]) if win else copy(s["cars"])
    for c in cars:
        if c[0] == 4 and c[1] == pos:
            pos = 9
        if c[2] == 0:
            c[2] = abs(c[3])
            c[0] += 1 if c[3] > 0 else -1
            c[0] = 9 if c[0] < 0 else 0 if c[0] > 9 else c[0]
            if c[0] == 4 and c[1] == pos:
                pos = 9
        else:
            c[2] -= 1
    move_timer -= int(move_timer > 0)
    n = {"time": s["time"] + 1, "pos": pos, "cars": cars, "move_timer": move_timer, "terminal": False}
    return {"next_state": n, "obs": freeway_obs(n), "reward": 1.0 if win else 0.0, "terminated": False,
            "truncated": n["time"] >= 2500, "info": {"discount": 1.0}}


def freeway_obs(st):
    o = [[[0] * 7 for _ in range(10)] for _ in range(10)]
    o[st["pos"]][4][0] = 1
    for c in st["cars"]:
        o[c[1]][c[0]][1] = 1
        back = c[0] - 1 if c[3] > 0 else c[0] + 1
        back = 9 if back < 0 else 0 if back > 9 else back
        o[c[1]][back][1 + abs(c[3])] = 1
    return o


def space_invaders(meta, r):
    def block():
        m = zeros(10, 10)
        for y in range(4):
            for x in range(2, 8):
                m[y][x] = 1
        return m

    if r.get("reset"):
        st = {"time": 0, "pos": 5, "f_bullet_map": zeros(10, 10), "e_bullet_map": zeros(10, 10),
              "alien_map": block(), "alien_dir": -1, "enemy_move_interval": 12, "alien_move_timer": 12,
              "alien_shot_timer": 10, "ramp_index": 0, "shot_timer": 0, "ramping": True, "terminal": False}
        return {"state": st, "obs": space_invaders_obs(st)}
    s, a = r["state"], [0, 1, 3, 5][min(r["action"], 3)]
    fb, eb, al = copy(s["f_bullet_map"]), copy(s["e_bullet_map"]), copy(s["alien_map"])
    pos, shot_timer = s["pos"], s["shot_timer"]
    if a == 5 and shot_timer == 0:
        fb[9][pos] = 1
        shot_timer = 5
    if a == 1:
        pos = max(0, pos - 1)
    if a == 3:
        pos = min(9, pos + 1)
    fb = fb[1:] + [[0] * 10]
    eb = [[0] * 10] + eb[:-1]
    terminal = s["terminal"] or eb[9][pos] != 0
    t1 = al[9][pos] != 0
    move = s["alien_move_timer"] == 0
    amt = min(count_nonzero(al), s["enemy_move_interval"]) if move else s["alien_move_timer"]
    left = any(al[y][0] for y in range(10)) and s["alien_dir"] < 0
    right = any(al[y][9] for y in range(10)) and s["alien_dir"] > 0
    border = move and (left or right)
    adir = -s["alien_dir"] if border else s["alien_dir"]
    t2 = border and any(al[9])
    if move:
        if border:
            al = [al[9]] + al[:9]
        else:
            al = [[row[(x - adir) % 10] for x in range(10)] for row in al]
    t3 = move and al[9][pos] != 0
    terminal = terminal or t1 or t2 or t3
    ast = s["alien_shot_timer"]
    if ast == 0:
        ast = 10
        best = None
        for col in sorted(range(10), key=lambda c: (abs(c - pos), c)):
            if any(al[y][col] for y in range(10)):
                best = col
                break
        if best is not None:
            low = max(y for y in range(10) if al[y][best])
            eb[low][best] = 1
    kills = [[int(al[y][x] != 0 and fb[y][x] != 0) for x in range(10)] for y in range(10)]
    reward = count_nonzero(kills)
    al = [[al[y][x] * (1 - kills[y][x]) for x in range(10)] for y in range(10)]
    fb = [[fb[y][x] * (1 - kills[y][x]) for x in range(10)] for y in range(10)]
    shot_timer -= int(shot_timer > 0)
    emi, ramp = s["enemy_move_interval"], s["ramp_index"]
    if count_nonzero(al) == 0:
        al = block()
        if emi > 6 and s["ramping"]:
            emi, ramp = emi - 1, ramp + 1
    n = dict(s, pos=pos, f_bullet_map=fb, e_bullet_map=eb, alien_map=al, alien_dir=adir,
             enemy_move_interval=emi, alien_move_timer=amt - 1, alien_shot_timer=ast - 1, ramp_index=ramp,
             shot_timer=shot_timer, time=s["time"] + 1, terminal=bool(terminal))
    return {"next_state": n, "obs": space_invaders_obs(n), "reward": float(reward), "terminated": bool(terminal),
            "truncated": n["time"] >= 1000, "info": {"discount": 1 - int(bool(terminal))}}


def space_invaders_obs(st):
    o = [[[0] * 6 for _ in range(10)] for _ in range(10)]
    o[9][st["pos"]][0] = 1
    for y in range(10):
        for x in range(10):
            alien = int(st["alien_map"][y][x] != 0)
            o[y][x][1] = alien
            o[y][x][2 if st["alien_dir"] < 0 else 3] = alien
            o[y][x][4] = int(st["f_bullet_map"][y][x] != 0)
            o[y][x][5] = int(st["e_bullet_map"][y][x] != 0)
    return o


FOUR_ROOMS = ["xxxxxxxxxxxxx", "x     x     x", "x     x     x", "x           x", "x     x     x",
              "x     x     x", "xx xxxx     x", "x     xxx xxx", "x     x     x", "x     x     x",
              "x           x", "x     x     x", "xxxxxxxxxxxxx"]
DIRECTIONS = [(-1, 0), (0, 1), (1, 0), (0, -1)]


def four_rooms(meta, r):
    if r.get("reset"):
        st = {"time": 0, "pos": [4, 1], "goal": [8, 9]}
        return {"state": st, "obs": [4, 1, 8, 9]}
    s = r["state"]
    a = r["draws"]["random_action"] if f32(r["draws"]["random_u"]) < f32(f32(f32(1 / 3) * 4) / 3) else r["action"]
    p = [s["pos"][0] + DIRECTIONS[a][0], s["pos"][1] + DIRECTIONS[a][1]]
    pos = p if FOUR_ROOMS[p[0]][p[1]] == " " else s["pos"]
    goal = pos == s["goal"]
    n = {"time": s["time"] + 1, "pos": pos, "goal": s["goal"]}
    return {"next_state": n, "obs": pos + s["goal"], "reward": 1.0 if goal else 0.0, "terminated": goal,
            "truncated": n["time"] >= 500, "info": {"discount": 0.0 if goal else 1.0}}


def meta_maze_map():
    rows = ["x" * 11] + [("x" + " " * 9 + "x") if r % 2 == 0 else ("x" + " x" * 5) for r in range(9)] + ["x" * 11]
    return rows


META_MAZE = meta_maze_map()
META_COORDS = [[y, x] for y in range(11) for x in range(11) if META_MAZE[y][x] == " "]


def meta_maze(meta, r):
    def obs(st):
        window = [int(META_MAZE[st["pos"][0] - 1 + i][st["pos"][1] - 1 + j] != " ") for i in range(3) for j in range(3)]
        return window + [int(st["last_action"] == k) for k in range(4)] + [st["last_reward"], st["time"]]

    if r.get("reset"):
        st = {"time": 0.0, "last_action": 0, "last_reward": 0.0, "pos": [5, 5],
              "goal": META_COORDS[r["draws"]["goal_index"]]}
        return {"state": st, "obs": obs(st)}
    s, a = r["state"], r["action"]
    p = [s["pos"][0] + DIRECTIONS[a][0], s["pos"][1] + DIRECTIONS[a][1]]
    pos = p if META_MAZE[p[0]][p[1]] == " " else s["pos"]
    reached = pos == s["goal"]
    reward = 10.0 if reached else 0.0
    if reached:
        pos = META_COORDS[r["draws"]["pos_index"]]
    n = {"time": s["time"] + 1.0, "last_action": a, "last_reward": reward, "pos": pos, "goal": s["goal"]}
    term = pos == s["goal"]
    return {"next_state": n, "obs": obs(n), "reward": reward, "terminated": term, "truncated": n["time"] >= 200,
            "info": {"discount": 0.0 if term else 1.0}}


def point_robot(meta, r):
    def obs(st):
        return st["pos"] + [st["last_reward"]] + st["last_action"] + [time_rep_const(st["time"])]

    def sample(radius, angle):
        return [f32(radius * f32(math.cos(angle))), f32(radius * f32(math.sin(angle)))]

    if r.get("reset"):
        d = r["draws"]
        st = {"time": 0.0, "last_action": [0, 0], "last_reward": 0.0, "pos": sample(d["pos_radius"], d["pos_angle"]),
              "goal": [f32(math.cos(d["goal_angle"])), f32(math.sin(d["goal_angle"]))], "goals_reached": 0}
        return {"state": st, "obs": obs(st)}
    s, a = r["state"], r["action"]
    clip = [min(max(x, f32(-0.1)), f32(0.1)) for x in a]
    moved = [f32(s["pos"][i] + clip[i]) for i in range(2)]
    dx, dy = f32(s["goal"][0] - s["pos"][0]), f32(s["goal"][1] - s["pos"][1])
    dist = f32(math.sqrt(f32(f32(dx * dx) + f32(dy * dy))))
    reached = dist <= f32(0.2)
    pos = sample(r["draws"]["pos_radius"], r["draws"]["pos_angle"]) if reached else moved
    n = {"time": s["time"] + 1.0, "last_action": a, "last_reward": 1.0 if reached else 0.0, "pos": pos,
         "goal": s["goal"], "goals_reached": s["goals_reached"] + reached}
    return {"next_state": n, "obs": obs(n), "reward": 1.0 if reached else 0.0, "terminated": False,
            "truncated": n["time"] >= 100, "info": {"discount": 1.0}}


def bernoulli_bandit(meta, r):
    def obs(st):
        return [st["last_reward"]] + [int(st["last_action"] == k) for k in range(2)] + \
            [f32(f32(f32(2.0 * st["time"]) / 100) + -1.0)]

    if r.get("reset"):
        p1 = f32(r["draws"]["p1"][0])
        st = {"time": 0.0, "last_action": 0, "last_reward": 0, "exp_reward_best": p1 if p1 > 0.5 else f32(1 - p1),
              "reward_probs": [p1, f32(1 - p1)]}
        return {"state": st, "obs": obs(st)}
    s, a = r["state"], r["action"]
    reward = int(r["draws"]["success"])
    n = dict(s, time=s["time"] + 1.0, last_action=a, last_reward=reward)
    return {"next_state": n, "obs": obs(n), "reward": reward, "terminated": False, "truncated": n["time"] >= 100,
            "info": {"discount": 1.0}}


def gaussian_bandit(meta, r):
    def obs(st):
        return [st["last_reward"]] + [int(st["last_action"] == k) for k in range(2)] + [time_rep_const(st["time"])]

    if r.get("reset"):
        st = {"time": 0.0, "last_action": 0, "last_reward": 0.0, "mu": fma32(f32(r["draws"]["mu_z"]), 1.0, -1.0)}
        return {"state": st, "obs": obs(st)}
    s, a = r["state"], r["action"]
    reward = 0.0 if a == 0 else fma32(f32(r["draws"]["z"]), f32(0.1), s["mu"])
    n = dict(s, time=s["time"] + 1.0, last_action=a, last_reward=reward)
    return {"next_state": n, "obs": obs(n), "reward": reward, "terminated": False, "truncated": n["time"] >= 100,
            "info": {"discount": 1.0}}


FAMILIES = {"FrozenLake-v1": frozen_lake, "FrozenLake8x8-v1": frozen_lake, "CliffWalking-v1": cliff,
            "CliffWalkingSlippery-v1": cliff, "Taxi-v4": taxi, "Blackjack-v1": blackjack, "Catch-bsuite": catch,
            "DeepSea-bsuite": deep_sea, "MemoryChain-bsuite": memory_chain, "UmbrellaChain-bsuite": umbrella_chain,
            "DiscountingChain-bsuite": discounting_chain, "Breakout-MinAtar": breakout, "Asterix-MinAtar": asterix,
            "Freeway-MinAtar": freeway, "SpaceInvaders-MinAtar": space_invaders, "FourRooms-misc": four_rooms,
            "MetaMaze-misc": meta_maze, "PointRobot-misc": point_robot, "BernoulliBandit-misc": bernoulli_bandit,
            "GaussianBandit-misc": gaussian_bandit}
TOLERANT = {"PointRobot-misc"}    # XLA's float32 sin/cos/sqrt


def equal(a, b, rel):
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if rel:
            return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k], rel) for k in a)
    return a == b


def check(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    meta, records = lines[0]["meta"], lines[1:]
    fn = FAMILIES[meta["id"]]
    rel = 1e-6 if meta["id"] in TOLERANT else 0
    bad, shown = 0, 0
    for r in records:
        try:
            want = fn(meta, r)
            wrong = [k for k, v in want.items() if not equal(v, r[k], rel)]
        except (AssertionError, KeyError, IndexError) as e:
            wrong = ["raised %s: %s" % (type(e).__name__, e)]
        if wrong:
            bad += 1
            if shown < 3:
                shown += 1
                print("  %s episode %s %s: %s" % (os.path.basename(path), r["episode"],
                                                  "reset" if r.get("reset") else "t=%d" % r["t"], ", ".join(wrong)))
    print("%s: %d records, %d differ%s" % (os.path.basename(path), len(records), bad,
                                           " (relative tolerance %g)" % rel if rel else ""))
    return bad == 0


def main():
    paths = sys.argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.jsonl")))
    sys.exit(0 if all([check(p) for p in paths]) else 1)


if __name__ == "__main__":
    main()
