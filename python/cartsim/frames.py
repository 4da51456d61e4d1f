"""RGB frames from the library's headless renderer: each environment's own picture, the draw
block of its .env file (docs/dsl.md, "Pictures")."""
import numpy as np

from ._native import CartsimError, check, ffi, lib, text


class Renderer:
    """Draws environments of a Batch as Gymnasium's rgb_array does. It borrows
    the batch's handle (and keeps it alive); cs_renderer_close runs first."""

    def __init__(self, batch):
        self._batch_handle = batch._handle       # the renderer must not outlive the environment
        self._lock = batch._lock                 # it reads the batch: not while another thread steps it
        out = ffi.new("cs_renderer **")
        with self._lock:
            code = lib.cs_renderer_open(batch._ptr(), out)
        if out[0] == ffi.NULL:
            raise MemoryError("cartsim: out of memory opening the renderer")
        self._ptr = ffi.gc(out[0], lib.cs_renderer_close)
        check(code, lambda: text(lib.cs_renderer_error(self._ptr)))

    @property
    def fps(self):
        """The frames per second the picture declares (its draw block's fps)."""
        return int(lib.cs_renderer_fps(self._ptr))

    def rgb(self, first=0, count=1, columns=1):
        """Environments [first, first + count) tiled `columns` to a row: (height, width, 3) uint8."""
        width, height = ffi.new("int *"), ffi.new("int *")
        message = lambda: text(lib.cs_renderer_error(self._ptr))
        with self._lock:
            check(lib.cs_render_rgb(self._ptr, first, count, columns, ffi.NULL, 0, width, height), message)
            frame = np.empty((height[0], width[0], 3), dtype=np.uint8)
            check(lib.cs_render_rgb(self._ptr, first, count, columns, ffi.from_buffer("uint8_t[]", frame),
                                    frame.nbytes, width, height), message)
        return frame


__all__ = ["Renderer", "CartsimError"]
