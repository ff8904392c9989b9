#!/bin/bash
# make dist-check (make test runs it last): the release files `make dist` left in out/dist,
# installed and run as a person would, where no Swift toolchain can be reached.
#   1. The tarball, unpacked and installed by its install.sh under a scratch prefix.
#   2. ldd on its gong and libgong.so: nothing from the toolchain, nothing missing; and no ICU
#      data (icudt) among the symbols of the gong and libgong.so they were stripped from.
#   3. In a private mount namespace with an empty tmpfs over the toolchain's directory (the
#      toolchain is gone for these commands only): gong --version; gong render two-phase,
#      frame for frame the build tree's render; gong run box on ALSA's null device; gong devices;
#      gong sounds, from the bank installed beside it; man -l on the pages; the bash completion
#      asked for `gong ru<TAB>`; the Python example driving the installed libgong.so.
#   4. The .deb: no more than 10 MB, its gong and libgong.so no more than 20 and 16 MB (checked
#      first, without root); dpkg -i, gong from /usr/bin, then dpkg -r and --purge: every file
#      and directory it added is gone. lintian's verdict is printed here, for the log.
# Needs root (the mount namespace, dpkg); CI is root, and make test fails without it. By hand,
# not root, it says it skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${DIST:-out/dist}
BUILT_GONG=${BUILT_GONG:-.build/static/release/gong}
version=$(scripts/version.sh)
tarball=$DIST/gong-$version-linux-$(uname -m).tar.gz
deb=$DIST/gong_${version}_$(dpkg --print-architecture).deb
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")

say() { echo "dist-check: $*"; }
fail() { echo "dist-check: FAILED: $*" >&2; exit 1; }
# No ICU's data in what ships: 34 MB of each binary when anything linked imports all of
# Foundation rather than FoundationEssentials. Read from the unstripped build the release files
# were stripped from (a stripped binary has no symbols to list); runs with or without root.
built=$(dirname "$BUILT_GONG")
for binary in "$BUILT_GONG" "$built/libGongABI.so"; do
  [ -f "$binary" ] || fail "no $binary: run make dist"
  symbols=$(nm "$binary" 2>/dev/null) || fail "nm cannot read $binary"
  [ -n "$symbols" ] || fail "nm lists no symbols in $binary (stripped?): cannot tell whether it carries ICU"
  icu=$(grep -i 'icudt' <<<"$symbols" | awk '{ print $NF }' | head -3 | tr '\n' ' ' || true)
  [ -z "$icu" ] || fail "$binary carries ICU's data ($icu): something it links imports Foundation; import FoundationEssentials"
done
say "nm: no icudt symbol in gong or libgong.so ($(du -k "$BUILT_GONG" | cut -f1) and $(du -k "$built/libGongABI.so" | cut -f1) KiB unstripped)"

# What the release is held to, in decimal megabytes (issue 34, "Lean"): the .deb at most 10 MB,
# and in it gong at most 20 MB and libgong.so 16 MB (stripped). Read from the files, so it runs
# with or without root.
[ -f "$deb" ] || fail "no $deb: run make dist"
deb_bytes=$(stat -c %s "$deb")
[ "$deb_bytes" -le 10000000 ] || fail "$(basename "$deb") is $deb_bytes bytes, more than 10 MB"
packed() { dpkg-deb -c "$deb" | awk -v path="$1" '$6 == path { print $3 }'; }
gong_bytes=$(packed ./usr/bin/gong)
lib_bytes=$(packed "./usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libgong.so")
[ -n "$gong_bytes" ] && [ -n "$lib_bytes" ] || fail "$(basename "$deb") holds no /usr/bin/gong or libgong.so"
[ -n "$(packed ./usr/share/doc/gong/docs/remote.md.gz)" ] || fail "$(basename "$deb") holds no docs/ beside README.md (its links lead there)"
[ "$gong_bytes" -le 20000000 ] || fail "gong in the .deb is $gong_bytes bytes, more than 20 MB"
[ "$lib_bytes" -le 16000000 ] || fail "libgong.so in the .deb is $lib_bytes bytes, more than 16 MB"
say "sizes within bounds: the .deb $deb_bytes bytes (≤ 10 MB), gong $gong_bytes (≤ 20 MB), libgong.so $lib_bytes (≤ 16 MB)"

