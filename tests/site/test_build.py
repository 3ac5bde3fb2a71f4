"""`rrsite build`: layout, hashed names, compressed copies, headers, and all-or-nothing builds."""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import os
import re
import shutil
import zipfile
from pathlib import Path, PurePosixPath

import brotli
import pytest

from rrsite.cli import main
from rrsite.site.builder import (
    PYODIDE_FILES,
    RUNTIME_IN_WORKER,
    BuildError,
    build,
    stored_zip,
)
from rrsite.site.headers import IMMUTABLE, parse_headers_file
from rrsite.survey import SurveyErrors, load_survey
from rrsite.survey.bundle import core_zip

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEMPLATES = FIXTURES / "templates"
PYODIDE = FIXTURES / "pyodide"
SURVEYS = ROOT / "surveys"
HASHED = re.compile(r"^(?P<stem>.+)\.(?P<hash>[0-9a-f]{12})(?P<suffix>\.[a-z0-9]+)$")
CONFIG = re.compile(r'<script type="application/json" id="rr-config">(.*?)</script>', re.S)


def tree(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``folder``."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*")) if path.is_file()
    }


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def page_config(page: Path) -> dict:
    match = CONFIG.search(page.read_text("utf-8"))
    assert match, page
    return json.loads(match.group(1))


# ---- layout -----------------------------------------------------------------------------------


def test_every_survey_has_its_page_and_manifest(example_site):
    dist = example_site.dist
    expected = {load_survey(path).id for path in SURVEYS.glob("*.md")}
    assert {s.id for s in example_site.surveys} == expected
    assert {p.name for p in dist.iterdir()} == expected | {"_rr", "_headers", "rrsite-files.json"}
    for path in SURVEYS.glob("*.md"):
        survey = load_survey(path)
        written = json.loads((dist / survey.id / "survey.json").read_text("utf-8"))
        assert written == survey.manifest()
        assert (dist / survey.id / "index.html").is_file()


def test_assets_carry_their_content_hash(example_site):
    assets = example_site.dist / "_rr"
    names = set()
    for path in assets.rglob("*"):
        if not path.is_file() or path.suffix in (".br", ".gz") or "pyodide-" in path.parent.name:
            continue
        match = HASHED.match(path.name)
        assert match, path
        assert match["hash"] == sha(path.read_bytes())[:12], path
        names.add(str(PurePosixPath(path.relative_to(assets).as_posix()).with_name(
            match["stem"] + match["suffix"])))
    source = {p.relative_to(TEMPLATES / "assets").as_posix()
              for p in (TEMPLATES / "assets").rglob("*") if p.is_file()}
    assert names == source | {"core.zip"}


def test_references_between_assets_use_hashed_names(example_site):
    assets = example_site.dist / "_rr"
    css = next(assets.glob("style.*.css")).read_text()
    coin = next(assets.glob("coin.*.svg")).name
    die = next((assets / "img").glob("die.*.svg")).name
    assert f"url({coin})" in css and f"url('img/{die}')" in css
    assert "url(https://example.org/x.png)" in css  # absolute URLs are left alone
    # a module's imports of other assets are inlined by the build (rrsite/site/bundle.py)
    page_js = next(assets.glob("page.*.js")).read_text()
    assert "const __rr_strings_js = (() => { // strings.js" in page_js
    assert "const { strings } = __rr_strings_js;" in page_js and 'from "./' not in page_js


def test_core_bundle_and_manifest_core_hash(example_site):
    assets = example_site.dist / "_rr"
    (bundle,) = assets.glob("core.*.zip")
    data = bundle.read_bytes()
    assert data == core_zip()
    assert bundle.name == f"core.{sha(data)[:12]}.zip"
    for survey in example_site.surveys:
        manifest = json.loads((example_site.dist / survey.id / "survey.json").read_text())
        assert manifest["core_hash"] == "sha256:" + sha(data)


def test_pyodide_runtime_is_copied_into_a_versioned_hashed_folder(example_site):
    (folder,) = (example_site.dist / "_rr").glob("pyodide-*")
    assert re.fullmatch(r"pyodide-314\.0\.7-[0-9a-f]{12}", folder.name)
    originals = {p.name for p in folder.iterdir() if p.suffix not in (".br", ".gz")}
    assert originals == set(PYODIDE_FILES) - set(RUNTIME_IN_WORKER)  # the JS: in the worker
    for name in originals:
        assert (folder / name).read_bytes() == (PYODIDE / name).read_bytes()


