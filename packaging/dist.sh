#!/bin/bash
# make dist: the release files for this machine's architecture, in out/dist/ —
#   gong-VERSION-linux-ARCH.tar.gz  a prefix tree (bin, lib, include, share) and install.sh
#   gong_VERSION_DEBARCH.deb        the same files in Debian's layout
# from binaries `make dist` built first with the Swift runtime linked in (.build/static/release:
# gong, libGongABI.so, and argument-parser's generate-manual). lintian's verdict on the .deb goes to
# out/dist/lintian.txt: it must find no error or warning but those overridden, with reasons, in
# packaging/debian/lintian-overrides; the informational tags left are explained in docs/install.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILT=${BUILT:-.build/static/release}
OUT=${OUT:-out/dist}
version=$(scripts/version.sh)
arch=$(uname -m)
debarch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# Every date inside the packages is the commit's, so the same commit packs to the same bytes.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

rm -rf "$OUT" && mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- The files both packages hold, made once -------------------------------------------------
# Stripped: the symbol tables and debug info are most of a Swift binary and no user reads them
# (stack traces in gong's errors are never shown; a crash is reported by its message).
# As dh_strip does: .comment and .note go too (the build id, .note.gnu.build-id, stays).
strip --strip-unneeded --remove-section=.comment --remove-section=.note -o "$work/gong" "$BUILT/gong"
strip --strip-unneeded --remove-section=.comment --remove-section=.note -o "$work/libgong.so" "$BUILT/libGongABI.so"
# SwiftPM links with RUNPATH $ORIGIN, for Swift libraries beside the program; with the runtime
# linked in there are none, and an installed program must not search its own directory.
chrpath -d "$work/gong" "$work/libgong.so" >/dev/null
chmod 755 "$work/gong" "$work/libgong.so"

# Man pages: argument-parser's generate-manual (the tool behind its generate-manual plugin, run
# on the gong just built rather than through the plugin, which would build the package once more
# without the static runtime): gong.1 and one page per subcommand, dated by the commit.
mkdir -p "$work/man"
"$BUILT/generate-manual" "$work/gong" --multi-page --section 1 \
  --date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)" \
  --authors "the gong maintainers" --output-directory "$work/man"
# The tool names a subcommand's page gong.run.1 with the name "gong run"; man-db's whatis and
# Debian's convention (git-commit(1)) want gong-run.1 named gong-run, the synopsis still
# showing `gong run`. Its blank lines (paragraphs of a discussion) become mdoc's .Pp.
for page in "$work"/man/gong.*.1; do
  words=$(basename "$page" .1 | tr . ' ')
  dashed=$(tr ' ' - <<<"$words")
  sed -e "s/^\.Dt [A-Z.]* 1$/.Dt ${dashed^^} 1/" -e "s/^\.Nm \"$words\"$/.Nm $dashed/" -e "s/^\.Nm$/.Nm \"$words\"/" \
    "$page" >"$work/man/$dashed.1"
  rm "$page"
