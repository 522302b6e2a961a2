"""A real headless Chromium driven by selenium, from Debian's ``chromium`` and ``chromium-driver``.

No browser is downloaded: selenium is pointed at the packaged driver and told to stay offline.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@contextmanager
def chromium(width: int = 1600, height: int = 1250) -> Iterator[Any]:
    """A headless Chromium WebDriver, quit on exit."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    assert not missing, f"{missing} not installed: scripts/setup.sh installs chromium and chromium-driver"
    os.environ["SE_OFFLINE"] = "true"  # selenium manager must not look for a browser online
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def press(driver: Any, button: Any, wanted: str, diagnostics: Callable[[], str], seconds: float = 90) -> str:
    """Click ``button`` of the Replication page and return what its ``#message`` box then says, which
    must contain ``wanted``; an AssertionError that quotes the box (an error the page shows, or none
    at all) and ``diagnostics()`` (the api-server's log) otherwise."""
    driver.execute_script("const box = document.getElementById('message'); box.textContent = ''; box.hidden = true;")
    button.click()
    try:
        WebDriverWait(driver, seconds).until(lambda d: d.find_element("id", "message").text.strip())
    except TimeoutException:
        raise AssertionError(f"the page said nothing within {seconds} s\n{diagnostics()}") from None
    said = str(driver.find_element("id", "message").text)
    assert wanted in said, f"the page said {said!r}, not {wanted!r}\n{diagnostics()}"
    return said
