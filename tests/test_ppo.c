/* PPO (train/ppo.c, train/mlp.c): the dense layers' backward pass is the
 * gradient of their forward pass; GAE is the definition's sums; one update
 * on a fixed batch is PyTorch's running CleanRL's loss (tests/
 * ppo_reference.py, where a Python with torch is found: skipped loudly
 * elsewhere); training solves CartPole within a step budget; the same seed
 * gives the same weights, bit for bit, on 1 and 3 threads and on the
 * interpreter; a loss gone NaN stops training and keeps the last policy;
 * bad settings are refused by name. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train.h"

static uint64_t mix_state = 0x1234567;

static double uniform(void)   /* [0, 1) */
{
    uint64_t z = (mix_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* sum_o sum_r c[o][r] y[o][r] for the network's outputs y */
static double weighted_outputs(const cs_mlp *m, const float *params, float **act, const float *c, size_t rows)
{
    cs_mlp_forward(m, params, act, rows);
    double sum = 0;
    for (unsigned o = 0; o < m->width[m->n_layers]; o++)
        for (size_t r = 0; r < rows; r++)
            sum += (double)c[o * rows + r] * act[m->n_layers][o * rows + r];
    return sum;
}

Test(ppo, dense_backward_is_the_gradient_of_the_forward_pass)
{
    cs_agent a;
    char err[256];
    cr_assert_eq(cs_agent_parse("mlp:5x3", &a, err, sizeof err), 0);
    cs_mlp m;
    cs_mlp_shape(&m, &a, 4, 2, 7);   /* parameters from index 7 on */
    cr_assert_eq(m.count, (4 + 1) * 5 + (5 + 1) * 3 + (3 + 1) * 2);
    size_t rows = 32;
    float *params = calloc(7 + m.count, sizeof *params), *grad = calloc(7 + m.count, sizeof *grad);
    float *act[4], *c = malloc(2 * rows * sizeof *c), *delta = malloc(5 * rows * sizeof *delta);
    float *scratch = malloc(5 * rows * sizeof *scratch);
    for (unsigned l = 0; l <= m.n_layers; l++)
        act[l] = malloc(m.width[l] * rows * sizeof(float));
    for (unsigned k = 0; k < m.count; k++)
        params[7 + k] = (float)(uniform() - 0.5);
    for (size_t k = 0; k < 4 * rows; k++)
        act[0][k] = (float)(2 * uniform() - 1);
    for (size_t k = 0; k < 2 * rows; k++)
        c[k] = (float)(uniform() - 0.5);
    cs_mlp_forward(&m, params, act, rows);
    memcpy(delta, c, 2 * rows * sizeof *c);
    cs_mlp_backward(&m, params, act, delta, scratch, rows, grad);
    for (unsigned k = 0; k < 7; k++)
        cr_assert_eq(grad[k], 0.0f, "a parameter before the network's got a gradient");
    for (unsigned k = 7; k < 7 + m.count; k++) {
        float keep = params[k];
        const float h = 1e-2f;
        params[k] = keep + h;
        double up = weighted_outputs(&m, params, act, c, rows);
        params[k] = keep - h;
        double down = weighted_outputs(&m, params, act, c, rows);
        params[k] = keep;
        double numeric = (up - down) / (2 * h);
        cr_assert(fabs(numeric - grad[k]) <= 2e-3 + 2e-2 * fabs(numeric), "parameter %u: backward %g, numeric %g", k,
                  grad[k], numeric);
    }
    for (unsigned l = 0; l <= m.n_layers; l++)
        free(act[l]);
    free(params);
    free(grad);
    free(c);
    free(delta);
    free(scratch);
}

/* Two environments, five steps: environment 0 terminates at step 1 and is
 * truncated at step 3; environment 1 runs on. Each advantage written out
 * from the definition: delta_t = r_t + gamma V(next) - V_t, summed with
 * (gamma lambda)^k along the episode. */
Test(ppo, gae_sums_the_discounted_errors_within_each_episode)
{
    const float reward[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const float value[10] = {0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4, 4.5f, 5};
    float next_value[10] = {0};
    next_value[3 * 2 + 0] = 7;      /* env 0's last observation before the truncation */
    next_value[4 * 2 + 0] = 8;      /* after the last step */
    next_value[4 * 2 + 1] = 9;
    int32_t term[10] = {0}, trunc[10] = {0};
    term[1 * 2 + 0] = 1;
    trunc[3 * 2 + 0] = 1;
    float adv[10], ret[10];
    const double g = 0.9, l = 0.8;
    cs_ppo_gae(5, 2, reward, value, next_value, term, trunc, g, l, adv, ret);
#define V(t, i) value[(t) * 2 + (i)]
#define R(t, i) reward[(t) * 2 + (i)]
    double d0[5], d1[5];
    d0[0] = R(0, 0) + g * V(1, 0) - V(0, 0);
    d0[1] = R(1, 0) + g * 0 - V(1, 0);           /* terminated */
    d0[2] = R(2, 0) + g * V(3, 0) - V(2, 0);
    d0[3] = R(3, 0) + g * 7 - V(3, 0);           /* truncated: bootstrapped */
    d0[4] = R(4, 0) + g * 8 - V(4, 0);
    for (int t = 0; t < 5; t++)
        d1[t] = R(t, 1) + g * (t < 4 ? V(t + 1, 1) : 9) - V(t, 1);
    double want0[5] = {d0[0] + g * l * d0[1], d0[1], d0[2] + g * l * d0[3], d0[3], d0[4]};
    double want1[5];
    for (int t = 4; t >= 0; t--)
        want1[t] = d1[t] + (t < 4 ? g * l * want1[t + 1] : 0);
    for (int t = 0; t < 5; t++) {
        cr_assert(fabs(adv[t * 2] - want0[t]) < 1e-5, "env 0 step %d: %g, not %g", t, adv[t * 2], want0[t]);
        cr_assert(fabs(adv[t * 2 + 1] - want1[t]) < 1e-4, "env 1 step %d: %g, not %g", t, adv[t * 2 + 1], want1[t]);
        cr_assert_eq(ret[t * 2], adv[t * 2] + V(t, 0));
    }
#undef V
#undef R
}

/* ---- one update against PyTorch ---- */

static void write_floats(const char *dir, const char *name, const float *x, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(x, sizeof *x, n, f) == n);
    fclose(f);
}

/* The Python that has torch: $CARTSIM_TORCH_PYTHON, else the opt-in venv
 * `make torch-venv` makes (build/torch-venv). NULL: none. */
static const char *torch_python(char *buf, size_t size)
{
    const char *env = getenv("CARTSIM_TORCH_PYTHON");
    if (env && *env)
        return env;
    const char *root = getenv("CARTSIM_ROOT");
    snprintf(buf, size, "%s/build/torch-venv/bin/python", root && *root ? root : ".");
    return access(buf, X_OK) == 0 ? buf : NULL;
}

static void against_torch(const char *arch, bool box)
{
    char pybuf[600];
    const char *python = torch_python(pybuf, sizeof pybuf);
    if (!python) {
        fprintf(stderr, "\n*** SKIPPED ppo::%s: no Python with torch (make torch-venv, or set "
                        "CARTSIM_TORCH_PYTHON) ***\n", box ? "one_box_update_is_pytorchs" : "one_discrete_update_is_pytorchs");
        cr_skip_test("no Python with torch: make torch-venv, or set CARTSIM_TORCH_PYTHON");
    }
    const unsigned n_obs = 3, n_act = box ? 2 : 3;
    const int64_t rows = 50;
    const double low[3] = {-2, -1, 0}, high[3] = {2, 3, 1};
    cs_agent a;
    char err[256];
    cr_assert_eq(cs_agent_parse(arch, &a, err, sizeof err), 0);
    cs_mlp actor, critic;
    unsigned n_params = cs_ppo_shape(&a, box, n_obs, n_act, &actor, &critic);
    float *params = malloc(n_params * sizeof *params), *grad = malloc(n_params * sizeof *grad);
    for (unsigned k = 0; k < n_params; k++)
        params[k] = (float)(uniform() - 0.5);
    float *obs = malloc(n_obs * rows * sizeof *obs), *act = malloc(n_act * rows * sizeof *act);
    int32_t *act_i = malloc(rows * sizeof *act_i);
    float logp[50], value[50], adv[50], ret[50];
    for (int64_t k = 0; k < n_obs * rows; k++)
        obs[k] = (float)(2 * uniform() - 1);
    for (int64_t r = 0; r < rows; r++) {
        act_i[r] = (int32_t)(uniform() * n_act);
        for (unsigned j = 0; j < n_act; j++)
            act[j * rows + r] = (float)(low[j] + (high[j] - low[j]) * uniform());
        logp[r] = (float)(-1.5 + uniform());   /* ratios around e^0.3 .. e^-0.7: some clipped */
        value[r] = (float)(uniform() - 0.5);
        adv[r] = (float)(2 * uniform() - 1);
        ret[r] = (float)(value[r] + 0.6 * (uniform() - 0.5));   /* some value steps clipped */
    }
    char dir[] = "/tmp/cartsim-ppo-ref-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    write_floats(dir, "params", params, n_params);
    write_floats(dir, "obs", obs, n_obs * rows);
    write_floats(dir, "actions", box ? act : (const float *)act_i, box ? n_act * rows : rows);
    write_floats(dir, "logprob", logp, rows);
    write_floats(dir, "value", value, rows);
    write_floats(dir, "adv", adv, rows);
    write_floats(dir, "ret", ret, rows);
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.learning_rate = 1e-3;
    tc.ent_coef = 0.05;   /* the entropy's gradient counts */
    tc.max_grad_norm = 0.2;   /* the gradient is clipped */
    double losses[4];
    cr_assert_eq(cs_ppo_update_rows(&tc, arch, box, n_obs, n_act, low, high, rows, obs, box ? (void *)act : act_i, logp,
                                    value, adv, ret, params, losses, grad),
                 CS_OK);
    write_floats(dir, "grad", grad, n_params);
    write_floats(dir, "params_after", params, n_params);
    char path[700];
    snprintf(path, sizeof path, "%s/meta", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "{\"arch\": \"%s\", \"box\": %s, \"n_obs\": %u, \"n_act\": %u, \"rows\": %lld, \"low\": [%g, %g], "
               "\"high\": [%g, %g], \"lr\": %.17g, \"clip\": %.17g, \"ent\": %.17g, \"vf\": %.17g, \"max_norm\": %.17g, "
               "\"losses\": [%.9g, %.9g, %.9g, %.9g]}\n",
            arch, box ? "true" : "false", n_obs, n_act, (long long)rows, low[0], low[1], high[0], high[1],
            tc.learning_rate, tc.clip_coef, tc.ent_coef, tc.vf_coef, tc.max_grad_norm, losses[0], losses[1], losses[2],
            losses[3]);
    fclose(f);
    const char *root = getenv("CARTSIM_ROOT");
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "'%s' '%s/tests/ppo_reference.py' '%s' 2>&1", python, root && *root ? root : ".", dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int status = pclose(p);
    fprintf(stderr, "ppo_reference (%s, %s): %s", arch, box ? "box" : "discrete", out);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "PyTorch disagrees: %s", out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(params);
    free(grad);
    free(obs);
    free(act);
    free(act_i);
}

Test(ppo, one_discrete_update_is_pytorchs, .timeout = 300) { against_torch("mlp:8x6", false); }
Test(ppo, one_box_update_is_pytorchs, .timeout = 300) { against_torch("mlp:7", true); }

/* ---- training ---- */

static cs_config cartpole(cs_backend b, int threads)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.backend = b;
    cfg.threads = threads;
    return cfg;
}

Test(ppo, solves_cartpole_within_a_step_budget, .timeout = 600)
{
    cs_config cfg = cartpole(CS_BACKEND_CPU, 0);
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.policy = "mlp:64";
    tc.seed = 1;
    tc.total_timesteps = 200000;   /* CleanRL's settings otherwise: 4 x 128 steps an iteration */
    cs_train_result r;
    char err[1024];
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_OK, "%s", err);
    cr_assert(r.solved, "not solved in %lld env-steps: greedy mean return %g", (long long)r.env_steps, r.eval_return);
    cr_assert_geq(r.eval_return, 475);
    cr_assert_str_eq(r.policy, "mlp:64");
    cr_assert_str_eq(r.env, "cartpole");
    cr_assert_eq(r.n_weights, (4 + 1) * 64 + (64 + 1) * 2, "the actor alone: a dense policy");
    fprintf(stderr, "ppo: cartpole solved after %lld iterations, %lld env-steps, %.2f s (compile %.2f s)\n",
            (long long)r.generations, (long long)r.env_steps, r.elapsed_ms / 1e3, r.compile_ms / 1e3);
    /* the result is a dense policy: the batch running it scores it so */
    cs_config ecfg = cfg;
    ecfg.num_envs = 100;
    ecfg.policy = r.policy;
    cs_env *env;
    cr_assert_eq(cs_env_open(&ecfg, &env), CS_OK, "%s", cs_env_error(env));
    double ret[100];
    cr_assert_eq(cs_evaluate(env, r.weights, 100, 12345, ret), CS_OK, "%s", cs_env_error(env));
    double mean = 0;
    for (int k = 0; k < 100; k++)
        mean += ret[k] / 100;
    cr_assert_geq(mean, 400, "the saved actor scores %g on other episodes", mean);
    cs_env_close(env);
    free(r.weights);
}

