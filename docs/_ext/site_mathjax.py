"""MathJax shipped with the site: a pinned copy of the ``mathjax`` npm package.

The site must render its formulas without internet access, so MathJax is not
loaded from a CDN.  At build time this extension makes sure that
``docs/_static/mathjax/`` holds MathJax |version| (the ``es5`` tree of the
official ``mathjax`` npm package, without the bundles the site does not use),
and sets ``mathjax_path`` to it.  Nothing of MathJax is committed to the
repository: the package is fetched once by ``npm pack`` (or taken from
``ASSOCMEM_MATHJAX_TARBALL``, a local copy of the same ``.tgz``) into a cache
folder, its SHA-512 is checked against the pinned value below, and it is unpacked
into ``docs/_static/mathjax`` (ignored by git).

Run ``python docs/_ext/site_mathjax.py`` to fetch it ahead of a build (e.g.
before going offline).
"""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "3.2.2"
#: ``dist.integrity`` of ``mathjax@3.2.2`` as the npm registry publishes it
#: (the SHA-512 of the package tarball, base64).
INTEGRITY = ("sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZG"
             "JvtRZM1vO+geW0OhGw==")
TARBALL = f"mathjax-{VERSION}.tgz"

DOCS = Path(__file__).resolve().parent.parent
TARGET = DOCS / "_static" / "mathjax"
#: the component the site loads (TeX input, CommonHTML output, menu, assistive MathML)
ENTRY = "tex-chtml.js"
STAMP = ".version"

# Files of the package's es5/ tree that the site never loads: the other combined
# components and the SVG output.  Everything else is kept, so that the TeX
# extensions MathJax loads on demand (autoload), the menu and its accessibility
# options work offline too.
_UNUSED_PREFIXES = ("tex-svg", "tex-mml-", "mml-", "tex-chtml-full", "node-main",
                    "output/svg")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "assocmem-docs"


def _integrity(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def _check(path: Path) -> Path:
    got = _integrity(path)
    if got != INTEGRITY:
        raise RuntimeError(f"{path}: SHA-512 {got} is not the pinned {INTEGRITY} of "
                           f"mathjax@{VERSION}")
    return path


def tarball() -> Path:
    """The verified ``mathjax-VERSION.tgz``: given, cached, or fetched by ``npm pack``."""
    given = os.environ.get("ASSOCMEM_MATHJAX_TARBALL")
    if given:
        return _check(Path(given))
    cached = cache_dir() / TARBALL
    if cached.is_file():
        return _check(cached)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            f"MathJax {VERSION} is not in {TARGET} and npm is not installed to fetch it: "
            f"install npm, or set ASSOCMEM_MATHJAX_TARBALL to a copy of {TARBALL} "
            f"(the mathjax@{VERSION} npm package)")
    cached.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cached.parent) as tmp:
        subprocess.run([npm, "pack", f"mathjax@{VERSION}", "--silent",
                        "--pack-destination", tmp], check=True, stdout=subprocess.DEVNULL)
        got = _check(Path(tmp) / TARBALL)
        os.replace(got, cached)
    return cached


def _members(tar: tarfile.TarFile):
    for member in tar.getmembers():
        name = member.name
        if name in ("package/LICENSE", "package/package.json"):
            yield member, name[len("package/"):]
            continue
        if not name.startswith("package/es5/") or not member.isfile():
            continue
        rel = name[len("package/es5/"):]
        if rel.startswith(_UNUSED_PREFIXES):
            continue
        yield member, rel


def install(target: Path = TARGET) -> Path:
    """Unpack the pinned MathJax into ``target`` unless that copy is already there."""
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text().strip() == VERSION and (target / ENTRY).is_file():
        return target
    src = tarball()
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(src, "r:gz") as tar:
        for member, rel in _members(tar):
            out = tmp / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as fin, open(out, "wb") as fout:
                shutil.copyfileobj(fin, fout)
    (tmp / STAMP).write_text(VERSION + "\n")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target


def _config_inited(app, config):
    if config.mathjax_path != f"mathjax/{ENTRY}":
        raise RuntimeError(f"conf.py: mathjax_path must be 'mathjax/{ENTRY}' (the copy in "
                           f"_static/mathjax), not {config.mathjax_path!r}")
    install()


def setup(app):
    app.connect("config-inited", _config_inited)
    # MathJax on every page: titles with math appear in the navigation of pages
    # that have none of their own (e.g. the gallery index)
    app.set_html_assets_policy("always")
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    print(install(), file=sys.stderr)
