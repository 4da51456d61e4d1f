/* The trainers' settings by name (cs_train_setting_at, cs_train_config_set,
 * cs_train_config_get): one row per setting of cs_train_config that an
 * algorithm reads, as sim/config.c declares cs_config's. Its name is the
 * program's flag (--NAME, '_' spelt '-') and key in a file's [train]
 * section, the Python keyword, and the field; the row says its kind, range,
 * default (cs_train_config_init applies them), what the default means and
 * the help line, which starts with the algorithms that read it ("es:",
 * "es, ppo:"; the program refuses a setting the chosen algorithm ignores).
 * PPO's rows carry CleanRL's names. A new setting is its cs_train_config
 * field and one row here. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cartsim.h"
#include "num.h"
#include "status.h"

typedef struct {
    cs_setting_info info;
    size_t offset, size;        /* of the field */
    bool auto_nan;              /* REAL: "auto" is NaN, the algorithm's own choice */
} train_setting;

static const char *const bool_names[] = {"false", "true"};
static const char *const switch_names[] = {[CS_SWITCH_AUTO] = "auto", [CS_SWITCH_OFF] = "false",
                                           [CS_SWITCH_ON] = "true"};
static const char *const update_names[] = {[CS_UPDATE_CPU] = "cpu", [CS_UPDATE_CUDA] = "cuda"};
#define CHOICES(names) .choices = names, .n_choices = (int)(sizeof names / sizeof names[0])
#define FIELD(f) .offset = offsetof(cs_train_config, f), .size = sizeof(((cs_train_config *)0)->f)
#define ROW(name_, kind_, ...) {.name = name_, .section = "train", .field = name_, .kind = kind_, __VA_ARGS__}
#define REAL(lo, hi) .metavar = "X", .real_min = lo, .real_max = hi
#define COUNT(hi) .metavar = "N", .min = 0, .max = hi

