/* The .env parser: the example environments, the language's rules, every
 * error class with its exact position, the bad-source corpus, and stress
 * inputs that must fail cleanly (never crash, hang or leak). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

/* ---- helpers --------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static char *root_file(const char *rel, size_t *len)
{
    const char *root = getenv("CARTSIM_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
    return read_file(path, len);
}

static char err[1024];

static cs_program *parse_as(const char *src, size_t len, cs_type real, const cs_param_override *ov, unsigned n_ov)
{
    cs_program *p = (cs_program *)0x1;
    int rc = cs_parse(src, len, "t.env", real, ov, n_ov, &p, err, sizeof err);
    if (rc == 0)
        cr_assert(p && !err[0]);
    else
        cr_assert((rc == -1 || rc == -2) && p == NULL && err[0]);
    return p;
}

static cs_program *parse_ok(const char *src)
{
    cs_program *p = parse_as(src, strlen(src), CS_F64, NULL, 0);
    cr_assert(p, "expected to parse, got: %s", err);
    return p;
}

static void parse_fails(const char *src, const char *message)
{
    cs_program *p = parse_as(src, strlen(src), CS_F64, NULL, 0);
    cr_assert_null(p, "expected the error \"%s\", but it parsed", message);
    cr_assert_str_eq(err, message);
}

/* A node as an S-expression, e.g. "(add carried0 (mul 0.02 carried1))";
 * capped, since a DAG printed as a tree can be exponential. */
static void sx(const cs_graph *g, cs_node n, cs_text *t)
{
    if (t->len > 20000)
        return;
    const cs_node_data *d = cs_graph_node(g, n);
    if (!d) {
        cs_text_printf(t, "?");
    } else if (d->op == CS_OP_CONST) {
        cs_text_printf(t, "%s%.17g", d->type == CS_BOOL ? "b" : "", d->imm.f);
    } else if (d->op == CS_OP_UNIFORM) {
        cs_text_printf(t, "u%s%u", CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_STEP ? "s" : "r",
                       CS_UNIFORM_DRAW(d->imm.i));
    } else if (cs_op_table[d->op].leaf) {
        cs_text_printf(t, "%s%lld", cs_op_table[d->op].name, (long long)d->imm.i);
    } else {
        cs_text_printf(t, "(%s", cs_op_table[d->op].name);
        if (d->op == CS_OP_INDEX)
            cs_text_printf(t, "%lld", (long long)d->imm.i);
        if (d->op == CS_OP_CAST)
            cs_text_printf(t, ":%s", cs_type_name((cs_type)d->type));
        for (unsigned k = 0; k < d->n_in; k++) {
            cs_text_printf(t, " ");
            sx(g, cs_graph_input(g, n, k), t);
        }
        cs_text_printf(t, ")");
    }
}

static char dumped[32768];

static const char *dump(const cs_program *p, cs_node n)
{
    cs_text t = {0};
    sx(p->graph, n, &t);
    snprintf(dumped, sizeof dumped, "%s", t.data ? t.data : "");
    cs_text_free(&t);
    return dumped;
}

/* A small valid environment whose step block is `step_body`. */
static char *with_step(const char *before, const char *step_body)
{
    static const char head[] =
        "env tiny \"Tiny-v0\"\n"
        "max_steps 100\n"
        "param k = 2.0\n"
        "%s"
        "state x, y\n"
        "action discrete 3\n"
        "observe x, y\n"
        "reset {\n"
        "    x = uniform(-1, 1)\n"
        "    y = uniform(2, 3)\n"
        "}\n"
        "step {\n"
        "%s"
        "}\n";
    size_t n = sizeof head + strlen(before) + strlen(step_body);
    char *s = malloc(n);
    snprintf(s, n, head, before, step_body);
    return s;
}

static const char *const tiny_outputs = "    reward = 1.0\n    terminated = x' > 1\n";

/* The step body plus the usual outputs, parsed; the program is returned. */
static cs_program *tiny(const char *before, const char *body)
{
    char step[4096];
    snprintf(step, sizeof step, "%s%s", body, tiny_outputs);
    char *src = with_step(before, step);
    cs_program *p = parse_as(src, strlen(src), CS_F64, NULL, 0);
    free(src);
    cr_assert(p, "expected to parse, got: %s", err);
    return p;
}

/* ---- the example environments ---------------------------------------- */

static void check_cartpole(const char *file, const char *name)
{
    size_t len;
    char *src = root_file(file, &len);
    const cs_type reals[] = {CS_F64, CS_F32};
    for (int r = 0; r < 2; r++) {
        cs_program *p = parse_as(src, len, reals[r], NULL, 0);
        cr_assert(p, "%s: %s", file, err);
        cr_assert_str_eq(p->name, name);
        cr_assert_str_eq(p->title, "CartPole-v1");
        cr_assert_eq(p->real, reals[r]);
        cr_assert_eq(p->n_carried, 4);
        const char *names[] = {"x", "x_dot", "theta", "theta_dot"};
        for (unsigned k = 0; k < 4; k++) {
            cr_assert_str_eq(p->carried[k].name, names[k]);
            cr_assert_eq(p->carried[k].type, reals[r]);
            cr_assert_neq(p->next[k], 0);
            cr_assert_neq(p->restart[k], 0);
            cr_assert_eq(cs_graph_node(p->graph, p->next[k])->type, reals[r]);
            /* observe x, x_dot, theta, theta_dot: the carried leaves themselves */
            const cs_node_data *o = cs_graph_node(p->graph, p->obs_items[k].node);
            cr_assert(o->op == CS_OP_CARRIED && o->imm.i == k);
            /* restart k = lo + (hi - lo) * u with draw k of the restart stream */
            char want[128];
            snprintf(want, sizeof want, "(add (neg 0.050000000000000003) (mul (sub 0.050000000000000003 "
                                        "(neg 0.050000000000000003)) ur%u))", k);
            if (strstr(file, "concat")) {   /* x, x_dot, theta, theta_dot = s0: index k of one stack */
                const cs_node_data *d = cs_graph_node(p->graph, p->restart[k]);
                cr_assert(d->op == CS_OP_INDEX && d->imm.i == k);
                cs_node s0 = cs_graph_input(p->graph, p->restart[k], 0);
                cr_assert_str_eq(dump(p, cs_graph_input(p->graph, s0, k)), want);
            } else {
                cr_assert_str_eq(dump(p, p->restart[k]), want);
            }
        }
        cr_assert_eq(p->n_obs, 4);
        cr_assert_eq(p->action_kind, CS_ACTION_DISCRETE);
        cr_assert_eq(p->n_actions, 2);
        cr_assert_eq(p->n_inputs, 1);
        cr_assert_str_eq(p->inputs[0].name, "action");
        cr_assert_eq(p->inputs[0].type, CS_I32);
        cr_assert(p->input_low[0] == 0 && p->input_high[0] == 1);
        cr_assert_eq(p->max_steps, 500);
        cr_assert(p->reward_threshold == 475);
        cr_assert_eq(p->n_restart_draws, 4);
        cr_assert_eq(p->n_step_draws, 0);
        cr_assert_eq(p->n_params, 0);
        cr_assert_eq(cs_graph_node(p->graph, p->reward)->type, reals[r]);
        cr_assert_eq(cs_graph_node(p->graph, p->terminated)->type, CS_BOOL);
        cr_assert_neq(p->truncated, 0);
        cr_assert_eq(p->policy[0], 0, "the parser leaves the policy alone");
        cr_assert_str_eq(cs_graph_error(p->graph), "");
        cs_program_free(p);
    }
    free(src);
}

Test(parse, cartpole) { check_cartpole("envs/cartpole.env", "cartpole"); }

Test(parse, cartpole_concat) { check_cartpole("envs/cartpole_concat.env", "cartpole_concat"); }

/* Gymnasium's order of operations, node for node. */
Test(parse, cartpole_keeps_python_grouping)
{
    size_t len;
    char *src = root_file("envs/cartpole.env", &len);
    cs_program *p = parse_as(src, len, CS_F64, NULL, 0);
    cr_assert(p, "%s", err);
    /* the action is an int compared with the int 1, as in Python */
    const char *force = "(select (eq input0 1) 10 (neg 10))";
    const char *temp_fmt = "(div (add %s (mul (mul (mul 0.10000000000000001 0.5) (mul carried3 carried3)) "
                           "(sin carried2))) (add 0.10000000000000001 1))";
    char temp[512], want[2048];
    snprintf(temp, sizeof temp, temp_fmt, force);
    const char *thetaacc_fmt = "(div (sub (mul 9.8000000000000007 (sin carried2)) (mul (cos carried2) %s)) "
                               "(mul 0.5 (sub (div 4 3) (div (mul 0.10000000000000001 (mul (cos carried2) "
                               "(cos carried2))) (add 0.10000000000000001 1)))))";
    char thetaacc[1024];
    snprintf(thetaacc, sizeof thetaacc, thetaacc_fmt, temp);
    snprintf(want, sizeof want, "(add carried3 (mul 0.02 %s))", thetaacc);
    cr_assert_str_eq(dump(p, p->next[3]), want);
    /* x' = semi_implicit != 0 ? x + tau * x_dot' : x + tau * x_dot */
    const char *x = dump(p, p->next[0]);
    cr_assert(!strncmp(x, "(select (ne 0 0) (add carried0 (mul 0.02 (add carried1 ", 55), "%s", x);
    cr_assert(strstr(x, ") (add carried0 (mul 0.02 carried1)))"), "%s", x);
    cs_program_free(p);
    free(src);
}

