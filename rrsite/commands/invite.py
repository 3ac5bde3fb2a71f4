"""`rrsite invite --survey ID -n 500 --url URL -o codes.csv`: personal invitation links.

With ``--frame frame.csv`` (one row per invitee, rrsite/collect/invitations/frame.py) there is one
code per frame row, the codes file keeps the frame's columns for a mail merge, each link also
carries the invitee's design cell id (``#invitation=CODE&cell=CELL``), and ``--cells FILE.csv``
receives the design of each cell for `rrsite analyze --design`.

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

from ..collect.manifests import SURVEY_ID_RE
from ..errors import UsageError

#: Random bytes per code: 96 bits, 16 characters of base64url.
CODE_BYTES = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite invite`."""
    parser.add_argument("--survey", required=True, metavar="ID", help="the survey's id")
    parser.add_argument("-n", type=int, metavar="N",
                        help="how many codes (without --frame: one per frame row)")
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
                        help="with --blind: the collector's key file, one key per survey (default "
                        "rrsite-blind.pem; created with mode 0600 if missing, a new survey's key "
                        "added to it; never inside the site folder; `rrsite serve --blind-key` "
                        "reads it)")
    frame = parser.add_argument_group(
        "sampling frame", "one code per row of a sampling frame; each link carries only the "
        "invitee's design cell (an id shared by everyone with the same stratum, cluster and "
        "weight), never the frame row")
    frame.add_argument("--frame", metavar="FRAME.csv", help="the invitees, one row each")
    frame.add_argument("--strata", metavar="COL", help="the frame's stratum column")
    frame.add_argument("--cluster", metavar="COL", help="the frame's cluster column")
    frame.add_argument("--weight", metavar="COL", help="the frame's sampling weight column")
    frame.add_argument("--inclusion", metavar="COL",
                       help="the frame's inclusion probability column (instead of --weight)")
    frame.add_argument("--fpc", metavar="COL",
                       help="the frame's finite-population correction column")
    frame.add_argument("--min-cell", type=int, default=10, metavar="K",
                       help="refuse design cells with fewer than K invitees (default 10, at "
                       "least 5): a small cell singles its respondents out")
    frame.add_argument("--cells", type=Path, metavar="FILE.csv",
                       help="with --frame: where to write each cell's design (must not exist)")


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
    plan = None
    if args.frame is not None:
        from ..collect.invitations.frame import plan_frame

        if args.n is not None:
            raise UsageError("--frame gives one code per row; leave out -n")
        if args.cells is None:
            raise UsageError("--frame needs --cells FILE.csv (each cell's design, for the "
                             "analysis)")
        if not args.cells.parent.is_dir():
            raise UsageError(f"--cells {args.cells}: the folder {args.cells.parent} does not "
                             "exist")
        if args.cells.exists():
            raise UsageError(f"--cells {args.cells}: the file exists; choose a new name")
        plan = plan_frame(args.frame, strata=args.strata, cluster=args.cluster,
                          weight=args.weight, inclusion=args.inclusion, fpc=args.fpc,
                          min_cell=args.min_cell)
        args.n = len(plan.rows)
    elif any(v is not None for v in (args.strata, args.cluster, args.weight, args.inclusion,
                                      args.fpc, args.cells)):
        raise UsageError("--strata, --cluster, --weight, --inclusion, --fpc and --cells need "
                         "--frame")
    if args.n is None:
        raise UsageError("give -n N (how many codes) or --frame FRAME.csv")
    if not 1 <= args.n <= 1_000_000:
        raise UsageError(f"-n must be between 1 and 1000000, got {args.n}")
    url: str = args.url
    if not url.startswith(("https://", "http://")) or "#" in url:
        raise UsageError(f"--url {url!r}: give the page's address, http(s)://... without a '#'")
    if not args.output.parent.is_dir():
        raise UsageError(f"-o {args.output}: the folder {args.output.parent} does not exist")
    from ..collect.stores import open_store

    if args.blind_key is not None and not args.blind:
        raise UsageError("--blind-key is only used with --blind")
    codes = new_codes(args.n)
    store = open_store(args.db)  # StoreError (path and reason) before anything is written
    fragment = ""
    blind_note = ""
    try:
        if args.blind:
            from ..collect.invitations.blindkey import DEFAULT_PATH, key_for_survey, site_folder_of
            from ..collect.invitations.blindstore import mark_blind, survey_keys_now

            key_path = args.blind_key or Path(DEFAULT_PATH)
            site = site_folder_of(key_path)
            if site is not None:
                raise UsageError(f"--blind-key {key_path} lies inside the built site {site}: a "
                                 "server of that folder would hand the private key to anyone; "
                                 "keep it outside (e.g. --blind-key ../rrsite-blind.pem)")
            existed = key_path.exists()
            signer, made = key_for_survey(key_path, args.survey,
                                          survey_keys_now(store).get(args.survey))
            mark_blind(store, args.survey, signer.key_id)
            fragment = f"&key={signer.key_id}"
            blind_note = (f"\nrrsite invite: blind invitations: the page trades its code for a "
                          f"token when it opens and sends only the token; "
                          f"{'new key' if made else 'key'} of survey {args.survey!r} in "
                          f"{key_path} (mode 0600, key id {signer.key_id}): keep the file "
                          f"private, back it up{' again' if made and existed else ''}, and start "
                          f"`rrsite serve --blind-key {key_path}`")
        try:
            handle = open(args.output, "x", encoding="utf-8", newline="")
        except FileExistsError:
            raise UsageError(f"-o {args.output}: the file exists; choose a new name (its codes "
                             "may already have been sent)") from None
        try:
            with handle:
                writer = csv.writer(handle, lineterminator="\n")
                if plan is None:
                    writer.writerow(["code", "link"])
                    for code in codes:
                        writer.writerow([code, f"{url}#invitation={code}{fragment}"])
                else:
                    from ..collect.invitations.frame import write_cells

                    secrets.SystemRandom().shuffle(codes)
                    writer.writerow([*plan.header, "code", "link"])
                    for row, code, cell in zip(plan.rows, codes, plan.cell_of_row, strict=True):
                        writer.writerow([*(row.get(c, "") for c in plan.header), code,
                                         f"{url}#invitation={code}&cell={cell}{fragment}"])
                    write_cells(args.cells, plan)
            added = store.add_invitations(args.survey, codes)
        except BaseException:
            args.output.unlink()  # codes the collector does not know must not be sent out
            if plan is not None and args.cells is not None:
                args.cells.unlink(missing_ok=True)
            raise
    finally:
        store.close()
    print(f"rrsite invite: {added} codes for survey {args.survey!r} -> {args.output} (database "
          f"{store.path}); the survey now accepts only submissions with an unused code"
          f"{blind_note}", file=sys.stderr)
    if plan is not None:
        print(f"rrsite invite: {len(plan.cells)} design cells -> {args.cells} (analyze with "
              f"--design {args.cells} --weights weight)", file=sys.stderr)
        for warning in plan.warnings:
            print(f"rrsite invite: warning: {warning}", file=sys.stderr)
    return 0
