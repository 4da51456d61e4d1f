/* The handle's worker pool (sim/pool.c): every item of every batch runs
 * exactly once, whatever the batch size, and closing joins cleanly. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pool.h"

typedef struct {
    atomic_int runs;
    int batch;
    int last_batch;
} item;

static void bump(void *p)
{
    item *it = p;
    atomic_fetch_add(&it->runs, 1);
    it->last_batch = it->batch;
}

Test(pool, every_item_of_every_batch_runs_once)
{
    const int sizes[] = {2, 3, 4, 8};
    for (int s = 0; s < 4; s++) {
        cs_pool *p = cs_pool_open(sizes[s]);
        cr_assert(p, "a pool of %d threads", sizes[s]);
        item items[12];
        for (int b = 0; b < 3000; b++) {
            int count = 1 + b % 12;   /* fewer, as many and more items than threads */
            for (int k = 0; k < count; k++) {
                atomic_store(&items[k].runs, 0);
                items[k].batch = b;
                items[k].last_batch = -1;
            }
            cs_pool_run(p, bump, items, sizeof items[0], count);
            for (int k = 0; k < count; k++) {
                cr_assert_eq(atomic_load(&items[k].runs), 1, "batch %d item %d of %d", b, k, count);
                cr_assert_eq(items[k].last_batch, b, "batch %d item %d: its result is visible", b, k);
            }
        }
        cs_pool_close(p);
    }
}

Test(pool, no_pool_runs_everything_on_the_caller)
{
    cr_assert_null(cs_pool_open(1), "one thread is the caller alone");
    cr_assert_null(cs_pool_open(0));
    item items[5];
    for (int k = 0; k < 5; k++)
        atomic_store(&items[k].runs, 0);
    cs_pool_run(NULL, bump, items, sizeof items[0], 5);
    for (int k = 0; k < 5; k++)
        cr_assert_eq(atomic_load(&items[k].runs), 1);
    cs_pool_close(NULL);
}

Test(pool, open_close_cycles)
{
    for (int k = 0; k < 200; k++) {
        cs_pool *p = cs_pool_open(2 + k % 3);
        cr_assert(p);
        if (k % 2) {
            item it[2];
            atomic_store(&it[0].runs, 0);
            atomic_store(&it[1].runs, 0);
            cs_pool_run(p, bump, it, sizeof it[0], 2);
            cr_assert_eq(atomic_load(&it[1].runs), 1);
        }
        cs_pool_close(p);   /* some never ran a batch: their workers are still waiting */
    }
}