def test_page_urls_resolve_to_built_files(example_site):
    for survey in example_site.surveys:
        page = example_site.dist / survey.id / "index.html"
        config = page_config(page)
        assert config["survey"] == survey.id and config["version"] == survey.version
        assert config["submit"] == survey.manifest()["submit"]
        # the manifest's questions; a randomized number's with the step its reports are shown to
        assert [{k: v for k, v in q.items() if k != "display_step"}
                for q in config["questions"]] == survey.manifest()["questions"]
        assert config["pyodide_url"].endswith("/")
        lock = json.loads((PYODIDE / "pyodide-lock.json").read_text("utf-8"))
        assert config["pyodide_lock"] == {"info": lock["info"], "packages": {}}
        for key in ("manifest_url", "core_url", "worker_url"):
            assert (page.parent / config[key]).resolve().is_file(), (key, config[key])
        for name in set(PYODIDE_FILES) - set(RUNTIME_IN_WORKER):
            assert (page.parent / (config["pyodide_url"] + name)).resolve().is_file()
        text = page.read_text("utf-8")
        for url in re.findall(r'(?:href|src)="([^"]+)"', text):
            assert (page.parent / html.unescape(url)).resolve().is_file(), url


def test_page_renders_markdown_and_prose(example_site):
    page = (example_site.dist / "honor-code" / "index.html").read_text("utf-8")
    assert "Have you <em>ever</em> violated the Honor Code?" in page
    assert "<strong>heads</strong>" in page  # help prose under the heading
    assert "Estimates are published only for groups" in page  # outro
    spanish = (example_site.dist / "drug-use" / "index.html").read_text("utf-8")
    assert '<html lang="es">' in spanish and ">Enviar<" in spanish
    assert "Algunos datos sobre ti" in spanish  # prose between questions (before_html)
    cheating = (example_site.dist / "cheating-partner" / "index.html").read_text("utf-8")
    assert '<p class="mirrored">Have you <em>always</em> been faithful' in cheating
    assert '<p class="innocuous">Is your birthday' in cheating
    income = (example_site.dist / "undeclared-income" / "index.html").read_text("utf-8")
    assert "More than half" in income


# ---- pre-compressed copies --------------------------------------------------------------------


def test_compressed_copies_decompress_to_the_original(example_site):
    seen = 0
    for path in example_site.dist.rglob("*"):
        if not path.is_file() or path.suffix in (".br", ".gz") or path.name == "_headers":
            continue
        size = path.stat().st_size
        br, gz = path.with_name(path.name + ".br"), path.with_name(path.name + ".gz")
        if size <= 1024:
            assert not br.exists() and not gz.exists(), path
            continue
        if br.exists():
            seen += 1
            assert brotli.decompress(br.read_bytes()) == path.read_bytes()
            assert gzip.decompress(gz.read_bytes()) == path.read_bytes()
            assert br.stat().st_size <= 0.95 * size and gz.stat().st_size <= 0.95 * size
            assert gz.read_bytes()[4:8] == b"\0\0\0\0"  # no timestamp: builds are repeatable
        else:  # the fixture's stdlib is random bytes; the file list is written after compressing
            assert path.name in ("python_stdlib.zip", "rrsite-files.json")
    assert seen >= 10


def test_compression_cache_is_used_and_checked(tmp_path):
    cache = tmp_path / "cache"
    build([SURVEYS / "honor-code.md"], tmp_path / "a", TEMPLATES, PYODIDE, cache=cache)
    entries = sorted(cache.rglob("*.br"))
    assert entries
    for entry in entries:  # corrupt every cached copy: the build must notice and redo them
        entry.write_bytes(b"garbage")
    build([SURVEYS / "honor-code.md"], tmp_path / "b", TEMPLATES, PYODIDE, cache=cache)
    for path in (tmp_path / "b").rglob("*.br"):
        original = path.with_name(path.name[:-3])
        assert brotli.decompress(path.read_bytes()) == original.read_bytes()
    assert all(entry.read_bytes() != b"garbage" for entry in entries)


def test_builds_are_repeatable(tmp_path):
    first = build([SURVEYS], tmp_path / "one", TEMPLATES, PYODIDE, cache=tmp_path / "cache")
    second = build([SURVEYS], tmp_path / "two", TEMPLATES, PYODIDE, cache=False)
    assert tree(first.dist) == tree(second.dist)


