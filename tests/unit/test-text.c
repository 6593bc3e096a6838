/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/text.c: names cut and padded in terminal columns, in a UTF-8 locale and in C. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "text.h"

/* "vm-é-名前": é is 2 bytes and 1 column, 名 and 前 3 bytes and 2 columns each */
#define NAME "vm-\xc3\xa9-\xe5\x90\x8d\xe5\x89\x8d"

static int fits(const char *s, int cols, int pad, const char *want, int want_w)
{
    char out[64];
    int w = vn_text_fit(out, sizeof(out), s, cols, pad);

    return w == want_w && strcmp(out, want) == 0;
}

int main(void)
{
    char small[6];

    if (!setlocale(LC_CTYPE, "C.UTF-8")) {
        printf("cannot run here: no C.UTF-8 locale in this C library\n");
        return 77;
    }
    CHECK(vn_text_width(NAME) == 9, "a UTF-8 name is measured in columns, not bytes (9, %zu bytes)",
          strlen(NAME));
    CHECK(fits(NAME, 20, 1, NAME "           ", 20), "padded to 20 columns with 11 spaces");
    CHECK(fits(NAME, 9, 1, NAME, 9), "a name as wide as the column is kept whole");
    CHECK(fits(NAME, 8, 1, "vm-\xc3\xa9-\xe5\x90\x8d ", 8),
          "cut before a 2-column character that would cross the edge, then padded");
    CHECK(fits(NAME, 4, 0, "vm-\xc3\xa9", 4), "cut after é, never inside its 2 bytes");
    CHECK(fits(NAME, 3, 0, "vm-", 3), "cut before é");
    CHECK(fits("e\xcc\x81t\xc3\xa9", 2, 0, "e\xcc\x81t", 2),
          "a combining accent takes no column and stays with its letter");
    CHECK(fits("a\x1b[2Jb", 10, 0, "a?[2Jb", 6), "an escape character becomes '?'");
    CHECK(fits("a\xc2\x85z", 10, 0, "a??z", 4), "a C1 control (2 bytes) becomes two '?'");
    CHECK(fits("a\xff\xe5\x90z", 10, 0, "a???z", 5),
          "invalid and truncated sequences become one '?' a byte, and what follows is read");
    CHECK(vn_text_fit(small, sizeof(small), NAME, 20, 1) == 4 && strcmp(small, "vm-\xc3\xa9") == 0,
          "a small buffer ends the text on a whole character, terminated ('%s')", small);
    CHECK(fits("", 3, 1, "   ", 3) && fits(NULL, 2, 1, "  ", 2),
          "empty and NULL text: padding only");
    CHECK(fits("abc", 0, 1, "", 0), "zero columns: nothing");

    (void)setlocale(LC_CTYPE, "C");
    CHECK(fits(NAME, 20, 1,
               "vm-?"
               "?-?"
               "?????        ",
               20),
          "in the C locale each byte it cannot show is '?', still one column each");
    CHECK(vn_text_width("web1") == 4, "ASCII is the same in any locale");
    /* vn_text_scrub: what may reach a log line or a terminal, whatever the locale */
    {
        static const struct {
            const char *in, *out, *what;
        } sc[] = {
            {NAME, NAME, "UTF-8 letters stay"},
            {"a\x1b[2Jb\x7f", "a?[2Jb?", "C0 and DEL"},
            {"a\xc2\x9b"
             "31mb",
             "a??31mb", "C1 (U+009B, a CSI to a terminal in UTF-8)"},
            {"a\x9b"
             "31mb",
             "a?31mb", "a lone C1 byte (a CSI to an 8-bit terminal)"},
            {"vm\xe2\x80\xaegnp.exe", "vm???gnp.exe", "right-to-left override U+202E"},
            {"x\xe2\x81\xa6y\xe2\x81\xa9", "x???y???", "bidi isolates U+2066, U+2069"},
            {"a\xe2\x80\xa8"
             "b",
             "a???b", "line separator U+2028"},
            {"\xc0\xafx", "??x", "an overlong '/'"},
            {"\xed\xa0\x80", "???", "a surrogate"},
            {"\xf4\x90\x80\x80", "????", "past U+10FFFF"},
            {"ab\xe5\x90", "ab??", "a character cut short"},
        };
        for (unsigned i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
            char b[64];
            snprintf(b, sizeof(b), "%s", sc[i].in);
            vn_text_scrub(b, false);
            CHECK(strcmp(b, sc[i].out) == 0, "scrub: %s (got %s)", sc[i].what, b);
        }
        char nl[] = "a\nb\rc";
        CHECK(vn_text_scrub(nl, true) == 1 && strcmp(nl, "a\nb?c") == 0,
              "scrub keeping newlines: the newline stays, the CR goes (got %s)", nl);
    }
    return tap_done();
}