/* ---- the language ---------------------------------------------------- */

Test(lang, python_evaluation_order)
{
    cs_program *p = tiny("", "    a = x * y * x\n    b = -x * y\n    c = x - y - x\n    d = x / y % x\n"
                             "    x' = a + b + c\n    y' = d\n");
    cr_assert_str_eq(dump(p, p->next[0]),
                     "(add (add (mul (mul carried0 carried1) carried0) (mul (neg carried0) carried1)) "
                     "(sub (sub carried0 carried1) carried0))");
    cr_assert_str_eq(dump(p, p->next[1]), "(mod (div carried0 carried1) carried0)");
    cs_program_free(p);
}

Test(lang, precedence)
{
    cs_program *p = tiny("", "    c = not x < 1 or y > 2 and x == y ? x : -y\n"
                             "    x' = c\n    y' = 2 * -x + 1\n");
    cr_assert_str_eq(dump(p, p->next[0]),
                     "(select (or (not (lt carried0 1)) (and (gt carried1 2) (eq carried0 carried1))) "
                     "carried0 (neg carried1))");
    cr_assert_str_eq(dump(p, p->next[1]), "(add (mul 2 (neg carried0)) 1)");
    cs_program_free(p);
}

Test(lang, ternary_is_right_associative)
{
    cs_program *p = tiny("", "    x' = x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0\n    y' = y > 0 ? 1 : y < 0 ? -1 : 0\n");
    cr_assert_str_eq(dump(p, p->next[0]), "(select (gt carried0 0) 1 (select (lt carried0 0) (neg 1) 0))");
    /* ints: -1 is a constant, and the int result converts to the state's real once */
    cr_assert_str_eq(dump(p, p->next[1]), "(cast:f64 (select (gt carried1 0) 1 (select (lt carried1 0) -1 0)))");
    cs_program_free(p);
}

Test(lang, numbers)
{
    cs_program *p = tiny("", "    x' = 1 + 0.5 + 1e-3 + .5 + 2.5E+2 + 1.\n    y' = 1e-400\n");
    cr_assert_str_eq(dump(p, p->next[0]), "(add (add (add (add (add 1 0.5) 0.001) 0.5) 250) 1)");
    cr_assert_str_eq(dump(p, p->next[1]), "0", "underflow gives zero, as in Python");
    cs_program_free(p);
}

Test(lang, builtins)
{
    cs_program *p = tiny("", "    a = sin(x) + cos(x) + tan(x) + exp(x) + log(x) + sqrt(x) + tanh(x) + floor(x) + abs(x)\n"
                             "    b = atan2(x, y) + pow(x, 2.0) + fmod(x, y) + min(x, y) + max(x, y)\n"
                             "    x' = a + b\n    y' = clip(f32(y), -pi, pi)\n");
    cr_assert_str_eq(dump(p, p->next[1]),
                     "(clip (round_f32 carried1) (neg 3.1415926535897931) 3.1415926535897931)");
    const char *x = dump(p, p->next[0]);
    const char *ops[] = {"(sin ", "(cos ", "(tan ", "(exp ", "(log ", "(sqrt ", "(tanh ", "(floor ", "(abs ",
                         "(atan2 ", "(pow carried0 2)", "(fmod ", "(min ", "(max "};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        cr_assert(strstr(x, ops[k]), "%s missing in %s", ops[k], x);
    cs_program_free(p);
}

Test(lang, int_action_is_cast_to_real)
{
    cs_program *p = tiny("", "    x' = action - 1\n    y' = action\n");
    cr_assert_str_eq(dump(p, p->next[0]), "(cast:f64 (sub input0 1))", "an int expression, converted once");
    cr_assert_str_eq(dump(p, p->next[1]), "(cast:f64 input0)");
    cs_program_free(p);
}

Test(lang, next_values_and_terminated_are_readable_once_assigned)
{
    char *src = with_step("", "    y' = y + 1\n    x' = x + y'\n    terminated = x' > 1\n"
                              "    reward = terminated ? 0.0 : 1.0\n");
    cs_program *p = parse_ok(src);
    cr_assert_str_eq(dump(p, p->next[0]), "(add carried0 (add carried1 1))");
    cr_assert_str_eq(dump(p, p->reward), "(select (gt (add carried0 (add carried1 1)) 1) 0 1)");
    cs_program_free(p);
    free(src);
}

Test(lang, reset_reads_assigned_states_and_numbers_draws_in_source_order)
{
    const char *src = "env e \"E\"\nstate a, b, c\naction discrete 2\nobserve a\n"
                      "reset {\n    t = uniform(uniform(0, 1), 2)\n    a = t\n    b = a * 2\n    c = uniform(0, 1)\n}\n"
                      "step {\n    s = uniform(0, 1)\n    a' = a + s + uniform(0, 1)\n    b' = b\n    c' = c\n"
                      "    reward = 1.0\n    terminated = false\n}\n";
    cs_program *p = parse_ok(src);
    cr_assert_str_eq(dump(p, p->restart[0]), "(add (add 0 (mul (sub 1 0) ur1)) (mul (sub 2 (add 0 (mul (sub 1 0) ur1))) ur0))");
    cr_assert_str_eq(dump(p, p->restart[2]), "(add 0 (mul (sub 1 0) ur2))");
    cr_assert(strstr(dump(p, p->restart[1]), "(mul (add "));
    cr_assert_str_eq(dump(p, p->next[0]), "(add (add carried0 (add 0 (mul (sub 1 0) us0))) (add 0 (mul (sub 1 0) us1)))");
    cr_assert_eq(p->n_restart_draws, 3);
    cr_assert_eq(p->n_step_draws, 2);
    cr_assert_str_eq(dump(p, p->terminated), "b0");
    cs_program_free(p);
}

Test(lang, params_and_consts)
{
    cs_program *p = tiny("const c = k * 3\nconst big = c + 1\nreward_threshold -big * 2\n",
                         "    x' = x * c\n    y' = big\n");
    cr_assert_str_eq(dump(p, p->next[0]), "(mul carried0 (mul 2 3))", "consts are graphs the fold pass folds");
    cr_assert_str_eq(dump(p, p->next[1]), "(add (mul 2 3) 1)");
    cr_assert(p->reward_threshold == -14);
    cs_program_free(p);
}

Test(lang, compile_time_values)
{
    const char *src = "env e \"E\"\nparam n = 4\nconst half = n / 2\nmax_steps half * 100 + 1\n"
                      "reward_threshold -pi\nstate s\naction box(-half, sqrt(n), n - 1)\nobserve s\n"
                      "reset { s = 0 }\nstep {\n  s' = s + action[0] + action[2]\n  reward = 0.0; terminated = false\n}\n";
    cs_program *p = parse_ok(src);
    cr_assert_eq(p->max_steps, 201);
    cr_assert(p->reward_threshold == -M_PI);
    cr_assert_eq(p->action_kind, CS_ACTION_BOX);
    cr_assert_eq(p->n_inputs, 3);
    cr_assert_str_eq(p->inputs[2].name, "action2");
    cr_assert_eq(p->inputs[1].type, CS_F64);
    cr_assert(p->input_low[1] == -2 && p->input_high[1] == 2);
    cr_assert_str_eq(dump(p, p->next[0]), "(add (add carried0 (index0 (stack input0 input1 input2))) "
                                          "(index2 (stack input0 input1 input2)))");
    cs_program_free(p);
}