static const train_setting settings[] = {
    /* ES */
    {.info = ROW("sigma", CS_SETTING_REAL, REAL(0, INFINITY), .min_open = true, .default_value = "0.2",
         .help = "es: the perturbations' scale"), FIELD(sigma)},
    {.info = ROW("learning_rate", CS_SETTING_REAL, REAL(0, INFINITY), .default_value = "0.0",
         .default_note = "the algorithm's: es 0.1; ppo 2.5e-4 discrete, 3e-4 box", .help = "es, ppo: Adam's step"),
     FIELD(learning_rate)},
    {.info = ROW("weight_decay", CS_SETTING_REAL, REAL(0, INFINITY), .default_value = "0.005",
         .help = "es: the L2 coefficient"), FIELD(weight_decay)},
    /* CEM */
    {.info = ROW("elite_fraction", CS_SETTING_REAL, REAL(0, 1), .min_open = true, .default_value = "0.2",
         .help = "cem: the share of the population the next one is fitted to"), FIELD(elite_fraction)},
    {.info = ROW("init_std", CS_SETTING_REAL, REAL(0, INFINITY), .min_open = true, .default_value = "0.5",
         .help = "cem: the first generation's spread"), FIELD(init_std)},
    {.info = ROW("extra_std", CS_SETTING_REAL, REAL(0, INFINITY), .default_value = "0.1",
         .help = "cem: noise added to the spread, fading to 0 over the generations"), FIELD(extra_std)},
    /* PPO: CleanRL's ppo.py (discrete) and ppo_continuous_action.py (box) */
    {.info = ROW("num_envs", CS_SETTING_INT, COUNT(1 << 24), .default_value = "0", .default_note = "4 discrete, 1 box",
         .help = "ppo: environments stepped together"), FIELD(num_envs)},
    {.info = ROW("num_steps", CS_SETTING_INT, COUNT(1 << 24), .default_value = "0", .default_note = "128 discrete, 2048 box",
         .help = "ppo: steps of every environment per iteration"), FIELD(num_steps)},
    {.info = ROW("total_timesteps", CS_SETTING_INT, COUNT(INT64_C(1) << 50), .default_value = "0",
         .default_note = "500000 discrete, 1000000 box", .help = "ppo: env-steps at most"), FIELD(total_timesteps)},
    {.info = ROW("num_minibatches", CS_SETTING_INT, COUNT(1 << 24), .default_value = "0", .default_note = "4 discrete, 32 box",
         .help = "ppo: minibatches per pass over an iteration's steps"), FIELD(num_minibatches)},
    {.info = ROW("update_epochs", CS_SETTING_INT, COUNT(1 << 20), .default_value = "0", .default_note = "4 discrete, 10 box",
         .help = "ppo: passes over an iteration's steps"), FIELD(update_epochs)},
    {.info = ROW("anneal_lr", CS_SETTING_BOOL, CHOICES(bool_names), .default_value = "true",
         .help = "ppo: the learning rate falls linearly to 0 over the iterations",
         .help_off = "ppo: a constant learning rate"), FIELD(anneal_lr)},
    {.info = ROW("gamma", CS_SETTING_REAL, REAL(0, 1), .default_value = "0.99", .help = "ppo: the discount"), FIELD(gamma)},
    {.info = ROW("gae_lambda", CS_SETTING_REAL, REAL(0, 1), .default_value = "0.95",
         .help = "ppo: generalized advantage estimation's lambda"), FIELD(gae_lambda)},
    {.info = ROW("norm_adv", CS_SETTING_BOOL, CHOICES(bool_names), .default_value = "true",
         .help = "ppo: advantages normalized per minibatch", .help_off = "ppo: raw advantages"), FIELD(norm_adv)},
    {.info = ROW("clip_coef", CS_SETTING_REAL, REAL(0, INFINITY), .min_open = true, .default_value = "0.2",
         .help = "ppo: the surrogate's clipping range"), FIELD(clip_coef)},
    {.info = ROW("clip_vloss", CS_SETTING_BOOL, CHOICES(bool_names), .default_value = "true",
         .help = "ppo: the value loss clipped as the surrogate", .help_off = "ppo: an unclipped value loss"),
     FIELD(clip_vloss)},
    {.info = ROW("ent_coef", CS_SETTING_REAL, REAL(0, INFINITY), .default_value = "auto", .default_note = "0.01 discrete, 0 box",
         .help = "ppo: the entropy bonus's coefficient"), FIELD(ent_coef), .auto_nan = true},
    {.info = ROW("vf_coef", CS_SETTING_REAL, REAL(0, INFINITY), .default_value = "0.5",
         .help = "ppo: the value loss's coefficient"), FIELD(vf_coef)},
    {.info = ROW("max_grad_norm", CS_SETTING_REAL, REAL(0, INFINITY), .min_open = true, .default_value = "0.5",
         .help = "ppo: the gradient's global norm is clipped to this"), FIELD(max_grad_norm)},
    {.info = ROW("target_kl", CS_SETTING_REAL, REAL(0, INFINITY), .default_value = "0.0", .default_note = "never",
         .help = "ppo: an update stops its epochs once the approximate KL passes this"), FIELD(target_kl)},
    {.info = ROW("norm_obs", CS_SETTING_CHOICE, CHOICES(switch_names), .default_value = "auto",
         .default_note = "false discrete, true box",
         .help = "ppo: observations normalized by running statistics (folded into the weights)"), FIELD(norm_obs)},
    {.info = ROW("norm_reward", CS_SETTING_CHOICE, CHOICES(switch_names), .default_value = "auto",
         .default_note = "false discrete, true box",
         .help = "ppo: rewards scaled by the discounted return's running spread"), FIELD(norm_reward)},
    {.info = ROW("update", CS_SETTING_CHOICE, CHOICES(update_names), .default_value = "cpu",
         .help = "ppo: where the update runs: cpu, or cuda (a GPU: for large batches and networks)"), FIELD(update)},
};
#undef CHOICES
#undef FIELD
#undef ROW
#undef REAL
#undef COUNT
#define N_SETTINGS (sizeof settings / sizeof settings[0])

size_t cs_train_setting_count(void) { return N_SETTINGS; }

cs_status cs_train_setting_at(size_t i, cs_setting_info *out)
{
    if (!out || i >= N_SETTINGS)
        return CS_ERR_ARGUMENT;
    *out = settings[i].info;
    out->key = out->name;
    return CS_OK;
}

static const train_setting *find(const char *name)
{
    for (size_t i = 0; name && i < N_SETTINGS; i++)
        if (strcmp(settings[i].info.name, name) == 0)
            return &settings[i];
    return NULL;
}

static void *field(const cs_train_config *tc, const train_setting *st) { return (char *)tc + st->offset; }

cs_status cs_train_config_get(const cs_train_config *tc, const char *name, char *buf, size_t size)
{
    if (!tc || !name || !buf || !size)
        return CS_ERR_ARGUMENT;
    buf[0] = 0;
    const train_setting *st = find(name);
    if (!st)
        return CS_ERR_NOT_FOUND;
    const void *f = field(tc, st);
    int n = 0;
    switch (st->info.kind) {
    case CS_SETTING_INT:
        n = snprintf(buf, size, "%" PRId64, *(const int64_t *)f);
        break;
    case CS_SETTING_REAL: {
        double v = *(const double *)f;
        char repr[CS_REPR_MAX];
        if (st->auto_nan && isnan(v))
            snprintf(repr, sizeof repr, "auto");
        else
            cs_num_repr(v, repr);
        n = snprintf(buf, size, "%s", repr);
        break;
    }
    case CS_SETTING_BOOL:
        n = snprintf(buf, size, "%s", *(const bool *)f ? "true" : "false");
        break;
    case CS_SETTING_CHOICE: {
        int k = *(const int *)f;
        n = snprintf(buf, size, "%s", k >= 0 && k < st->info.n_choices ? st->info.choices[k] : "?");
        break;
    }
    default:
        return CS_ERR_ARGUMENT;
    }
    return n >= 0 && (size_t)n < size ? CS_OK : CS_ERR_LIMIT;
}

