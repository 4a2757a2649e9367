"""Ed25519 signature verification (RFC 8032, section 5.1.7) for the fetch path.

pycryptodome verifies in ~0.1 ms, but importing it costs a fetch ~17 ms before its first byte
(ctypes, GMP, its ASN.1 and ECC modules). :func:`verify` is the compiled extension's
(``ndnsci/ndn/_hotloop.c``, ``ed25519_verify``: ~1.0 M instructions, ~0.08 ms), loaded with
the consumer's hot loop anyway; :func:`verify_py`, the same in pure Python here (~20 M
instructions, 2-10 ms depending on the load), is used when the extension was not built or
``NDNSCI_HOTLOOP=python`` (read once, at import). Signing stays pycryptodome's
(:mod:`ndnsci.ndn.keys`).

Stricter than RFC 8032 requires, and than pycryptodome: refused are an ``S`` that is not below
the group order L, point encodings that are not canonical (``y >= p``, or ``x = 0`` with its
sign bit set), small-order public keys and ``R`` (which let a forger satisfy the equation for
any message), and the equation is checked without the cofactor (``[S]B = R + [k]A``, which
implies pycryptodome's ``[8S]B = [8]R + [8k]A``). So a signature this module accepts,
pycryptodome accepts; ``tests/ndn/test_ndn_ed25519.py`` checks the three (C, Python,
pycryptodome) on random keys and messages, RFC 8032's vectors and malformed signatures and keys.

Public values only: there is no secret here to leak through timing.
"""

from __future__ import annotations

from collections.abc import Callable

from ndnsci.base import environment, hashes

try:  # the compiled extension (ndnsci/ndn/_hotloop.c), built by `pip install`
    from ndnsci.ndn import _hotloop
except ImportError:  # pragma: no cover - installed without a C compiler
    _hotloop = None  # type: ignore[assignment]

# The curve's constants, as numbers (computing them is three modular exponentiations at every
# import; tests/ndn/test_ndn_ed25519.py checks them against their definitions)
P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493  # the order of the base point
D = 37095705934669439343138083508754565189542113879843219016388785533085940283555  # -121665/121666
SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752  # sqrt(-1)
_D2 = 2 * D % P

_BASE_Y = 46316835694926478169428394003475163141307993866256225615783033603165251855960  # 4/5
_BASE_X = 15112221349535400772501151409588531511454012693041857206046113283949847762202

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T): x = X/Z, y = Y/Z, xy = T/Z
_IDENTITY: Point = (0, 1, 1, 0)
_WINDOW = 5  # the width of the scalars' NAF: 8 precomputed odd multiples per point
_base_table: list[Point] = []  # B, 3B, ... (2^(w-1) - 1)B, made by the first verification


