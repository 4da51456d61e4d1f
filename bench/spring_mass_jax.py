"""SpringMass-v0 (envs/spring_mass.env, the README's custom example) written as
gymnax writes its classic-control environments (flax struct dataclasses for the
state and parameters, step_env/reset_env/get_obs/is_terminal, the time limit in
is_terminal), so that bench/peers.py's gymnax worker can run it: gymnax has no
such environment. Same physics as the .env file: a cart on a damped spring
pushed by a clipped force, semi-implicit Euler, the episode ends when |x| leaves
the track (reward -100) or after 200 steps.
"""

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from gymnax.environments import environment, spaces


@struct.dataclass
class EnvState(environment.EnvState):
    x: jax.Array
    v: jax.Array
    time: int


@struct.dataclass
class EnvParams(environment.EnvParams):
    mass: float = 1.0
    stiffness: float = 4.0
    damping: float = 0.2
    max_force: float = 1.0
    dt: float = 0.05
    track: float = 2.0
    max_steps_in_episode: int = 200


class SpringMass(environment.Environment[EnvState, EnvParams]):
    """JAX SpringMass-v0, gymnax-style."""

    def __init__(self) -> None:
        super().__init__()
        self.obs_shape = (2,)

    @property
    def default_params(self) -> EnvParams:
        return EnvParams()

    def step_env(
        self,
        key: jax.Array,
        state: EnvState,
        action: int | float | jax.Array,
        params: EnvParams,
    ) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[Any, Any]]:
        """One semi-implicit Euler step of the spring, damper and force."""
        f = jnp.clip(action, -params.max_force, params.max_force).squeeze()
        spring = -params.stiffness * state.x - params.damping * state.v
        v = state.v + params.dt * ((spring + f) / params.mass)
        x = state.x + params.dt * v
        cost = x**2 + 0.1 * v**2 + 0.001 * f**2
        reward = jnp.where(jnp.abs(x) > params.track, -100.0, -cost)
        state = EnvState(x=x, v=v, time=state.time + 1)
        done = self.is_terminal(state, params)
        return (
            jax.lax.stop_gradient(self.get_obs(state)),
            jax.lax.stop_gradient(state),
            reward,
            done,
            {"discount": self.discount(state, params)},
        )

    def reset_env(self, key: jax.Array, params: EnvParams) -> tuple[jax.Array, EnvState]:
        """x uniform in [-1, 1), v uniform in [-omega, omega) halved."""
        omega = jnp.sqrt(params.stiffness / params.mass)
        high = jnp.array([1.0, omega])
        x, v = jax.random.uniform(key, shape=(2,), minval=-high, maxval=high)
        state = EnvState(x=x, v=v * 0.5, time=0)
        return self.get_obs(state), state

    def get_obs(self, state: EnvState, params: EnvParams | None = None, key: jax.Array | None = None) -> jax.Array:
        return jnp.array([state.x, state.v])

    def is_terminal(self, state: EnvState, params: EnvParams) -> jax.Array:
        """Off the track, or the time limit."""
        return jnp.logical_or(jnp.abs(state.x) > params.track, state.time >= params.max_steps_in_episode)

    @property
    def name(self) -> str:
        return "SpringMass-v0"

    @property
    def num_actions(self) -> int:
        return 1

    def action_space(self, params: EnvParams | None = None) -> spaces.Box:
        """The force, in [-max_force, max_force]."""
        if params is None:
            params = self.default_params
        return spaces.Box(low=-params.max_force, high=params.max_force, shape=(1,), dtype=jnp.float32)

    def observation_space(self, params: EnvParams) -> spaces.Box:
        """x and v; |x| beyond the track ends the episode, v is unbounded."""
        big = jnp.finfo(jnp.float32).max
        high = jnp.array([params.track, big], dtype=jnp.float32)
        return spaces.Box(-high, high, shape=(2,), dtype=jnp.float32)
