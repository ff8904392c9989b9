#!/usr/bin/python3
"""gong remote's page in a real browser: Debian's chromium driven by Selenium through Debian's
chromium-driver, headless at a phone's size (390x844, touch). Nothing is downloaded.

Two phones pair with codes from `gong remote pair` (one typed, one by the address its QR code
carries); the first starts a sit and sees its countdown move; the second pauses it and the first
must show it paused within 200 ms; the page marks each cue within 50 ms of the moment it is heard
(announced ahead by the session), and none that never sounded; past a minute
(a sit counts from 60 s) the first stops it, sees its end ring out with no pause offered, then sees
it end and, with no reload, in the history and the calendar. Then the bells (a `gong bells` the
caller started): the next counted down, one rung now and listed as rung, a pause for an hour shown
on both phones with who asked. Screenshots of each whole screen, light and dark, go to --out. Run
by GongRemoteTests' RemoteBrowserTests against a server it started; prints one line of figures and
exits 0 when every check held, 1 (after saying which) when one did not.
"""
import argparse
import base64
import json
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
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
URL = f"http://127.0.0.1:{args.port}/"
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED: " + what, file=sys.stderr)
    return condition


def phone(dark=False):
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


def scheme(driver, dark):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})


def save_page(driver, path):
    """The whole page, below the fold too (the bells and the calendar are further down)."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
    with open(path, "wb") as file:
        file.write(base64.b64decode(shot["data"]))


def shoot(driver, name):
    # Not in the middle of a cue's flash, which would tint the whole page.
    wait(driver, "return !document.getElementById('cue').classList.contains('on')", 2, f"{name}: no flash")
    for dark in (False, True):
        scheme(driver, dark)
        time.sleep(0.1)  # one frame to repaint
        save_page(driver, os.path.join(args.out, f"{name}-{'dark' if dark else 'light'}.png"))
    scheme(driver, False)


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


a = phone()
b = phone()
try:
    a.get(URL)
    wait(a, "return !document.getElementById('pair').hidden", 10, "the pairing screen shows")
    shoot(a, "1-pair")
    pair(a, "Phone A")
    pair(b, "Phone B", by_link=True)
    shoot(a, "2-home")

    # Start a sit: box breathing, 90 s, through the test's device.
    a.find_element(By.ID, "pattern").send_keys("box")
    wait(a, "return document.getElementById('hist').textContent.startsWith('0 sessions,')", 10,
         "the history is empty before the sit")
    a.find_element(By.ID, "length").send_keys("90s")
    a.find_element(By.ID, "device").send_keys(args.device)
    a.find_element(By.ID, "startBtn").click()
    if not wait(a, "return document.getElementById('state').textContent === 'active'", 30, "the sit starts"):
        print("phone A's note: " + a.execute_script("return document.getElementById('note').textContent")
              + "; its sessions: " + json.dumps(a.execute_script(
                  "return await (await fetch('/api/session', {credentials: 'same-origin'})).text()")),
              file=sys.stderr)
    first = a.find_element(By.ID, "phaseLeft").text
    wait(a, f"return document.getElementById('phaseLeft').textContent !== {json.dumps(first)}", 5,
         "the countdown moves")
    shoot(a, "3-sit")

    # Pause from the second phone; the first must show it within 200 ms.
    wait(b, "return document.getElementById('state').textContent === 'active'", 10, "phone B sees the sit")
    a.execute_script("""
        window.seenPaused = null;
        new MutationObserver(() => {
          if (window.seenPaused === null && document.getElementById('state').textContent === 'paused')
            window.seenPaused = Date.now();
        }).observe(document.getElementById('state'), {childList: true, characterData: true, subtree: true});""")
    clicked = b.execute_script("const t = Date.now(); document.getElementById('toggleBtn').click(); return t;")
    wait(a, "return window.seenPaused !== null", 5, "phone A shows the pause")
    seen = a.execute_script("return window.seenPaused")
    pause_ms = (seen - clicked) if seen else None
    check(pause_ms is not None and pause_ms < 200, f"phone A saw the pause within 200 ms (took {pause_ms} ms)")
    by = a.find_element(By.ID, "sitBy").text
    check(by == "Paused by Phone B", f"phone A says who paused it ({by!r})")
    shoot(a, "4-paused")
    a.execute_script("document.getElementById('nightBtn').click()")
    save_page(a, os.path.join(args.out, "5-night.png"))
    a.execute_script("document.getElementById('nightBtn').click()")

    # Resume, and wait for cues to be marked.
    b.execute_script("document.getElementById('toggleBtn').click()")
    wait(a, "return document.getElementById('state').textContent === 'active'", 5, "resumed")
    wait(a, "return window.gongMarks.length >= 2", 20, "cues marked on the page")
    offset = a.execute_script("return window.gongOffset")

    # A sit counts in the history from 60 s played: stop it past that, with the confirm.
    if not wait(a, "return status && status.elapsedSeconds >= 62", 75, "the sit passes a minute"):
        print("the sit as phone A last heard of it: " + json.dumps(a.execute_script("return status")),
              file=sys.stderr)
    # Every cue marked on the page within 50 ms of when it was heard (its own event, which comes
    # later, says when), and none marked that never sounded (the pause above withdrew the cue
    # announced before it). Each cue is announced ahead, so the mark does not wait for its
    # event: how late the events came is printed beside it.
    # (Those of the last two seconds are left out: their events may still be on the way.)
    marks = a.execute_script("return window.gongMarks.filter(m => m.markedMs < Date.now() - 2000)")
    # A cue that lost audio delayed (its event says how late: lateFrames) sounds later than it
    # was announced, which no one can know ahead: its mark is counted apart, and said.
    delayed = [{"lateFrames": m["lateFrames"], "markedMs": round(m["markedMs"] - m["heardMs"], 1)}
               for m in marks if m.get("lateFrames")]
    marks = [m for m in marks if not m.get("lateFrames")]
    offsets = [round(m["markedMs"] - m["heardMs"], 1) for m in marks if m["heardMs"] is not None]
    late = [round(m["eventMs"] - m["heardMs"], 1) for m in marks if m["heardMs"] is not None]
    # How far ahead each mark was set (from the announcement, or the event when none came
    # first), and how late the page's timer fired it: what to look at when one is off.
    leads = [round(m["audibleMs"] - m["receivedMs"], 1) for m in marks]
    timer_late = [round(m["markedMs"] - m["audibleMs"], 1) for m in marks]
    if not all(abs(o) < 50 for o in offsets):
        print("marks: " + json.dumps(marks), file=sys.stderr)
    check(len(marks) >= 8, f"cues marked through the minute ({len(marks)})")
    check(all(m["heardMs"] is not None for m in marks), f"no cue marked that was not heard ({marks})")
    check(all(abs(o) < 50 for o in offsets), f"each cue marked within 50 ms of when it was heard ({offsets})")
    # The first cue after the page connects or the sit resumes may be told only by its event;
    # every other was announced ahead.
    announced = sum(1 for m in marks if m["announced"])
    check(announced >= len(marks) - 2, f"cues announced ahead ({announced} of {len(marks)})")

    a.find_element(By.ID, "stopBtn").click()
    a.switch_to.alert.accept()
    # The end cue rings out before the session is over: stopping is seen at once, the end later.
    # While it rings out the session takes no pause, skip or stop, and the page offers none.
    stopping = "return document.getElementById('state').textContent === 'ringing out'" \
        " || !document.getElementById('sitNone').hidden"
    wait(a, stopping, 5, "the sit stops")
    wait(b, stopping, 5, "phone B sees it stop")
    ringing_out = a.execute_script("""
        const t = document.getElementById('toggleBtn');
        return document.getElementById('sitNone').hidden ? {text: t.textContent, disabled: t.disabled,
          skip: document.getElementById('skipBtn').disabled, stop: document.getElementById('stopBtn').disabled}
          : null;""")
    if check(ringing_out is not None, "the end rings out on the page (it ended before it was seen)"):
        check(ringing_out["disabled"] and ringing_out["skip"] and ringing_out["stop"]
              and "Pause" not in ringing_out["text"],
              f"no pause, skip or stop offered while it rings out ({ringing_out})")
    shoot(a, "6-stopping")
    wait(a, "return !document.getElementById('sitNone').hidden", 60, "the sit ends")
    # The process writes the history after its last event, then goes: the page reads it again
    # when the remote tells it so, with no reload.
    counted = "return document.getElementById('hist').textContent.startsWith('1 session,')"
    if not wait(a, counted, 20, "phone A shows the sit in the history"):
        print("phone A's history: " + a.find_element(By.ID, "hist").text, file=sys.stderr)
    wait(b, counted, 5, "phone B shows the sit in the history")
    today = a.execute_script("const c = document.querySelectorAll('#cal i'); const d = c[c.length - 1];"
                             " return d ? [d.title, d.style.background] : null")
    check(today is not None and today[1] != "" and not today[0].endswith(": 0 min"),
          f"today is marked in the calendar ({today})")
    shoot(a, "7-ended")

    # The bells: the next one counted down, one rung now and heard, then a pause for an hour
    # that both phones show with who asked.
    wait(a, "return /^\\d+:\\d\\d/.test(document.getElementById('nextLeft').textContent)", 10,
         "the next bell is counted down")
    a.find_element(By.ID, "bRing").click()
    rung = "return [...document.querySelectorAll('#plan li')].some(li => li.textContent.includes('rung'))"
    wait(a, rung, 30, "the bell asked for is in today's plan, rung")
    heard = a.execute_script("return [...document.querySelectorAll('#plan li')]"
                             ".filter(li => li.textContent.includes('rung')).map(li => li.textContent)")
    a.find_element(By.ID, "b1h").click()
    paused = "return document.getElementById('bellsPaused').textContent.startsWith('Paused until ')" \
        " && document.getElementById('bellsPaused').textContent.endsWith('(by Phone A)')"
    wait(a, paused, 5, "phone A shows the bells paused, by whom")
    wait(b, paused, 5, "phone B shows the bells paused, by whom")
    # An hourly bell is due within the hour the pause covers: no countdown to a bell that will
    # not ring.
    check(a.find_element(By.ID, "nextLeft").text == "paused", "the next bell is not counted down while paused")
    shoot(a, "8-bells")

    print(json.dumps({"pauseSeenMs": pause_ms, "clockOffsetMs": offset, "cueMarkOffsetsMs": offsets,
                      "cueEventsAfterTheirSoundMs": late, "cuesAnnounced": announced, "cuesMarked": len(marks), "cuesDelayedByLostAudio": delayed,
                      "markSetAheadMs": leads, "markTimerLateMs": timer_late, "bellRung": heard,
                      "pageBytes": len(a.page_source.encode())}))
finally:
    a.quit()
    b.quit()
sys.exit(1 if failures else 0)
