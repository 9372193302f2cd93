"""Import this before litellm: it makes litellm offline-safe.

litellm fetches a price map (and tokenizers) from the network at import time unless these
variables are set *before* the import; only the exact value "true" switches its offline
mode on ("1" is ignored). Every module that imports litellm imports this first.
"""

from __future__ import annotations

import os

OFFLINE_ENV = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "true", "HF_HUB_OFFLINE": "1"}

for _key, _value in OFFLINE_ENV.items():
    os.environ[_key] = _value
