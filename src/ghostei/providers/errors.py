"""SDK exceptions as ProviderErrors that say whether trying again may help.

The ``openai`` and ``anthropic`` SDKs share one exception layout (``APITimeoutError`` under
``APIConnectionError``, ``APIStatusError`` with the HTTP response), so one translation serves
both.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import TypeVar

from .base import ProviderError
from .credentials import redact

T = TypeVar("T")


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth another try."""
    return status in (408, 429) or status >= 500


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The server's ``Retry-After`` hint in seconds (``retry-after-ms`` first, as OpenAI sends
    both), or None when absent or unreadable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # the other legal form is an HTTP date
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


# What servers say when they do not take a structured-output request: the parameter named
# (OpenAI: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with
# this model"; vLLM, SGLang), or a parameter refused as unknown (strict FastAPI servers).
_SCHEMA_REFUSAL = re.compile(
    r"response_format|json_schema|tool_choice|\btools\b|"
    r"unsupported (?:parameter|field|argument)|(?:unknown|unrecognized) (?:field|parameter|"
    r"argument)|extra (?:fields|inputs) (?:are )?not permitted",
    re.IGNORECASE,
)


# llama-cpp-python's server validates the request body with pydantic and answers a body it
# rejects with HTTP 500: "1 validation error: {'type': 'literal_error', 'loc': ('body',
# 'response_format', 'type'), ...}". That is the request refused, not the server failing.
_REJECTED_BODY_FIELD = re.compile(
    r"validation error.*\(\s*'body',\s*'(?:response_format|tool_choice|tools)'",
    re.IGNORECASE | re.DOTALL,
)


def refuses_schema(exc: ProviderError) -> bool:
    """Whether ``exc`` is a server refusing a request for structured output (HTTP 400 or 422
    that names the parameter, or an unsupported-parameter error; or a 500 that is the body's
    validation rejecting that parameter), not a failure to retry."""
    said = str(exc).split(" answered HTTP", 1)[-1]  # the server's words, not the URL's
    if exc.status in (400, 422):
        return _SCHEMA_REFUSAL.search(said) is not None
    return exc.status == 500 and _REJECTED_BODY_FIELD.search(said) is not None


def translate_sdk_error(
    exc: Exception, sdk: ModuleType, *, where: str, timeout: float, secret: str | None
) -> ProviderError:
    """``exc`` raised by ``sdk`` (the openai or anthropic module) as a ProviderError, with
    ``secret`` scrubbed from the message. ``where`` names the model and endpoint."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"{where} timed out after {timeout:g}s", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(redact(f"cannot connect to {where}: {exc}", secret), retryable=True)
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        error = ProviderError(
            redact(f"{where} answered HTTP {status}: {exc.message}", secret),
            status=status,
            retryable=is_retryable_status(status),
            retry_after=retry_after_seconds(exc.response.headers),
        )
        if error.retryable and refuses_schema(error):
            # A 500 that is the body's validation refusing the schema: the same body is
            # refused again, so the caller asks another way at once instead of retrying.
            error.retryable = False
        return error
    return ProviderError(redact(f"{where} failed: {exc}", secret))


def call_sdk(
    call: Callable[[], T], sdk: ModuleType, *, where: str, timeout: float, secret: str | None
) -> T:
    """``call()``, with the SDK's errors raised as ProviderErrors (see translate_sdk_error)."""
    failure: ProviderError | None = None
    try:
        return call()
    except sdk.APIError as exc:
        failure = translate_sdk_error(exc, sdk, where=where, timeout=timeout, secret=secret)
    # Raised outside the handler, so the SDK's exception, whose text may quote the key, is
    # neither the cause nor the context of what the caller sees or logs.
    raise failure