Test(lang, vectors_elementwise_and_unpacking)
{
    cs_program *p = tiny("fn twice(v) = v + v\n",
                         "    v = stack(x, y)\n    w = v * 2\n    a, b = w\n    t = twice(v)\n"
                         "    x' = a + -stack(x, y)[1]\n    y' = max(stack(1, 2), y)[1] + t[0] + b\n");
    const char *v0 = "(index0 (stack carried0 carried1))", *v1 = "(index1 (stack carried0 carried1))";
    char want[1024];
    /* w = stack(v[0] * 2, v[1] * 2); a = w[0]; -v[1] is -(v[1]), as in Python */
    snprintf(want, sizeof want, "(add (index0 (stack (mul %s 2) (mul %s 2))) (neg %s))", v0, v1, v1);
    cr_assert_str_eq(dump(p, p->next[0]), want);
    /* a scalar broadcasts; a function returns a vector; stack(1, 2) is of ints, converted per component */
    snprintf(want, sizeof want, "(add (add (index1 (stack (max (cast:f64 (index0 (stack 1 2))) carried1) (max (cast:f64 "
                                "(index1 (stack 1 2))) carried1))) (index0 (stack (add %s %s) (add %s %s)))) (index1 "
                                "(stack (mul %s 2) (mul %s 2))))", v0, v0, v1, v1, v0, v1);
    cr_assert_str_eq(dump(p, p->next[1]), want);
    cs_program_free(p);
}

Test(lang, functions_inline_with_locals_and_nesting)
{
    cs_program *p = tiny("fn sq(a) = a * a\nfn hyp(a, b) {\n    s = sq(a) + sq(b)\n    return sqrt(s)\n}\n"
                         "fn pair(a) { return stack(a, -a) }\n",
                         "    x' = hyp(x, y)\n    y' = pair(y)[1]\n");
    cr_assert_str_eq(dump(p, p->next[0]), "(sqrt (add (mul carried0 carried0) (mul carried1 carried1)))");
    cr_assert_str_eq(dump(p, p->next[1]), "(index1 (stack carried1 (neg carried1)))");
    cs_program_free(p);
}

Test(lang, function_parameters_may_reuse_state_names)
{
    cs_program *p = tiny("fn f(x) = x + 1\n", "    x' = f(y)\n    y' = y\n");
    cr_assert_str_eq(dump(p, p->next[0]), "(add carried1 1)");
    cs_program_free(p);
}

Test(lang, statements_layout)
{
    /* ';' ends statements; newlines inside ( ) and after an operator do not */
    const char *src = "# comment first\n\n   \nenv e \"Ünïcödé title\"  # é\r\nstate s; action discrete 2\r\n"
                      "observe s\nreset { s = 0 }\nstep {\n  s' = (s +\n        1) *\n 2 ; reward = 1.0\n\n"
                      "  terminated =\n    s' > 3 and\n    not (s < 0)\n}";
    cs_program *p = parse_ok(src);
    cr_assert_str_eq(p->title, "Ünïcödé title");
    cr_assert_str_eq(dump(p, p->next[0]), "(mul (add carried0 1) 2)");
    cs_program_free(p);
}

/* ---- environments others will write ---------------------------------- */

static const char pendulum[] =
    "env pendulum \"Pendulum-v1\"\nmax_steps 200\n"
    "param max_speed = 8\nparam max_torque = 2.0\nparam dt = 0.05\nparam g = 10.0\nparam m = 1.0\nparam l = 1.0\n"
    "fn angle_normalize(x) = ((x + pi) % (2 * pi)) - pi\n"
    "state theta, theta_dot\naction box(-max_torque, max_torque)\n"
    "observe cos(theta), sin(theta), theta_dot\n"
    "reset {\n    theta = uniform(-pi, pi)\n    theta_dot = uniform(-1, 1)\n}\n"
    "step {\n"
    "    u = clip(action, -2.0, 2.0)\n"
    "    costs = pow(angle_normalize(theta), 2.0) + 0.1 * pow(theta_dot, 2.0) + 0.001 * pow(u, 2.0)\n"
    "    newthdot = theta_dot + (3 * g / (2 * l) * sin(theta) + 3.0 / (m * pow(l, 2.0)) * u) * dt\n"
    "    theta_dot' = clip(newthdot, -max_speed, max_speed)\n"
    "    theta' = theta + theta_dot' * dt\n"
    "    reward = -costs\n    terminated = false\n}\n";

Test(later, pendulum)
{
    cs_program *p = parse_ok(pendulum);
    cr_assert_eq(p->action_kind, CS_ACTION_BOX);
    cr_assert_eq(p->n_inputs, 1);
    cr_assert_str_eq(p->inputs[0].name, "action");
    cr_assert(p->input_low[0] == -2 && p->input_high[0] == 2);
    cr_assert_str_eq(dump(p, p->reward),
                     "(neg (add (add (pow (sub (mod (add carried0 3.1415926535897931) (mul 2 3.1415926535897931)) "
                     "3.1415926535897931) 2) (mul 0.10000000000000001 (pow carried1 2))) (mul 0.001 (pow (clip "
                     "input0 (neg 2) 2) 2))))");
    cr_assert_str_eq(dump(p, p->obs_items[0].node), "(cos carried0)");
    cr_assert_eq(p->max_steps, 200);
    cr_assert(isnan(p->reward_threshold));
    cs_program_free(p);
}

static const char mountain_car_continuous[] =
    "env mountain_car_continuous \"MountainCarContinuous-v0\"\nmax_steps 999\nreward_threshold 90.0\n"
    "const min_position = -1.2\nconst max_position = 0.6\nconst max_speed = 0.07\n"
    "const goal_position = 0.45\nparam goal_velocity = 0\nconst power = 0.0015\n"
    "state position, velocity\naction box(-1.0, 1.0)\nobserve position, velocity\n"
    "reset { position = uniform(-0.6, -0.4); velocity = 0 }\n"
    "step {\n"
    "    force = min(max(action, -1.0), 1.0)\n"
    "    v1 = velocity + (force * power - 0.0025 * cos(3 * position))\n"
    "    v2 = v1 > max_speed ? max_speed : v1\n"
    "    v3 = v2 < -max_speed ? -max_speed : v2\n"
    "    p1 = position + v3\n"
    "    p2 = p1 > max_position ? max_position : p1\n"
    "    position_new = p2 < min_position ? min_position : p2\n"
    "    v4 = position_new == min_position and v3 < 0 ? 0.0 : v3\n"
    "    terminated = position_new >= goal_position and v4 >= goal_velocity\n"
    "    reward = (terminated ? 100.0 : 0.0) - pow(action, 2) * 0.1\n"
    "    position' = f32(position_new)\n"
    "    velocity' = f32(v4)\n"
    "}\n";

Test(later, mountain_car_continuous)
{
    cs_program *p = parse_ok(mountain_car_continuous);
    const cs_node_data *d = cs_graph_node(p->graph, p->next[0]);
    cr_assert_eq(d->op, CS_OP_ROUND_F32);
    /* terminated compares the unrounded position */
    cr_assert(!strstr(dump(p, p->terminated), "round_f32"));
    cr_assert(strstr(dump(p, p->reward), "(pow input0 2)"));
    cs_program_free(p);
}

static const char acrobot[] =
    "env acrobot \"Acrobot-v1\"\nmax_steps 500\nreward_threshold -100.0\n"
    "const dt = 0.2\nconst l1 = 1.0\nconst m1 = 1.0\nconst m2 = 1.0\nconst lc1 = 0.5\nconst lc2 = 0.5\n"
    "const I1 = 1.0\nconst I2 = 1.0\nconst g = 9.8\nconst max_vel_1 = 4 * pi\nconst max_vel_2 = 9 * pi\n"
    "fn dsdt(s) {\n"
    "    theta1, theta2, dtheta1, dtheta2, a = s\n"
    "    d1 = m1 * pow(lc1, 2) + m2 * (pow(l1, 2) + pow(lc2, 2) + 2 * l1 * lc2 * cos(theta2)) + I1 + I2\n"
    "    d2 = m2 * (pow(lc2, 2) + l1 * lc2 * cos(theta2)) + I2\n"
    "    phi2 = m2 * lc2 * g * cos(theta1 + theta2 - pi / 2.0)\n"
    "    phi1 = -m2 * l1 * lc2 * pow(dtheta2, 2) * sin(theta2) -\n"
    "           2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin(theta2) +\n"
    "           (m1 * lc1 + m2 * l1) * g * cos(theta1 - pi / 2) + phi2\n"
    "    ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * pow(dtheta1, 2) * sin(theta2) - phi2) /\n"
    "               (m2 * pow(lc2, 2) + I2 - pow(d2, 2) / d1)\n"
    "    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1\n"
    "    return stack(dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0)\n"
    "}\n"
    /* Gymnasium's while loops, unrolled twice: a step turns an angle by less than two turns */
    "fn wrap(x, m, M) {\n    diff = M - m\n    x1 = x > M ? x - diff : x\n    x2 = x1 > M ? x1 - diff : x1\n"
    "    x3 = x2 < m ? x2 + diff : x2\n    return x3 < m ? x3 + diff : x3\n}\n"
    "fn bound(x, m, M) = min(max(x, m), M)\n"
    "state theta1, theta2, dtheta1, dtheta2\naction discrete 3\n"
    "observe cos(theta1), sin(theta1), cos(theta2), sin(theta2), dtheta1, dtheta2\n"
    "reset {\n    theta1 = f32(uniform(-0.1, 0.1))\n    theta2 = f32(uniform(-0.1, 0.1))\n"
    "    dtheta1 = f32(uniform(-0.1, 0.1))\n    dtheta2 = f32(uniform(-0.1, 0.1))\n}\n"
    "step {\n"
    "    torque = action - 1.0\n"
    "    y0 = stack(theta1, theta2, dtheta1, dtheta2, torque)\n"
    "    dt2 = dt / 2.0\n"
    "    k1 = dsdt(y0)\n    k2 = dsdt(y0 + dt2 * k1)\n    k3 = dsdt(y0 + dt2 * k2)\n    k4 = dsdt(y0 + dt * k3)\n"
    "    ns = y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)\n"
    "    theta1' = wrap(ns[0], -pi, pi)\n    theta2' = wrap(ns[1], -pi, pi)\n"
    "    dtheta1' = bound(ns[2], -max_vel_1, max_vel_1)\n    dtheta2' = bound(ns[3], -max_vel_2, max_vel_2)\n"
    "    terminated = -cos(theta1') - cos(theta2' + theta1') > 1.0\n"
    "    reward = terminated ? 0.0 : -1.0\n"
    "}\n";

