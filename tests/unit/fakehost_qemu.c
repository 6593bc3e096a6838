/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fake QEMU of the fake host (fakehost.h): each domain's process as /proc shows it (its pid
 * file, status, maps, and each vCPU thread's schedstat, stat and status under the host tree),
 * its guest memory as a table of where each page is, the monitor's replies (query-cpus-fast,
 * query-memdev, query-memory-devices, info mtree -f, gpa2hva, qom-set/object-add), and the
 * kernel's move_pages(2) and free memory as a numa_ops table.
 *
 * The pids are above PID_MAX_LIMIT (2^22): no real process has them, so a syscall vnumad makes
 * on a fake thread (sched_setaffinity) finds nothing, and touches nothing real.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakehost_priv.h"
#include "util.h"

#define FAKE_PID_BASE   4194305 /* PID_MAX_LIMIT + 1 */
#define FAKE_HVA_BASE   0x7f0000000000ULL
#define FAKE_HVA_STRIDE 0x100000000ULL /* 4 GiB of address space per domain */
/* after each cell's RAM: QEMU's guard page (an inaccessible mapping), then a gap */
#define FAKE_HVA_GAP (2ULL << 20)

/* ---- the process in the host tree ---- */

pid_t fake_qemu_pid(const fake_dom *fd)
{
    return (pid_t)(FAKE_PID_BASE + 64 * (fd - fh.doms));
}

static pid_t vcpu_tid(const fake_dom *fd, unsigned v)
{
    return fake_qemu_pid(fd) + 1 + (pid_t)v;
}

/* rel (under the tree) written whole or not at all: vnumad's workers may be reading it. */
static void put(const char *rel, const char *text)
{
    char path[512], tmp[520];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fh.root, rel);
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    f = fopen(tmp, "we");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        abort();
}

static void mkdirs(const char *rel)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", fh.root, rel);
    for (char *p = path + strlen(fh.root) + 1;; p++) {
        p = strchr(p, '/');
        if (p)
            *p = '\0';
        (void)mkdir(path, 0700);
        if (!p)
            break;
        *p = '/';
    }
}

static void rm(const char *rel)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", fh.root, rel);
    (void)unlink(path);
}

/* rel, a symbolic link to target (as /proc's ns links: target is only a name) */
static void link_rel(const char *rel, const char *target)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", fh.root, rel);
    (void)unlink(path);
    if (symlink(target, path) < 0)
        abort();
}

static void rmdir_rel(const char *rel)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", fh.root, rel);
    (void)rmdir(path);
}

static uint64_t cell_hva(const fake_dom *fd, unsigned c)
{
    return FAKE_HVA_BASE + FAKE_HVA_STRIDE * (uint64_t)(fd - fh.doms) +
           (fd->cell_bytes + FAKE_HVA_GAP) * c;
}

/* The guest cell of vCPU v: the vCPUs split across the cells in order. */
static unsigned vcpu_cell(const fake_dom *fd, unsigned v)
{
    return fd->nr_cells ? v * fd->nr_cells / fd->nr_vcpus : 0;
}

static void backend_id(const fake_dom *fd, unsigned c, char *buf, size_t len)
{
    if (fd->nr_cells)
        snprintf(buf, len, "ram-node%u", c);
    else
        snprintf(buf, len, "pc.ram");
}

/* The live XML's <cpu><numa> and <memory> of the guest (fakehost_priv.h). */
void fake_qemu_xml(const fake_dom *fd, char *buf, size_t len)
{
    size_t used;

    used =
        (size_t)snprintf(buf, len, "<memory unit='KiB'>%" PRIu64 "</memory>",
                         fd->page_node ? fd->cell_bytes * VN_MAX(fd->nr_cells, 1u) / 1024 : 131072);
    if (!fd->page_node || !fd->nr_cells)
        return;
    used += (size_t)snprintf(buf + used, len - used, "<cpu><numa>");
    for (unsigned c = 0; c < fd->nr_cells; c++) {
        unsigned first = fd->nr_vcpus, last = 0;
        for (unsigned v = 0; v < fd->nr_vcpus; v++)
            if (vcpu_cell(fd, v) == c) {
                first = VN_MIN(first, v);
                last = v;
            }
        used += (size_t)snprintf(buf + used, len - used,
                                 "<cell id='%u' cpus='%u-%u' memory='%" PRIu64 "' unit='KiB'/>", c,
                                 first, last, fd->cell_bytes / 1024);
    }
    (void)snprintf(buf + used, len - used, "</numa></cpu>");
}

