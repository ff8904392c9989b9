#!/usr/bin/python3
"""gong remote's page in a real browser when the box goes away and comes back, and the screens
that edit: Debian's chromium driven by Selenium through Debian's chromium-driver, headless at a
phone's size (390x844, touch). Nothing is downloaded.

Two phones pair. The first edits the bells' schedule (a `gong bells` the caller started): a bad
value is refused with the one line config.toml's key would get, shown under the fields; a good
one is taken and both phones show it. It adds a sit by hand: both phones show it in the history
and the calendar with no reload. Then the remote goes away: the script prints DROP and the
caller (RemoteBrowserTests) closes the server, which closes every socket; both phones must say
the box cannot be reached and that the bells keep ringing. The script prints BACK and the caller
starts a remote on the same port: both phones must reconnect by themselves, drop the banner and
say how long they were away. Screenshots, light and dark, go to --out. Prints one line of
figures and exits 0 when every check held, 1 (after saying which) when one did not.
"""
import datetime
import json
import re
import time

from selenium.webdriver.common.by import By

from phones import check, finish, pair, phone, text, wait
import phones


def shoot(driver, name, element=None):
    """The viewport, light and dark, scrolled to `element` (an id) when given: what a person
    looking at that part of the page sees."""
    if element:
        driver.execute_script(f"document.getElementById('{element}').scrollIntoView({{block: 'start'}})")
    phones.shoot(driver, name, whole=False)


def fill(driver, element, text):
    field = driver.find_element(By.ID, element)
    field.clear()
    field.send_keys(text)


def tell(word):
    """A word for the caller, which acts on it (DROP: close the remote; BACK: start it again)."""
    print(word, flush=True)


a = phone()
b = phone()
figures = {}
try:
    pair(a, "Phone A")
    pair(b, "Phone B")
    wait(a, "return !document.getElementById('bellsRun').hidden", 20, "the bells show")
    wait(a, "return document.getElementById('s_every').value === '1h'", 10,
         "the schedule's fields show the running bells' schedule")

    # The schedule: a bad value refused with config.toml's line, shown under the fields.
    a.execute_script("document.getElementById('sched').open = true")
    fill(a, "s_every", "")
    fill(a, "s_at", "8:00,25:00")
    fill(a, "s_quiet", "12:00-13:00")
    a.find_element(By.ID, "schedBtn").click()
    wait(a, "return document.getElementById('schedMsg').className === 'err'", 5, "a bad schedule is refused")
    refused = text(a, "schedMsg")
    check(refused.startswith('bells.at = "8:00,25:00": not a list of times of day; use '),
          f"the refusal is config.toml's line ({refused!r})")
    shoot(a, "9-schedule-refused", "sched")
    fill(a, "s_at", "08:00,12:30,17:00")
    a.find_element(By.ID, "schedBtn").click()
    shown = "return /^at (08:00|12:30|17:00)/.test(document.getElementById('nextAt').textContent)"
    wait(a, shown, 5, "phone A's plan follows the new schedule")
    wait(b, shown, 5, "phone B's plan follows the new schedule")
    wait(b, "return document.getElementById('s_at').value === '08:00,12:30,17:00'", 5,
         "phone B's schedule fields show the new schedule")
    check(text(a, "schedMsg").startswith("The bells ring by it now, and config.toml keeps it"),
          f"phone A says it was taken and kept ({text(a, 'schedMsg')!r})")
    check("Phone A" in text(b, "note"), f"phone B is told who changed it ({text(b, 'note')!r})")
    shoot(a, "10-schedule", "sched")

    # A sit added by hand, yesterday at 07:00 for 25 minutes: both phones count it.
    a.execute_script("document.getElementById('addSit').open = true")
    yesterday = (datetime.date.today() - datetime.timedelta(days=1)).isoformat()
    a.execute_script(f"document.getElementById('a_day').value = '{yesterday}'")
    fill(a, "a_pattern", "zazen")
    fill(a, "a_length", "25 minutes")
    a.find_element(By.ID, "addBtn").click()
    wait(a, "return document.getElementById('addMsg').className === 'err'", 10, "a bad length is refused")
    check(text(a, "addMsg").startswith('Length "25 minutes": not a duration'),
          f"the refusal is gong history add's line, naming the page's field ({text(a, 'addMsg')!r})")
    shoot(a, "11-add-refused", "histH")
    fill(a, "a_length", "25m")
    a.find_element(By.ID, "addBtn").click()
    counted = "return document.getElementById('hist').textContent.startsWith('1 session, 25 min')"
    wait(a, counted, 10, "phone A counts the sit added")
    wait(b, counted, 5, "phone B counts the sit added, with no reload")
    check(text(a, "addMsg").startswith("Added zazen, 25m at "), f"phone A says what was added ({text(a, 'addMsg')!r})")
    day = b.execute_script(f"return [...document.querySelectorAll('#cal i')].filter(i => i.title === "
                           f"'{yesterday}: 25 min' && i.style.background !== '').length")
    check(day == 1, f"phone B's calendar marks {yesterday}")
    shoot(a, "12-added", "histH")

    # The remote goes away: both phones say so, and that the bells keep ringing.
    a.execute_script("document.getElementById('sched').open = false; document.getElementById('addSit').open = false;"
                     " window.scrollTo(0, 0)")
    banner = "return getComputedStyle(document.getElementById('banner')).display === 'block'"
    tell("DROP")
    dropped = time.time()
    wait(a, banner, 10, "phone A says the box cannot be reached")
    wait(b, banner, 10, "phone B says the box cannot be reached")
    figures["bannerAfterMs"] = round((time.time() - dropped) * 1000)
    check("bells keep ringing" in text(a, "banner"), f"the banner says the bells ring on ({text(a, 'banner')!r})")
    shoot(a, "13-unreachable")
    # Away long enough for a person to notice, measured by the page's own clock.
    wait(a, "return Date.now() - lostAt >= 3000", 10, "away three seconds")
    tell("BACK")
    back = time.time()
    again = "return getComputedStyle(document.getElementById('banner')).display === 'none'" \
        " && /^Back after \\d+ s away$/.test(document.getElementById('note').textContent)"
    wait(a, again, 20, "phone A reconnects by itself and says how long it was away")
    wait(b, again, 20, "phone B reconnects by itself and says how long it was away")
    figures["reconnectedAfterMs"] = round((time.time() - back) * 1000)
    for name, driver in (("A", a), ("B", b)):
        said = text(driver, "note")
        away = int(re.search(r"\d+", said).group()) if re.search(r"\d+", said) else -1
        figures[f"phone{name}Said"] = said
        # What it says is the time from losing the box to having it again, in whole seconds.
        check(3 <= away <= round(time.time() - dropped) + 1, f"phone {name}: {said!r} fits the time it was away")
    shoot(a, "14-back")
    # Reconnected for real: a change on one phone reaches the other again.
    a.find_element(By.ID, "b1h").click()
    wait(b, "return document.getElementById('bellsPaused').textContent.endsWith('(by Phone A)')", 5,
         "after the reconnect phone B hears phone A's pause")
    b.find_element(By.ID, "bResume").click()
    figures["pageBytes"] = len(a.page_source.encode())
    print(json.dumps(figures))
finally:
    a.quit()
    b.quit()
finish()
