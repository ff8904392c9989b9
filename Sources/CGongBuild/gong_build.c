#define _GNU_SOURCE
#include "gong_build.h"

#include <dlfcn.h>
#include <stddef.h>

/*
 * Where the commit comes from, first found wins:
 * 1. build-commit.h, written by `make` from `git rev-parse` (scripts/build-commit.sh) before it
 *    builds; ignored by git, so a checkout never carries a stale one.
 * 2. archive-commit.h, which `git archive` fills in (.gitattributes: export-subst), so a source
 *    tarball made from a tag knows its commit with no .git beside it.
 * 3. Neither: an empty string, and gong says only its version number.
 */
#if __has_include("build-commit.h")
#include "build-commit.h"
#else
#include "archive-commit.h"
#define GONG_COMMIT (GONG_ARCHIVE_COMMIT[0] == '$' ? "" : GONG_ARCHIVE_COMMIT)
#endif

const char *gong_build_commit(void) { return GONG_COMMIT; }

const char *gong_image_path(void) {
    Dl_info image;
    if (dladdr((const void *)&gong_image_path, &image) == 0) return NULL;
    return image.dli_fname;
}