static double *train_weights(cs_config cfg, const char *policy, int64_t steps, unsigned *n)
{
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.policy = policy;
    tc.seed = 9;
    tc.num_envs = 5;
    tc.num_steps = 64;
    tc.total_timesteps = steps;
    tc.target = 1e9;   /* never solved: every iteration runs */
    tc.eval_episodes = 4;
    cs_train_result r;
    char err[1024];
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_OK, "%s", err);
    cr_assert_eq(r.generations, steps / 320);
    *n = r.n_weights;
    return r.weights;
}

Test(ppo, same_seed_same_weights_on_any_thread_count_and_the_interpreter, .timeout = 600)
{
    unsigned n1, n3, ni;
    double *w1 = train_weights(cartpole(CS_BACKEND_CPU, 1), "mlp:16", 6400, &n1);
    double *w3 = train_weights(cartpole(CS_BACKEND_CPU, 3), "mlp:16", 6400, &n3);
    double *wi = train_weights(cartpole(CS_BACKEND_INTERP, 1), "mlp:16", 6400, &ni);
    cr_assert_eq(n1, n3);
    cr_assert_eq(n1, ni);
    cr_assert_eq(memcmp(w1, w3, n1 * sizeof *w1), 0, "1 thread and 3 trained different weights");
    cr_assert_eq(memcmp(w1, wi, n1 * sizeof *w1), 0, "the cpu and the interpreter trained different weights");
    free(w1);
    free(w3);
    free(wi);
}