def verify_py(public: bytes, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` is ``public``'s Ed25519 signature (pure Ed25519, no context)
    of ``message``; False for any other input, malformed ones included."""
    if len(public) != 32 or len(signature) != 64:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= L:
        return False
    a = decode_point(public)
    if a is None or is_small_order(a):
        return False
    digest = hashes.sha512(64 + len(message))(signature[:32] + public + message).digest()
    k = int.from_bytes(digest, "little") % L
    check = _double_scalar(s, k, _negate(a))  # [S]B + [k](-A), which must be R
    # R is not decoded (a square root, ~9 % of a verification): the encoding of a point is
    # canonical and on the curve, so R's bytes equal it only when R is a canonical encoding of
    # that very point, which is then R, and must not be of small order
    return encode_point(check) == signature[:32] and not is_small_order(check)


#: the compiled verify, the same function (None when the extension was not built)
verify_c: Callable[[bytes, bytes, bytes], bool] | None = (
    None if _hotloop is None else _hotloop.ed25519_verify
)

#: the verification the fetch uses: the compiled one unless it is missing or
#: ``NDNSCI_HOTLOOP=python`` (the consumer's switch, read once here)
verify: Callable[[bytes, bytes, bytes], bool] = (
    verify_py if verify_c is None or environment.hotloop() == "python" else verify_c
)


def decode_point(encoded: bytes) -> Point | None:
    """The point of a 32-byte encoding (RFC 8032, 5.1.3); None when it is not on the curve or
    not canonical."""
    if len(encoded) != 32:
        return None
    number = int.from_bytes(encoded, "little")
    sign = number >> 255
    y = number & ((1 << 255) - 1)
    if y >= P:
        return None
    y2 = y * y % P
    u = (y2 - 1) % P
    v = (D * y2 + 1) % P
    v3 = v * v * v % P
    x = u * v3 % P * pow(u * v3 * v3 * v % P, (P - 5) // 8, P) % P
    vx2 = v * x * x % P
    if vx2 == (-u) % P:
        x = x * SQRT_M1 % P
    elif vx2 != u:
        return None  # no square root: not on the curve
    if x == 0 and sign:
        return None  # -0: a second encoding of the same point
    if x & 1 != sign:
        x = P - x
    return (x, y, 1, x * y % P)


def encode_point(point: Point) -> bytes:
    x, y, z, _ = point
    inverse = pow(z, P - 2, P)
    x, y = x * inverse % P, y * inverse % P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def is_small_order(point: Point) -> bool:
    """True for the 8 points whose order divides the cofactor (the identity included)."""
    for _ in range(3):
        point = _double(point)
    x, y, z, _ = point
    return x == 0 and y == z


def base_point() -> Point:
    return (_BASE_X, _BASE_Y, 1, _BASE_X * _BASE_Y % P)


# --- arithmetic on the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 --------------------------


def _add(p: Point, q: Point) -> Point:
    """p + q (add-2008-hwcd-3, as RFC 8032's reference code)."""
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = t1 * _D2 % P * t2 % P
    d = 2 * z1 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _double(p: Point) -> Point:
    """2p (dbl-2008-hwcd)."""
    x1, y1, z1, _ = p
    a = x1 * x1 % P
    b = y1 * y1 % P
    c = 2 * z1 * z1 % P
    h = a + b
    e = h - (x1 + y1) * (x1 + y1) % P
    g = a - b
    f = c + g
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _negate(p: Point) -> Point:
    x, y, z, t = p
    return ((P - x) % P, y, z, (P - t) % P)


def _odd_multiples(p: Point) -> list[Point]:
    """p, 3p, 5p, ... (2^(w-1) - 1)p."""
    twice = _double(p)
    table = [p]
    for _ in range((1 << (_WINDOW - 2)) - 1):
        table.append(_add(table[-1], twice))
    return table


def _naf(k: int) -> list[int]:
    """The width-w non-adjacent form of ``k``, least significant digit first: odd digits in
    (-2^(w-1), 2^(w-1)), at least w-1 zeros after each non-zero one."""
    digits = []
    full, half = 1 << _WINDOW, 1 << (_WINDOW - 1)
    while k:
        if k & 1:
            digit = k & (full - 1)
            if digit >= half:
                digit -= full
            k -= digit
        else:
            digit = 0
        digits.append(digit)
        k >>= 1
    return digits


def _double_scalar(s: int, k: int, q: Point) -> Point:
    """[s]B + [k]q, the two sums interleaved (Straus), each scalar in NAF."""
    if not _base_table:
        _base_table.extend(_odd_multiples(base_point()))
    q_table = _odd_multiples(q)
    s_digits, k_digits = _naf(s), _naf(k)
    s_digits += [0] * (len(k_digits) - len(s_digits))
    k_digits += [0] * (len(s_digits) - len(k_digits))
    result = _IDENTITY
    for i in range(len(s_digits) - 1, -1, -1):
        result = _double(result)
        for digit, table in ((s_digits[i], _base_table), (k_digits[i], q_table)):
            if digit > 0:
                result = _add(result, table[digit >> 1])
            elif digit < 0:
                result = _add(result, _negate(table[-digit >> 1]))
    return result
