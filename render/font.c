/* Text in a real font: a TrueType file (DejaVu Sans from fonts-dejavu-core
 * by default) rasterized by stb_truetype (libstb-dev), its coverage blended
 * over the canvas. Glyph bitmaps are made once per size and kept: the viewer
 * draws the same few sizes every frame. Only printable ASCII is drawn;
 * anything else shows as '?'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

#ifdef CS_HAVE_STB
#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include <stb/stb_truetype.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif

enum { FIRST = 32, LAST = 126, GLYPHS = LAST - FIRST + 1, SIZES = 6 };

typedef struct {
    unsigned char *bitmap;      /* w x h coverage, 0..255 */
    int w, h, dx, dy;           /* offset of the bitmap from the pen on the baseline */
    int advance;                /* pixels to the next pen position */
} glyph;

typedef struct {
    int size;                   /* 0: unused */
    int ascent;                 /* pixels from the top of a line to its baseline */
    glyph g[GLYPHS];
} glyph_set;

struct render_font {
#ifdef CS_HAVE_STB
    stbtt_fontinfo info;
#endif
    unsigned char *data;
    glyph_set sets[SIZES];
    int next;                   /* the set to reuse when all are taken */
};

cs_status render_font_open(const char *path, render_font **out, char *err, size_t err_size)
{
    *out = NULL;
    if (!path)
        path = RENDER_FONT_PATH;
#ifndef CS_HAVE_STB
    return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
                  "this build has no stb_truetype to draw text with: install libstb-dev and rebuild (make)");
#else
    FILE *f = fopen(path, "rb");
    if (!f)
        return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
                      "no font at %s: install it (Debian: sudo apt-get install " RENDER_FONT_PACKAGE ")", path);
    render_font *font = calloc(1, sizeof *font);
    long size = -1;
    if (font && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (font->data = malloc((size_t)size)) && fread(font->data, 1, (size_t)size, f) != (size_t)size) {
        free(font->data);
        font->data = NULL;
    }
    fclose(f);
    if (!font || !font->data) {
        if (font)
            free(font);
        return cs_say(err, err_size, font ? CS_ERR_IO : CS_ERR_NOMEM, "cannot read the font %s", path);
    }
    if (!stbtt_InitFont(&font->info, font->data, stbtt_GetFontOffsetForIndex(font->data, 0))) {
        render_font_close(font);
        return cs_say(err, err_size, CS_ERR_IO, "%s is not a TrueType font stb_truetype can read", path);
    }
    *out = font;
    return CS_OK;
#endif
}

void render_font_close(render_font *f)
{
    if (!f)
        return;
    for (int s = 0; s < SIZES; s++)
        for (int k = 0; k < GLYPHS; k++)
            free(f->sets[s].g[k].bitmap);
    free(f->data);
    free(f);
}

/* The glyphs of one size, made on first use; NULL when memory ran out. */
static glyph_set *glyphs_of(render_font *f, int size)
{
    for (int s = 0; s < SIZES; s++)
        if (f->sets[s].size == size)
            return &f->sets[s];
#ifndef CS_HAVE_STB
    return NULL;
#else
    glyph_set *set = &f->sets[f->next];
    f->next = (f->next + 1) % SIZES;
    for (int k = 0; k < GLYPHS; k++)
        free(set->g[k].bitmap);
    memset(set, 0, sizeof *set);
    float scale = stbtt_ScaleForPixelHeight(&f->info, (float)size);
    int ascent, descent, gap;
    stbtt_GetFontVMetrics(&f->info, &ascent, &descent, &gap);
    set->ascent = (int)(ascent * scale + 0.5f);
    for (int k = 0; k < GLYPHS; k++) {
        glyph *g = &set->g[k];
        int advance, lsb;
        stbtt_GetCodepointHMetrics(&f->info, FIRST + k, &advance, &lsb);
        g->advance = (int)(advance * scale + 0.5f);
        g->bitmap = stbtt_GetCodepointBitmap(&f->info, scale, scale, FIRST + k, &g->w, &g->h, &g->dx, &g->dy);
        if (!g->bitmap)
            g->w = g->h = 0;    /* a space has no bitmap */
    }
    set->size = size;
    return set;
#endif
}

static int index_of(char ch)
{
    unsigned char c = (unsigned char)ch;
    return (c >= FIRST && c <= LAST ? c : '?') - FIRST;
}

static void blend(render_canvas *c, int x, int y, render_colour col, unsigned coverage)
{
    if (!c->pixels || x < c->clip.x || y < c->clip.y || x >= c->clip.x + c->clip.w || y >= c->clip.y + c->clip.h)
        return;
    unsigned a = coverage * col.a / 255, na = 255 - a;
    uint8_t *p = c->pixels + (size_t)y * (size_t)c->pitch + (size_t)x * 3;
    p[0] = (uint8_t)((col.r * a + p[0] * na + 127) / 255);
    p[1] = (uint8_t)((col.g * a + p[1] * na + 127) / 255);
    p[2] = (uint8_t)((col.b * a + p[2] * na + 127) / 255);
}

void render_text(render_canvas *c, render_font *f, int x, int y, int size, const char *text, render_colour col)
{
    glyph_set *set = f && size > 0 ? glyphs_of(f, size) : NULL;
    if (!set)
        return;
    int pen = x, baseline = y + set->ascent;
    for (const char *s = text; *s; s++) {
        const glyph *g = &set->g[index_of(*s)];
        for (int r = 0; r < g->h; r++)
            for (int k = 0; k < g->w; k++) {
                unsigned cov = g->bitmap[r * g->w + k];
                if (cov)
                    blend(c, pen + g->dx + k, baseline + g->dy + r, col, cov);
            }
        pen += g->advance;
    }
}

int render_text_width(render_font *f, const char *text, int size)
{
    glyph_set *set = f && size > 0 ? glyphs_of(f, size) : NULL;
    int w = 0;
    for (const char *s = text; set && *s; s++)
        w += set->g[index_of(*s)].advance;
    return w;
}

int render_glyph_width(render_font *f, char ch, int size)
{
    glyph_set *set = f && size > 0 ? glyphs_of(f, size) : NULL;
    return set ? set->g[index_of(ch)].w : 0;
}
