/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qemu hook's placement of an incoming domain: its XML read (hookxml_read: who passes
 * unchanged and why), its cells placed on the host as it is (decide_incoming: load, room, the
 * domain's bounds) and the XML written back (hookxml_write: pins, preferred memnodes, <placed>);
 * an earlier host's placement taken out of an XML vnumad does not place (hookxml_unplace).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide-fixture.h"
#include "decide_incoming.h"
#include "domxml.h"
#include "hookxml.h"
#include "tap.h"

#define GIB (1024 * MIB)

static const char *const BAL = "<vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"%s\"/>";

/* A two-cell domain (vCPUs 0-1 and 2-3, 1 GiB each) with `extra` in <domain> and `meta` in
 * <metadata>. */
static char *dom_xml(const char *mode, const char *extra, const char *meta)
{
    static char buf[16384];
    char bal[256] = "";

    if (mode)
        snprintf(bal, sizeof(bal), BAL, mode);
    snprintf(buf, sizeof(buf),
             "<domain type='kvm'><name>-rf 'web' $(x)</name>"
             "<uuid>6a1e5f38-58a4-4a4f-9d52-6c9a0e2f7a10</uuid>"
             "<metadata>%s%s</metadata>"
             "<memory unit='KiB'>2097152</memory><vcpu placement='static'>4</vcpu>%s"
             "<cpu><numa><cell id='0' cpus='0-1' memory='1048576' unit='KiB'/>"
             "<cell id='1' cpus='2-3' memory='1048576' unit='KiB'/></numa></cpu>"
             "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>",
             bal, meta ? meta : "", extra ? extra : "");
    return buf;
}

/* The host: 4 nodes of 2 CPUs, 8 GiB free each, node 3 full of other work. */
static void host_snap(const topology *t, snapshot *s)
{
    memset(s, 0, sizeof(*s));
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        s->free_known[n] = true;
        s->free_bytes[n] = 8 * GIB;
    }
    s->other_busy[3] = 2.0;
}

static int place(const topology *t, const snapshot *s, const char *xml, plan_domain *pd, char **out,
                 char *why, size_t whylen)
{
    vn_config cfg;
    hook_domain hd;
    int r = hookxml_read(xml, t, &hd, why, whylen);

    config_defaults(&cfg);
    memset(pd, 0, sizeof(*pd));
    *out = NULL;
    if (r <= 0)
        return r;
    if (decide_incoming(t, s, &cfg, &hd.d, hd.cell_bytes, pd) < 0 ||
        hookxml_write(xml, t, &hd, pd, "5e1f0c2a9d8b4c7e8f6a5b4c3d2e1f0a", out) < 0)
        r = -1;
    hookxml_clear(&hd);
    return r;
}

static void test_passes(const topology *t)
{
    static const struct {
        const char *what, *mode, *extra, *meta, *why;
    } cases[] = {
        {"no <balancer>", NULL, NULL, NULL, "did not opt in"},
        {"mode advise", "advise", NULL, NULL, "mode is advise"},
        {"mode off", "off", NULL, NULL, "mode is off"},
        {"the operator's strict numatune", "auto",
         "<numatune><memory mode='strict' nodeset='0'/></numatune>", NULL, "<numatune>"},
        {"the operator's preferred memnode (no <placed>)", "auto",
         "<numatune><memnode cellid='0' mode='preferred' nodeset='0'/></numatune>", NULL,
         "<numatune>"},
        {"the operator's <vcpupin>s (no vnumad state)", "auto",
         "<cputune><vcpupin vcpu='0' cpuset='0'/></cputune>", NULL, "<vcpupin>s"},
        {"<vcpupin>s whose carried originals pin each vCPU apart", "auto",
         "<cputune><vcpupin vcpu='0' cpuset='4'/></cputune>",
         "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'><original host='aa'>"
         "<vcpupin vcpu='0' cpuset='0'/><vcpupin vcpu='1' cpuset='1'/>"
         "<vcpupin vcpu='2' cpuset='2'/><vcpupin vcpu='3' cpuset='3'/></original></vnumad:state>",
         "<vcpupin>s"},
        {"numad's placement", "auto", "<numatune><memory placement='auto'/></numatune>", NULL,
         "<numatune>"},
    };
    snapshot s;
    char why[512];

    host_snap(t, &s);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        plan_domain pd;
        char *out;
        int r;
        r = place(t, &s, dom_xml(cases[i].mode, cases[i].extra, cases[i].meta), &pd, &out, why,
                  sizeof(why));
        CHECK(r == 0 && !out && strstr(why, cases[i].why), "%s: passes unchanged (%s)",
              cases[i].what, why);
        free(out);
        plan_domain_clear(&pd);
    }
    /* a cpuset of CPUs this host has not */
    const char *x = "<domain type='kvm'><name>a</name><metadata>"
                    "<vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"auto\"/>"
                    "</metadata><memory unit='KiB'>1048576</memory>"
                    "<vcpu placement='static' cpuset='60-63'>2</vcpu></domain>";
    plan_domain pd;
    char *out;
    int r = place(t, &s, x, &pd, &out, why, sizeof(why));
    CHECK(r == 0 && !out && strstr(why, "no CPU of this host"),
          "a <vcpu cpuset> of no CPU here: passes unchanged (%s)", why);
    plan_domain_clear(&pd);
    r = place(t, &s, "<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><domain>&e;</domain>",
              &pd, &out, why, sizeof(why));
    CHECK(r == -EINVAL && !out, "a DTD with an external entity: refused (%d, %s)", r, why);
    r = place(t, &s, "<domain type='lxc'><name>a</name></domain>", &pd, &out, why, sizeof(why));
    CHECK(r == 0 && !out && strstr(why, "not a QEMU"), "an LXC domain passes (%s)", why);
}

