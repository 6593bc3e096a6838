/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/metrics.c: label escaping of hostile domain names (quotes,
 * backslashes, newlines, non-ASCII, invalid UTF-8, control bytes), the
 * rendered exposition (families, histogram, counters by rule/reason/kind),
 * and the atomic file write. `test-metrics --write FILE` also writes the
 * rendered sample to FILE for tests/cli/metrics.sh, which checks it with a
 * real parser (python3-prometheus-client) and the format's grammar. Also: docs/operations.md's
 * metrics table is what metrics-doc generates, and every family and label value is in it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics-fixture.h"
#include "metrics.h"
#include "metrics_doc.h"
#include "model.h"
#include "tap.h"
#include "util.h"

static const char *const hostile[] = {
    "plain-name",
    "quote\"d",
    "back\\slash",
    "new\nline",
    "caf\xc3\xa9-\xe6\x95\xb0\xe6\x8d\xae-\xf0\x9f\x98\x80", /* café-数据-😀 */
    "bad\xff\xfeutf8\xc3",                                   /* invalid UTF-8 */
    "ctl\t\r\x01\x7f end",
    "} 1\nvnuma_evil 2 # \"", /* injection attempt */
    "overlong\xc0\xaf and surrogate \xed\xa0\x80",
};

/* Every byte string is valid UTF-8. */
static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        size_t n = *p < 0x80             ? 1
                   : (*p & 0xe0) == 0xc0 ? 2
                   : (*p & 0xf0) == 0xe0 ? 3
                   : (*p & 0xf8) == 0xf0 ? 4
                                         : 0;
        if (!n)
            return false;
        for (size_t i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80)
                return false;
        p += n;
    }
    return true;
}

/* A label value as the format allows it: no raw '"' or newline, '\' only before \ " n. */
static bool valid_label(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\n' || (unsigned char)*s < 0x20)
            return false;
        if (*s == '\\') {
            if (s[1] != '\\' && s[1] != '"' && s[1] != 'n')
                return false;
            s++;
        }
    }
    return true;
}

