/* render/: what environments look like, without a display. Each
 * environment draws itself: its .env file's draw block is part of its
 * program (jit/parse_draw.c), and render/ evaluates it (picture.c) on a
 * canvas that rasterizes into RGB memory, with text in a TrueType font; it
 * makes headless RGB frames (cs_renderer), PNG files and frame sinks. No
 * environment is known here by name. Nothing here needs SDL2: the window
 * (`cartsim view`) is the program's, in view/, and draws its tiles with
 * these same pictures into a buffer it shows.
 *
 * render/ uses sim's public API (cartsim.h), sim's cs_say (status.h) for
 * messages into callers' buffers, and an environment's program and host
 * values (env_lanes.h) with the interpreter (jit.h) for its pictures.
 *
 *   canvas.c     frame-to-device transform; filled polygons, discs, lines, rectangles into RGB memory
 *   font.c       text in a TrueType font through stb_truetype
 *   picture.c    the evaluator of draw programs: a draw block's shapes for one environment
 *   frames.c     cs_renderer (cartsim.h): RGB frames of one environment or a tiled batch
 *   png.c        PNG files through stb_image_write
 *   sink.c       frame sinks: numbered PNGs in a directory, or GIF/MP4 through ffmpeg
 *
 * Errors follow the library's rule: a status, and a message in the caller's
 * buffer or on a handle; nothing here prints or exits.
 */
#ifndef CS_RENDER_H
#define CS_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cartsim.h"
#include "jit.h"
#include "status.h"

#define RENDER_ERROR_SIZE 512


/* ---- canvas.c ---- */

typedef struct {
    uint8_t r, g, b, a;
} render_colour;

typedef struct {
    int x, y, w, h;
} render_rect;

/* A target for pictures: RGB memory, 3 bytes a pixel, rows `pitch`
 * bytes apart. Pictures draw in their frame's pixel coordinates as Gymnasium
 * does before its final flip: x to the right, y UP from the bottom edge,
 * frame_h high. A pixel of the device covers [X, X+1) x [Y, Y+1) and is
 * painted when its centre lies inside a shape, so that at scale 1
 * Gymnasium's pixel row r (before the flip) is device row frame_h - 1 - r. */
typedef struct render_canvas {
    uint8_t *pixels;            /* NULL: nothing is drawn */
    int pitch;                  /* bytes from one row to the next */
    double ox, oy;              /* device position of the frame's top-left corner */
    double scale;               /* device pixels per frame pixel */
    double frame_h;             /* the frame's height in its own pixels */
    render_rect clip;           /* device pixels that may be painted (inside the memory) */
} render_canvas;

void render_canvas_init(render_canvas *c, uint8_t *pixels, int pitch, render_rect clip, double ox, double oy,
                        double scale, double frame_h);

/* In device pixels, clipped. */
void render_device_rect(render_canvas *c, render_rect r, render_colour col);
/* The whole clip rectangle. */
void render_fill(render_canvas *c, render_colour col);
/* In frame coordinates, as pygame draws (canvas.c): a point stands for the
 * frame pixel holding it (truncated toward zero). A polygon (pts[2k],
 * pts[2k+1] = x, y; 3 to 16 corners) covers the pixels of SDL_gfx's fill
 * through its corners' pixels; a disc of radius int(r) SDL_gfx's filled
 * circle around its centre's pixel; a line Bresenham's pixels from one
 * end's to the other's. */
void render_polygon(render_canvas *c, const double *pts, int n, render_colour col);
void render_disc(render_canvas *c, double x, double y, double r, render_colour col);
void render_line(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col);
/* [x0, x1) x [y0, y1) in frame coordinates, exactly: boxes sharing an edge
 * tile without overlap (a grid's cells). */
void render_box(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col);
/* Where a point of the frame lands on the device. */
void render_frame_to_device(const render_canvas *c, double x, double y, double *dx, double *dy);

