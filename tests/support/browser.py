"""A real headless Chromium driven by selenium, from Debian's ``chromium`` and ``chromium-driver``.

No browser is downloaded: selenium is pointed at the packaged driver and told to stay offline.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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
