"""Argument validation shared by every layer of the package.

This is the lowest layer (``hcizz`` imports nothing from ``replica`` or
``validation``), so it is the single home of input checking: ``replica`` and
``validation`` import these helpers from here.

Every failure raises :class:`ValueError` whose message names the argument, the
offending value and the valid range, e.g. ``p must be an integer >= 2, got 1``.
"""
from __future__ import annotations

import numbers
import math

import numpy as np

__all__ = [
    "check_int", "check_real", "check_array", "check_rng", "check_real_mp",
    "check_memory", "memory_limit", "fmt_bytes", "MEMORY_FRACTION",
]


def _fmt(value):
    try:
        if isinstance(value, np.ndarray):
            return f"array(shape={value.shape})"
        if isinstance(value, np.generic):       # np.float64(1.0) -> 1.0, np.int64(3) -> 3
            value = value.item()
        return repr(value)
    except Exception:  # pragma: no cover - repr of exotic objects
        return object.__repr__(value)


def check_int(name, value, *, low=None, high=None):
    """Return ``value`` as a Python int, checking type and range.

    Accepts Python/numpy integers and floats with an exact integer value
    (``1e15`` is a valid ``p``); rejects bools, NaN, non-integral floats,
    strings and everything else with a ``ValueError`` naming ``name``.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : object
        Value to check.
    low, high : int, optional
        Inclusive bounds; ``None`` means unbounded on that side.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer in ``[low, high]``; the message names
        the argument, the value and the valid range.

    See Also
    --------
    hcizz.checks.check_real : The same check for real numbers and arrays.
    hcizz.checks.check_rng : The check of a random state.

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives

    Examples
    --------
    >>> print(repr(check_int("p", 1e3, low=2)))       # an integral float is accepted
    1000
    >>> try:
    ...     check_int("p", 1, low=2)
    ... except ValueError as err:
    ...     print(err)
    p must be an integer >= 2, got 1
    """
    rng_txt = _range_txt(low, high, integer=True)
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise ValueError(f"{name} must be an integer{rng_txt}, got {_fmt(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v) or v != math.floor(v):
            raise ValueError(f"{name} must be an integer{rng_txt}, got {_fmt(value)}")
        out = int(v)
    else:
        raise ValueError(f"{name} must be an integer{rng_txt}, got {_fmt(value)}")
    if (low is not None and out < low) or (high is not None and out > high):
        raise ValueError(f"{name} must be an integer{rng_txt}, got {_fmt(value)}")
    return out


def _range_txt(low, high, *, integer=False, low_open=False, high_open=False):
    if low is None and high is None:
        return ""
    if low is not None and high is not None:
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        return f" in {lb}{low:g}, {high:g}{hb}" if not integer else f" in [{low}, {high:g}]"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}" if not integer else f" >= {low}"
    return f" {'<' if high_open else '<='} {high:g}"


