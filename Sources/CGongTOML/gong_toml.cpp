#include "gong_toml.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <sstream>
#include <string>

#include <toml++/toml.h>

namespace {

const toml::node &node(const gong_toml_node *value) { return *reinterpret_cast<const toml::node *>(value); }

const gong_toml_node *opaque(const toml::node &value) { return reinterpret_cast<const gong_toml_node *>(&value); }

char *copy(const std::string &text) {
    char *bytes = static_cast<char *>(std::malloc(text.size() + 1));
    if (bytes) std::memcpy(bytes, text.c_str(), text.size() + 1);
    return bytes;
}

// The flags gong's error messages were first written with (TOMLKit's defaults for a table).
constexpr auto tableFlags = toml::format_flags::allow_literal_strings | toml::format_flags::allow_multi_line_strings |
                            toml::format_flags::allow_unicode_strings | toml::format_flags::allow_binary_integers |
                            toml::format_flags::allow_octal_integers |
                            toml::format_flags::allow_hexadecimal_integers | toml::format_flags::indentation;

}  // namespace

extern "C" {

gong_toml_node *gong_toml_parse(const char *text, size_t length, gong_toml_error *error) {
    toml::parse_result result = toml::parse(std::string_view(text, length));
    if (!result) {
        const toml::parse_error &failure = result.error();
        *error = gong_toml_error{copy(std::string(failure.description())), failure.source().begin.line,
                                 failure.source().begin.column};
        return nullptr;
    }
    auto *root = new toml::table(std::move(result).table());
    return reinterpret_cast<gong_toml_node *>(static_cast<toml::node *>(root));
}

void gong_toml_free(gong_toml_node *root) {
    delete static_cast<toml::table *>(reinterpret_cast<toml::node *>(root));
}

gong_toml_type gong_toml_type_of(const gong_toml_node *value) {
    switch (node(value).type()) {
    case toml::node_type::table: return GONG_TOML_TABLE;
    case toml::node_type::array: return GONG_TOML_ARRAY;
    case toml::node_type::string: return GONG_TOML_STRING;
    case toml::node_type::integer: return GONG_TOML_INTEGER;
    case toml::node_type::floating_point: return GONG_TOML_FLOAT;
    case toml::node_type::boolean: return GONG_TOML_BOOLEAN;
    case toml::node_type::date: return GONG_TOML_DATE;
    case toml::node_type::time: return GONG_TOML_TIME;
    default: return GONG_TOML_DATE_TIME;
    }
}

size_t gong_toml_count(const gong_toml_node *value) {
    if (auto table = node(value).as_table()) return table->size();
    if (auto array = node(value).as_array()) return array->size();
    return 0;
}

const gong_toml_node *gong_toml_element(const gong_toml_node *value, size_t index) {
    if (auto table = node(value).as_table()) return opaque(std::next(table->begin(), index)->second);
    return opaque(*node(value).as_array()->get(index));
}

const char *gong_toml_key(const gong_toml_node *value, size_t index, size_t *length) {
    const toml::key &key = std::next(node(value).as_table()->begin(), index)->first;
    *length = key.str().size();
    return key.str().data();
}

const char *gong_toml_string(const gong_toml_node *value, size_t *length) {
    const std::string &text = node(value).as_string()->get();
    *length = text.size();
    return text.data();
}

int64_t gong_toml_integer(const gong_toml_node *value) { return node(value).as_integer()->get(); }

double gong_toml_float(const gong_toml_node *value) { return node(value).as_floating_point()->get(); }

bool gong_toml_boolean(const gong_toml_node *value) { return node(value).as_boolean()->get(); }

char *gong_toml_text(const gong_toml_node *value) {
    std::stringstream text;
    const toml::node &item = node(value);
    if (auto table = item.as_table()) {
        text << toml::toml_formatter(*table, tableFlags);
    } else if (auto array = item.as_array()) {
        text << toml::toml_formatter(*array);
    } else {
        item.visit([&text](const auto &leaf) { text << leaf; });
    }
    return copy(text.str());
}
}
