#!/usr/bin/env python3
"""Runs every fenced command in README.md and docs/*.md as written, so the documentation cannot
drift from the program.

  scripts/check-doc-commands.py [--gong PATH] [FILE.md ...]

`--gong` is the gong to run (default: .build/debug/gong, what `swift build` makes); its directory
goes first on PATH, so a block says `gong …` as a person types it. Each block runs in a scratch
directory of its own, with HOME and every XDG directory in it (nothing of the user's history,
config or cache is read or written), and with no sound server reachable (PULSE_SERVER,
PIPEWIRE_REMOTE and JACK_DEFAULT_SERVER point nowhere), so a block that would need one fails at
once rather than playing on whatever server is there.

The rule, by a fence's language (its info string's first word):

  sh, bash, shell   a script: run with bash -e -o pipefail; it must exit 0.
  console           `$ COMMAND` lines, each followed by what it prints. A command whose shown
                    output begins `gong: ` is an error example: it must exit non-zero and print
                    that line on stderr, exactly. Any other command must exit 0. (Other output,
                    which holds times and measurements, is not compared.)
  anything else     not a command (toml, ini, swift, c, python, json, text, …): not run, unless
                    marked below. A fence with no language is an error: say `text` for output.

A marker on the line before a fence (an HTML comment, which Markdown does not show) changes that:

  <!-- check: skip REASON -->  not run, for a REASON from SKIP_REASONS: it needs a sound device,
                                a sound server, root, the network, or takes many minutes. The
                                checker counts and names every skipped block.
  <!-- check: pattern -->       a toml block that is a whole pattern file: written to
                                ./pattern.toml and read with `gong patterns show ./pattern.toml`.
  <!-- check: config -->        a toml block that is a whole config.toml: written to
                                $XDG_CONFIG_HOME/gong/config.toml and read with `gong config`.

Exit status 0 when every block that runs passed, 1 otherwise (each failure named with its file,
line and command), 64 for bad usage or an unknown marker.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_REASONS = {
    "device": "plays on a sound device",
    "server": "needs a sound server (PulseAudio, PipeWire, JACK, a snapserver)",
    "root": "installs or changes the system (root)",
    "network": "needs the network",
    "long": "takes many minutes (a build, the whole test suite)",
}
SHELLS = {"sh", "bash", "shell"}
BLOCK_TIMEOUT_SECONDS = 120
MARKER = re.compile(r"^\s*<!--\s*check:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*(.*)$")


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    marker: str | None
    lines: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}:{self.line}"


class UsageError(Exception):
    pass


def blocks_in(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, info = opening.groups()
        marker = None
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and (m := MARKER.match(lines[j])):
            marker = m.group(1)
        block = Block(path, i + 1, info.split()[0] if info.strip() else "", marker)
        i += 1
        closing = re.compile(re.escape(fence[0]) + "{%d,}" % len(fence))
        while i < len(lines) and not closing.fullmatch(lines[i].strip()):
            block.lines.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        found.append(block)
    return found


def scratch_environment(scratch: Path, gong: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GONG_") or k == "GONG_TEST_RUN"}
    home = scratch / "home"
    runtime = scratch / "run"
    for directory in (home, runtime):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_RUNTIME_DIR=str(runtime),
        PATH=f"{gong.parent}:{env.get('PATH', '/usr/bin:/bin')}",
        # No sound server is reachable: a block that needs one fails at once instead of playing.
        PULSE_SERVER=f"unix:{scratch}/no-pulse-server",
        PIPEWIRE_REMOTE=f"{scratch}/no-pipewire-server",
        JACK_DEFAULT_SERVER="gong-doc-check-no-server",
        TERM="dumb",
    )
    env.pop("DISPLAY", None)
    return env


def run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", command],
        cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=BLOCK_TIMEOUT_SECONDS)


def console_commands(block: Block) -> list[tuple[str, list[str]]]:
    """Each `$ COMMAND` with the lines shown after it."""
    commands: list[tuple[str, list[str]]] = []
    for text in block.lines:
        if text.startswith("$ "):
            commands.append((text[2:], []))
        elif commands:
            commands[-1][1].append(text)
    return commands


def check(block: Block, gong: Path) -> tuple[str, str | None]:
    """What was done, and the failure (None when it passed)."""
    with tempfile.TemporaryDirectory(prefix="gong-doc-check-") as name:
        scratch = Path(name)
        work = scratch / "work"
        work.mkdir()
        env = scratch_environment(scratch, gong)
        try:
            if block.marker == "pattern":
                (work / "pattern.toml").write_text("\n".join(block.lines) + "\n")
                return expect_success("gong patterns show ./pattern.toml", work, env, "pattern file")
            if block.marker == "config":
                config = Path(env["XDG_CONFIG_HOME"]) / "gong"
                config.mkdir(parents=True)
                (config / "config.toml").write_text("\n".join(block.lines) + "\n")
                return expect_success("gong config", work, env, "config file")
            if block.language in SHELLS:
                return expect_success("\n".join(block.lines), work, env, "script")
            if block.language == "console":
                commands = console_commands(block)
                for command, shown in commands:
                    error = next((line for line in shown if line.strip()), "")
                    if error.startswith("gong: "):
                        result = run(command, work, env)
                        if result.returncode == 0:
                            return "", f"`{command}` exited 0, but the doc shows it failing with:\n    {error}"
                        if error not in result.stderr.splitlines():
                            return "", (f"`{command}` printed another error than the doc shows:\n"
                                        f"    doc:  {error}\n    gong: {result.stderr.strip()}")
                    else:
                        _, failure = expect_success(command, work, env, "command")
                        if failure:
                            return "", failure
                return f"{len(commands)} command(s)", None
        except subprocess.TimeoutExpired as timeout:
            return "", f"still running after {BLOCK_TIMEOUT_SECONDS} s: {timeout.cmd[-1]!r}"
    raise AssertionError("check called for a block that is not run")


def expect_success(command: str, cwd: Path, env: dict[str, str], what: str) -> tuple[str, str | None]:
    result = run(command, cwd, env)
    if result.returncode != 0:
        shown = "\n".join("    " + line for line in (result.stderr or result.stdout).strip().splitlines()[-8:])
        return "", f"{what} exited {result.returncode}:\n    $ {command.replace(chr(10), chr(10) + '    $ ')}\n{shown}"
    return what, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gong", default=str(ROOT / ".build/debug/gong"), help="the gong to run")
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    args = parser.parse_args()
    gong = Path(args.gong).resolve()
    if not os.access(gong, os.X_OK):
        print(f"check-doc-commands: --gong {args.gong}: no executable there; build it first "
              f"(swift build --product gong)", file=sys.stderr)
        return 66
    files = [Path(f).resolve() for f in args.files] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

    failures, ran, skipped, inert = [], 0, [], 0
    for path in files:
        for block in blocks_in(path):
            if not block.language:
                failures.append(f"{block.where}: a fence with no language; say `text` for output, `sh` for commands")
                continue
            if block.marker is not None:
                words = block.marker.split()
                if words[0] == "skip":
                    if len(words) < 2 or words[1] not in SKIP_REASONS:
                        print(f"check-doc-commands: {block.where}: `check: {block.marker}`: give a reason, one of "
                              f"{', '.join(SKIP_REASONS)}", file=sys.stderr)
                        return 64
                    skipped.append(f"{block.where} ({words[1]}: {SKIP_REASONS[words[1]]})")
                    continue
                if words[0] not in ("pattern", "config") or len(words) != 1:
                    print(f"check-doc-commands: {block.where}: `check: {block.marker}`: unknown marker; use "
                          f"skip REASON, pattern or config", file=sys.stderr)
                    return 64
            elif block.language not in SHELLS and block.language != "console":
                inert += 1
                continue
            what, failure = check(block, gong)
            ran += 1
            if failure:
                failures.append(f"{block.where}: {failure}")
                print(f"FAIL {block.where} ({block.language})")
            else:
                print(f"ok   {block.where} ({block.language}: {what})")

    for line in skipped:
        print(f"skip {line}")
    print(f"check-doc-commands: {ran} block(s) run, {len(failures)} failed, {len(skipped)} skipped by marker, "
          f"{inert} not commands, in {len(files)} file(s)")
    for failure in failures:
        print(f"check-doc-commands: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
