"""Build survey files into a static site (layout in docs/contracts.md, "Built site layout").

Everything is built into a temporary folder beside DIST and swapped in only when every survey
built; a failed build leaves the previous DIST untouched and reports every problem as
``file:line: message``.
"""

from __future__ import annotations

import io
import json
import math
import os
import secrets
import shutil
import traceback
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

import rrsite

from ..core import NumberDesign, number_design_from_spec
from ..core.respond import modules_for
from ..errors import RRSiteError
from ..survey import Survey, SurveyError, SurveyErrors, endpoint_origin, load_survey
from ..survey.bundle import core_zip
from ..survey.catalog import compare_catalog, primary_subtag, text_direction
from ..survey.devices import mismatch as device_mismatch
from ..survey.fielding.translations import translation_of
from . import headers, stdlib
from .assets import (
    AssetError,
    Compressed,
    content_hash,
    default_cache_dir,
    hash_assets,
    precompress,
    sri,
)
from .bundle import BundleError, bundle_assets, worker_with_runtime
from .filelist import FILE_LIST, code_fingerprint, write_file_list
from .pins import MissingAsset, Pins, UnpinnedCode, pin_page
from .swap import swap_in

#: The Pyodide files needed to start (PYODIDE-NOTES.md); package wheels are not shipped.
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json")
ASSETS_DIR = "_rr"
PAGE_TEMPLATE = "page.html"
#: The worker module among the template's assets, named in the page's config.
WORKER_ASSETS = ("worker.js", "worker.mjs")
#: Pyodide's JavaScript, which the build puts inside the worker's script (rrsite/site/bundle.py):
#: not shipped as files of its own.
RUNTIME_IN_WORKER = ("pyodide.mjs", "pyodide.asm.mjs")


class BuildError(RRSiteError):
    """The build cannot start or finish (a bad output folder, a missing runtime)."""


def package_root() -> Path:
    """The folder holding the rrsite package (the repository in a development install)."""
    return Path(rrsite.__file__).resolve().parent.parent


def default_templates() -> Path:
    """The page templates shipped beside the package: ``<repository>/templates``."""
    return package_root() / "templates"


def default_pyodide() -> Path:
    """The pinned npm Pyodide: ``<repository>/node_modules/pyodide``, else in the cwd's."""
    for candidate in (package_root() / "node_modules" / "pyodide",
                      Path.cwd() / "node_modules" / "pyodide"):
        if candidate.is_dir():
            return candidate
    return package_root() / "node_modules" / "pyodide"


def survey_files(sources: Sequence[Path]) -> list[Path]:
    """The survey files named: files as given, folders as their ``*.md`` files in name order.

    In a folder, ``X.L.md`` beside ``X.md`` (L a language code) is a translation of ``X.md``
    (rrsite.survey.fielding.translations), not a survey of its own.
    """
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            found = sorted(path for path in source.glob("*.md")
                           if path.is_file() and translation_of(path) is None)
            if not found:
                raise BuildError(f"{source}: no .md survey files in this folder")
            files.extend(found)
        elif source.is_file():
            files.append(source)
        else:
            raise BuildError(f"{source}: no such file or folder")
    return files


@dataclass
class Runtime:
    """The Pyodide files to ship and the folder name they get under ``_rr/``."""

    folder: Path
    version: str
    files: dict[str, bytes]
    #: What the build should tell about the runtime (a standard library it could not shrink).
    notes: list[str] = field(default_factory=list)

    @property
    def dirname(self) -> str:
        """``pyodide-<version>-<hash of the files>``."""
        digest = content_hash(b"".join(name.encode() + b"\0" + data
                                       for name, data in sorted(self.files.items())))
        return f"pyodide-{self.version}-{digest}"