/* Cell id -> target os node in pd, -2 when the cell is missing. */
static int target_of(const topology *t, const plan_domain *pd, unsigned cell)
{
    for (unsigned k = 0; k < pd->nr_cells; k++)
        if (pd->cells[k].cell_id == cell)
            return pd->cells[k].target_node < 0 ? -1
                                                : (int)t->nodes[pd->cells[k].target_node].os_index;
    return -2;
}

static void test_place(const topology *t)
{
    snapshot s;
    plan_domain pd;
    char why[512], *out;
    domxml_info info;
    char err[256];
    int r, a, b;

    host_snap(t, &s);
    s.other_busy[0] = 1.5; /* node 0 has half a CPU to spare: not enough for a cell of 2 */
    r = place(t, &s, dom_xml("auto", NULL, NULL), &pd, &out, why, sizeof(why));
    a = target_of(t, &pd, 0);
    b = target_of(t, &pd, 1);
    CHECK(r == 1 && out, "an opted-in domain is placed (r=%d %s)", r, why);
    CHECK((a == 1 || a == 2) && (b == 1 || b == 2) && a != b,
          "its cells go to the idle nodes 1 and 2, one each, never to busy 0 or 3 (%d, %d)", a, b);
    CHECK(pd.nr_cells == 2 && pd.cells[0].nr_pins == 2 && pd.cells[1].nr_pins == 2 &&
              pd.cells[0].nr_moves == 1 && pd.cells[0].moves[0].bytes == GIB,
          "each cell: its 2 vCPUs pinned and its 1 GiB placed");
    r = out ? domxml_parse(out, t, &info, err, sizeof(err)) : -1;
    CHECK(r == 0 && info.nr_memnodes == 2 && info.memnodes[0].binding.mode == VN_MEM_PREFERRED &&
              nodeset_isset(&info.memnodes[0].binding.nodes, (unsigned)topo_node_index(t, a)),
          "the XML written: a preferred <memnode> per cell on its node (%s)", r ? err : "");
    CHECK(out && strstr(out, "<vcpupin vcpu=\"0\" cpuset=\"") && strstr(out, "placed host=") &&
              strstr(out, "host=\"5e1f0c2a9d8b4c7e8f6a5b4c3d2e1f0a\""),
          "... <vcpupin>s and <placed host> in vnumad's <state>");
    CHECK(out && strstr(out, "<name>-rf 'web' $(x)</name>") &&
              strstr(out, "6a1e5f38-58a4-4a4f-9d52-6c9a0e2f7a10"),
          "... the rest of the XML as it was");
    /* the next hop: the XML it placed is placed again (its <numatune> and pins are vnumad's) */
    char *again = NULL;
    plan_domain pd2;
    if (out) {
        char *copy = strdup(out);
        s.other_busy[1] = 2.0;
        r = place(t, &s, copy, &pd2, &again, why, sizeof(why));
        CHECK(r == 1 && again && strstr(again, "cellid=\"0\"") &&
                  !strstr(strstr(again, "<numatune>") + 1, "<numatune>"),
              "placed XML migrating on: placed again, one <numatune> (r=%d %s)", r, why);
        CHECK(target_of(t, &pd2, 0) != 1 && target_of(t, &pd2, 1) != 1,
              "... now away from node 1, busy meanwhile (%d, %d)", target_of(t, &pd2, 0),
              target_of(t, &pd2, 1));
        plan_domain_clear(&pd2);
        free(again);
        free(copy);
        s.other_busy[1] = 0;
    }
    free(out);
    plan_domain_clear(&pd);

    /* room: node 1 and 2 below what a cell needs above the reserve */
    host_snap(t, &s);
    s.other_busy[0] = 1.5;
    s.free_bytes[1] = 512 * MIB;
    s.free_bytes[2] = 512 * MIB;
    s.free_bytes[3] = 512 * MIB;
    r = place(t, &s, dom_xml("auto", NULL, NULL), &pd, &out, why, sizeof(why));
    CHECK(r == 1 && target_of(t, &pd, 0) == 0 && target_of(t, &pd, 1) == 0,
          "only node 0 has room: both cells go there, CPUs overcommitted (%d, %d)",
          target_of(t, &pd, 0), target_of(t, &pd, 1));
    free(out);
    plan_domain_clear(&pd);
    for (unsigned n = 0; n < 4; n++)
        s.free_bytes[n] = 256 * MIB;
    r = place(t, &s, dom_xml("auto", NULL, NULL), &pd, &out, why, sizeof(why));
    CHECK(r == 1 && out && pd.cells[0].nr_moves == 0 && pd.cells[0].reason == REASON_NO_ROOM &&
              pd.cells[0].nr_pins == 2 && !strstr(out, "<numatune>"),
          "no node has room: vCPUs pinned, memory left to the kernel (no <numatune>)");
    free(out);
    plan_domain_clear(&pd);

    /* the domain's bounds: its <vcpu cpuset> and the element's nodes */
    host_snap(t, &s);
    const char *bounded =
        "<domain type='kvm'><name>b</name><metadata>"
        "<vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"auto\"/></metadata>"
        "<memory unit='KiB'>1048576</memory><vcpu placement='static' cpuset='6-7'>2</vcpu>"
        "</domain>";
    r = place(t, &s, bounded, &pd, &out, why, sizeof(why));
    CHECK(r == 1 && out && target_of(t, &pd, 0) == 3 && strstr(out, "cpuset=\"6-7\"") &&
              strstr(out, "<memory mode=\"preferred\" nodeset=\"3\"/>"),
          "no guest cells, <vcpu cpuset='6-7'>: node 3 even busy, a preferred <memory> (%s)", why);
    free(out);
    plan_domain_clear(&pd);

    /* the source's last decision: both cells idle; then both busy */
    host_snap(t, &s);
    s.other_busy[0] = 1.5;
    const char *idle = "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'><decision pass='9' time='t'>"
                       "{&quot;cells&quot;:[{&quot;cell&quot;:0,&quot;busy_vcpus&quot;:0},"
                       "{&quot;cell&quot;:1,&quot;busy_vcpus&quot;:0}]}</decision></vnumad:state>";
    r = place(t, &s, dom_xml("auto", NULL, idle), &pd, &out, why, sizeof(why));
    CHECK(r == 1 && pd.cells[0].busy_vcpus == 0 && pd.cells[1].busy_vcpus == 0 &&
              target_of(t, &pd, 0) == target_of(t, &pd, 1),
          "the source's record says both cells idle: no CPU to find, they stay together (%d, %d)",
          target_of(t, &pd, 0), target_of(t, &pd, 1));
    free(out);
    plan_domain_clear(&pd);
    const char *broken =
        "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'><decision>{&quot;cells&quot;:"
        "[{&quot;cell&quot;:0,&quot;busy_vcpus&quot;:99999}]</decision></vnumad:state>";
    r = place(t, &s, dom_xml("auto", NULL, broken), &pd, &out, why, sizeof(why));
    CHECK(r == 1 && pd.cells[0].busy_vcpus == 2 && pd.cells[1].busy_vcpus == 2,
          "a record that does not parse (or out of range) says nothing: every vCPU busy (%d, %d)",
          pd.cells[0].busy_vcpus, pd.cells[1].busy_vcpus);
    free(out);
    plan_domain_clear(&pd);

    /* the emulator: QEMU preallocates a cell's memory on its node's CPUs, inside its pin */
    host_snap(t, &s);
    s.other_busy[0] = 1.5;
    const char *emu_vnumad = "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'><original host='aa'>"
                             "<vcpupin vcpu='0' cpuset='0-7'/><vcpupin vcpu='1' cpuset='0-7'/>"
                             "<vcpupin vcpu='2' cpuset='0-7'/><vcpupin vcpu='3' cpuset='0-7'/>"
                             "<emulatorpin cpuset='0-7'/></original></vnumad:state>";
    r = place(
        t, &s,
        dom_xml("auto",
                "<cputune><vcpupin vcpu='0' cpuset='6'/><emulatorpin cpuset='6-7'/></cputune>",
                emu_vnumad),
        &pd, &out, why, sizeof(why));
    CHECK(r == 1 && out && strstr(out, "<emulatorpin cpuset=\"2-5\"/>"),
          "the source vnumad's <emulatorpin> (on busy node 3) goes to the placed nodes' CPUs (%s)",
          out ? strstr(out, "<emulatorpin") : why);
    free(out);
    plan_domain_clear(&pd);
    hook_domain hd;
    r = hookxml_read(dom_xml("auto", "<cputune><emulatorpin cpuset='6-7'/></cputune>", NULL), t,
                     &hd, why, sizeof(why));
    if (CHECK(r == 1 && hd.emulator == HOOK_EMU_OPERATOR, "an <emulatorpin> without a vnumad "
                                                          "state is the operator's")) {
        vn_config cfg;
        config_defaults(&cfg);
        CHECK(decide_incoming(t, &s, &cfg, &hd.d, hd.cell_bytes, &pd) == 0 &&
                  !hookxml_emulator_fits(t, &hd, &pd, why, sizeof(why)) &&
                  strstr(why, "leaves out CPUs of node"),
              "... placing cells off its CPUs would fail QEMU's preallocation: unchanged (%s)",
              why);
        plan_domain_clear(&pd);
        hd.emulator_pin = hd.allowed;
        CHECK(decide_incoming(t, &s, &cfg, &hd.d, hd.cell_bytes, &pd) == 0 &&
                  hookxml_emulator_fits(t, &hd, &pd, why, sizeof(why)),
              "... one over every CPU fits");
        plan_domain_clear(&pd);
    }
    hookxml_clear(&hd);

    /* the opt-in's namespace declared on <domain> (an XML rewritten on its way) */
    r = place(t, &s,
              "<domain type='kvm' xmlns:vnuma='urn:vnuma:balancer:1'><name>ns</name>"
              "<metadata><vnuma:balancer mode='auto'/></metadata>"
              "<memory unit='KiB'>1048576</memory><vcpu placement='static'>2</vcpu>"
              "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>",
              &pd, &out, why, sizeof(why));
    CHECK(r == 1 && out, "the opt-in's namespace declared on <domain>: placed (r=%d %s)", r, why);
    free(out);
    plan_domain_clear(&pd);

    /* carried originals of no pins: the live pins are the source vnumad's, replaced */
    const char *carried =
        "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'><original host='aa'>"
        "<vcpupin vcpu='0' cpuset='0-63'/><vcpupin vcpu='1' cpuset='0-63'/>"
        "<vcpupin vcpu='2' cpuset='0-63'/><vcpupin vcpu='3' cpuset='0-63'/></original>"
        "</vnumad:state>";
    r = place(t, &s, dom_xml("auto", "<cputune><vcpupin vcpu='0' cpuset='40'/></cputune>", carried),
              &pd, &out, why, sizeof(why));
    CHECK(r == 1 && out && !strstr(out, "cpuset=\"40\"") && strstr(out, "<original host=\"aa\""),
          "the source vnumad's pins (its originals: none) are replaced, its <state> kept (%s)",
          why);
    free(out);
    plan_domain_clear(&pd);
}

