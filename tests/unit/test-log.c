/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of host/log.c: priority prefixes, one line per message, and the rate limit of
 * repeated errors (LOG_RATE_BURST per LOG_RATE_WINDOW_S, then a "suppressed" line). */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tap.h"

static double fake_now = 1000;

static double fake_clock(void)
{
    return fake_now;
}

static char *out_buf;
static size_t out_len;
static FILE *out;

static void reset_out(void)
{
    if (out)
        fclose(out);
    free(out_buf);
    out_buf = NULL;
    out_len = 0;
    out = open_memstream(&out_buf, &out_len);
    log_set_stream(out);
}

static unsigned count_lines(const char *needle)
{
    unsigned n = 0;

    fflush(out);
    for (const char *p = out_buf; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

int main(void)
{
    uint64_t before;

    log_setup(true, LOG_DEBUG);
    log_set_clock(fake_clock);

    reset_out();
    log_info("decision domain='%s' pass=%d", "a\nb", 1);
    fflush(out);
    CHECK(out_buf && strcmp(out_buf, "<6>vnumad: info: decision domain='a b' pass=1\n") == 0,
          "info line: priority prefix, newline in a name flattened");

    reset_out();
    log_info("decision domain='%s' pass=%d",
             "a\rb\tc\x1b[2Jd\x7f\x01"
             "e",
             1);
    fflush(out);
    CHECK(out_buf &&
              strcmp(out_buf, "<6>vnumad: info: decision domain='a b c?[2Jd??e' pass=1\n") == 0,
          "CR, tab, a terminal escape, DEL and other control characters never reach the log");

    reset_out();
    log_info("Tracking '%s'", "a\xc2\x9b"
                              "31m\xe2\x80\xae"
                              "b\x9b"
                              "c");
    fflush(out);
    CHECK(out_buf && strcmp(out_buf, "<6>vnumad: info: Tracking 'a??31m???b?c'\n") == 0,
          "C1 controls, a bidi override and bytes that are not UTF-8 never reach the log (%s)",
          out_buf ? out_buf : "");
    reset_out();
    log_info("Tracking domain '%s' (mode %s)",
             LOG_Q("v decision domain='web1' pass=9 action=acted"), "auto");
    fflush(out);
    CHECK(out_buf && !strstr(out_buf, "decision domain='web1'"),
          "a name in any line is quoted: it cannot make a line that greps as web1's decision (%s)",
          out_buf ? out_buf : "");

    {
        static const struct {
            const char *in, *out;
        } q[] = {
            {"web1", "web1"},
            {"vm-\xc3\xa9-\xe5\x90\x8d\xe5\x89\x8d", "vm-\xc3\xa9-\xe5\x90\x8d\xe5\x89\x8d"},
            {"a' action=acted reason='ok", "a\\' action=acted reason=\\'ok"},
            {"back\\slash\\", "back\\\\slash\\\\"},
            {"$(touch x); `id` | & * \"q\"", "$(touch x); `id` | & * \"q\""},
            {"", ""},
        };
        char buf[64];
        for (unsigned i = 0; i < sizeof(q) / sizeof(q[0]); i++)
            CHECK(strcmp(log_quote(q[i].in, buf, sizeof(buf)), q[i].out) == 0,
                  "log_quote(%s) = %s (got %s)", q[i].in, q[i].out, buf);
        CHECK(strcmp(log_quote("''''", buf, 6), "\\'\\'") == 0,
              "log_quote truncates between escapes, never inside one (got %s)", buf);
        CHECK(strcmp(log_quote(NULL, buf, sizeof(buf)), "") == 0, "log_quote(NULL) is empty");
        reset_out();
        log_info("decision domain='%s' pass=%d action=%s",
                 log_quote("x' pass=99 action=acted y='", buf, sizeof(buf)), 3, "none");
        fflush(out);
        CHECK(out_buf && strstr(out_buf, "domain='x\\' pass=99 action=acted y=\\'' pass=3 "
                                         "action=none\n"),
              "a quoted name cannot end its field early: %s", out_buf);
    }

    reset_out();
    for (int i = 0; i < 100; i++)
        log_err("Failed to sample '%s': %s", "web1", "boom");
    CHECK(count_lines("<3>vnumad: err: Failed to sample 'web1': boom\n") == LOG_RATE_BURST,
          "100 identical errors within a minute: %d written", LOG_RATE_BURST);
    CHECK(count_lines("suppressed") == 0, "no summary before the window ends");
    CHECK(log_suppressed_total() == 100 - LOG_RATE_BURST, "%llu counted as suppressed",
          (unsigned long long)log_suppressed_total());

    for (int i = 0; i < 100; i++)
        log_info("decision domain='web1' pass=%d", 7);
    CHECK(count_lines("<6>vnumad: info: decision domain='web1' pass=7\n") == 100,
          "info lines (one per decision) are never rate-limited");

    log_warn("Failed to sample '%s': %s", "web2", "boom");
    CHECK(count_lines("Failed to sample 'web2'") == 1,
          "a different message (another domain) is not held back by the first");

    fake_now += LOG_RATE_WINDOW_S + 1;
    log_info("tick");
    CHECK(count_lines("<3>vnumad: err: suppressed 95 messages in the last 60 s: Failed to "
                      "sample 'web1': boom\n") == 1,
          "after the window: one 'suppressed 95 messages' line at the message's priority");
    log_err("Failed to sample '%s': %s", "web1", "boom");
    CHECK(count_lines("<3>vnumad: err: Failed to sample 'web1': boom\n") == LOG_RATE_BURST + 1,
          "a new window writes the message again");

    reset_out();
    before = log_suppressed_total();
    for (int i = 0; i < 10; i++)
        log_err("flapping %d", 1);
    log_flush_suppressed(true);
    CHECK(count_lines("suppressed 5 messages in the last 60 s: flapping 1") == 1 &&
              log_suppressed_total() == before + 5,
          "log_flush_suppressed(true) (at exit) reports what is still held back");

    reset_out();
    for (int i = 0; i < LOG_RATE_SLOTS * 2; i++)
        log_err("distinct %d", i);
    CHECK(count_lines("distinct") == LOG_RATE_SLOTS * 2,
          "%d distinct messages all written (slots are reused)", LOG_RATE_SLOTS * 2);

    log_set_level(LOG_ERR);
    reset_out();
    log_warn("hidden");
    log_err("shown");
    CHECK(count_lines("hidden") == 0 && count_lines("shown") == 1, "log_level filters first");

    log_set_stream(NULL);
    fclose(out);
    free(out_buf);
    return tap_done();
}
