"""Every rejection reason, with crafted bad exports read every way (numpy path, csv-module path,
JSONL), the first rows shown per reason, and --strict."""

import gzip
import json
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.cli import main

from .helpers import (
    FAIR,
    HEADER,
    VERSION,
    VERSION_2,
    bad_jsonl_clubs,
    bad_jsonl_lines,
    good_jsonl,
    manifest,
    question,
    row,
    token,
    write_csv,
    write_jsonl,
    write_manifest,
)

V2_QUESTIONS = [
    question("violated", "yes-no", design={"name": "warner", "p": 0.8}),
    question("major", "choice", design={"name": "k-rr", "k": 3, "p": 0.6},
             values=["arts", "science", "law"]),
    question("year", "choice", values=["First", "Second", "Third or later"]),
    question("age", "number", min=16, max=99, integer=True, required=False),
    question("comment", "text", max_length=20, required=False),
]


@pytest.fixture
def manifests(tmp_path):
    return [write_manifest(tmp_path / "v1.json", manifest()),
            write_manifest(tmp_path / "v2.json", manifest(VERSION_2, V2_QUESTIONS))]


def bad_rows():
    """(row, reason, message fragment) for every way a well-formed CSV row can be wrong."""
    return [
        (row(100, survey=""), "missing-field", "no survey"),
        (row(101, version=""), "missing-field", "no version"),
        (row(102, respondent=""), "missing-field", "no respondent"),
        (row(103, survey="other-survey"), "unknown-survey", "'other-survey'"),
        (row(104, version="0000000000000000"), "unknown-version", "'0000000000000000'"),
        (row(105, violated="maybe"), "invalid-value", "violated: 'maybe' is not one of no, yes"),
        (row(106, major="medicine"), "invalid-value", "major: 'medicine'"),
        (row(107, year="first"), "invalid-value", "year: 'first'"),
        (row(108, age="200"), "invalid-value", "age: '200' is not a whole number >= 16 <= 99"),
        (row(109, age="20.5"), "invalid-value", "age: '20.5'"),
        (row(110, age="twenty"), "invalid-value", "age: 'twenty'"),
        (row(111, comment="x" * 21), "invalid-value", "comment: text longer than 20"),
        (row(112, clubs="chess"), "invalid-value", "clubs: 'chess' is not a JSON list"),
        (row(113, respondent="short"), "invalid-value", "respondent token 'short'"),
        (row(114, respondent="tok!" + "0" * 20), "invalid-value", "respondent token"),
        (row(115, version=VERSION_2, clubs="[]"), "invalid-value",
         f"version {VERSION_2} has no such question"),
        (row(5), "duplicate-respondent", f"respondent '{token(5)}' was seen before"),
        (row(116, violated="Yes"), "invalid-value", "violated: 'Yes'"),
    ]


def good_rows(count=40):
    return [row(i, violated="yes" if i % 4 == 0 else "no",
                major=["arts", "science", "law"][i % 3], year=["First", "Second"][i % 2],
                version=VERSION if i % 5 else VERSION_2, age=str(18 + i % 40),
                clubs="" if i % 5 == 0 else "[]")
            for i in range(count)]


def expected_counts():
    counts: dict[str, int] = {}
    for _, reason, _ in bad_rows():
        counts[reason] = counts.get(reason, 0) + 1
    return counts


def check(result, first_bad_line):
    assert result.rejected.counts == expected_counts()
    assert result.rows_accepted == 40
    assert result.rows_read == 40 + len(bad_rows())
    examples = result.rejected.examples
    for offset, (_, reason, fragment) in enumerate(bad_rows()):
        line = first_bad_line + offset
        shown = {e.row: e.message for e in examples[reason]}
        if line in shown:
            assert fragment in shown[line], (reason, shown[line])
    # the first rows of each reason are the ones shown, in order
    for reason, shown in examples.items():
        lines = [first_bad_line + i for i, (_, r, _) in enumerate(bad_rows()) if r == reason]
        assert [e.row for e in shown] == lines[:5]


def test_every_reason_numpy_path(tmp_path, manifests):
    export = write_csv(tmp_path / "export.csv", good_rows() + [r for r, _, _ in bad_rows()])
    assert b'"' not in export.read_bytes()  # the numpy path
    result = analyze([export], manifests=manifests)
    check(result, first_bad_line=42)
    assert all(e.file == str(export) for v in result.rejected.examples.values() for e in v)


