"""DLPack and __cuda_array_interface__ for memory NumPy cannot describe: the
cuda backend's device buffers (cs_env_device_buffers). Host buffers need none
of this: they are NumPy arrays, and NumPy speaks DLPack itself.

DLPack (https://dmlc.github.io/dlpack/latest/c_api.html) is a C ABI: a
"dltensor" PyCapsule holding a DLManagedTensor, whose deleter the consumer
calls when it is done. The structs below are DLPack's, version 0.8.
"""
import ctypes

import cffi
import numpy as np

_ffi = cffi.FFI()
_ffi.cdef("""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data; DLDevice device; int32_t ndim; DLDataType dtype;
    int64_t *shape; int64_t *strides; uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor; void *manager_ctx; void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
""")

CPU, CUDA = 1, 2                     # DLDeviceType
_CODES = {"f": 2, "i": 0, "u": 1, "b": 6}   # kDLFloat, kDLInt, kDLUInt, kDLBool

# Tensors handed out and not yet deleted by their consumer, by address.
_alive = {}


@_ffi.callback("void(DLManagedTensor *)")
def _deleter(managed):
    _alive.pop(int(_ffi.cast("uintptr_t", managed)), None)


# The destructor gets a capsule that is being destroyed: a raw pointer, never a
# Python object (ctypes would take a reference to it and destroy it twice).
_capsule_destructor_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _capsule_destructor_type]
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_capsule_destructor_type
def _capsule_destructor(capsule):
    # A capsule no consumer took (still named "dltensor") frees its tensor itself.
    if _PyCapsule_IsValid(capsule, b"dltensor"):
        address = _PyCapsule_GetPointer(capsule, b"dltensor")
        _alive.pop(address, None)


class DeviceArray:
    """An array of library memory at `address` on `device` (CPU or CUDA, ordinal
    device_id), shaped and strided (in elements) as given, of NumPy dtype `dtype`.
    It keeps `owner` (the environment's handle) alive while it or a tensor made
    from it lives."""

    def __init__(self, owner, address, shape, strides, dtype, device_type, device_id=0):
        self.owner, self.address = owner, int(address)
        self.shape, self.strides_elements = tuple(shape), tuple(strides)
        self.dtype = np.dtype(dtype)
        self.device_type, self.device_id = device_type, device_id

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)

    def __dlpack__(self, stream=None, **kwargs):
        # cartsim synchronizes before returning (cartsim.h): nothing is pending on any stream.
        managed = _ffi.new("DLManagedTensor *")
        ndim = len(self.shape)
        shape = _ffi.new("int64_t[]", self.shape)
        strides = _ffi.new("int64_t[]", self.strides_elements)
        t = managed.dl_tensor
        t.data = _ffi.cast("void *", self.address)
        t.device.device_type, t.device.device_id = self.device_type, self.device_id
        t.ndim = ndim
        t.dtype.code, t.dtype.bits, t.dtype.lanes = _CODES[self.dtype.kind], 8 * self.dtype.itemsize, 1
        t.shape, t.strides, t.byte_offset = shape, strides, 0
        managed.deleter = _deleter
        address = int(_ffi.cast("uintptr_t", managed))
        _alive[address] = (managed, shape, strides, self.owner)
        return _PyCapsule_New(address, b"dltensor", _capsule_destructor)

    @property
    def __cuda_array_interface__(self):
        if self.device_type != CUDA:
            raise AttributeError("__cuda_array_interface__: not device memory")
        item = self.dtype.itemsize
        return {"shape": self.shape, "strides": tuple(s * item for s in self.strides_elements),
                "typestr": self.dtype.str, "data": (self.address, False), "version": 3, "stream": None}
