"""The report renders from a store in headless Chromium, plots included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autoenv.report.build import build_report, compare_runs, seed_groups, training_figure, valid_rates
from autoenv.store.db import Store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(index: Path, png: Path) -> dict:
    """Open the page in Debian's Chromium through Playwright; return what the page shows."""
    playwright = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("Debian chromium not installed (scripts/system-deps.sh installs it)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.resolve().as_uri())
        page.wait_for_load_state("load")
        images = page.eval_on_selector_all(
            "img", "els => els.map(e => ({src: e.getAttribute('src'), w: e.naturalWidth, h: e.naturalHeight}))"
        )
        headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
        page.screenshot(path=str(png), full_page=True)
        browser.close()
    return {"images": images, "headings": headings}


def fill_store(db: Path) -> None:
    """A store written through the Store API the flywheel uses."""
    store = Store(db)
    store.ensure_run("main", {"steps": 2})
    for i, (method, valid) in enumerate(
        [
            ("prompt", False),
            ("prompt", True),
            ("feedback", True),
            ("feedback", True),
            ("agentic", True),
            ("agentic", False),
        ]
    ):
        store.record_attempt(
            run="main",
            step=i % 2,
            method=method,
            proposer="scripted",
            valid=valid,
            calibrated=valid,
            reward=1.0 if valid else 0.0,
            attempt_key=str(i),
            actions=[
                {"t": 0.1 * j, "kind": k, "detail": ""}
                for j, k in enumerate(["Read", "Write", "Build", "Test", "Write", "Test"])
            ],
        )
        if valid:
            store.upsert_task(
                hash=f"h{i}",
                name=f"task{i}",
                path=str(db.parent / f"task{i}"),
                method=method,
                valid=True,
                calibrated=True,
                n_files=6 + i,
                pass_rate=0.5,
            )
            gid = store.group_id("main", i % 2, f"h{i}", "solver", 2)
            for j in range(2):
                store.add_rollout(
                    run="main",
                    step=i % 2,
                    group_id=gid,
                    task_hash=f"h{i}",
                    index=j,
                    policy_version=0,
                    reward=float(j),
                    n_turns=3 + j,
                )
    for step in range(2):
        store.start_step("main", step, step)
        store.update_step(
            "main",
            step,
            status="done",
            policy_version_out=step + 1,
            useful_group_rate=0.5 + 0.1 * step,
            collect_sec=3.0,
            benchmark_score=0.4,
            proposer_valid_rate=0.6,
        )
    store.close()


def test_runs_repeated_over_seeds_are_drawn_as_a_band():
    assert seed_groups(["autoenv", "autoenv-s1", "autoenv-s2", "static", "main-s3", "main"]) == {
        "autoenv": ["autoenv", "autoenv-s1", "autoenv-s2"],
        "static": ["static"],
        "main": ["main-s3", "main"],
    }
    assert seed_groups(["lonely-s4"]) == {"lonely-s4": ["lonely-s4"]}
    steps = [
        {"run": run, "step": step, "benchmark_score": score + 0.1 * step, "useful_group_rate": 0.5,
         "collect_sec": 1.0, "proposer_valid_rate": None}
        for run, score in (("autoenv", 0.2), ("autoenv-s1", 0.4), ("autoenv-s2", 0.3), ("static", 0.1))
        for step in range(3)
    ]  # fmt: skip
    fig = training_figure(steps)
    bench = next(ax for ax in fig.axes if ax.get_title() == "solver benchmark score")
    labels = bench.get_legend_handles_labels()[1]
    assert labels == ["autoenv (3 seeds)", "static"]
    mean_line = bench.lines[0]
    assert list(mean_line.get_ydata()) == pytest.approx([0.3, 0.4, 0.5])
    (band,) = bench.collections  # the 95% interval of the three seeds, around the mean
    ys = band.get_paths()[0].vertices[:, 1]
    assert min(ys) < 0.3 - 0.1 and max(ys) > 0.5 + 0.1


def test_runs_are_compared_side_by_side_over_their_seeds():
    steps = [
        {"run": run, "step": step, "benchmark_score": final if step == 1 else 0.0, "useful_group_rate": 0.5}
        for run, final in (("autoenv", 0.5), ("autoenv-s1", 0.75), ("static", 0.25))
        for step in range(2)
    ]
    attempts = [{"run": "autoenv", "valid": True}, {"run": "autoenv-s1", "valid": False}]
    rows = {r["run"]: r for r in compare_runs(steps, attempts)}
    assert rows["autoenv"]["seeds"] == 2 and rows["autoenv"]["final benchmark"].startswith("0.62 [")
    assert rows["autoenv"]["valid proposals"].startswith("1/2 [")
    assert rows["static"] == {
        "run": "static", "seeds": 1, "steps": 2, "final benchmark": "0.25", "useful-group rate": "0.50"
    }  # fmt: skip


def test_valid_rates_have_wilson_intervals():
    rows = valid_rates([{"method": "prompt", "valid": v} for v in (True, False, False, False)], "method")
    assert rows[0]["rate"] == 0.25 and 0 < rows[0]["low"] < 0.25 < rows[0]["high"] < 1


def test_report_renders_in_chromium(tmp_path):
    db = tmp_path / "store.db"
    fill_store(db)
    index = build_report(db, tmp_path / "report")
    shown = screenshot(index, tmp_path / "report.png")
    names = {img["src"] for img in shown["images"]}
    assert {"valid_rate_by_method.png", "accepted_by_method.png", "training_curves.png", "proposer_course.png"} <= names
    assert all(img["w"] > 100 and img["h"] > 100 for img in shown["images"]), shown["images"]
    assert "Accepted environments" in shown["headings"]
    assert (tmp_path / "report.png").stat().st_size > 10_000
