"""The gymnax worker of generate.py (runs inside venv-gymnax): episodes of
gymnax's bsuite, MinAtar and misc environments, on CPU jax.

Each transition is computed three ways from the same key and checked to
agree: gymnax's own jitted `step` (what users run), and jitted `step_env` and
`reset_env` wrapped so that every jax.random call the environment makes
(randint, choice, permutation, bernoulli, uniform, normal) is also returned,
in order: those outcomes are the record's draws, named per environment
below. `next_state` is step_env's (before the auto-reset); when the step
ends the episode, the next record is the auto-reset that `step` made."""
import contextlib
import platform

import gymnax
import jax
import jax.numpy as jnp
import numpy as np

from records import Writer, dtype_name, plain

DRAW_FUNCTIONS = ("randint", "choice", "permutation", "bernoulli", "uniform", "normal")


@contextlib.contextmanager
def capturing(log):
    """jax.random's samplers, each wrapped to append (name, outcome) to log;
    used while a function is traced, so the outcomes are traced values."""
    saved = {n: getattr(jax.random, n) for n in DRAW_FUNCTIONS}

    def wrap(name, sampler):
        def sample(*args, **kwargs):
            value = sampler(*args, **kwargs)
            log.append((name, value))
            return value
        return sample

    for n in DRAW_FUNCTIONS:
        setattr(jax.random, n, wrap(n, saved[n]))
    try:
        yield
    finally:
        for n in DRAW_FUNCTIONS:
            setattr(jax.random, n, saved[n])


def with_draws(fn):
    """jit(fn) that also returns the outcomes of its draws; `names` lists the
    sampler of each, in call order, once traced."""
    names = []

    def run(*args):
        log = []
        with capturing(log):
            out = fn(*args)
        names[:] = [n for n, _ in log]
        return out, [v for _, v in log]

    return jax.jit(run), names


