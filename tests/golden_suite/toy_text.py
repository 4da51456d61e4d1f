"""The Gymnasium worker of generate.py (runs inside venv-gymnasium): episodes
of FrozenLake, Taxi, CliffWalking and Blackjack made by gymnasium.make, with
every draw of the environment's np_random recorded as it happens."""
import collections
import platform
import sys

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding

from records import Writer, plain


class RecordingGenerator:
    """Stands in for an environment's np_random: forwards each draw to the
    real numpy Generator and keeps (method, population, outcome) in order.
    Any other use of the generator is an error, so no draw goes unrecorded."""

    def __init__(self, generator):
        self.generator = generator
        self.log = []

    def random(self):
        u = self.generator.random()
        self.log.append(("random", None, u))
        return u

    def choice(self, population):
        v = self.generator.choice(population)
        self.log.append(("choice", list(population), v))
        return v

    def take(self):
        log, self.log = self.log, []
        return log

    def __getattr__(self, name):
        raise AttributeError("unrecorded use of np_random.%s" % name)


def expect(log, *kinds):
    """The log's entries, checked to be exactly these methods in this order."""
    got = tuple(k for k, _, _ in log)
    assert got == kinds, "draws %r, expected %r" % (got, kinds)
    return [v for _, _, v in log]


# ------------------------------------------------------------------ maps

def grid_path_action(passable, moves, start, goal, rng_first=None):
    """The first action of a shortest path from start to goal over cells where
    passable(cell); moves maps action -> function(cell) -> cell or None.
    None when the goal cannot be reached."""
    if start == goal:
        return None
    frontier = collections.deque([start])
    first = {start: None}
    while frontier:
        cell = frontier.popleft()
        for action, move in moves.items():
            nxt = move(cell)
            if nxt is None or nxt in first or not passable(nxt):
                continue
            first[nxt] = action if first[cell] is None else first[cell]
            if nxt == goal:
                return first[nxt]
            frontier.append(nxt)
    return None


# -------------------------------------------------------------- the envs

class ToyText:
    """What one environment family needs: its state by name, its draws by
    name, its policies and the episode plan. Subclasses fill these in."""
    reset_draws_doc = step_draws_doc = ""

    def __init__(self, env, options):
        self.env = env
        self.u = env.unwrapped
        self.options = options
        self.time_limit = env.spec.max_episode_steps

    def state(self):
        s = {"s": self.u.s, "lastaction": self.u.lastaction}
        if self.time_limit:
            s["_elapsed_steps"] = self.env._elapsed_steps
        return s

    def plan(self):
        """[(policy, steps to record at most or None, placement or None)],
        one per episode."""
        raise NotImplementedError

    def place(self, placement, rng):
        """Changes the state after the reset (the rare branches); returns the
        fields set."""
        if placement == "truncate":   # TimeLimit's counter: truncated 1 to 3 steps from now
            self.env._elapsed_steps = self.time_limit - int(rng.integers(1, 4))
            return {"_elapsed_steps": self.env._elapsed_steps}
        raise KeyError(placement)

    def policy(self, mode, rng, state):
        return int(rng.integers(0, self.u.action_space.n))


