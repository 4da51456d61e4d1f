/* cs_renderer: RGB frames of environments' current states, Gymnasium's
 * rgb_array. Drawn by the environment's own picture (its draw block,
 * picture.c) straight into the caller's memory; no display and no window
 * library are involved. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* The biggest frame, per side: the tiled batch of a few hundred tiles. */
#define MAX_SIDE 16384

struct cs_renderer {
    char error[RENDER_ERROR_SIZE];
    cs_env *env;
    cs_env_info info;
    render_picture *picture;
    int width, height, fps;     /* a tile's, the picture's */
};

static cs_status fail(cs_renderer *r, cs_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cs_status fail(cs_renderer *r, cs_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return s;
}

const char *cs_renderer_error(const cs_renderer *r)
{
    return r ? r->error : "no renderer handle";
}

void cs_renderer_close(cs_renderer *r)
{
    if (!r)
        return;
    render_picture_free(r->picture);
    free(r);
}

cs_status cs_renderer_open(cs_env *env, cs_renderer **out)
{
    if (!out)
        return CS_ERR_ARGUMENT;
    cs_renderer *r = calloc(1, sizeof *r);
    *out = r;
    if (!r)
        return CS_ERR_NOMEM;
    if (!env)
        return fail(r, CS_ERR_ARGUMENT, "env is NULL");
    cs_status s = cs_env_get_info(env, &r->info);
    if (s != CS_OK)
        return fail(r, s, "%s", cs_env_error(env));
    r->env = env;
    if ((s = render_picture_open(env, &r->picture, r->error, sizeof r->error)) != CS_OK)
        return s;
    render_picture_size(r->picture, &r->width, &r->height, &r->fps);
    return CS_OK;
}


cs_status cs_render_rgb(cs_renderer *r, int64_t first, int count, int columns, uint8_t *rgb, size_t rgb_size,
                        int *width, int *height)
{
    if (!r)
        return CS_ERR_ARGUMENT;
    if (!r->picture)
        return fail(r, CS_ERR_STATE, "this renderer failed to open: close it");
    r->error[0] = 0;
    int64_t n = r->info.num_envs;
    if (first < 0 || count < 1 || first > n || count > n - first)
        return fail(r, CS_ERR_ARGUMENT, "environments [%lld, %lld + %d) are not within the batch of %lld",
                    (long long)first, (long long)first, count, (long long)n);
    if (columns < 0)
        return fail(r, CS_ERR_ARGUMENT, "columns is negative (%d)", columns);
    if (columns == 0)
        while ((int64_t)columns * columns < count)
            columns++;
    if (columns > count)
        columns = count;
    int rows = (count + columns - 1) / columns;
    int fw = r->width, fh = r->height;
    if (columns > MAX_SIDE / fw || rows > MAX_SIDE / fh)
        return fail(r, CS_ERR_LIMIT, "%d tiles of %dx%d in %d columns make a frame wider or taller than %d pixels",
                    count, fw, fh, columns, MAX_SIDE);
    int w = columns * fw, h = rows * fh;
    if (width)
        *width = w;
    if (height)
        *height = h;
    if (!rgb)
        return CS_OK;
    size_t need = (size_t)w * (size_t)h * 3;
    if (rgb_size < need)
        return fail(r, CS_ERR_ARGUMENT, "rgb holds %zu bytes; a %dx%d frame needs %zu", rgb_size, w, h, need);
    cs_status s = render_picture_read(r->picture, r->error, sizeof r->error);
    if (s != CS_OK)
        return s;
    render_canvas canvas;
    if (count < rows * columns) {
        render_canvas_init(&canvas, rgb, w * 3, (render_rect){0, 0, w, h}, 0, 0, 1, fh);
        render_fill(&canvas, (render_colour){0, 0, 0, 255});   /* tiles past the batch are black */
    }
    for (int k = 0; k < count; k++) {
        int x = k % columns * fw, y = k / columns * fh;
        render_canvas_init(&canvas, rgb, w * 3, (render_rect){x, y, fw, fh}, x, y, 1, fh);
        render_picture_draw_env(r->picture, &canvas, first + k);
    }
    return CS_OK;
}

int cs_renderer_fps(const cs_renderer *r)
{
    return r && r->picture ? r->fps : 0;
}
