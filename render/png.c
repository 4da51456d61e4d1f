/* PNG files through stb_image_write (Debian's libstb-dev). Its functions are
 * compiled here, static, so they cannot clash with a program's own copy; the
 * file is written through our own FILE so that errors carry errno. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

#ifdef CS_HAVE_STB
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

typedef struct {
    FILE *f;
    int err;                    /* errno of the first failed write */
} png_out;

static void write_bytes(void *context, void *data, int size)
{
    png_out *o = context;
    if (!o->err && size > 0 && fwrite(data, 1, (size_t)size, o->f) != (size_t)size)
        o->err = errno ? errno : EIO;
}

cs_status render_png_write(const char *path, const uint8_t *rgb, int width, int height, char *err,
                           size_t err_size)
{
    if (!path || !rgb || width <= 0 || height <= 0 || width > INT32_MAX / 3 / height)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cannot write a %dx%d image", width, height);
    png_out o = {fopen(path, "wb"), 0};
    if (!o.f)
        return cs_say(err, err_size, CS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    errno = 0;
    int ok = stbi_write_png_to_func(write_bytes, &o, width, height, 3, rgb, width * 3);
    if (fclose(o.f) != 0 && !o.err)
        o.err = errno ? errno : EIO;
    if (!ok)
        return cs_say(err, err_size, CS_ERR_NOMEM, "cannot encode %s: out of memory", path);
    if (o.err)
        return cs_say(err, err_size, CS_ERR_IO, "cannot write %s: %s", path, strerror(o.err));
    return CS_OK;
}

#else
/* Built without stb (the Makefile found no stb/stb_image_write.h). */
cs_status render_png_write(const char *path, const uint8_t *rgb, int width, int height, char *err,
                           size_t err_size)
{
    return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
                        "PNG frames need stb_image_write, which this build lacks (apt-get install libstb-dev, then "
                        "rebuild)");
}
#endif
