// TOML for gong: Debian's toml++ behind a C interface, so Swift imports a C header and no module
// needs C++ interoperability (nor Foundation, which the Swift wrappers of toml++ bring).
#ifndef GONG_TOML_H
#define GONG_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A parsed value: a toml++ node, owned by the document its root came from.
typedef struct gong_toml_node gong_toml_node;

typedef enum gong_toml_type {
    GONG_TOML_TABLE,
    GONG_TOML_ARRAY,
    GONG_TOML_STRING,
    GONG_TOML_INTEGER,
    GONG_TOML_FLOAT,
    GONG_TOML_BOOLEAN,
    GONG_TOML_DATE,
    GONG_TOML_TIME,
    GONG_TOML_DATE_TIME
} gong_toml_type;

/// Why a text is not TOML, and where (from 1).
typedef struct gong_toml_error {
    /// Allocated with malloc: the caller frees it.
    char *description;
    uint32_t line;
    uint32_t column;
} gong_toml_error;

/// Parses `length` bytes of UTF-8: the root table, to free with gong_toml_free, or NULL with
/// `error` filled in.
gong_toml_node *gong_toml_parse(const char *text, size_t length, gong_toml_error *error);
void gong_toml_free(gong_toml_node *root);

gong_toml_type gong_toml_type_of(const gong_toml_node *node);
/// The elements of an array, or the keys of a table.
size_t gong_toml_count(const gong_toml_node *node);
/// An array's element, or the value of a table's key, by position (a table's keys sorted).
const gong_toml_node *gong_toml_element(const gong_toml_node *node, size_t index);
/// A table's key by position: its bytes, not NUL-terminated, `length` of them.
const char *gong_toml_key(const gong_toml_node *node, size_t index, size_t *length);

const char *gong_toml_string(const gong_toml_node *node, size_t *length);
int64_t gong_toml_integer(const gong_toml_node *node);
double gong_toml_float(const gong_toml_node *node);
bool gong_toml_boolean(const gong_toml_node *node);

/// The node as toml++ writes it (a table with literal, multi-line and Unicode strings, binary,
/// octal and hexadecimal integers and indentation allowed), allocated with malloc.
char *gong_toml_text(const gong_toml_node *node);

#ifdef __cplusplus
}
#endif

#endif
