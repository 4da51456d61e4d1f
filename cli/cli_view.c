/* `cartsim view`: the SDL2 window (view/view.c). `cartsim render`: frames
 * without a display, as numbered PNGs in a directory or as a GIF/MP4 through
 * ffmpeg. Both play every policy `run` accepts, compiled into the step and
 * run one step at a time (cs_env_rollout); `human` (view only) drives the
 * selected environment with the arrow keys. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "render/render.h"
#include "view/view.h"

void cli_view_defaults(cli_args *a)
{
    a->cfg.env = "cartpole";
    a->cfg.num_envs = 16;
    a->seed = 0;
    a->policy = "random";
}

/* CARTSIM_VIEW_SCRIPT replaces the person at the keyboard (render/render.h
 * describes the commands): tests drive the viewer with it. */
static cs_status set_policy_weights(cs_env *env, void *ctx, char *err, size_t err_size)
{
    return cli_policy_set_weights(env, ctx, err, err_size);
}

/* --policy human is the viewer's own; anything else is what `run` takes. */
static bool is_human(const char *policy) { return policy && strcmp(policy, "human") == 0; }

int cli_view(cli_args *a)
{
    char err[RENDER_ERROR_SIZE] = "";
    cs_status s;
    cli_policy pol;
    memset(&pol, 0, sizeof pol);
    if (!is_human(a->policy)) {
        int prc = cli_policy_prepare(a, &pol);
        if (prc)
            return prc;
    }
    if (a->out) {
        int rc = 0;
        if (render_sink_is_video(a->out))
            rc = cli_error(CLI_EXIT_USAGE, "--out: view saves screenshots and recordings into a directory, not '%s'",
                           a->out);
        else if (render_sink_check(a->out, err, sizeof err) != CS_OK)
            rc = cli_error(CLI_EXIT_USAGE, "--out: %s", err);
        if (rc) {
            cli_policy_free(&pol);
            return rc;
        }
    }
    const char *script = getenv("CARTSIM_VIEW_SCRIPT");
    view_options opt = {
        .policy = a->policy,
        .prepare = set_policy_weights,
        .prepare_ctx = &pol,
        .seed = a->seed,
        .out_dir = a->out ? a->out : ".",
        .script = script && *script ? script : NULL,
    };
    view_report rep;
    s = view_run(&a->cfg, &opt, &rep, err, sizeof err);
    cli_policy_free(&pol);
    if (s != CS_OK)
        return s == CS_ERR_ARGUMENT ? cli_error(CLI_EXIT_USAGE, "%s", err) : cli_lib_error(s, err);

    cli_buf out = {0};
    cli_buf_printf(&out, "frames %" PRId64 ", steps %" PRId64 " (%" PRId64 " env-steps), episodes %" PRId64 "\n",
                   rep.frames, rep.steps, rep.env_steps, rep.episodes);
    if (rep.screenshots)
        cli_buf_printf(&out, "screenshots %" PRId64 ", the last %s\n", rep.screenshots, rep.last_screenshot);
    if (rep.last_recording[0])
        cli_buf_printf(&out, "recorded %" PRId64 " frames, the last recording in %s\n", rep.recorded_frames,
                       rep.last_recording);
    int rc = cli_buf_print(&out);
    cli_buf_free(&out);
    /* A screenshot or recording that failed did not stop the viewer, but
     * the run did not do everything it was asked to. */
    if (rc == CLI_EXIT_OK && rep.warning[0])
        rc = cli_error(CLI_EXIT_FAIL, "%s", rep.warning);
    return rc;
}

void cli_render_defaults(cli_args *a)
{
    a->cfg.env = "cartpole";
    a->cfg.num_envs = 1;
    a->steps = 200;
    a->seed = 0;
    a->policy = "random";
}

typedef struct {
    cs_env *env;
    cs_renderer *renderer;
    cli_policy policy;
    render_sink *sink;
    uint8_t *rgb;
} render_job;

static void job_close(render_job *j)
{
    render_sink_close(j->sink, NULL, 0);
    cli_policy_free(&j->policy);
    cs_renderer_close(j->renderer);
    cs_env_close(j->env);
    free(j->rgb);
}

static int job_fail(render_job *j, int status)
{
    job_close(j);
    return status;
}

/* Frame 0 shows the reset state; frame t the state after step t, stepped
 * with the configured policy as `cartsim run` steps (one-step rollouts give
 * the states of one long rollout). */