class FrozenLake(ToyText):
    reset_draws_doc = "u: the uniform of categorical_sample(initial_state_distrib), start: its outcome (always 0)"
    step_draws_doc = ("u: the uniform of categorical_sample over P[s][a], transition: the index chosen "
                      "(slippery: 0 = (a-1)%4, 1 = a, 2 = (a+1)%4; otherwise and on G/H tiles 0)")
    dist_state = 9           # 4x4: (2, 1); 8x8: (1, 1)

    def __init__(self, env, options):
        super().__init__(env, options)
        desc = self.u.desc
        self.nrow, self.ncol = desc.shape
        self.goal = next((r, c) for r in range(self.nrow) for c in range(self.ncol) if desc[r, c] == b"G")
        deltas = {0: (0, -1), 1: (1, 0), 2: (0, 1), 3: (-1, 0)}
        self.moves = {a: self._mover(d) for a, d in deltas.items()}

    def _mover(self, d):
        def move(cell):
            r, c = cell[0] + d[0], cell[1] + d[1]
            return (r, c) if 0 <= r < self.nrow and 0 <= c < self.ncol else None
        return move

    def plan(self):
        # Random episodes, and episodes that walk a shortest path around the
        # holes to the goal; some truncated (set up close to the time limit).
        big = self.nrow == 8
        best = (5 if big else 12) if self.u.P[0][0][0][0] < 1 else 10     # slippery ones take long
        return ([("random", 40, None)] * (12 if big else 40) + [("best", None, None)] * best
                + [("random", None, "truncate")] * 6)

    def reset_draws(self, log):
        (u,) = expect(log, "random")
        return {"u": u, "start": int(self.u.s)}

    def step_draws(self, log, state, action):
        (u,) = expect(log, "random")
        transitions = self.u.P[state["s"]][action]
        i = int(np.argmax(np.cumsum([t[0] for t in transitions]) > u))
        assert transitions[i][1] == self.u.s
        return {"u": u, "transition": i}

    def best_actions(self):
        """The actions that reach the goal soonest with the most chance, from
        the reference's own transition table P (value iteration, discount
        0.99, so that a sure path beats bumping into the edge)."""
        if not hasattr(self, "_best"):
            n = self.nrow * self.ncol
            value = np.zeros(n)
            for _ in range(300):
                q = np.array([[sum(p * (self.success(r, done) + (not done) * 0.99 * value[s2])
                                   for p, s2, r, done in self.u.P[s][a]) for a in range(4)] for s in range(n)])
                value = q.max(axis=1)
            self._best = q.argmax(axis=1)
        return self._best

    @staticmethod
    def success(reward, done):
        return reward > 0

    def policy(self, mode, rng, state):
        if mode == "random" or rng.random() < 0.1:
            return int(rng.integers(0, 4))
        return int(self.best_actions()[state["s"]])


class CliffWalking(FrozenLake):
    reset_draws_doc = "u: the uniform of categorical_sample(initial_state_distrib), start: its outcome (always 36)"
    step_draws_doc = ("u: the uniform of categorical_sample over P[s][a], transition: the index chosen "
                      "(slippery: 0 = (a-1)%4, 1 = a, 2 = (a+1)%4; otherwise 0)")
    dist_state = 13          # (1, 1)

    def __init__(self, env, options):
        ToyText.__init__(self, env, options)
        self.nrow, self.ncol = self.u.shape

    @staticmethod
    def success(reward, done):
        return done

    def plan(self):
        # No time limit (CliffWalking-v1 has none): random episodes are cut
        # (the generator stops recording); the others walk to the goal by the
        # best actions for P (slippery: the long way round, away from the
        # cliff), with a random action now and then.
        slippery = len(self.u.P[0][0]) > 1
        return [("random", 25, None)] * 8 + [("best", None, None)] * (5 if slippery else 8)

    def policy(self, mode, rng, state):
        if mode == "random" or rng.random() < 0.15:
            return int(rng.integers(0, 4))
        return int(self.best_actions()[state["s"]])


