"""The caller's tensors as the C++ half reads and writes them: NumPy arrays
over the caller's own memory wherever dtype, device and layout allow, and
copies only where the caller allows them (copy_inputs=True).

The C++ half takes C-contiguous NumPy arrays in each dtype's storage
(_STORAGE): bf16 as its 16-bit patterns (uint16). A torch tensor on the CPU
is viewed through NumPy without a copy (bf16 through int16), any other
object with __dlpack__ through np.from_dlpack. Outputs come back in the
inputs' library: torch tensors when an input was one, NumPy arrays
otherwise, each allocated for its run and written by the run itself.
"""

import numbers
import sys

import numpy as np

from ._errors import _type_usage, _usage

# The NumPy array each dtype travels in between the two halves; bf16 as its
# 16-bit patterns.
_STORAGE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16, "i32": np.int32}

try:  # NumPy's bf16, when the optional package is installed.
    import ml_dtypes
    _NUMPY_BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    _NUMPY_BF16 = None


def _torch():
    """torch when the caller has imported it (hostir never imports it
    itself): without it no value can be a torch tensor."""
    return sys.modules.get("torch")


def _is_torch_tensor(value):
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


_TORCH_DTYPES = {}  # filled once torch is imported


def _torch_dtype(dtype):
    if not _TORCH_DTYPES:
        torch = _torch()
        _TORCH_DTYPES.update({"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
                              "bf16": torch.bfloat16, "i32": torch.int32})
    return _TORCH_DTYPES[dtype]


def _numpy_dtype(dtype):
    """The NumPy dtype that holds `dtype` exactly; None for bf16 without ml_dtypes."""
    if dtype == "bf16":
        return _NUMPY_BF16
    return np.dtype(_STORAGE[dtype])


def library_of(values):
    """"torch" when any of the values is a torch tensor, else "numpy"."""
    torch = _torch()
    if torch is not None:
        for value in values:
            if isinstance(value, torch.Tensor):
                return "torch"
    return "numpy"


def _torch_view(tensor):
    """A NumPy array over a CPU tensor's memory, bf16 as uint16 patterns."""
    torch = _torch()
    if tensor.requires_grad:
        tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(np.uint16)
    return tensor.numpy()


def _given_dtype(value, array):
    """How the caller's value names its dtype, for messages."""
    if _is_torch_tensor(value):
        return str(value.dtype)
    return str(array.dtype)


def _borrowed(value, writable):
    """(a NumPy array over the value's own memory, None), or (None, why)
    when the value has no memory hostir can read in place."""
    if isinstance(value, np.ndarray):
        return value, None
    if _is_torch_tensor(value):
        if value.device.type != "cpu":
            return None, f"the tensor is on {value.device}, and hostir reads host memory"
        try:
            return _torch_view(value), None
        except (RuntimeError, TypeError) as e:
            return None, f"torch cannot share its memory ({e})"
    if hasattr(value, "__dlpack__") and not writable:
        try:
            return np.from_dlpack(value), None
        except (RuntimeError, TypeError, BufferError) as e:
            return None, f"its DLPack export cannot be read by NumPy ({e})"
    if isinstance(value, (numbers.Number, list, tuple)):
        return None, f"a {type(value).__name__} is not a tensor"
    # The array interface shares memory; __array__ alone may make a copy.
    if hasattr(value, "__array_interface__"):
        return np.asarray(value), None
    return None, f"a {type(value).__name__} is not a tensor"


def _storage_of(decl, array):
    """The array as the declared dtype's storage without a copy, or None
    when its dtype differs."""
    if decl.dtype == "bf16":
        # A uint16 array holds integers, never bf16 patterns.
        return array.view(np.uint16) if _NUMPY_BF16 is not None and array.dtype == _NUMPY_BF16 else None
    return array if array.dtype == np.dtype(_STORAGE[decl.dtype]) else None


def _shape_error(what, decl, shape):
    extents = ", ".join(map(str, decl.shape))
    return _usage(f"{what} '{decl.name}': the array has shape {tuple(shape)}, "
                  f"the program declares {decl.dtype}[{extents}] (the global tensor)")


def _addressed(decl, tensor):
    """A torch tensor of the declared dtype, shape and layout as the C++ half
    takes it without a NumPy view: (address, dtype, shape, the tensor, which
    the tuple keeps alive); None when it is not one."""
    if (tensor.is_cpu and tensor.dtype == _torch_dtype(decl.dtype) and tensor.shape == decl.shape
            and tensor.is_contiguous()):
        return (tensor.data_ptr(), decl.dtype, decl.shape, tensor)
    return None


def as_array(buffer):
    """What the C++ half was given, as a NumPy array over the same memory."""
    return _torch_view(buffer[3]) if isinstance(buffer, tuple) else buffer


def input_array(decl, value, copy_inputs):
    """The input as the C++ half reads it: the caller's memory, or a copy
    in the declared storage when the caller allows it."""
    if _is_torch_tensor(value):
        addressed = _addressed(decl, value)
        if addressed is not None:
            return addressed
    array, why = _borrowed(value, writable=False)
    if array is not None and tuple(array.shape) != decl.shape:
        raise _shape_error("input", decl, array.shape)
    if array is not None and (_is_torch_tensor(value) and value.dtype == _torch_dtype(decl.dtype)):
        storage = array  # bf16 arrives as its patterns already
    else:
        storage = None if array is None else _storage_of(decl, array)
        if storage is None and array is not None:
            why = f"it is {_given_dtype(value, array)}, the program declares {decl.dtype}"
    if storage is not None and not storage.flags.c_contiguous:
        why = f"it is not contiguous (strides {storage.strides} bytes)"
        storage = None
    if storage is not None:
        return storage
    if not copy_inputs:
        raise _usage(f"input '{decl.name}': {why}; pass copy_inputs=True to let hostir copy it")
    return _converted(decl, value)


