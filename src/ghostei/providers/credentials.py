"""API keys: read from the environment when a provider is built, and scrubbed from errors.

The key goes straight into the SDK client and nowhere else, so it cannot reach a config, a
manifest, a log or a report. Error texts can still echo it (some servers quote the key they
rejected), hence ``redact``.
"""

from __future__ import annotations

import os

from .base import ProviderConfig, ProviderConfigError

# Local servers (vLLM, Ollama, SGLang) accept any key, but the SDKs refuse to start without one.
PLACEHOLDER_KEY = "EMPTY"


def key_env(config: ProviderConfig, default: str) -> str:
    """The environment variable that holds the key for ``config``."""
    return config.api_key_env or default


def resolve_api_key(config: ProviderConfig, default_env: str) -> str:
    """The API key from the environment; a placeholder for a keyless local endpoint."""
    env = key_env(config, default_env)
    key = os.environ.get(env, "").strip()
    if key:
        return key
    if config.base_url:
        return PLACEHOLDER_KEY
    raise ProviderConfigError(
        f"no API key for provider {config.provider!r}: set the environment variable {env}, "
        "or give --base-url for a local endpoint that needs no key"
    )


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` masked."""
    if not secret or secret == PLACEHOLDER_KEY:
        return text
    return text.replace(secret, "***")
