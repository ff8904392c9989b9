#!/bin/sh
# Writes Sources/CGongBuild/build-commit.h: the commit this build comes from, for
# `gong --version`. Rewritten only when it changes, so an unchanged tree rebuilds nothing.
# Outside a git checkout (a source tarball) it writes nothing and the archive's commit is used.
set -eu
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short=12 HEAD 2>/dev/null) || exit 0
git diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
header=Sources/CGongBuild/build-commit.h
line="#define GONG_COMMIT \"$commit\""
[ -f "$header" ] && [ "$(cat "$header")" = "$line" ] && exit 0
echo "$line" > "$header"
