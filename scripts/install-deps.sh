#!/bin/sh
# Installs the Debian/Ubuntu packages gong builds and tests with, when any is missing.
# Safe to run again: it does nothing when everything is there.
set -eu

# C libraries (with headers) the package links against (SQLite for the history, through gong's
# own wrapper), toml++ (header-only: the pattern and config files' parser, compiled into gong, so
# no package of it is needed at run time), and the tools the tests drive (sqlite3 holds a history locked in a test; procps's pgrep finds what the scripts started):
# PulseAudio with a null sink and its ALSA plugin stand in for a sound card, and so does PipeWire
# (with its session manager and PulseAudio server, run under a D-Bus session of its own); sox
# inspects audio; numpy is what the Python pull example pulls into; klick is the benchmark's
# reference renderer. PipeWire installs beside
# PulseAudio (Debian 12: neither package conflicts with the other; pipewire-alsa, which would, is
# not needed: ALSA's pulse plugin reaches either server). On a desktop that runs PulseAudio,
# note that pipewire-pulse enables its systemd user socket beside PulseAudio's; the two conflict,
# and one of them is started at login (root, as on CI, has neither). gong links libpipewire (its
# PipeWire stream) and libjack (its JACK client); jackd2's dummy driver is the JACK server the
# tests play through, and pipewire-jack (pw-jack: PipeWire's libjack, used only by a command run
# through it) the other. Installing jackd2 asks (debconf) whether to allow real-time scheduling:
# DEBIAN_FRONTEND=noninteractive below takes the default (no) without asking, and root runs jackd
# at real-time priority anyway. systemd brings systemd-analyze, which checks the unit gong bells
# --install writes. snapserver and snapclient are the Snapcast rooms the Snapcast tests play
# through: the tests start their own with a config and ports of their own, never the package's
# service or its /etc/snapserver.conf (which defines a FIFO stream of its own). chromium,
# chromium-driver and python3-selenium drive gong remote's page in a real browser, headless and
# with nothing downloaded; zbar-tools' zbarimg reads back the QR code gong remote pair draws.
BUILD_PACKAGES="pkg-config libasound2-dev libpulse-dev libpipewire-0.3-dev libjack-jackd2-dev libsndfile1-dev libsoxr-dev libsqlite3-dev libtomlplusplus-dev"
TEST_PACKAGES="procps sqlite3 alsa-utils pulseaudio pulseaudio-utils libasound2-plugins sox pipewire pipewire-pulse wireplumber dbus python3-numpy jackd2 pipewire-jack systemd snapserver snapclient chromium chromium-driver python3-selenium zbar-tools"
BENCH_PACKAGES="klick hyperfine"
# make dist and its check (make test runs it): dpkg-shlibdeps and dpkg-architecture, lintian,
# strip and chrpath, man to read the pages, bash-completion to complete with, sox to compare
# renders, python3 for the ctypes example.
DIST_PACKAGES="dpkg-dev lintian binutils chrpath man-db bash-completion sox python3"

want="$BUILD_PACKAGES"
case "${1:-build}" in
  build) ;;
  dist) want="$want $DIST_PACKAGES" ;;
  test) want="$want $TEST_PACKAGES $DIST_PACKAGES" ;;
  bench) want="$want $TEST_PACKAGES $BENCH_PACKAGES" ;;
  *) echo "usage: $0 [build|dist|test|bench]" >&2; exit 64 ;;
esac

missing=""
for package in $want; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $package"
  fi
done
[ -z "$missing" ] && exit 0

echo "gong: installing missing packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "gong: run as root: apt-get install -y$missing" >&2
  exit 77
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