def load_runtime(folder: Path, *, full_stdlib: bool = False,
                 cache: Path | None = None) -> Runtime:
    """Read the Pyodide files from ``folder``; refuse a folder that lacks any of them.

    The standard library shipped is trimmed to the traced keep list and minified
    (rrsite/site/stdlib.py) unless ``full_stdlib``; ``cache`` keeps that library under a key of
    the runtime, the keep list and the budget (:func:`stdlib.shipped_stdlib`), so a survey edit
    never starts Node again.
    """
    missing = [name for name in PYODIDE_FILES if not (folder / name).is_file()]
    if missing:
        raise BuildError(f"{folder}: not a Pyodide runtime folder, missing {', '.join(missing)} "
                         "(run `npm ci`, or give --pyodide DIR)")
    version = stdlib.pyodide_version(folder)
    safe = "".join(ch for ch in version if ch.isalnum() or ch in ".-") or "unknown"
    files = {name: (folder / name).read_bytes() for name in PYODIDE_FILES}
    notes: list[str] = []
    library = files["python_stdlib.zip"]
    if not full_stdlib and zipfile.is_zipfile(io.BytesIO(library)):
        try:
            library, notes = stdlib.shipped_stdlib(folder, cache, stdlib.PRECOMPILE_BUDGET,
                                                    files=files)
        except stdlib.StdlibError as error:
            raise BuildError(f"{folder / 'python_stdlib.zip'}: {error}; or build with "
                             "--full-stdlib") from None
    files["python_stdlib.zip"] = stored_zip(library)
    return Runtime(folder, safe, files, notes)


def stored_zip(data: bytes) -> bytes:
    """The same zip with every entry stored, not deflated (same names, order, times, modes).

    Pyodide imports the standard library from this zip as it is. Deflated entries cannot be
    compressed again on the wire (2.55 MB either way); stored ones can: with brotli the file
    weighs 1.6 MB, about a megabyte less for every first visit. Data that is not a zip (or is
    stored already) is returned as it is.
    """
    try:
        source = zipfile.ZipFile(io.BytesIO(data))
        infos = source.infolist()
        if all(info.compress_type == zipfile.ZIP_STORED for info in infos):
            return data
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as target:
            for info in infos:
                entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                entry.external_attr = info.external_attr
                entry.create_system = info.create_system
                target.writestr(entry, source.read(info))
        return buffer.getvalue()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return data


@dataclass
class Templates:
    """The page template folder: Jinja2 environment, assets and message catalogs."""

    folder: Path
    environment: jinja2.Environment
    assets: dict[str, bytes]
    catalogs: dict[str, dict[str, Any]]


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache, except that a cache that cannot be written is simply not used."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Store the compiled template (atomically, by Jinja); an unwritable folder is skipped."""
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def template_bytecode_cache(cache: Path | None) -> jinja2.BytecodeCache | None:
    """Jinja's own cache of compiled templates in ``cache``, or None without a cache folder.

    Compiling page.html takes 0.15-0.4 s, more than the rest of a build of one survey.
    ``jinja2.FileSystemBytecodeCache`` keys an entry by the template's path, checks the source's
    checksum and Python's version before using it and writes atomically; the folder is named by
    Jinja's version and the environment's options, which also decide the compiled code.
    """
    if cache is None:
        return None
    options = f"jinja-{jinja2.__version__}-autoescape-keepnewline"
    folder = cache / "templates" / options
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _TemplateCache(str(folder))


def load_templates(folder: Path, errors: list[SurveyError],
                   cache: Path | None = None) -> Templates | None:
    """Check and read a template folder; problems are added to ``errors``.

    ``cache``: a folder for compiled templates (:func:`template_bytecode_cache`).
    """
    page = folder / PAGE_TEMPLATE
    if not page.is_file():
        errors.append(SurveyError(str(page), 1, "the page template is missing (give --templates "
                                                "DIR with page.html, assets/ and messages/)"))
        return None
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        keep_trailing_newline=True,
        bytecode_cache=template_bytecode_cache(cache),
    )
    try:
        environment.get_template(PAGE_TEMPLATE)
    except jinja2.TemplateSyntaxError as error:
        errors.append(SurveyError(str(page), error.lineno or 1, f"template error: {error.message}"))
    assets: dict[str, bytes] = {}
    asset_dir = folder / "assets"
    if asset_dir.is_dir():
        for path in sorted(asset_dir.rglob("*")):
            if path.is_file() and not any(part.startswith(".") for part in path.parts):
                assets[path.relative_to(asset_dir).as_posix()] = path.read_bytes()
    catalogs: dict[str, dict[str, Any]] = {}
    for path in sorted((folder / "messages").glob("*.json")):
        try:
            catalog = json.loads(path.read_text("utf-8"))
        except UnicodeDecodeError:
            errors.append(SurveyError(str(path), 1, "the message catalog is not UTF-8"))
            continue
        except json.JSONDecodeError as error:
            errors.append(SurveyError(str(path), error.lineno, f"bad JSON: {error.msg}"))
            continue
        if not isinstance(catalog, dict):
            errors.append(SurveyError(str(path), 1, "a message catalog must be a JSON object"))
            continue
        catalogs[path.stem] = catalog
    reference = catalogs.get("en")
    if reference is not None:
        for language, catalog in catalogs.items():
            missing = sorted(set(reference) - set(catalog))
            if missing:
                path = folder / "messages" / f"{language}.json"
                errors.append(SurveyError(str(path), 1, f"the {language} catalog lacks keys that "
                                                        f"en.json has: {', '.join(missing)}"))
    return Templates(folder, environment, assets, catalogs)


