/* The drawing rules, one file each; a new environment's picture is its file
 * and one row here. */
#include <stdio.h>
#include <string.h>

#include "render.h"

static const render_rule *const rules[] = {
    &render_rule_cartpole,
    &render_rule_pendulum,
    &render_rule_mountain_car,
    &render_rule_mountain_car_continuous,
    &render_rule_acrobot,
};

enum { N_RULES = sizeof rules / sizeof rules[0] };

const render_rule *render_find_rule(const cs_env_info *info)
{
    if (!info)
        return NULL;
    for (int i = 0; i < N_RULES; i++)
        if (info->name && strcmp(rules[i]->name, info->name) == 0 && rules[i]->state_dim == info->state_dim)
            return rules[i];
    for (int i = 0; i < N_RULES; i++)
        if (info->title && strcmp(rules[i]->title, info->title) == 0 && rules[i]->state_dim == info->state_dim)
            return rules[i];
    return NULL;
}

void render_rule_names(char *out, size_t size)
{
    size_t used = 0;
    if (size)
        out[0] = 0;
    for (int i = 0; i < N_RULES && used < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", rules[i]->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}