void fake_dom_hugetlbfs(fake_dom *fd)
{
    pthread_mutex_lock(&fh.lock);
    fd->hugetlbfs = true;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_report_tid(fake_dom *fd, unsigned v, const fake_dom *other, unsigned ov)
{
    pthread_mutex_lock(&fh.lock);
    fd->reported_tid[v] = vcpu_tid(other, ov);
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_pidns(fake_dom *fd, pid_t inner_base)
{
    pthread_mutex_lock(&fh.lock);
    fd->pidns_base = inner_base;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

/* The thread id QEMU's monitor reports for vCPU v: its own, in its namespace; or a forged one. */
static pid_t reported_tid(const fake_dom *fd, unsigned v)
{
    if (fd->reported_tid[v])
        return fd->reported_tid[v];
    return fd->pidns_base ? fd->pidns_base + 1 + (pid_t)v : vcpu_tid(fd, v);
}

/* A task's NSpid line: its id here, and in its own namespace when that is another. */
static void nspid_line(const fake_dom *fd, pid_t here, pid_t inner, char *buf, size_t len)
{
    if (fd->pidns_base)
        snprintf(buf, len, "NSpid:\t%d\t%d\n", (int)here, (int)inner);
    else
        snprintf(buf, len, "NSpid:\t%d\n", (int)here);
}

void fake_dom_forge_status(fake_dom *fd, const fake_dom *other)
{
    pthread_mutex_lock(&fh.lock);
    fd->status_of = other;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

/* libvirt's status file of the domain's run (host/domstatus.h): its QEMU's pid, id and uuid, or
 * another domain's when a test forged it (fake_dom_forge_status) */
static void put_status(const fake_dom *fd, const char *rel)
{
    const fake_dom *of = fd->status_of ? fd->status_of : fd;
    char text[512];

    snprintf(text, sizeof(text),
             "<!--\nWARNING: THIS IS AN AUTO-GENERATED FILE.\n-->\n\n"
             "<domstatus state='running' reason='booted' pid='%d'>\n"
             "  <vcpus>\n    <vcpu id='0' pid='%d'/>\n  </vcpus>\n"
             "  <domain type='kvm' id='%d'>\n    <uuid>%s</uuid>\n  </domain>\n</domstatus>\n",
             (int)fake_qemu_pid(of), (int)vcpu_tid(of, 0), of->id, of->uuid);
    put(rel, text);
}

void fake_qemu_sync(fake_dom *fd)
{
    pid_t pid = fake_qemu_pid(fd);
    char rel[320], text[4096];
    size_t used = 0;

    snprintf(rel, sizeof(rel), "run/libvirt/qemu/%s.xml", fd->name);
    if (!fd->used || !fd->running) {
        rm(rel);
        snprintf(rel, sizeof(rel), "proc/%d/status", (int)pid);
        rm(rel);
        for (unsigned v = 0; v < fd->nr_vcpus; v++) {
            snprintf(rel, sizeof(rel), "proc/%d/stat", (int)vcpu_tid(fd, v));
            rm(rel);
            snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", (int)pid, (int)vcpu_tid(fd, v));
            rm(rel);
            snprintf(rel, sizeof(rel), "proc/%d/task/%d", (int)pid, (int)vcpu_tid(fd, v));
            rmdir_rel(rel);
        }
        snprintf(rel, sizeof(rel), "proc/%d/ns/pid", (int)pid);
        rm(rel);
        return;
    }
    char ns[64], nsl[64];
    put_status(fd, rel);
    snprintf(rel, sizeof(rel), "proc/%d/ns", (int)pid); /* its PID namespace (nspid.h) */
    mkdirs(rel);
    snprintf(ns, sizeof(ns), "pid:[%u]", 4026532000u + (unsigned)(fd - fh.doms));
    snprintf(rel, sizeof(rel), "proc/%d/ns/pid", (int)pid);
    link_rel(rel, fd->pidns_base ? ns : FAKE_HOST_PIDNS);
    snprintf(rel, sizeof(rel), "proc/%d/task/%d", (int)pid, (int)pid); /* its main thread */
    mkdirs(rel);
    nspid_line(fd, pid, fd->pidns_base, nsl, sizeof(nsl));
    snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", (int)pid, (int)pid);
    snprintf(text, sizeof(text), "Name:\tqemu-system-x86\n%s", nsl);
    put(rel, text);
    snprintf(rel, sizeof(rel), "proc/%d/status", (int)pid);
    snprintf(text, sizeof(text),
             "Name:\tqemu-system-x86\nTgid:\t%d\n%sVmRSS:\t%" PRIu64
             " kB\nMems_allowed_list:\t0-1\n",
             (int)pid, nsl, fd->nr_pages * 4 + fd->rss_extra_kib);
    put(rel, text);
    /* each cell's RAM as QEMU maps it: anonymous, or a hugetlbfs file named after its backend,
     * with QEMU's guard page after it */
    for (unsigned c = 0; c < VN_MAX(fd->nr_cells, 1u) && fd->page_node; c++) {
        uint64_t end = cell_hva(fd, c) + fd->cell_bytes;
        char id[32];
        backend_id(fd, c, id, sizeof(id));
        if (fd->hugetlbfs)
            used += (size_t)snprintf(text + used, sizeof(text) - used,
                                     "%" PRIx64 "-%" PRIx64 " rw-s 00000000 00:2f %u "
                                     "     /dev/hugepages/libvirt/qemu/%d-x/qemu_back_mem._objects_"
                                     "%s.Xa3b9Q (deleted)\n",
                                     cell_hva(fd, c), end, 1000 + c, fd->id, id);
        else
            used += (size_t)snprintf(text + used, sizeof(text) - used,
                                     "%" PRIx64 "-%" PRIx64 " rw-p 00000000 00:00 0 \n",
                                     cell_hva(fd, c), end);
        used += (size_t)snprintf(text + used, sizeof(text) - used,
                                 "%" PRIx64 "-%" PRIx64 " ---p 00000000 00:00 0 \n", end,
                                 end + (uint64_t)FAKE_PAGE);
    }
    if (!used)
        text[0] = '\0';
    snprintf(rel, sizeof(rel), "proc/%d/maps", (int)pid);
    put(rel, text);
    for (unsigned v = 0; v < fd->nr_vcpus; v++) {
        pid_t tid = vcpu_tid(fd, v);
        char list[64];
        snprintf(rel, sizeof(rel), "proc/%d", (int)tid);
        mkdirs(rel);
        snprintf(rel, sizeof(rel), "proc/%d/task/%d", (int)pid, (int)tid);
        mkdirs(rel);
        nspid_line(fd, tid, fd->pidns_base + 1 + (pid_t)v, nsl, sizeof(nsl));
        snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", (int)pid, (int)tid);
        snprintf(text, sizeof(text), "Name:\tCPU %u/KVM\n%s", v, nsl);
        put(rel, text);
        snprintf(rel, sizeof(rel), "proc/%d/schedstat", (int)tid);
        snprintf(text, sizeof(text), "%" PRIu64 " 0 0\n", fd->cpu_ns[v]);
        put(rel, text);
        /* utime and stime (fields 14, 15) are not read while schedstat is there; the CPU it
         * last ran on is field 39 */
        snprintf(rel, sizeof(rel), "proc/%d/stat", (int)tid);
        snprintf(text, sizeof(text),
                 "%d (CPU %u/KVM) S 1 1 1 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 "
                 "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 -1 %d 0 0 0 0 0\n",
                 (int)tid, v, cpuset_first(&fd->pin[v]));
        put(rel, text);
        (void)cpuset_format(&fd->pin[v], list, sizeof(list));
        snprintf(rel, sizeof(rel), "proc/%d/status", (int)tid);
        snprintf(text, sizeof(text), "Name:\tCPU %u/KVM\nTgid:\t%d\nCpus_allowed_list:\t%s\n", v,
                 (int)pid, list);
        put(rel, text);
    }
}

/* ---- guest memory ---- */

void fake_node_sync(unsigned n)
{
    char rel[64], text[160];

    snprintf(rel, sizeof(rel), "sys/devices/system/node/node%u/meminfo", n);
    snprintf(text, sizeof(text),
             "Node %u MemTotal: %" PRIu64 " kB\nNode %u MemFree: %" PRIu64 " kB\n", n,
             (uint64_t)(FAKE_NODE_BYTES / 1024), n, fh.node_free[n] / 1024);
    put(rel, text);
}

void fake_dom_memory(fake_dom *fd, unsigned nr_cells, unsigned mib, unsigned node)
{
    uint64_t pages;

    pthread_mutex_lock(&fh.lock);
    if (nr_cells > fd->nr_vcpus || node >= FAKE_NODES || fd->page_node)
        abort();
    fd->nr_cells = nr_cells;
    fd->cell_bytes = (uint64_t)mib << 20;
    pages = fd->cell_bytes / FAKE_PAGE * VN_MAX(nr_cells, 1u);
    fd->page_node = malloc(pages);
    if (!fd->page_node)
        abort();
    memset(fd->page_node, (int)node, pages);
    fd->nr_pages = pages;
    fh.node_free[node] -= pages * FAKE_PAGE;
    fake_node_sync(node);
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_touch(fake_dom *fd, uint64_t kib)
{
    pthread_mutex_lock(&fh.lock);
    fd->rss_extra_kib += kib;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

uint64_t fake_dom_pages_on(fake_dom *fd, unsigned cell, unsigned node)
{
    uint64_t per = fd->cell_bytes / FAKE_PAGE, n = 0;

    pthread_mutex_lock(&fh.lock);
    for (uint64_t i = per * cell; i < per * (cell + 1) && i < fd->nr_pages; i++)
        n += fd->page_node[i] == node;
    pthread_mutex_unlock(&fh.lock);
    return n;
}

void fake_node_set_free(unsigned n, uint64_t bytes)
{
    pthread_mutex_lock(&fh.lock);
    fh.node_free[n] = fh.min_free[n] = bytes;
    fake_node_sync(n);
    pthread_mutex_unlock(&fh.lock);
}

uint64_t fake_node_min_free(unsigned n)
{
    uint64_t b;

    pthread_mutex_lock(&fh.lock);
    b = fh.min_free[n];
    pthread_mutex_unlock(&fh.lock);
    return b;
}

unsigned fake_move_calls(void)
{
    unsigned n;

    pthread_mutex_lock(&fh.lock);
    n = fh.move_calls;
    pthread_mutex_unlock(&fh.lock);
    return n;
}

/* The page of the domain with QEMU pid `pid` at address p: its index, or -1. */
static int64_t page_of(const fake_dom *fd, void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p, base = cell_hva(fd, 0);
    uint64_t c, off, span = fd->cell_bytes + FAKE_HVA_GAP;

    if (a < base)
        return -1;
    c = (a - base) / span;
    off = (a - base) % span;
    if (c >= VN_MAX(fd->nr_cells, 1u) || off >= fd->cell_bytes)
        return -1;
    return (int64_t)((c * fd->cell_bytes + off) / FAKE_PAGE);
}

static fake_dom *dom_of_pid(pid_t pid)
{
    for (unsigned i = 0; i < FAKE_MAX_DOMS; i++)
        if (fh.doms[i].used && fh.doms[i].running && fake_qemu_pid(&fh.doms[i]) == pid &&
            fh.doms[i].page_node)
            return &fh.doms[i];
    return NULL;
}

bool fake_dom_first_moved(fake_dom *fd, uint64_t *ret_gpa)
{
    bool moved;

    pthread_mutex_lock(&fh.lock);
    moved = fd->moved_any;
    if (moved)
        *ret_gpa = fd->first_moved;
    pthread_mutex_unlock(&fh.lock);
    return moved;
}

void fake_query_calls(unsigned *total, unsigned *at_wait)
{
    pthread_mutex_lock(&fh.lock);
    *total = fh.query_calls;
    *at_wait = fh.query_calls_at_wait;
    pthread_mutex_unlock(&fh.lock);
}

static int fake_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    fake_dom *fd;

    pthread_mutex_lock(&fh.lock);
    fh.query_calls++;
    fd = dom_of_pid(pid);
    if (!fd) {
        pthread_mutex_unlock(&fh.lock);
        return -ESRCH;
    }
    for (unsigned long i = 0; i < count; i++) {
        int64_t k = page_of(fd, pages[i]);
        status[i] = k < 0 ? -EFAULT : fd->page_node[k];
    }
    pthread_mutex_unlock(&fh.lock);
    return 0;
}

static int fake_move(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
                     bool all)
{
    fake_dom *fd;

    (void)all;
    pthread_mutex_lock(&fh.lock);
    fd = dom_of_pid(pid);
    if (!fd) {
        pthread_mutex_unlock(&fh.lock);
        return -ESRCH;
    }
    fh.move_calls++;
    for (unsigned long i = 0; i < count; i++) {
        int64_t k = page_of(fd, pages[i]);
        int to = nodes[i];
        if (k < 0 || to < 0 || to >= (int)FAKE_NODES) {
            status[i] = -EFAULT;
            continue;
        }
        if (fd->page_node[k] != to) {
            if (fh.node_free[to] < FAKE_PAGE) {
                status[i] = -ENOMEM; /* the kernel found no room */
                continue;
            }
            if (!fd->moved_any) /* (the cells' RAM is contiguous from guest-physical 0) */
                fd->first_moved = (uint64_t)k * FAKE_PAGE;
            fd->moved_any = true;
            fh.node_free[fd->page_node[k]] += FAKE_PAGE;
            fh.node_free[to] -= FAKE_PAGE;
            fh.min_free[to] = VN_MIN(fh.min_free[to], fh.node_free[to]);
            fd->page_node[k] = (uint8_t)to;
        }
        status[i] = to;
    }
    for (unsigned n = 0; n < FAKE_NODES; n++)
        fake_node_sync(n);
    pthread_mutex_unlock(&fh.lock);
    return 0;
}

static int fake_file_policy(const char *fd_path, size_t off, size_t len, const vn_mempolicy *want,
                            vn_mempolicy *old)
{
    (void)fd_path, (void)off, (void)len, (void)want, (void)old;
    return -ENOSYS; /* the fake guests' memory is anonymous */
}

static long long fake_node_free(int node)
{
    long long b;

    if (node < 0 || node >= (int)FAKE_NODES)
        return -EINVAL;
    pthread_mutex_lock(&fh.lock);
    b = (long long)fh.node_free[node];
    pthread_mutex_unlock(&fh.lock);
    return b;
}

const numa_ops fake_numa = {
    .query = fake_query,
    .move = fake_move,
    .file_policy = fake_file_policy,
    .node_free = fake_node_free,
    .thread_safe = true,
};

/* ---- the monitor ---- */

/* The memory backend of guest cell c: QEMU names it ram-nodeN, or after the machine. */
static char *reply_cpus(const fake_dom *fd)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);

    if (!f)
        return NULL;
    fputs("{\"return\":[", f);
    for (unsigned v = 0; v < fd->nr_vcpus; v++) {
        char node[32] = "";
        if (fd->nr_cells)
            snprintf(node, sizeof(node), "\"node-id\":%u,", vcpu_cell(fd, v));
        fprintf(f,
                "%s{\"thread-id\":%d,\"props\":{\"core-id\":%u,\"thread-id\":0,%s\"socket-id\":0},"
                "\"qom-path\":\"/machine/unattached/device[%u]\",\"cpu-index\":%u,"
                "\"target\":\"x86_64\"}",
                v ? "," : "", (int)reported_tid(fd, v), v, node, v, v);
    }
    fputs("],\"id\":\"libvirt-1\"}", f);
    fclose(f);
    return s;
}

static char *reply_memdev(const fake_dom *fd)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);

    if (!f)
        return NULL;
    fputs("{\"return\":[", f);
    for (unsigned c = 0; c < VN_MAX(fd->nr_cells, 1u); c++) {
        char id[32];
        backend_id(fd, c, id, sizeof(id));
        fprintf(f,
                "%s{\"share\":false,\"reserve\":true,\"prealloc\":false,\"host-nodes\":[],"
                "\"size\":%" PRIu64 ",\"merge\":true,\"dump\":true,\"policy\":\"default\","
                "\"id\":\"%s\"}",
                c ? "," : "", fd->cell_bytes, id);
    }
    fputs("],\"id\":\"libvirt-2\"}", f);
    fclose(f);
    return s;
}

static char *reply_mtree(const fake_dom *fd)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);

    if (!f)
        return NULL;
    fputs("FlatView #0\n AS \"memory\", root: system\n Root memory region: system\n", f);
    for (unsigned c = 0; c < VN_MAX(fd->nr_cells, 1u); c++) {
        char id[32];
        backend_id(fd, c, id, sizeof(id));
        fprintf(f, "  %016" PRIx64 "-%016" PRIx64 " (prio 0, ram): %s\n", fd->cell_bytes * c,
                fd->cell_bytes * (c + 1) - 1, id);
    }
    fclose(f);
    return s;
}