# Not root: under make test (GONG_MAKE_TEST) and on CI that is an error; elsewhere (make
# dist-check by hand) the check is skipped, said.
if [ "$(id -u)" -ne 0 ]; then
  [ -z "${CI:-}${GONG_MAKE_TEST:-}" ] || fail "needs root (a mount namespace, dpkg -i), and make test runs it"
  echo "dist-check: SKIPPED: needs root (a mount namespace, dpkg -i); the release files are in $DIST" >&2
  exit 0
fi
[ -f "$tarball" ] && [ -f "$deb" ] || fail "no $tarball or $deb: run make dist"
[ -d "$toolchain/usr/bin" ] || fail "cannot tell the Swift toolchain's directory (found '$toolchain')"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix

# --- 1. The tarball ---------------------------------------------------------------------------
tar -xzf "$tarball" -C "$scratch"
"$scratch/gong-$version-linux-$(uname -m)/install.sh" --prefix "$prefix" >/dev/null
for file in bin/gong lib/libgong.so include/gong.h lib/pkgconfig/gong.pc share/gong/sounds/gong.flac \
  share/man/man1/gong.1.gz share/man/man1/gong-run.1.gz share/bash-completion/completions/gong \
  share/zsh/site-functions/_gong share/fish/vendor_completions.d/gong.fish lib/systemd/user/gong@.service \
  share/doc/gong/README.md share/doc/gong/LICENSE share/doc/gong/docs/remote.md; do
  [ -f "$prefix/$file" ] || fail "the tarball installed no $file"
done
grep -q "^ExecStart=$prefix/bin/gong run %i" "$prefix/lib/systemd/user/gong@.service" || fail "the unit does not run $prefix/bin/gong"
[ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion gong)" = "$version" ] || fail "gong.pc: wrong version"
say "tarball: installed under a scratch prefix by its install.sh"

# --- 2. What the binaries link ------------------------------------------------------------------
for binary in "$prefix/bin/gong" "$prefix/lib/libgong.so"; do
  links=$(ldd "$binary")
  if grep -q "$toolchain\|not found" <<<"$links"; then echo "$links" >&2; fail "$binary links the toolchain or misses a library"; fi
  say "ldd $(basename "$binary"): $(awk '{ print $1 }' <<<"$links" | grep -v '^/' | tr '\n' ' ')"
done

# --- 3. Run with the toolchain out of reach -----------------------------------------------------
# The reference render, from the build tree's gong (which has the toolchain at hand).
"$BUILT_GONG" render two-phase -o "$scratch/built.flac" >/dev/null
cat >"$scratch/run.sh" <<'RUN'
set -euo pipefail
toolchain=$1 prefix=$2 scratch=$3 version=$4
fail() { echo "dist-check: FAILED (toolchain hidden): $*" >&2; exit 1; }
mount -t tmpfs -o size=1m,mode=0755 gong-no-toolchain "$toolchain"
[ -z "$(ls -A "$toolchain")" ] || fail "the toolchain is still there"
command -v swift >/dev/null && fail "swift is still on the PATH"
export HOME=$scratch/home XDG_DATA_DIRS=/nonexistent
mkdir -p "$HOME"
gong=$prefix/bin/gong
shown=$("$gong" --version)
[[ $shown == "$version"* ]] || fail "gong --version said '$shown'"
echo "dist-check: gong --version: $shown"
"$gong" render two-phase -o "$scratch/shipped.flac" >/dev/null
cmp -s <(sox "$scratch/built.flac" -t raw -) <(sox "$scratch/shipped.flac" -t raw -) || fail "the shipped render differs from the build tree's"
echo "dist-check: gong render two-phase: $(soxi -s "$scratch/shipped.flac") frames, each the same as the build tree's"
"$gong" run box --device null --cycles 1 --set inhale=1s --set hold=1s --set exhale=1s --set rest=1s \
  --json --no-history </dev/null >"$scratch/run.json"