Test(later, acrobot)
{
    const cs_type reals[] = {CS_F64, CS_F32};
    for (int r = 0; r < 2; r++) {
        cs_program *p = parse_as(acrobot, strlen(acrobot), reals[r], NULL, 0);
        cr_assert(p, "%s", err);
        cr_assert_eq(p->n_obs, 6);
        cr_assert_eq(p->n_actions, 3);
        cr_assert_eq(p->n_restart_draws, 4);
        cr_assert_eq(cs_graph_node(p->graph, p->restart[3])->op, CS_OP_ROUND_F32);
        cr_assert_eq(cs_graph_node(p->graph, p->next[2])->op, CS_OP_MIN);
        cs_program_free(p);
    }
}

static const char mountain_car[] =
    "env mountain_car \"MountainCar-v0\"\nmax_steps 200\nreward_threshold -110.0\n"
    "const min_position = -1.2\nconst max_position = 0.6\nconst max_speed = 0.07\nconst goal_position = 0.5\n"
    "param goal_velocity = 0\nconst force = 0.001\nconst gravity = 0.0025\n"
    "state position, velocity\naction discrete 3\nobserve position, velocity\n"
    "reset {\n    position = uniform(-0.6, -0.4)\n    velocity = 0\n}\n"
    "step {\n"
    "    v = clip(velocity + ((action - 1) * force + cos(3 * position) * (-gravity)), -max_speed, max_speed)\n"
    "    position' = clip(position + v, min_position, max_position)\n"
    "    velocity' = position' == min_position and v < 0 ? 0 : v\n"
    "    terminated = position' >= goal_position and velocity' >= goal_velocity\n"
    "    reward = -1.0\n"
    "}\n";

Test(later, mountain_car)
{
    cs_program *p = parse_ok(mountain_car);
    cr_assert_eq(p->n_restart_draws, 1);
    cs_program_free(p);
}

/* ---- overrides ------------------------------------------------------- */

Test(override, value_changes_the_graph)
{
    size_t len;
    char *src = root_file("envs/cartpole.env", &len);
    cs_param_override ov;
    cr_assert_eq(cs_parse_override("gravity=12.5", &ov, err, sizeof err), 0, "%s", err);
    cs_program *p = parse_as(src, len, CS_F64, &ov, 1);
    cr_assert(p, "%s", err);
    const char *next = dump(p, p->next[3]);
    cr_assert(strstr(next, "(mul 12.5 (sin carried2))"), "%s", next);
    cr_assert(!strstr(next, "9.8"));
    cr_assert_eq(p->n_params, 0);
    cs_program_free(p);
    free(src);
}