int cli_render(cli_args *a)
{
    char err[RENDER_ERROR_SIZE] = "";
    cs_status s;
    if (!a->out)
        return cli_error(CLI_EXIT_USAGE, "render needs --out DIR|FILE.gif|FILE.mp4 (try cartsim render --help)");
    if (is_human(a->policy))
        return cli_error(CLI_EXIT_USAGE, "--policy human needs a person at the keyboard: use cartsim view");
    if (a->steps > INT64_MAX / a->cfg.num_envs)
        return cli_error(CLI_EXIT_USAGE, "--envs %" PRId64 " x --steps %" PRId64 " is beyond 2^63 env-steps",
                         a->cfg.num_envs, a->steps);
    /* Before anything is compiled: is there somewhere to put the frames? */
    if ((s = render_sink_check(a->out, err, sizeof err)) != CS_OK)
        return cli_error(CLI_EXIT_USAGE, "--out: %s", err);

    render_job j;
    memset(&j, 0, sizeof j);
    int prc = cli_policy_prepare(a, &j.policy);
    if (prc)
        return prc;
    if ((s = cs_env_open(&a->cfg, &j.env)) != CS_OK)
        return job_fail(&j, cli_lib_error(s, j.env ? cs_env_error(j.env) : "out of memory"));
    cli_env_notice(&a->cfg, j.env);
    cs_env_info info;
    if ((s = cs_env_get_info(j.env, &info)) != CS_OK)
        return job_fail(&j, cli_lib_error(s, cs_env_error(j.env)));
    if ((prc = cli_policy_apply(j.env, &j.policy)) != 0)
        return job_fail(&j, prc);
    if ((s = cs_env_reset(j.env, a->seed)) != CS_OK)
        return job_fail(&j, cli_lib_error(s, cs_env_error(j.env)));
    if ((s = cs_renderer_open(j.env, &j.renderer)) != CS_OK)
        return job_fail(&j, cli_lib_error(s, j.renderer ? cs_renderer_error(j.renderer) : "out of memory"));
    int count = (int)info.num_envs, w, h;
    if ((s = cs_render_rgb(j.renderer, 0, count, 0, NULL, 0, &w, &h)) != CS_OK)
        return job_fail(&j, cli_lib_error(s, cs_renderer_error(j.renderer)));
    size_t rgb_size = (size_t)w * (size_t)h * 3;
    j.rgb = malloc(rgb_size);
    if (!j.rgb)
        return job_fail(&j, cli_error(CLI_EXIT_FAIL, "out of memory for %dx%d frames", w, h));
    if ((s = render_sink_open(a->out, w, h, cs_renderer_fps(j.renderer), &j.sink)) != CS_OK)
        return job_fail(&j, cli_lib_error(s, render_sink_error(j.sink)));

    for (int64_t t = 0; t <= a->steps && !cli_stop_signal; t++) {   /* Ctrl-C: keep the frames written */
        if (t > 0 && (s = cs_env_rollout(j.env, 1, NULL)) != CS_OK)
            return job_fail(&j, cli_lib_error(s, cs_env_error(j.env)));
        if ((s = cs_render_rgb(j.renderer, 0, count, 0, j.rgb, rgb_size, &w, &h)) != CS_OK)
            return job_fail(&j, cli_lib_error(s, cs_renderer_error(j.renderer)));
        if ((s = render_sink_write(j.sink, j.rgb)) != CS_OK)
            break;  /* the sink keeps the message; closing reports it */
    }
    int64_t frames = render_sink_frames(j.sink);
    s = render_sink_close(j.sink, err, sizeof err);
    j.sink = NULL;
    if (s != CS_OK)
        return job_fail(&j, cli_lib_error(s, err));
    job_close(&j);
    char line[1200];
    int n = snprintf(line, sizeof line, "wrote %" PRId64 " frames of %dx%d to %s\n", frames, w, h, a->out);
    if (!cli_stdout_write(line, n > 0 && (size_t)n < sizeof line ? (size_t)n : strlen(line)))
        return CLI_EXIT_FAIL;
    if (cli_stop_signal)
        return cli_error(128 + cli_stop_signal, "interrupted after %" PRId64 " of %" PRId64 " frames: those are written",
                         frames, a->steps + 1);
    return CLI_EXIT_OK;
}
