"""The explorer in a real browser: Debian's Chromium, headless, driven by Selenium.

The page is loaded over the demo corpus; a person types a query and sees the plan and
the tokens, then the hits; opens Why this hit and the numbers shown are `explain
--json`'s; opens History around the hit (the anchor marked, the reset drawn); runs
Compare (the same answer on both backends) and saves the request as a conformance case,
which loads and passes. Every panel is photographed into `tests/artifacts/explorer/`
(gitignored; CI keeps them as artifacts; two of them illustrate docs/tutorial.md).

The browser is the system's (`apt-get install chromium chromium-driver`, which
`.ci/run` installs): nothing is downloaded at test time (`SE_OFFLINE`, and both paths
given, so Selenium Manager has nothing to fetch). Without them the test is skipped with
the reason, except under `CI=true`, where it fails: CI can never pass by skipping it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.conformance.case_files import cases_of_file
from tests.ci_policy import skip_or_fail
from tests.explorer.client import CHECKOUT, Explorer, run_engine

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = CHECKOUT / "tests" / "artifacts" / "explorer"
#: Seconds a panel may take to show its answer (the first Compare copies the store).
WAIT_SECONDS = 60


def _skip_or_fail(reason: str) -> None:
    skip_or_fail(reason, "the browser test cannot run")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium under chromedriver, both the system's."""
    for program in (CHROMIUM, CHROMEDRIVER):
        if not program.exists():
            _skip_or_fail(f"{program} is missing (apt-get install -y chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _skip_or_fail("selenium is not installed (pip install -e '.[dev]')")
    offline = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager may fetch nothing
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    (ARTIFACTS / "downloads").mkdir(parents=True)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,900", "--lang=en-US"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {
        "download.default_directory": str(ARTIFACTS / "downloads"),
        "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        if offline is None:
            os.environ.pop("SE_OFFLINE", None)
        else:
            os.environ["SE_OFFLINE"] = offline


@pytest.fixture(scope="module")
def page_server(demo_store: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[Explorer]:
    """An explorer started beside the demo store as `--store demo`, as the tutorial
    starts it (so the page, and its pictures, name the store `demo`)."""
    server = Explorer(demo_store.name, stderr=tmp_path_factory.mktemp("page") / "stderr.txt",
                      cwd=demo_store.parent)
    try:
        yield server
    finally:
        status, errors = server.stop()
    assert status == 0 and "Traceback" not in errors, errors


def test_a_newcomer_s_walk_through_the_explorer(browser, page_server: Explorer,
                                               demo_store: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    explorer = page_server
    # The page re-renders a panel when an answer arrives (as the person types), so an
    # element found a moment ago may be gone: every wait and every read retries then.
    wait = WebDriverWait(browser, WAIT_SECONDS,
                         ignored_exceptions=(StaleElementReferenceException,))

    def steady(read):
        """`read()` once the panel it reads holds still (retried on a stale element)."""
        return wait.until(lambda driver: (read(),))[0]

    def css(selector: str):
        return wait.until(shown.visibility_of_element_located((By.CSS_SELECTOR, selector)))

    def tab(panel: str) -> None:
        browser.find_element(By.CSS_SELECTOR, f'#tabs button[data-panel="{panel}"]').click()

    def photograph(panel: str) -> None:
        browser.save_screenshot(str(ARTIFACTS / f"{panel}.png"))

    browser.get(explorer.url)
    wait.until(lambda driver: "backend reference" in driver.find_element(
        By.ID, "store-line").text)

    # A query with warnings: the Query and Analysis panels, as the person types.
    query = browser.find_element(By.ID, "query")
    query.send_keys("per-session OR - 会议")
    tab("query")
    css("#panel-query .warning")
    warnings = steady(lambda: [element.text for element in browser.find_elements(
        By.CSS_SELECTOR, "#panel-query .warning")])
    assert any("`-` has no tokens" in text for text in warnings)
    assert any("`OR` is a literal word" in text for text in warnings)
    assert steady(lambda: browser.find_element(By.ID, "fts5-match").text) == \
        '"per-session" AND "OR" AND "-" AND "会议"'
    photograph("query")
    tab("analysis")
    css('#analysis-out .tokens[data-profile="icu"] .token')
    assert steady(lambda: browser.find_element(
        By.CSS_SELECTOR, "#analysis-source mark.cjk").text) == "会议"
    icu_terms = steady(lambda: [element.text for element in browser.find_elements(
        By.CSS_SELECTOR, '.tokens[data-profile="icu"] .term')])
    assert icu_terms == ["per", "session", "or", "会议"]
    photograph("analysis")

    # The hits of `cafe`, as `search --json` gives them.
    query.clear()
    query.send_keys("cafe")
    tab("hits")
    wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR,
                                                       "#hits-table tr.hit")) == 2)
    expected = json.loads(run_engine("search", "--store", str(demo_store), "--json",
                                     "cafe").stdout)

    def shown_hits() -> tuple[list[str], list[str]]:
        rows = browser.find_elements(By.CSS_SELECTOR, "#hits-table tr.hit")
        return ([row.get_attribute("data-message-id") for row in rows],
                [mark.text for mark in rows[0].find_elements(By.TAG_NAME, "mark")])
    message_ids, first_marks = steady(shown_hits)
    assert message_ids == [hit["messageId"] for hit in expected["hits"]]
    assert first_marks == ["Café"]
    photograph("hits")

    # Why this hit: every number shown is explain --json's.
    explained = json.loads(run_engine("explain", "--store", str(demo_store), "--json",
                                      "cafe").stdout)
    for number, hit in enumerate(explained["hits"]):
        tab("hits")
        steady(lambda number=number: browser.find_elements(
            By.CSS_SELECTOR, '#hits-table button[data-action="why"]')[number].click())
        wait.until(lambda driver, number=number: driver.find_element(
            By.CSS_SELECTOR, "#why-out p.big").text.startswith(f"#{number} of 2"))

        def shown_why() -> tuple[list[float], list[dict[str, float]], list[float], str]:
            values = [float(element.get_attribute("data-value") or element.text)
                      for element in browser.find_elements(By.CSS_SELECTOR, "#why-inputs .num")]
            phrases = [{field: float(row.find_element(
                By.CSS_SELECTOR, f'td[data-field="{field}"] .num').get_attribute("data-value")
                or row.find_element(By.CSS_SELECTOR, f'td[data-field="{field}"]').text)
                for field in ("n", "f", "idf", "contribution")}
                for row in browser.find_elements(By.CSS_SELECTOR, "#why-phrases tr.phrase")]
            totals = [float(element.get_attribute("data-value"))
                      for element in browser.find_elements(By.CSS_SELECTOR, "#why-total .num")]
            return values, phrases, totals, browser.find_element(By.ID, "why-ties").text
        values, phrases, totals, ties = steady(shown_why)
        bm25 = hit["bm25"]
        assert values == [bm25["N"], bm25["D"], bm25["avgdl"], bm25["k1"], bm25["b"]]
        [shown_phrase] = phrases
        [phrase] = bm25["phrases"]
        assert shown_phrase == {field: phrase[field] for field in shown_phrase}
        assert totals == [bm25["bm25"], bm25["score"]]
        assert "score (higher first)" in ties
        if number == 0:
            photograph("why")

    # History around the first hit: the anchor marked.
    tab("hits")
    steady(lambda: browser.find_elements(
        By.CSS_SELECTOR, '#hits-table button[data-action="history"]')[0].click())
    css("#history-table tr.anchor")
    assert "Café meeting notes" in steady(lambda: browser.find_element(
        By.CSS_SELECTOR, "#history-table tr.anchor").text)
    assert "current view" in steady(lambda: browser.find_element(By.ID, "history-view").text)
    photograph("history")
    browser.find_element(By.ID, "history-key").clear()
    browser.find_element(By.ID, "history-key").send_keys("agent:main:logical-reset")
    browser.find_element(By.ID, "history-anchor").clear()
    browser.find_element(By.CSS_SELECTOR, '#history-form button[type="submit"]').click()
    wait.until(lambda driver: any("session reset" in row.text for row in driver.find_elements(
        By.CSS_SELECTOR, "#history-table tr.boundary")))

    # Index: the postings of the query's word, and the partitions.
    tab("index")
    css("#index-postings table")
    css("#index-facts table")
    assert "n = 2 row(s)" in steady(lambda: browser.find_element(By.ID, "index-postings").text)
    photograph("index")

    # Compare, then save the request as a conformance case.
    tab("compare")
    browser.find_element(By.ID, "compare-run").click()
    css("#compare-verdict")
    assert steady(lambda: browser.find_element(By.ID, "compare-verdict").text) == \
        "Same answer on reference and sqlite."
    photograph("compare")
    css("#save-case").click()
    downloads = ARTIFACTS / "downloads"
    wait.until(lambda driver: [path for path in downloads.glob("*.json")])
    [saved] = downloads.glob("*.json")
    assert saved.name.startswith("explorer-cafe-")
    [case] = cases_of_file(json.loads(saved.read_text(encoding="utf-8")), saved.name)
    assert case.steps[0]["params"]["query"] == "cafe"
    assert case.steps[0]["expect"]["result"] == expected
    for panel in ("analysis", "query", "hits", "why", "history", "index", "compare"):
        assert (ARTIFACTS / f"{panel}.png").stat().st_size > 10_000