Test(override, range_becomes_a_per_lane_param)
{
    size_t len;
    char *src = root_file("envs/cartpole.env", &len);
    cs_param_override ov[2];
    cr_assert_eq(cs_parse_override("length=0.25:1", &ov[0], err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_parse_override("force_mag=-3e1", &ov[1], err, sizeof err), 0, "%s", err);
    cs_program *p = parse_as(src, len, CS_F32, ov, 2);
    cr_assert(p, "%s", err);
    cr_assert_eq(p->n_params, 1);
    cr_assert_str_eq(p->params[0].name, "length");
    cr_assert_eq(p->params[0].type, CS_F32);
    /* drawn after the reset's four draws: restart draw 4 */
    cr_assert_str_eq(dump(p, p->param_restart[0]), "(add 0.25 (mul (sub 1 0.25) ur4))");
    cr_assert_eq(p->n_restart_draws, 5);
    const char *next = dump(p, p->next[3]);
    cr_assert(strstr(next, "(mul 0.10000000000000001 param0)"), "%s", next);
    cr_assert(strstr(next, "(neg -30)"), "%s", next);
    for (unsigned k = 0; k < 4; k++) {   /* the reset's draws keep their numbers */
        char want[16];
        snprintf(want, sizeof want, "ur%u))", k);
        cr_assert(strstr(dump(p, p->restart[k]), want));
    }
    cs_program_free(p);
    free(src);
}

Test(override, errors)
{
    size_t len;
    char *src = root_file("envs/cartpole.env", &len);
    cs_param_override ov = {0};
    snprintf(ov.name, sizeof ov.name, "foo");
    ov.value = 1;
    cr_assert_null(parse_as(src, len, CS_F64, &ov, 1));
    cr_assert_str_eq(err, "unknown parameter 'foo' (params: gravity, masscart, masspole, length, "
                          "force_mag, tau, semi_implicit, sutton_barto_reward)");
    cs_program *none;
    cr_assert_eq(cs_parse(src, len, "t.env", CS_F64, &ov, 1, &none, err, sizeof err), -2,
                 "the caller's override is at fault, not the file");
    snprintf(ov.name, sizeof ov.name, "x_threshold");
    cr_assert_null(parse_as(src, len, CS_F64, &ov, 1));
    cr_assert_str_eq(err, "t.env:21:7: 'x_threshold' is a const and cannot be overridden (only params can)");
    cs_param_override two[2] = {{.name = "tau", .value = 1}, {.name = "tau", .value = 2}};
    cr_assert_null(parse_as(src, len, CS_F64, two, 2));
    cr_assert_str_eq(err, "parameter 'tau' is overridden twice");
    free(src);
    /* a ranged param has no compile-time value */
    const char *env = "env e \"E\"\nparam n = 10\nmax_steps n * 2\nstate s\naction discrete 2\nobserve s\n"
                      "reset { s = 0 }\nstep { s' = s; reward = 1.0; terminated = false }\n";
    cs_param_override range = {.name = "n", .is_range = true, .low = 1, .high = 2};
    cr_assert_null(parse_as(env, strlen(env), CS_F64, &range, 1));
    cr_assert_str_eq(err, "t.env:3:11: max_steps must be a compile-time number: 'n' has a range override "
                          "(a per-lane value) and no compile-time value");
}

Test(override, parse_override_text)
{
    cs_param_override o;
    cr_assert_eq(cs_parse_override("gravity=9.81", &o, err, sizeof err), 0);
    cr_assert(!strcmp(o.name, "gravity") && !o.is_range && o.value == 9.81);
    cr_assert_eq(cs_parse_override("m=-1:+2.5e1", &o, err, sizeof err), 0);
    cr_assert(o.is_range && o.low == -1 && o.high == 25);
    cr_assert_eq(cs_parse_override("m=.5:.5", &o, err, sizeof err), 0);
    const struct {
        const char *text, *message;
    } bad[] = {
        {"gravity", "override 'gravity': expected NAME=VALUE or NAME=LOW:HIGH"},
        {"=1", "override '=1': '' is not a parameter name"},
        {"9g=1", "override '9g=1': '9g' is not a parameter name"},
        {"a-b=1", "override 'a-b=1': 'a-b' is not a parameter name"},
        {"g=", "override 'g=': '' is not a number"},
        {"g=abc", "override 'g=abc': 'abc' is not a number"},
        {"g= 1", "override 'g= 1': ' 1' is not a number"},
        {"g=1 ", "override 'g=1 ': '1 ' is not a number"},
        {"g=0x10", "override 'g=0x10': '0x10' is not a number"},
        {"g=inf", "override 'g=inf': 'inf' is not a number"},
        {"g=nan", "override 'g=nan': 'nan' is not a number"},
        {"g=1e999", "override 'g=1e999': '1e999' is out of range"},
        {"g=2:1", "override 'g=2:1': the low end 2 is above the high end 1"},
        {"g=1:", "override 'g=1:': '' is not a number"},
        {"g=1:2:3", "override 'g=1:2:3': '2:3' is not a number"},
        {"a_very_long_parameter_name_that_does_not_fit_in_48=1",
         "override 'a_very_long_parameter_name_that_does_not_fit_in_48=1': "
         "'a_very_long_parameter_name_that_does_not_fit_in_48' is not a parameter name"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cr_assert_eq(cs_parse_override(bad[k].text, &o, err, sizeof err), -1, "%s", bad[k].text);
        cr_assert_str_eq(err, bad[k].message);
    }
    cr_assert_eq(cs_parse_override(NULL, &o, err, sizeof err), -1);
    cr_assert_eq(cs_parse_override("x=1", NULL, NULL, 0), -1);
}

/* ---- errors, each with its position ---------------------------------- */

Test(errors, classes_with_exact_positions)
{
    const struct {
        const char *before, *body, *message;
    } cases[] = {
        /* names */
        {"", "    x' = thta\n", "t.env:12:10: unknown name 'thta'"},
        {"", "    x' = sine(x)\n", "t.env:12:10: unknown function 'sine'"},
        {"", "    x' = k(x)\n", "t.env:12:10: 'k' is a param, not a function"},
        {"", "    x' = sin\n", "t.env:12:10: 'sin' is a function; call it as sin(...)"},
        {"", "    x = 1\n", "t.env:12:5: 'x' is a state: assign its next value as x' = ..."},
        {"", "    k = 1\n", "t.env:12:5: 'k' is already defined as a param at 3:7"},
        {"", "    for i in range(2) { i = 2 }\n", "t.env:12:25: 'i' is a loop variable and cannot be assigned"},
        {"", "    z' = 1\n", "t.env:12:5: 'z' is not a state, so z' cannot be assigned"},
        {"", "    x' = 1\n    x' = 2\n", "t.env:13:5: x' is assigned twice"},
        {"", "    x', x' = stack(1, 2)\n", "t.env:12:9: 'x'' is assigned twice"},
        {"", "    x' = y' + 1\n", "t.env:12:10: y' is read before it is assigned"},
        {"", "    x' = z' + 1\n", "t.env:12:10: 'z' is not a state, so z' means nothing"},
        {"", "    pi = 3\n", "t.env:12:5: 'pi' is a reserved word"},
        {"", "    stack = 3\n", "t.env:12:5: 'stack' is a builtin function and cannot be redefined"},
        {"", "    x' = reward\n", "t.env:12:10: 'reward' is read before it is assigned"},
        {"", "    return 1\n", "t.env:12:5: 'return' is only allowed in a function"},
        {"fn f(a) = x\n", "", "t.env:4:11: unknown name 'x'"},   /* declared before the states */
        {"fn f(a) = f(a)\n", "", "t.env:4:11: recursive call to 'f'"},
        {"fn f(a) = uniform(0, a)\n", "", "t.env:4:11: uniform() can only be used in the reset and step blocks"},
        {"const c = x\n", "", "t.env:4:11: unknown name 'x'"},
        {"fn f(a) = action\n", "", "t.env:4:11: 'action' can only be read in the step block"},
        /* arity */
        {"", "    x' = sin(x, y)\n", "t.env:12:10: 'sin' takes 1 argument, got 2"},
        {"", "    x' = clip(x, 1)\n", "t.env:12:10: 'clip' takes 3 arguments, got 2"},
        {"", "    x' = stack()[0]\n", "t.env:12:10: 'stack' needs at least one argument"},
        {"fn f(a, b) = a\n", "    x' = f(1)\n", "t.env:13:10: 'f' takes 2 arguments, got 1"},
        /* types */
        {"", "    terminated = x and true\n", "t.env:12:20: 'and' needs bool operands, got real"},
        {"", "    x' = not x\n", "t.env:12:10: 'not' needs bool operands, got real"},
        {"", "    x' = x + (x > 1)\n", "t.env:12:12: '+' needs numbers, got bool"},
        {"", "    x' = x ? 1 : 2\n", "t.env:12:12: the condition of '?:' must be a bool, got real"},
        {"", "    x' = x > 0 ? 1.0 : true\n", "t.env:12:16: the two branches of '?:' have different types: real and bool"},
        {"", "    x' = x > 0\n", "t.env:12:5: the next value of 'x' must be a real number, got bool"},
        {"", "    x' = stack(x, y)\n", "t.env:12:5: the next value of 'x' must be a real number, got real[2]"},
        {"", "    terminated = x\n", "t.env:12:5: 'terminated' must be a bool, got real"},
        {"", "    reward = x > 1\n", "t.env:12:5: 'reward' must be a real number, got bool"},
        {"", "    x' = x < y < 1\n", "t.env:12:16: comparisons cannot be chained; combine them with 'and'"},
        {"", "    x' = true < false ? 1 : 2\n", "t.env:12:15: '<' needs numbers, got bool"},
        {"", "    x' = sin(x > 1)\n", "t.env:12:10: 'sin' needs numbers, got bool"},
        /* vectors */
        {"", "    x' = stack(x, y)[2]\n", "t.env:12:22: index 2 is out of range for axis 0 of real[2]"},
        {"", "    x' = x[0]\n", "t.env:12:11: cannot index real"},
        {"", "    x' = stack(x)[y]\n", "t.env:12:19: an index must be an int (or a compile-time integer), got real; "
                                         "convert it with int(...)"},
        {"", "    x' = stack(x)[0.5]\n", "t.env:12:19: an index must be an integer, got 0.5"},
        {"", "    a, b = stack(x, y, x)\n", "t.env:12:5: cannot unpack real[3] into 2 names"},
        {"", "    a, b = x\n", "t.env:12:5: cannot unpack real into 2 names"},
        {"", "    x' = (stack(x, y) + stack(x, y, x))[0]\n", "t.env:12:23: '+' on shapes real[2] and real[3], which do not broadcast"},
        {"", "    x' = stack(stack(x), y)[0]\n", "t.env:12:26: stack() items must have one shape, got real[1] and real"},
        {"", "    x' = stack(x, x > 1)[0]\n", "t.env:12:19: stack() items must be all numbers or all bools"},
        {"", "    terminated = stack(x) > 1 and true\n", "t.env:12:5: 'terminated' must be a bool, got bool[1]"},
        {"", "    x' = stack(x) > 0 ? 1 : 2\n", "t.env:12:5: the next value of 'x' must be a real number, got int[1]"},
        /* numbers and characters */
        {"", "    x' = 1e999\n", "t.env:12:10: number out of range"},
        {"", "    x' = 1.2.3\n", "t.env:12:10: malformed number"},
        {"", "    x' = 12abc\n", "t.env:12:10: malformed number"},
        {"", "    x' = 1e+\n", "t.env:12:10: malformed number"},
        {"", "    x' = x ** 2\n", "t.env:12:12: '**' is not an operator; write pow(a, b)"},
        {"", "    x' = !x\n", "t.env:12:10: unexpected '!' (write 'not' for negation)"},
        {"", "    x' = x $ 1\n", "t.env:12:12: unexpected character '$'"},
        {"", "    x' = x ' 1\n", "t.env:12:12: unexpected \"'\": a next-state name is written x' with no space"},
        {"", "    x' = x\t\x01\n", "t.env:12:12: control character 0x01 in the source"},
        {"", "    x' = \xc3\xa9\n", "t.env:12:10: non-ASCII byte 0xc3 outside a comment or string"},
        {"", "    x' = 1 # \xff\n", "t.env:12:14: invalid UTF-8 (byte 0xff)"},
        {"", "    x' = 1 # \xed\xa0\x80 surrogate\n", "t.env:12:14: invalid UTF-8 (byte 0xed)"},
        {"", "    x' = 1 # \xc0\xaf overlong\n", "t.env:12:14: invalid UTF-8 (byte 0xc0)"},
        {"", "    x' = 1 # \xe2\x82\n", "t.env:12:14: invalid UTF-8 (byte 0xe2)"},
        {"", "    x' = 1 # \xc3\xa9 \x7f\n", "t.env:12:16: control character 0x7f in the source"},
        {"", "    x' = 1\r\r\n", "t.env:12:11: control character 0x0d in the source"},
        {"", "    x' = a_name_that_is_far_too_long_to_be_a_slot_name_in_the_ir\n",
         "t.env:12:10: name longer than 47 characters"},
        /* syntax */
        {"", "    x' = (x + 1\n    y' = 2\n", "t.env:13:5: expected ')' to close the '(' at 12:10, got 'y''"},
        {"", "    x' = x + 1)\n", "t.env:12:15: expected the end of the statement, got ')'"},
        {"", "    x' = x +\n", "t.env:13:5: 'reward' is read before it is assigned"},   /* the line goes on */
        {"", "    x' = x +;\n", "t.env:12:13: expected an expression, got ';'"},
        {"", "    x' x\n", "t.env:12:8: expected '=' after the name to assign, got 'x'"},
        {"", "    x' = stack(x, y\n", "t.env:13:5: expected ',' or ')' in the arguments of 'stack', got 'reward'"},
        {"", "    x' = x ? 1\n    y' = 1\n", "t.env:12:15: expected ':' in 'cond ? a : b', got end of line"},
        {"", "    1 = x\n", "t.env:12:5: expected a name to assign, got a number"},
        {"", "    x' = stack(x)[0\n", "t.env:13:5: expected ']' after the index, got 'reward'"},
        /* declarations */
        {"x = 1\n", "", "t.env:4:1: expected a declaration (env, max_steps, reward_threshold, param, const, state, "
                        "action, observe, fn, reset or step), got 'x'"},
        {"state z\n", "", "t.env:5:1: 'state' is declared twice (first at 4:1)"},
        {"param k = 3\n", "", "t.env:4:7: 'k' is already defined as a param at 3:7"},
        {"param q = q\n", "", "t.env:4:11: unknown name 'q'"},
        {"param q = 1 / 0\n", "", "t.env:4:7: param 'q' must be finite, got inf"},
        {"const q = 1 / 0\n", "", "t.env:4:7: const 'q' must be finite, got inf"},
        {"const q = -log(0)\n", "", "t.env:4:7: const 'q' must be finite, got inf"},
        {"const c = 1\nparam c = 1\n", "", "t.env:5:7: 'c' is already defined as a const at 4:7"},
        {"reward_threshold 1 > 0\n", "", "t.env:4:18: reward_threshold must be a compile-time number: not a compile-time number (only numbers, pi, params, consts, + - * / // % and math functions can be used here)"},
        {"fn f(a, a) = a\n", "", "t.env:4:9: parameter 'a' is declared twice (first at 4:6)"},
        {"fn f(a) {\n    b = a\n}\n", "", "t.env:6:1: function 'f' ends without a return statement"},
        {"fn f(a) {\n    return a\n    b = a\n}\n", "", "t.env:6:5: expected '}' after the return statement (it must be the last), got 'b'"},
        {"fn f(a) a\n", "", "t.env:4:9: expected '=' or '{' after the parameters of 'f', got 'a'"},
        {"env e \"E\"\n", "", "t.env:4:1: 'env' is declared twice (first at 1:1)"},
        {"max_steps 0\n", "", "t.env:4:1: 'max_steps' is declared twice (first at 2:1)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char step[1024];
        snprintf(step, sizeof step, "%s%s", cases[k].body, tiny_outputs);
        char *src = with_step(cases[k].before, step);
        cs_program *p = parse_as(src, strlen(src), CS_F64, NULL, 0);
        cr_expect_null(p, "case %zu parsed", k);
        cr_expect_str_eq(err, cases[k].message, "case %zu: got \"%s\"", k, err);
        cs_program_free(p);
        free(src);
    }
}

Test(errors, whole_file_classes)
{
    parse_fails("env e \"E\"\nstate s\nfn f(a) = a + s\n",
                "t.env:3:15: state 's' cannot be read inside a function; pass it as an argument");
    parse_fails("", "t.env:1:1: missing 'env' declaration");
    parse_fails("\n\n  # just a comment", "t.env:3:19: missing 'env' declaration");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s\nreset { s = 0 }\n",
                "t.env:6:1: missing 'step' declaration");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nreset { s = 0 }\nstep { s' = s; reward = 1.0; terminated = false }\n",
                "t.env:6:1: missing 'observe' declaration");
    parse_fails("env e \"E\"\nobserve s\n", "t.env:2:1: declare 'state' before 'observe'");
    parse_fails("env e \"E\"\nstate s\nstep {\n}\n", "t.env:3:1: declare 'action' before 'step'");
    parse_fails("env e \"E\"\nstate s, t\naction discrete 2\nobserve s\nreset { s = 0 }\n",
                "t.env:5:1: reset does not assign state 't' (every state needs a reset value)");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s\nreset { s = 0; s = 1 }\n",
                "t.env:5:16: state 's' is assigned twice in reset");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s\nreset { s = s + 1 }\n",
                "t.env:5:13: state 's' is read before it is assigned in reset");
    parse_fails("env e \"E\"\nstate s, t\naction discrete 2\nobserve s\nreset { s = 0; t = 0 }\n"
                "step {\n  s' = s\n  reward = 1.0\n  terminated = false\n}\n",
                "t.env:6:1: step does not assign t' (every state needs a next value)");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s\nreset { s = 0 }\n"
                "step {\n  s' = s\n  terminated = false\n}\n", "t.env:6:1: step does not assign 'reward'");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s\nreset { s = 0 }\n"
                "step {\n  s' = s\n  reward = 1.0\n}\n", "t.env:6:1: step does not assign 'terminated'");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s\nreset { s = 0 }\nstep {\n  s' = s\n",
                "t.env:8:1: expected '}' to close the block opened at 6:6, got end of input");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve s in discrete(2)\n",
                "t.env:4:9: a discrete observation must be an int or a bool, got real (convert it with int(...))");
    parse_fails("env e \"E\"\nstate s\naction discrete 2\nobserve uniform(0, 1)\n",
                "t.env:4:9: uniform() can only be used in the reset and step blocks");
    parse_fails("env e \"E\"\nstate s\naction discrete 2.5\n",
                "t.env:3:17: the number of discrete actions must be an integer from 1 to 2147483647, got 2.5");
    parse_fails("env e \"E\"\nstate s\naction box(1, -1)\n",
                "t.env:3:12: the action's bounds must be finite with low <= high, got 1 and -1");
    parse_fails("env e \"E\"\nstate s\naction box(1)\n", "t.env:3:8: 'box' takes 2 or 3 arguments (low, high[, n]), got 1");
    parse_fails("env e \"E\"\nstate s\naction continuous\n",
                "t.env:3:8: expected 'discrete N' or 'box(low, high)' after 'action', got 'continuous'");
    parse_fails("env e \"E\"\nmax_steps 0\n", "t.env:2:11: max_steps must be an integer from 1 to 2147483647, got 0");
    parse_fails("env e \"E\nstate s\n", "t.env:1:7: unterminated string");
    parse_fails("env e \"\xff\"\n", "t.env:1:8: invalid UTF-8 (byte 0xff)");
    parse_fails("env e \"A title that is much longer than forty-seven bytes\"\n",
                "t.env:1:7: the title is longer than 47 bytes");
    parse_fails("env \"E\"\n", "t.env:1:5: expected the environment's name after 'env', got a string");
    parse_fails("env e E\n", "t.env:1:7: expected the title string after 'env e', got 'E'");
    parse_fails("env e \"E\" x\n", "t.env:1:11: expected the end of the line after the declaration, got 'x'");
    parse_fails("env e \"E\"\nstate\n", "t.env:2:6: expected a name after 'state', got end of line");
    parse_fails("env e \"E\"\nstate a,\n", "t.env:3:1: expected a name after ',', got end of input");
    parse_fails("env e \"E\"\nstate s\nreset\n{ s = 0 }\n", "t.env:3:6: expected '{' after 'reset', got end of line");
    cr_assert_null(parse_as("env\0", 4, CS_F64, NULL, 0));
    cr_assert_str_eq(err, "t.env:1:4: NUL byte in the source");
    /* positions count characters, so UTF-8 in a comment is one column each */
    parse_fails("# \xc3\xa9\xc3\xa9\nenv e \"\xe2\x82\xac\" \x01", "t.env:2:11: control character 0x01 in the source");
}

