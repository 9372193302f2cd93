"""Apply JSON Schema `default` values, since jsonschema only validates and never fills in.

A spec's digest covers its *normalized* form: writing a default out explicitly must not
change the digest, so defaults are applied before hashing. Only local `$ref`s (`#/$defs/..`)
are followed, which is all the lrc schemas use.
"""

from __future__ import annotations

import copy
from typing import Any


def _resolve(schema: dict, root: dict) -> dict:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and schema["$ref"].startswith("#/") and seen < 16:
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node[part]
        schema = node
        seen += 1
    return schema


def apply_defaults(instance: Any, schema: dict, root: dict | None = None) -> Any:
    """A copy of `instance` with every missing property that has a schema default filled in."""
    root = root or schema
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return instance
    if isinstance(instance, dict):
        out = dict(instance)
        props = schema.get("properties", {})
        for name, sub in props.items():
            sub_r = _resolve(sub, root)
            if name not in out and isinstance(sub_r, dict) and "default" in sub_r:
                out[name] = copy.deepcopy(sub_r["default"])
            if name in out:
                out[name] = apply_defaults(out[name], sub_r, root)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name in out:
                if name not in props:
                    out[name] = apply_defaults(out[name], extra, root)
        return out
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        return [apply_defaults(v, schema["items"], root) for v in instance]
    return instance
