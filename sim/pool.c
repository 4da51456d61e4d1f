/* The handle's worker threads (pool.h). One batch at a time: the caller
 * publishes it under the lock and bumps the generation; worker k runs item k
 * of each generation it sees, and the last one to finish wakes the caller. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pool.h"

typedef struct {
    cs_pool *pool;
    int index;                  /* 1 .. n_workers */
    pthread_t tid;
} worker;

struct cs_pool {
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    unsigned long generation;   /* of the batch being published */
    bool closing;
    cs_pool_fn fn;
    char *items;
    size_t item_size;
    int count;                  /* items in the batch */
    int running;                /* workers still on the batch */
    int n_workers;
    worker *workers;
};

static void *worker_main(void *arg)
{
    worker *w = arg;
    cs_pool *p = w->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->closing && p->generation == seen)
            pthread_cond_wait(&p->start, &p->lock);
        if (p->closing)
            break;
        seen = p->generation;
        if (w->index >= p->count)
            continue;   /* nothing of this batch is ours */
        cs_pool_fn fn = p->fn;
        void *item = p->items + (size_t)w->index * p->item_size;
        pthread_mutex_unlock(&p->lock);
        fn(item);
        pthread_mutex_lock(&p->lock);
        if (--p->running == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

cs_pool *cs_pool_open(int threads)
{
    if (threads < 2)
        return NULL;
    cs_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (!(p->workers = calloc((size_t)threads - 1, sizeof *p->workers)) || pthread_mutex_init(&p->lock, NULL)) {
        free(p->workers);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int k = 0; k < threads - 1; k++) {
        p->workers[k] = (worker){p, k + 1, 0};
        if (pthread_create(&p->workers[k].tid, NULL, worker_main, &p->workers[k]))
            break;   /* fewer workers: the caller takes the rest */
        p->n_workers++;
    }
    if (p->n_workers == 0) {
        cs_pool_close(p);
        return NULL;
    }
    return p;
}

void cs_pool_close(cs_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->closing = true;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->lock);
    for (int k = 0; k < p->n_workers; k++)
        pthread_join(p->workers[k].tid, NULL);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p);
}

void cs_pool_run(cs_pool *p, cs_pool_fn fn, void *items, size_t item_size, int count)
{
    char *base = items;
    int handed = 0;   /* items 1 .. handed go to workers */
    if (p && count > 1) {
        handed = count - 1 < p->n_workers ? count - 1 : p->n_workers;
        pthread_mutex_lock(&p->lock);
        p->fn = fn;
        p->items = base;
        p->item_size = item_size;
        p->count = handed + 1;
        p->running = handed;
        p->generation++;
        pthread_cond_broadcast(&p->start);
        pthread_mutex_unlock(&p->lock);
    }
    fn(base);
    for (int k = handed + 1; k < count; k++)
        fn(base + (size_t)k * item_size);
    if (handed) {
        pthread_mutex_lock(&p->lock);
        while (p->running > 0)
            pthread_cond_wait(&p->done, &p->lock);
        pthread_mutex_unlock(&p->lock);
    }
}
