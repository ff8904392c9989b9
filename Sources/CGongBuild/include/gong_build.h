/*
 * Where this gong came from and where it lives: the commit it was built from (`gong --version`,
 * gong_version()), and the file its code was loaded from (to find the sound bank installed beside
 * it). In C because a value (not just a condition) can be handed to a C file at build time
 * without rebuilding any Swift, and because Swift's Glibc module has no dladdr.
 */
#ifndef GONG_BUILD_H
#define GONG_BUILD_H

/* The commit gong was built from ("1a2b3c4d5e6f", "-dirty" appended when the work tree had
   changes), or "" when the build could not tell. */
const char *gong_build_commit(void);

/* The file this code was loaded from, as the dynamic loader names it: libgong.so's path when it
   runs in the library, the program's (possibly as started, relative) when linked into it; NULL
   when the loader cannot tell. */
const char *gong_image_path(void);

#endif
