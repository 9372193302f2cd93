"""lrc runtime: executes a compiled plan.lock against models and grades the results.

Nothing here imports the compiler, ruamel.yaml or the specs: the runtime reads only the
lock, the current code and (for a held-out edition) the seed file.
"""
