"""Gymnasium 1.4's toy text beyond FrozenLake (test_suite_frozen_lake.py) against its own
episodes (tests/golden_suite, docs/suite.md sections 2-4): every golden step and reset of
every option file replayed through the shipped .env files with the reference's random
outcomes, f64 bit-exact."""
import numpy as np
import pytest

import golden_dist
from golden_replay import (Golden, Mapping, check_replay, golden_params, word_for_bernoulli, word_for_categorical,
                           word_for_randint, word_for_uniform)

# (backend, dtype): Gymnasium computes in float64, which every backend reproduces to the
# bit; float32 too, its reals (the prob info) within RTOL, its ints and flags exact
RUNS = [("interp", "float64"), ("cpu", "float64"), ("interp", "float32")]
RTOL = {"float64": 0.0, "float32": 1e-6}
THIRD = 1.0 / 3.0


def _s_and_lastaction(ref):
    last = ref["lastaction"]
    return {"s": int(ref["s"]), "lastaction": -1 if last is None else int(last)}


# ---- CliffWalking-v1 and CliffWalkingSlippery-v1 (section 3) ----

def cliff_walking_mapping(slippery: bool) -> Mapping:
    def step_words(record, f32):
        # step draw 0: the entry of P[s][a] the reference's categorical picked
        if not slippery:
            return [word_for_uniform(record["draws"]["u"], f32)]
        return [word_for_categorical(record["draws"]["transition"], [THIRD] * 3, f32)]

    return Mapping(state=_s_and_lastaction, steps=lambda ref: 0, step_words=step_words,
                   reset_words=lambda record, f32: [word_for_categorical(0, [1.0], f32)],
                   obs=lambda ref: np.int64(ref), info={"prob": float})


def test_cliff_walking_has_no_time_limit(root):
    import cartsim
    for env in ("envs/cliff_walking.env", "envs/cliff_walking_slippery.env"):
        vec = cartsim.make_vec(root(env), 1, backend="interp")
        try:
            assert vec.batch.max_steps <= 0
        finally:
            vec.close()


# ---- Taxi-v4 (section 2) ----

def _taxi_start_index(s: int) -> int:
    """The position of start state s among the 300 the reset's distribution covers, in order."""
    destination, passenger, cell = s % 4, s // 4 % 5, s // 20
    return cell * 12 + passenger * 3 + destination - (destination > passenger)


def taxi_mapping(rainy: bool, rainy_probability: float = 0.8, fickle_probability: float = 0.3) -> Mapping:
    lateral = (1.0 - rainy_probability) / 2.0

    def state(ref):
        return dict(_s_and_lastaction(ref), fickle_step=bool(ref.get("fickle_step", False)))

    def step_words(record, f32):
        draws = record["draws"]
        if rainy and record["action"] <= 3:
            words = [word_for_categorical(draws["transition"], [rainy_probability, lateral, lateral], f32)]
        else:
            words = [word_for_uniform(draws["u"], f32)]
        if "new_destination" in draws:   # step draw 1: the index among the three other destinations
            new, old = int(draws["new_destination"]), record["state"]["s"] % 4
            words.append(word_for_randint(new - (new > old), 3))
        else:
            words.append(0)
        return words

    def reset_words(record, f32):
        start = _taxi_start_index(record["draws"]["start"])
        return [word_for_categorical(start, [1.0 / 300.0] * 300, f32),
                word_for_bernoulli(bool(record["state"]["fickle_step"]), fickle_probability, f32)]

    return Mapping(state=state, steps=lambda ref: int(ref.get("_elapsed_steps", 0)), step_words=step_words,
                   reset_words=reset_words, obs=lambda ref: np.int64(ref),
                   info={"prob": float, "action_mask": lambda ref: np.array(ref, dtype=np.int8)})


def test_taxi_info_has_gymnasiums_types(root):
    import cartsim
    vec = cartsim.make_vec(root("envs/taxi.env"), 3, backend="interp")
    try:
        _, info = vec.reset(seed=1)
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (3, 6)
        assert info["prob"].dtype == np.float64 and list(info["prob"]) == [1.0] * 3
        _, _, _, _, info = vec.step(np.array([4, 4, 4]))
        assert info["action_mask"].dtype == np.int8 and info["prob"].dtype == np.float64
    finally:
        vec.close()