/* "[0, 1]", "(0, inf)": a REAL row's range, for messages */
static void range_text(const cs_setting_info *in, char *out, size_t size)
{
    char lo[CS_REPR_MAX], hi[CS_REPR_MAX];
    cs_num_repr(in->real_min, lo);
    cs_num_repr(in->real_max, hi);
    snprintf(out, size, "%s%s, %s%s", in->min_open ? "(" : "[", lo, hi, isinf(in->real_max) ? ")" : "]");
}

cs_status cs_train_config_set(cs_train_config *tc, const char *name, const char *value, char *err, size_t err_size)
{
    char tmp[1];
    if (!err || !err_size) {
        err = tmp;
        err_size = sizeof tmp;
    }
    err[0] = 0;
    if (!tc || !name || !value)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cs_train_config_set: NULL argument");
    const train_setting *st = find(name);
    if (!st) {
        char list[768] = "";
        for (size_t i = 0; i < N_SETTINGS; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, settings[i].info.name, sizeof list - strlen(list) - 1);
        }
        return cs_say(err, err_size, CS_ERR_NOT_FOUND, "no training setting named '%s' (%s)", name, list);
    }
    const cs_setting_info *in = &st->info;
    void *f = field(tc, st);
    switch (in->kind) {
    case CS_SETTING_INT: {
        int64_t v;
        switch (cs_num_i64(value, in->min, in->max, &v)) {
        case CS_NUM_OK:
            *(int64_t *)f = v;
            return CS_OK;
        case CS_NUM_SYNTAX:
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "'%s' is not an integer", value);
        default:
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "'%s' is out of range (%" PRId64 " to %" PRId64 ")", value,
                          in->min, in->max);
        }
    }
    case CS_SETTING_REAL: {
        double v;
        if (st->auto_nan && strcmp(value, "auto") == 0) {
            *(double *)f = NAN;
            return CS_OK;
        }
        char range[96];
        range_text(in, range, sizeof range);
        if (!cs_num_real(value, &v) || !isfinite(v))
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "'%s' is not a finite number%s", value,
                          st->auto_nan ? " or auto" : "");
        if (v < in->real_min || (in->min_open && v == in->real_min) || v > in->real_max)
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "'%s' is out of range %s", value, range);
        *(double *)f = v;
        return CS_OK;
    }
    case CS_SETTING_BOOL:
    case CS_SETTING_CHOICE:
        for (int k = 0; k < in->n_choices; k++)
            if (strcmp(value, in->choices[k]) == 0) {
                if (in->kind == CS_SETTING_BOOL)
                    *(bool *)f = k != 0;
                else
                    *(int *)f = k;
                return CS_OK;
            }
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "'%s' is not one of %s%s%s%s%s", value, in->choices[0],
                      in->n_choices > 1 ? ", " : "", in->n_choices > 1 ? in->choices[1] : "",
                      in->n_choices > 2 ? ", " : "", in->n_choices > 2 ? in->choices[2] : "");
    default:
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cs_train_config_set: internal error");
    }
}

/* The table's defaults, over whatever tc holds (cs_train_config_init). */
void cs_train_settings_defaults(cs_train_config *tc)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        cs_train_config_set(tc, settings[i].info.name, settings[i].info.default_value, NULL, 0);
}

/* A field out of its row's range (a C caller's): CS_ERR_ARGUMENT naming it. */
cs_status cs_train_settings_check(const cs_train_config *tc, char *err, size_t err_size)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const train_setting *st = &settings[i];
        const cs_setting_info *in = &st->info;
        const void *f = field(tc, st);
        char range[96];
        switch (in->kind) {
        case CS_SETTING_INT: {
            int64_t v = *(const int64_t *)f;
            if (v < in->min || v > in->max)
                return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s must be from %" PRId64 " to %" PRId64 ", not %" PRId64,
                              in->name, in->min, in->max, v);
            break;
        }
        case CS_SETTING_REAL: {
            double v = *(const double *)f;
            if (st->auto_nan && isnan(v))
                break;
            range_text(in, range, sizeof range);
            if (!isfinite(v) || v < in->real_min || (in->min_open && v == in->real_min) || v > in->real_max)
                return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s must be a finite number in %s, not %g", in->name, range,
                              v);
            break;
        }
        case CS_SETTING_CHOICE: {
            int v = *(const int *)f;
            if (v < 0 || v >= in->n_choices)
                return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s must be from 0 to %d (%s ... %s), not %d", in->name,
                              in->n_choices - 1, in->choices[0], in->choices[in->n_choices - 1], v);
            break;
        }
        default:
            break;
        }
    }
    return CS_OK;
}
