"""A class's homework from its roster: ``make homework ROSTER=roster.csv SALT=word``.

The roster is a CSV file with a header row. Its column ``student_id`` names each student (letters,
digits, ``.``, ``_``, ``-`` and ``@``; each id once); an optional column ``name`` gives the name a
sheet prints. Other columns are ignored.

Each student's seed is drawn from their id and the course's *salt*, a word the instructor picks
for the term and keeps from the students::

    seed = the first 6 bytes of SHA-256(salt + "\\n" + student_id), read as a whole number (big-endian)

so it is the same on every run and machine, differs from student to student, and cannot be
worked out from the id alone. A student's sheet names the student, not the seed: with the seed,
anyone who has the package could print the key. The seed's sheets are those of ``make homework
SEED=<seed>``, which the instructor's index lists.

    _build/homework/roster/<student_id>/session-02.html (and .pdf)   each student's sheets: hand out the folder
    _build/homework/roster-keys/index.html                           the instructor's: each student's seed and keys
    _build/homework/roster-keys/<student_id>/session-02.html         each student's keys, with the working
    _build/homework/roster-keys/keys.csv                              every answer, for grading

The keys CSV has one row per answer: ``student_id, session, exercise, part, answer, unit, low,
high``. ``exercise`` is the book's number of the exercise the problem varies ("2.1"), ``part`` what
the answer is (as the key's table names it), ``answer`` the key's number in ``unit`` (the unit the
key shows it in: "GB", "tokens/s", "%", ""), and ``low`` and ``high`` the range a grader accepts, in
the same unit (equal to the answer where it is exact). A choice ("yes", "memory-bound", a card's
name) has its text as ``answer`` and no unit, low or high. An assigned exercise set as the book
writes it (no template varies it) has a row for each number its solution grades (each
``answer`` call of the chapter's solution: its claim as ``part``, the number as the solution states
it, and the exercise's tolerance), after the session's problems: the same for every student.

A roster run starts by clearing ``roster/`` and ``roster-keys/`` (those two folders only), so that
no sheet or key of an earlier run, of a student no longer on the roster, is left among them.
"""
from __future__ import annotations

import csv
import hashlib
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inferlimits.book.homework import Answer
from inferlimits.checks import parse_stated
from inferlimits.book.homework.render import (OUT, BookAnswer, SessionSheet, _e, page, book_answers, print_pdfs,
                                              session_sheets, sheet_html)

SHEETS, KEYS = "roster", "roster-keys"
KEYS_CSV = "keys.csv"
COLUMNS = ("student_id", "session", "exercise", "part", "answer", "unit", "low", "high")
#: an id, as a folder's name: no path separators, no leading dot
STUDENT_ID = re.compile(r"[A-Za-z0-9_@-][A-Za-z0-9._@-]*")
#: the seed's bytes taken from the hash: 48 bits, so that a class's seeds do not collide
SEED_BYTES = 6


@dataclass(frozen=True)
class Student:
    student_id: str
    name: str = ""

    @property
    def shown(self) -> str:
        """Whose sheet it is, as the sheet prints it: the id, then the name where there is one."""
        return f"{self.student_id} · {self.name}" if self.name else self.student_id


def read_roster(path: Path) -> list[Student]:
    """The students of the roster at ``path``, in its order. A ValueError naming ROSTER says what is
    wrong: no such file, no ``student_id`` column, an empty, unusable or repeated id."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"ROSTER: no file {str(path)!r}")
    with path.open(encoding="utf-8-sig", newline="") as f:   # utf-8-sig: a spreadsheet's byte-order mark
        reader = csv.DictReader(f)
        fields = [(c or "").strip() for c in reader.fieldnames or ()]
        if "student_id" not in fields:
            raise ValueError(f"ROSTER: {path} needs a header row with a column 'student_id'; it has {fields}")
        reader.fieldnames = fields
        out, seen = [], set()
        for line, row in enumerate(reader, start=2):
            sid = (row.get("student_id") or "").strip()
            if not sid and not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                continue   # a blank line
            if not STUDENT_ID.fullmatch(sid):
                raise ValueError(f"ROSTER: {path}, line {line}: student_id {sid!r} must be letters, digits, '.', "
                                 f"'_', '-' or '@', not starting with '.'")
            if sid in seen:
                raise ValueError(f"ROSTER: {path}, line {line}: student_id {sid!r} appears twice")
            seen.add(sid)
            out.append(Student(sid, " ".join((row.get("name") or "").split())))
    if not out:
        raise ValueError(f"ROSTER: {path} lists no student")
    return out


def roster_seed(student_id: str, salt: str) -> int:
    """A student's seed: the first ``SEED_BYTES`` bytes of SHA-256(salt, a newline, the id), as a
    whole number. A ValueError naming SALT where the salt is empty."""
    if not isinstance(salt, str) or not salt.strip():
        raise ValueError("SALT: give the course's salt, a word of your own kept from the students "
                         "(make homework ROSTER=roster.csv SALT=...); it makes each student's seed")
    digest = hashlib.sha256(f"{salt}\n{student_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:SEED_BYTES], "big")


def seeds(students: Sequence[Student], salt: str) -> dict[str, int]:
    """Each student's seed, by id; a ValueError if two students draw the same one."""
    out = {s.student_id: roster_seed(s.student_id, salt) for s in students}
    if len(set(out.values())) != len(out):
        raise ValueError("SALT: two students draw the same seed with this salt; pick another salt")
    return out


