"""How the golden files are written: JSON lines, a header line, one object
per reset and per step (README.md). Shared by the two workers; numpy only."""
import json
import math

import numpy as np


def plain(value):
    """A value of the references as JSON. Scalars keep their kind (true, 3,
    -1.0); arrays (NumPy, JAX) become nested lists of numbers, bools as 0/1
    and integral reals without a fraction (1, not 1.0), which keeps the grids
    small: the header's dtypes say what each field is. Reals are written as
    the double they are exactly (a float32 0.1 as 0.10000000149011612), so
    reading one back and rounding to float32 gives the same bits."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "__array__") and not isinstance(value, np.generic):
        array = np.asarray(value)
        if array.ndim == 0:
            return plain(array[()])
        if array.dtype.kind == "b":
            return array.astype(np.int64).tolist()
        if array.dtype.kind == "f":
            return [compact(x) for x in array.tolist()] if array.ndim == 1 else [plain(x) for x in array]
        return array.tolist()
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return finite(float(value))
    if isinstance(value, (str, np.str_)):
        return str(value)
    if value is None:
        return None
    raise TypeError("cannot write %r (%s)" % (value, type(value).__name__))


def finite(f):
    if not math.isfinite(f):
        raise ValueError("non-finite value %r in a golden record" % f)
    return f


def compact(f):
    """An element of a real array: an integral value as an int (but -0.0
    stays a real, its sign kept)."""
    f = finite(f)
    return int(f) if f.is_integer() and abs(f) < 2 ** 53 and math.copysign(1, f) > 0 else f


def dtype_name(value):
    """The reference's own type of a value, for the header: numpy dtype and
    shape for arrays, the Python type otherwise."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return "%s%s" % (np.dtype(value.dtype).name, list(value.shape) if value.shape else "")
    if isinstance(value, list):
        return "list"
    return type(value).__name__


class Writer:
    """One golden file: the header, then records, compact (no spaces)."""

    def __init__(self, path, meta):
        self.path = path
        self.f = open(path, "w")
        self.lines = 0
        self.write({"meta": meta})

    def write(self, record):
        self.f.write(json.dumps(plain(record), separators=(",", ":"), allow_nan=False) + "\n")
        self.lines += 1

    def close(self):
        self.f.close()