class Taxi(ToyText):
    reset_draws_doc = ("u: the uniform of categorical_sample(initial_state_distrib), start: the state it gives; "
                       "fickle_passenger only: fickle_u, the uniform compared with fickle_probability")
    step_draws_doc = ("u: the uniform of categorical_sample over P[s][a], transition: the index chosen (rainy moves: "
                      "0 intended, 1 left of it, 2 right of it; otherwise 0); when the fickle passenger changes "
                      "destination: new_destination, the value np_random.choice drew from the other three")

    def __init__(self, env, options):
        super().__init__(env, options)
        desc = self.u.desc
        self.moves = {
            0: lambda c: (c[0] + 1, c[1]) if c[0] < 4 else None,
            1: lambda c: (c[0] - 1, c[1]) if c[0] > 0 else None,
            2: lambda c: (c[0], c[1] + 1) if desc[1 + c[0], 2 * c[1] + 2] == b":" else None,
            3: lambda c: (c[0], c[1] - 1) if desc[1 + c[0], 2 * c[1]] == b":" else None,
        }

    def plan(self):
        # Drive to the passenger, pick up, drive to the destination and drop
        # off (a random action one time in five); random episodes (illegal
        # pickups and drop-offs) cut short; a few truncated.
        return ([("drive", None, None)] * 20 + [("detour", None, None)] * 4 + [("random", 25, None)] * 8
                + [("drive", None, "truncate"), ("random", None, "truncate")] * 2)

    def state(self):
        s = super().state()
        s["fickle_step"] = self.u.fickle_step
        return s

    def reset_draws(self, log):
        if self.u.fickle_passenger:
            u, fu = expect(log, "random", "random")
            return {"u": u, "start": int(self.u.s), "fickle_u": fu}
        (u,) = expect(log, "random")
        return {"u": u, "start": int(self.u.s)}

    def step_draws(self, log, state, action):
        u = log[0][2]
        transitions = self.u.P[state["s"]][action]
        i = int(np.argmax(np.cumsum([t[0] for t in transitions]) > u))
        draws = {"u": u, "transition": i}
        if len(log) == 2:
            _, dest = expect(log, "random", "choice")
            draws["new_destination"] = int(dest)
        else:
            expect(log, "random")
        return draws

    def policy(self, mode, rng, state):
        if mode == "random" or rng.random() < 0.2:
            return int(rng.integers(0, 6))
        row, col, passenger, destination = self.u.decode(int(state["s"]))
        if mode == "detour" and passenger == 4 and not self.detoured:
            destination = (destination + 1) % 4        # drop the passenger at another stop first
            if (row, col) == self.u.locs[destination]:
                self.detoured = True
                return 5
        target = self.u.locs[passenger] if passenger < 4 else self.u.locs[destination]
        if (row, col) == target:
            return 4 if passenger < 4 else 5
        a = grid_path_action(lambda cell: True, self.moves, (row, col), target)
        return int(rng.integers(0, 6)) if a is None else a


class Blackjack(ToyText):
    reset_draws_doc = ("dealer: the two cards drawn first, player: the next two, suit: the dealer's shown card's "
                       "suit (render only), face: J/Q/K when that card is a 10 (render only)")
    step_draws_doc = "hit: card, the card drawn; stick: dealer_cards, the cards the dealer drew, in order"

    # Rare branches set up by hand after the reset (the dealer's cards are
    # still drawn by the reference when the player sticks).
    PLACED = [
        {"player": [1, 10], "dealer": [10, 1]},    # both natural: a draw
        {"player": [10, 1], "dealer": [10, 5]},    # natural; the dealer may reach 21 by drawing
        {"player": [1, 10], "dealer": [6, 5]},     # natural; the dealer draws
        {"player": [1, 1, 1, 1, 1, 1], "dealer": [2, 2]},  # many aces: 16, the dealer draws many cards
        {"player": [1, 5, 5], "dealer": [9, 9]},   # 21 without a natural (not 1.5)
    ]

    def plan(self):
        return [("random", None, None)] * 300 + [("stick natural", None, k % len(self.PLACED)) for k in range(40)]

    def state(self):
        return {"player": list(self.u.player), "dealer": list(self.u.dealer),
                "dealer_top_card_suit": self.u.dealer_top_card_suit,
                "dealer_top_card_value_str": self.u.dealer_top_card_value_str}

    def place(self, placement, rng):
        hands = self.PLACED[placement]
        self.u.player = list(hands["player"])
        self.u.dealer = list(hands["dealer"])
        return {k: list(v) for k, v in hands.items()}

    def reset_draws(self, log):
        kinds = ("choice",) * (6 if len(log) == 6 else 5)
        values = expect(log, *kinds)
        draws = {"dealer": [int(v) for v in values[0:2]], "player": [int(v) for v in values[2:4]],
                 "suit": str(values[4])}
        if len(values) == 6:
            draws["face"] = str(values[5])
        return draws

    def step_draws(self, log, state, action):
        values = expect(log, *(("choice",) * len(log)))
        if action:
            assert len(values) == 1
            return {"card": int(values[0])}
        return {"dealer_cards": [int(v) for v in values]}

    def policy(self, mode, rng, state):
        if mode == "stick natural" and sorted(state["player"]) == [1, 10]:
            return 0
        return int(rng.integers(0, 2))