/* A learning rate of 1e30 sends the weights to infinity within the first
 * iteration: training stops with CS_ERR_NUMERIC and the message says so,
 * and the weights it hands back are finite (the initial policy's). */
Test(ppo, a_loss_gone_nan_stops_training_and_keeps_the_last_policy, .timeout = 300)
{
    cs_config cfg = cartpole(CS_BACKEND_CPU, 1);
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.policy = "mlp:8";
    tc.learning_rate = 1e30;
    tc.max_grad_norm = 1e30;
    cs_train_result r;
    char err[1024];
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_NUMERIC, "%s", err);
    cr_assert(strstr(err, "not finite") && strstr(err, "kept"), "%s", err);
    cr_assert_not_null(r.weights);
    cr_assert_eq(r.n_weights, 5 * 8 + 9 * 2);
    for (unsigned k = 0; k < r.n_weights; k++)
        cr_assert(isfinite(r.weights[k]));
    free(r.weights);
}

Test(ppo, bad_settings_are_refused_by_name)
{
    cs_config cfg = cartpole(CS_BACKEND_CPU, 1);
    struct {
        const char *name, *value, *says;
    } bad[] = {
        {"gamma", "1.5", "out of range"},          {"clip_coef", "0", "out of range"},
        {"num_envs", "-1", "out of range"},        {"learning_rate", "nan", "not a finite number"},
        {"ent_coef", "x", "not a finite number or auto"}, {"norm_obs", "maybe", "not one of auto, false, true"},
        {"anneal_lr", "1", "not one of false, true"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cs_train_config tc;
        cs_train_config_init(&tc);
        char err[512];
        cr_assert_eq(cs_train_config_set(&tc, bad[k].name, bad[k].value, err, sizeof err), CS_ERR_ARGUMENT, "%s=%s",
                     bad[k].name, bad[k].value);
        cr_assert(strstr(err, bad[k].says), "%s=%s: %s", bad[k].name, bad[k].value, err);
    }
    cs_train_config tc;
    cs_train_config_init(&tc);
    char err[512];
    cr_assert_eq(cs_train_config_set(&tc, "gamme", "0.9", err, sizeof err), CS_ERR_NOT_FOUND);
    cr_assert(strstr(err, "gamma"), "the message lists the settings: %s", err);
    /* fields a C caller set out of range are refused at cs_train, by name */
    tc.algo = CS_ALGO_PPO;
    tc.gae_lambda = 2;
    cs_train_result r;
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_ARGUMENT);
    cr_assert(strstr(err, "gae_lambda"), "%s", err);
    cr_assert_null(r.weights);
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.num_minibatches = 1000;   /* 512 steps an iteration */
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_ARGUMENT);
    cr_assert(strstr(err, "num_minibatches"), "%s", err);
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.total_timesteps = 100;
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_ARGUMENT);
    cr_assert(strstr(err, "total_timesteps"), "%s", err);
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.policy = "ppo:mlp:8";
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_ARGUMENT);
    /* every setting reads back as it was set */
    for (size_t i = 0; i < cs_train_setting_count(); i++) {
        cs_setting_info in;
        cr_assert_eq(cs_train_setting_at(i, &in), CS_OK);
        char v[64];
        cs_train_config_init(&tc);
        cr_assert_eq(cs_train_config_get(&tc, in.name, v, sizeof v), CS_OK);
        cr_assert_str_eq(v, in.default_value, "%s", in.name);
    }
}

