#include <alsa/asoundlib.h>

/* ALSA prints its own diagnostics to stderr ("ALSA lib pcm.c:…: Unknown PCM x"). gong turns
   every failure into one line of its own, so those are silenced. The handler is variadic,
   which Swift cannot write, hence this shim. */
static void CAlsaShims_ignoreError(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void CAlsaShims_silenceLibraryErrors(void) {
    snd_lib_error_set_handler(CAlsaShims_ignoreError);
}
