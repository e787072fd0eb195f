"""Images as the model sees them: downscaled to a maximum side, in a format every API takes."""

from __future__ import annotations

import base64
import io

from PIL import Image

from .base import ProviderError

_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


def prepare_image(data: bytes, max_side: int | None) -> tuple[str, bytes]:
    """``(mime type, bytes)`` of ``data`` with its longest side at most ``max_side``.

    Images that already fit are sent byte for byte; larger ones are resized with LANCZOS,
    keeping the aspect ratio, and re-encoded as PNG (JPEG stays JPEG). Never upscales.
    """
    try:
        with Image.open(io.BytesIO(data)) as img:
            fmt = img.format or "PNG"
            fits = max_side is None or max(img.size) <= max_side
            if fits and fmt in _MIME:
                return _MIME[fmt], data
            picture = img if img.mode in ("RGB", "RGBA", "L", "LA") else img.convert("RGBA")
            if max_side is not None and not fits:
                scale = max_side / max(img.size)
                size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
                picture = picture.resize(size, Image.Resampling.LANCZOS)
            out = io.BytesIO()
            if fmt == "JPEG":
                picture.convert("RGB").save(out, format="JPEG", quality=90)
                return _MIME["JPEG"], out.getvalue()
            picture.save(out, format="PNG")
            return _MIME["PNG"], out.getvalue()
    except (OSError, ValueError) as exc:  # Pillow's UnidentifiedImageError is an OSError
        raise ProviderError(f"cannot read an image for the model: {exc}", requests=0) from exc


def data_url(data: bytes, max_side: int | None) -> str:
    """``data:image/png;base64,...`` for ``data`` downscaled to ``max_side``."""
    mime, payload = prepare_image(data, max_side)
    return f"data:{mime};base64,{base64.b64encode(payload).decode('ascii')}"