done
for page in "$work"/man/*.1; do
  sed -i -e 's/^\(\.Xr gong\)\.\([a-z.]*\) 1/\1-\2 1/' -e 's/^\(\.Xr gong-[a-z]*\)\.\([a-z]*\)/\1-\2/' -e 's/^$/.Pp/' "$page"
  gzip -9n "$page"
done

mkdir -p "$work/completions"
for shell in bash zsh fish; do "$work/gong" --generate-completion-script "$shell" >"$work/completions/$shell"; done
# A completion is sourced, never run: no #! line (lintian: bash-completion-with-hashbang).
sed -i '1{/^#!/d}' "$work/completions/bash"

# Lays the files out under $1 with the directory names $2.. (a prefix tree or Debian's).
place() {
  local root=$1 libdir=$2 zshdir=$3 unitdir=$4 docdir=$5
  install -D -m 755 "$work/gong" "$root/bin/gong"
  install -D -m 755 "$work/libgong.so" "$root/$libdir/libgong.so"
  install -D -m 644 include/gong.h "$root/include/gong.h"
  install -d "$root/$libdir/pkgconfig" "$root/share/gong/sounds" "$root/share/man/man1" "$root/$unitdir"
  sed "s|@VERSION@|$version|" packaging/gong.pc.in >"$root/$libdir/pkgconfig/gong.pc"
  install -m 644 Sounds/*.flac "$root/share/gong/sounds/"
  install -m 644 "$work"/man/*.1.gz "$root/share/man/man1/"
  install -D -m 644 "$work/completions/bash" "$root/share/bash-completion/completions/gong"
  install -D -m 644 "$work/completions/zsh" "$root/$zshdir/_gong"
  install -D -m 644 "$work/completions/fish" "$root/share/fish/vendor_completions.d/gong.fish"
  install -m 644 packaging/systemd/gong@.service "$root/$unitdir/"
  install -D -m 644 README.md "$root/$docdir/README.md"
  # The manual README.md links to, so that its links lead somewhere on a machine with no source.
  install -D -m 644 -t "$root/$docdir/docs" docs/*.md
}

# --- The tarball -----------------------------------------------------------------------------
name=gong-$version-linux-$arch
tree=$work/tar/$name
# zsh looks in PREFIX/share/zsh/site-functions (/usr/local's is on its default path); systemd in
# PREFIX/lib/systemd/user (/usr/local's too).
place "$tree" lib share/zsh/site-functions lib/systemd/user share/doc/gong
install -m 644 README.md LICENSE "$tree/"
install -m 644 LICENSE "$tree/share/doc/gong/"
install -m 755 packaging/install.sh "$tree/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$work/tar" -cf - "$name" |
  gzip -9n >"$OUT/$name.tar.gz"

# --- The .deb --------------------------------------------------------------------------------
root=$work/deb
# /usr, the library and its .pc under the multiarch directory, zsh's completions where Debian's
# zsh looks for packaged ones, units where systemd looks for packaged user units.
place "$root/usr" "lib/$multiarch" share/zsh/vendor-completions lib/systemd/user share/doc/gong
sed -i -e "s|@PREFIX@|/usr|" -e "s|@LIBDIR@|/usr/lib/$multiarch|" "$root/usr/lib/$multiarch/pkgconfig/gong.pc"
sed -i "s|@BINDIR@|/usr/bin|" "$root/usr/lib/systemd/user/gong@.service"
gzip -9n "$root/usr/share/doc/gong/README.md" "$root/usr/share/doc/gong/docs/"*.md
install -D -m 644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/gong"
{
  sed '/^@LICENSE@$/,$d' packaging/debian/copyright.in
  sed -e 's/^$/./' -e 's/^/ /' LICENSE
} >"$root/usr/share/doc/gong/copyright"
sed -e "s|@VERSION@|$version|g" -e "s|@COMMIT@|$commit|" \
  -e "s|@DATE@|$(date -u -R -d "@$SOURCE_DATE_EPOCH")|" packaging/debian/changelog.in |
  gzip -9n >"$root/usr/share/doc/gong/changelog.gz"  # native: no Debian revision

# Depends: what the two binaries link, as dpkg-shlibdeps finds the packages that provide it
# (it wants a debian/control beside it: a minimal one in a scratch directory).
mkdir -p "$work/shlibs/debian" "$root/DEBIAN"
printf 'Source: gong\n\nPackage: gong\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/gong" "$root/usr/lib/$multiarch/libgong.so" |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dist: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -k -s --exclude=DEBIAN "$root" | cut -f1)
# (# for the last: Depends holds | between alternatives.)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$debarch|" -e "s|@SIZE@|$size|" -e "s#@DEPENDS@#$depends#" \
  packaging/debian/control.in >"$root/DEBIAN/control"
(cd "$root" && find usr -type f | sort | xargs md5sum) >"$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +
deb=$OUT/gong_${version}_$debarch.deb
# xz at level 9: its 64 MiB window spans both binaries, so the code libgong.so shares with gong
# (GongKit, GongAudio, GongCore, the Swift runtime) is stored once; dpkg-deb's default, level 6,
# has an 8 MiB window, shorter than gong, and stored it twice (the .deb 12.4 MB against 9.4 MB).
# Unpacking needs about 65 MiB of memory (xz's figure for level 9), which a Raspberry Pi has.
dpkg-deb --root-owner-group -Zxz -z9 --build "$root" "$deb" >/dev/null
# On x86, its files compressed again through xz's x86 branch filter, which dpkg-deb cannot ask
# for: a call's target written relative to where it is differs at every call site, and written
# absolute repeats, so the binaries pack 6 % smaller (bench/RESULTS.md). Any xz decoder reads it,
# dpkg's included (x86's filter is as old as xz; ARM64's is not, and Ubuntu 22.04's lacks it).
if [ "$debarch" = amd64 ] || [ "$debarch" = i386 ]; then
  mkdir "$work/ar"
  (cd "$work/ar" && ar x "$OLDPWD/$deb" && xz -dc data.tar.xz | xz -T1 --x86 --lzma2=preset=9 >data.tar.x86 &&
    mv data.tar.x86 data.tar.xz && rm -f "$OLDPWD/$deb" && ar rcD "$OLDPWD/$deb" debian-binary control.tar.xz data.tar.xz)
fi

# lintian reads the package as a Debian maintainer would: any error or warning fails the build,
# but those overridden in packaging/debian/lintian-overrides (each with its reason); the
# informational tags left are explained in docs/install.md.
# (--show-overrides lists the overridden as O:, and makes them count for --fail-on: read E: and W:.)
lintian --info --display-info --show-overrides --fail-on none "$deb" >"$OUT/lintian.txt" 2>&1 ||
  { cat "$OUT/lintian.txt" >&2; echo "dist: lintian could not run" >&2; exit 1; }
if grep -q '^[EW]: ' "$OUT/lintian.txt"; then
  grep '^[EW]: ' "$OUT/lintian.txt" >&2
  echo "dist: lintian: errors or warnings (above; all of it in $OUT/lintian.txt)" >&2
  exit 1
fi

echo "dist: $OUT/$name.tar.gz ($(du -k "$OUT/$name.tar.gz" | cut -f1) KiB)"
echo "dist: $deb ($(du -k "$deb" | cut -f1) KiB), Depends: $depends"
echo "dist: lintian: no error or warning; $(grep -c '^O: ' "$OUT/lintian.txt" || true) overridden, $(grep -c '^I: ' "$OUT/lintian.txt" || true) informational, in $OUT/lintian.txt"
