"""Timetable a resit session from its enrolments (an experiment, not a level): a second search like primer-tm's pools,
of another kind (a clash graph made of one clique per student, 5 classes).

bench/README's "a capable model timetabling a resit session" measured it: as csv-stat's level 8 it was passed 3 of 3
times in 6-8 turns, so it is not a level. ``/app/data/courses.csv`` lists the session's courses and
``/app/data/enrolments.csv`` the students' enrolments (3-5 courses each); every course gets one of the 5 exam days,
and no student may have two exams on one day. The session fits: :func:`session` planted a day for every course and
drew each student's courses from different planted days, at the number of students where the courses' clash graph
(a clique per student) is just colourable: a greedy order needs a sixth day and the textbook local searches stall
(with fewer students the plan is easy to find, with more the planted one shows through). The tests check
``/app/timetable.csv`` against their own copy of the two files and that one rule (``files/timetable_tests.py``).

The reference solution writes the planted timetable: it proves one exists; finding one is the solver's work. Check a
written task with ``autoenv validate DIR``.

Run: .venv/bin/python bench/timetable_task.py [--tasks N] [--first K] [--students N] [--out DIR]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name  # noqa: E402
from autoenv.shared.seed import SeedCase  # noqa: E402

DAYS = 5
#: The session measured: 600 courses, 545 students of 3-5 resits each.
COURSES = 600
STUDENTS = 545
TIMETABLE = "/app/timetable.csv"
FILES = Path(__file__).with_name("timetable")
SUBJECTS = {
    "ACC": "accounting",
    "BIO": "biology",
    "CHEM": "chemistry",
    "CS": "computing",
    "ECON": "economics",
    "ENG": "engineering",
    "FIN": "finance",
    "GEO": "geography",
    "HIST": "history",
    "LAW": "law",
    "MATH": "mathematics",
    "MED": "medicine",
    "PHYS": "physics",
    "PSY": "psychology",
}

INSTRUCTION = """\
# Timetable the resit session

The registry's resit session runs on **{days} exam days**. `/app/data/courses.csv` lists the {courses} courses
with a resit (columns `course`, the course code, and `title`) and `/app/data/enrolments.csv` the students' resit
enrolments (columns `student` and `course`: one row per student and course). Every course has its exam on one of the
days, and **no student may have two exams on one day**.

Nothing else counts: days may hold different numbers of exams. The session was planned in {days} days before, so it
can be done, but that plan is lost. Write the new one as `/app/timetable.csv`: a header line `course,day`, then one
line per course with its code and its day, a number from 1 to {days}, every course of `courses.csv` exactly once.
The tests check the timetable against the two files and that rule. This machine has Python 3.12 (standard library
only) and one CPU; nothing can be installed.
"""


def session(
    rng: random.Random, courses: int = COURSES, students: int = STUDENTS, days: int = DAYS
) -> tuple[list[str], list[tuple[str, str]], dict[str, int]]:
    """The session's course codes, its enrolments (student, course; shuffled) and the planted day of every course
    (1-based): each student takes 3-5 courses, each from a different planted day."""
    codes: set[str] = set()
    while len(codes) < courses:
        codes.add(f"{rng.choice(sorted(SUBJECTS))}{rng.randrange(1000, 4000)}")
    names = sorted(codes)
    rng.shuffle(names)
    planted = {name: rng.randrange(days) for name in names}
    by_day = [[c for c in names if planted[c] == d] for d in range(days)]
    ids = rng.sample(range(100_000, 1_000_000), students)
    enrolments = []
    for sid in ids:
        for d in rng.sample(range(days), rng.choice((3, 4, 4, 5, 5))):
            enrolments.append((f"s{sid}", rng.choice(by_day[d])))
    rng.shuffle(enrolments)
    return sorted(names), enrolments, {c: d + 1 for c, d in planted.items()}


def generate(
    case: SeedCase, rng: random.Random, *, family: str, courses: int = COURSES, students: int = STUDENTS
) -> TaskDraft:
    """The task for ``rng``'s draw."""
    names, enrolments, planted = session(rng, courses, students)
    kinds = ("Introduction to", "Advanced", "Methods in", "Topics in")
    titles = [f"{c},{rng.choice(kinds)} {SUBJECTS[c[:-4]]} {c[-4]}" for c in names]
    courses_csv = "course,title\n" + "".join(f"{t}\n" for t in titles)
    enrolments_csv = "student,course\n" + "".join(f"{s},{c}\n" for s, c in enrolments)
    plan = "course,day\n" + "".join(f"{c},{planted[c]}\n" for c in names)
    tests = (FILES / "test_outputs.py").read_text().replace("__DAYS__", str(DAYS))
    files = task_files(
        case,
        family,
        "data-analysis",
        ["python", "csv", "scheduling", "search"],
        INSTRUCTION.format(days=DAYS, courses=courses),
        solve_sh(f"cat > {TIMETABLE} <<'PLAN'\n{plan}PLAN"),
        tests,
        app={"data/courses.csv": courses_csv, "data/enrolments.csv": enrolments_csv},
        hidden={"courses.csv": courses_csv, "enrolments.csv": enrolments_csv},
        difficulty="hard",
        agent_timeout=1800.0,
        verifier_timeout=120.0,
    )
    params: dict[str, Any] = {
        "courses": courses,
        "students": students,
        "days": DAYS,
        "leak_hint": None,
        "stale_output": [("timetable.csv", plan)],
        "output_path": TIMETABLE,
    }
    return TaskDraft(name=task_name(family, rng, "timetable"), family=family, files=files, params=params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="how many draws")
    parser.add_argument("--first", type=int, default=3, help="the first draw's number (measured: 3-5)")
    parser.add_argument("--students", type=int, default=STUDENTS)
    parser.add_argument("--out", type=Path, default=Path("runs/timetable"))
    args = parser.parse_args()
    case = SeedCase(id="measure", task="t", failure_mode="-", target_skill="search", family="csv-stat")
    for k in range(args.first, args.first + args.tasks):
        # the measured draws were csv-stat level 8's: random.Random("measure:k"), the seed case's name aside
        draft = generate(case, random.Random(f"measure:{k}"), family="csv-stat", students=args.students)
        draft.name = f"timetable-{k}"
        print(draft.write(args.out))


if __name__ == "__main__":
    main()