def _number(x: float) -> str:
    """A number for the keys CSV: six significant figures, no thousands separators."""
    return f"{x:.6g}"


def answer_row(student_id: str, session: int, exercise: str, a: Answer) -> dict[str, str]:
    """One row of the keys CSV: the answer in the unit its key shows, and the range a grader accepts."""
    if not a.numeric:
        return dict(zip(COLUMNS, (student_id, str(session), exercise, a.name, str(a.value), "", "", "")))
    scale, unit = a.unit
    lo, hi = a.bounds
    return dict(zip(COLUMNS, (student_id, str(session), exercise, a.name, _number(a.value / scale), unit,
                              _number(lo / scale), _number(hi / scale))))


def book_answer_row(student_id: str, session: int, exercise: str, a: BookAnswer) -> dict[str, str]:
    """One row of the keys CSV for a number an exercise set as the book writes it grades: the number
    as its solution states it, in its unit, and the range a grader accepts."""
    lo, hi = a.bounds
    exact = f"{a.number:.{parse_stated(a.stated).decimals}f}"   # as the solution states it, every figure
    return dict(zip(COLUMNS, (student_id, str(session), exercise, a.part, exact, a.unit,
                              _number(lo) if a.tolerance else exact, _number(hi) if a.tolerance else exact)))


def key_rows(student: Student, sheets: Sequence[SessionSheet]) -> list[dict[str, str]]:
    """Every answer of one student's sheets, as rows of the keys CSV, in the sheets' order: each
    session's problems, then the numbers its exercises set from the book grade (``book_answers``)."""
    from inferlimits.book.homework import exercise_number  # noqa: PLC0415

    return [row for sh in sheets for row in (
        [answer_row(student.student_id, sh.number, v.number or v.template, a) for v in sh.variants for a in v.key.answers]
        + [book_answer_row(student.student_id, sh.number, exercise_number(e) or e.label, a)
           for e in sh.from_book for a in book_answers(e)])]


def clear(out: Path = OUT) -> None:
    """Remove the folders an earlier roster run wrote under ``out`` (``roster/`` and ``roster-keys/``,
    and nothing else), so that a run leaves only its own students' sheets and keys."""
    for sub in (SHEETS, KEYS):
        folder = Path(out) / sub
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
        elif folder.exists():
            shutil.rmtree(folder)


def _index_html(students: Sequence[Student], by_id: dict[str, int], names: Sequence[str], pdf: bool) -> str:
    rows = []
    for s in students:
        links = " · ".join(f'<a href="{_e(s.student_id)}/{n}.html">{int(n[-2:])}</a>' for n in names)
        rows.append(f"<tr><td>{_e(s.student_id)}</td><td>{_e(s.name)}</td><td>{by_id[s.student_id]}</td>"
                    f"<td>{links}</td></tr>")
    body = ("<header><h1>Homework for a class roster</h1><p class=\"meta\">For the instructor: each student's seed "
            "and keys.</p></header>\n"
            f"<p>Each student's sheets are in <code>../{SHEETS}/&lt;student_id&gt;/</code>"
            f"{' (HTML and PDF)' if pdf else ''}: hand out that folder. Every answer, with the range a grader "
            f"accepts, is in <code>{KEYS_CSV}</code>. A student's seed comes from their id and the course's salt; "
            f"<code>make homework SEED=&lt;seed&gt;</code> writes the same sheets. Keep the salt and the seeds from "
            f"the students: with a seed, the package prints its key.</p>\n"
            "<table><thead><tr><th>Student</th><th>Name</th><th>Seed</th><th>Keys, by session</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")
    return page("Homework for a class roster", body)


def write_roster(students: Sequence[Student], salt: str, out: Path = OUT, pdf: bool = True,
                 sessions: Sequence[int] | None = None) -> tuple[Path, Path]:
    """Write each student's session sheets under ``out``/roster/<student_id>/ (HTML, and PDF where
    ``pdf``), their keys under ``out``/roster-keys/<student_id>/, the keys CSV and the instructor's
    index in ``out``/roster-keys/; return the two folders. ``sessions`` limits the sessions written.
    Both folders are cleared first (``clear``): what an earlier run left there goes."""
    by_id = seeds(students, salt)
    clear(out)
    sheets_dir, keys_dir = Path(out) / SHEETS, Path(out) / KEYS
    keys_dir.mkdir(parents=True, exist_ok=True)
    rows, pages, names = [], [], []
    for s in students:
        sheets = session_sheets(by_id[s.student_id], sessions)
        names = [sh.name for sh in sheets]
        for sub, key in ((sheets_dir / s.student_id, False), (keys_dir / s.student_id, True)):
            sub.mkdir(parents=True, exist_ok=True)
            for sh in sheets:
                page = sub / f"{sh.name}.html"
                page.write_text(sheet_html(sh, key, who=s.shown if not key else f"{s.shown} · seed {sh.seed}"),
                                encoding="utf-8")
                if not key:
                    pages.append(page)
        rows += key_rows(s, sheets)
    with (keys_dir / KEYS_CSV).open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (keys_dir / "index.html").write_text(_index_html(students, by_id, names, pdf), encoding="utf-8")
    if pdf and pages:
        print_pdfs(sheets_dir, pages)
    return sheets_dir, keys_dir


__all__ = ["COLUMNS", "KEYS", "KEYS_CSV", "SHEETS", "Student", "answer_row", "book_answer_row", "clear", "key_rows",
           "read_roster", "roster_seed", "seeds", "write_roster"]