def catalog_for(survey: Survey, templates: Templates) -> dict[str, Any]:
    """The messages of a survey's page: its own catalog, else its language's shipped one.

    A regional code without a catalog of its own uses its language's: ``pt-BR`` uses ``pt``.
    """
    if survey.messages is not None:
        return dict(survey.messages.messages)
    catalog = templates.catalogs.get(survey.language)
    if catalog is None:
        catalog = templates.catalogs[primary_subtag(survey.language)]
    return catalog


def _check_catalog(survey: Survey, templates: Templates, errors: list[SurveyError],
                   warnings: list[SurveyError]) -> None:
    """A survey's language has a catalog, and its own catalog is complete."""
    have = ", ".join(sorted(templates.catalogs)) or "none"
    if survey.messages is None:
        if survey.language in templates.catalogs or \
                primary_subtag(survey.language) in templates.catalogs:
            return
        line = survey.lines.get("language", 1)
        errors.append(SurveyError(survey.file, line, f"language '{survey.language}' has no "
                                  f"message catalog in {templates.folder / 'messages'} (there "
                                  f"are: {have}): bring your own, `messages: "
                                  f"{survey.language}.json` beside the survey, a translation of "
                                  "en.json"))
        return
    reference = templates.catalogs.get("en")
    if reference is None:
        return
    comparison = compare_catalog(survey.messages, reference)
    if comparison.missing:
        line = survey.lines.get("messages", 1)
        shown = ", ".join(comparison.missing[:12])
        more = len(comparison.missing) - 12
        errors.append(SurveyError(survey.file, line, f"{survey.messages.path.name} lacks "
                                  f"{len(comparison.missing)} of the {len(reference)} messages "
                                  f"of en.json: {shown}" + (f" and {more} more" if more > 0
                                                            else "")))
    errors.extend(comparison.errors)
    warnings.extend(comparison.warnings)


@dataclass
class Plan:
    """Everything the build writes, computed before anything is written."""

    surveys: list[Survey]
    templates: Templates
    runtime: Runtime
    warnings: list[SurveyError] = field(default_factory=list)


@dataclass
class BuildResult:
    """What a build wrote: the surveys, and every compressed file with its sizes."""

    dist: Path
    surveys: list[Survey]
    compressed: list[Compressed]
    warnings: list[SurveyError]
    #: The short fingerprint of the code under ``_rr/`` (:func:`filelist.code_fingerprint`).
    fingerprint: str = ""


