/* The example at the top of sim/cartsim.h, verbatim: the tests build and run it. */
#include <cartsim.h>
#include <stdio.h>

int main(void)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";              // a name from envs/, or a path to a .env file
    cfg.num_envs = 8;

    cs_env *env;
    if (cs_env_open(&cfg, &env) != CS_OK) {
        fprintf(stderr, "cartsim: %s\n", env ? cs_env_error(env) : "out of memory");
        cs_env_close(env);
        return 1;
    }
    cs_env_reset(env, 42);
    int32_t actions[8];
    double total = 0;
    for (int t = 0; t < 100; t++) {
        const float *obs = cs_env_obs(env);        // [obs_dim][num_envs]
        for (int i = 0; i < 8; i++)
            actions[i] = obs[2 * 8 + i] > 0;       // push toward the pole's lean
        cs_env_step_discrete(env, actions);
        for (int i = 0; i < 8; i++)
            total += cs_env_rewards(env)[i];
    }
    cs_rollout_stats stats;                      // 10,000 fused steps, random policy
    cs_env_rollout(env, 10000, &stats);
    printf("return %.0f, %lld episodes\n", total, (long long)stats.episodes);
    cs_env_close(env);
    return 0;
}
