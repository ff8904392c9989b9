#!/bin/sh
# Installs gong from this unpacked tarball under a prefix (default /usr/local):
#   ./install.sh                  # as root: /usr/local
#   ./install.sh --prefix ~/.local
# Uninstall with the same prefix: ./install.sh --prefix DIR --uninstall
# gong finds its sounds beside itself (PREFIX/share/gong/sounds), so any prefix works; only the
# C libraries of the system are needed (see README.md: Install).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=/usr/local
uninstall=false
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 64; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --uninstall) uninstall=true; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'; use --prefix DIR or --uninstall" >&2; exit 64 ;;
  esac
done
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

# Every file the tarball installs, relative to the prefix: the list uninstall removes.
files=$(cd "$here" && find bin lib include share -type f | sort)

if $uninstall; then
  for file in $files; do rm -f "$prefix/$file"; done
  rm -rf "$prefix/share/gong" "$prefix/share/doc/gong"
  echo "gong: removed from $prefix"
  exit 0
fi

for file in $files; do
  mode=644
  case $file in bin/*|lib/libgong.so) mode=755 ;; esac
  mkdir -p "$prefix/$(dirname "$file")"
  case $file in
    # The two files that name the prefix: written for the one they are installed under.
    lib/pkgconfig/gong.pc | lib/systemd/user/*)
      sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$prefix/lib|g" -e "s|@BINDIR@|$prefix/bin|g" \
        "$here/$file" > "$prefix/$file"
      chmod "$mode" "$prefix/$file" ;;
    *) cp "$here/$file" "$prefix/$file"; chmod "$mode" "$prefix/$file" ;;
  esac
done
echo "gong: installed under $prefix (run $prefix/bin/gong --version)"