# ---- _headers ---------------------------------------------------------------------------------


def test_headers_file(example_site):
    rules = dict(parse_headers_file((example_site.dist / "_headers").read_text()))
    pages = [f"/{survey.id}/*" for survey in example_site.surveys]
    assert list(rules) == ["/*", "/_rr/*", *pages]
    assert all(rules[page] == {"Integrity-Policy": "blocked-destinations=(script)"}
               for page in pages)
    everything = rules["/*"]
    policy = everything["Content-Security-Policy"]
    csp = {part.split()[0]: part.split()[1:] for part in policy.split("; ")}
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == ["'self'", "'wasm-unsafe-eval'"]
    # the endpoint of undeclared-income, and nothing else from outside
    assert csp["connect-src"] == ["'self'", "https://surveys.example.org"]
    assert csp["frame-ancestors"] == ["'none'"] and csp["base-uri"] == ["'none'"]
    assert "'unsafe-inline'" not in everything["Content-Security-Policy"]
    assert everything["X-Content-Type-Options"] == "nosniff"
    assert rules["/_rr/*"] == {"Cache-Control": IMMUTABLE}
    assert IMMUTABLE == "public, max-age=31536000, immutable"


def test_each_page_gets_its_own_csp(example_site):
    def meta_csp(survey_id: str) -> str:
        text = (example_site.dist / survey_id / "index.html").read_text("utf-8")
        return html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"',
                                       text).group(1))

    assert "https://surveys.example.org" in meta_csp("undeclared-income")
    assert "https://surveys.example.org" not in meta_csp("honor-code")
    assert "connect-src 'self';" in meta_csp("honor-code")


def test_config_json_cannot_break_out_of_its_script(tmp_path, write_survey):
    path = write_survey(tmp_path, """\
        ## What about </script><script>alert(1)</script>?

        ```question
        id: x
        type: choice
        options: ["</script><b>", "a & b"]
        ```
        """)
    result = build([path], tmp_path / "dist", TEMPLATES, PYODIDE, compress=False)
    page = (result.dist / result.surveys[0].id / "index.html").read_text("utf-8")
    script = CONFIG.search(page).group(1)
    assert "<" not in script and ">" not in script and "&" not in script
    assert page_config(result.dist / result.surveys[0].id / "index.html")["questions"][0][
        "values"] == ["</script><b>", "a & b"]
    assert "<script>alert(1)" not in page and "<b>" not in page
    assert "What about &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;?" in page


@pytest.fixture
def write_survey():
    def write(folder: Path, body: str, survey_id: str = "tiny", name: str = "tiny.md") -> Path:
        import textwrap

        path = folder / name
        head = f"---\nid: {survey_id}\ntitle: Tiny\nlanguage: en\n---\n"
        path.write_text(head + textwrap.dedent(body), "utf-8")
        return path

    return write


# ---- all or nothing ---------------------------------------------------------------------------


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if "rrsite-build" in p.name or "rrsite-old" in p.name]


def test_a_failed_build_leaves_the_old_site_untouched(tmp_path, surveys_copy):
    dist = tmp_path / "dist"
    build([surveys_copy], dist, TEMPLATES, PYODIDE, compress=False)
    before = tree(dist)
    inode = dist.stat().st_ino
    bad = surveys_copy / "honor-code.md"
    bad.write_text(bad.read_text().replace("truth: 1/2", "truth: 3/2"), "utf-8")
    (surveys_copy / "extra.md").write_text("no front matter\n", "utf-8")
    with pytest.raises(SurveyErrors) as info:
        build([surveys_copy], dist, TEMPLATES, PYODIDE, compress=False)
    messages = info.value.messages
    assert any(m.startswith(f"{bad}:") and "truth must be a probability" in m for m in messages)
    assert any(m.startswith(f"{surveys_copy / 'extra.md'}:1: missing front matter")
               for m in messages)
    assert tree(dist) == before and dist.stat().st_ino == inode
    assert leftovers(tmp_path) == []


