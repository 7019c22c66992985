"""Headless Chromium (Debian's chromium and chromium-driver) driven by Selenium, for the page tests."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from selenium import webdriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")


def require_chromium() -> None:
    """Skip unless the system browser and its driver are there (deploy/bootstrap.sh installs them)."""
    pytest.importorskip("selenium")
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver)")


@contextlib.contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator["webdriver.Chrome"]:
    """A fresh headless Chromium with its own profile folder, quit at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="hybridsim-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver: "webdriver.Chrome") -> list[str]:
    """Severe messages of the page's console (JavaScript errors)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
