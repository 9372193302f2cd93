"""Maps the fixed top-level folders onto the `lrc` import namespace.

The repository layout is fixed (`compiler/`, `runtime/` at the top), but bare top-level
`compiler` and `runtime` packages would collide with other distributions once installed.
So `compiler/` is installed as `lrc.compiler` and `runtime/` as `lrc.runtime`; `lrc` itself
is an implicit namespace package.
"""

from setuptools import find_packages, setup

ROOTS = {"lrc.compiler": "compiler", "lrc.runtime": "runtime"}

packages = []
for name, folder in ROOTS.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

# The JSON Schemas of this release ship inside the package as lrc/schemas/*.schema.json (a
# data-only folder): a specs repository without its own schemas/ compiles against them
# (compiler/validate.py: schemas_dir).
packages.append("lrc.schemas")
package_dir = {**ROOTS, "lrc.schemas": "schemas"}

setup(packages=packages, package_dir=package_dir, package_data={"": ["*.json", "*.j2"], "lrc.schemas": ["*.schema.json"]})