def test_every_reason_csv_module_path(tmp_path, manifests):
    rows = good_rows() + [r for r, _, _ in bad_rows()]
    rows[1]["clubs"] = '["chess","rowing"]'  # quotes: the whole block goes through csv
    export = write_csv(tmp_path / "export.csv", rows)
    assert b'"' in export.read_bytes()
    check(analyze([export], manifests=manifests), first_bad_line=42)


def test_every_reason_jsonl(tmp_path, manifests):
    records = []
    for r in good_rows() + [r for r, _, _ in bad_rows()]:
        r = dict(r)
        if r["clubs"].startswith("["):
            r["clubs"] = json.loads(r["clubs"])
        if r["age"].isdigit():
            r["age"] = int(r["age"])
        records.append(r)
    export = write_jsonl(tmp_path / "export.jsonl", records)
    # JSONL has no header: the first bad record is line 41; blank "" values are left out, so
    # "no survey" etc. are empty strings in the record itself
    result = analyze([export], manifests=manifests)
    assert result.rejected.counts == expected_counts()
    assert result.rows_accepted == 40
    assert result.rejected.examples["unknown-version"][0].row == 45


def test_jsonl_specific_reasons(tmp_path, manifests):
    good = good_jsonl()
    lines = [json.dumps(good), *bad_jsonl_lines(good), "", *bad_jsonl_clubs(good)]
    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(lines) + "\n")
    result = analyze([export], manifests=manifests)
    assert result.rejected.counts == {"malformed-json": 3, "missing-field": 1,
                                      "invalid-value": 7}
    messages = {e.row: e.message for v in result.rejected.examples.values() for e in v}
    assert "not valid JSON" in messages[2]
    assert "must be a JSON object, got list" in messages[3]
    assert messages[4] == "no 'version'"
    assert messages[5] == "answers must be a JSON object"
    assert "'cheat', which no version" in messages[6]
    assert result.rows_accepted == 2
    assert result.question("violated").estimate.n == 1  # the None answer is "unanswered"
    assert result.question("violated").missing == 1


def test_malformed_rows_in_both_paths(tmp_path, manifests):
    good = ",".join(row(1).values())
    extra = ",".join(row(2).values()) + ",EXTRA"
    short = ",".join(list(row(3).values())[:-2])
    text = ",".join(HEADER) + "\n" + "\n".join([good, extra, short, "", good.replace(
        token(1), token(4))]) + "\n"
    plain = tmp_path / "plain.csv"
    plain.write_text(text)
    quoted = tmp_path / "quoted.csv"
    quoted.write_text(text.replace(",First,", ',"First",'))
    for export in (plain, quoted):
        result = analyze([export], manifests=manifests)
        assert result.rejected.counts == {"malformed-row": 2}, export
        shown = result.rejected.examples["malformed-row"]
        assert [(e.row, e.message) for e in shown] == [
            (3, "11 columns where the header has 10"), (4, "8 columns where the header has 10")]
        assert result.rows_accepted == 2 and result.rows_read == 4  # the blank line is skipped


def test_duplicates_across_files_blocks_and_threads(tmp_path, manifests):
    first = write_csv(tmp_path / "monday.csv", good_rows(30))
    second = write_csv(tmp_path / "friday.csv", good_rows(40))  # re-exported: 30 repeats
    baseline = analyze([first, second], manifests=manifests)
    assert baseline.rejected.counts == {"duplicate-respondent": 30}
    assert baseline.rows_accepted == 40
    assert baseline.rejected.examples["duplicate-respondent"][0].file == str(second)
    assert baseline.rejected.examples["duplicate-respondent"][0].row == 2
    for block_size in (64, 333, 4096):
        for threads in (1, 2):
            other = analyze([first, second], manifests=manifests, block_size=block_size,
                            threads=threads)
            assert other.to_dict() == baseline.to_dict(), (block_size, threads)


