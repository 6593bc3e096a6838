/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the host policy (host/hostpolicy.c, host/hostpolicy_match.c): the rules files
 * (strict, FILE:LINE errors, name order), the facts read from a domain's XML (Nova's block as
 * Nova writes it, KubeVirt's, the dedicated shape) and the first rule that matches, with
 * forged and broken XML and huge names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "hostpolicy.h"
#include "hostpolicy_match.h"
#include "tap.h"

static char dir[] = "/tmp/vnuma-test-hostpolicy-XXXXXX";

static void write_file(const char *name, const char *text, mode_t mode)
{
    char p[512];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    chmod(p, mode);
}

static void clear_dir(void)
{
    static const char *const names[] = {"10-a.rules",    "20-b.rules", "05-c.rules",
                                        ".hidden.rules", "x.rules~",   "README"};
    char p[512];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        unlink(p);
    }
}

#define NOVA_NS "http://openstack.org/xmlns/libvirt/nova/1.1"

/* A domain as Nova defines it (nova/virt/libvirt/config.py LibvirtConfigGuestMetaNova*). */
static char *nova_xml(const char *name, const char *flavor, const char *project_uuid,
                      const char *project, const char *image)
{
    char *x = NULL;

    if (asprintf(&x,
                 "<domain type='kvm'><name>%s</name><uuid>1b4e28ba-2fa1-11d2-883f-0016d3cca427"
                 "</uuid><metadata><nova:instance xmlns:nova=\"" NOVA_NS "\">"
                 "<nova:package version=\"27.1.0\"/><nova:name>web-1</nova:name>"
                 "<nova:creationTime>2024-05-01 10:00:00</nova:creationTime>"
                 "<nova:flavor name=\"%s\"><nova:memory>2048</nova:memory><nova:disk>20"
                 "</nova:disk><nova:swap>0</nova:swap><nova:ephemeral>0</nova:ephemeral>"
                 "<nova:vcpus>2</nova:vcpus></nova:flavor>"
                 "<nova:owner><nova:user uuid=\"u-1\">alice</nova:user>"
                 "<nova:project uuid=\"%s\">%s</nova:project></nova:owner>"
                 "<nova:root type=\"image\" uuid=\"%s\"/></nova:instance></metadata>"
                 "<vcpu placement='static'>2</vcpu></domain>",
                 name, flavor, project_uuid, project, image) < 0)
        abort();
    return x;
}

static const char *decide_text(const host_policy *p, const char *live, const char *shape)
{
    static char out[400];
    const char *where;
    hp_facts f;
    vn_mode m;

    (void)hostpolicy_facts(live, shape, &f);
    m = hostpolicy_decide(p, &f, &where);
    snprintf(out, sizeof(out), "%s %s", mode_name(m), where);
    return out;
}

/* The policy of `rules` (one file) over `def`. */
static host_policy *policy_of(const char *rules, vn_mode def)
{
    host_policy *p = NULL;
    char err[512] = "";

    clear_dir();
    write_file("10-a.rules", rules, 0644);
    if (hostpolicy_load(dir, false, def, &p, err, sizeof(err)) < 0) {
        printf("# load: %s\n", err);
        return NULL;
    }
    return p;
}

