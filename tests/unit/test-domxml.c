/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/domxml.c: what the sample stage reads from a live domain XML, in particular
 * which domains have memory that must never move (VFIO passthrough, locked memory, launch
 * security) and which devices do not make it so.
 */
#include <errno.h>
#include <string.h>

#include "domxml.h"
#include "tap.h"
#include "util.h"

#define DOM(inner) "<domain type='kvm'><name>d</name>" inner "</domain>"

static const struct {
    const char *name;
    const char *xml;
    vn_mem_pin want;
} pin_cases[] = {
    {"no devices", DOM(""), MEM_PIN_NONE},
    {"a VFIO PCI hostdev",
     DOM("<devices><hostdev mode='subsystem' type='pci' managed='yes'><source><address "
         "domain='0x0000' bus='0x3b' slot='0x00' function='0x1'/></source></hostdev></devices>"),
     MEM_PIN_VFIO},
    {"a hostdev without mode (libvirt's default is subsystem)",
     DOM("<devices><hostdev type='pci'/></devices>"), MEM_PIN_VFIO},
    {"a mediated device (vGPU)", DOM("<devices><hostdev mode='subsystem' type='mdev'/></devices>"),
     MEM_PIN_VFIO},
    {"an SR-IOV VF as <interface type='hostdev'>",
     DOM("<devices><interface type='hostdev' managed='yes'/></devices>"), MEM_PIN_VFIO},
    {"a USB hostdev (no IOMMU mapping of guest memory)",
     DOM("<devices><hostdev mode='subsystem' type='usb'/></devices>"), MEM_PIN_NONE},
    {"a SCSI hostdev", DOM("<devices><hostdev mode='subsystem' type='scsi'/></devices>"),
     MEM_PIN_NONE},
    {"a capabilities hostdev (a block device of the host)",
     DOM("<devices><hostdev mode='capabilities' type='storage'/></devices>"), MEM_PIN_NONE},
    {"a virtio interface", DOM("<devices><interface type='network'/></devices>"), MEM_PIN_NONE},
    {"<memoryBacking><locked/>", DOM("<memoryBacking><hugepages/><locked/></memoryBacking>"),
     MEM_PIN_LOCKED},
    {"<memoryBacking> without <locked/>",
     DOM("<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>"),
     MEM_PIN_NONE},
    {"SEV launch security",
     DOM("<launchSecurity type='sev'><policy>0x0003</policy></launchSecurity>"),
     MEM_PIN_LAUNCH_SECURITY},
    {"TDX launch security", DOM("<launchSecurity type='tdx'/>"), MEM_PIN_LAUNCH_SECURITY},
    {"VFIO wins over locked",
     DOM("<memoryBacking><locked/></memoryBacking><devices><hostdev "
         "mode='subsystem' type='pci'/></devices>"),
     MEM_PIN_VFIO},
};

