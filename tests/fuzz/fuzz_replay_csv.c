/* libFuzzer target: the trajectory CSV reader of `cartsim replay` (make fuzz).
 *
 * Each input is a whole file, read as the reader reads one from disk, then
 * checked against two environments: CartPole's (discrete action, four state
 * columns) and a box-action one, so both branches of the action checks run.
 * The reader reports bad input on stderr: libFuzzer runs it with
 * -close_fd_mask=2. */
#include <math.h>
#include <stdint.h>
#include <stddef.h>

#include "cli.h"

/* cli_args.c's help printer names the subcommand table of main.c, which
 * holds main() and so stays out of a fuzzer; an empty table stands in. */
const cli_command cli_commands[] = {{.name = NULL}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const cartpole_state[] = {"x", "x_dot", "theta", "theta_dot"};
    static const char *const pendulum_state[] = {"theta", "theta_dot"};
    static const double low[] = {-2.0}, high[] = {2.0};
    const cs_env_info envs[2] = {
        {.name = "cartpole", .state_dim = 4, .obs_dim = 4, .discrete = true, .n_actions = 2, .action_dim = 1,
         .state_names = cartpole_state, .reward_threshold = NAN},
        {.name = "pendulum", .state_dim = 2, .obs_dim = 3, .discrete = false, .action_dim = 1,
         .action_low = low, .action_high = high, .state_names = pendulum_state, .reward_threshold = NAN},
    };
    const char *text = (const char *)data;
    if (cli_replay_check(text, size, NULL) == 0) {
        cli_replay_check(text, size, &envs[0]);
        cli_replay_check(text, size, &envs[1]);
    }
    return 0;
}