Test(errors, no_output_pointer_and_null_source)
{
    cr_assert_eq(cs_parse("env", 3, "t.env", CS_F64, NULL, 0, NULL, err, sizeof err), -1);
    cs_program *p = (cs_program *)0x1;
    cr_assert_eq(cs_parse(NULL, 5, "t.env", CS_F64, NULL, 0, &p, err, sizeof err), -1);
    cr_assert_null(p);
    cr_assert_eq(cs_parse(NULL, 0, NULL, CS_F64, NULL, 0, &p, err, sizeof err), -1);
    cr_assert_str_eq(err, "<input>:1:1: missing 'env' declaration");
    cr_assert_eq(cs_parse("", 0, "t.env", CS_I32, NULL, 0, &p, err, sizeof err), -1);
    cr_assert_str_eq(err, "t.env: the real type must be f32 or f64");
    cr_assert_eq(cs_parse("x", 1, "t.env", CS_F64, NULL, 0, &p, NULL, 0), -1, "no error buffer is fine");
    char tiny_buf[8];
    cr_assert_eq(cs_parse("x", 1, "t.env", CS_F64, NULL, 0, &p, tiny_buf, sizeof tiny_buf), -1);
    cr_assert_str_eq(tiny_buf, "t.env:1");
}

Test(errors, source_over_16_mib_is_refused)
{
    size_t n = ((size_t)16 << 20) + 1;
    char *src = malloc(n);
    memset(src, ' ', n);
    cs_program *p = parse_as(src, n, CS_F64, NULL, 0);
    cr_assert_null(p);
    cr_assert_str_eq(err, "t.env: the source is larger than 16 MiB");
    free(src);
}