int fake_qemu_qmp(fake_dom *fd, const char *cmd, char **ret_reply)
{
    char *r;

    if (!fd->page_node)
        return -EPERM; /* a domain without fake_dom_memory() has no monitor */
    if (strstr(cmd, "\"query-cpus-fast\""))
        r = reply_cpus(fd);
    else if (strstr(cmd, "\"query-memdev\""))
        r = reply_memdev(fd);
    else if (strstr(cmd, "\"query-memory-devices\""))
        r = strdup("{\"return\":[],\"id\":\"libvirt-3\"}");
    else /* qom-set, object-add: the decision object */
        r = strdup("{\"return\":{},\"id\":\"libvirt-4\"}");
    if (!r)
        return -ENOMEM;
    *ret_reply = r;
    return 0;
}

int fake_qemu_hmp(fake_dom *fd, const char *cmd, char **ret_reply)
{
    unsigned long long gpa;
    char *r = NULL;

    if (!fd->page_node)
        return -EPERM;
    if (strcmp(cmd, "info mtree -f") == 0) {
        r = reply_mtree(fd);
    } else if (sscanf(cmd, "gpa2hva 0x%llx", &gpa) == 1) {
        uint64_t c = gpa / fd->cell_bytes;
        if (c >= VN_MAX(fd->nr_cells, 1u)) {
            if (asprintf(&r, "No memory is mapped at address 0x%llx\n", gpa) < 0)
                r = NULL;
        } else {
            char id[32];
            backend_id(fd, (unsigned)c, id, sizeof(id));
            if (asprintf(&r, "Host virtual address for 0x%llx (%s) is 0x%" PRIx64 "\n", gpa, id,
                         (uint64_t)(cell_hva(fd, (unsigned)c) + (gpa - c * fd->cell_bytes))) < 0)
                r = NULL;
        }
    } else {
        return -EINVAL;
    }
    if (!r)
        return -ENOMEM;
    *ret_reply = r;
    return 0;
}