FAMILIES = {"FrozenLake-v1": FrozenLake, "FrozenLake8x8-v1": FrozenLake, "Taxi-v4": Taxi,
            "CliffWalking-v1": CliffWalking, "CliffWalkingSlippery-v1": CliffWalking, "Blackjack-v1": Blackjack}


def versions():
    return {"gymnasium": gym.__version__, "numpy": np.__version__, "python": platform.python_version()}


def wrapper_stack(env):
    names = []
    while hasattr(env, "env"):
        names.append(type(env).__name__)
        env = env.env
    return names + [type(env).__name__]


def generate(stem, env_id, options, path, seed):
    env = gym.make(env_id, **options)
    family = FAMILIES[env_id](env, options)
    u = family.u
    rng = np.random.default_rng(seed)          # the actions' generator, apart from the environment's
    meta = {"file": stem, "reference": "gymnasium", "versions": versions(), "id": env_id, "options": options,
            "make": "gymnasium.make(%r%s)" % (env_id, "".join(", %s=%r" % kv for kv in options.items())),
            "wrappers": wrapper_stack(env), "max_episode_steps": family.time_limit,
            "env_seed": "episode e: np_random = Generator(PCG64(SeedSequence(%d + e))) before its reset" % seed,
            "draws": {"reset": family.reset_draws_doc, "step": family.step_draws_doc},
            "observation_space": str(u.observation_space), "action_space": str(u.action_space)}
    out = Writer(path, meta)
    steps = 0
    plan = family.plan()
    for episode, (mode, cut, placement) in enumerate(plan):
        recorder = RecordingGenerator(seeding.np_random(seed + episode)[0])
        u.np_random = recorder
        obs, info = env.reset()
        family.detoured = False
        record = {"episode": episode, "reset": True, "draws": family.reset_draws(recorder.take()),
                  "state": family.state(), "obs": obs, "info": info}
        if placement is not None:
            record["placed"] = family.place(placement, rng)
        out.write(record)
        t = 0
        while True:
            state = family.state()
            action = family.policy(mode, rng, plain(state))
            obs, reward, terminated, truncated, info = env.step(action)
            draws = family.step_draws(recorder.take(), plain(state), action)
            out.write({"episode": episode, "t": t, "state": state, "action": action, "draws": draws,
                       "next_state": family.state(), "obs": obs, "reward": reward,
                       "terminated": terminated, "truncated": truncated, "info": info})
            t += 1
            steps += 1
            if terminated or truncated or (cut is not None and t >= cut):
                break
            assert t < 10000, "an episode of %s ran past 10000 steps" % stem
    out.close()
    return {"episodes": len(plan), "steps": steps}


# ------------------------------------------------------- distributions