/* ---- the corpus of bad sources --------------------------------------- */

Test(corpus, every_bad_env_fails_where_it_says)
{
    const char *root = getenv("CARTSIM_ROOT");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/corpus/env_bad", root ? root : ".");
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    unsigned files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".env"))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *src = read_file(path, &len);
        cr_assert(!strncmp(src, "# expect: ", 10), "%s: no '# expect:' line", e->d_name);
        char expect[512];
        size_t k = 0;
        for (const char *s = src + 10; *s && *s != '\n' && k + 1 < sizeof expect; s++)
            expect[k++] = *s;
        expect[k] = 0;
        cs_program *p = (cs_program *)0x1;
        int rc = cs_parse(src, len, e->d_name, CS_F64, NULL, 0, &p, err, sizeof err);
        cr_expect_eq(rc, -1, "%s parsed", e->d_name);
        cr_expect_null(p);
        /* "name.env:LINE:COL: ..." with the expected words in it */
        unsigned line = 0, col = 0;
        char sep = 0;
        bool positioned = !strncmp(err, e->d_name, n) && err[n] == ':' &&
                          sscanf(err + n, ":%u:%u%c", &line, &col, &sep) == 3 && sep == ':' && line && col;
        cr_expect(positioned, "%s: no position in \"%s\"", e->d_name, err);
        cr_expect(strstr(err, expect), "%s: \"%s\" does not contain \"%s\"", e->d_name, err, expect);
        free(src);
        files++;
    }
    closedir(d);
    cr_assert_geq(files, 30, "only %u corpus files", files);
}

/* ---- stress: none of these may crash, hang or leak -------------------- */

static int parse_any(const char *src, size_t len)
{
    cs_program *p = (cs_program *)0x1;
    int rc = cs_parse(src, len, "s.env", CS_F64, NULL, 0, &p, err, sizeof err);
    cr_assert(rc == 0 || rc == -1);
    if (rc == 0) {
        cr_assert(p);
        cs_program_free(p);
    } else {
        cr_assert_null(p);
        cr_assert(!strncmp(err, "s.env:", 6), "%s", err);
    }
    return rc;
}

/* prefix + n copies of unit + middle + n copies of close + suffix */
static char *repeat(const char *prefix, const char *unit, size_t n, const char *middle, const char *close,
                    const char *suffix, size_t *len)
{
    size_t u = strlen(unit), c = strlen(close);
    *len = strlen(prefix) + n * (u + c) + strlen(middle) + strlen(suffix);
    char *s = malloc(*len + 1), *w = s;
    w = stpcpy(w, prefix);
    for (size_t k = 0; k < n; k++)
        w = memcpy(w, unit, u), w += u;
    w = stpcpy(w, middle);
    for (size_t k = 0; k < n; k++)
        w = memcpy(w, close, c), w += c;
    stpcpy(w, suffix);
    return s;
}

static const char stress_head[] = "env e \"E\"\nstate x\naction discrete 2\nobserve x\nreset { x = 0 }\nstep {\n  x' = ";
static const char stress_tail[] = "\n  reward = 1.0\n  terminated = false\n}\n";

static void deep(const char *unit, const char *middle, const char *close, const char *want)
{
    size_t len;
    char *s = repeat(stress_head, unit, 100000, middle, close, stress_tail, &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert(strstr(err, want), "%s", err);
    free(s);
}

Test(stress, deep_nesting_is_an_error)
{
    deep("(", "x", ")", "s.env:7:208: expression nested too deeply (more than 200 levels)");
    deep("-", "x", "", "s.env:7:207: expression nested too deeply");
    deep("not ", "true", "", "expression nested too deeply");
    deep("x > 0 ? 1 : ", "x", "", "expression nested too deeply");
    deep("sin(", "x", ")", "expression nested too deeply");
    deep("", "stack(x)", "[0]", "expression nested too deeply");
    deep("[", "x", "]", "expression nested too deeply");   /* array literals */
}

Test(stress, nesting_just_under_the_limit_parses)
{
    size_t len;
    char *s = repeat(stress_head, "(", 190, "x", ")", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), 0, "%s", err);
    free(s);
    s = repeat(stress_head, "-", 190, "x", "", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), 0, "%s", err);
    free(s);
}