int main(void)
{
    topology *t = topo_new();
    char err[256];
    domxml_info x;
    int r;

    if (!t || topo_load(TOPO_SOURCE_SYNTHETIC, "pack:2 numa:1 core:2 pu:1", NULL, t, err,
                        sizeof(err)) < 0)
        return 1;
    for (size_t i = 0; i < VN_ARRAY_SIZE(pin_cases); i++) {
        memset(&x, 0xff, sizeof(x));
        r = domxml_parse(pin_cases[i].xml, t, &x, err, sizeof(err));
        CHECK(r == 0 && x.mem_pin == pin_cases[i].want, "%s: memory %s (got %s, r=%d)",
              pin_cases[i].name, mem_pin_name(pin_cases[i].want), mem_pin_name(x.mem_pin), r);
    }

    r = domxml_parse(DOM("<vcpu cpuset='1'>2</vcpu><numatune><memnode cellid='1' mode='preferred' "
                         "nodeset='1'/></numatune>"),
                     t, &x, err, sizeof(err));
    CHECK(r == 0 && x.has_cpuset && cpuset_isset(&x.cpuset, 1) && cpuset_weight(&x.cpuset) == 1 &&
              x.nr_memnodes == 1 && x.memnodes[0].cellid == 1 &&
              x.memnodes[0].binding.mode == VN_MEM_PREFERRED &&
              nodeset_is_u64(&x.memnodes[0].binding.nodes, (1u << 1)),
          "<vcpu cpuset='1'> and <memnode cellid='1' mode='preferred' nodeset='1'>");
    /* <numatune><memory>: read from the live XML instead of virDomainGetNumaParameters */
    r = domxml_parse(DOM("<numatune><memory mode='restrictive' nodeset='1'/></numatune>"), t, &x,
                     err, sizeof(err));
    CHECK(r == 0 && x.memory.mode == VN_MEM_RESTRICTIVE &&
              nodeset_is_u64(&x.memory.nodes, (1u << 1)) && !x.memory_auto,
          "<memory mode='restrictive' nodeset='1'> (r=%d, mode %d)", r, (int)x.memory.mode);
    r = domxml_parse(DOM("<numatune><memory nodeset='0-1'/></numatune>"), t, &x, err, sizeof(err));
    CHECK(r == 0 && x.memory.mode == VN_MEM_STRICT && nodeset_is_u64(&x.memory.nodes, 3),
          "<memory nodeset='0-1'> without a mode is strict (libvirt's default)");
    r = domxml_parse(DOM("<numatune><memory mode='strict' placement='auto'/></numatune>"), t, &x,
                     err, sizeof(err));
    CHECK(r == 0 && x.memory.mode == VN_MEM_NONE && x.memory_auto,
          "placement='auto': no nodeset in the XML, numad's is asked of libvirt (memory_auto)");
    r = domxml_parse(DOM("<vcpu>2</vcpu>"), t, &x, err, sizeof(err));
    CHECK(r == 0 && x.memory.mode == VN_MEM_NONE && !x.memory_auto, "no <numatune>: no binding");
    r = domxml_parse(DOM("<numatune><memory mode='bogus' nodeset='0'/></numatune>"), t, &x, err,
                     sizeof(err));
    CHECK(r == -EINVAL && strstr(err, "unknown mode 'bogus'"), "an unknown memory mode: %s", err);
    r = domxml_parse(DOM("<numatune><memnode cellid='0' mode='bogus' nodeset='0'/></numatune>"), t,
                     &x, err, sizeof(err));
    CHECK(r == -EINVAL && strstr(err, "unknown mode 'bogus'"), "an unknown memnode mode: %s", err);
    /* <cputune>: the emulator and IOThread pins the operator set (act_operator_pins) */
    r = domxml_parse(DOM("<iothreads>2</iothreads><cputune><vcpupin vcpu='0' cpuset='1'/>"
                         "<emulatorpin cpuset='0'/><iothreadpin iothread='2' cpuset='1'/>"
                         "</cputune>"),
                     t, &x, err, sizeof(err));
    CHECK(r == 0 && x.emulator_pinned && x.nr_iothread_pins == 1 && x.iothread_pins[0] == 2,
          "<emulatorpin> and <iothreadpin iothread='2'> are read (r=%d, %u IOThread pins)", r,
          x.nr_iothread_pins);
    r = domxml_parse(DOM("<cputune><vcpupin vcpu='0' cpuset='1'/></cputune>"), t, &x, err,
                     sizeof(err));
    CHECK(r == 0 && !x.emulator_pinned && x.nr_iothread_pins == 0,
          "a <cputune> with vCPU pins only pins no emulator or IOThread");
    r = domxml_parse(DOM("<vcpu>2</vcpu>"), t, &x, err, sizeof(err));
    CHECK(r == 0 && !x.emulator_pinned && x.nr_iothread_pins == 0 && cpuset_empty(&x.rt_vcpus),
          "no <cputune>: no pins, no realtime vCPUs");
    /* <vcpusched>: fifo and rr vCPUs are realtime (never re-pinned), batch ones are not */
    r = domxml_parse(DOM("<vcpu>6</vcpu><cputune><vcpusched vcpus='0-1' scheduler='fifo' "
                         "priority='1'/><vcpusched vcpus='4' scheduler='rr' priority='2'/>"
                         "<vcpusched vcpus='5' scheduler='batch'/></cputune>"),
                     t, &x, err, sizeof(err));
    CHECK(r == 0 && cpuset_weight(&x.rt_vcpus) == 3 && cpuset_isset(&x.rt_vcpus, 0) &&
              cpuset_isset(&x.rt_vcpus, 1) && cpuset_isset(&x.rt_vcpus, 4) &&
              !cpuset_isset(&x.rt_vcpus, 5),
          "<vcpusched> fifo 0-1 and rr 4 are realtime, batch 5 is not (%u, r=%d)",
          cpuset_weight(&x.rt_vcpus), r);
    r = domxml_parse(DOM("<cputune><vcpusched vcpus='a-' scheduler='fifo'/></cputune>"), t, &x, err,
                     sizeof(err));
    CHECK(r == -EINVAL && strstr(err, "bad <vcpusched vcpus='a-'>"),
          "a bad <vcpusched vcpus> is an error: %s", err);
    r = domxml_parse(DOM("<cputune><iothreadpin iothread='x1' cpuset='1'/></cputune>"), t, &x, err,
                     sizeof(err));
    CHECK(r == -EINVAL && strstr(err, "bad <iothreadpin iothread='x1'>"),
          "a bad IOThread id is an error: %s", err);
    {
        char big[64 * 48 + 256];
        size_t used = (size_t)snprintf(big, sizeof(big), "<domain><cputune>");
        for (unsigned i = 0; i <= DOMXML_MAX_IOTHREAD_PINS; i++)
            used += (size_t)snprintf(big + used, sizeof(big) - used,
                                     "<iothreadpin iothread='%u' cpuset='0'/>", i + 1);
        snprintf(big + used, sizeof(big) - used, "</cputune></domain>");
        r = domxml_parse(big, t, &x, err, sizeof(err));
        CHECK(r == -E2BIG && strstr(err, "more than 64 <iothreadpin>"),
              "more than %u IOThread pins is refused: %s", DOMXML_MAX_IOTHREAD_PINS, err);
    }
    r = domxml_parse("<domain", t, &x, err, sizeof(err));
    CHECK(r == -EINVAL && strstr(err, "does not parse"), "broken XML: %s", err);
    r = domxml_parse(
        "<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><domain><name>&e;</name>"
        "<memoryBacking><locked/></memoryBacking></domain>",
        t, &x, err, sizeof(err));
    CHECK(r == 0 && x.mem_pin == MEM_PIN_LOCKED, "an external entity is not fetched (r=%d)", r);
    topo_free(t);
    return tap_done();
}
