# vm-images/ground/lib.sh: helpers for scripts that run INSIDE the proving ground (sourced).
#   ground_libvirt_up      private libvirt state on the overlay, cgroup v2 controllers, capability
#                          cache reused across boots (/ground-cache/libvirt-caps), virtlogd+libvirtd
#   ground_libvirt_systemd the same state, with systemd as PID 1: libvirtd.service started by
#                          systemctl (cgroups are systemd's; virtlogd by its socket)
#   dom_xml NAME [key=value...]   an L2 domain's XML on stdout (TCG, firmware only, no disk,
#                          RAM preallocated); keys: cells=2 cell_mib=64 vcpus_per_cell=1
#                          cpuset= (<vcpu cpuset>) emulatorpin= vcpupin= (every vCPU) numatune=MODE:NODES
#                          vcpusched=VCPUS:fifo|rr (realtime vCPUs)
#                          optin= (auto|advise|off|"" = no element) kernel= (a multiboot image)
#                          backing= (hugetlb: hugetlbfs 2 MiB pages; memfd: shared; locked)
#   dom_start NAME [key=value...]  define + start; 1 on failure (log on stderr)
#   node_cpus N            CPU list of node N;  node_free_kib N: MemFree of node N
#   ground_tier_online     the tier node (run-ground.sh --tier-node) made system RAM in a lower
#                          memory tier (NVDIMM -> devdax -> dax kmem); prints the node number
#   gt MSG                 a timestamped line on the console
gt() { echo "GROUND-T $(cut -d' ' -f1 /proc/uptime) $*"; }
VIRSH="virsh -q -c qemu:///system"

