/* Filled in by `git archive` (export-subst); left as is in a checkout. */
#define GONG_ARCHIVE_COMMIT "$Format:%h$"
