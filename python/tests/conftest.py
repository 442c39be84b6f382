"""Shared fixtures: the repository root and the command-line program the
equivalence tests compare against."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `diracvi` binary: $DIRACVI_CLI if set, else the one the README's
    test command builds (`cargo test --workspace --no-run`: a no-op after
    `cargo test --workspace`; building the CLI alone would unify features
    differently and rebuild the dependency graph)."""
    given = os.environ.get("DIRACVI_CLI")
    if given:
        path = Path(given)
        assert path.is_file(), f"DIRACVI_CLI={given} is not a file"
        return path
    cargo = shutil.which("cargo")
    assert cargo is not None, "cargo is needed to build the CLI (or set DIRACVI_CLI)"
    out = subprocess.run(
        [cargo, "test", "--workspace", "--no-run", "--quiet", "--message-format=json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            if msg["target"]["name"] == "diracvi" and msg["target"]["kind"] == ["bin"]:
                return Path(msg["executable"])
    raise AssertionError("cargo built no `diracvi` executable")