ground_libvirt_up() {
    local i
    rm -rf /run/libvirt
    mkdir -p /run/libvirt
    ground_libvirt_state
    echo "+cpuset +cpu +memory +pids +io" >/sys/fs/cgroup/cgroup.subtree_control || return 1
    # hugetlbfs before libvirtd, which looks for its mounts when it starts (systemd's
    # dev-hugepages.mount on an operator's host)
    grep -q ' hugetlbfs ' /proc/mounts || { mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages; } || return 1
    virtlogd -d || return 1
    libvirtd -d || return 1
    for i in $(seq 1 600); do $VIRSH version >/dev/null 2>&1 && break; sleep 0.2; done
    $VIRSH domcapabilities --virttype qemu >/dev/null || return 1 # probes caps unless cached
    mkdir -p /ground-cache/libvirt-caps
    cp -u /var/cache/libvirt/qemu/capabilities/*.xml /ground-cache/libvirt-caps/ 2>/dev/null
    return 0
}

# the libvirt state of ground_libvirt_up, without starting anything: no domain of the host's,
# the host's qemu.conf seen through the overlay changed in the ground's copy only, and the
# ground's own cached capabilities (the host's do not match the ground's kernel/CPU)
ground_libvirt_state() {
    rm -f /etc/libvirt/qemu/*.xml
    rm -rf /etc/libvirt/qemu/autostart /etc/libvirt/qemu/networks/autostart
    rm -rf /var/lib/libvirt/qemu/domain-* /var/lib/libvirt/qemu/channel/target/* /var/log/libvirt/qemu/*
    mkdir -p /var/log/libvirt/qemu /var/cache/libvirt/qemu/capabilities /var/lib/libvirt/qemu/channel/target
    sed -i '/^security_driver *=/d' /etc/libvirt/qemu.conf
    echo 'security_driver = "none"' >>/etc/libvirt/qemu.conf
    rm -f /var/cache/libvirt/qemu/capabilities/*.xml
    [ "${GROUND_NO_CAPS_CACHE:-0}" = 1 ] ||
        cp /ground-cache/libvirt-caps/*.xml /var/cache/libvirt/qemu/capabilities/ 2>/dev/null
}

ground_libvirt_systemd() {
    local i
    ground_libvirt_state
    systemctl start libvirtd.service || return 1
    for i in $(seq 1 600); do $VIRSH version >/dev/null 2>&1 && break; sleep 0.2; done
    $VIRSH domcapabilities --virttype qemu >/dev/null || return 1
    mkdir -p /ground-cache/libvirt-caps
    cp -u /var/cache/libvirt/qemu/capabilities/*.xml /ground-cache/libvirt-caps/ 2>/dev/null
    return 0
}

# ground_numa_balancing 0|1: the kernel's automatic NUMA balancing (on by default on a
# multi-node Debian kernel). It moves guest memory by itself (it confounds "who moved it") and
# leaves PROT_NONE hinting entries that make move_pages(2) status queries from another process
# answer -EFAULT for present pages on this 6.1 kernel. Set it before any domain starts.
ground_numa_balancing() { sysctl -q -w kernel.numa_balancing="$1"; }

node_cpus() { cat /sys/devices/system/node/node$1/cpulist; }
node_total_kib() { awk '/MemTotal/ {print $4}' "/sys/devices/system/node/node$1/meminfo" 2>/dev/null; }
node_free_kib() { awk '/MemFree/ {print $4}' /sys/devices/system/node/node$1/meminfo; }

dom_xml() {
    local name=$1 cells=2 cell_mib=64 vpc=1 cpuset="" emulatorpin="" vcpupin="" numatune="" optin="" kernel="" backing="" kv
    local iothreads=0 iothreadpin="" vcpusched=""
    shift
    for kv in "$@"; do
        case "$kv" in
        cells=*) cells=${kv#*=} ;; cell_mib=*) cell_mib=${kv#*=} ;; vcpus_per_cell=*) vpc=${kv#*=} ;;
        cpuset=*) cpuset=${kv#*=} ;; emulatorpin=*) emulatorpin=${kv#*=} ;; vcpupin=*) vcpupin=${kv#*=} ;;
        numatune=*) numatune=${kv#*=} ;; optin=*) optin=${kv#*=} ;; kernel=*) kernel=${kv#*=} ;;
        backing=*) backing=${kv#*=} ;;
        iothreads=*) iothreads=${kv#*=} ;; iothreadpin=*) iothreadpin=${kv#*=} ;;
        vcpusched=*) vcpusched=${kv#*=} ;;
        *) echo "dom_xml: unknown $kv" >&2; return 1 ;;
        esac
    done
    local nv=$((cells * vpc)) c v
    echo "<domain type='qemu'>"
    echo "  <name>$name</name>"
    echo "  <memory unit='MiB'>$((cells * cell_mib))</memory>"
    echo "  <vcpu placement='static'${cpuset:+ cpuset='$cpuset'}>$nv</vcpu>"
    # iothreads=N: N IOThreads; iothreadpin=CPUS pins IOThread 1 in the XML
    [ "$iothreads" -gt 0 ] && echo "  <iothreads>$iothreads</iothreads>"
    # vcpusched=VCPUS:SCHEDULER, e.g. 1:fifo (a realtime vCPU, priority 1)
    if [ -n "$emulatorpin$vcpupin$iothreadpin$vcpusched" ]; then
        echo "  <cputune>"
        [ -n "$vcpupin" ] && for ((v = 0; v < nv; v++)); do echo "    <vcpupin vcpu='$v' cpuset='$vcpupin'/>"; done
        [ -n "$emulatorpin" ] && echo "    <emulatorpin cpuset='$emulatorpin'/>"
        [ -n "$iothreadpin" ] && echo "    <iothreadpin iothread='1' cpuset='$iothreadpin'/>"
        [ -n "$vcpusched" ] && echo "    <vcpusched vcpus='${vcpusched%%:*}' scheduler='${vcpusched#*:}' priority='1'/>"
        echo "  </cputune>"
    fi
    [ -n "$numatune" ] && echo "  <numatune><memory mode='${numatune%%:*}' nodeset='${numatune#*:}'/></numatune>"
    [ -n "$optin" ] && echo "  <metadata><vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"$optin\"/></metadata>"
    # backing=hugetlb (hugetlbfs, 2 MiB pages), memfd (shared, as for vhost-user), locked
    case "$backing" in
    hugetlb) echo "  <memoryBacking><hugepages><page size='2048' unit='KiB'/></hugepages><allocation mode='immediate'/></memoryBacking>" ;;
    memfd) echo "  <memoryBacking><source type='memfd'/><access mode='shared'/><allocation mode='immediate'/></memoryBacking>" ;;
    locked) echo "  <memoryBacking><locked/><allocation mode='immediate'/></memoryBacking>" ;;
    "") echo "  <memoryBacking><allocation mode='immediate'/></memoryBacking>" ;;
    *) echo "dom_xml: unknown backing $backing" >&2; return 1 ;;
    esac
    echo "  <os><type arch='x86_64' machine='pc'>hvm</type>${kernel:+<kernel>$kernel</kernel>}</os>"
    echo "  <cpu mode='custom' match='exact' check='none'>"
    echo "    <model fallback='forbid'>qemu64</model>"
    echo "    <topology sockets='$cells' dies='1' cores='$vpc' threads='1'/>"
    echo "    <numa>"
    for ((c = 0; c < cells; c++)); do
        echo "      <cell id='$c' cpus='$((c * vpc))-$((c * vpc + vpc - 1))' memory='$cell_mib' unit='MiB'/>"
    done
    echo "    </numa>"
    echo "  </cpu>"
    echo "  <on_poweroff>destroy</on_poweroff><on_reboot>restart</on_reboot>"
    echo "  <devices>"
    echo "    <emulator>/usr/bin/qemu-system-x86_64</emulator>"
    echo "    <controller type='usb' model='none'/>"
    echo "    <memballoon model='none'/>"
    echo "  </devices>"
    echo "</domain>"
}

dom_start() {
    local name=$1 x=/tmp/dom-$1.xml
    dom_xml "$@" >"$x" || return 1
    $VIRSH define "$x" >/dev/null || return 1
    $VIRSH start "$name" >/dev/null || { tail -n 20 "/var/log/libvirt/qemu/$name.log" >&2; return 1; }
}

# ground_tier_online: the tier node of run-ground.sh --tier-node (ground.tier_node=N on the kernel
# command line: no CPUs, no memory at boot, an NVDIMM) made system RAM the way an operator onlines
# CXL or persistent memory: the NVDIMM's namespace in devdax mode, its dax device handed to the
# kmem driver (daxctl; memory blocks onlined movable). The kernel (6.1) puts memory that kmem
# added in a lower memory tier than DRAM's (memory_tier22 beside DRAM's memory_tier4). Only whole
# 128 MiB memory blocks go online, and the devdax metadata at the NVDIMM's start (its struct pages
# and info block, 10 MiB of 512M) leaves the first block partial: 512M gives 384 MiB, 1G 896 MiB.
# Prints N on stdout; returns 1 on failure (stderr says why, the tools' own messages included).
# Each step is logged on stderr (gt). Idempotent: a node already holding memory is left as it is.
ground_tier_online() {
    local node="" a i ns="" dax="" json
    for a in $(cat /proc/cmdline); do
        case "$a" in ground.tier_node=*) node=${a#ground.tier_node=} ;; esac
    done
    [ -n "$node" ] || { echo "ground_tier_online: this ground has no tier node (run-ground.sh --tier-node SIZE)" >&2; return 1; }
    [ "$(node_total_kib "$node")" -gt 0 ] 2>/dev/null && { echo "$node"; return 0; }
    command -v ndctl >/dev/null && command -v daxctl >/dev/null ||
        { echo "ground_tier_online: ndctl and daxctl are not installed on the host's root (make deps)" >&2; return 1; }
    # no udev in the ground: nothing loads the drivers by itself. libnvdimm first, without the
    # install hook ndctl's package puts in modprobe.d (`ndctl load-keys`: security keys, none here)
    modprobe --ignore-install libnvdimm && modprobe -a nfit nd_pmem dax_pmem device_dax kmem ||
        { echo "ground_tier_online: modprobe failed" >&2; return 1; }
    gt "ground_tier_online: nvdimm and dax drivers loaded" >&2
    # the NFIT bus probes its regions asynchronously: the namespace of the region on node N
    for i in $(seq 1 100); do
        for a in /sys/bus/nd/devices/region*; do
            [ "$(cat "$a/target_node" 2>/dev/null)" = "$node" ] || continue
            for dax in "$a"/namespace*.0; do [ -e "$dax" ] && ns=${dax##*/}; break; done
        done
        [ -n "$ns" ] && break
        sleep 0.1
    done
    [ -n "$ns" ] || { echo "ground_tier_online: no NVDIMM namespace on node $node (ndctl list -RN: $(ndctl list -RN 2>&1 | tr -s ' \n' ' '))" >&2; return 1; }
    json=$(ndctl create-namespace -f -e "$ns" -m devdax) ||
        { echo "ground_tier_online: ndctl create-namespace -f -e $ns -m devdax failed" >&2; return 1; }
    dax=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["daxregion"]["devices"][0]["chardev"])' <<<"$json") ||
        { echo "ground_tier_online: no dax device in: $json" >&2; return 1; }
    gt "ground_tier_online: $ns is devdax, $dax" >&2
    json=$(daxctl reconfigure-device --mode=system-ram "$dax") ||
        { echo "ground_tier_online: daxctl reconfigure-device --mode=system-ram $dax failed" >&2; return 1; }
    [ "$(node_total_kib "$node")" -gt 0 ] 2>/dev/null ||
        { echo "ground_tier_online: $dax is system RAM but node $node has no memory: $json" >&2; return 1; }
    gt "ground_tier_online: $dax is system RAM, node $node has $(node_total_kib "$node") KiB" >&2
    echo "$node"
}
