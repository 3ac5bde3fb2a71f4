"""`rrsite verify URL --survey FILE.md` against a site that `rrsite serve` serves.

The site is built from surveys/ (the shipped templates, the small fixture runtime, compressed);
verify rebuilds the surveys it is given and fetches every file of that build, uncompressed, as
brotli and as gzip. It passes on the site as built, and fails, naming the file, when one byte of
page.js, of the core bundle or of a survey's design changes on the site, or when the survey file
it is given holds another design than the one deployed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrsite.site.builder import build

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browserkit import serve  # noqa: E402

PYODIDE = Path(__file__).resolve().parent / "fixtures" / "pyodide"
SURVEYS = ROOT / "surveys"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(url, dist) of surveys/ built and served by `rrsite serve`."""
    root = tmp_path_factory.mktemp("verify")
    dist = root / "dist"
    build([SURVEYS], dist, None, PYODIDE, cache=root / "cache")
    with serve(dist, root / "collector.db") as url:
        yield url, dist


def verify(url: str, *surveys: Path,
           extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    arguments = [sys.executable, "-m", "rrsite", "verify", url, "--pyodide", str(PYODIDE),
                 *extra]
    for survey in surveys:
        arguments += ["--survey", str(survey)]
    return subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True, timeout=300)


def changed_byte(path: Path, old: bytes, new: bytes) -> bytes:
    """Change one occurrence of ``old`` (same length as ``new``) in ``path``; the original."""
    original = path.read_bytes()
    assert len(old) == len(new) and old in original
    path.write_bytes(original.replace(old, new, 1))
    return original


def test_the_site_as_built_matches(served: tuple[str, Path]) -> None:
    url, dist = served
    done = verify(url, SURVEYS / "honor-code.md", SURVEYS / "workplace.md", extra=("--json",))
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["matches"] is True
    paths = {entry["path"] for entry in result["files"]}
    assert {"honor-code/index.html", "honor-code/survey.json", "workplace/survey.json"} <= paths
    assert any(path.startswith("_rr/page.") for path in paths)
    assert any(path.startswith("_rr/core.") for path in paths)
    assert any(path.endswith("pyodide.asm.wasm") for path in paths)
    listed = json.loads((dist / "rrsite-files.json").read_text("utf-8"))
    assert result["code_fingerprint"] == result["deployed_fingerprint"]
    assert result["code_fingerprint"] == listed["code_fingerprint"]
    # a survey's page address works as well as the site's root
    assert verify(f"{url}honor-code/", SURVEYS / "honor-code.md").returncode == 0


@pytest.mark.parametrize(("pattern", "old", "new"), [
    ("_rr/page.*.js", b"let busy = false;", b"let Busy = false;"),
    ("_rr/core.*.zip", b"def respond_json(", b"def respond_jsoN("),
    ("honor-code/survey.json", b'"truth": 0.5', b'"truth": 0.6'),
])
def test_one_byte_changed_on_the_site_is_named(served: tuple[str, Path], pattern: str, old: bytes,
                                               new: bytes) -> None:
    url, dist = served
    (target,) = [path for path in dist.glob(pattern) if path.suffix not in (".br", ".gz")]
    name = target.relative_to(dist).as_posix()
    original = changed_byte(target, old, new)
    try:
        done = verify(url, SURVEYS / "honor-code.md")
    finally:
        target.write_bytes(original)
    assert done.returncode == 1, done.stdout + done.stderr
    differing = [line for line in done.stdout.splitlines() if line.startswith("DIFFERS")]
    assert len(differing) == 1, done.stdout
    assert differing[0].startswith(f"DIFFERS  {name}: uncompressed: "), differing
    assert "1 byte(s) differ" in differing[0]
    assert "1 of " in done.stdout.splitlines()[-1]


def test_another_design_in_the_survey_file_is_named(served: tuple[str, Path],
                                                    tmp_path: Path) -> None:
    url, _ = served
    survey = tmp_path / "honor-code.md"
    shutil.copy(SURVEYS / "honor-code.md", survey)
    text = survey.read_text("utf-8")
    for old, new in (("truth: 1/2", "truth: 2/5"), ("yes: 1/4", "yes: 3/10"),
                     ("no: 1/4", "no: 3/10")):  # a weaker design, within the survey's budget
        assert old in text
        text = text.replace(old, new, 1)
    survey.write_text(text, "utf-8")
    done = verify(url, survey)
    assert done.returncode == 1
    named = {line.split()[1].rstrip(":") for line in done.stdout.splitlines()
             if line.startswith("DIFFERS")}
    assert named == {"honor-code/index.html", "honor-code/survey.json"}, done.stdout


def test_an_unreachable_site_is_an_error(tmp_path: Path) -> None:
    done = verify("http://127.0.0.1:9/", SURVEYS / "honor-code.md")
    assert done.returncode == 2
    assert "127.0.0.1:9" in done.stderr and "no answer" in done.stderr
