/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "jsonguard.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t json_find_lenient_syntax(const char *text, size_t len, const char **why)
{
    bool in_string = false, has_nul = false;
    size_t start = 0;

    for (size_t i = 0; i < len; i++) {
        char ch = text[i];

        if (!in_string) {
            if (ch == '\'') {
                *why = "single-quoted strings are not JSON";
                return i;
            }
            if (ch == '"') {
                in_string = true;
                has_nul = false;
                start = i;
            }
            continue;
        }
        if (ch == '\\') {
            if (i + 5 < len && memcmp(text + i + 1, "u0000", 5) == 0)
                has_nul = true;
            i++; /* skip the escaped character */
        } else if (ch == '"') {
            size_t j = i + 1;

            in_string = false;
            while (j < len &&
                   (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r'))
                j++;
            if (has_nul && j < len && text[j] == ':') {
                *why = "object key contains a NUL character";
                return start;
            }
        }
    }
    return SIZE_MAX;
}
