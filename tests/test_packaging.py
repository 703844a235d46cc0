"""The bundled data travel inside the package and are the files their README documents.

The end-to-end check (build a wheel, install it into a fresh virtual environment, run the
command line and the app from there) is in .ci/run; these tests catch the same mistakes
early, without building anything.
"""

import fnmatch
import hashlib
import re
import sys
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = resources.files("pcrp") / "datasets"


def shipped_files():
    return sorted(p.name for p in DATA_DIR.iterdir() if p.is_file())


def test_data_live_inside_the_package():
    assert {"old_faithful.csv", "mnist_10k.npz", "README.md"} <= set(shipped_files())
    assert not (ROOT / "datasets").exists(), "a datasets/ folder outside pcrp/ is not shipped in wheels"


def test_every_data_file_is_documented_with_its_checksum():
    readme = (DATA_DIR / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"\b[0-9a-f]{64}\b", readme))
    for name in shipped_files():
        if name == "README.md":
            continue
        assert f"## {name}" in readme, f"{name} has no section in pcrp/datasets/README.md"
        digest = hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest()
        assert digest in documented, f"{name} (sha256 {digest}) is not the file the README documents"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="reads pyproject.toml with tomllib (Python 3.11+)")
def test_package_data_patterns_cover_every_data_file():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    patterns = config["package-data"]["pcrp"]
    for name in shipped_files():
        assert any(fnmatch.fnmatch(f"datasets/{name}", p) for p in patterns), f"datasets/{name} is not package data"
    assert config["packages"]["find"]["include"] == ["pcrp*"]  # subpackages are found, not listed by hand
    declared = [p for p in patterns if "typed" in p]
    assert all((ROOT / "pcrp" / p).exists() for p in declared), "py.typed is declared but does not exist"


def test_every_public_name_resolves():
    """The lazy exports of pcrp/__init__.py: a name mapped to the wrong module fails here, not in a user's script."""
    import pcrp

    for name in pcrp.__all__:
        assert getattr(pcrp, name) is not None, name
    assert set(pcrp.PRIORS) == {"crp", "pcrp", "py", "mfm", "sfm"}