def check_real(name, value, *, low=None, high=None, low_open=False,
               high_open=False, allow_array=True):
    """Validate a real scalar or array; return it as a float or float ndarray.

    NaN, infinities outside the range, complex numbers, strings and objects are
    rejected with a ``ValueError`` naming ``name``, the value and the range.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : float or array_like
        Value to check.
    low, high : float, optional
        Bounds of the valid range; ``None`` means unbounded on that side.
    low_open, high_open : bool, optional
        Whether the corresponding bound is excluded (default: included).
    allow_array : bool, optional
        Whether a non-scalar array is accepted (default True).

    Returns
    -------
    float or ndarray
        A Python float for scalar input, a float ndarray otherwise.

    Raises
    ------
    ValueError
        If any element is NaN, non-real or outside the range.

    See Also
    --------
    hcizz.checks.check_int : The same check for integers.
    hcizz.checks.check_real_mp : The check for a high-precision code path.
    hcizz.checks.check_array : The check of an array's shape and finiteness.

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives

    Examples
    --------
    >>> print(check_real("kappa", [0.5, 1], low=0, high=1, low_open=True))
    [0.5 1. ]
    >>> try:
    ...     check_real("kappa", 1.5, low=0, high=1, low_open=True)
    ... except ValueError as err:
    ...     print(err)
    kappa must be a real number in (0, 1], got 1.5
    """
    rng_txt = _range_txt(low, high, low_open=low_open, high_open=high_open)
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise ValueError(f"{name} must be a real number{rng_txt}, got {_fmt(value)}")
    try:
        arr = np.asarray(value)
    except Exception:
        raise ValueError(f"{name} must be a real number{rng_txt}, got {_fmt(value)}") from None
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a real number{rng_txt}, got {_fmt(value)}")
    if arr.ndim and not allow_array:
        raise ValueError(f"{name} must be a scalar{rng_txt}, got an array of shape {arr.shape}")
    arr = arr.astype(float)
    bad = np.isnan(arr)
    if low is not None:
        bad |= (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad |= (arr >= high) if high_open else (arr > high)
    if np.any(bad):
        # the offending value as given (scalar) or the first bad element (array)
        first = _fmt(arr[bad].flat[0]) if arr.ndim else _fmt(value)
        raise ValueError(f"{name} must be a real number{rng_txt}, got {first}")
    return float(arr) if arr.ndim == 0 else arr


def check_array(name, value, *, ndim=None, finite=True):
    """Return ``value`` as a float ndarray with the given ``ndim``.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : array_like
        Value to convert.
    ndim : int, optional
        Required number of dimensions; ``None`` accepts any.
    finite : bool, optional
        Whether every element must be finite (default True).

    Returns
    -------
    ndarray
        ``value`` as a float array.

    Raises
    ------
    ValueError
        If ``value`` is not convertible to floats, has the wrong ``ndim`` or
        holds a non-finite value while ``finite`` is set.

    See Also
    --------
    hcizz.checks.check_real : The check of values in a range.

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives

    Examples
    --------
    >>> print(check_array("a", [1, 2], ndim=1))
    [1. 2.]
    >>> try:
    ...     check_array("a", [[1.0]], ndim=1)
    ... except ValueError as err:
    ...     print(err)
    a must be a 1-d array, got shape (1, 1)
    """
    try:
        arr = np.asarray(value, dtype=float)
    except Exception:
        raise ValueError(f"{name} must be a real array, got {_fmt(value)}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def check_rng(rng):
    """Return ``np.random.default_rng(rng)``; ``ValueError`` on a bad seed.

    Parameters
    ----------
    rng : None, int, SeedSequence or Generator
        Seed or generator; a ``Generator`` is returned unchanged.  Bools,
        floats and strings are refused.

    Returns
    -------
    numpy.random.Generator
        The generator.

    Raises
    ------
    ValueError
        If ``rng`` is not an accepted seed.

    See Also
    --------
    numpy.random.default_rng : The constructor it calls.
    hcizz.checks.check_int : The check of an integer argument.

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives

    Examples
    --------
    >>> print(f"{check_rng(0).random():.6f}")
    0.636962
    >>> try:
    ...     check_rng("x")
    ... except ValueError as err:
    ...     print(err)
    rng must be None, an int seed, a SeedSequence or a Generator, got 'x'
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_, float, str)):
        raise ValueError(f"rng must be None, an int seed, a SeedSequence or a Generator, got {rng!r}")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rng must be None, an int seed, a SeedSequence or a Generator, got {rng!r} ({exc})") from None


def check_real_mp(name, value, *, low=None, high=None, low_open=False, high_open=False):
    """Validate a real scalar for a high-precision (``dps``) code path.

    The value is returned as an ``mpmath.mpf`` at the *current* mpmath precision.
    Accepts ``mpmath.mpf``, ``fractions.Fraction``, ``decimal.Decimal``,
    decimal strings (``"0.1"``, ``"1e-400"``), Python/numpy integers and
    floats. Nothing is rounded through a float first: ``"0.1"`` and
    ``Fraction(1, 10)`` give the mpf nearest to 1/10 at the working precision,
    ``0.1`` (a float) gives the double's exact value. NaN, infinities outside
    the range, bools, complex numbers and other strings are rejected with a
    ``ValueError`` naming ``name``, the value and the range.
    Call it inside ``mpmath.workdps(...)``.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : mpf, Fraction, Decimal, str, int or float
        Value to check.
    low, high : float, optional
        Bounds of the valid range; ``None`` means unbounded on that side.
    low_open, high_open : bool, optional
        Whether the corresponding bound is excluded (default: included).

    Returns
    -------
    mpmath.mpf
        The value at the working precision.

    Raises
    ------
    ValueError
        If ``value`` is not a real number in the range.

    See Also
    --------
    hcizz.checks.check_real : The float counterpart.
    replica.alpha_c : Takes exact input on its ``dps=`` path.

    References
    ----------
    docs/reliability.md#numerics-at-the-edges-of-the-domain

    Examples
    --------
    Exact input is never rounded through a float:

    >>> import fractions
    >>> import mpmath
    >>> with mpmath.workdps(30):
    ...     print(check_real_mp("kappa", fractions.Fraction(1, 3), low=0, high=1))
    0.333333333333333333333333333333
    """
    import decimal
    import fractions

    import mpmath

    rng_txt = _range_txt(low, high, low_open=low_open, high_open=high_open)
    bad = ValueError(f"{name} must be a real number{rng_txt}, got {_fmt(value)}")
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise bad
    if isinstance(value, np.generic):
        value = value.item()
    try:
        if isinstance(value, mpmath.mpf):
            x = +value
        elif isinstance(value, fractions.Fraction):
            x = mpmath.mpf(value.numerator) / value.denominator
        elif isinstance(value, (decimal.Decimal, str)):
            text = str(value).strip()
            if not text or len(text) > 10000:
                raise bad
            float(text)  # same grammar as a float literal (no "1/3", no "0x1p3")
            x = mpmath.mpf(text)
        elif isinstance(value, numbers.Integral):
            x = mpmath.mpf(int(value))
        elif isinstance(value, float):
            x = mpmath.mpf(value)
        else:
            raise bad
    except (ValueError, TypeError, OverflowError):
        raise bad from None
    if mpmath.isnan(x):
        raise bad
    if low is not None and ((x <= low) if low_open else (x < low)):
        raise bad
    if high is not None and ((x >= high) if high_open else (x > high)):
        raise bad
    return x


#: Fraction of the physical memory one computation may plan to use (see :func:`memory_limit`).
MEMORY_FRACTION = 0.75

_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _physical_memory():
    import os

    try:
        n = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    return int(n) if n > 0 else None


def memory_limit():
    """Return the memory one computation may plan to use, and where the number comes from.

    The limit is :data:`MEMORY_FRACTION` of the physical memory
    (``os.sysconf``), or the bytes in the environment variable
    ``ASSOCMEM_MEMORY_LIMIT`` (suffixes ``K``, ``M``, ``G``, ``T`` for powers
    of 1024 allowed).

    Returns
    -------
    limit : float
        Bytes (``inf`` where the physical memory is unknown).
    description : str
        Where the limit comes from, for messages.

    Raises
    ------
    ValueError
        If ``ASSOCMEM_MEMORY_LIMIT`` is set but not a positive number of bytes.

    See Also
    --------
    hcizz.checks.check_memory : Refuse an allocation above this limit.
    hcizz.checks.fmt_bytes : Format a byte count for a message.

    References
    ----------
    docs/reliability.md#sizes

    Examples
    --------
    >>> import os
    >>> os.environ["ASSOCMEM_MEMORY_LIMIT"] = "2G"
    >>> memory_limit()
    (2147483648.0, 'ASSOCMEM_MEMORY_LIMIT')
    >>> del os.environ["ASSOCMEM_MEMORY_LIMIT"]
    """
    import os

    raw = os.environ.get("ASSOCMEM_MEMORY_LIMIT", "")
    env = raw.strip().upper().removesuffix("IB").removesuffix("B")
    if env:
        num, suf = (env[:-1], env[-1]) if env[-1] in _SUFFIX else (env, "")
        try:
            val = float(num) * _SUFFIX[suf]
        except ValueError:
            raise ValueError(f"ASSOCMEM_MEMORY_LIMIT must be a number of bytes such as 8G, got {raw!r}") from None
        if not val > 0:
            raise ValueError(f"ASSOCMEM_MEMORY_LIMIT must be positive, got {raw!r}")
        return val, "ASSOCMEM_MEMORY_LIMIT"
    phys = _physical_memory()
    if phys is None:
        return float("inf"), "physical memory unknown"
    return MEMORY_FRACTION * phys, f"{MEMORY_FRACTION:.0%} of the {fmt_bytes(phys)} of physical memory"


def fmt_bytes(n):
    """Return ``n`` bytes as a short human-readable text.

    Parameters
    ----------
    n : float
        A number of bytes.

    Returns
    -------
    str
        ``"512 B"``, ``"1.5 KiB"``, ... ``"93.9 TiB"`` (powers of 1024).

    See Also
    --------
    hcizz.checks.check_memory : Names sizes in its messages with this format.
    hcizz.checks.memory_limit : The bytes one allocation may take.

    References
    ----------
    docs/reliability.md#sizes

    Examples
    --------
    >>> fmt_bytes(1536)
    '1.5 KiB'
    """
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1024
    return f"{n:.3g} EiB"  # pragma: no cover


def check_memory(nbytes, what):
    """Raise ``ValueError`` before allocating if ``nbytes`` exceeds :func:`memory_limit`.

    Every entry point that allocates arrays whose size the user chooses
    (``samples``, ``d``, ``p``, ...) calls this first with a *lower bound* of
    what must exist at once, so a refusal is never wrong.

    Parameters
    ----------
    nbytes : float
        Lower bound of the memory the computation needs at once.
    what : str
        The computation and its sizes, e.g. ``"energy_G samples=1e11 p=10"``.

    Returns
    -------
    float
        ``nbytes`` (when it fits).

    Raises
    ------
    ValueError
        Naming ``what``, the need and the limit.

    See Also
    --------
    hcizz.checks.memory_limit : The limit checked against.
    hcizz.checks.fmt_bytes : Format of the sizes in the message.
    hcizz.checks.check_int : Range check of a size-like argument.

    References
    ----------
    docs/reliability.md#sizes

    Examples
    --------
    >>> check_memory(1e3, "a tiny array")
    1000.0
    >>> check_memory(1e30, "a huge array d=1e15")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: a huge array d=1e15 needs at least ... of memory, more than the limit ...
    """
    nbytes = float(nbytes)
    limit, desc = memory_limit()
    if not nbytes <= limit:
        raise ValueError(f"{what} needs at least {fmt_bytes(nbytes)} of memory, more than the limit "
                         f"{fmt_bytes(limit)} ({desc}); use smaller sizes")
    return nbytes
