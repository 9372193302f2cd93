"""lrc compiler: specs/ (YAML) -> validated, resolved, version-gated plan.lock.

Stages, each a small module: load -> validate -> resolve -> render -> versioning -> emit.
Diagnostics are values gathered by every stage and printed in one place (printer.py).
The compile path never imports litellm, polars or the runtime beyond `lrc.runtime.lock`.
"""