def plan_build(sources: Sequence[Path], templates: Path, pyodide: Path, *,
               full_stdlib: bool = False, cache: Path | None = None) -> Plan:
    """Load and check every survey, the templates and the runtime; raise with every problem."""
    files = survey_files(sources)
    errors: list[SurveyError] = []
    warnings: list[SurveyError] = []
    surveys: list[Survey] = []
    for file in files:
        try:
            survey = load_survey(file)
        except SurveyErrors as failure:
            errors.extend(failure.errors)
            continue
        surveys.append(survey)
        warnings.extend(survey.warnings)
    owners: dict[str, Survey] = {}
    for survey in surveys:
        line = survey.lines.get("id", 1)
        if survey.id in owners:
            first = owners[survey.id]
            where = f"{first.file}:{first.lines.get('id', 1)}"
            errors.append(SurveyError(survey.file, line,
                                      f"survey id '{survey.id}' is also used by {where}"))
        owners.setdefault(survey.id, survey)
    warnings.extend(_unclaimed_translations(sources, surveys))
    loaded = load_templates(templates, errors, cache)
    if loaded is not None:
        for survey in surveys:
            for version in (survey, *survey.translations.values()):
                _check_catalog(version, loaded, errors, warnings)
    if errors:
        raise SurveyErrors(errors)
    assert loaded is not None
    page = (templates / PAGE_TEMPLATE).read_text("utf-8", errors="replace")
    for survey in surveys:
        for question in survey.questions:
            if question.before_html and "before_html" not in page:
                warnings.append(SurveyError(survey.file, question.line, "the prose above this "
                                            "question's heading is not shown: the template does "
                                            "not use before_html"))
        for question in survey.sensitive_questions:
            if question.design is not None:
                problem = device_mismatch(question.text_html + " " + question.help_html,
                                          question.design, survey.language)
                if problem:
                    warnings.append(SurveyError(survey.file, question.line,
                                                f"question '{question.id}': {problem}"))
    runtime = load_runtime(pyodide, full_stdlib=full_stdlib, cache=cache)
    stdlib_zip = str(pyodide / "python_stdlib.zip")
    warnings.extend(SurveyError(stdlib_zip, 1, note) for note in runtime.notes)
    return Plan(surveys, loaded, runtime, warnings)


def _unclaimed_translations(sources: Sequence[Path],
                            surveys: Sequence[Survey]) -> list[SurveyError]:
    """A warning for each file of a folder named as a translation that its survey does not list."""
    claimed = {(survey.path.resolve(), language) for survey in surveys
               for language in survey.translations}
    found = []
    for source in sources:
        if not source.is_dir():
            continue
        for path in sorted(source.glob("*.md")):
            of = translation_of(path)
            if of is not None and (of[0].resolve(), of[1]) not in claimed:
                found.append(SurveyError(str(path), 1, f"{path.name} is named as the "
                                         f"{of[1]} translation of {of[0].name}, which does not "
                                         f"list {of[1]} in `languages:`: it is not built"))
    return found


def check_dist(dist: Path, protected: Sequence[Path]) -> None:
    """Refuse an output folder whose replacement would lose something that is not a build."""
    resolved = dist.resolve()
    if dist.exists() and not dist.is_dir():
        raise BuildError(f"{dist} exists and is not a folder")
    for path in protected:
        inside = path.resolve()
        if inside == resolved or resolved in inside.parents:
            raise BuildError(f"{dist} contains {path}: choose an output folder of its own")
    if dist.is_dir() and any(dist.iterdir()) and not (dist / ASSETS_DIR).is_dir():
        raise BuildError(f"{dist} is not empty and is not an rrsite build (no {ASSETS_DIR}/ in "
                         "it): remove it or choose another output folder")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def remove_stale_workspaces(dist: Path) -> None:
    """Remove what builds killed half-way left beside ``dist`` (their process is gone)."""
    if not dist.parent.is_dir():
        return
    prefix = f".{dist.name}.rrsite-build-"
    for leftover in dist.parent.iterdir():
        if not leftover.name.startswith(prefix) or not leftover.is_dir():
            continue
        pid = leftover.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(leftover, ignore_errors=True)


def build(
    sources: Sequence[Path],
    dist: Path,
    templates: Path | None = None,
    pyodide: Path | None = None,
    *,
    compress: bool = True,
    cache: Path | None | bool = True,
    full_stdlib: bool = False,
) -> BuildResult:
    """Build every survey of ``sources`` into ``dist``; all or nothing.

    ``cache``: a folder for compressed copies and the minified standard library, True for the
    default one, False for none. ``full_stdlib``: ship Pyodide's whole standard library instead
    of the trimmed one.
    """
    templates = templates or default_templates()
    pyodide = pyodide or default_pyodide()
    cache_dir = default_cache_dir() if cache is True else (cache or None)
    plan = plan_build(sources, templates, pyodide, full_stdlib=full_stdlib, cache=cache_dir)
    check_dist(dist, [*sources, templates, pyodide, *(s.path for s in plan.surveys)])
    dist.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_workspaces(dist)
    workspace = dist.with_name(f".{dist.name}.rrsite-build-{os.getpid()}-{secrets.token_hex(4)}")
    workspace.mkdir()
    try:
        fingerprint = write_site(plan, workspace)
        compressed: list[Compressed] = []
        if compress:
            files = [path for path in sorted(workspace.rglob("*"))
                     if path.is_file() and path.name != "_headers"]
            compressed = precompress(files, cache_dir)
        write_file_list(workspace, fingerprint)
        swap_in(workspace, dist)
    except BaseException:
        shutil.rmtree(workspace, ignore_errors=True)
        raise
    return BuildResult(dist, plan.surveys, compressed, plan.warnings, fingerprint)


