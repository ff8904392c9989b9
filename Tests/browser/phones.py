"""What the browser tests of gong remote's page share: their arguments, two phones (Debian's
chromium driven by Selenium through Debian's chromium-driver, headless at a phone's size, 390x844
with touch; nothing is downloaded), pairing them with codes from `gong remote pair`, waiting on
the page, screenshots light and dark, and the checks that fail the script. Imported by
remote_page.py and remote_reconnect.py, which run it as RemoteBrowserTests calls them.
"""
import argparse
import base64
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--gong", required=True)
parser.add_argument("--state", required=True, help="XDG_STATE_HOME of the remote under test")
parser.add_argument("--out", required=True)
parser.add_argument("--device", default="pulse")
parser.add_argument("--counts-from", type=float, default=60,
                    help="the remote's streak-minimum: a sit counts in its history from this many seconds played")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
URL = f"http://127.0.0.1:{args.port}/"
failures = []
started = time.monotonic()
steps = {}


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED: " + what, file=sys.stderr)
    return condition


def step(name):
    """Notes when a part of the script ended, in seconds from its start: where the time went,
    printed with the figures."""
    steps[name] = round(time.monotonic() - started, 1)


def phone():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-extensions"]:
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2, "touch": True},
        "userAgent": "Mozilla/5.0 (Linux; Android 14) Mobile gong-test"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_window_size(390, 844)
    return driver


def wait(driver, condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if driver.execute_script(condition):
                return True
        except Exception:
            pass
        time.sleep(0.02)
    return check(False, what)


def text(driver, element):
    return driver.execute_script(f"return document.getElementById('{element}').textContent")


def scheme(driver, dark):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})


def screenshot(driver, whole):
    """A PNG of the viewport, or (whole) of the whole page, below the fold too."""
    if not whole:
        return base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})["data"])
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
    return base64.b64decode(shot["data"])


def save(driver, name, whole=True):
    with open(os.path.join(args.out, name), "wb") as file:
        file.write(screenshot(driver, whole))


def shoot(driver, name, whole=True):
    """The page light and dark, as `name`-light.png and `name`-dark.png."""
    for dark in (False, True):
        scheme(driver, dark)
        time.sleep(0.1)  # one frame to repaint
        save(driver, f"{name}-{'dark' if dark else 'light'}.png", whole)
    scheme(driver, False)


def code():
    env = dict(os.environ, XDG_STATE_HOME=args.state)
    out = subprocess.run([args.gong, "remote", "pair", "--url", URL], env=env, capture_output=True,
                         text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.strip() and l.strip().replace(" ", "").isdigit())
    return line.strip().replace(" ", "")


def pair(driver, name, by_link=False):
    """Types the code, or (by_link) opens the address gong remote pair's QR code carries, with
    the code after '#', which the page fills in and drops from the address bar."""
    if by_link:
        given = code()
        driver.get(URL + "#code=" + given)
        wait(driver, "return !document.getElementById('pair').hidden", 10, f"{name}: the pairing screen shows")
        check(driver.find_element(By.ID, "code").get_attribute("value") == given,
              f"{name}: the code from the link is filled in")
        check(driver.current_url == URL, f"{name}: the code is dropped from the address ({driver.current_url})")
    else:
        driver.get(URL)
        wait(driver, "return !document.getElementById('pair').hidden", 10, f"{name}: the pairing screen shows")
        driver.find_element(By.ID, "code").send_keys(code())
    field = driver.find_element(By.ID, "devname")
    field.clear()
    field.send_keys(name)
    driver.find_element(By.ID, "pairBtn").click()
    wait(driver, "return !document.getElementById('app').hidden", 10, f"{name}: paired, the remote shows")
    wait(driver, "return window.gongOffset !== undefined", 10, f"{name}: learned its clock offset")


def finish():
    """Exits 0 when every check held, 1 when one did not (each was said as it failed)."""
    sys.exit(1 if failures else 0)
