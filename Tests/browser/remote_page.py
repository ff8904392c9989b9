#!/usr/bin/python3
"""gong remote's page in a real browser: Debian's chromium driven by Selenium through Debian's
chromium-driver, headless at a phone's size (390x844, touch). Nothing is downloaded.

Two phones pair with codes from `gong remote pair` (one typed, one by the address its QR code
carries); the first starts a sit and sees its countdown move; the second pauses it and the first
must show it paused within 200 ms; the page marks each cue within 50 ms of the moment it is heard
(announced ahead by the session), and none that never sounded; past the remote's streak-minimum
(--counts-from: a sit counts in the history from then) the first stops it and sees its end ring
out with no pause offered. While it rings out, the bells (a `gong bells` the caller started): the
next counted down, one rung now and listed as rung, a pause for an hour shown on both phones with
who asked. Then the sit ends and shows, with no reload, in the history and the calendar. Screenshots of each whole screen, light and dark, go to --out. Run
by GongRemoteTests' RemoteBrowserTests against a server it started; prints one line of figures and
exits 0 when every check held, 1 (after saying which) when one did not.
"""
import json
import sys
from collections import Counter

from selenium.webdriver.common.by import By

from phones import URL, args, check, finish, pair, phone, save, step, steps, wait
import phones


def shoot(driver, name):
    # Not in the middle of a cue's flash, which would tint the whole page.
    wait(driver, "return !document.getElementById('cue').classList.contains('on')", 2, f"{name}: no flash")
    phones.shoot(driver, name)


a = phone()
b = phone()
step("phones")
try:
    a.get(URL)
    wait(a, "return !document.getElementById('pair').hidden", 10, "the pairing screen shows")
    shoot(a, "1-pair")
    pair(a, "Phone A")
    pair(b, "Phone B", by_link=True)
    shoot(a, "2-home")
    step("paired")

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
    step("sitting")

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
    save(a, "5-night.png")
    a.execute_script("document.getElementById('nightBtn').click()")

    # Resume, and wait for cues to be marked.
    b.execute_script("document.getElementById('toggleBtn').click()")
    wait(a, "return document.getElementById('state').textContent === 'active'", 5, "resumed")
    wait(a, "return window.gongMarks.length >= 2", 20, "cues marked on the page")
    step("paused and resumed")
    offset = a.execute_script("return window.gongOffset")

    # A sit counts in the history from the remote's streak-minimum: stop it past that, with the
    # confirm. By then at least nine cues (one each 4 s) are older than the two seconds below.
    sit_for = args.counts_from + 2
    if not wait(a, f"return status && status.elapsedSeconds >= {sit_for}", sit_for + 15,
                f"the sit passes {sit_for} s"):
        print("the sit as phone A last heard of it: " + json.dumps(a.execute_script("return status")),
              file=sys.stderr)
    step("sat")
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
    check(len(marks) >= 8, f"cues marked through the sit ({len(marks)})")
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
    step("stopped")

    # The bells, while the sit's end cue rings out (the bowl, over half a minute): the next one
    # counted down, one rung now and heard, then a pause for an hour that both phones show with
    # who asked.
    wait(a, "return /^\\d+:\\d\\d/.test(document.getElementById('nextLeft').textContent)", 10,
         "the next bell is counted down")
    check(a.find_element(By.ID, "nextLabel").text == "Next bell in", "a countdown is said to be one")
    # A pause for an hour asked for in the second the hourly bell rang ends on the second the
    # next one is due, which then rings (BellKeeper: a bell is held when due before the pause
    # ends), and the page rightly counts it down (seen at midnight, and at 02:00 when this wait
    # ended the moment the hour's bell had rung). Ring and pause only while the next bell is
    # more than 90 s away and the last at least 10 s ago: the pause then holds the next bell to
    # the second (asked at 18:00:10, it ends at 19:00:10 and the 19:00 bell is skipped), which
    # the bells' status says and the page must show.
    wait(a, "const t = document.getElementById('nextLeft').textContent.split(':').map(Number);"
         " const left = t.reduce((s, x) => s * 60 + x, 0); return left > 90 && left < 3590", 110,
         "the hour's bell more than 90 s away and 10 s gone")
    # The plan lists the hour's bells rung as well: the one asked for is the line that was not
    # there before the button.
    rung_lines = "return [...document.querySelectorAll('#plan li')]" \
        ".filter(li => li.textContent.includes('rung')).map(li => li.textContent)"
    before = a.execute_script(rung_lines)
    a.find_element(By.ID, "bRing").click()
    wait(a, f"{rung_lines}.length > {len(before)}", 30, "the bell asked for is in today's plan, rung")
    heard = list((Counter(a.execute_script(rung_lines)) - Counter(before)).elements())
    a.find_element(By.ID, "b1h").click()
    paused = "return document.getElementById('bellsPaused').textContent.startsWith('Paused until ')" \
        " && document.getElementById('bellsPaused').textContent.endsWith('(by Phone A)')"
    wait(a, paused, 5, "phone A shows the bells paused, by whom")
    wait(b, paused, 5, "phone B shows the bells paused, by whom")
    # An hourly bell is due within the hour the pause covers: no countdown to a bell that will
    # not ring.
    check(a.find_element(By.ID, "nextLeft").text == "paused", "the next bell is not counted down while paused")
    check(a.find_element(By.ID, "nextLabel").text == "Next bell", "no \"Next bell in paused\"")
    shoot(a, "7-bells")
    step("bells")

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
    shoot(a, "8-ended")
    step("ended and counted")

    print(json.dumps({"pauseSeenMs": pause_ms, "clockOffsetMs": offset, "cueMarkOffsetsMs": offsets,
                      "cueEventsAfterTheirSoundMs": late, "cuesAnnounced": announced, "cuesMarked": len(marks), "cuesDelayedByLostAudio": delayed,
                      "markSetAheadMs": leads, "markTimerLateMs": timer_late, "bellRung": heard,
                      "pageBytes": len(a.page_source.encode()), "stepsEndedAtS": steps}))
finally:
    a.quit()
    b.quit()
finish()