# ---- Blackjack-v1 (section 4) ----

def _card_word(card: int) -> int:
    """The word whose randint(13) picks `card` from the deck 1..9, 10, 10, 10, 10."""
    return word_for_randint(min(card, 10) - 1, 13)


def _padded(hand, length):
    return np.array(list(hand) + [0] * (length - len(hand)), dtype=np.int64)


def blackjack_mapping() -> Mapping:
    def state(ref):
        return {"player": _padded(ref["player"], 22), "dealer": _padded(ref["dealer"], 12)}

    def step_words(record, f32):
        draws = record["draws"]
        hit = [_card_word(draws["card"])] if "card" in draws else [0]
        dealer = [_card_word(c) for c in draws.get("dealer_cards", [])]
        return hit + dealer + [0] * (10 - len(dealer))

    def reset_words(record, f32):
        return [_card_word(c) for c in record["draws"]["dealer"] + record["draws"]["player"]]

    return Mapping(state=state, steps=lambda ref: 0, step_words=step_words, reset_words=reset_words,
                   obs=lambda ref: tuple(np.int64(x) for x in ref))


# ---- every golden file: its steps and resets, each as Gymnasium's ----

def _toy(stem: str, env: str, mapping, steps: int, resets: int, params: dict = None) -> Golden:
    return Golden(stem, env, mapping, steps=steps, resets=resets, runs=RUNS, params=params, exact=False,
                  step_rtol=RTOL, reset_rtol=RTOL)


TAXI = "envs/taxi.env"
BLACKJACK = "envs/blackjack.env"
REPLAYS = [_toy("CliffWalking-v1", "envs/cliff_walking.env", lambda: cliff_walking_mapping(False), 301, 11),
           _toy("CliffWalkingSlippery-v1", "envs/cliff_walking_slippery.env", lambda: cliff_walking_mapping(True),
                301, 11),
           _toy("Taxi-v4", TAXI, lambda: taxi_mapping(False), 501, 31, {}),
           _toy("Taxi-v4_is_rainy=True", TAXI, lambda: taxi_mapping(True), 501, 31, {"is_rainy": True}),
           _toy("Taxi-v4_fickle_passenger=True", TAXI, lambda: taxi_mapping(False), 501, 31,
                {"fickle_passenger": True}),
           _toy("Taxi-v4_is_rainy=True_fickle_passenger=True", TAXI, lambda: taxi_mapping(True), 501, 31,
                {"is_rainy": True, "fickle_passenger": True}),
           _toy("Blackjack-v1", BLACKJACK, blackjack_mapping, 401, 301, {}),
           _toy("Blackjack-v1_sab=False", BLACKJACK, blackjack_mapping, 401, 301, {"sab": False}),
           _toy("Blackjack-v1_sab=False_natural=True", BLACKJACK, blackjack_mapping, 401, 301,
                {"sab": False, "natural": True})]


@pytest.mark.parametrize("row,kind,backend,dtype", golden_params(REPLAYS))
def test_replays_are_gymnasiums(row, kind, backend, dtype):
    check_replay(row, kind, backend, dtype)


# ---- from Python: ids, options, Gymnasium's checks, the state by name ----

TOY_IDS = ["FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v4", "CliffWalking-v1", "CliffWalkingSlippery-v1",
           "Blackjack-v1"]


def test_every_builtin_id_is_registered_and_makes_its_environment():
    import cartsim
    import gymnasium as gym
    assert set(TOY_IDS) | set(cartsim.GYMNASIUM_IDS) <= set(cartsim.ENV_IDS)
    for gym_id, name in cartsim.ENV_IDS.items():
        one = gym.make("cartsim/" + gym_id, backend="interp")
        vec = gym.make_vec("cartsim/" + gym_id, num_envs=3, backend="interp")
        try:
            assert one.unwrapped.batch.name == name and vec.batch.name == name and vec.num_envs == 3
            assert vec.batch.title == gym_id
        finally:
            one.close()
            vec.close()


def _episode(vec, steps=40):
    """Observations and rewards of `steps` steps from reset(seed=5) with a fixed action sequence."""
    obs, _ = vec.reset(seed=5)
    out = [np.array(obs)]
    for t in range(steps):
        obs, reward, _, _, _ = vec.step(np.full(vec.num_envs, t % vec.batch.n_actions))
        out += [np.array(obs), np.array(reward)]
    return out


