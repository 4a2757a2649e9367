"""The fetch path's Ed25519 verification against RFC 8032 and pycryptodome: both of its
implementations, the compiled one (ndnsci/ndn/_hotloop.c, ``ed25519.verify_c``) and the pure-Python
one (ndnsci/ndn/ed25519.py, ``ed25519.verify_py``), run every case.

What they accept, pycryptodome accepts: on honest signatures all say yes, on tampered ones
all say no, and on the malformed ones below both refuse what pycryptodome lets through.
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import subprocess
import sys
from collections.abc import Callable

import pytest
from Cryptodome.PublicKey import ECC
from Cryptodome.Signature import eddsa
from hypothesis import given, settings
from hypothesis import strategies as st

from ndnsci.base import environment
from ndnsci.ndn import ed25519, keys
from ndnsci.ndn.ed25519 import L, P

Verify = Callable[[bytes, bytes, bytes], bool]


def compiled(public: bytes, message: bytes, signature: bytes) -> bool:
    """The extension's verify: fails (does not skip) when the extension was not built."""
    assert ed25519.verify_c is not None, "make setup / pip install did not build _hotloop.c"
    return ed25519.verify_c(public, message, signature)


IMPLEMENTATIONS = pytest.mark.parametrize(
    "verify", [compiled, ed25519.verify_py], ids=["c", "python"]
)

