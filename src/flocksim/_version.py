"""flocksim's version (``flocksim.__version__``), kept here in the source so that every copy of the
repository, a clone without tags or an archive included, reports the same one; pyproject.toml reads it
for the package's metadata (``[tool.setuptools.dynamic]``). Between releases it is the next release's
``.dev0`` (PEP 440 orders it after the last release, CHANGELOG.md's latest section); a release sets it
to the section's version, and the commit after the release moves it on. The modules that write the
version into their outputs import it from here, without the package's public names above them."""

from __future__ import annotations

__version__ = "0.1.1.dev0"