static unsigned count(const char *text, const char *needle)
{
    unsigned n = 0;

    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The generated metrics table: in docs/operations.md as generated (make metrics-doc), and
 * whole: a row per family, every label value the code names. */
static void test_doc(void)
{
    const char *path =
        getenv("VN_OPERATIONS_MD") ? getenv("VN_OPERATIONS_MD") : "docs/operations.md";
    _cleanup_free_ char *table = NULL, *doc = NULL, *want = NULL, *spliced = NULL;
    size_t table_len = 0, doc_len = 0;
    FILE *f = open_memstream(&table, &table_len);
    int r = f ? metrics_doc_table(f) : -ENOMEM;

    if (f)
        (void)fclose(f);
    if (!CHECK(r == 0 && table, "the table generates (%s)", r < 0 ? strerror(-r) : "ok"))
        return;
    CHECK(strstr(table, "| `vnuma_pass_duration_seconds` | histogram | | "),
          "a histogram's row has no le label");
    CHECK(strstr(table, "`state`: ok, invalid-config, error, paused, stopped."),
          "every state a domain's series can show is listed");
    CHECK(strstr(table, "`mode`: auto, advise, off."), "every mode is listed");
    CHECK(strstr(table, "| `vnuma_agent_hint_age_seconds` | gauge | domain, uuid | "),
          "a family written only for domains with hints has its row");
    CHECK(strstr(table, ", not-answering, job."), "the skip reasons are listed");
    f = fopen(path, "re");
    if (f) {
        if (getdelim(&doc, &doc_len, '\0', f) < 0) {
            free(doc);
            doc = NULL;
        }
        (void)fclose(f);
    }
    r = doc ? metrics_doc_splice(doc, table, &spliced) : -ENOENT;
    CHECK(r == 0 && !strcmp(spliced, doc),
          "%s's metrics table is what host/metrics.c generates (run `make metrics-doc`)", path);
    r = metrics_doc_splice("a\n" METRICS_DOC_BEGIN " old -->\n| x |\n" METRICS_DOC_END "\nb\n",
                           "T\n", &want);
    CHECK(r == 0 && !strcmp(want, "a\nT\nb\n"), "splice replaces the marked lines only");
    free(want);
    want = NULL;
    CHECK(metrics_doc_splice("no markers\n", "T\n", &want) == -ENOENT && !want,
          "splice refuses a document without the markers");
}

int main(int argc, char **argv)
{
    static const struct {
        const char *in, *want;
    } esc[] = {
        {"web1", "web1"},
        {"a\"b", "a\\\"b"},
        {"a\\b", "a\\\\b"},
        {"a\nb", "a\\nb"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"x\xffy", "x\xef\xbf\xbdy"},
        {"t\tr\r", "t\xef\xbf\xbdr\xef\xbf\xbd"},
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xe6\x95", "\xef\xbf\xbd\xef\xbf\xbd"}, /* truncated sequence */
    };
    const char *write_path = argc == 3 && strcmp(argv[1], "--write") == 0 ? argv[2] : NULL;
    size_t nr = sizeof(hostile) / sizeof(hostile[0]);
    dom_state *doms[16];
    metrics_host h = {0};
    topology *t = topo_new();
    char out[256], err[256], *text = NULL;
    char path[] = "/tmp/vnuma-test-metrics-XXXXXX";
    plan_cell cells[2] = {0};
    plan_domain pd = {.nr_cells = 2, .cells = cells};
    struct stat sb;
    int r;

    for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
        metrics_escape_label(esc[i].in, out, sizeof(out));
        CHECK(strcmp(out, esc[i].want) == 0, "escape case %zu", i);
    }
    metrics_escape_label("\"\"\"\"", out, 6);
    CHECK(strcmp(out, "\\\"\\\"") == 0, "truncation keeps whole escapes (%s)", out);
    metrics_escape_label("\xe6\x95\xb0\xe6\x95\xb0", out, 5);
    CHECK(strcmp(out, "\xe6\x95\xb0") == 0, "truncation keeps whole characters");
    for (size_t i = 0; i < nr; i++) {
        char big[2048];
        metrics_escape_label(hostile[i], big, sizeof(big));
        CHECK(valid_utf8(big) && valid_label(big), "hostile name %zu escapes to a valid label", i);
    }
    test_doc();

    if (!CHECK(t && topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, t, err,
                              sizeof(err)) == 0,
               "synthetic 2-node topology (%s)", err))
        return tap_done();
    for (size_t i = 0; i < nr; i++) {
        dom_state *st =
            fixture_metrics_dom(hostile[i], (unsigned)i, i % 2 ? VN_MODE_ADVISE : VN_MODE_AUTO);
        if (!st)
            abort();
        st->cfg.valid = i != 2;
        st->placement_auto = i == 3;
        st->count.bytes_moved = 4096 * i;
        st->count.pages_moved = i;
        if (i == 1) {
            st->guest.hints = calloc(1, sizeof(*st->guest.hints));
            st->guest.hints_at_s = 100;
            st->guest.stats.errors[PROTO_ERR_SYNTAX] = 3;
            st->guest.stats.dropped_entries = 2;
        }
        doms[i] = st;
    }
    h.connected = true;
    h.passes = 7;
    h.conflicts = CONFLICT_NUMAD;
    cells[0].reason = REASON_NONE;
    cells[0].rules = RULE_BIT(RULE_EARLY_MIGRATION) | RULE_BIT(RULE_LOCALITY);
    cells[1].reason = REASON_ALREADY_LOCAL;
    cells[1].rules = RULE_BIT(RULE_LOCALITY);
    metrics_count_plan(&h, &pd);
    metrics_count_action(&h, "acted");
    metrics_count_action(&h, "acted");
    metrics_count_action(&h, "bogus");
    h.skips[METRICS_SKIP_PAUSED] = 4;
    h.errors[METRICS_ERR_SAMPLE] = 1;
    metrics_observe(&h.pass_seconds, 0.003);
    metrics_observe(&h.pass_seconds, 0.2);
    metrics_observe(&h.pass_seconds, 100);

    r = metrics_render(&h, t, doms, nr, 112.5, &text);
    if (!CHECK(r == 0 && text, "render %zu hostile domains", nr))
        return tap_done();
    CHECK(valid_utf8(text), "the whole exposition is valid UTF-8");
    CHECK(text[strlen(text) - 1] == '\n', "ends with a newline");
    CHECK(count(text, "\nvnuma_evil") == 0, "a name cannot inject a sample line");
    CHECK(strstr(text, "vnuma_rule_decisions_total{rule=\"locality\"} 2\n") &&
              strstr(text, "vnuma_rule_decisions_total{rule=\"early-migration\"} 1\n") &&
              strstr(text, "vnuma_rule_decisions_total{rule=\"hot-first\"} 0\n"),
          "decisions counted per rule name, zeros included");
    CHECK(strstr(text, "vnuma_cell_decisions_total{reason=\"act\"} 1\n") &&
              strstr(text, "vnuma_cell_decisions_total{reason=\"already-local\"} 1\n"),
          "cell decisions by outcome");
    CHECK(strstr(text, "vnuma_decisions_total{action=\"acted\"} 2\n") != NULL,
          "decision records by action; unknown actions ignored");
    CHECK(strstr(text, "vnuma_domain_skips_total{reason=\"paused\"} 4\n") &&
              strstr(text, "vnuma_errors_total{kind=\"sample\"} 1\n") &&
              strstr(text, "vnuma_conflict{kind=\"numad\"} 1\n"),
          "skips by reason, errors by kind, conflicts");
    CHECK(strstr(text, "vnuma_pass_duration_seconds_bucket{le=\"0.01\"} 1\n") &&
              strstr(text, "vnuma_pass_duration_seconds_bucket{le=\"0.25\"} 2\n") &&
              strstr(text, "vnuma_pass_duration_seconds_bucket{le=\"30\"} 2\n") &&
              strstr(text, "vnuma_pass_duration_seconds_bucket{le=\"+Inf\"} 3\n") &&
              strstr(text, "vnuma_pass_duration_seconds_count 3\n"),
          "pass duration histogram is cumulative, +Inf = count");
    CHECK(strstr(text, "vnuma_domain_moved_bytes_total{domain=\"quote\\\"d\",uuid=\"00000000-"
                       "0000-0000-0000-000000000001\"} 4096\n") != NULL,
          "bytes moved per domain, quote escaped");
    CHECK(strstr(text, "vnuma_cell_locality_ratio{domain=\"new\\nline\",uuid=\"00000000-0000-"
                       "0000-0000-000000000003\",cell=\"1\"} 0.8750\n") != NULL,
          "cell locality as a ratio, newline escaped");
    CHECK(strstr(text, "vnuma_agent_hint_age_seconds{domain=\"quote\\\"d\",uuid=\"00000000-0000-"
                       "0000-0000-000000000001\"} 12.500\n") &&
              count(text, "vnuma_agent_hint_age_seconds{") == 1,
          "hint age only for the domain with a hint set");
    CHECK(strstr(text, ",kind=\"syntax\"} 3\n") && strstr(text, ",kind=\"out-of-bounds\"} 2\n"),
          "agent errors by kind");
    CHECK(strstr(text, "vnuma_cell_memory_bytes{domain=\"plain-name\",uuid=\"00000000-0000-0000-"
                       "0000-000000000000\",cell=\"0\",node=\"0\"} 1048576\n") != NULL,
          "memory per cell and host node");
    CHECK(strstr(text, "state=\"invalid-config\"") && strstr(text, "vnuma_domain_placement_auto"),
          "domain info carries mode and state; placement='auto' flagged");
    {
        /* every metric family appears once, HELP then TYPE, samples contiguous */
        unsigned helps = count(text, "# HELP "), types = count(text, "# TYPE ");
        CHECK(helps == types && helps >= 25, "%u families with HELP and TYPE", helps);
    }

    CHECK(mkstemp(path) >= 0, "temp file");
    {
        mode_t old = umask(077);
        r = metrics_write_file(path, text);
        umask(old);
    }
    CHECK(r == 0 && stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644 &&
              (size_t)sb.st_size == strlen(text),
          "metrics_write_file: whole text, mode 0644 under umask 077 (%d)", r);
    {
        char tmp[sizeof(path) + 8];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        CHECK(access(tmp, F_OK) < 0, "no temporary file left behind");
    }
    {
        /* umask 000: the code, not the umask, keeps it from being world-writable */
        mode_t old = umask(0);
        r = metrics_write_file(path, text);
        umask(old);
        CHECK(r == 0 && stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644,
              "mode 0644 under umask 000 too (mode %o)", (unsigned)(sb.st_mode & 0777));
    }
    {
        /* something planted at PATH.tmp: a symlink and a hard link to a victim file */
        char tmp[sizeof(path) + 8], victim[sizeof(path) + 8];
        FILE *f;
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        snprintf(victim, sizeof(victim), "%s.vic", path);
        f = fopen(victim, "w");
        fputs("precious\n", f);
        fclose(f);
        CHECK(symlink(victim, tmp) == 0 && metrics_write_file(path, text) == 0 &&
                  stat(victim, &sb) == 0 && sb.st_size == 9 && access(tmp, F_OK) < 0,
              "a symlink at PATH.tmp is replaced, its target left alone");
        CHECK(link(victim, tmp) == 0 && metrics_write_file(path, text) == 0 &&
                  stat(victim, &sb) == 0 && sb.st_size == 9 && sb.st_nlink == 1,
              "a hard link at PATH.tmp is replaced, the linked file left alone");
        (void)unlink(victim);
    }
    (void)unlink(path);
    CHECK(metrics_write_file("/nonexistent-dir/x.prom", text) == -ENOENT,
          "a missing directory is -ENOENT");
    if (write_path)
        CHECK(metrics_write_file(write_path, text) == 0, "sample written to %s", write_path);

    free(text);
    for (size_t i = 0; i < nr; i++) {
        free(doms[i]->guest.hints);
        free(doms[i]);
    }
    topo_free(t);
    return tap_done();
}