@pytest.mark.parametrize("gym_id,options", [("FrozenLake-v1", {"is_slippery": False}),
                                            ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True}),
                                            ("Blackjack-v1", {"sab": False, "natural": True})])
def test_options_are_params_by_name(gym_id, options):
    import cartsim
    import gymnasium as gym
    by_keyword = cartsim.make_vec(gym_id, 16, backend="interp", **options)
    by_params = cartsim.make_vec(gym_id, 16, backend="interp", params=options)
    registered = gym.make_vec("cartsim/" + gym_id, num_envs=16, backend="interp", **options)
    default = cartsim.make_vec(gym_id, 16, backend="interp")
    try:
        want = _episode(by_params)
        for vec in (by_keyword, registered):
            assert all(np.array_equal(a, b) for a, b in zip(_episode(vec), want))
        assert not all(np.array_equal(a, b) for a, b in zip(_episode(default), want))
    finally:
        for vec in (by_keyword, by_params, registered, default):
            vec.close()


def test_a_misspelled_option_names_both_kinds_of_keyword():
    import cartsim
    import gymnasium as gym
    with pytest.raises(TypeError, match=r"^cartsim\.make_vec\(\) got an unexpected keyword argument 'is_slipery' "
                                        r"\(did you mean 'is_slippery'\?\); its keywords: .*\bseed\b.*; "
                                        r"FrozenLake-v1's params: is_slippery, success_rate$"):
        cartsim.make_vec("FrozenLake-v1", 2, backend="interp", is_slipery=False)
    with pytest.raises(TypeError, match=r"^cartsim\.make\(\) got an unexpected keyword argument 'rainy' "
                                        r"\(did you mean 'is_rainy'\?\).*Taxi-v4's params: is_rainy, "):
        cartsim.make("Taxi-v4", backend="interp", rainy=True)
    with pytest.raises(TypeError, match=r"^cartsim\.VectorEnv\(\) got an unexpected keyword argument 'nat' "):
        gym.make_vec("cartsim/Blackjack-v1", num_envs=2, backend="interp", nat=True)
    with pytest.raises(TypeError, match=r"^cartsim\.make_vec\(\): param is_slippery must be a number"):
        cartsim.make_vec("FrozenLake-v1", 2, backend="interp", is_slippery="no")
    with pytest.raises(TypeError, match=r"^cartsim\.make_vec\(\) got param 'sab' twice"):
        cartsim.make_vec("Blackjack-v1", 2, backend="interp", sab=False, params={"sab": True})


def test_the_state_goes_by_name_and_back():
    import cartsim
    vec = cartsim.make_vec("Blackjack-v1", 4, backend="interp")
    try:
        vec.reset(seed=2)
        state = vec.get_state()
        assert state["player"].shape == (4, 22) and state["dealer"].shape == (4, 12)
        state["player"][:] = 0
        state["player"][:, :2] = [1, 10]                  # a natural, sticking: wins 1.0 under sab
        state["dealer"][:] = 0
        state["dealer"][:, :3] = [10, 6, 10]              # the dealer's 26: bust without drawing
        vec.set_state(state)
        obs, reward, terminated, _, _ = vec.step(np.zeros(4, dtype=np.int64))
        assert list(reward) == [1.0] * 4 and terminated.all()
        assert list(obs[0]) == [21] * 4 and list(obs[1]) == [10] * 4 and list(obs[2]) == [1] * 4
    finally:
        vec.close()


# ---- cartsim's own draws (Philox, no replay) against the reference's outcome counts ----
# (tests/golden_suite/STEM.dist.json: 10,000 of Gymnasium's own samples per entry)

SAMPLES = 10000
P_MIN = 1e-4          # a fixed seed: the same statistic every run; generous, and a wrong distribution is far below


def _reference_counts(stem: str):
    return golden_dist.load(stem)["counts"]