Test(stress, megabyte_lines)
{
    size_t len;
    /* a long sum is a list, not a deep tree: it parses */
    char *s = repeat(stress_head, "x + ", 250000, "x", "", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), 0, "%s", err);
    free(s);
    s = repeat(stress_head, "x and ", 200000, "x > 0", "", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert(strstr(err, "'and' needs bool operands, got real"), "%s", err);
    free(s);
    s = repeat(stress_head, "a", 1 << 20, "", "", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert(strstr(err, "s.env:7:8: name longer than 47 characters"), "%s", err);
    free(s);
    s = repeat(stress_head, "9", 1 << 20, "", "", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert(strstr(err, "s.env:7:8: number out of range"), "%s", err);
    free(s);
    s = repeat(stress_head, "0", 1 << 20, ".5", "", stress_tail, &len);
    cr_assert_eq(parse_any(s, len), 0, "%s", err);
    free(s);
    s = repeat("# ", "\xe2\x82\xac", 1 << 18, "\n", "", "", &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert_str_eq(err, "s.env:2:1: missing 'env' declaration");
    free(s);
    s = repeat("env e \"", "z", 1 << 20, "\"\n", "", "", &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert_str_eq(err, "s.env:1:7: the title is longer than 47 bytes");
    free(s);
    s = repeat("", "\n", 1 << 20, "", "", "", &len);
    cr_assert_eq(parse_any(s, len), -1);
    cr_assert_str_eq(err, "s.env:1048577:1: missing 'env' declaration");
    free(s);
}

Test(stress, a_vector_of_scalars_may_be_longer_than_an_array)
{
    /* stack() of 10,000 scalars parsed before arrays had a size limit, and still does */
    size_t cap = 1 << 20, n = 0;
    char *s = malloc(cap);
    n += (size_t)sprintf(s + n, "%s(stack(x", stress_head);
    for (int k = 1; k < 10000; k++)
        n += (size_t)sprintf(s + n, ", x");
    n += (size_t)sprintf(s + n, ") * 2)[9999]%s", stress_tail);
    cr_assert_eq(parse_any(s, n), 0, "%s", err);
    free(s);
}

Test(stress, many_names_and_statements)
{
    /* 100,000 locals and 2,000 states: names are hashed, not searched */
    size_t cap = 4 << 20, n = 0;
    char *s = malloc(cap);
    n += (size_t)sprintf(s + n, "env e \"E\"\nstate s0");
    for (int k = 1; k < 2000; k++)
        n += (size_t)sprintf(s + n, ", s%d", k);
    n += (size_t)sprintf(s + n, "\naction discrete 2\nobserve s0\nreset {\n");
    for (int k = 0; k < 2000; k++)
        n += (size_t)sprintf(s + n, "  s%d = %d\n", k, k);
    n += (size_t)sprintf(s + n, "}\nstep {\n  a0 = s0\n");
    for (int k = 1; k < 100000; k++)
        n += (size_t)sprintf(s + n, "  a%d = a%d + 1\n", k, k - 1);
    for (int k = 0; k < 2000; k++)
        n += (size_t)sprintf(s + n, "  s%d' = a%d\n", k, 99999 - k);
    n += (size_t)sprintf(s + n, "  reward = 1.0; terminated = false\n}\n");
    cr_assert(n < cap);
    cr_assert_eq(parse_any(s, n), 0, "%s", err);
    free(s);
}

Test(stress, inlining_blowup_is_bounded)
{
    /* f_k calls f_(k-1) twice: 2^60 inlined bodies unless the work is capped */
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    n += (size_t)sprintf(s + n, "env e \"E\"\nfn g0(a) = a + 1\n");
    for (int k = 1; k <= 60; k++)
        n += (size_t)sprintf(s + n, "fn g%d(a) = g%d(a) * g%d(a + 1)\n", k, k - 1, k - 1);
    n += (size_t)sprintf(s + n, "state x\naction discrete 2\nobserve x\nreset { x = 0 }\n"
                                "step {\n  x' = g60(x)\n  reward = 1.0\n  terminated = false\n}\n");
    cr_assert_eq(parse_any(s, n), -1);
    cr_assert(strstr(err, "the program is too large"), "%s", err);
    /* a chain of 5,000 functions, each calling the one before: bounded depth */
    n = 0;
    free(s);
    cap = 1 << 20;
    s = malloc(cap);
    n += (size_t)sprintf(s + n, "env e \"E\"\nfn g0(a) = a + 1\n");
    for (int k = 1; k < 5000; k++)
        n += (size_t)sprintf(s + n, "fn g%d(a) = g%d(a) + 1\n", k, k - 1);
    n += (size_t)sprintf(s + n, "state x\naction discrete 2\nobserve x\nreset { x = 0 }\n"
                                "step {\n  x' = g4999(x)\n  reward = 1.0\n  terminated = false\n}\n");
    cr_assert_eq(parse_any(s, n), -1);
    cr_assert(strstr(err, "expression nested too deeply (counting inlined functions)"), "%s", err);
    free(s);
}

/* Parses without Criterion's asserts (for other threads): rc, or -2 when
 * the result breaks cs_parse's contract. */
static int parse_quietly(const char *src, size_t len)
{
    cs_program *p = (cs_program *)0x1;
    int rc = cs_parse(src, len, "s.env", CS_F64, NULL, 0, &p, err, sizeof err);
    if ((rc == 0 && !p) || (rc == -1 && (p || strncmp(err, "s.env:", 6))) || (rc != 0 && rc != -1))
        return -2;
    cs_program_free(p);
    return rc;
}

/* The deepest inputs the limits let through, parsed on a thread with a
 * 1 MiB stack: the recursion limits must hold well inside that. */
static void *parse_deep_inputs(void *unused)
{
    (void)unused;
    size_t len;
    const struct {
        const char *unit, *middle, *close;
        size_t n;
        int rc;
    } inputs[] = {
        {"(", "x", ")", 199, 0},
        {"-", "x", "", 199, 0},
        {"(x + x * (x < x ? x : ", "x", "))", 66, 0},
        {"(x or x and x < x + x * ", "x", ")", 199, -1},   /* a type error, found at the bottom */
        {"sin(stack(", "x", ")[0])", 99, 0},
    };
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
        char *s = repeat(stress_head, inputs[k].unit, inputs[k].n, inputs[k].middle, inputs[k].close,
                         stress_tail, &len);
        int rc = parse_quietly(s, len);
        free(s);
        if (rc != inputs[k].rc)
            return "a deep input did not give the expected result";
    }
    /* functions inlined inside functions, up to the lowering limit and past it */
    for (int depth = 300; depth <= 1200; depth += 900) {
        size_t cap = 1 << 20, n = 0;
        char *s = malloc(cap);
        n += (size_t)sprintf(s + n, "env e \"E\"\nfn g0(a) = a + 1\n");
        for (int k = 1; k < depth; k++)
            n += (size_t)sprintf(s + n, "fn g%d(a) = g%d(a) + 1\n", k, k - 1);
        n += (size_t)sprintf(s + n, "state x\naction discrete 2\nobserve x\nreset { x = 0 }\n"
                                    "step {\n  x' = g%d(x)\n  reward = 1.0\n  terminated = false\n}\n", depth - 1);
        int rc = parse_quietly(s, n);
        free(s);
        if (depth == 300 && rc != 0)
            return "a 300-deep function chain should parse";
        if (depth > 300 && (rc != -1 || !strstr(err, "nested too deeply")))
            return "a 1200-deep function chain should be refused";
    }
    /* the same through the array builtins, loops, literals and subscripts,
     * each as deep as the lowering limit lets it (two or three levels of
     * lowering per function), and one past it */
    const struct {
        const char *first, *next, *state;
        int depth;
    } arrays[] = {
        {"fn g0(a) = a\n", "fn g%d(a) = set(g%d(a), 0, 1)\n", "x: int[2]", 495},
        {"fn g0(a) = a\n", "fn g%d(a) {\n  s = a\n  for i in range(1) { s = g%d(s) }\n  return s\n}\n", "x", 495},
        {"fn g0(a) = a\n", "fn g%d(a) = [g%d(a)][0]\n", "x", 330},
        {"fn g0(a) = a\n", "fn g%d(a) = sum(reshape(g%d(a), 2), axis=0) * [1, 1]\n", "x: int[2]", 240},
    };
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        for (int past = 0; past < 2; past++) {
            int depth = arrays[k].depth + past * arrays[k].depth / 2;
            size_t cap = 1 << 21, n = 0;
            char *s = malloc(cap);
            n += (size_t)sprintf(s + n, "env e \"E\"\n%s", arrays[k].first);
            for (int j = 1; j < depth; j++)
                n += (size_t)sprintf(s + n, arrays[k].next, j, j - 1);
            n += (size_t)sprintf(s + n, "state %s\naction discrete 2\nobserve x\nreset { x = 0 }\n"
                                        "step {\n  x' = g%d(x)\n  reward = 1.0\n  terminated = false\n}\n",
                                 arrays[k].state, depth - 1);
            int rc = parse_quietly(s, n);
            free(s);
            if (!past && rc != 0)
                return "a chain of array builtins just under the lowering limit should parse";
            if (past && (rc != -1 || !strstr(err, "nested too deeply")))
                return "a chain of array builtins past the lowering limit should be refused";
        }
    return NULL;
}

Test(stress, limits_hold_on_a_one_megabyte_stack)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, &attr, parse_deep_inputs, NULL), 0);
    void *why = NULL;
    pthread_join(thread, &why);
    pthread_attr_destroy(&attr);
    cr_assert_null(why, "%s", (const char *)why);
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;   /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

Test(stress, random_garbage)
{
    static const char *const vocab[] = {
        "env", "e", "\"T\"", "state", "x", "y", "action", "discrete", "box", "observe", "reset", "step",
        "param", "const", "fn", "return", "max_steps", "reward_threshold", "reward", "terminated", "x'",
        "y'", "uniform", "stack", "sin", "clip", "f32", "pi", "true", "false", "and", "or", "not", "(",
        ")", "[", "]", "{", "}", ",", "=", "?", ":", "+", "-", "*", "/", "%", "<", "<=", "==", "!=", ">",
        ">=", "1", "0.5", "2", "1e3", ";", "\n", " ", "#c\n", "'", "\"", "\xc3\xa9", "\x00", "\xff",
    };
    size_t cart_len;
    char *cart = root_file("envs/cartpole.env", &cart_len);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    char buf[8192];   /* cartpole.env with its draw block, and room for edits */
    unsigned parsed = 0;
    for (int k = 0; k < 10000; k++) {
        size_t len = 0;
        int kind = k % 3;
        if (kind == 0) {   /* raw bytes */
            len = next_random(&state) % 512;
            for (size_t i = 0; i < len; i++)
                buf[i] = (char)next_random(&state);
        } else if (kind == 1) {   /* token soup */
            size_t words = next_random(&state) % 200;
            for (size_t i = 0; i < words; i++) {
                const char *w = vocab[next_random(&state) % (sizeof vocab / sizeof vocab[0])];
                size_t n = w[0] ? strlen(w) : 1;
                if (len + n + 1 >= sizeof buf)
                    break;
                memcpy(buf + len, w, n);
                len += n;
                if (next_random(&state) % 2)
                    buf[len++] = ' ';
            }
        } else {   /* cartpole with a few bytes changed, removed or inserted */
            cr_assert(cart_len < sizeof buf - 16);
            memcpy(buf, cart, cart_len);
            len = cart_len;
            int edits = 1 + (int)(next_random(&state) % 4);
            for (int e = 0; e < edits; e++) {
                size_t at = next_random(&state) % len;
                uint64_t r = next_random(&state);
                char c = "()[]{}=+-*/,;:?'\"\n x0.#\x00\xff"[r % 24];
                if (r % 3 == 0) {
                    buf[at] = c;
                } else if (r % 3 == 1 && len > 1) {
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                } else {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = c;
                    len++;
                }
            }
        }
        parsed += parse_any(buf, len) == 0;
    }
    cr_log_info("random garbage: %u of 10000 parsed", parsed);
    free(cart);
}

Test(stress, every_truncation_of_cartpole)
{
    size_t len;
    char *src = root_file("envs/cartpole.env", &len);
    unsigned parsed = 0;
    for (size_t n = 0; n <= len; n++) {
        /* a copy of exactly n bytes, so reading past it is caught */
        char *copy = malloc(n ? n : 1);
        memcpy(copy, src, n);
        parsed += parse_any(copy, n) == 0;
        free(copy);
    }
    /* the whole file and the file without its last newline or closing brace region parse */
    cr_assert_geq(parsed, 2);
    free(src);
}