def fields(state):
    """A gymnax EnvState as {field: numpy value}, in its dataclass order."""
    return {f: np.asarray(jax.device_get(getattr(state, f))) for f in state.__dataclass_fields__}


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def same_tree(a, b):
    return all(same(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


# ---------------------------------------------------------------- the envs

class Spec:
    """One environment: its draws' names (in the order the reference draws
    them; None for a zero-size draw, left out), its actions and its episodes."""
    reset_draws = ()
    step_draws = ()
    doc = ""

    def __init__(self, env, params):
        self.env = env
        self.params = params
        self.space = env.action_space(params)

    def episodes(self):
        """[(steps to record at most, placement name or None)]."""
        return [(None, None)] * 20

    def place(self, name, state, rng):
        """The state changed for a placement: (state, {field: value})."""
        raise KeyError(name)

    def action(self, rng, state, episode):
        return int(rng.integers(0, self.space.n))


def replace(state, **values):
    """state with some fields set, each in its own dtype and shape."""
    new = {k: jnp.asarray(v, dtype=getattr(state, k).dtype).reshape(getattr(state, k).shape)
           for k, v in values.items()}
    return state.replace(**new), {k: np.asarray(v) for k, v in new.items()}


class Catch(Spec):
    reset_draws = ("ball_x",)
    step_draws = ("ball_x",)
    doc = "step ball_x: sample_init_state's column, used only when the state's prev_done is set"

    def episodes(self):
        return [(None, None)] * 50 + [(None, "prev_done"), (None, "truncate")] * 3

    def place(self, name, state, rng):
        if name == "prev_done":        # a state gymnax's own auto-reset never leaves: the step restarts the ball
            return replace(state, prev_done=True, ball_y=9, ball_x=int(rng.integers(0, 5)))
        return replace(state, time=997)


class DeepSea(Spec):
    reset_draws = ("action_mapping",)
    step_draws = ("rand_reward", "rand_trans_u")
    doc = ("reset action_mapping: the bernoulli(0.5) 8x8 map drawn from the reset key, used only with "
           "sample_action_map; step rand_reward: the standard normal added at the chain's end when not "
           "deterministic, rand_trans_u: the uniform, a 'right' move succeeds when rand_trans_u > 1/8 (or deterministic)")

    def episodes(self):
        return [(None, None)] * 25

    def action(self, rng, state, episode):
        # 'right' (the action_mapping's action at the cell) always in one
        # episode of three (they head for the treasure), else three times in four.
        right = int(state["action_mapping"][min(state["row"], 7), min(state["column"], 7)])
        return right if episode % 3 == 0 or rng.random() < 0.75 else 1 - right


class MemoryChain(Spec):
    reset_draws = ("context", "query")
    doc = "reset context: bernoulli(0.5) of shape (num_bits,) = (1,), query: randint in [0, num_bits) = 0"

    def episodes(self):
        return [(None, None)] * 120 + [(None, "truncate")] * 2

    def place(self, name, state, rng):
        return replace(state, time=997)     # memory_length 5 < time: the reward is paid at every step


class UmbrellaChain(Spec):
    reset_draws = ("need_umbrella", "has_umbrella", None)
    step_draws = ("random_reward", None)
    doc = ("reset need_umbrella, has_umbrella: bernoulli(0.5); step random_reward: the bernoulli(0.5) b of "
           "2*b - 1, added unless the chain is full; the distractor bits (shape (n_distractor,) = (0,)) are empty")

    def episodes(self):
        return [(None, None)] * 60 + [(None, "truncate")] * 2

    def place(self, name, state, rng):
        return replace(state, time=97)      # past chain_length: only the time limit ends it


class DiscountingChain(Spec):
    def episodes(self):
        return [(None, None)] * 5

    def action(self, rng, state, episode):
        # The first action picks the context: each of the five once.
        return episode % 5 if state["time"] == 0 else int(rng.integers(0, 5))


class Breakout(Spec):
    reset_draws = ("ball_start",)
    doc = "reset ball_start: choice of [0, 1]: ball_x = [0, 9][ball_start], ball_dir = [2, 3][ball_start]"

    def episodes(self):
        plan = [(20, None)] * 3
        for k in range(3):
            plan += [(8, "inside"), (14, "last_brick"), (10, "cleared"), (5, "truncate")]
        return plan

    def place(self, name, state, rng):
        if name == "truncate":
            return replace(state, time=996)
        x = int(rng.integers(1, 9))
        if name == "cleared":      # the last brick just struck: the next paddle row respawns the wall
            return replace(state, brick_map=np.zeros((10, 10), np.float32), ball_y=6, ball_x=x, last_y=5,
                           last_x=x - 1, ball_dir=2, pos=min(9, x + 3))
        bricks = np.zeros((10, 10), np.float32)
        if name == "last_brick":   # one brick left, in the ball's way
            bricks[3, x + 1] = 1
            return replace(state, brick_map=bricks, ball_y=4, ball_x=x, last_y=5, last_x=x - 1, ball_dir=1)
        # "inside": the ball in a gap of a ragged wall, going down: it strikes,
        # turns up with strike set and may pass into the next brick
        bricks[1:4, :] = rng.random((3, 10)) < 0.7
        bricks[2, x] = 0
        bricks[3, x + 1] = 1
        return replace(state, brick_map=bricks, ball_y=2, ball_x=x, last_y=1, last_x=x - 1, ball_dir=2)

    def action(self, rng, state, episode):
        # Follow the ball three times in four: rallies that strike bricks.
        if rng.random() < 0.25:
            return int(rng.integers(0, 3))
        if state["ball_x"] < state["pos"]:
            return 1
        return 2 if state["ball_x"] > state["pos"] else 0


class Asterix(Spec):
    step_draws = ("lr", "is_gold", "slot_order")
    doc = ("step (every step; used when spawn_timer == 0) lr: choice of [1, 0], is_gold: choice of [1, 0] with "
           "p = [1/3, 2/3], slot_order: a permutation of 0..7 (the slot search's order)")

    def episodes(self):
        return ([(40, None)] * 2 + [(12, "crowd")] * 4 + [(8, "full")] * 2 + [(6, "ramp")] * 2
                + [(5, "truncate")])

    def place(self, name, state, rng):
        if name == "truncate":
            return replace(state, time=996)
        if name == "ramp":            # the difficulty ramps on the second step; odd ramp_index: entities speed up too
            return replace(state, ramp_timer=0, ramp_index=2 * int(rng.integers(0, 3)) + 1,
                           spawn_speed=int(rng.integers(2, 6)), move_speed=int(rng.integers(1, 4)))
        # 'full': every slot taken, the spawn's search fails and overwrites a
        # slot with an empty entity; 'crowd': all but one taken (the search
        # fails one time in eight). Entities next to the player and at the
        # edges: gold to collect, enemies to meet, entities leaving the screen.
        entities = np.zeros((8, 5), np.int32)
        filled = 8 if name == "full" else 7
        px, py = int(rng.integers(2, 8)), int(rng.integers(2, 8))
        for i in rng.permutation(8)[:filled]:
            lr = int(rng.integers(0, 2))
            near = i + 1 in (py - 1, py, py + 1)
            x = px + int(rng.integers(-1, 2)) if near else (9 if lr else 0) if rng.random() < 0.5 else \
                int(rng.integers(0, 10))
            entities[i] = [x, i + 1, lr, int(rng.random() < 0.4), 1]
        return replace(state, entities=entities, spawn_timer=0, move_timer=int(rng.integers(0, 2)),
                       player_x=px, player_y=py)


class Freeway(Spec):
    reset_draws = ("speeds", "directions")
    step_draws = ("speeds", "directions")
    doc = ("speeds: randint in [1, 6) for each of the 8 cars, directions: choice of [-1, 1] for each; drawn "
           "at every step, used when the chicken reaches the top (the cars' speeds and directions are redrawn)")

    def episodes(self):
        return [(20, None)] * 2 + [(8, "top")] * 4 + [(10, "lane")] * 3 + [(4, "truncate")]

    def place(self, name, state, rng):
        if name == "truncate":
            return replace(state, time=2497)
        if name == "top":          # one or two moves from the far side: a win, the cars redrawn
            return replace(state, pos=int(rng.integers(1, 3)), move_timer=0)
        # 'lane': the chicken in the middle, cars about to cross column 4 on its row and the next
        cars = np.asarray(state.cars).copy()
        pos = int(rng.integers(3, 7))
        for i in range(8):
            if i + 1 in (pos - 1, pos):
                cars[i, 0] = 4 - int(np.sign(cars[i, 3])) * int(rng.integers(0, 2))
                cars[i, 2] = int(rng.integers(0, 2))
        return replace(state, pos=pos, cars=cars, move_timer=int(rng.integers(0, 2)))

    def action(self, rng, state, episode):
        return 1 if rng.random() < 0.7 else int(rng.integers(0, 3))    # mostly up


class SpaceInvaders(Spec):
    def episodes(self):
        return [(25, None)] + [(8, "last_alien"), (4, "border"), (6, "low_aliens"), (4, "shot_at"),
                               (3, "truncate")] * 2

    def place(self, name, state, rng):
        if name == "truncate":
            return replace(state, time=997)
        aliens = np.zeros((10, 10), np.float32)
        pos = int(rng.integers(0, 10))
        if name == "last_alien":       # one alien left above the cannon: shooting it clears the map (ramp)
            aliens[int(rng.integers(4, 7)), pos] = 1
            return replace(state, alien_map=aliens, pos=pos, shot_timer=0, alien_move_timer=12,
                           enemy_move_interval=int(rng.integers(7, 13)))
        if name == "border":           # the block at the left edge, moving left: it turns and comes down
            aliens[0:4, 0:6] = 1
            return replace(state, alien_map=aliens, alien_move_timer=0, alien_dir=-1)
        if name == "low_aliens":       # aliens near the bottom row: the border move lands on the cannon
            rows = int(rng.integers(7, 9))
            aliens[rows:rows + 2, 0:4] = 1
            return replace(state, alien_map=aliens, alien_move_timer=int(rng.integers(0, 2)),
                           alien_dir=-1, pos=int(rng.integers(0, 4)))
        bullets = np.zeros((10, 10), np.float32)  # enemy bullets falling on the cannon
        bullets[7:9, pos] = 1
        return replace(state, e_bullet_map=bullets, pos=pos)

    def action(self, rng, state, episode):
        return 3 if rng.random() < 0.4 else int(rng.integers(0, 4))    # fire often


class FourRooms(Spec):
    reset_draws = ("goal_index", "pos_index")
    step_draws = ("random_u", "random_action")
    doc = ("reset goal_index: randint in [0, 104) (coords row, used with resample_goal_pos), pos_index: randint in "
           "[0, 103) (used with resample_init_pos; the goal's own index becomes 103); step random_u: the uniform "
           "compared with fail_prob * 4 / 3, random_action: randint in [0, 4) taken instead when random_u is below")

    def episodes(self):
        return [(None, None), (None, None), (30, None)] * 7 + [(None, "truncate")] * 3

    def place(self, name, state, rng):
        return replace(state, time=496)

    def action(self, rng, state, episode):
        if episode % 3 == 2 or rng.random() < 0.2:
            return int(rng.integers(0, 4))
        return maze_action(np.asarray(self.env.env_map), state["pos"], state["goal"])


class MetaMaze(Spec):
    reset_draws = ("goal_index",)
    step_draws = ("pos_index",)
    doc = ("reset goal_index: randint in [0, 65) (coords row); step pos_index: randint in [0, 65), the agent's "
           "new cell when it reaches the goal (may be the goal itself)")

    def episodes(self):
        return [(50, None)] * 10 + [(None, "truncate")] * 2

    def place(self, name, state, rng):
        return replace(state, time=195.0)

    def action(self, rng, state, episode):
        if rng.random() < 0.25:
            return int(rng.integers(0, 4))
        return maze_action(np.asarray(self.env.env_map), state["pos"], state["goal"])


class PointRobot(Spec):
    reset_draws = ("goal_angle", "pos_radius", "pos_angle")
    step_draws = ("pos_radius", "pos_angle")
    doc = ("reset goal_angle: uniform in [0, pi), pos_radius: uniform in [0, circle_radius), pos_angle: uniform in "
           "[0, pi); step pos_radius, pos_angle: the restart position, used when the goal is reached")

    def episodes(self):
        return [(50, None)] * 5 + [(None, "truncate")] * 2

    def place(self, name, state, rng):
        return replace(state, time=95.0)

    def action(self, rng, state, episode):
        # Toward the goal with noise, out of the box sometimes (clipped to 0.1).
        d = np.asarray(state["goal"], np.float64) - state["pos"]
        a = 0.12 * d / max(np.linalg.norm(d), 1e-6) + rng.normal(0, 0.05, 2)
        return np.float32(a)


class BernoulliBandit(Spec):
    reset_draws = ("p1",)
    step_draws = ("success",)
    doc = ("reset p1: choice of [reward_prob, 1 - reward_prob] (float32), reward_probs = [p1, 1 - p1]; step "
           "success: bernoulli(reward_probs[action]), the reward")

    def episodes(self):
        return [(None, None)] * 4 + [(None, "truncate")] * 4

    def place(self, name, state, rng):
        return replace(state, time=96.0)


class GaussianBandit(Spec):
    reset_draws = ("mu_z",)
    step_draws = ("z",)
    doc = ("reset mu_z: standard normal, mu = mean_mu + mu_z * sigma_p; step z: standard normal, arm 1 pays "
           "mu + z * sigma_l (drawn for either arm)")

    def episodes(self):
        return [(None, None)] * 4 + [(None, "truncate")] * 4

    def place(self, name, state, rng):
        return replace(state, time=96.0)


def maze_action(open_map, pos, goal):
    """First move of a shortest path from pos to goal over open_map's cells
    (up, right, down, left = 0..3 as in gymnax's directions)."""
    import collections
    start, target = (int(pos[0]), int(pos[1])), (int(goal[0]), int(goal[1]))
    if start == target:
        return 0
    moves = [(-1, 0), (0, 1), (1, 0), (0, -1)]
    first = {start: None}
    frontier = collections.deque([start])
    while frontier:
        cell = frontier.popleft()
        for a, (dy, dx) in enumerate(moves):
            nxt = (cell[0] + dy, cell[1] + dx)
            if nxt in first or not open_map[nxt]:
                continue
            first[nxt] = a if first[cell] is None else first[cell]
            if nxt == target:
                return first[nxt]
            frontier.append(nxt)
    return 0


SPECS = {"Catch-bsuite": Catch, "DeepSea-bsuite": DeepSea, "MemoryChain-bsuite": MemoryChain,
         "UmbrellaChain-bsuite": UmbrellaChain, "DiscountingChain-bsuite": DiscountingChain,
         "Breakout-MinAtar": Breakout, "Asterix-MinAtar": Asterix, "Freeway-MinAtar": Freeway,
         "SpaceInvaders-MinAtar": SpaceInvaders, "FourRooms-misc": FourRooms, "MetaMaze-misc": MetaMaze,
         "PointRobot-misc": PointRobot, "BernoulliBandit-misc": BernoulliBandit,
         "GaussianBandit-misc": GaussianBandit}


def versions():
    from importlib.metadata import version   # gymnax has no __version__
    return {"gymnax": version("gymnax"), "jax": jax.__version__, "jaxlib": version("jaxlib"), "numpy": np.__version__,
            "python": platform.python_version(), "backend": jax.default_backend()}


def make(env_id, options):
    env, params = gymnax.make(env_id)
    params = params.replace(**options) if options else params
    return env, params


def named(names, expected, values, what):
    """The draws' outcomes by name; the samplers must be the ones expected."""
    got = tuple(names)
    want = tuple(n for n in expected)
    assert len(got) == len(want), "%s draws %r, named %r" % (what, got, want)
    return {n: v for n, v in zip(want, values) if n is not None}


def generate(stem, env_id, options, path, seed):
    env, params = make(env_id, options)
    spec = SPECS[env_id](env, params)
    step = env.step                     # gymnax's own: jitted, with the auto-reset
    step_env, step_names = with_draws(env.step_env)
    reset_env, reset_names = with_draws(env.reset_env)
    rng = np.random.default_rng(seed)   # the actions' and placements' generator
    master = jax.random.key(seed)
    _, probe = env.reset(master, params)
    meta = {"file": stem, "reference": "gymnax", "versions": versions(), "id": env_id, "options": options,
            "make": "gymnax.make(%r)%s" % (env_id, "; params.replace(%s)" % ", ".join("%s=%r" % kv for kv in
                                                                               options.items()) if options else ""),
            "params": {k: plain(v) for k, v in params.__dict__.items()},
            "state_fields": {k: dtype_name(v) for k, v in fields(probe).items()},
            "keys": ("jax.random.key(%d) = K; episode i: E = fold_in(K, i); explicit reset key fold_in(E, 1000000); "
                     "step t key fold_in(E, t); each record's 'key' is jax.random.key_data of its key" % seed),
            "draws": {"reset": [n for n in spec.reset_draws if n], "step": [n for n in spec.step_draws if n],
                      "doc": spec.doc},
            "action_space": repr(spec.space)}
    out = Writer(path, meta)
    state = None
    steps = 0
    mismatches = 0
    for episode, (cut, placement) in enumerate(spec.episodes()):
        e_key = jax.random.fold_in(master, episode)
        if state is None:                           # the previous episode was cut, not ended: a fresh reset
            key = jax.random.fold_in(e_key, 1000000)
            (obs, state), draws = reset_env(key, params)
            obs2, state2 = env.reset(key, params)
            assert same_tree((obs, state), (obs2, state2)), "reset_env and reset differ"
            record = {"episode": episode, "reset": True, "auto": False, "key": jax.random.key_data(key),
                      "draws": named(reset_names, spec.reset_draws, draws, "reset"), "state": fields(state),
                      "obs": obs}
        else:
            record = pending
        if placement:
            state, placed = spec.place(placement, state, rng)
            record["placed"] = placed
        out.write(record)
        t = 0
        while True:
            key = jax.random.fold_in(e_key, t)
            action = spec.action(rng, fields(state), episode)
            key_step, key_reset = jax.random.split(key)
            (obs_st, state_st, reward, terminated, info), draws = step_env(key_step, state, action, params)
            truncated = env.is_truncated(state_st, params)
            obs, state_next, reward2, terminated2, truncated2, info2 = step(key, state, action, params)
            assert same(reward, reward2) and same(terminated, terminated2) and same(truncated, truncated2)
            if not same_tree(obs_st, info2["final_observation"]):
                mismatches += 1
            done = bool(terminated) or bool(truncated)
            if not done and not (same_tree(state_st, state_next) and same_tree(obs_st, obs)):
                mismatches += 1
            out.write({"episode": episode, "t": t, "key": jax.random.key_data(key), "state": fields(state),
                       "action": action, "draws": named(step_names, spec.step_draws, draws, "step"),
                       "next_state": fields(state_st), "obs": obs_st, "reward": reward,
                       "terminated": terminated, "truncated": truncated,
                       "info": {k: v for k, v in info.items()}})
            steps += 1
            t += 1
            if done:
                (obs_re, state_re), rdraws = reset_env(key_reset, params)
                assert same_tree(obs_re, obs), "the auto-reset's observation is not reset_env's"
                pending = {"episode": episode + 1, "reset": True, "auto": True, "key": jax.random.key_data(key_reset),
                           "draws": named(reset_names, spec.reset_draws, rdraws, "reset"),
                           "state": fields(state_next), "obs": obs}
                state = state_next
                break
            state = state_st
            if cut is not None and t >= cut:
                state = None
                break
    out.close()
    return {"episodes": len(spec.episodes()), "steps": steps, "step_vs_step_env_mismatches": mismatches}


# ------------------------------------------------------- distributions

def summarize(values):
    """Counts of a draw's or a field's outcomes over the samples (axis 0):
    per element for up to 8 elements, pooled over the elements beyond;
    a histogram with moments for reals; `constant` when every sample is the same."""
    values = np.asarray(values)
    flat = values.reshape(len(values), -1)
    if (flat == flat[:1]).all():
        return {"constant": plain(values[0]) if flat.shape[1] <= 8 else
                "the same %s in every sample" % "x".join(str(d) for d in values.shape[1:])}
    if values.dtype.kind == "f" and flat.shape[1] > 8:
        flat = flat.reshape(-1, 1)          # pooled over the elements
    if values.dtype.kind == "f":
        out = {}
        for j in range(flat.shape[1]):
            v = flat[:, j].astype(np.float64)
            lo, hi = float(v.min()), float(v.max())
            counts, edges = np.histogram(v, bins=20, range=(lo, hi if hi > lo else lo + 1))
            out["[%d]" % j if flat.shape[1] > 1 else ("pooled" if values[0].size > 8 else "all")] = {
                "mean": float(v.mean()), "std": float(v.std()), "min": lo, "max": hi,
                "edges": [float(x) for x in edges], "counts": [int(c) for c in counts]}
        return out
    flat = flat.astype(np.int64)
    if flat.shape[1] <= 8:
        return {("[%d]" % j if flat.shape[1] > 1 else "all"):
                {str(k): int(c) for k, c in zip(*np.unique(flat[:, j], return_counts=True))}
                for j in range(flat.shape[1])}
    return {"pooled": {str(k): int(c) for k, c in zip(*np.unique(flat, return_counts=True))}}


def distribution(stem, env_id, options, path, seed, samples):
    """The reference's own draws over `samples` keys: each reset draw and
    the reset state's fields, then each step draw from the first reset state
    with action 0 (with the resulting reward and next state's fields)."""
    import json
    env, params = make(env_id, options)
    spec = SPECS[env_id](env, params)
    reset_env, reset_names = with_draws(env.reset_env)
    step_env, step_names = with_draws(env.step_env)
    keys = jax.random.split(jax.random.key(seed + 1), samples)
    (obs, states), draws = jax.vmap(reset_env, in_axes=(0, None))(keys, params)
    reset = {"draw." + k: summarize(v) for k, v in named(reset_names, spec.reset_draws, draws, "reset").items()}
    reset.update({"state." + k: summarize(v) for k, v in fields(states).items()})
    state0 = jax.tree.map(lambda x: x[0], states)
    action = spec.action(np.random.default_rng(seed), fields(state0), 0)
    (obs, nstates, reward, term, info), draws = jax.vmap(step_env, in_axes=(0, None, None, None))(
        jax.random.split(jax.random.key(seed + 2), samples), state0, action, params)
    step = {"draw." + k: summarize(v) for k, v in named(step_names, spec.step_draws, draws, "step").items()}
    step["reward"] = summarize(reward)
    step.update({"next_state." + k: summarize(v) for k, v in fields(nstates).items()})
    with open(path, "w") as f:
        json.dump({"meta": {"file": stem, "reference": "gymnax", "versions": versions(), "id": env_id,
                            "options": options, "samples": samples,
                            "keys": "reset: split(key(%d), samples); step: split(key(%d), samples), from the "
                                    "first reset state, action %s" % (seed + 1, seed + 2, plain(action))},
                   "reset": reset, "step": step}, f, indent=1)
        f.write("\n")


# ------------------------------------------------------- the RNG's mapping

def self_check():
    """docs/suite.md's account of how jax.random turns bits into outcomes,
    checked against jax itself on a few hundred keys (threefry2x32, CPU)."""
    bits32 = lambda k, shape=(): np.asarray(jax.random.bits(k, shape, jnp.uint32)).astype(np.uint64)
    for i in range(200):
        key = jax.random.key(7000 + i)
        b = bits32(key)
        u = np.float32((np.uint32(b) >> np.uint32(9) | np.uint32(0x3F800000)).view(np.float32)) - np.float32(1)
        assert same(u, jax.random.uniform(key)), "uniform"
        assert bool(jax.random.bernoulli(key, 0.3)) == bool(u < np.float32(0.3)), "bernoulli"
        k1, k2 = jax.random.split(key)
        for n in (2, 3, 4, 5, 13, 65, 103, 104):
            expect = int((bits32(k1) * (2 ** 32 % n) + bits32(k2)) % n) if n else 0
            assert int(jax.random.randint(key, (), 0, n)) == expect, "randint %d" % n
        assert int(jax.random.choice(key, jnp.array([1, 0]))) == [1, 0][int((bits32(k1) * (2 ** 32 % 2) + bits32(k2)) % 2)]
        p = jnp.array([1 / 3, 2 / 3])
        r = np.float32(np.float32(1.0) * (np.float32(1) - u))
        assert int(jax.random.choice(key, jnp.array([1, 0]), p=p)) == (1 if r <= np.float32(1 / 3) else 0), "choice p"
        _, sub = jax.random.split(key)
        sort_keys = bits32(sub, (8,))
        assert list(np.argsort(sort_keys, kind="stable")) == list(np.asarray(jax.random.permutation(key, 8))), "perm"
