"""The one door to libcartsim: cffi reads sim/cartsim.h itself, so every
struct layout and constant comes from the header and is declared only there.

Where the library and the header are found, first match wins:
  $CARTSIM_LIBRARY (a path to libcartsim.so) and $CARTSIM_HEADER;
  the copies an installed wheel carries next to this file (_lib/);
  the source checkout this package sits in (build/libcartsim.so, sim/cartsim.h).
"""
import os
import re

import cffi

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(os.path.dirname(_HERE))


def _first_existing(env_var, candidates, what):
    chosen = os.environ.get(env_var)
    if chosen:
        if not os.path.exists(chosen):
            raise ImportError("cartsim: $%s names %s, which does not exist" % (env_var, chosen))
        return chosen
    for path in candidates:
        if os.path.exists(path):
            return path
    raise ImportError("cartsim: cannot find %s (looked in %s); build it with `make -C %s all`, "
                      "reinstall the package, or set $%s" % (what, ", ".join(candidates), _CHECKOUT, env_var))


def _declarations(header_text):
    """cartsim.h without what cffi's C parser does not take: the include guard,
    #include lines, the C++ guard and string #defines (integer #defines stay)."""
    kept = []
    for line in header_text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            if re.match(r"#define\s+\w+\s+\d+\s*$", s):
                kept.append(s)
            continue
        if s in ('extern "C" {', "}"):
            continue
        kept.append(line)
    return "\n".join(kept)


LIBRARY_PATH = _first_existing("CARTSIM_LIBRARY", [os.path.join(_HERE, "_lib", "libcartsim.so"),
                                                   os.path.join(_CHECKOUT, "build", "libcartsim.so")],
                               "libcartsim.so")
HEADER_PATH = _first_existing("CARTSIM_HEADER", [os.path.join(_HERE, "_lib", "cartsim.h"),
                                                 os.path.join(_CHECKOUT, "sim", "cartsim.h")], "cartsim.h")

ffi = cffi.FFI()
# The one libc type cartsim.h names (cs_config.interrupt): int on every glibc
# target, which cffi's ABI mode must be told.
ffi.cdef("typedef int sig_atomic_t;")
with open(HEADER_PATH) as _f:
    ffi.cdef(_declarations(_f.read()))
# cffi releases the GIL around every call into the library.
lib = ffi.dlopen(LIBRARY_PATH)

ERROR_SIZE = 1024


class CartsimError(Exception):
    """A call into libcartsim failed; str() is the library's message and
    `status` its cs_status name ("CS_ERR_PARSE", ...)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def status_name(code):
    """"CS_ERR_PARSE" for a status code: the enum's own name, from the header."""
    return ffi.string(ffi.cast("cs_status", code))


def text(c_string):
    return ffi.string(c_string).decode("utf-8", "replace") if c_string != ffi.NULL else ""


def check(code, message_source):
    """Raises CartsimError for a status other than CS_OK; message_source() gives the message."""
    if code != lib.CS_OK:
        message = message_source()
        raise CartsimError(message or text(lib.cs_status_string(code)), status_name(code))


def c_text(value, what):
    """value (str, bytes, os.PathLike or a number) as a C string's bytes; a NUL would end it early, so it is
    refused ("cartpole\\0x" must not open cartpole)."""
    data = value if isinstance(value, bytes) else os.fsencode(value) if isinstance(value, os.PathLike) else \
        str(value).encode()
    if b"\0" in data:
        raise ValueError("cartsim: %s %r holds a NUL character" % (what, value))
    return data


def call_with_error_buffer(fn, *args):
    """For the calls that take (char *error, size_t error_size) last."""
    err = ffi.new("char[]", ERROR_SIZE)
    code = fn(*args, err, ERROR_SIZE)
    check(code, lambda: text(err))

_libc_ffi = cffi.FFI()
_libc_ffi.cdef("void free(void *);")
_libc = _libc_ffi.dlopen(None)


def free(pointer):
    """free() for what the library malloc'ed and handed over (cs_train_result.weights)."""
    _libc.free(_libc_ffi.cast("void *", int(ffi.cast("uintptr_t", pointer))))
