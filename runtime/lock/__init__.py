"""The lock format and everything both halves of lrc must agree on to read it.

The compiler writes plan.lock through this package and the runtime reads it through this
package; nothing else owns the format. It is deliberately light (stdlib, rfc8785, jinja2)
so that `lrc compile` can import it without pulling in the runtime's heavy dependencies.
"""