static void test_parse_errors(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"auto\n", ":1: a rule needs a match"},
        {"sometimes name=x\n", ":1: expected a mode (off, advise or auto), got 'sometimes'"},
        {"# c\n\nauto colour=red\n", ":3: unknown match 'colour'"},
        {"auto name\n", ":1: 'name' needs a glob"},
        {"auto name=\n", ":1: 'name' needs a glob"},
        {"auto dedicated=yes\n", ":1: 'dedicated' takes no value"},
        {"auto name=\"a b\n", ":1: unterminated quote"},
        {"auto name=a\x01\n", ":1: control character 0x01"},
        {"auto name=1 name=2 name=3 name=4 name=5 name=6 name=7 name=8 name=9\n",
         ":1: more than 8 matches"},
    };
    host_policy *p = NULL;
    char err[512] = "", big[2048];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        clear_dir();
        write_file("10-a.rules", bad[i].text, 0644);
        err[0] = '\0';
        int r = hostpolicy_load(dir, false, VN_MODE_OFF, &p, err, sizeof(err));
        CHECK(r == -EINVAL && strstr(err, bad[i].want) && strstr(err, "/10-a.rules:"),
              "rejected with FILE:LINE '%s': %s", bad[i].want, err);
    }
    /* a glob longer than the limit; a line longer than the limit */
    memset(big, 'a', sizeof(big));
    memcpy(big, "auto name=", 10);
    big[10 + HOSTPOLICY_GLOB_MAX] = '\n';
    big[11 + HOSTPOLICY_GLOB_MAX] = '\0';
    clear_dir();
    write_file("10-a.rules", big, 0644);
    CHECK(hostpolicy_load(dir, false, VN_MODE_OFF, &p, err, sizeof(err)) == -EINVAL &&
              strstr(err, ":1:"),
          "a glob past %u bytes is refused: %s", HOSTPOLICY_GLOB_MAX, err);
    memset(big + 10, 'a', 1990);
    big[2000] = '\n';
    big[2001] = '\0';
    clear_dir();
    write_file("10-a.rules", big, 0644);
    CHECK(hostpolicy_load(dir, false, VN_MODE_OFF, &p, err, sizeof(err)) == -EINVAL &&
              strstr(err, ":1: line longer than"),
          "a line past the limit is refused: %s", err);
    /* a file every user may write */
    clear_dir();
    write_file("10-a.rules", "auto name=*\n", 0666);
    CHECK(hostpolicy_load(dir, false, VN_MODE_OFF, &p, err, sizeof(err)) == -EPERM &&
              strstr(err, "writable by every user"),
          "a world-writable rules file is refused: %s", err);
    /* a directory other users may write: they could add rules */
    clear_dir();
    write_file("10-a.rules", "auto name=*\n", 0644);
    chmod(dir, 0777);
    CHECK(hostpolicy_load(dir, false, VN_MODE_OFF, &p, err, sizeof(err)) == -EPERM &&
              strstr(err, "writable by other users"),
          "a policy_dir every user may write is refused: %s", err);
    chmod(dir, 0700);
    /* a missing policy_dir: no rules when optional, an error when named */
    CHECK(hostpolicy_load("/nonexistent/policy.d", true, VN_MODE_AUTO, &p, err, sizeof(err)) == 0 &&
              p->nr_rules == 0 && p->default_mode == VN_MODE_AUTO,
          "a missing default policy_dir is no rules");
    hostpolicy_free(p);
    p = NULL;
    CHECK(hostpolicy_load("/nonexistent/policy.d", false, VN_MODE_OFF, &p, err, sizeof(err)) ==
                  -ENOENT &&
              strstr(err, "policy_dir: /nonexistent/policy.d"),
          "a missing policy_dir that vnumad.conf names is an error: %s", err);
}

static void test_files_in_order(void)
{
    host_policy *p = NULL;
    char err[512] = "";

    clear_dir();
    write_file("20-b.rules", "off name=web-*\n", 0644);
    write_file("10-a.rules", "# first\n\n  advise name=web-1   # inline comment\n", 0644);
    write_file("05-c.rules", "auto name=\"db 1\" # quoted\n", 0644);
    write_file(".hidden.rules", "off name=*\n", 0644);
    write_file("x.rules~", "off name=*\n", 0644);
    write_file("README", "not a rule\n", 0644);
    CHECK(hostpolicy_load(dir, false, VN_MODE_OFF, &p, err, sizeof(err)) == 0, "loads: %s", err);
    CHECK(p && p->nr_rules == 3, "three rules from the three *.rules files (%u)",
          p ? p->nr_rules : 0);
    if (p && p->nr_rules == 3) {
        CHECK(strstr(p->rules[0].where, "/05-c.rules:1") && !strcmp(p->rules[0].m[0].glob, "db 1"),
              "05-c first, its quoted glob whole: %s", p->rules[0].where);
        CHECK(strstr(p->rules[1].where, "/10-a.rules:3") && p->rules[1].mode == VN_MODE_ADVISE,
              "10-a second, line 3: %s", p->rules[1].where);
        CHECK(strstr(p->rules[2].where, "/20-b.rules:1"), "20-b last");
    }
    hostpolicy_free(p);
}

