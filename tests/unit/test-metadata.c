/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the <balancer> element (host/metadata.c): opt-in values, hostile input, rewriting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "metadata.h"
#include "tap.h"
#include "util.h"

static topology *two_nodes(void)
{
    topology *t = topo_new();
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
        bool rt_move;
        vn_tier tier;
    } cases[] = {
        {"<balancer mode=\"auto\"/>", VN_MODE_AUTO, 0, 0, 0, false, VN_TIER_AUTO},
        {"<balancer mode='auto' tier='off'/>", VN_MODE_AUTO, 0, 0, 0, false, VN_TIER_OFF},
        {"<balancer mode='auto' tier='cold-first'/>", VN_MODE_AUTO, 0, 0, 0, false,
         VN_TIER_COLD_FIRST},
        {"<balancer mode='advise' tier='auto'/>", VN_MODE_ADVISE, 0, 0, 0, false, VN_TIER_AUTO},
        {"<balancer mode='auto' realtime='move'/>", VN_MODE_AUTO, 0, 0, 0, true, VN_TIER_AUTO},
        {"<balancer mode='auto' realtime='keep'/>", VN_MODE_AUTO, 0, 0, 0, false, VN_TIER_AUTO},
        {"<balancer mode='advise' nodes='1' rate='64' priority='-5'/>", VN_MODE_ADVISE, 2, 64, -5,
         false, VN_TIER_AUTO},
        {"<balancer mode=\"off\"/>", VN_MODE_OFF, 0, 0, 0, false, VN_TIER_AUTO},
        {"<balancer mode=\"auto\" nodes=\"0-1\" priority=\"100\"/>", VN_MODE_AUTO, 3, 0, 100, false,
         VN_TIER_AUTO},
        /* libvirt hands the element back with its namespace declared */
        {"<vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"auto\"/>", VN_MODE_AUTO, 0, 0,
         0, false, VN_TIER_AUTO},
        {"<balancer mode=\"auto\"><decision pass=\"3\" time=\"x\">{}</decision></balancer>",
         VN_MODE_AUTO, 0, 0, 0, false, VN_TIER_AUTO},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        vn_balancer b;
        meta_parse(cases[i].xml, t, &b, NULL);
        CHECK(b.valid && b.mode == cases[i].mode &&
                  nodeset_is_u64(&b.allowed_nodes, cases[i].nodes) && b.rate_mib == cases[i].rate &&
                  b.priority == cases[i].prio && b.move_realtime == cases[i].rt_move &&
                  b.tier == cases[i].tier,
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
        {"<balancer mode='auto' realtime='yes'/>", "realtime: expected keep or move"},
        {"<balancer mode='auto' tier='cold'/>", "tier: expected auto, off or cold-first"},
        {"<balancer mode='auto' tier='OFF'/>", "tier: expected auto, off or cold-first"},
        {"<balancer mode='auto' tier='off' tier='auto'/>", "not well-formed"},
        {"<balancer mode='auto' realtime='move' realtime='keep'/>", "not well-formed"},
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

/* The case, printable (the TAP output stays text). */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t i = 0;

    for (; *s && i + 5 < len; s++)
        i += (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f
                 ? (size_t)snprintf(buf + i, len - i, "%c", *s)
                 : (size_t)snprintf(buf + i, len - i, "\\x%02x", (unsigned char)*s);
    buf[i] = '\0';
    return buf;
}

/* Hostile or broken elements: never a crash, never acted on (valid=false, mode off), and the
 * reason, printable ASCII, says why. `want` NULL: the element is valid (the case says why). */
static void test_hostile(const topology *t)
{
    static const struct {
        const char *xml, *want;
    } cases[] = {
        /* numbers: overflow, sign, other notations, floats */
        {"<balancer mode='auto' rate='2147483648'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='9223372036854775808'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='-9223372036854775809'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='1048577'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='+64'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='0x40'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='64.0'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='6.4e1'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='NaN'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='inf'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='-inf'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate=''/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate=' 64'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='64 '/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='6 4'/>", "rate: expected MiB/s"},
        {"<balancer mode='auto' rate='&#x663;'/>", "rate: expected MiB/s"}, /* Arabic-Indic 3 */
        {"<balancer mode='auto' priority='-'/>", "priority: expected -100 to 100"},
        {"<balancer mode='auto' priority='--1'/>", "priority: expected -100 to 100"},
        {"<balancer mode='auto' priority='-101'/>", "priority: expected -100 to 100"},
        {"<balancer mode='auto' priority='1e2'/>", "priority: expected -100 to 100"},
        {"<balancer mode='auto' priority='nan'/>", "priority: expected -100 to 100"},
        {"<balancer mode='auto' priority='true'/>", "priority: expected -100 to 100"},
        {"<balancer mode='auto' nodes='99999999999999999999'/>", "nodes: expected a list"},
        {"<balancer mode='auto' nodes='0-2147483647'/>", "nodes: expected a list"},
        {"<balancer mode='auto' nodes='-1'/>", "nodes: expected a list"},
        {"<balancer mode='auto' nodes='1-0'/>", "nodes: expected a list"},
        {"<balancer mode='auto' nodes='0,,1'/>", "nodes: expected a list"},
        {"<balancer mode='auto' nodes=' 0'/>", "nodes: expected a list"},
        {"<balancer mode='auto' nodes='0-1023'/>", "host node 2 does not exist"},
        /* wrong types, case, whitespace, empty */
        {"<balancer mode=''/>", "mode: expected auto, advise or off, got ''"},
        {"<balancer mode='AUTO'/>", "got 'AUTO'"},
        {"<balancer mode=' auto'/>", "got ' auto'"},
        {"<balancer mode='auto '/>", "got 'auto '"},
        {"<balancer mode='auto&#10;'/>", "got 'auto?'"}, /* a newline never reaches the reason */
        {"<balancer mode='&#9;auto'/>", "got '?auto'"},
        {"<balancer mode='1'/>", "mode: expected auto, advise or off"},
        {"<balancer mode='auto,off'/>", "mode: expected auto, advise or off"},
        {"<balancer mode='vm-&#xe9;-&#x540d;'/>", "got 'vm-?"
                                                  "?-?"
                                                  "?"
                                                  "?'"}, /* UTF-8 shown as '?' */
        /* unknown and duplicated attributes, several elements, namespaces */
        {"<balancer mode='auto' Mode='off'/>", "unknown attribute 'Mode'"},
        {"<balancer mode='auto' xml:lang='en'/>", "unknown attribute 'lang'"},
        {"<balancer xmlns:e='urn:evil' mode='auto' e:rate='1'/>", "unknown attribute 'rate'"},
        {"<balancer mode='auto' mode='off'/>", "not well-formed"},
        {"<balancer xmlns:v='urn:vnuma:balancer:1' mode='auto' v:mode='off'/>",
         "duplicate attribute 'mode'"},
        {"<balancer mode='auto'/><balancer mode='off'/>", "not well-formed"},
        {"<balancer mode='auto'><balancer mode='off'/></balancer>", "unknown element <balancer>"},
        {"<balancer mode='auto'><nodes>0</nodes></balancer>", "unknown element <nodes>"},
        {"<balancer mode='auto'><original/><original/></balancer>", "more than one <original>"},
        {"<balancer xmlns:xi='http://www.w3.org/2001/XInclude' mode='auto'>"
         "<xi:include href='/etc/shadow' parse='text'/></balancer>",
         "unknown element <include>"},
        {"<e:balancer xmlns:e='urn:evil' mode='auto'/>", "expected a <balancer> element"},
        {"<balancer xmlns='urn:vnuma:balancer:0' mode='auto'/>", "expected a <balancer> element"},
        {"<Balancer mode='auto'/>", "expected a <balancer> element"},
        /* entity tricks: internal entities, billion laughs, XXE, parameter entities, DTDs */
        {"<balancer mode='&x;'/>", "not well-formed"},
        {"<balancer mode='auto'>&x;</balancer>", "not well-formed"},
        {"<!DOCTYPE b [<!ENTITY a 'auto'>]><balancer mode='auto'>&a;</balancer>", "DTD"},
        {"<!DOCTYPE b [<!ENTITY x SYSTEM 'file:///etc/shadow'>]><balancer mode='&x;'/>", "DTD"},
        {"<!DOCTYPE b [<!ENTITY x SYSTEM 'file:///etc/shadow'>]><balancer mode='auto'>&x;"
         "</balancer>",
         "DTD"},
        {"<!DOCTYPE b [<!ENTITY % p SYSTEM 'file:///etc/shadow'> %p;]><balancer mode='auto'/>",
         "DTD"},
        {"<!DOCTYPE b [<!ENTITY x SYSTEM 'http://127.0.0.1:9/x'>]><balancer mode='&x;'/>", "DTD"},
        {"<!DOCTYPE b PUBLIC '-//x//EN' 'http://127.0.0.1:9/x.dtd'><balancer mode='auto'/>", "DTD"},
        {"<!DOCTYPE b [<!ATTLIST balancer mode CDATA 'auto'>]><balancer/>", "DTD"},
        {"<!DOCTYPE b [<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>"
         "<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'><!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>"
         "<!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'><!ENTITY f '&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;'>"
         "<!ENTITY g '&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;'><!ENTITY h '&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;'>"
         "<!ENTITY i '&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;'>]><balancer mode='&i;'>&i;</balancer>",
         "DTD"},
        /* not UTF-8, control characters */
        {"<balancer mode='auto' x='\xff\xfe'/>", "not well-formed"},
        {"<balancer mode='\xe9'/>", "not well-formed"},
        {"<?xml version='1.0' encoding='ISO-8859-1'?><balancer mode='\xe9'/>", "not well-formed"},
        {"<balancer mode='auto\x1b[31m'/>", "not well-formed"},
        {"<balancer mode='&#27;'/>", "not well-formed"},
        {"<balancer mode='&#0;'/>", "not well-formed"},
    };
    static const char *const fine[] = {
        /* comments, CDATA, text and processing instructions carry nothing: ignored */
        "<!-- x --><balancer mode='auto'><!-- y --><![CDATA[<original/>]]>text</balancer><!--z-->",
        "<?pi x?><balancer mode='auto'/>",
        "<?xml version='1.0'?><balancer mode='auto'/>",
        "<?xml version='1.0' encoding='ISO-8859-1'?><balancer mode='auto'/>",
        "\xef\xbb\xbf<balancer mode='auto'/>", /* a UTF-8 byte-order mark */
        "<balancer mode='&#x61;uto'/>",        /* a character reference is plain XML */
        "<balancer\n\tmode = 'auto'\n/>",
        "<vnuma:balancer xmlns:vnuma='urn:vnuma:balancer:1' vnuma:mode='auto'/>",
        "<balancer xmlns='urn:vnuma:balancer:1' mode='auto'><decision/><decision/></balancer>",
        "<balancer xmlns:o='urn:other' mode='auto'/>", /* a declaration is not an attribute */
    };
    for (unsigned i = 0; i < VN_ARRAY_SIZE(cases); i++) {
        vn_balancer b;
        dom_originals o;
        bool printable = true;
        char buf[96];
        memset(&b, 0xA5, sizeof(b));
        meta_parse(cases[i].xml, t, &b, &o);
        for (const char *p = b.error; *p; p++)
            printable = printable && *p >= 0x20 && *p < 0x7f;
        CHECK(!b.valid && b.mode == VN_MODE_OFF && strstr(b.error, cases[i].want) && printable,
              "hostile %u, left alone: %.70s -> '%s'", i, shown(cases[i].xml, buf, sizeof(buf)),
              b.error);
    }
    for (unsigned i = 0; i < VN_ARRAY_SIZE(fine); i++) {
        vn_balancer b;
        char buf[96];
        meta_parse(fine[i], t, &b, NULL);
        CHECK(b.valid && b.mode == VN_MODE_AUTO, "still valid: %.70s ('%s')",
              shown(fine[i], buf, sizeof(buf)), b.error);
    }
}

/* Sizes: long values, deep nesting and many attributes are refused quickly, without a crash. */
static void test_sizes(const topology *t)
{
    size_t n = META_MAX_BYTES - 64;
    char *big = malloc(n + 64);
    struct rusage ru0, ru1;
    vn_balancer b;
    size_t at;

    /* a huge attribute value: its reason shows a short prefix */
    at = (size_t)sprintf(big, "<balancer mode='");
    memset(big + at, 'a', n - at);
    strcpy(big + n, "'/>");
    meta_parse(big, t, &b, NULL);
    CHECK(!b.valid && strstr(b.error, "got 'aaaa") && strlen(b.error) < 128,
          "a %zu-byte mode value is refused with a short reason ('%.80s')", n, b.error);
    /* deep nesting inside the element: libxml2's depth limit, not the stack */
    at = (size_t)sprintf(big, "<balancer mode='auto'>");
    for (unsigned d = 0; d < 10000; d++)
        at += (size_t)sprintf(big + at, "<a>");
    for (unsigned d = 0; d < 10000; d++)
        at += (size_t)sprintf(big + at, "</a>");
    strcpy(big + at, "</balancer>");
    meta_parse(big, t, &b, NULL);
    CHECK(!b.valid && b.mode == VN_MODE_OFF, "10000 nested elements: refused ('%s')", b.error);
    /* many attributes */
    at = (size_t)sprintf(big, "<balancer mode='auto'");
    for (unsigned k = 0; at < n - 64; k++)
        at += (size_t)sprintf(big + at, " a%u='x'", k);
    strcpy(big + at, "/>");
    meta_parse(big, t, &b, NULL);
    CHECK(!b.valid && strstr(b.error, "unknown attribute 'a0'"), "thousands of attributes: '%s'",
          b.error);
    free(big);

    /* the billion laughs: refused without expanding. Expanded, each would be 10^9 bytes: the
     * process's peak resident memory must not grow by anything near it (how fast it is
     * refused is not checked: under valgrind on a loaded machine 100 parses took over 2 s) */
    getrusage(RUSAGE_SELF, &ru0);
    for (int k = 0; k < 100; k++)
        meta_parse("<!DOCTYPE b [<!ENTITY a 'aaaaaaaaaa'>"
                   "<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>"
                   "<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>"
                   "<!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>"
                   "<!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'>"
                   "<!ENTITY f '&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;'>"
                   "<!ENTITY g '&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;'>"
                   "<!ENTITY h '&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;'>"
                   "<!ENTITY i '&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;'>]>"
                   "<balancer mode='&i;'>&i;&i;&i;&i;&i;&i;&i;&i;&i;&i;</balancer>",
                   t, &b, NULL);
    getrusage(RUSAGE_SELF, &ru1);
    CHECK(!b.valid && ru1.ru_maxrss - ru0.ru_maxrss < 64 * 1024,
          "100 billion-laughs elements refused, peak memory %ld KiB more (< 64 MiB) ('%s')",
          ru1.ru_maxrss - ru0.ru_maxrss, b.error);
}

/* <original> as vnumad reads it back: out-of-range or oversized values are not restored. */
static void test_hostile_original(const topology *t)
{
    static const char *const xml[] = {
        "<balancer mode='auto'><original><vcpupin vcpu='1024' cpuset='0'/>"
        "<vcpupin vcpu='-1' cpuset='0'/><vcpupin vcpu='99999999999999999999' cpuset='0'/>"
        "<vcpupin vcpu='0' cpuset='99999999999999999999'/><emulatorpin cpuset=''/>"
        "<iothreadpin iothread='0' cpuset='0'/><memfd cell='64'/><memfd cell='-1'/>"
        "<numatune nodeset='0-2147483647'/></original></balancer>",
    };
    char longset[600];
    char doc[800];
    size_t at = 0;
    vn_balancer b;
    dom_originals o;

    meta_parse(xml[0], t, &b, &o);
    CHECK(b.valid && !o.saved && o.nr_vcpus == 0 && !o.emulator_saved && o.nr_iothreads == 0 &&
              o.memfd_cells == 0 && !o.numa_saved,
          "out-of-range <original> entries are all ignored");
    for (unsigned k = 0; at < sizeof(longset) - 8 && k < 1024; k += 2)
        at += (size_t)snprintf(longset + at, sizeof(longset) - at, "%s%u", k ? "," : "", k);
    snprintf(doc, sizeof(doc),
             "<balancer mode='auto'><original><numatune nodeset='%s'/>"
             "</original></balancer>",
             longset);
    meta_parse(doc, t, &b, &o);
    CHECK(b.valid && !o.numa_saved, "a %zu-byte nodeset is not cut to fit and restored wrong",
          strlen(longset));
}

static void test_roundtrip(const topology *t)
{
    static dom_originals o, back; /* 1 MiB each: off the stack */
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
    /* a shared backend the operator bound to node 1 with static nodes, one with no policy */
    o.memfd_cells = (1ULL << 3) | (1ULL << 5);
    o.memfd_policy[3].mode = 2 /* MPOL_BIND */ | (1 << 15) /* MPOL_F_STATIC_NODES */;
    (void)cpuset_parse("1", &o.memfd_policy[3].nodes);
    r = meta_format_state(&o, NULL, 42, "2026-11-30T00:00:00Z", "{\"a\":\"<&>\"}", &out);
    CHECK(r == 0 && out, "format succeeds");
    if (!out)
        return;
    CHECK(strncmp(out, "<state>", 7) == 0 && !strstr(out, "balancer") && !strstr(out, "mode="),
          "vnumad's own <state> element, nothing of the operator's: %s", out);
    CHECK(strstr(out, "pass=\"42\"") != NULL, "the decision carries its pass");
    CHECK(strstr(out, "&lt;&amp;&gt;") != NULL, "the record's JSON is escaped in XML");
    CHECK(meta_parse_state(out, &back) == 0 && back.saved && back.nr_vcpus == 2 &&
              cpuset_equal(&back.vcpu_pin[0], &o.vcpu_pin[0]) &&
              cpuset_equal(&back.vcpu_pin[1], &o.vcpu_pin[1]) && back.emulator_saved &&
              back.numa_saved && strcmp(back.nodeset, "0-1") == 0 && back.nr_iothreads == 1 &&
              back.iothread_id[0] == 3 && cpuset_equal(&back.iothread_pin[0], &o.iothread_pin[0]),
          "the originals read back as written");
    CHECK(strstr(out, "<memfd cell=\"3\" policy=\"bind\" nodes=\"1\" flags=\"0x8000\"/>") &&
              strstr(out, "<memfd cell=\"5\" policy=\"default\"/>") &&
              back.memfd_cells == o.memfd_cells &&
              back.memfd_policy[3].mode == o.memfd_policy[3].mode &&
              cpuset_equal(&back.memfd_policy[3].nodes, &o.memfd_policy[3].nodes) &&
              back.memfd_policy[5].mode == 0 && cpuset_empty(&back.memfd_policy[5].nodes),
          "a shared backend's own policy (bind to 1, static nodes; default) reads back exactly");
    CHECK(meta_parse_state("<state><original><memfd cell=\"2\" policy=\"bogus\"/><memfd "
                           "cell=\"4\" policy=\"preferred\" nodes=\"0\" flags=\"0x1\"/>"
                           "</original></state>",
                           &back) == 0 &&
              back.memfd_cells == ((1ULL << 2) | (1ULL << 4)) && back.memfd_policy[2].mode == 0 &&
              back.memfd_policy[4].mode == 0,
          "a policy vnumad cannot read back (unknown name, unknown flags) restores the default");
    free(out);
    out = NULL;
    memset(&o, 0, sizeof(o));
    r = meta_format_state(&o, NULL, 1, "t", NULL, &out);
    CHECK(r == 0 && out && !strstr(out, "original"), "restored originals are removed: %s",
          out ? out : "(null)");
    CHECK(out && meta_parse_state(out, &back) == 0 && !back.saved,
          "a state without <original> has nothing to restore");
    free(out);
    CHECK(meta_parse_state("<state", &back) == -EINVAL && !back.saved,
          "a broken state element gives nothing to restore");
    CHECK(meta_parse_state("<balancer mode=\"auto\"><original><vcpupin vcpu=\"0\" cpuset=\"1\"/>"
                           "</original></balancer>",
                           &back) == -EINVAL &&
              !back.saved,
          "the operator's element is not vnumad's state");
    meta_parse("<balancer mode=\"auto\" priority=\"7\"><original><vcpupin vcpu=\"0\" "
               "cpuset=\"1\"/></original><decision pass=\"1\">old</decision></balancer>",
               t, &b, &back);
    CHECK(b.valid && b.priority == 7 && back.saved && back.nr_vcpus == 1,
          "vnumad 0.1.0's <original> and <decision> inside <balancer> are still read");
}

#define HOST_A "3d1219c7c4c5404aaa1f6d2a48adfda4"     /* a machine id */
#define HOST_B "2f1a9d3e-7b6c-4e55-9a0d-1c2b3a4d5e6f" /* a UUID would do too */

/* <original host=...>: written, read back, and told apart (issue 13, live migration). */
static void test_original_host(void)
{
    static dom_originals o, back;
    static const struct {
        const char *xml;
        const char *host; /* what is read back */
        bool foreign;     /* seen from HOST_A */
    } cases[] = {
        {"<state><original host=\"" HOST_A "\"><vcpupin vcpu=\"0\" cpuset=\"1\"/></original>"
         "</state>",
         HOST_A, false},
        {"<state><original host=\"" HOST_B "\"><vcpupin vcpu=\"0\" cpuset=\"1\"/></original>"
         "</state>",
         HOST_B, true},
        /* an older vnumad wrote no host: the originals are this host's */
        {"<state><original><vcpupin vcpu=\"0\" cpuset=\"1\"/></original></state>", "", false},
        /* a host vnumad cannot have written is no host: another one */
        {"<state><original host=\"x&lt;y\"><vcpupin vcpu=\"0\" cpuset=\"1\"/></original>"
         "</state>",
         "?", true},
        {"<state><original host=\"\"><vcpupin vcpu=\"0\" cpuset=\"1\"/></original></state>", "?",
         true},
        {"<state><original host=\"" HOST_A HOST_B "\"><vcpupin vcpu=\"0\" cpuset=\"1\"/>"
         "</original></state>",
         "?", true},
    };
    char *out = NULL;

    for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
        int r = meta_parse_state(cases[i].xml, &back);
        CHECK(r == 0 && back.saved && strcmp(back.host, cases[i].host) == 0 &&
                  meta_originals_foreign(&back, HOST_A) == cases[i].foreign,
              "case %zu: host '%s' read back, %s", i, back.host,
              cases[i].foreign ? "another host's" : "this host's");
    }
    CHECK(!meta_originals_foreign(&back, "") && !meta_originals_foreign(&back, NULL),
          "while this host's UUID is unknown no originals are another host's");
    memset(&back, 0, sizeof(back));
    snprintf(back.host, sizeof(back.host), "%s", HOST_B);
    CHECK(!meta_originals_foreign(&back, HOST_A), "no originals saved: nothing foreign");

    memset(&o, 0, sizeof(o));
    o.saved = true;
    o.nr_vcpus = 1;
    (void)cpuset_parse("3", &o.vcpu_pin[0]);
    snprintf(o.host, sizeof(o.host), "%s", HOST_A);
    CHECK(meta_format_state(&o, NULL, 1, "t", NULL, &out) == 0 && out &&
              strstr(out, "<original host=\"" HOST_A "\">") && meta_parse_state(out, &back) == 0 &&
              strcmp(back.host, HOST_A) == 0,
          "the host is written on <original> and reads back: %s", out ? out : "(null)");
    free(out);
    out = NULL;
    o.host[0] = '\0';
    CHECK(meta_format_state(&o, NULL, 1, "t", NULL, &out) == 0 && out && !strstr(out, "host="),
          "unknown host: no attribute (read as this host's)");
    free(out);
}

/* The originals of a domain that arrived: this host's definition of it, never its live pins. */
static void test_defined_originals(void)
{
    static dom_originals o;
    static const char persistent[] =
        "<domain type='kvm'><name>d</name><vcpu placement='static' cpuset='0-5'>4</vcpu>"
        "<cputune><vcpupin vcpu='0' cpuset='2'/><vcpupin vcpu='2' cpuset='3-4'/>"
        "<vcpupin vcpu='2' cpuset='7'/><vcpupin vcpu='9' cpuset='1'/>"
        "<emulatorpin cpuset='5'/></cputune>"
        "<numatune><memory mode='restrictive' nodeset='0-1'/></numatune></domain>";
    vn_cpuset host, def, want;

    (void)cpuset_parse("0-7", &host);
    CHECK(meta_defined_originals(persistent, true, &host, 4, &o, &def) == 0 && o.saved &&
              o.nr_vcpus == 4 && !o.emulator_saved && o.host[0] == '\0',
          "a persistent definition gives originals for the live vCPUs");
    (void)cpuset_parse("2", &want);
    CHECK(cpuset_equal(&o.vcpu_pin[0], &want), "vCPU 0: its <vcpupin>");
    (void)cpuset_parse("3-4", &want);
    CHECK(cpuset_equal(&o.vcpu_pin[2], &want), "vCPU 2: its first <vcpupin> (libvirt's)");
    (void)cpuset_parse("0-5", &want);
    CHECK(cpuset_equal(&o.vcpu_pin[1], &want) && cpuset_equal(&o.vcpu_pin[3], &want) &&
              cpuset_equal(&def, &want),
          "vCPUs without a pin, and unpinned threads: the <vcpu cpuset>");
    CHECK(cpuset_empty(&o.vcpu_pin[9]), "a pin of a vCPU the domain does not run is ignored");
    CHECK(o.numa_saved && strcmp(o.nodeset, "0-1") == 0, "the restrictive nodeset: %s", o.nodeset);

    CHECK(meta_defined_originals(persistent, false, &host, 4, &o, &def) == 0 &&
              cpuset_equal(&o.vcpu_pin[0], &want) && cpuset_equal(&o.vcpu_pin[2], &want) &&
              !o.numa_saved,
          "transient (the XML is the other host's): unpinned within the <vcpu cpuset>, no nodeset");

    CHECK(meta_defined_originals("<domain><vcpu>2</vcpu><numatune><memory mode='strict' "
                                 "nodeset='1'/></numatune></domain>",
                                 true, &host, 2, &o, &def) == 0 &&
              cpuset_equal(&o.vcpu_pin[0], &host) && cpuset_equal(&o.vcpu_pin[1], &host) &&
              cpuset_equal(&def, &host) && !o.numa_saved,
          "no pins, no cpuset: every host CPU; a strict nodeset is the operator's, not saved");
    CHECK(meta_defined_originals("<state/>", true, &host, 2, &o, &def) == -EINVAL &&
              meta_defined_originals("<domain", true, &host, 2, &o, &def) == -EINVAL,
          "not a domain XML: refused");
    CHECK(meta_defined_originals("<domain><cputune><vcpupin vcpu='0' cpuset='bogus'/>"
                                 "<vcpupin vcpu='-1' cpuset='1'/></cputune></domain>",
                                 true, &host, 1, &o, &def) == 0 &&
              cpuset_equal(&o.vcpu_pin[0], &host),
          "a pin libvirt would not have taken leaves the vCPU unpinned");
}

/* nodes='...' past 64 on a host of 1024 nodes: the indexes are kept, not cut at 64 */
static void test_many_nodes(void)
{
    topology *t = topo_new();
    vn_balancer b;
    char err[256];

    if (!t || topo_load(TOPO_SOURCE_SYNTHETIC, "pack:32 numa:32 core:1 pu:1", NULL, t, err,
                        sizeof(err)) < 0) {
        CHECK(false, "1024-node topology (%s)", err);
        topo_free(t);
        return;
    }
    meta_parse("<balancer mode='auto' nodes='63-64,700,1023'/>", t, &b, NULL);
    CHECK(b.valid && nodeset_weight(&b.allowed_nodes) == 4 && nodeset_isset(&b.allowed_nodes, 63) &&
              nodeset_isset(&b.allowed_nodes, 64) && nodeset_isset(&b.allowed_nodes, 700) &&
              nodeset_isset(&b.allowed_nodes, 1023),
          "nodes='63-64,700,1023' of 1024 nodes: four node indexes (valid %d, %u nodes, '%s')",
          b.valid, nodeset_weight(&b.allowed_nodes), b.error);
    meta_parse("<balancer mode='auto' nodes='1024'/>", t, &b, NULL);
    CHECK(!b.valid && strstr(b.error, "host node 1024 does not exist"),
          "nodes='1024': no such node ('%s')", b.error);
    topo_free(t);
}

/* The qemu hook's <placed> in vnumad's <state>: written, read back, and refused when off. */
static void test_placed(void)
{
    dom_placed p = {.valid = true, .nr = 2}, q;
    char *out = NULL;
    static const char *const broken[] = {
        "<state><placed host='not-hex!'><cell id='0' node='1' memory='1'/></placed></state>",
        "<state><placed host='ab'><cell id='0' node='99999' memory='1'/></placed></state>",
        "<state><placed host='ab'><cell id='0' node='1' memory='1'/>"
        "<cell id='0' node='2' memory='1'/></placed></state>",
        "<state><placed host='ab'><cell id='0' node='1' memory='2'/></placed></state>",
        "<state><placed host='ab'><cell id='-1' node='1' memory='1'/></placed></state>",
        "<state><placed host='ab'><other/></placed></state>",
        "<state><placed><cell id='0' node='1' memory='1'/></placed></state>",
    };

    snprintf(p.host, sizeof(p.host), "5e1f0c2a9d8b4c7e8f6a5b4c3d2e1f0a");
    p.cells[0].cell = 0;
    p.cells[0].node = 3;
    p.cells[0].memory = true;
    p.cells[1].cell = 1;
    p.cells[1].node = 2;
    CHECK(meta_format_state(NULL, &p, 1, "t", NULL, &out) == 0 && out &&
              meta_parse_placed(out, &q) == 0 && q.valid && q.nr == 2 && !strcmp(q.host, p.host) &&
              q.cells[0].node == 3 && q.cells[0].memory && q.cells[1].cell == 1 &&
              q.cells[1].node == 2 && !q.cells[1].memory,
          "<placed> written and read back: %s", out ? out : "(none)");
    free(out);
    out = NULL;
    CHECK(meta_format_state(NULL, NULL, 1, "t", NULL, &out) == 0 && out && !strstr(out, "placed") &&
              meta_parse_placed(out, &q) == 0 && !q.valid,
          "no <placed> without a placement");
    free(out);
    for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
        CHECK(meta_parse_placed(broken[i], &q) == 0 && !q.valid, "a broken <placed> gives none: %s",
              broken[i]);
    CHECK(meta_parse_placed("<balancer/>", &q) == -EINVAL && !q.valid, "not a <state>: -EINVAL");
}

int main(void)
{
    topology *t = two_nodes();

    test_valid(t);
    test_invalid(t);
    test_hostile(t);
    test_sizes(t);
    test_hostile_original(t);
    test_roundtrip(t);
    test_original_host();
    test_defined_originals();
    test_many_nodes();
    test_placed();
    topo_free(t);
    return tap_done();
}
