"""Frames as PNG: small, fast, and named by their pixels.

A 1080x2400 frame is 7.8 MB of rows. We write the PNG ourselves — rows with filter byte 0
(screens of flat colour and text compress as well unfiltered, and Pillow spends much of its
time choosing filters), one zlib stream, the three chunks PNG requires — and deflate it in
bands of 64 rows, each band on its own (a full flush ends it, so no band refers to another).
Consecutive screens share most of their bands (the status bar, an app bar, a list a field
above the one being typed into), and a band compressed once is reused by every later frame
that holds the same rows, in any episode of the process. The stream stays one standard zlib
stream that any PNG reader inflates.

Measured on the default run's distinct frames in the order a worker meets them
(benchmarks/bench_speed.py prints the comparison): zlib-ng level 6 in cached bands, 89 kB
in 3.7 ms a frame; the same level on whole frames 90 kB in 9.3 ms; ISA-L level 1 (before)
122 kB in 1.4 ms; libdeflate level 5 78 kB in 12 ms. The run's frames are stored, so their
size matters as much as the time; banding gives both.

A frame is named by a 128-bit xxh3 hash of its size and rows (0.2 ms; SHA-256 took 4.7). Names
never come from the PNG bytes: one deflater's bytes may differ between machines (ISA-L's
even differed between the worker processes of one run).
"""

from __future__ import annotations

import struct
import threading
import zlib

import numpy as np
import xxhash
from PIL import Image
from zlib_ng import zlib_ng

LEVEL = 6
BAND_ROWS = 64
BAND_BUDGET = 32 << 20  # compressed bands kept per process (a few thousand)
SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ZLIB_HEADER = b"\x78\x9c"  # deflate, 32 KB window, default-level flag
_FINAL_EMPTY_BLOCK = b"\x03\x00"  # a final fixed-Huffman block with no data


class _BandCache:
    """Deflated bands by their content: (compressed bytes, adler32 and length of the rows).

    Bounded by bytes; the oldest entries go first. Lookups take no lock (a dict read is atomic
    in CPython); insertions and evictions do.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.items: dict[bytes, tuple[bytes, int, int]] = {}
        self.lock = threading.Lock()

    def get(self, key: bytes) -> tuple[bytes, int, int] | None:
        return self.items.get(key)

    def put(self, key: bytes, value: tuple[bytes, int, int]) -> None:
        with self.lock:
            if key in self.items:
                return
            self.items[key] = value
            self.used += len(value[0])
            while self.used > self.budget:
                oldest = next(iter(self.items))
                self.used -= len(self.items.pop(oldest)[0])


_BANDS = _BandCache(BAND_BUDGET)


def encode_frame(image: Image.Image) -> tuple[bytes, str]:
    """A frame as PNG, and its name (a hash of its size and pixels)."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    width, height = rgb.size
    pixels = np.asarray(rgb).reshape(height, width * 3)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    name = xxhash.xxh3_128(header)
    name.update(pixels.data)
    parts = [_ZLIB_HEADER]
    adler = 1  # the adler32 of nothing; each band's is folded in
    for top in range(0, height, BAND_ROWS):
        band = pixels[top : top + BAND_ROWS]
        # The band's shape is part of its identity: the same bytes cut into rows of another
        # width take other filter bytes (a property test found that).
        key = xxhash.xxh3_128_digest(band.data) + struct.pack(">II", *band.shape)
        found = _BANDS.get(key)
        if found is None:
            # The band's rows, each behind its filter byte (0), in one copy.
            rows = np.empty((band.shape[0], width * 3 + 1), np.uint8)
            rows[:, 0] = 0
            rows[:, 1:] = band
            deflater = zlib_ng.compressobj(LEVEL, zlib_ng.DEFLATED, -15)  # raw deflate
            packed = deflater.compress(rows.data) + deflater.flush(zlib_ng.Z_FULL_FLUSH)
            found = (packed, zlib_ng.adler32(rows.data), rows.nbytes)
            _BANDS.put(key, found)
        parts.append(found[0])
        adler = _adler32_combine(adler, found[1], found[2])
    parts.append(_FINAL_EMPTY_BLOCK)
    parts.append(struct.pack(">I", adler))
    png = b"".join(
        (
            SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", b"".join(parts)),
            _chunk(b"IEND", b""),
        )
    )
    return png, name.hexdigest()


def _adler32_combine(first: int, second: int, second_length: int) -> int:
    # The adler32 of two byte strings joined, from theirs (zlib's adler32_combine).
    base = 65521
    rem = second_length % base
    sum1 = first & 0xFFFF
    sum2 = (rem * sum1) % base
    sum1 += (second & 0xFFFF) + base - 1
    sum2 += ((first >> 16) & 0xFFFF) + ((second >> 16) & 0xFFFF) + base - rem
    sum1 = sum1 - base if sum1 >= base else sum1
    sum1 = sum1 - base if sum1 >= base else sum1
    sum2 = sum2 - (base << 1) if sum2 >= (base << 1) else sum2
    sum2 = sum2 - base if sum2 >= base else sum2
    return sum1 | (sum2 << 16)


def encode_png(image: Image.Image) -> bytes:
    """A frame as PNG (see :func:`encode_frame`)."""
    return encode_frame(image)[0]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