def test_a_build_failing_while_writing_leaves_the_old_site(tmp_path):
    dist = tmp_path / "dist"
    build([SURVEYS / "honor-code.md"], dist, TEMPLATES, PYODIDE, compress=False)
    before = tree(dist)
    broken = tmp_path / "templates"
    shutil.copytree(TEMPLATES, broken)
    page = broken / "page.html"
    page.write_text(page.read_text().replace("asset('page.js')", "asset('missing.js')"))
    with pytest.raises(SurveyErrors) as info:
        build([SURVEYS / "honor-code.md"], dist, broken, PYODIDE, compress=False)
    line = next(n for n, text in enumerate(page.read_text().splitlines(), 1)
                if "missing.js" in text)
    assert info.value.messages == [
        f"{page}:{line}: asset('missing.js') is not a file in {broken / 'assets'}"]
    assert tree(dist) == before
    assert leftovers(tmp_path) == []


def test_a_successful_build_replaces_the_whole_site(tmp_path, surveys_copy):
    dist = tmp_path / "dist"
    build([surveys_copy], dist, TEMPLATES, PYODIDE, compress=False)
    (surveys_copy / "workplace.md").unlink()
    build([surveys_copy], dist, TEMPLATES, PYODIDE, compress=False)
    assert not (dist / "workplace").exists()
    assert (dist / "honor-code" / "index.html").is_file()
    assert leftovers(tmp_path) == []


def test_refuses_an_output_folder_that_is_not_a_build(tmp_path):
    dist = tmp_path / "precious"
    dist.mkdir()
    (dist / "thesis.tex").write_text("years of work")
    with pytest.raises(BuildError, match="is not an rrsite build"):
        build([SURVEYS / "honor-code.md"], dist, TEMPLATES, PYODIDE, compress=False)
    assert (dist / "thesis.tex").read_text() == "years of work"


def test_refuses_an_output_folder_holding_the_sources(tmp_path, surveys_copy):
    with pytest.raises(BuildError, match="choose an output folder of its own"):
        build([surveys_copy], tmp_path, TEMPLATES, PYODIDE, compress=False)
    assert (surveys_copy / "honor-code.md").is_file()


def test_duplicate_survey_ids_across_files(tmp_path, surveys_copy):
    copy = surveys_copy / "zz-copy.md"
    copy.write_text((surveys_copy / "honor-code.md").read_text())
    with pytest.raises(SurveyErrors) as info:
        build([surveys_copy], tmp_path / "dist", TEMPLATES, PYODIDE, compress=False)
    line = copy.read_text().splitlines().index("id: honor-code") + 1
    assert info.value.messages == [f"{copy}:{line}: survey id 'honor-code' is also used by "
                                   f"{surveys_copy / 'honor-code.md'}:{line}"]


