"""Gymnasium 1.4's toy text beyond FrozenLake (test_suite_frozen_lake.py) against its own
episodes (tests/golden_suite, docs/suite.md sections 2-4): every golden step and reset of
every option file replayed through the shipped .env files with the reference's random
outcomes, f64 bit-exact."""
import numpy as np
import pytest

from golden_replay import (Mapping, replay_resets, replay_steps, word_for_bernoulli, word_for_categorical,
                           word_for_randint, word_for_uniform)

BACKENDS = ["interp"]
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


CLIFF = [("CliffWalking-v1", "envs/cliff_walking.env", False),
         ("CliffWalkingSlippery-v1", "envs/cliff_walking_slippery.env", True)]


@pytest.mark.parametrize("stem,env,slippery", CLIFF)
@pytest.mark.parametrize("backend", BACKENDS)
def test_cliff_walking_steps_are_gymnasiums(stem, env, slippery, backend, root):
    assert replay_steps(root(env), stem, cliff_walking_mapping(slippery), backend=backend) > 300


@pytest.mark.parametrize("stem,env,slippery", CLIFF)
@pytest.mark.parametrize("backend", BACKENDS)
def test_cliff_walking_resets_are_gymnasiums(stem, env, slippery, backend, root):
    assert replay_resets(root(env), stem, cliff_walking_mapping(slippery), backend=backend) > 10


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


TAXI = [("Taxi-v4", {}),
        ("Taxi-v4_is_rainy=True", {"is_rainy": True}),
        ("Taxi-v4_fickle_passenger=True", {"fickle_passenger": True}),
        ("Taxi-v4_is_rainy=True_fickle_passenger=True", {"is_rainy": True, "fickle_passenger": True})]


@pytest.mark.parametrize("stem,params", TAXI)
@pytest.mark.parametrize("backend", BACKENDS)
def test_taxi_steps_are_gymnasiums(stem, params, backend, root):
    m = taxi_mapping(params.get("is_rainy", False))
    assert replay_steps(root("envs/taxi.env"), stem, m, params, backend=backend) > 500


@pytest.mark.parametrize("stem,params", TAXI)
@pytest.mark.parametrize("backend", BACKENDS)
def test_taxi_resets_are_gymnasiums(stem, params, backend, root):
    m = taxi_mapping(params.get("is_rainy", False))
    assert replay_resets(root("envs/taxi.env"), stem, m, params, backend=backend) > 30


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


BLACKJACK = [("Blackjack-v1", {}),
             ("Blackjack-v1_sab=False", {"sab": False}),
             ("Blackjack-v1_sab=False_natural=True", {"sab": False, "natural": True})]


@pytest.mark.parametrize("stem,params", BLACKJACK)
@pytest.mark.parametrize("backend", BACKENDS)
def test_blackjack_steps_are_gymnasiums(stem, params, backend, root):
    assert replay_steps(root("envs/blackjack.env"), stem, blackjack_mapping(), params, backend=backend) > 400


@pytest.mark.parametrize("stem,params", BLACKJACK)
@pytest.mark.parametrize("backend", BACKENDS)
def test_blackjack_resets_are_gymnasiums(stem, params, backend, root):
    assert replay_resets(root("envs/blackjack.env"), stem, blackjack_mapping(), params, backend=backend) > 300


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


@pytest.mark.parametrize("gym_id", TOY_IDS)
def test_check_env_passes(gym_id):
    import cartsim
    from gymnasium.utils.env_checker import check_env
    env = cartsim.make(gym_id, backend="interp")
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


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
