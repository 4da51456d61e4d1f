/* Policies, declared as graph fragments that the compiler fuses into the step
 * kernel: each sets program->policy[k] for every input k. */
#ifndef CS_AGENTS_H
#define CS_AGENTS_H

#include "program.h"

/* random.c: uniform over the action space, from the step stream's draws
 * (numbered after any the environment itself uses). 0, or -1. */
int cs_policy_random(cs_program *p);

#endif
