"""One version for the distribution, read from setup.cfg (its single source)."""
import configparser
import re
from pathlib import Path

import hcizz
import replica
import validation


def test_one_version_from_setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).resolve().parent.parent / "setup.cfg")
    version = cfg.get("metadata", "version")
    assert re.fullmatch(r"\d+\.\d+\.\d+([a-z0-9.+-]*)?", version)
    assert hcizz.__version__ == replica.__version__ == validation.__version__ == version
