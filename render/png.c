/* PNG files through stb_image_write (Debian's libstb-dev). Its functions are
 * compiled here, static, so they cannot clash with a program's own copy; the
 * file is written as every output is (jit/output_file.c), so that errors
 * carry errno and a frame is never half-written. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jit.h"
#include "render.h"

#ifdef CS_HAVE_STB
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

static void write_bytes(void *context, void *data, int size)
{
    if (size > 0)
        fwrite(data, 1, (size_t)size, context);   /* a failure sticks in the stream: the commit reports it */
}

cs_status render_png_write(const char *path, const uint8_t *rgb, int width, int height, char *err,
                           size_t err_size)
{
    if (!path || !rgb || width <= 0 || height <= 0 || width > INT32_MAX / 3 / height)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cannot write a %dx%d image", width, height);
    cs_output o;
    cs_status st = cs_output_begin(&o, path, 0666, err, err_size);
    if (st != CS_OK)
        return st;
    FILE *f = cs_output_stream(&o);
    if (!f || !stbi_write_png_to_func(write_bytes, f, width, height, 3, rgb, width * 3)) {
        cs_output_abort(&o);
        return cs_say(err, err_size, CS_ERR_NOMEM, "cannot encode %s: out of memory", path);
    }
    return cs_output_commit(&o, err, err_size);
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