def distribution(stem, env_id, options, path, seed, samples):
    """The reference's own draws, many times: reset outcomes and each
    step-draw outcome, as counts (the statistical tests' expectation)."""
    env = gym.make(env_id, **options)
    family = FAMILIES[env_id](env, options)
    u = family.u
    u.np_random = seeding.np_random(seed)[0]
    counts = collections.defaultdict(collections.Counter)

    def count(name, value):
        counts[name][str(plain(value))] += 1

    env.reset()
    for _ in range(samples):
        env.reset()
        if isinstance(family, Blackjack):
            count("reset.dealer_card", u.dealer[0])
            count("reset.dealer_card", u.dealer[1])
            count("reset.player_card", u.player[0])
            count("reset.player_card", u.player[1])
            count("reset.obs", env.unwrapped._get_obs())
            count("reset.natural", sorted(u.player) == [1, 10])
        else:
            count("reset.s", int(u.s))
            if isinstance(family, Taxi) and u.fickle_passenger:
                count("reset.fickle_step", bool(u.fickle_step))
    notes = {}
    if isinstance(family, FrozenLake):     # and CliffWalking
        # From one state whose four neighbours are distinct cells, each action:
        # which entry of P[s][a] was taken.
        s0 = family.dist_state
        notes["step.transition"] = "from s=%d, for each action a: counts of the index into P[s][a]" % s0
        for a in range(4):
            targets = [t[1] for t in u.P[s0][a]]
            for _ in range(samples):
                u.s = s0
                env.unwrapped.step(a)
                count("step.transition[a=%d]" % a, targets.index(u.s))
    elif isinstance(family, Taxi):
        s0 = u.encode(2, 2, 0, 1)     # the middle of the map: every move possible
        notes["step.transition"] = "from s=%d (taxi (2,2), passenger R, destination G): next state counts" % s0
        for a in range(4):
            for _ in range(samples):
                u.s = s0
                u.fickle_step = False
                env.unwrapped.step(a)
                count("step.next_s[a=%d]" % a, int(u.s))
        if u.fickle_passenger:
            s1 = u.encode(2, 2, 4, 1)   # passenger aboard, destination G: the first move changes it
            notes["step.new_destination"] = "from s=%d, fickle_step set, action 0 (south): destination counts" % s1
            for _ in range(samples):
                u.s = s1
                u.fickle_step = True
                env.unwrapped.step(0)
                count("step.destination", u.decode(int(u.s))[3])
    elif isinstance(family, Blackjack):
        notes["step.card"] = "hit from player [2, 2]: the card drawn; stick with dealer [d, 2]: the dealer's final sum"
        for _ in range(samples):
            u.player, u.dealer = [2, 2], [10, 2]
            env.unwrapped.step(1)
            count("step.card", u.player[-1])
        from gymnasium.envs.toy_text.blackjack import sum_hand
        for _ in range(samples):
            u.player, u.dealer = [10, 10], [10, 2]
            env.unwrapped.step(0)
            count("step.dealer_final_sum[dealer 10,2]", sum_hand(u.dealer))
    with open(path, "w") as f:
        import json
        json.dump({"meta": {"file": stem, "reference": "gymnasium", "versions": versions(), "id": env_id,
                            "options": options, "samples": samples, "seed": seed, "notes": notes},
                   "counts": {k: dict(sorted(v.items())) for k, v in sorted(counts.items())}},
                  f, indent=1, sort_keys=False)
        f.write("\n")


# ------------------------------------------------------- the RNG's mapping

class EmulatedGenerator:
    """docs/suite.md's account of numpy's Generator(PCG64) draws, from the
    raw 64-bit outputs: random() takes the top 53 bits of one; integers(0, n)
    (what choice of n items calls) is Lemire's multiply-shift on 32-bit halves,
    the low half first and the high half kept for the next 32-bit request."""

    def __init__(self, seed):
        self.bits = np.random.PCG64(seed)
        self.half = None

    def next64(self):
        return int(self.bits.random_raw())

    def next32(self):
        if self.half is not None:
            half, self.half = self.half, None
            return half
        x = self.next64()
        self.half = x >> 32
        return x & 0xFFFFFFFF

    def random(self):
        return (self.next64() >> 11) * (1.0 / 9007199254740992.0)

    def integers(self, n):
        if n == 1:
            return 0                           # no draw at all
        m = self.next32() * n
        if (m & 0xFFFFFFFF) < n:
            threshold = (0xFFFFFFFF - (n - 1)) % n
            while (m & 0xFFFFFFFF) < threshold:
                m = self.next32() * n
        return m >> 32


def self_check():
    """The emulation above against numpy itself: mixed random() and
    choice() sequences, as Blackjack and Taxi make them."""
    for seed in range(50):
        real = np.random.Generator(np.random.PCG64(seed))
        emul = EmulatedGenerator(seed)
        pattern = np.random.default_rng(1000 + seed).integers(0, 4, 400)
        for kind in pattern:
            if kind == 0:
                assert real.random() == emul.random(), "random()"
            else:
                n = (13, 4, 3)[kind - 1]
                assert real.choice(list(range(n))) == emul.integers(n), "choice of %d" % n


if __name__ == "__main__":
    sys.exit("run generate.py")
