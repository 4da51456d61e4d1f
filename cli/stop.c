/* Ctrl-C and SIGTERM for every subcommand: the first sets cli_stop_signal,
 * which the library reads as cs_config.interrupt (a compile in progress stops
 * and opening fails with CS_ERR_INTERRUPTED) and which long loops poll (run's
 * chunks, train's generations, render's frames, view's window); a second
 * signal ends the program as if there were no handler. */
#include <signal.h>
#include <string.h>

#include "cli.h"

volatile sig_atomic_t cli_stop_signal;

static void on_stop_signal(int sig)
{
    if (cli_stop_signal) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    cli_stop_signal = sig;
}

void cli_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