# --------------------------------------------------------------------------------------------
# Writing


def _lock_without_packages(data: bytes) -> dict[str, Any] | None:
    """Pyodide's lock file with its ``info`` and no packages, or None if it cannot be read.

    The worker hands it to loadPyodide (``lockFileContents``), which then does not fetch the
    lock file (22 kB compressed, 120 kB to parse) during the start: rrsite loads no package.
    """
    try:
        info = json.loads(data)["info"]
    except (ValueError, KeyError, TypeError):
        return None
    return {"info": info, "packages": {}} if isinstance(info, dict) else None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` in it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _template_questions(survey: Survey, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    questions = []
    for question, entry in zip(survey.questions, manifest["questions"], strict=True):
        extended = dict(entry)
        extended["text_html"] = Markup(question.text_html)
        extended["help_html"] = Markup(question.help_html)
        extended["before_html"] = Markup(question.before_html)
        extended["options"] = [
            {**option, "label_html": Markup(source.label_html)}
            for option, source in zip(entry.get("options", []), question.options, strict=True)
        ]
        if question.innocuous is not None:
            extended["innocuous_html"] = Markup(question.innocuous_html)
        if question.mirrored is not None:
            extended["mirrored_html"] = Markup(question.mirrored_html)
        if question.complement is not None:  # the extended crosswise model's group 2 statement
            extended["complement_html"] = Markup(question.complement_html)
        questions.append(extended)
    # a comprehension check is asked inside its question's box (page.html, survey/fielding)
    by_id = {entry["id"]: entry for entry in questions}
    for entry in questions:
        if entry.get("role") == "check":
            by_id[entry["check"]["question"]]["check_entry"] = entry
    return questions


def _connect(survey: Survey) -> list[str]:
    """Origins the survey's page sends to besides its own: the endpoint's, if any."""
    return [endpoint_origin(survey.submit["url"])] if survey.submit["to"] == "endpoint" else []


def _line_naming(page: Path, text: str) -> int:
    """The first line of the template ``page`` holding ``text`` (1 if none does)."""
    try:
        lines = page.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next((number for number, line in enumerate(lines, 1) if text in line), 1)


def _template_line(error: BaseException, page: Path) -> int:
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if frame.filename and Path(frame.filename).name == page.name and frame.lineno:
            return frame.lineno
    return 1


def write_site(plan: Plan, root: Path) -> str:
    """Write the planned site (pages, manifests, assets) into ``root``; the code fingerprint."""
    assets = root / ASSETS_DIR
    folder = plan.templates.folder / "assets"
    try:
        sources = bundle_assets(plan.templates.assets)
    except BundleError as error:
        raise BuildError(f"{folder}/{error}") from None
    worker = next((name for name in WORKER_ASSETS if name in sources), None)
    if worker is not None:
        files = plan.runtime.files
        try:
            sources[worker] = worker_with_runtime(sources[worker], files["pyodide.mjs"],
                                                  files["pyodide.asm.mjs"])
        except BundleError as error:
            raise BuildError(f"{plan.runtime.folder}/{error} (rrsite build puts Pyodide's "
                             f"JavaScript inside {worker}: is this Pyodide {plan.runtime.version} "
                             "one it supports?)") from None
    try:
        hashed = hash_assets(sources)
    except AssetError as error:
        raise BuildError(f"{folder}: {error}") from None
    code: list[tuple[str, bytes]] = []
    for hashed_name, data in hashed.values():
        _write(assets / hashed_name, data)
        code.append((hashed_name, data))
    core = core_zip()
    core_name = f"core.{content_hash(core)}.zip"
    _write(assets / core_name, core)
    code.append((core_name, core))
    runtime_dir = plan.runtime.dirname
    lock = _lock_without_packages(plan.runtime.files.get("pyodide-lock.json", b""))
    for name, data in plan.runtime.files.items():
        if worker is not None and name in RUNTIME_IN_WORKER:
            continue  # inside the worker's script
        _write(assets / runtime_dir / name, data)
        code.append((f"{runtime_dir}/{name}", data))
    fingerprint = code_fingerprint(code)

    origins = [origin for survey in plan.surveys for origin in _connect(survey)]
    rules = headers.site_rules(origins, pages=[survey.id for survey in plan.surveys])
    _write(root / "_headers", headers.format_headers_file(rules).encode())

    page = plan.templates.folder / PAGE_TEMPLATE
    template = plan.templates.environment.get_template(PAGE_TEMPLATE)
    # The runtime's files the worker fetches: the wasm and the standard library (its JavaScript is
    # inside the worker's script, the lock is handed over in the config).
    runtime_pins = {name: sri(data) for name, data in sorted(plan.runtime.files.items())
                    if name in ("pyodide.asm.wasm", "python_stdlib.zip")}
    shared = _PageAssets(hashed, core_name, runtime_dir, lock, worker, sri(core), runtime_pins,
                         fingerprint)
    for survey in plan.surveys:
        manifest = survey.manifest()
        _write(root / survey.id / "survey.json",
               (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        # one page per language (survey/fielding/translations.py): the first in DIST/<id>/, each
        # other in DIST/<id>/<language>/, every one with the survey's version
        html = _render_page(plan, template, page, survey, survey, manifest, shared)
        _write(root / survey.id / "index.html", html.encode("utf-8"))
        for language, translation in survey.translations.items():
            html = _render_page(plan, template, page, survey, translation,
                                translation.manifest(), shared)
            _write(root / survey.id / language / "index.html", html.encode("utf-8"))
    return fingerprint


@dataclass
class _PageAssets:
    """What every page refers to: assets, core, runtime and lock, with their pinned integrity."""

    hashed: dict[str, tuple[str, bytes]]
    core_name: str
    runtime_dir: str
    lock: dict[str, Any] | None
    #: the worker among the assets (its name before hashing), if the templates have one
    worker: str | None
    #: the core bundle's Subresource Integrity
    core_integrity: str
    #: the runtime files the worker fetches -> their Subresource Integrity
    runtime_pins: dict[str, str]
    #: the code fingerprint of ``_rr/`` (rrsite/site/filelist.py)
    fingerprint: str


def _language_links(survey: Survey, version: Survey) -> dict[str, str]:
    """The page of each language, relative to ``version``'s page (the first is DIST/<id>/)."""
    if not survey.languages:
        return {}
    first = survey.languages[0]
    links = {}
    for code in survey.languages:
        if code == version.language:
            links[code] = "./"
        elif version.language == first:
            links[code] = f"{code}/"
        else:
            links[code] = "../" if code == first else f"../{code}/"
    return links


def _render_page(plan: Plan, template: jinja2.Template, page: Path, survey: Survey,
                 version: Survey, manifest: dict[str, Any], shared: _PageAssets) -> str:
    """One page of a survey: ``version`` is the survey or one of its translations."""
    depth = 1 if version is survey else 2
    prefix = "../" * depth + f"{ASSETS_DIR}/"
    pins = Pins(shared.hashed, prefix)
    worker = shared.worker
    urls = {
        "manifest_url": "../" * (depth - 1) + "survey.json",
        "core_url": prefix + shared.core_name,
        "pyodide_url": f"{prefix}{shared.runtime_dir}/",
        "worker_url": pins.url(worker) if worker else None,
    }
    config = {"survey": survey.id, "version": manifest["version"],
              "core_hash": manifest["core_hash"], **urls,
              "submit": manifest["submit"], "questions": page_questions(manifest),
              "review": survey.review,
              "integrity": {"worker": pins.integrity(worker) if worker else None,
                            "core": shared.core_integrity, "runtime": shared.runtime_pins},
              "code_fingerprint": shared.fingerprint,
              "core_modules": modules_for(manifest["questions"])}
    links = _language_links(survey, version)
    if links:  # a survey in several languages: the page's own and where the others are
        config.update(language=version.language, languages=links)
    if survey.panel is not None:
        config["panel"] = dict(survey.panel)
    if shared.lock is not None:
        config["pyodide_lock"] = shared.lock
    names = next(({o["value"]: o["label"] for o in q["options"]}
                  for q in manifest["questions"] if q.get("role") == "language"), {})
    context = {
        "survey": manifest,
        "questions": _template_questions(version, manifest),
        "intro_html": Markup(version.intro_html),
        "outro_html": Markup(version.outro_html),
        "consent_html": Markup(version.consent_html),  # fielding
        "lang": version.language,
        "dir": text_direction(version.language),  # ltr or rtl, from the language
        "messages": catalog_for(version, plan.templates),
        "asset": pins.url,
        "integrity": pins.integrity,
        "module_script": pins.module_script,
        "stylesheet": pins.stylesheet,
        "runtime_integrity": shared.runtime_pins,
        "code_fingerprint": shared.fingerprint,
        "config_json": Markup(_script_json(config)),
        "csp": headers.content_security_policy(_connect(survey)),
        # several languages: the links of the language menu, each language by its own name
        "languages": [{"code": code, "name": names.get(code, code), "href": href,
                       "current": code == version.language} for code, href in links.items()],
        **urls,
    }
    try:
        return pin_page(template.render(context), pins)
    except UnpinnedCode as unpinned:
        why = ("with an integrity that is not the file's (leave `integrity` to rrsite)"
               if unpinned.wrong_integrity else
               f"which is not a file in {plan.templates.folder / 'assets'}: rrsite pins every "
               "script and stylesheet with its integrity and cannot pin this one")
        raise SurveyErrors([SurveyError(str(page), _line_naming(page, unpinned.url),
                                        f"the page loads {unpinned.url} {why}")]) from None
    except MissingAsset as missing:
        raise SurveyErrors([SurveyError(str(page), _template_line(missing, page),
                                        f"asset('{missing}') is not a file in "
                                        f"{plan.templates.folder / 'assets'}")]) from None
    except jinja2.TemplateError as error:
        raise SurveyErrors([SurveyError(str(page), _template_line(error, page),
                                        f"template error while rendering {survey.id}: "
                                        f"{error}")]) from None


def page_questions(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The manifest's questions for the page's config; a randomized number gains ``display_step``.

    ``display_step`` is the power of ten a report is shown to (it is sent as core made it): the
    design's report grid (mixture, additive, multiplicative), laplace's grid, and for duchi and
    piecewise, whose reports are not on a short grid, a thousandth of the range rounded down to
    a power of ten.
    """
    questions = []
    for entry in manifest["questions"]:
        if entry.get("sensitive") and entry.get("type") == "number":
            step = display_step(number_design_from_spec(entry["design"]))
            entry = {**entry, "display_step": step}
        questions.append(entry)
    return questions


def display_step(design: NumberDesign) -> float:
    """The step a number design's reports are shown to (see :func:`page_questions`)."""
    if design.name == "laplace":
        return float(design.step)  # type: ignore[attr-defined]
    if design.name in ("duchi", "piecewise"):
        assert design.minimum is not None and design.maximum is not None
        if design.integer:
            return 1.0
        return float(10.0 ** math.floor(math.log10((design.maximum - design.minimum) / 1000.0)))
    return design.report_step


def describe(result: BuildResult, log: Callable[[str], None]) -> None:
    """Tell what was built, one line per survey, and the compressed sizes of the largest files."""
    for survey in result.surveys:
        sensitive = len(survey.sensitive_questions)
        others = "".join(f", {language}/" for language in survey.translations)
        log(f"built {result.dist / survey.id / 'index.html'}{others}  ({len(survey.questions)} "
            f"questions, {sensitive} randomized, version {survey.version})")
    if result.fingerprint:
        log(f"code fingerprint: {result.fingerprint} ({result.dist / FILE_LIST} lists every file "
            "with its SHA-256)")
    if result.compressed:
        raw = sum(item.size for item in result.compressed)
        packed = sum(item.brotli_size or item.size for item in result.compressed)
        log(f"pre-compressed: {len(result.compressed)} files of {raw:,} bytes weigh {packed:,} "
            "bytes on the wire with brotli")