static void test_globs_and_first_match(void)
{
    host_policy *p = policy_of("off name=web-1\n"
                               "auto name=web-*\n"
                               "advise name=.hidden*\n"
                               "auto name=a/*\n"
                               "off name=[!x]*\n",
                               VN_MODE_AUTO);
    char *x;

    if (!CHECK(p, "policy loads"))
        return;
    x = nova_xml("web-1", "m1.small", "p", "demo", "i");
    CHECK(strstr(decide_text(p, x, NULL), "off rule ") &&
              strstr(decide_text(p, x, NULL), "10-a.rules:1"),
          "first rule wins: %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml("web-2", "m1.small", "p", "demo", "i");
    CHECK(strstr(decide_text(p, x, NULL), "auto rule ") &&
              strstr(decide_text(p, x, NULL), "10-a.rules:2"),
          "glob web-*: %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml(".hidden-vm", "m1.small", "p", "demo", "i");
    CHECK(strstr(decide_text(p, x, NULL), "advise rule "),
          "a leading '.' is matched by a glob (no FNM_PERIOD): %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml("a/b", "m1.small", "p", "demo", "i");
    CHECK(strstr(decide_text(p, x, NULL), "auto rule ") &&
              strstr(decide_text(p, x, NULL), "10-a.rules:4"),
          "'/' in a name is an ordinary character: %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml("xeno", "m1.small", "p", "demo", "i");
    CHECK(!strcmp(decide_text(p, x, NULL), "auto default"), "no match: the default (%s)",
          decide_text(p, x, NULL));
    free(x);
    hostpolicy_free(p);
}

static void test_nova(void)
{
    host_policy *p = policy_of("off nova.flavor=*.dedicated\n"
                               "advise nova.project=ops\n"
                               "advise nova.project=11111111-*\n"
                               "auto nova.image=img-42 nova.flavor=m1.*\n"
                               "auto nova.flavor=numa.*\n",
                               VN_MODE_OFF);
    char *x;

    if (!CHECK(p, "policy loads"))
        return;
    x = nova_xml("instance-0001", "c1.dedicated", "p", "demo", "img-1");
    CHECK(strstr(decide_text(p, x, NULL), "off rule "), "flavor *.dedicated: %s",
          decide_text(p, x, NULL));
    free(x);
    x = nova_xml("instance-0002", "m1.small", "p", "ops", "img-1");
    CHECK(strstr(decide_text(p, x, NULL), "advise rule ") && strstr(decide_text(p, x, NULL), ":2"),
          "project by name: %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml("instance-0003", "m1.small", "11111111-2222", "demo", "img-1");
    CHECK(strstr(decide_text(p, x, NULL), ":3"), "project by uuid: %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml("instance-0004", "m1.small", "p", "demo", "img-42");
    CHECK(strstr(decide_text(p, x, NULL), "auto rule ") && strstr(decide_text(p, x, NULL), ":4"),
          "image and flavor (AND): %s", decide_text(p, x, NULL));
    free(x);
    x = nova_xml("instance-0005", "c1.large", "p", "demo", "img-42");
    CHECK(!strcmp(decide_text(p, x, NULL), "off default"), "image alone is not the rule: %s",
          decide_text(p, x, NULL));
    free(x);
    /* a volume-backed instance: <nova:root type="volume"> has no image */
    x = nova_xml("instance-0006", "m1.small", "p", "demo", "img-42");
    char *v = strstr(x, "type=\"image\"");
    memcpy(v, "type=\"disk\" ", 12);
    CHECK(!strcmp(decide_text(p, x, NULL), "off default"), "a root that is not an image: %s",
          decide_text(p, x, NULL));
    free(x);
    /* an older Nova's namespace (1.0) */
    x = nova_xml("instance-0007", "numa.large", "p", "demo", "i");
    v = strstr(x, "nova/1.1");
    v[7] = '0';
    CHECK(strstr(decide_text(p, x, NULL), "auto rule ") && strstr(decide_text(p, x, NULL), ":5"),
          "Nova's 1.0 namespace: %s", decide_text(p, x, NULL));
    free(x);
    /* a <nova:instance> in another namespace, or none: no Nova facts */
    x = nova_xml("instance-0008", "numa.large", "p", "demo", "i");
    v = strstr(x, "openstack.org");
    memcpy(v, "openstack.orx", 13);
    CHECK(!strcmp(decide_text(p, x, NULL), "off default"), "another namespace is not Nova's: %s",
          decide_text(p, x, NULL));
    free(x);
    hostpolicy_free(p);
}

static void test_kubevirt(void)
{
    host_policy *p = policy_of("off kubevirt.namespace=kube-system\n"
                               "advise kubevirt.uid=aaaa-*\n"
                               "auto kubevirt kubevirt.name=vmi-*\n",
                               VN_MODE_OFF);
    static const char fmt[] =
        "<domain type='kvm'><name>%s</name><metadata><kubevirt xmlns=\"http://kubevirt.io\">"
        "<uid>%s</uid><graceperiod><deletionGracePeriodSeconds>30</deletionGracePeriodSeconds>"
        "</graceperiod></kubevirt></metadata></domain>";
    char x[1024];

    if (!CHECK(p, "policy loads"))
        return;
    snprintf(x, sizeof(x), fmt, "kube-system_vmi-a", "bbbb");
    CHECK(strstr(decide_text(p, x, NULL), "off rule "), "namespace from NAMESPACE_NAME: %s",
          decide_text(p, x, NULL));
    snprintf(x, sizeof(x), fmt, "default_vmi-b", "aaaa-1");
    CHECK(strstr(decide_text(p, x, NULL), "advise rule "), "uid: %s", decide_text(p, x, NULL));
    snprintf(x, sizeof(x), fmt, "default_vmi-c", "cccc");
    CHECK(strstr(decide_text(p, x, NULL), "auto rule "), "name: %s", decide_text(p, x, NULL));
    /* the same name without the KubeVirt block: not a VMI */
    snprintf(x, sizeof(x),
             "<domain><name>default_vmi-c</name><metadata><kubevirt><uid>aaaa-1</uid>"
             "</kubevirt></metadata></domain>");
    CHECK(!strcmp(decide_text(p, x, NULL), "off default"),
          "<kubevirt> outside KubeVirt's namespace: no facts (%s)", decide_text(p, x, NULL));
    hostpolicy_free(p);
}

static void test_dedicated(void)
{
    host_policy *p = policy_of("off dedicated\nauto name=*\n", VN_MODE_OFF);
    static const struct {
        const char *cputune;
        unsigned vcpus;
        bool want;
    } cases[] = {
        {"<vcpupin vcpu='0' cpuset='2'/><vcpupin vcpu='1' cpuset='3'/>", 2, true},
        {"<vcpupin vcpu='1' cpuset='5'/><vcpupin vcpu='0' cpuset='4'/>", 2, true},
        {"<vcpupin vcpu='0' cpuset='2'/><vcpupin vcpu='1' cpuset='2'/>", 2, false}, /* shared */
        {"<vcpupin vcpu='0' cpuset='2-3'/><vcpupin vcpu='1' cpuset='3'/>", 2, false},
        {"<vcpupin vcpu='0' cpuset='2'/>", 2, false},                               /* one left */
        {"<vcpupin vcpu='0' cpuset='2'/><vcpupin vcpu='0' cpuset='3'/>", 2, false}, /* twice */
        {"<vcpupin vcpu='0' cpuset='2'/><vcpupin vcpu='7' cpuset='3'/>", 2, false}, /* no vCPU 7 */
        {"", 2, false},
        {"<vcpupin vcpu='0' cpuset='junk'/><vcpupin vcpu='1' cpuset='3'/>", 2, false},
    };
    char live[256], shape[1024];

    if (!CHECK(p, "policy loads"))
        return;
    snprintf(live, sizeof(live), "<domain><name>vm</name></domain>");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(shape, sizeof(shape),
                 "<domain><name>vm</name><vcpu placement='static'>%u</vcpu><cputune>%s"
                 "</cputune></domain>",
                 cases[i].vcpus, cases[i].cputune);
        const char *got = decide_text(p, live, shape);
        CHECK(!strncmp(got, cases[i].want ? "off" : "auto", cases[i].want ? 3 : 4),
              "dedicated %s: %s (%s)", cases[i].want ? "yes" : "no", cases[i].cputune, got);
    }
    /* the shape of the live XML is never looked at: only the definition's */
    snprintf(shape, sizeof(shape),
             "<domain><name>vm</name><vcpu>1</vcpu><cputune><vcpupin vcpu='0' cpuset='2'/>"
             "</cputune></domain>");
    CHECK(!strncmp(decide_text(p, shape, NULL), "auto", 4),
          "without the definition there is no shape (%s)", decide_text(p, shape, NULL));
    hostpolicy_free(p);
}

/* Broken, hostile and huge XML: never a match but the default, never a crash. */
static void test_hostile(void)
{
    host_policy *p = policy_of("off name=*\n", VN_MODE_AUTO);
    host_policy *q = policy_of("advise nova.flavor=*\n", VN_MODE_OFF);
    char *big, *x;
    hp_facts f;

    if (!CHECK(p && q, "policies load"))
        return;
    CHECK(hostpolicy_facts("<domain><name>x", NULL, &f) == -EINVAL && !f.has[HP_NAME],
          "broken XML: no facts");
    CHECK(!strcmp(decide_text(p, "<domain><name>x", NULL), "auto default"),
          "broken XML: the default (%s)", decide_text(p, "<domain><name>x", NULL));
    CHECK(!strcmp(decide_text(p, "<notdomain><name>x</name></notdomain>", NULL), "auto default"),
          "another root: the default");
    x = "<!DOCTYPE domain [<!ENTITY f \"m1.large\">]><domain><name>x</name><metadata>"
        "<nova:instance xmlns:nova=\"" NOVA_NS "\"><nova:flavor name=\"&f;\"/></nova:instance>"
        "</metadata></domain>";
    CHECK(!strcmp(decide_text(q, x, NULL), "off default"), "a DTD: nothing is read (%s)",
          decide_text(q, x, NULL));
    x = "<domain><name>x</name><metadata><nova:instance xmlns:nova=\"" NOVA_NS "\">"
        "<nova:flavor name=\"&f;\"/></nova:instance></metadata></domain>";
    CHECK(!strcmp(decide_text(q, x, NULL), "off default"), "an undeclared entity: no facts (%s)",
          decide_text(q, x, NULL));
    /* a name of 300 bytes: longer than any glob compares, so none matches (not even '*') */
    big = malloc(2u << 20);
    memset(big, 'a', 300);
    snprintf(big, 400, "<domain><name>");
    memset(big + 14, 'n', 300);
    snprintf(big + 314, 100, "</name></domain>");
    CHECK(!strcmp(decide_text(p, big, NULL), "auto default"),
          "a name past %u bytes matches no glob (%s)", HOSTPOLICY_VALUE_MAX,
          decide_text(p, big, NULL));
    /* 2 MiB of XML: past the bound, not parsed */
    snprintf(big, 100, "<domain><name>x</name><metadata>");
    memset(big + strlen(big), ' ', (2u << 20) - 200);
    snprintf(big + (2u << 20) - 150, 100, "</metadata></domain>");
    CHECK(hostpolicy_facts(big, NULL, &f) == -EINVAL, "XML past %u bytes is not read",
          (unsigned)(1u << 20));
    free(big);
    /* two Nova blocks: the first is read (libvirt keeps one element per namespace) */
    x = "<domain><name>x</name><metadata><nova:instance xmlns:nova=\"" NOVA_NS "\">"
        "<nova:flavor name=\"a\"/></nova:instance><n:instance xmlns:n=\"" NOVA_NS "\">"
        "<n:flavor name=\"b\"/></n:instance></metadata></domain>";
    CHECK(hostpolicy_facts(x, NULL, &f) == 0 && !strcmp(f.value[HP_NOVA_FLAVOR], "a"),
          "the first Nova block");
    hostpolicy_free(p);
    hostpolicy_free(q);
}

static void test_needs_equal(void)
{
    host_policy *a = policy_of("auto name=x\n", VN_MODE_OFF);
    host_policy *b = policy_of("auto name=x\n", VN_MODE_OFF);
    host_policy *c = policy_of("auto dedicated\n", VN_MODE_OFF);
    host_policy *none = policy_of("# nothing\n", VN_MODE_OFF);

    CHECK(hostpolicy_equal(a, b) && !hostpolicy_equal(a, c), "equal policies");
    CHECK(hostpolicy_needs(none) == 0, "no rule, default off: nothing read");
    CHECK(hostpolicy_needs(a) == HOSTPOLICY_NEEDS_LIVE, "a name rule: the live XML");
    CHECK(hostpolicy_needs(c) == (HOSTPOLICY_NEEDS_LIVE | HOSTPOLICY_NEEDS_INACTIVE),
          "dedicated: the definition too");
    none->default_mode = VN_MODE_AUTO;
    CHECK(hostpolicy_needs(none) == HOSTPOLICY_NEEDS_DEFAULT,
          "default auto without rules: nothing read of a domain");
    hostpolicy_free(a);
    hostpolicy_free(b);
    hostpolicy_free(c);
    hostpolicy_free(none);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_parse_errors();
    test_files_in_order();
    test_globs_and_first_match();
    test_nova();
    test_kubevirt();
    test_dedicated();
    test_hostile();
    test_needs_equal();
    clear_dir();
    rmdir(dir);
    return tap_done();
}
