"""The resit timetable: every course of the session on one of the exam days, and no student with two exams on one
day (the tests' own copy of the two CSV files)."""

import csv
import os
import stat
from pathlib import Path

HERE = Path(__file__).parent
DAYS = int("__DAYS__")
TIMETABLE = "/app/timetable.csv"


def table(name):
    with open(HERE / name, newline="") as fh:
        return list(csv.reader(fh))[1:]


def timetable():
    """The timetable's rows after its header; a link or anything but a plain file is no timetable."""
    try:
        fd = os.open(TIMETABLE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise AssertionError(f"{TIMETABLE} does not exist") from None
    with os.fdopen(fd, "rb") as fh:
        assert stat.S_ISREG(os.fstat(fh.fileno()).st_mode), f"{TIMETABLE} is not a plain file"
        rows = list(csv.reader(fh.read(1_000_000).decode("utf-8").splitlines()))
    assert rows and rows[0] == ["course", "day"], f"the header is {rows[:1]!r}, not 'course,day'"
    return [row for row in rows[1:] if row]


def days():
    courses = [row[0] for row in table("courses.csv")]
    known, numbers = set(courses), {str(d) for d in range(1, DAYS + 1)}
    day = {}
    for row in timetable():
        assert len(row) == 2, f"a line of {TIMETABLE} is not two comma-separated fields: {row!r}"
        course, when = row
        assert course in known, f"{course!r} is not a course of the session"
        assert course not in day, f"{course} is listed twice"
        assert when in numbers, f"{course}: day {when!r} is not one of 1-{DAYS}"
        day[course] = int(when)
    missing = [c for c in courses if c not in day]
    assert not missing, f"{len(missing)} courses have no day, e.g. {missing[:5]}"
    return day


def test_every_course_has_one_of_the_exam_days():
    days()


def test_no_student_has_two_exams_on_one_day():
    day = days()
    taking = {}
    for student, course in table("enrolments.csv"):
        taking.setdefault(student, set()).add(course)
    bad = []
    for student, courses in sorted(taking.items()):
        on = {}
        for course in courses:
            on.setdefault(day[course], []).append(course)
        bad += [(student, d, sorted(cs)) for d, cs in sorted(on.items()) if len(cs) > 1]
    assert not bad, f"{len(bad)} students have two exams on one day, e.g. {bad[:3]}"