/* An earlier host's placement out of a domain vnumad does not place here. */
static void test_unplace(const topology *t)
{
    snapshot s;
    plan_domain pd;
    char why[512], *placed = NULL, *out = NULL;
    domxml_info info;
    char err[256];
    int r;

    host_snap(t, &s);
    /* placed by a host whose vnumad had moved its emulator pin (original: 0-7) */
    r = place(t, &s,
              dom_xml("auto", "<cputune><emulatorpin cpuset='5'/></cputune>",
                      "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'><original host='aa'>"
                      "<emulatorpin cpuset='0-7'/></original></vnumad:state>"),
              &pd, &placed, why, sizeof(why));
    plan_domain_clear(&pd);
    CHECK(r == 1 && placed && strstr(placed, "<emulatorpin"), "a placed XML to start from (%s)",
          why);
    r = placed ? hookxml_unplace(placed, &out) : -1;
    CHECK(r == 0 && out && !strstr(out, "<numatune") && !strstr(out, "<vcpupin") &&
              !strstr(out, "<placed") && strstr(out, "<emulatorpin cpuset=\"0-7\"/>"),
          "its memnodes, <numatune>, vcpupins and <placed> are taken out, vnumad's emulator pin "
          "put back to its original");
    r = out ? domxml_parse(out, t, &info, err, sizeof(err)) : -1;
    CHECK(r == 0 && info.nr_memnodes == 0 && info.nr_cells == 2 && info.nr_vcpus == 4,
          "... the domain is whole, without a binding (%s)", r ? err : "");
    CHECK(out && strstr(out, "<original host=\"aa\"") && strstr(out, "urn:vnuma:balancer:1"),
          "... vnumad's <state> originals and the opt-in stay");
    free(out);
    out = NULL;

    /* an operator's memnode beside the placed ones stays, and its <numatune> */
    if (placed) {
        char *x = malloc(strlen(placed) + 128), *nt = strstr(placed, "<numatune>");
        if (x && nt) {
            size_t at = (size_t)(nt - placed) + strlen("<numatune>");
            memcpy(x, placed, at);
            strcpy(x + at, "<memnode cellid=\"1\" mode=\"strict\" nodeset=\"2\"/>");
            strcat(x, placed + at);
            r = hookxml_unplace(x, &out);
            CHECK(r == 0 && out && strstr(out, "mode=\"strict\" nodeset=\"2\"") &&
                      !strstr(out, "preferred"),
                  "an operator's memnode stays, the placed ones go");
            free(out);
            out = NULL;
        }
        free(x);
    }
    free(placed);

    CHECK(hookxml_unplace(dom_xml("auto",
                                  "<numatune><memnode cellid='0' mode='preferred' "
                                  "nodeset='3'/></numatune>",
                                  NULL),
                          &out) == 0 &&
              !out,
          "no <placed>: nothing is taken out (the memnode is the operator's)");
    CHECK(hookxml_unplace(dom_xml("auto",
                                  "<numatune><memnode cellid='0' mode='preferred' "
                                  "nodeset='3'/></numatune>",
                                  "<vnumad:state xmlns:vnumad='urn:vnuma:state:1'>"
                                  "<placed host='x'><cell id='0' node='3' memory='1'/></placed>"
                                  "</vnumad:state>"),
                          &out) == 0 &&
              !out,
          "a broken <placed> (a host that is no machine id) names nothing to take out");
    /* the namespaces declared on <domain> (an XML rewritten on its way): the same */
    CHECK(hookxml_unplace("<domain type='kvm' xmlns:vnumad='urn:vnuma:state:1'><metadata>"
                          "<vnumad:state><placed host='0123456789abcdef0123456789abcdef'>"
                          "<cell id='0' node='3' memory='1'/></placed></vnumad:state></metadata>"
                          "<cputune><vcpupin vcpu='0' cpuset='7'/></cputune><numatune>"
                          "<memnode cellid='0' mode='preferred' nodeset='3'/></numatune></domain>",
                          &out) == 0 &&
              out && !strstr(out, "<numatune") && !strstr(out, "<cputune") &&
              !strstr(out, "placed"),
          "the state's namespace declared on <domain>: its placement is taken out too, and the "
          "<cputune> left empty");
    free(out);
    out = NULL;
    CHECK(hookxml_unplace("<!DOCTYPE domain [<!ENTITY x 'y'>]><domain/>", &out) == -EINVAL && !out,
          "a DTD is refused");
}

int main(void)
{
    topology *t = load_synth("pack:4 numa:1 l3:1 core:2 pu:1");

    test_passes(t);
    test_place(t);
    test_unplace(t);
    topo_free(t);
    return tap_done();
}
