"""Frames as PNG: standard files, exact pixels, bytes and names that depend on pixels only."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from ghostei import png


def _decoded(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        assert image.mode == "RGB"
        return np.asarray(image)


@settings(max_examples=40, deadline=None)
@given(
    width=st.integers(1, 90),
    height=st.integers(1, 200),
    seed=st.integers(0, 2**32 - 1),
    flat=st.booleans(),
)
def test_any_frame_round_trips_through_a_standard_reader(
    width: int, height: int, seed: int, flat: bool
) -> None:
    rng = np.random.default_rng(seed)
    if flat:  # screen-like: few colours, long runs, bands that repeat
        pixels = rng.integers(0, 3, (height, width, 1), dtype=np.uint8).repeat(3, axis=2) * 100
    else:
        pixels = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    data, name = png.encode_frame(Image.fromarray(pixels, "RGB"))
    assert data.startswith(png.SIGNATURE)
    assert np.array_equal(_decoded(data), pixels)
    # The IDAT is one valid zlib stream (header, blocks, adler32), as strict readers want.
    idat = data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8]
    assert len(zlib.decompress(idat)) == height * (width * 3 + 1)
    assert len(name) == 32


def test_bytes_and_name_depend_on_pixels_only_not_on_what_was_encoded_before() -> None:
    rng = np.random.default_rng(7)
    frame = rng.integers(0, 4, (300, 40, 3), dtype=np.uint8) * 60
    other = frame.copy()
    other[150:160] = 255  # one band differs: the others come from the cache
    png._BANDS = png._BandCache(png.BAND_BUDGET)
    cold = png.encode_frame(Image.fromarray(frame, "RGB"))
    png.encode_frame(Image.fromarray(other, "RGB"))
    warm = png.encode_frame(Image.fromarray(frame, "RGB"))
    assert warm == cold
    changed = png.encode_frame(Image.fromarray(other, "RGB"))
    assert changed[1] != cold[1] and np.array_equal(_decoded(changed[0]), other)


def test_the_same_bytes_in_rows_of_another_width_are_another_band() -> None:
    rng = np.random.default_rng(7816)
    wide = rng.integers(0, 256, (1, 52, 3), dtype=np.uint8)
    narrow = wide.reshape(2, 26, 3)  # the same 156 bytes, as two rows
    for first, second in ((wide, narrow), (narrow, wide)):
        png._BANDS = png._BandCache(png.BAND_BUDGET)
        png.encode_frame(Image.fromarray(first, "RGB"))
        assert np.array_equal(_decoded(png.encode_png(Image.fromarray(second, "RGB"))), second)


def test_the_band_cache_stays_within_its_budget() -> None:
    cache = png._BandCache(100)
    for i in range(50):
        cache.put(bytes([i]), (b"x" * 30, 1, 30))
    assert cache.used <= 100 and len(cache.items) == 3
    assert cache.get(bytes([49])) == (b"x" * 30, 1, 30) and cache.get(bytes([0])) is None


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_adler32_of_joined_bands_is_folded_exactly(first: bytes, second: bytes) -> None:
    combined = png._adler32_combine(zlib.adler32(first), zlib.adler32(second), len(second))
    assert combined == zlib.adler32(first + second)


@pytest.mark.parametrize("mode", ["RGBA", "L", "P"])
def test_other_modes_are_stored_as_their_rgb(mode: str) -> None:
    image = Image.new(mode, (20, 70), 128 if mode != "RGBA" else (10, 20, 30, 255))
    data = png.encode_png(image)
    assert np.array_equal(_decoded(data), np.asarray(image.convert("RGB")))
