/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the <balancer> element (host/metadata.c): opt-in values, hostile input, rewriting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metadata.h"
#include "tap.h"

static topology *two_nodes(void)
{
    topology *t = calloc(1, sizeof(*t));
    char err[256];

    if (topo_load(TOPO_SOURCE_SYNTHETIC, "pack:2 numa:1 core:2 pu:1", NULL, t, err, sizeof(err)) <
        0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    return t;
}

static void test_valid(const topology *t)
{
    static const struct {
        const char *xml;
        vn_mode mode;
        uint64_t nodes;
        unsigned rate;
        int prio;
    } cases[] = {
        {"<balancer mode=\"auto\"/>", VN_MODE_AUTO, 0, 0, 0},
        {"<balancer mode='advise' nodes='1' rate='64' priority='-5'/>", VN_MODE_ADVISE, 2, 64, -5},
        {"<balancer mode=\"off\"/>", VN_MODE_OFF, 0, 0, 0},
        {"<balancer mode=\"auto\" nodes=\"0-1\" priority=\"100\"/>", VN_MODE_AUTO, 3, 0, 100},
        /* libvirt hands the element back with its namespace declared */
        {"<vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"auto\"/>", VN_MODE_AUTO, 0, 0,
         0},
        {"<balancer mode=\"auto\"><decision pass=\"3\" time=\"x\">{}</decision></balancer>",
         VN_MODE_AUTO, 0, 0, 0},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        vn_balancer b;
        meta_parse(cases[i].xml, t, &b, NULL);
        CHECK(b.valid && b.mode == cases[i].mode && b.allowed_nodes == cases[i].nodes &&
                  b.rate_mib == cases[i].rate && b.priority == cases[i].prio,
              "valid: %s (valid %d, error '%s')", cases[i].xml, b.valid, b.error);
    }
}

static void test_invalid(const topology *t)
{
    static const struct {
        const char *xml, *want;
    } cases[] = {
        {"<balancer mode=\"sometimes\"/>", "mode: expected auto, advise or off"},
        {"<balancer/>", "mode is missing"},
        {"<balancer mode=\"auto\" nodes=\"99\"/>", "host node 99 does not exist"},
        {"<balancer mode=\"auto\" nodes=\"x\"/>", "nodes: expected a list"},
        {"<balancer mode=\"auto\" nodes=\"\"/>", "nodes: expected a list"},
        {"<balancer mode=\"auto\" rate=\"-5\"/>", "rate: expected MiB/s"},
        {"<balancer mode=\"auto\" rate=\"99999999999999999999\"/>", "rate: expected MiB/s"},
        {"<balancer mode=\"auto\" rate=\"0\"/>", "rate: expected MiB/s"},
        {"<balancer mode=\"auto\" priority=\"1000\"/>", "priority: expected -100 to 100"},
        {"<balancer mode=\"auto\" priority=\"1.5\"/>", "priority: expected -100 to 100"},
        {"<balancer mode=\"auto\" colour=\"red\"/>", "unknown attribute 'colour'"},
        {"<balancer mode=\"auto\"", "not well-formed"},
        {"", "not well-formed"},
        {"<other mode=\"auto\"/>", "expected a <balancer> element"},
        {"<!DOCTYPE balancer [<!ENTITY m \"auto\">]><balancer mode=\"&m;\"/>", "DTD"},
        {"<!DOCTYPE b [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>"
         "<balancer mode=\"&b;\"/>",
         "DTD"},
        {"<!DOCTYPE balancer SYSTEM \"file:///etc/passwd\"><balancer mode=\"auto\"/>", "DTD"},
        {"<balancer mode=\"auto\x01\"/>", "not well-formed"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        vn_balancer b;
        meta_parse(cases[i].xml, t, &b, NULL);
        CHECK(!b.valid && b.mode == VN_MODE_OFF && strstr(b.error, cases[i].want),
              "invalid, never acted on: %.60s -> '%s'", cases[i].xml, b.error);
    }
    /* a huge element is refused without being parsed */
    size_t n = META_MAX_BYTES + 100;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, "<balancer mode=\"auto\">", 22);
    memcpy(big + n - 11, "</balancer>", 11);
    big[n] = '\0';
    vn_balancer b;
    meta_parse(big, t, &b, NULL);
    CHECK(!b.valid, "an element over %d bytes is refused", META_MAX_BYTES);
    free(big);
}

static void test_roundtrip(const topology *t)
{
    dom_originals o, back;
    vn_balancer b;
    char *out = NULL;
    int r;

    memset(&o, 0, sizeof(o));
    o.saved = true;
    o.nr_vcpus = 2;
    (void)cpuset_parse("1", &o.vcpu_pin[0]);
    (void)cpuset_parse("0", &o.vcpu_pin[1]);
    o.emulator_saved = true;
    (void)cpuset_parse("0-1", &o.emulator_pin);
    o.numa_saved = true;
    snprintf(o.nodeset, sizeof(o.nodeset), "0-1");
    o.nr_iothreads = 1;
    o.iothread_id[0] = 3;
    (void)cpuset_parse("1", &o.iothread_pin[0]);
    r = meta_format("<balancer mode=\"auto\" priority=\"7\"><decision pass=\"1\">old</decision>"
                    "</balancer>",
                    &o, 42, "2026-11-30T00:00:00Z", "{\"a\":\"<&>\"}", &out);
    CHECK(r == 0 && out, "format succeeds");
    if (!out)
        return;
    CHECK(strstr(out, "priority=\"7\"") && strstr(out, "mode=\"auto\""),
          "the operator's attributes are kept: %s", out);
    CHECK(!strstr(out, ">old<") && strstr(out, "pass=\"42\""), "the old decision is replaced");
    CHECK(strstr(out, "&lt;&amp;&gt;") != NULL, "the record's JSON is escaped in XML");
    meta_parse(out, t, &b, &back);
    CHECK(b.valid && b.priority == 7 && back.saved && back.nr_vcpus == 2 &&
              cpuset_equal(&back.vcpu_pin[0], &o.vcpu_pin[0]) &&
              cpuset_equal(&back.vcpu_pin[1], &o.vcpu_pin[1]) && back.emulator_saved &&
              back.numa_saved && strcmp(back.nodeset, "0-1") == 0 && back.nr_iothreads == 1 &&
              back.iothread_id[0] == 3 && cpuset_equal(&back.iothread_pin[0], &o.iothread_pin[0]),
          "the originals read back as written");
    free(out);
    out = NULL;
    memset(&o, 0, sizeof(o));
    r = meta_format("<balancer mode=\"auto\"><original><vcpupin vcpu=\"0\" cpuset=\"1\"/>"
                    "</original></balancer>",
                    &o, 1, "t", NULL, &out);
    CHECK(r == 0 && out && !strstr(out, "original"), "restored originals are removed: %s",
          out ? out : "(null)");
    free(out);
    CHECK(meta_format("<balancer", NULL, 1, "t", NULL, &out) == -EINVAL,
          "a broken element cannot be rewritten");
}

int main(void)
{
    topology *t = two_nodes();

    test_valid(t);
    test_invalid(t);
    test_roundtrip(t);
    free(t);
    return tap_done();
}