/* ---- font.c ---- */

#define RENDER_FONT_PATH "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define RENDER_FONT_PACKAGE "fonts-dejavu-core"

typedef struct render_font render_font;

/* Loads a TrueType font (path NULL: RENDER_FONT_PATH). CS_ERR_UNAVAILABLE,
 * naming the package to install, when the file is missing. */
cs_status render_font_open(const char *path, render_font **out, char *err, size_t err_size);
void render_font_close(render_font *f);          /* NULL is fine */
/* Draws text with the top of its line at device (x, y), lines `size`
 * pixels high. Characters outside printable ASCII are drawn as '?'. A NULL
 * font draws nothing (and measures 0). */
void render_text(render_canvas *c, render_font *f, int x, int y, int size, const char *text, render_colour col);
int render_text_width(render_font *f, const char *text, int size);
/* The width of one character's inked pixels. */
int render_glyph_width(render_font *f, char ch, int size);

/* ---- picture.c ---- */

/* An environment's picture: its program's draw block, ready to draw lanes
 * of it (the program must outlive it). */
typedef struct render_picture render_picture;

/* CS_ERR_UNAVAILABLE when the program has no draw block; the font's status
 * when it has text and the font cannot be opened. */
cs_status render_picture_new(const cs_program *p, render_picture **out, char *err, size_t err_size);
void render_picture_free(render_picture *pic);            /* NULL is fine */
/* The canvas in pixels and the frames per second the block declares. */
void render_picture_size(const render_picture *pic, int *width, int *height, int *fps);
/* Lane `lane` of l: its frame on c (the canvas's frame is the picture's). */
void render_picture_draw(render_picture *pic, render_canvas *c, const cs_lanes *l, int64_t lane);

/* The picture of a batch's environments. open: CS_ERR_UNAVAILABLE, naming
 * what to add, for an environment whose .env file has no draw block. read:
 * the batch's current values (from the device on cuda), once per frame
 * before drawing environments of it. */
cs_status render_picture_open(cs_env *env, render_picture **out, char *err, size_t err_size);
cs_status render_picture_read(render_picture *pic, char *err, size_t err_size);
void render_picture_draw_env(render_picture *pic, render_canvas *c, int64_t env);

/* ---- png.c ---- */

/* Writes an RGB image (rows top to bottom, 3 bytes a pixel) as a PNG file. */
cs_status render_png_write(const char *path, const uint8_t *rgb, int width, int height, char *err,
                           size_t err_size);

/* ---- sink.c ---- */

typedef struct render_sink render_sink;

/* True when `path` names a video (ends in .gif or .mp4): ffmpeg writes it. */
bool render_sink_is_video(const char *path);
/* Checks before any work starts: a video needs ffmpeg on PATH; a directory
 * must exist or be creatable, and be writable; any other path with an
 * extension (x.avi, x.png) is no format at all. CS_ERR_UNAVAILABLE (no
 * ffmpeg), CS_ERR_IO or CS_ERR_ARGUMENT (the formats listed) with the
 * reason. Nothing is created. */
cs_status render_sink_check(const char *path, char *err, size_t err_size);
/* The directory, made when missing (its parent must exist). */
cs_status render_make_dir(const char *path, char *err, size_t err_size);
/* Frames of width x height at fps: numbered PNGs (000000.png, ...) in a
 * directory, created when missing, or a video through ffmpeg reading raw RGB
 * on its stdin. On failure *out may still be a sink holding the message. */
cs_status render_sink_open(const char *path, int width, int height, int fps, render_sink **out);
cs_status render_sink_write(render_sink *s, const uint8_t *rgb);
/* Ends the output (waits for ffmpeg) and frees the sink; the status says
 * whether everything got written. err may be NULL. */
cs_status render_sink_close(render_sink *s, char *err, size_t err_size);
const char *render_sink_error(const render_sink *s);
int64_t render_sink_frames(const render_sink *s);

#endif
