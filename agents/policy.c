/* What cs_config.policy names, and the fragment that computes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"

/* A width: 1 to CS_AGENT_WIDTH_MAX in decimal, no sign, no leading zero. */
static const char *width(const char *s, unsigned *out)
{
    if (*s < '1' || *s > '9')
        return NULL;
    unsigned v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (unsigned)(*s++ - '0');
        if (v > CS_AGENT_WIDTH_MAX)
            return NULL;
    }
    *out = v;
    return s;
}

int cs_agent_parse(const char *text, cs_agent *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (text && strncmp(text, "ppo:", 4) == 0) {
        /* an actor-critic of a dense architecture */
        const char *arch = text + 4;
        if ((strcmp(arch, "linear") != 0 && strncmp(arch, "mlp", 3) != 0) || cs_agent_parse(arch, out, err, err_size)) {
            snprintf(err, err_size, "policy '%s': ppo: takes linear, mlp:H or mlp:HxH, H from 1 to %d (e.g. ppo:mlp:64)",
                     text, CS_AGENT_WIDTH_MAX);
            return -1;
        }
        out->actor_critic = true;
        return 0;
    }
    if (!text || !*text || strcmp(text, "random") == 0) {
        out->kind = CS_AGENT_RANDOM;
        return 0;
    }
    if (strcmp(text, "linear") == 0) {
        out->kind = CS_AGENT_DENSE;
        return 0;
    }
    if (strncmp(text, "mlp", 3) == 0 && (text[3] == ':' || text[3] == 0)) {
        const char *s = text + 3;
        out->kind = CS_AGENT_DENSE;
        if (*s == ':') {
            s++;
            while (out->n_hidden < CS_AGENT_HIDDEN_MAX && (s = width(s, &out->hidden[out->n_hidden]))) {
                out->n_hidden++;
                if (*s != 'x')
                    break;
                s++;
            }
        }
        if (!s || *s || out->n_hidden == 0) {
            snprintf(err, err_size,
                     "policy '%s': an MLP is mlp:H or mlp:HxH, H hidden units from 1 to %d (e.g. mlp:32x32)", text,
                     CS_AGENT_WIDTH_MAX);
            return -1;
        }
        return 0;
    }
    size_t n = strlen(text);
    bool ident = n < CS_NAME_MAX && !(text[0] >= '0' && text[0] <= '9');
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        ident &= c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
    if (!ident) {
        snprintf(err, err_size, "policy '%s': expected random, linear, mlp:H, mlp:HxH or a policy the environment declares",
                 text);
        return -1;
    }
    out->kind = CS_AGENT_NAMED;
    memcpy(out->name, text, n + 1);
    return 0;
}

void cs_agent_format(const cs_agent *a, char out[CS_AGENT_TEXT_MAX])
{
    if (a->kind == CS_AGENT_DENSE && a->actor_critic) {
        char actor[CS_AGENT_TEXT_MAX];
        cs_agent_format_actor(a, actor);
        snprintf(out, CS_AGENT_TEXT_MAX, "ppo:%.*s", CS_AGENT_TEXT_MAX - 5, actor);
        return;
    }
    cs_agent_format_actor(a, out);
}

void cs_agent_format_actor(const cs_agent *a, char out[CS_AGENT_TEXT_MAX])
{
    switch (a->kind) {
    case CS_AGENT_RANDOM:
        snprintf(out, CS_AGENT_TEXT_MAX, "random");
        return;
    case CS_AGENT_NAMED:
        snprintf(out, CS_AGENT_TEXT_MAX, "%s", a->name);
        return;
    case CS_AGENT_DENSE:
        if (a->n_hidden == 0)
            snprintf(out, CS_AGENT_TEXT_MAX, "linear");
        else if (a->n_hidden == 1)
            snprintf(out, CS_AGENT_TEXT_MAX, "mlp:%u", a->hidden[0]);
        else
            snprintf(out, CS_AGENT_TEXT_MAX, "mlp:%ux%u", a->hidden[0], a->hidden[1]);
        return;
    }
}

static void list_declared(const cs_program *p, char *out, size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (unsigned k = 0; k < p->n_named && used + 1 < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", k ? ", " : "", p->named[k].name);
    if (!p->n_named)
        snprintf(out, size, "none");
}

cs_status cs_agent_build(cs_program *p, const char *text, cs_agent_weights *w, char *err, size_t err_size)
{
    cs_agent a;
    memset(w, 0, sizeof *w);
    if (cs_agent_parse(text, &a, err, err_size))
        return CS_ERR_ARGUMENT;
    switch (a.kind) {
    case CS_AGENT_RANDOM:
        if (cs_policy_random(p))
            break;
        return CS_OK;
    case CS_AGENT_NAMED: {
        const cs_named_policy *np = cs_program_find_named(p, a.name);
        if (!np) {
            char list[256];
            list_declared(p, list, sizeof list);
            snprintf(err, err_size, "policy '%s': %s declares no such policy (it declares: %s)", a.name, p->name,
                     list);
            return CS_ERR_ARGUMENT;
        }
        for (unsigned k = 0; k < p->n_inputs; k++)
            p->policy[k] = np->action[k];
        return CS_OK;
    }
    case CS_AGENT_DENSE: {
        if (p->n_obs == 0) {
            snprintf(err, err_size, "policy '%s': %s has no observation to read", text, p->name);
            return CS_ERR_ARGUMENT;
        }
        unsigned n_out = cs_dense_outputs(p);
        if (n_out > CS_AGENT_WIDTH_MAX) {
            snprintf(err, err_size, "policy '%s': %s has %u outputs (at most %d)", text, p->name, n_out,
                     CS_AGENT_WIDTH_MAX);
            return CS_ERR_ARGUMENT;
        }
        uint64_t weights = 0;
        unsigned layer = cs_dense_too_wide(&a, p->n_obs, n_out, &weights);
        if (layer) {
            snprintf(err, err_size,
                     "policy '%s': %s has %u observations; its layer %u would have %llu weights (at most %u a layer: "
                     "units x (inputs + 1))",
                     text, p->name, p->n_obs, layer, (unsigned long long)weights, CS_AGENT_LAYER_MAX);
            return CS_ERR_ARGUMENT;
        }
        int n = a.actor_critic ? cs_policy_actor_critic(p, &a, &w->first_weight)
                               : cs_policy_dense(p, &a, &w->first_weight);
        if (n < 0)
            break;
        w->n_weights = (unsigned)n;
        w->shared = a.actor_critic;
        return CS_OK;
    }
    }
    snprintf(err, err_size, "out of memory building the policy");
    return CS_ERR_NOMEM;
}
