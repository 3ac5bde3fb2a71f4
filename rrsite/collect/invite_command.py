"""`rrsite invite --survey ID -n 500 --url URL -o codes.csv`: personal invitation links.

Writes `codes.csv` (`code,link`; the link carries the code in its fragment, `URL#invitation=CODE`,
which browsers never send to a server, so it stays out of every server and proxy log) and records
the codes' SHA-256 hashes in the collector's database. From then on the survey accepts only
submissions carrying an unused code, each code once. The database keeps whether a code was used,
in a table with nothing that joins it to the submission (README "Keeping fake submissions out").
"""

from __future__ import annotations

import argparse
import csv
import secrets
import sys
from pathlib import Path

from ..errors import UsageError
from .manifests import SURVEY_ID_RE

#: Random bytes per code: 96 bits, 16 characters of base64url.
CODE_BYTES = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite invite`."""
    parser.add_argument("--survey", required=True, metavar="ID", help="the survey's id")
    parser.add_argument("-n", type=int, required=True, metavar="N", help="how many codes")
    parser.add_argument("--url", required=True,
                        help="the survey page's address, e.g. https://surveys.example.org/honor/")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE.csv",
                        help="where to write the codes and links (must not exist yet)")
    parser.add_argument("--db", default="rrsite.db",
                        help="the collector's SQLite database (created if missing; default "
                        "rrsite.db) or PostgreSQL database (postgresql://...)")
    parser.add_argument("--blind", action="store_true",
                        help="blind invitations: the page trades its code for a blind-signed "
                        "token when the survey opens and sends only the token with the answers "
                        "(docs/explanation/blind-tokens.md); makes the key file if missing")
    parser.add_argument("--blind-key", type=Path, default=None, metavar="FILE",
                        help="with --blind: the collector's key file (default rrsite-blind.pem; "
                        "created with mode 0600 if missing; `rrsite serve --blind-key` reads it)")


def new_codes(count: int) -> list[str]:
    """`count` distinct random codes from the operating system's secure random source."""
    codes: set[str] = set()
    while len(codes) < count:
        codes.add(secrets.token_urlsafe(CODE_BYTES))
    return sorted(codes)


def run(args: argparse.Namespace) -> int:
    """Draw the codes, write the CSV (a new file), record the hashes; no CSV if recording fails."""
    if not SURVEY_ID_RE.fullmatch(args.survey):
        raise UsageError(f"--survey {args.survey!r} is not a survey id")
    if not 1 <= args.n <= 1_000_000:
        raise UsageError(f"-n must be between 1 and 1000000, got {args.n}")
    url: str = args.url
    if not url.startswith(("https://", "http://")) or "#" in url:
        raise UsageError(f"--url {url!r}: give the page's address, http(s)://... without a '#'")
    if not args.output.parent.is_dir():
        raise UsageError(f"-o {args.output}: the folder {args.output.parent} does not exist")
    from .stores import open_store

    if args.blind_key is not None and not args.blind:
        raise UsageError("--blind-key is only used with --blind")
    codes = new_codes(args.n)
    store = open_store(args.db)  # StoreError (path and reason) before anything is written
    fragment = ""
    blind_note = ""
    try:
        if args.blind:
            from .blindkey import DEFAULT_PATH, load_or_create
            from .blindstore import mark_blind

            key_path = args.blind_key or Path(DEFAULT_PATH)
            signer, made = load_or_create(key_path)
            mark_blind(store, args.survey, signer.key_id)
            fragment = f"&key={signer.key_id}"
            blind_note = (f"\nrrsite invite: blind invitations: the page trades its code for a "
                          f"token when it opens and sends only the token; "
                          f"{'new key' if made else 'key'} {key_path} (mode 0600, key id "
                          f"{signer.key_id}): keep it private, back it up, and start "
                          f"`rrsite serve --blind-key {key_path}`")
        try:
            handle = open(args.output, "x", encoding="utf-8", newline="")
        except FileExistsError:
            raise UsageError(f"-o {args.output}: the file exists; choose a new name (its codes "
                             "may already have been sent)") from None
        try:
            with handle:
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(["code", "link"])
                for code in codes:
                    writer.writerow([code, f"{url}#invitation={code}{fragment}"])
            added = store.add_invitations(args.survey, codes)
        except BaseException:
            args.output.unlink()  # codes the collector does not know must not be sent out
            raise
    finally:
        store.close()
    print(f"rrsite invite: {added} codes for survey {args.survey!r} -> {args.output} (database "
          f"{store.path}); the survey now accepts only submissions with an unused code"
          f"{blind_note}", file=sys.stderr)
    return 0