# RFC 8032, 7.1: (public key, message, signature)
RFC8032 = [
    (
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
    (  # SHA(abc): the message is SHA-512("abc")
        "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
        hashlib.sha512(b"abc").hexdigest(),
        "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704",
    ),
]  # fmt: skip

# the canonical encodings of the 8 points of small order
SMALL_ORDER = [
    "0100000000000000000000000000000000000000000000000000000000000000",  # identity
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
    "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
    "0000000000000000000000000000000000000000000000000000000000000080",  # order 4
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8 (4 points)
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
]


def theirs(public: bytes, message: bytes, signature: bytes) -> bool:
    """pycryptodome's verdict."""
    try:
        eddsa.new(eddsa.import_public_key(public), "rfc8032").verify(message, signature)
    except ValueError:
        return False
    return True


def signed(seed: bytes, message: bytes) -> tuple[bytes, bytes]:
    key = eddsa.import_private_key(seed)
    public = bytes(key.public_key().export_key(format="raw"))
    return public, bytes(eddsa.new(key, "rfc8032").sign(message))


def encode(point: ed25519.Point) -> bytes:
    return ed25519.encode_point(point)


def cofactored(public: bytes, message: bytes, signature: bytes) -> bool:
    """RFC 8032's permitted cofactored equation ``[8S]B = [8]R + [8k]A``, with no checks."""
    a, r = ed25519.decode_point(public), ed25519.decode_point(signature[:32])
    assert a is not None and r is not None
    s = int.from_bytes(signature[32:], "little")
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % L
    left = times(8 * s, ed25519.base_point())
    right = ed25519._add(times(8, r), times(8 * k, a))
    return encode(left) == encode(right)


def times(scalar: int, point: ed25519.Point) -> ed25519.Point:
    """[scalar]point, by plain double-and-add (independent of the verifier's NAF)."""
    result = ed25519._IDENTITY
    while scalar:
        if scalar & 1:
            result = ed25519._add(result, point)
        point = ed25519._double(point)
        scalar >>= 1
    return result


def test_the_constants_are_the_curves() -> None:
    d, sqrt_m1 = ed25519.D, ed25519.SQRT_M1
    assert d == -121665 * pow(121666, P - 2, P) % P
    assert sqrt_m1 == pow(2, (P - 1) // 4, P) and sqrt_m1 * sqrt_m1 % P == P - 1
    x, y, _, _ = ed25519.base_point()
    assert y == 4 * pow(5, P - 2, P) % P and x % 2 == 0  # RFC 8032: y = 4/5, x positive (even)
    assert (-x * x + y * y - 1 - ed25519.D * x * x * y * y) % P == 0  # on the curve


@IMPLEMENTATIONS
@pytest.mark.parametrize(("public", "message", "signature"), RFC8032)
def test_rfc8032_vectors(verify: Verify, public: str, message: str, signature: str) -> None:
    args = bytes.fromhex(public), bytes.fromhex(message), bytes.fromhex(signature)
    assert verify(*args) and theirs(*args)
    tampered = bytes.fromhex(message) + b"\x00"
    assert not verify(args[0], tampered, args[2])
    # any bytes-like arguments, as the Python one takes them
    assert verify(bytearray(args[0]), memoryview(args[1]), bytearray(args[2]))


@IMPLEMENTATIONS
@settings(max_examples=40, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), message=st.binary(max_size=300))
def test_honest_signatures_verify_as_pycryptodome_says(
    verify: Verify, seed: bytes, message: bytes
) -> None:
    public, signature = signed(seed, message)
    assert verify(public, message, signature)
    assert not verify(public, message + b"x", signature)
    assert not verify(public[:31] + bytes([public[31] ^ 0x80]), message, signature)


@IMPLEMENTATIONS
@settings(max_examples=60, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    message=st.binary(max_size=64),
    bit=st.integers(min_value=0, max_value=64 * 8 - 1),
)
def test_a_flipped_bit_is_refused_by_both(
    verify: Verify, seed: bytes, message: bytes, bit: int
) -> None:
    public, signature = signed(seed, message)
    tampered = bytearray(signature)
    tampered[bit // 8] ^= 1 << (bit % 8)
    assert not verify(public, message, bytes(tampered))
    assert not theirs(public, message, bytes(tampered))


@IMPLEMENTATIONS
@settings(max_examples=60, deadline=None)
@given(
    public=st.binary(min_size=32, max_size=32),
    signature=st.binary(min_size=64, max_size=64),
    message=st.binary(max_size=16),
)
def test_what_it_accepts_pycryptodome_accepts(
    verify: Verify, public: bytes, signature: bytes, message: bytes
) -> None:
    if verify(public, message, signature):
        assert theirs(public, message, signature)


@IMPLEMENTATIONS
def test_wrong_lengths_are_refused(verify: Verify) -> None:
    public, signature = signed(bytes(32), b"m")
    assert not verify(public[:31], b"m", signature)
    assert not verify(public + b"\x00", b"m", signature)
    assert not verify(public, b"m", signature[:63])
    assert not verify(public, b"m", signature + b"\x00")


@IMPLEMENTATIONS
def test_s_not_below_the_group_order_is_refused(verify: Verify) -> None:
    public, signature = signed(bytes(range(32)), b"m")
    s = int.from_bytes(signature[32:], "little")
    malleated = signature[:32] + (s + L).to_bytes(32, "little")  # the same S, mod L
    assert verify(public, b"m", signature)
    assert not verify(public, b"m", malleated)
    assert not theirs(public, b"m", malleated)


def test_non_canonical_encodings_do_not_decode() -> None:
    # y >= p: y = p + 1 is another encoding of y = 1 (the identity)
    assert ed25519.decode_point((P + 1).to_bytes(32, "little")) is None
    # x = 0 with its sign bit set: "-0" for the identity and for the point of order 4
    assert ed25519.decode_point(bytes.fromhex("01" + "00" * 30 + "80")) is None
    assert ed25519.decode_point(bytes.fromhex("ec" + "ff" * 30 + "ff")) is None
    # a y with no x on the curve
    assert ed25519.decode_point((2).to_bytes(32, "little")) is None
    base = encode(ed25519.base_point())
    assert ed25519.decode_point(base) is not None


@pytest.mark.parametrize("encoded", SMALL_ORDER)
def test_small_order_points_are_recognised(encoded: str) -> None:
    point = ed25519.decode_point(bytes.fromhex(encoded))
    assert point is not None and ed25519.is_small_order(point)
    assert encode(point) == bytes.fromhex(encoded)
    assert not ed25519.is_small_order(ed25519.base_point())


@IMPLEMENTATIONS
def test_the_identity_key_forgery_is_refused(verify: Verify) -> None:
    """With the identity as public key, R = [s]B verifies any message under the cofactored
    equation (pycryptodome 3.24 accepts it); refused here (a small-order key)."""
    identity = bytes.fromhex(SMALL_ORDER[0])
    s = 123456789
    forged = encode(times(s, ed25519.base_point())) + s.to_bytes(32, "little")
    for message in (b"", b"any message"):
        assert cofactored(identity, message, forged)
        assert not verify(identity, message, forged)


@IMPLEMENTATIONS
def test_a_small_order_r_is_refused(verify: Verify) -> None:
    public, _ = signed(bytes(32), b"m")
    for encoded in SMALL_ORDER[:3]:
        forged = bytes.fromhex(encoded) + bytes(32)
        assert not verify(public, b"m", forged)


@IMPLEMENTATIONS
def test_a_key_with_a_torsion_component_needs_the_cofactorless_equation(verify: Verify) -> None:
    """A' = A + T (T of order 8): a signature valid under the cofactored equation
    (``[8S]B = [8]R + [8k]A'``, pycryptodome's) is refused by the cofactorless one unless the
    torsion vanishes (8 divides k)."""
    secret, r = 0x1234567890ABCDEF, 0xFEDCBA0987654321
    torsion = ed25519.decode_point(bytes.fromhex(SMALL_ORDER[4]))
    assert torsion is not None
    public = encode(ed25519._add(times(secret, ed25519.base_point()), torsion))
    big_r = encode(times(r, ed25519.base_point()))
    for message in (b"a", b"b", b"c", b"d"):
        k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % L
        signature = big_r + ((r + k * secret) % L).to_bytes(32, "little")
        assert cofactored(public, message, signature)
        assert verify(public, message, signature) == (k % 8 == 0)


@IMPLEMENTATIONS
def test_a_small_order_r_that_satisfies_the_equation_is_refused(verify: Verify) -> None:
    """A' = [a]B + T (T of order 8) is not of small order; with R the identity and a message
    whose k is a multiple of 8, S = k a makes [S]B - [k]A' = -[k]T = R: the equation holds,
    only R's small order refuses it."""
    secret = 0x1234567890ABCDEF
    torsion = ed25519.decode_point(bytes.fromhex(SMALL_ORDER[4]))
    assert torsion is not None
    public = encode(ed25519._add(times(secret, ed25519.base_point()), torsion))
    big_r = bytes.fromhex(SMALL_ORDER[0])
    found = 0
    for i in range(200):
        message = b"m%d" % i
        k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % L
        if k % 8:
            continue
        signature = big_r + (k * secret % L).to_bytes(32, "little")
        check = ed25519._add(
            times(k * secret % L, ed25519.base_point()),
            ed25519._negate(times(k, ed25519.decode_point(public) or ed25519._IDENTITY)),
        )
        assert encode(check) == big_r  # the cofactorless equation holds
        assert not verify(public, message, signature)
        found += 1
    assert found >= 5


NON_CANONICAL_Y = [y for y in range(19) if ed25519.decode_point(y.to_bytes(32, "little"))]


@IMPLEMENTATIONS
@pytest.mark.parametrize("y", NON_CANONICAL_Y)
@pytest.mark.parametrize("sign", [0, 1])
def test_non_canonical_public_keys_are_refused(verify: Verify, y: int, sign: int) -> None:
    """y + p (y < 19) encodes the same point as y: refused as a key, whatever the signature
    (and -0, x = 0 with the sign bit set, for y = 1 and y = p - 1)."""
    encoded = (y + P | sign << 255).to_bytes(32, "little")
    assert ed25519.decode_point(encoded) is None
    public, signature = signed(bytes(32), b"m")
    assert verify(public, b"m", signature)
    assert not verify(encoded, b"m", signature)
    for minus_zero in ("01" + "00" * 30 + "80", "ec" + "ff" * 30 + "ff"):
        assert not verify(bytes.fromhex(minus_zero), b"m", signature)


def test_the_compiled_decoder_agrees_with_decode_point() -> None:
    """Non-canonical encodings of a public key cannot be told apart by a verdict (a signature
    under one needs the point's discrete logarithm, and x = 0 is of small order): the compiled
    decoder is checked alone, against the Python one, on every y >= p with both signs, -0,
    the small-order points, B and random encodings."""
    from ndnsci.ndn import _hotloop

    encodings = [(y + P | sign << 255).to_bytes(32, "little") for y in range(19) for sign in (0, 1)]
    encodings += [(y | 1 << 255).to_bytes(32, "little") for y in (1, P - 1)]  # -0
    encodings += [bytes.fromhex(e) for e in SMALL_ORDER] + [encode(ed25519.base_point())]
    rng = random.Random(6)
    encodings += [rng.randbytes(32) for _ in range(1000)]
    decoded = 0
    for encoded in encodings:
        expected = ed25519.decode_point(encoded) is not None
        assert _hotloop.ed25519_decodes(encoded) == expected, encoded.hex()
        decoded += expected
    assert 400 < decoded < 600  # about half of the random y have an x
    assert not _hotloop.ed25519_decodes(bytes(31))


@functools.cache
def _thousands() -> list[tuple[bytes, bytes, bytes, bool]]:
    """1000 honest signatures on messages of 0 to 299 bytes (SHA-512's padding on both sides
    of a block's end: R || A || M is 64 bytes more), each also with one bit flipped in the
    message, the key, R or S; then 500 random keys and signatures: (public, message,
    signature, honest), made once per process."""
    rng = random.Random(14)
    cases: list[tuple[bytes, bytes, bytes, bool]] = []
    for i in range(1000):
        message = rng.randbytes(i % 300)
        public, signature = signed(rng.randbytes(32), message)
        cases.append((public, message, signature, True))
        where = rng.choice(
            ("message", "public", "signature") if message else ("public", "signature")
        )
        parts = {
            "public": bytearray(public),
            "message": bytearray(message),
            "signature": bytearray(signature),
        }
        bit = rng.randrange(len(parts[where]) * 8)
        parts[where][bit // 8] ^= 1 << (bit % 8)
        cases.append(
            (bytes(parts["public"]), bytes(parts["message"]), bytes(parts["signature"]), False)
        )
    for _ in range(500):
        cases.append(
            (rng.randbytes(32), rng.randbytes(rng.randrange(40)), rng.randbytes(64), False)
        )
    return cases


THOUSANDS_PARTS = 5


# in 5 parts so that pytest-xdist spreads them: 2,500 verifications by the pure-Python reference
# (~10 ms each) are the point of the test, ~25 s of CPU on a quiet machine
@pytest.mark.parametrize("part", range(THOUSANDS_PARTS))
def test_thousands_of_signatures_c_python_and_pycryptodome_agree(part: int) -> None:
    """The cases of :func:`_thousands` (every fifth, from ``part``): the three verdicts agree,
    honest signatures verify and no other does (2,500 cases: 1000 True, 1500 False in all)."""
    assert ed25519.verify_c is not None, "make setup / pip install did not build _hotloop.c"
    cases = _thousands()
    assert len(cases) == 2500 and sum(honest for *_, honest in cases) == 1000
    verdicts = {True: 0, False: 0}
    expected = {True: 0, False: 0}
    for public, message, signature, honest in cases[part::THOUSANDS_PARTS]:
        c_says = ed25519.verify_c(public, message, signature)
        assert c_says == ed25519.verify_py(public, message, signature), (public, message, signature)
        assert c_says == theirs(public, message, signature), (public, message, signature)
        verdicts[c_says] += 1
        expected[honest] += 1
    assert verdicts == expected


def test_the_compiled_verify_is_the_default_and_the_switch_selects_python() -> None:
    assert ed25519.verify_c is not None, "make setup / pip install did not build _hotloop.c"
    assert ed25519.verify is ed25519.verify_c or environment.hotloop() == "python"
    code = "from ndnsci.ndn import ed25519; print(ed25519.verify.__name__)"
    for value, expected in (
        ("python", "verify_py"),
        ("auto", "ed25519_verify"),
        ("c", "ed25519_verify"),
    ):
        env = {**os.environ, "NDNSCI_HOTLOOP": value}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected


def test_without_the_extension_verify_is_the_python_one() -> None:
    code = (
        "import sys; sys.modules['ndnsci.ndn._hotloop'] = None\n"
        "from ndnsci.ndn import ed25519\n"
        "print(ed25519.verify.__name__, ed25519.verify_c)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["verify_py", "None"]


def test_keys_verify_uses_it_and_agrees_with_signing() -> None:
    key_pem = ECC.generate(curve="ed25519").export_key(format="PEM").encode()
    key = keys.PublisherKey("t", key_pem)
    signature = key.sign(b"metadata")
    assert keys.verify(key.public, b"metadata", signature)
    assert not keys.verify(key.public, b"metadatA", signature)
    assert not keys.verify(b"\x00" * 31, b"metadata", signature)