def test_same_answers_whatever_the_reader(tmp_path, manifests):
    rows = good_rows() + [r for r, _, _ in bad_rows()]
    plain = write_csv(tmp_path / "plain.csv", rows)
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(plain.read_bytes().replace(b"\n", b"\r\n"))
    packed = tmp_path / "packed.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    quoted_rows = [dict(r) for r in rows]
    quoted_rows[0]["comment"] = 'said "hi", twice'
    quoted = write_csv(tmp_path / "quoted.csv", quoted_rows)
    results = [analyze([p], manifests=manifests, block_size=b)
               for p in (plain, crlf, packed, quoted) for b in (128, 1 << 20)]

    def figures(result):
        return ([q.to_dict() for q in result.questions], result.rejected.counts)

    for other in results[1:]:
        assert figures(other) == figures(results[0])


def test_strict_exit_code(tmp_path, manifests, capsys):
    export = write_csv(tmp_path / "export.csv", good_rows(10) + [row(3)])
    args = ["analyze", str(export), "--manifest", str(manifests[0]), "--manifest",
            str(manifests[1])]
    assert main(args + ["--format", "json"]) == 0
    capsys.readouterr()
    assert main(args + ["--strict"]) == 2
    captured = capsys.readouterr()
    assert "--strict: 1 of 11 rows rejected" in captured.err
    assert f"{export}:12: respondent '{token(3)}' was seen before" in captured.err
    assert captured.out == ""
    clean = write_csv(tmp_path / "clean.csv", good_rows(10))
    assert main(["analyze", str(clean), "--manifest", str(manifests[0]), "--manifest",
                 str(manifests[1]), "--strict"]) == 0


def test_unreadable_inputs_are_user_errors(tmp_path, manifests, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert main(["analyze", str(empty), "--manifest", str(manifests[0])]) == 2
    assert "empty.csv:1: empty file" in capsys.readouterr().err
    assert main(["analyze", str(tmp_path / "nope.csv"), "--manifest", str(manifests[0])]) == 2
    assert "nope.csv: no such file" in capsys.readouterr().err
    unrelated = tmp_path / "unrelated.csv"
    unrelated.write_text("a,b\n1,2\n")
    assert main(["analyze", str(unrelated), "--manifest", str(manifests[0])]) == 2
    assert "no column matches a question" in capsys.readouterr().err
    no_version = tmp_path / "no-version.csv"
    no_version.write_text("violated\nyes\n")
    assert main(["analyze", str(no_version), "--manifest", str(manifests[0]),
                 "--manifest", str(manifests[1])]) == 2
    assert "no version column, and 2 versions" in capsys.readouterr().err
    bad_manifest = tmp_path / "bad.json"
    bad_manifest.write_text("{not json")
    assert main(["analyze", str(no_version), "--manifest", str(bad_manifest)]) == 2
    assert "bad.json:1: not valid JSON" in capsys.readouterr().err
    assert main(["analyze", str(no_version)]) == 2
    assert "--survey FILE.md" in capsys.readouterr().err


def test_inconsistent_manifest_is_refused(tmp_path, capsys):
    data = manifest()
    data["questions"][0]["matrix"] = [[0.9, 0.1], [0.1, 0.9]]  # not the forced-response matrix
    path = write_manifest(tmp_path / "survey.json", data)
    export = write_csv(tmp_path / "export.csv", good_rows(3))
    assert main(["analyze", str(export), "--manifest", str(path)]) == 2
    assert "does not match its design" in capsys.readouterr().err


def test_rows_of_a_design_chosen_by_epsilon_use_the_manifest_matrix(tmp_path):
    data = manifest()
    entry = data["questions"][0]
    entry["design"] = {"epsilon": 1.0}  # not a named design: the matrix is what counts
    entry["matrix"] = [[0.7310585786300049, 0.2689414213699951],
                       [0.2689414213699951, 0.7310585786300049]]
    entry["epsilon"] = 1.0
    path = write_manifest(tmp_path / "survey.json", data)
    export = write_csv(tmp_path / "export.csv", good_rows(20))
    result = analyze([export], manifests=[path])
    violated = result.question("violated")
    assert violated.privacy.epsilon == pytest.approx(1.0)
    assert violated.designs[0].matrix[0, 0] == pytest.approx(0.7310585786300049)
    assert FAIR != entry["design"]


def test_example_lines_point_at_the_right_row(tmp_path, manifests):
    rows = good_rows(5)
    rows.insert(3, row(50, violated="perhaps"))
    export = write_csv(tmp_path / "export.csv", rows)
    lines = Path(export).read_text().splitlines()
    result = analyze([export], manifests=manifests)
    example = result.rejected.examples["invalid-value"][0]
    assert "perhaps" in lines[example.row - 1]