def _converted(decl, value):
    """A copy of the value in the declared storage (copy_inputs=True)."""
    if _is_torch_tensor(value):
        torch = _torch()
        value = value.detach().cpu()
        value = value.to(torch.float32) if value.dtype == torch.bfloat16 else value
        value = value.numpy()
    array = np.asarray(value)
    if _NUMPY_BF16 is not None and array.dtype == _NUMPY_BF16:
        array = array.astype(np.float32)
    if array.dtype.kind not in "biuf":
        raise _usage(f"input '{decl.name}': expected real numbers, got an array of {array.dtype}")
    if tuple(array.shape) != decl.shape:
        raise _shape_error("input", decl, array.shape)
    if decl.dtype == "bf16":
        return _round_to_bf16(array)
    if decl.dtype == "i32":
        return _indices(decl, array)
    return np.asarray(array, dtype=_STORAGE[decl.dtype], order="C")


def output_buffers(declared, library, out):
    """(the arrays the C++ half writes, what the caller receives, the names
    whose arrays need finishing after the run) for every output: the
    caller's own tensors for those in `out`, new ones in `library` for the
    rest."""
    outputs = [t for t in declared if not t.is_input]
    known = {t.name for t in outputs}
    for name in out:
        if name not in known:
            raise _usage(f"out: the program has no output named '{name}' (its outputs: {', '.join(sorted(known))})")
    arrays, results, unfinished = {}, {}, []
    for decl in outputs:
        if decl.name in out:
            arrays[decl.name] = _writable_storage(decl, out[decl.name])
            results[decl.name] = out[decl.name]
        elif library == "torch":
            tensor = _torch().empty(decl.shape, dtype=_torch_dtype(decl.dtype))
            arrays[decl.name], results[decl.name] = (tensor.data_ptr(), decl.dtype, decl.shape, tensor), tensor
        elif decl.dtype == "bf16" and _NUMPY_BF16 is not None:
            array = np.empty(decl.shape, dtype=_NUMPY_BF16)
            arrays[decl.name], results[decl.name] = array.view(np.uint16), array
        else:
            arrays[decl.name] = np.empty(decl.shape, dtype=_STORAGE[decl.dtype])
            results[decl.name] = arrays[decl.name]
            if decl.dtype == "bf16":
                unfinished.append(decl.name)
    return arrays, results, unfinished


def finish_outputs(results, unfinished):
    """bf16 outputs for NumPy without ml_dtypes come back as float32 holding
    the bf16 values exactly."""
    for name in unfinished:
        results[name] = _bf16_to_float32(results[name])
    return results


def _writable_storage(decl, value):
    """The caller's tensor for an output (out=), which the run writes: of
    the declared dtype and shape, contiguous and writable."""
    if _is_torch_tensor(value):
        addressed = _addressed(decl, value)
        if addressed is not None:
            return addressed
    array, why = _borrowed(value, writable=True)
    if array is None:
        raise _usage(f"out '{decl.name}': {why}")
    if tuple(array.shape) != decl.shape:
        raise _shape_error("out", decl, array.shape)
    if _is_torch_tensor(value) and value.dtype == _torch_dtype(decl.dtype):
        storage = array
    else:
        storage = _storage_of(decl, array)
    if storage is None:
        wanted = _numpy_dtype(decl.dtype)
        hint = "a torch.bfloat16 tensor or an ml_dtypes.bfloat16 array" if wanted is None else str(wanted)
        raise _usage(f"out '{decl.name}': it is {_given_dtype(value, array)}, the program declares {decl.dtype} "
                     f"({hint})")
    if not storage.flags.c_contiguous:
        raise _usage(f"out '{decl.name}': it is not contiguous (strides {storage.strides} bytes)")
    if not storage.flags.writeable:
        raise _usage(f"out '{decl.name}': it is read-only")
    return storage


def _indices(decl, array):
    """An i32 input: integers (or booleans), each within int32, never rounded from floats."""
    if array.dtype.kind not in "biu":
        raise _usage(f"input '{decl.name}' is i32 (indices): expected an integer array, got an array of {array.dtype}")
    limits = np.iinfo(np.int32)
    if array.size and array.dtype.kind != "b" and (array.min() < limits.min or array.max() > limits.max):
        raise _usage(f"input '{decl.name}' is i32 (indices): its values must lie within int32, "
                     f"got {array.min()} to {array.max()}")
    return np.asarray(array, dtype=np.int32, order="C")


def _round_to_bf16(array):
    """bf16 bit patterns (uint16) of the nearest bf16 values, ties to even,
    in the array's shape (0-d included)."""
    # Flat: NumPy's integer arithmetic on a 0-d array gives scalars of other types.
    shape, array = array.shape, array.reshape(-1)
    if array.dtype == np.float32:
        bits = np.ascontiguousarray(array).view(np.uint32)
    else:
        # Through float32 rounded to odd (toward zero, inexact results made
        # odd), so that the second rounding cannot round a tie it created.
        wide = np.asarray(array, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            nearest = wide.astype(np.float32)
            away = np.abs(nearest.astype(np.float64)) > np.abs(wide)
            truncated = np.where(away, np.nextafter(nearest, np.float32(0)), nearest).astype(np.float32)
            inexact = truncated.astype(np.float64) != wide
        bits = np.ascontiguousarray(truncated).view(np.uint32) | inexact.astype(np.uint32)
    bits = bits.astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    # NaN stays NaN (quiet), whatever its payload.
    is_nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(is_nan, (bits >> 16) | 0x0040, rounded).astype(np.uint16).reshape(shape)


def _bf16_to_float32(bits):
    return (bits.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(bits.shape)