/* ---- the command line ---- */

#include "cli_test.h"

static int count_lines(const char *s, const char *start)
{
    int n = 0;
    for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, start, strlen(start)) == 0;
    return n;
}

/* train --algo ppo with --json: a JSON line per iteration, then the result
 * line; --out and --plot written (the policy a dense one `eval` reads, the
 * curve a PNG); a configuration file's [train] keys and the --no- switches
 * reach the trainer (its "train" object says so). */
Test(ppo, cli_trains_writes_the_policy_and_the_curve, .timeout = 600)
{
    char dir[] = "/tmp/cartsim-ppo-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char pol[600], png[600], ini[600];
    snprintf(pol, sizeof pol, "%s/cartpole.pol", dir);
    snprintf(png, sizeof png, "%s/curve.png", dir);
    snprintf(ini, sizeof ini, "%s/ppo.ini", dir);
    FILE *f = fopen(ini, "w");
    cr_assert(f);
    fputs("[train]\nalgo = ppo\ngamma = 0.98\ntotal_timesteps = 5120\n[agent]\nagent = mlp:16\n", f);
    fclose(f);
    const char *args[] = {"train", "--config", ini, "--no-anneal-lr", "--num-envs", "8", "--num-steps", "64",
                          "--seed", "3", "--json", "--out", pol, "--plot", png, NULL};
    cli_result r;
    cli_test_run(args, 500, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count_lines(r.out, "{\"type\": \"iteration\", \"iteration\": "), 10, "%s", r.out);
    cr_assert_eq(count_lines(r.out, "{\"type\": \"result\", "), 1, "%s", r.out);
    const char *result = strstr(r.out, "{\"type\": \"result\"");
    cr_assert(strstr(result, "\"policy\": \"mlp:16\"") && strstr(result, "\"env_steps\": 5120"), "%s", result);
    cr_assert(strstr(result, "\"gamma\": 0.98") && strstr(result, "\"anneal_lr\": false") &&
                  strstr(result, "\"num_envs\": 8"),
              "the file's and the flags' settings: %s", result);
    cr_assert_eq(r.err_len, 0u, "no status line without a terminal: %s", r.err);
    cli_result_free(&r);
    f = fopen(png, "rb");
    cr_assert(f, "no curve at %s", png);
    unsigned char magic[8];
    cr_assert_eq(fread(magic, 1, 8, f), 8u);
    fclose(f);
    cr_assert_eq(memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0);
    const char *eval[] = {"eval", "--policy", pol, "--episodes", "5", NULL};
    cli_test_run(eval, 200, &r);
    cr_assert_eq(r.status, 0, "the saved actor: %s", r.err);
    cli_result_free(&r);
    /* --print-config lists the trainers' settings in [train], the file's origin on its lines */
    const char *print[] = {"train", "--config", ini, "--print-config", NULL};
    cli_test_run(print, 60, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char origin[700];
    snprintf(origin, sizeof origin, "; %s:3", ini);
    cr_assert(strstr(r.out, "gamma = 0.98") && strstr(strstr(r.out, "gamma = 0.98"), origin), "%s", r.out);
    cr_assert(strstr(r.out, "clip_coef = 0.2 "), "%s", r.out);
    cli_result_free(&r);
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}