def _upper_gamma_regularized(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a): the series below a + 1, Lentz's continued fraction above."""
    import math
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        for n in range(1, 1000):
            term *= x / (a + n)
            total += term
            if term < total * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    b, c, d = x + 1 - a, 1e300, 1.0 / (x + 1 - a)
    h = d
    for n in range(1, 1000):
        an = -n * (n - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def same_distribution_p(ours: dict, reference: dict) -> float:
    """The p-value of Pearson's chi-square test that two samples of counts ({outcome: count})
    come from one distribution (homogeneity, outcomes expected fewer than 5 times pooled)."""
    keys = sorted(set(ours) | set(reference), key=str)
    n1, n2 = sum(ours.values()), sum(reference.values())
    total = n1 + n2
    bins, pooled = [], [0, 0]
    for k in keys:
        a, b = ours.get(k, 0), reference.get(k, 0)
        if (a + b) * min(n1, n2) / total < 5:
            pooled[0] += a
            pooled[1] += b
        else:
            bins.append((a, b))
    if sum(pooled):
        bins.append(tuple(pooled))
    if len(bins) < 2:
        return 1.0
    stat = 0.0
    for a, b in bins:
        for observed, n in ((a, n1), (b, n2)):
            expected = n * (a + b) / total
            stat += (observed - expected) ** 2 / expected
    return _upper_gamma_regularized((len(bins) - 1) / 2.0, stat / 2.0)


def _counts(values) -> dict:
    out = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return out


def _stepped_from(env, state: dict, action: int, params=None, seed=7):
    """The state of SAMPLES environments set to `state` and stepped once with `action`
    (no auto-reset: a step that ends an episode shows where it ended)."""
    import cartsim
    batch = cartsim.Batch(env, SAMPLES, backend="interp", dtype="float64", params=params or {}, autoreset="disabled")
    try:
        batch.reset(seed)
        batch.set_state({k: np.full((SAMPLES,) + np.shape(v), v) for k, v in state.items()})
        batch.step(np.full(SAMPLES, action, dtype=np.int32))
        return batch.get_state()
    finally:
        batch.close()


def _reset_states(env, params=None, seed=11):
    import cartsim
    vec = cartsim.make_vec(env, SAMPLES, backend="interp", dtype="float64", params=params or {})
    try:
        obs, info = vec.reset(seed=seed)
        return vec.get_state(), obs
    finally:
        vec.close()


def _direction_index(s: int, s_next: int, action: int, ncol: int, order) -> int:
    """Which entry of P[s][a] (0: (a-1)%4, 1: a, 2: (a+1)%4) moved s, an inner cell, to s_next;
    order: the (drow, dcol) of actions 0-3."""
    row, col = divmod(s, ncol)
    for k in range(3):
        dr, dc = order[(action - 1 + k) % 4]
        if (row + dr) * ncol + col + dc == s_next:
            return k
    raise AssertionError("s %d -> %d is no move of action %d" % (s, s_next, action))


FROZEN_MOVES = [(0, -1), (1, 0), (0, 1), (-1, 0)]      # left, down, right, up
CLIFF_MOVES = [(-1, 0), (0, 1), (1, 0), (0, -1)]       # up, right, down, left
SLIPS = [("FrozenLake-v1", "envs/frozen_lake.env", 4, FROZEN_MOVES, {}),
         ("FrozenLake8x8-v1", "envs/frozen_lake_8x8.env", 8, FROZEN_MOVES, {}),
         ("CliffWalkingSlippery-v1", "envs/cliff_walking_slippery.env", 12, CLIFF_MOVES, {})]


def _slip_counts(env, ncol, moves, s, action, params):
    state = _stepped_from(env, {"s": s, "lastaction": -1}, action, params)
    return _counts(_direction_index(s, int(t), action, ncol, moves) for t in state["s"])


@pytest.mark.parametrize("stem,env,ncol,moves,params", SLIPS)
def test_slips_are_distributed_as_gymnasiums(stem, env, ncol, moves, params, root):
    reference = _reference_counts(stem)
    s = 13 if ncol == 12 else 9
    for a in range(4):
        ours = _slip_counts(root(env), ncol, moves, s, a, params)
        p = same_distribution_p(ours, reference["step.transition[a=%d]" % a])
        assert p > P_MIN, "%s action %d: p = %g" % (stem, a, p)
    state, _ = _reset_states(root(env))
    assert _counts(state["s"]) == {start: SAMPLES for start in reference["reset.s"]}      # the one start


def test_the_distribution_test_fails_on_a_wrong_distribution(root):
    """success_rate 0.5 instead of 1/3, and a deck whose 10 is as likely as any other card: rejected."""
    reference = _reference_counts("FrozenLake-v1")
    ours = _slip_counts(root("envs/frozen_lake.env"), 4, FROZEN_MOVES, 9, 1, {"success_rate": 0.5})
    assert same_distribution_p(ours, reference["step.transition[a=1]"]) < 1e-9
    cards = {str(c): 1000 for c in range(1, 11)}
    assert same_distribution_p(cards, _reference_counts("Blackjack-v1")["step.card"]) < 1e-9
    assert same_distribution_p(reference["step.transition[a=1]"], reference["step.transition[a=1]"]) == 1.0


TAXI_DIST = ["Taxi-v4", "Taxi-v4_is_rainy=True", "Taxi-v4_fickle_passenger=True",
             "Taxi-v4_is_rainy=True_fickle_passenger=True"]


@pytest.mark.parametrize("stem", TAXI_DIST)
def test_taxi_draws_are_distributed_as_gymnasiums(stem, root):
    reference = _reference_counts(stem)
    params = {"is_rainy": "is_rainy=True" in stem, "fickle_passenger": "fickle_passenger=True" in stem}
    env = root("envs/taxi.env")
    state, _ = _reset_states(env, params)
    p = same_distribution_p(_counts(state["s"]), reference["reset.s"])
    assert p > P_MIN and len(_counts(state["s"])) == 300, "reset.s: p = %g" % p
    if "reset.fickle_step" in reference:
        p = same_distribution_p(_counts(bool(b) for b in state["fickle_step"]), reference["reset.fickle_step"])
        assert p > P_MIN, "reset.fickle_step: p = %g" % p
    for a in range(4):
        after = _stepped_from(env, {"s": 241, "lastaction": -1, "fickle_step": False}, a, params)
        p = same_distribution_p(_counts(after["s"]), reference["step.next_s[a=%d]" % a])
        assert p > P_MIN, "step.next_s[a=%d]: p = %g" % (a, p)
    if "step.destination" in reference:
        after = _stepped_from(env, {"s": 257, "lastaction": -1, "fickle_step": True}, 0, params)
        p = same_distribution_p(_counts(int(s) % 4 for s in after["s"]), reference["step.destination"])
        assert p > P_MIN, "step.destination: p = %g" % p


def _hand_value(hand) -> int:
    total = int(sum(hand))
    return total + 10 if 1 in hand and total + 10 <= 21 else total


BLACKJACK_DIST = ["Blackjack-v1", "Blackjack-v1_sab=False", "Blackjack-v1_sab=False_natural=True"]


@pytest.mark.parametrize("stem", BLACKJACK_DIST)
def test_blackjack_cards_are_distributed_as_gymnasiums(stem, root):
    reference = _reference_counts(stem)
    params = {"sab": "sab=False" not in stem, "natural": "natural=True" in stem}
    env = root("envs/blackjack.env")
    state, obs = _reset_states(env, params)
    player, dealer = state["player"], state["dealer"]
    ours = {"reset.dealer_card": _counts(dealer[:, :2].ravel()),
            "reset.player_card": _counts(player[:, :2].ravel()),
            "reset.natural": _counts(bool(sorted(h[:2]) == [1, 10]) for h in player),
            "reset.obs": _counts([int(a), int(b), int(c)] for a, b, c in zip(*obs))}
    hand = lambda cards, n: np.array(cards + [0] * (n - len(cards)))
    after = _stepped_from(env, {"player": hand([2, 2], 22), "dealer": hand([10, 2], 12)}, 1, params)
    ours["step.card"] = _counts(after["player"][:, 2])
    after = _stepped_from(env, {"player": hand([10, 9], 22), "dealer": hand([10, 2], 12)}, 0, params)
    ours["step.dealer_final_sum[dealer 10,2]"] = _counts(_hand_value(list(d)) for d in after["dealer"])
    for key, counts in ours.items():
        p = same_distribution_p(counts, reference[key])
        assert p > P_MIN, "%s %s: p = %g" % (stem, key, p)


# ---- pictures (each file's draw block) ----

def _frame(env, state: dict):
    """The frame of one environment of `env` in `state`, (height, width, 3) uint8."""
    import cartsim
    vec = cartsim.make_vec(env, 1, backend="interp", render_mode="rgb_array")
    try:
        vec.reset(seed=0)
        vec.set_state({k: np.array([v]) for k, v in state.items()})
        return vec.render()[0].copy()
    finally:
        vec.close()


def _colour(frame, x, y):
    return tuple(int(c) for c in frame[y, x])


def test_frozen_lake_8x8_draws_its_map_and_the_elf(root):
    frame = _frame(root("envs/frozen_lake_8x8.env"), {"s": 10, "lastaction": -1})   # row 1, column 2
    assert frame.shape == (512, 512, 3)                  # Gymnasium's window: 64 pixels a cell, at most 512
    ice, hole, goal, elf = (190, 225, 245), (30, 50, 100), (250, 200, 40), (200, 60, 60)
    assert _colour(frame, 32, 32) == ice
    assert _colour(frame, 3 * 64 + 32, 2 * 64 + 32) == hole        # the hole at row 2, column 3
    assert _colour(frame, 7 * 64 + 32, 7 * 64 + 32) == goal
    assert _colour(frame, 2 * 64 + 32, 1 * 64 + 32) == elf
    assert _colour(frame, 2 * 64 + 4, 1 * 64 + 4) == ice


@pytest.mark.parametrize("env", ["envs/cliff_walking.env", "envs/cliff_walking_slippery.env"])
def test_cliff_walking_draws_the_cliff_and_the_elf(env, root):
    frame = _frame(root(env), {"s": 13, "lastaction": -1})                        # row 1, column 1
    assert frame.shape == (240, 720, 3)                  # Gymnasium's window: 60 pixels a cell
    grass, cliff, start, goal, elf = (150, 200, 110), (70, 60, 55), (200, 170, 120), (250, 200, 40), (200, 60, 60)
    assert _colour(frame, 30, 30) == grass
    assert _colour(frame, 5, 185) == start and _colour(frame, 715, 235) == goal
    assert all(_colour(frame, 60 * c + 30, 210) == cliff for c in range(1, 11))
    assert _colour(frame, 90, 90) == elf and _colour(frame, 30, 210) == start


def test_taxi_draws_the_stops_the_taxi_the_passenger_and_the_destination(root):
    taxi = root("envs/taxi.env")
    encode = lambda row, col, passenger, destination: ((row * 5 + col) * 5 + passenger) * 4 + destination
    waiting = _frame(taxi, {"s": encode(2, 2, 0, 1), "lastaction": -1, "fickle_step": False})
    riding = _frame(taxi, {"s": encode(2, 2, 4, 1), "lastaction": -1, "fickle_step": False})
    assert waiting.shape == (500, 500, 3)
    assert _colour(waiting, 10, 90) == (255, 0, 0) and _colour(waiting, 490, 90) == (0, 255, 0)        # R, G
    assert _colour(waiting, 10, 490) == (255, 255, 0) and _colour(waiting, 390, 490) == (0, 0, 255)    # Y, B
    assert _colour(waiting, 70, 30) == (30, 30, 90) and _colour(riding, 70, 30) == (255, 0, 0)          # at R / aboard
    assert _colour(waiting, 250, 252) == (240, 190, 20) and _colour(riding, 250, 252) == (40, 170, 60)  # the taxi
    assert _colour(waiting, 415, 15) == (120, 0, 120)                     # the destination, G
    assert _colour(waiting, 200, 50) == (60, 60, 60) and _colour(waiting, 300, 150) == (225, 225, 215)  # fences


def test_blackjack_draws_a_card_per_card_of_the_hand(root):
    hand = lambda cards, n: np.array(cards + [0] * (n - len(cards)))
    two = _frame(root("envs/blackjack.env"), {"player": hand([1, 10], 22), "dealer": hand([7, 5], 12)})
    three = _frame(root("envs/blackjack.env"), {"player": hand([1, 5, 6], 22), "dealer": hand([7, 5], 12)})
    assert two.shape == (500, 600, 3)
    white, table, back = (255, 255, 255), (7, 99, 36), (150, 30, 40)
    cards = lambda frame: [_colour(frame, 60 + 56 * k, 380) == white for k in range(4)]
    assert cards(two) == [True, True, False, False] and cards(three) == [True, True, True, False]
    assert _colour(two, 10, 10) == table and _colour(two, 200, 160) == back
    assert _colour(two, 100, 160) == white                # the dealer's shown card