grep -q '"type":"finished"' "$scratch/run.json" || fail "gong run box did not finish"
echo "dist-check: gong run box --device null: $(grep -c '"type":"cue"' "$scratch/run.json") cues, finished"
"$gong" devices >"$scratch/devices.txt" || fail "gong devices failed"
grep -q "null" "$scratch/devices.txt" || fail "gong devices does not list ALSA's null"
echo "dist-check: gong devices: $(wc -l <"$scratch/devices.txt") lines"
first=$("$gong" sounds | head -1)
[ "$first" = "from $prefix/share/gong/sounds (installed beside gong)" ] || fail "gong sounds: '$first'"
echo "dist-check: gong sounds: $first"
for page in gong gong-run gong-render; do
  man -l "$prefix/share/man/man1/$page.1.gz" >"$scratch/$page.txt" 2>/dev/null
  grep -q "^NAME" "$scratch/$page.txt" || fail "man -l $page.1.gz shows no NAME"
done
grep -q "Exit status:" "$scratch/gong.txt" || fail "gong.1 has no exit statuses"
grep -q "gong run two-phase" "$scratch/gong-run.txt" || fail "gong-run.1 has no examples"
echo "dist-check: man -l: gong.1 ($(wc -l <"$scratch/gong.txt") lines, with examples and exit statuses), gong-run.1, gong-render.1"
completed=$(bash -c 'source /usr/share/bash-completion/bash_completion
  source "$1"
  COMP_WORDS=(gong ru); COMP_CWORD=1; COMP_LINE="gong ru"; COMP_POINT=${#COMP_LINE}
  _gong gong ru gong
  printf "%s " "${COMPREPLY[@]}"' bash "$prefix/share/bash-completion/completions/gong")
[ "$completed" = "run " ] || fail "bash completes 'gong ru' to '$completed'"
echo "dist-check: bash completion: gong ru<TAB> → $completed"
GONG_LIBRARY=$prefix/lib/libgong.so python3 Examples/python/play.py null >"$scratch/python.txt"
grep -q '^report: ' "$scratch/python.txt" || fail "the Python example printed no report"
echo "dist-check: Examples/python/play.py on the installed libgong.so: $(grep -c '^event: ' "$scratch/python.txt") events and the report"
RUN
unshare --mount --propagation private bash "$scratch/run.sh" "$toolchain" "$prefix" "$scratch" "$version"

# --- 4. The .deb ------------------------------------------------------------------------------
echo "dist-check: lintian $(lintian --version 2>/dev/null | awk '{ print $2 }') on $(basename "$deb"):"
sed 's/^/  /' "$DIST/lintian.txt"
dpkg-query -W -f='${Status}' gong 2>/dev/null | grep -q "installed" && fail "a gong package is installed already; remove it first"
# Every path the package holds, and which of them were there before (directories it shares).
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^/\?$' >"$scratch/paths"
while read -r path; do [ -e "$path" ] && echo "$path"; done <"$scratch/paths" >"$scratch/before"
dpkg -i "$deb" >/dev/null
installed=$(unshare --mount --propagation private sh -c \
  "mount -t tmpfs -o size=1m tmpfs '$toolchain' && HOME=$scratch/home gong --version && HOME=$scratch/home gong sounds | head -1")
dpkg -r gong >/dev/null
# Purged too, should -r have left anything of its configuration (it ships no conffile).
if dpkg-query -W -f='${Status}' gong 2>/dev/null | grep -q config-files; then dpkg --purge gong >/dev/null; fi
left=$(while read -r path; do [ -e "$path" ] && ! grep -qxF "$path" "$scratch/before" && echo "$path"; done <"$scratch/paths" || true)
[ -z "$left" ] || fail "dpkg -r and --purge left: $left"
say "deb: dpkg -i, then /usr/bin/gong (toolchain hidden): $(tr '\n' ';' <<<"$installed")"
say "deb: dpkg -r and --purge left none of its $(wc -l <"$scratch/paths") paths behind"
say "sizes: $(basename "$deb") $(du -k "$deb" | cut -f1) KiB, $(basename "$tarball") $(du -k "$tarball" | cut -f1) KiB, installed gong $(du -k "$prefix/bin/gong" | cut -f1) KiB, libgong.so $(du -k "$prefix/lib/libgong.so" | cut -f1) KiB"
