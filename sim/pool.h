/* Worker threads kept by one environment handle, so that a call split over
 * K threads pays a wake-up, not a pthread_create and a join (about 50 us a
 * call on the development machine: more than a whole step of 2048
 * CartPoles). The caller is always worker 0. */
#ifndef CS_POOL_H
#define CS_POOL_H

#include <stddef.h>

typedef struct cs_pool cs_pool;
typedef void (*cs_pool_fn)(void *item);

/* Up to `threads` - 1 workers besides the caller; NULL when none could be
 * started (cs_pool_run then runs everything on the caller). */
cs_pool *cs_pool_open(int threads);
void cs_pool_close(cs_pool *p);   /* NULL is fine; joins the workers */

/* fn(items + k * item_size) for k in [0, count), returns when all are done.
 * Item 0 runs on the caller; items the pool has no worker for run there too. */
void cs_pool_run(cs_pool *p, cs_pool_fn fn, void *items, size_t item_size, int count);

#endif