def test_language_needs_a_catalog_with_every_key(tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    (templates / "messages" / "es.json").unlink()
    with pytest.raises(SurveyErrors) as info:
        build([SURVEYS / "drug-use.md"], tmp_path / "dist", templates, PYODIDE, compress=False)
    (error,) = info.value.errors
    line = (SURVEYS / "drug-use.md").read_text().splitlines().index("language: es") + 1
    assert error.file == str(SURVEYS / "drug-use.md") and error.line == line
    assert error.message.startswith("language 'es' has no message catalog")
    (templates / "messages" / "es.json").write_text('{"submit": "Enviar"}')
    with pytest.raises(SurveyErrors) as info:
        build([SURVEYS / "drug-use.md"], tmp_path / "dist", templates, PYODIDE, compress=False)
    assert info.value.messages == [f"{templates / 'messages' / 'es.json'}:1: the es catalog lacks "
                                   "keys that en.json has: no, yes"]


def test_template_syntax_error_has_its_line(tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    page = templates / "page.html"
    lines = page.read_text().splitlines()
    lines.insert(3, "{% if %}")
    page.write_text("\n".join(lines))
    with pytest.raises(SurveyErrors) as info:
        build([SURVEYS / "honor-code.md"], tmp_path / "dist", templates, PYODIDE, compress=False)
    assert info.value.messages[0].startswith(f"{page}:4: template error")


def test_stored_zip_keeps_names_contents_and_leaves_non_zips_alone():
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a/b.py", "print('b')\n" * 100)
        archive.writestr("c.txt", b"\x00\x01" * 50)
    data = buffer.getvalue()
    stored = stored_zip(data)
    with zipfile.ZipFile(io.BytesIO(stored)) as archive:
        assert archive.namelist() == ["a/b.py", "c.txt"]
        assert archive.read("a/b.py") == b"print('b')\n" * 100
        assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}
    assert stored_zip(stored) == stored
    assert stored_zip(b"not a zip") == b"not a zip"


def test_missing_runtime_files(tmp_path):
    with pytest.raises(BuildError, match="missing pyodide.asm.wasm"):
        runtime = tmp_path / "runtime"
        shutil.copytree(PYODIDE, runtime)
        (runtime / "pyodide.asm.wasm").unlink()
        build([SURVEYS / "honor-code.md"], tmp_path / "dist", TEMPLATES, runtime, compress=False)


# ---- the real templates and the real runtime --------------------------------------------------


def test_the_real_templates_build_every_example(tmp_path):
    assert (ROOT / "templates" / "page.html").is_file()
    result = build([SURVEYS], tmp_path / "dist", None, PYODIDE, compress=False)
    for survey in result.surveys:
        page = result.dist / survey.id / "index.html"
        text = page.read_text("utf-8")
        assert page_config(page)["version"] == survey.version
        for url in re.findall(r'(?:href|src)="([^"]+)"', text):
            assert (page.parent / html.unescape(url)).resolve().is_file(), url
        for question in survey.questions:
            assert f'data-question="{question.id}"' in text or f'id="q-{question.id}"' in text


def test_the_pinned_pyodide_is_shipped(tmp_path):
    result = build([SURVEYS / "honor-code.md"], tmp_path / "dist", TEMPLATES, None,
                   compress=False, full_stdlib=True)
    (folder,) = (result.dist / "_rr").glob("pyodide-*")
    source = ROOT / "node_modules" / "pyodide"
    assert folder.name.startswith("pyodide-314.0.7-")
    shipped = sorted(set(PYODIDE_FILES) - set(RUNTIME_IN_WORKER))
    for name in shipped:
        if name != "python_stdlib.zip":
            assert sha((folder / name).read_bytes()) == sha((source / name).read_bytes())
    assert sorted(os.listdir(folder)) == shipped
    # Pyodide's JavaScript is inside the worker's script, byte for byte
    (worker,) = (result.dist / "_rr").glob("worker.*.js")
    text = worker.read_text("utf-8")
    for name in RUNTIME_IN_WORKER:
        code = (source / name).read_text("utf-8")
        assert code[:2000] in text and code.rsplit("export", 1)[0][-2000:] in text
    # --full-stdlib: the same files, stored instead of deflated (compressible on the wire)
    with zipfile.ZipFile(source / "python_stdlib.zip") as original, \
            zipfile.ZipFile(folder / "python_stdlib.zip") as shipped:
        assert [i.filename for i in shipped.infolist()] == original.namelist()
        assert {i.compress_type for i in shipped.infolist()} == {zipfile.ZIP_STORED}
        for info in original.infolist():
            assert shipped.read(info.filename) == original.read(info)
    assert stored_zip((folder / "python_stdlib.zip").read_bytes()) == (
        folder / "python_stdlib.zip").read_bytes()


# ---- the command line -------------------------------------------------------------------------


def test_cli_build_and_failure(tmp_path, surveys_copy, capsys):
    dist = tmp_path / "dist"
    argv = ["build", str(surveys_copy), "-o", str(dist), "--templates", str(TEMPLATES),
            "--pyodide", str(PYODIDE), "--no-compress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("built ") == len(list(surveys_copy.glob("*.md")))  # one page per survey
    before = tree(dist)
    bad = surveys_copy / "workplace.md"
    bad.write_text(bad.read_text().replace("epsilon: 1.5", "epsilon: -1").replace(
        "type: yes-no", "type: yes-or-no", 1))
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "rrsite build: 2 errors:"
    assert err[1].startswith(f"{bad}:") and "did you mean 'yes-no'?" in err[1]
    assert err[2].startswith(f"{bad}:") and "epsilon must be above 0, got -1" in err[2]
    assert tree(dist) == before


def test_cli_new_writes_a_survey_that_builds(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "My Survey_2026"]) == 0
    path = tmp_path / "My Survey_2026.md"
    survey = load_survey(path)
    assert survey.id == "my-survey-2026"
    assert [q.id for q in survey.sensitive_questions] == ["did_it"]
    assert main(["build", str(path), "-o", "dist", "--templates", str(TEMPLATES), "--pyodide",
                 str(PYODIDE), "--no-compress"]) == 0
    assert (tmp_path / "dist" / "my-survey-2026" / "index.html").is_file()
    capsys.readouterr()
    assert main(["new", "My Survey_2026.md"]) == 2
    assert "already exists" in capsys.readouterr().err
