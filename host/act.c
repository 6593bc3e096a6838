/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "act.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "domxml.h"
#include "holds.h"
#include "log.h"
#include "metadata.h"
#include "rules.h"
#include "util.h"

#define ACT_PAGE_SIZE     4096ULL
#define ACT_RESERVE_SLACK RESERVE_SLACK_BYTES
/* MPOL_PREFERRED of <numaif.h> (not included here: numa_ops.c is the only libnuma user) */
#define MPOL_PREFERRED_MODE 1

void act_budget_init(act_budget *b, unsigned rate_mib, double interval_s, double now_s)
{
    b->rate_bytes_s = (double)rate_mib * (double)VN_MIB;
    b->max_tokens = b->rate_bytes_s * VN_MAX(interval_s, 1.0);
    b->tokens = b->max_tokens;
    b->last_s = now_s;
    b->deadline_s = 0;
}

void act_budget_refill(act_budget *b, double now_s)
{
    if (now_s > b->last_s)
        b->tokens = VN_MIN(b->max_tokens, b->tokens + (now_s - b->last_s) * b->rate_bytes_s);
    b->last_s = now_s;
}

/* irqbalance's activate.c sorts errors the same way: retry what may pass, stop on the rest. */
act_error_kind act_classify(int err)
{
    switch (-err) {
    case 0:
        return ACT_OK;
    case EAGAIN:
    case EBUSY:
    case ENOMEM:
    case EIO:
    case EINTR:
        return ACT_TRANSIENT;
    case ESRCH:
        return ACT_GONE;
    case ENOTCONN:
        return ACT_DISCONNECTED;
    default:
        return ACT_PERMANENT;
    }
}

static void fail(act_result *res, int err, const char *what)
{
    if (res->kind != ACT_OK)
        return; /* keep the first */
    res->kind = act_classify(err);
    res->err = err;
    snprintf(res->error, sizeof(res->error), "%s: %s", what, strerror(-err));
}

/*
 * After libvirt pinned a vCPU, the thread must really have that affinity: on some
 * libvirt/cgroup v2 combinations a pin that widens the set is reported but the thread
 * keeps the narrower one (seen in the proving ground). Check with sched_getaffinity()
 * and set it directly when they differ. Returns 1 when it had to fix, 0, or -errno.
 */
int act_thread_affinity(pid_t tid, const vn_cpuset *want)
{
    cpu_set_t cur, set;
    vn_cpuset have;

    if (tid <= 0)
        return 0;
    if (sched_getaffinity(tid, sizeof(cur), &cur) < 0)
        return errno == ESRCH ? 0 : -errno;
    cpuset_zero(&have);
    for (unsigned c = 0; c < CPU_SETSIZE && c < VN_MAX_CPUS; c++)
        if (CPU_ISSET(c, &cur))
            cpuset_set(&have, c);
    if (cpuset_equal(&have, want))
        return 0;
    CPU_ZERO(&set);
    CPUSET_FOREACH(cpu, want)
    {
        if (cpu < CPU_SETSIZE)
            CPU_SET((unsigned)cpu, &set);
    }
    if (sched_setaffinity(tid, sizeof(set), &set) < 0)
        return errno == ESRCH ? 0 : -errno;
    return 1;
}

static int pin_vcpu(virt_dom *d, dom_state *st, unsigned vcpu, const vn_cpuset *cpus)
{
    int r = virt_pin_vcpu(d, vcpu, cpus);

    if (r < 0 || vcpu >= STATE_MAX_VCPUS)
        return r;
    r = act_thread_affinity(st->vcpu_tid[vcpu], cpus);
    if (r > 0)
        st->count.affinity_fixups++;
    return r < 0 ? r : 0;
}

static const ram_range *find_ram(const dom_state *st, unsigned cell)
{
    for (unsigned i = 0; i < st->nr_ram; i++)
        if (st->ram[i].cell == cell)
            return &st->ram[i];
    return NULL;
}

void act_mem_refused(dom_state *st, unsigned ri, uint64_t moved, uint64_t unmovable,
                     act_cell_result *cr)
{
    if (!unmovable || moved || ri >= 64)
        return;
    if (!(st->mem_refused & (1ULL << ri)))
        log_warn(
            "Guest memory of cell %u of '%s' would not move (%llu pages refused: held by the kernel, e.g. io_uring or RDMA buffers); it stays where it is and its vCPUs go to it until QEMU restarts",
            st->ram[ri].cell, st->name, (unsigned long long)unmovable);
    st->mem_refused |= 1ULL << ri;
    cr->refused = true;
}

static uint64_t node_reserve(const topology *t, const vn_config *c, unsigned n)
{
    return VN_MAX(c->reserve_bytes,
                  (uint64_t)((double)t->nodes[n].mem_total * c->reserve_fraction));
}

/* One range to move and where its pages may go (move_range). */
typedef struct move_req {
    pid_t pid;
    uint64_t hva, len;
    uint64_t page_size; /* the backend's (sample.c): counted, moved and charged in it */
    bool shared;        /* MPOL_MF_MOVE_ALL */
    bool hugetlb;       /* room is the target's free huge pages of page_size, not MemFree */
    int from, to;       /* kernel nodes */
    uint64_t want;      /* bytes */
    uint32_t batch;     /* pages per window */
    uint64_t reserve;   /* bytes of MemFree the target keeps (not for hugetlb) */
    const char *domain; /* whose memory (a test hold says it) */
} move_req;

/* Pages of the window the target has room for: free huge pages of the size, or MemFree
 * above the reserve and its slack. Sets cr->reserve_hit when it is fewer than k. */
static unsigned room_pages(const numa_ops *ops, const move_req *m, unsigned k, act_cell_result *cr)
{
    if (m->hugetlb) {
        long long free_p = ops->node_free_huge ? ops->node_free_huge(m->to, m->page_size) : -1;
        if (free_p >= 0 && (uint64_t)free_p < k) {
            cr->reserve_hit = true;
            return (unsigned)free_p;
        }
        return k;
    }
    long long free_b = ops->node_free(m->to);
    uint64_t floor = m->reserve + ACT_RESERVE_SLACK;
    /* the kernel allocates too while pages migrate (and others use the node): keep a slack
     * above the reserve so the node never dips below it */
    if (free_b >= 0 && (uint64_t)free_b < floor + (uint64_t)k * m->page_size) {
        uint64_t room = (uint64_t)free_b > floor ? (uint64_t)free_b - floor : 0;
        cr->reserve_hit = true;
        return (unsigned)VN_MIN((uint64_t)k, room / m->page_size);
    }
    return k;
}

/*
 * Move up to m->want bytes of the range that sit on kernel node m->from to m->to. Walks the
 * range in windows of m->batch pages of the backend's page size: one status query, then one
 * move of the pages found on `from` (rule 5: no call covers more than a window; a page of
 * 1 GiB or more is a window of its own). The walk starts at page *resume and wraps around;
 * when the budget, the reserve (for hugetlb: the target's free huge pages) or the pass's
 * deadline stops it, *resume is where the next pass goes on, so a move spread over many
 * passes does not query the part it finished again every pass.
 */
static int move_range(const numa_ops *ops, const move_req *m, act_budget *budget, uint64_t *resume,
                      act_cell_result *cr, dom_counters *count)
{
    uint64_t ps = m->page_size ? m->page_size : ACT_PAGE_SIZE;
    uint32_t batch = ps >= ACT_ONE_PAGE_PER_CALL ? 1 : VN_MAX(m->batch, 1u);
    _cleanup_free_ void **pages = calloc(batch, sizeof(void *));
    _cleanup_free_ void **sel = calloc(batch, sizeof(void *));
    _cleanup_free_ int *status = calloc(batch, sizeof(int));
    _cleanup_free_ int *nodes = calloc(batch, sizeof(int));
    uint64_t npages = m->len / ps, moved = 0, start, done;
    move_req req = *m;
    int r;

    req.page_size = ps;
    if (!pages || !sel || !status || !nodes)
        return -ENOMEM;
    start = *resume < npages ? *resume : 0;
    for (done = 0; done < npages && moved < m->want;) {
        uint64_t off = (start + done) % npages;
        unsigned n = (unsigned)VN_MIN((uint64_t)batch, npages - off), k = 0, now = 0, told = 0;

        if (budget->deadline_s > 0 && vn_mono_s() > budget->deadline_s) {
            cr->budget_exhausted = true; /* out of time this pass: the rest follows */
            cr->deadline_hit = true;
            break;
        }
        done += n;
        for (unsigned i = 0; i < n; i++)
            pages[i] = (void *)(uintptr_t)(m->hva + (off + i) * ps);
        r = ops->query(m->pid, n, pages, status);
        count->memory_scans++;
        if (r < 0)
            return r;
        for (unsigned i = 0; i < n && (moved + (uint64_t)(k + 1) * ps) <= VN_MAX(m->want, ps); i++)
            if (status[i] == m->from) {
                sel[k] = pages[i];
                nodes[k] = m->to;
                k++;
            }
        if (k == 0)
            continue;
        if (budget->tokens < (double)k * (double)ps) {
            k = (unsigned)(budget->tokens / (double)ps);
            cr->budget_exhausted = true;
            /* a page larger than the whole bucket moves when the bucket is full, and the
             * debt is paid off before anything else moves */
            if (k == 0 && budget->tokens >= budget->max_tokens && (double)ps > budget->max_tokens)
                k = 1;
            if (k == 0) {
                done -= n; /* this window is where the next pass starts */
                break;
            }
        }
        unsigned fit = room_pages(ops, &req, k, cr);
        if (fit == 0) {
            done -= n;
            break;
        }
        k = fit;
        /* a positive return is pages not moved, and the kernel may stop before the end: only
         * a status it wrote counts as moved */
        for (unsigned i = 0; i < k; i++)
            status[i] = ACT_STATUS_UNSET;
        r = ops->move(m->pid, k, sel, nodes, status, m->shared);
        if (r < 0)
            return r;
        if (r > 0) {
            /* Linux stores no status for a batch whose migration failed in part (a
             * long-term pin holds some pages: io_uring, RDMA), moved pages included, and
             * returns how many did not move: ask where the pages are now */
            int q = ops->query(m->pid, k, sel, status);
            count->memory_scans++;
            if (q < 0)
                return q;
        }
        for (unsigned i = 0; i < k; i++) {
            if (status[i] == m->to)
                now++;
            else if (status[i] != ACT_STATUS_UNSET)
                told++; /* refused (-errno), or still on its node */
        }
        cr->pages_unmovable += told;
        count->pages_unmovable += told;
        moved += (uint64_t)now * ps;
        cr->pages_moved += now;
        budget->tokens -= (double)now * (double)ps; /* charged for what moved */
        if (now)
            holds_point(HOLD_MOVE, 0, m->domain); /* a test's, between two batches */
        if (cr->budget_exhausted || cr->reserve_hit) {
            done -= n; /* part of this window may be left */
            break;
        }
    }
    *resume = (start + done) % (npages ? npages : 1);
    cr->bytes_moved += moved;
    count->bytes_moved += moved;
    count->pages_moved += moved / ps;
    return 0;
}

/*
 * Set the policy of the shared backend mapped at [hva, hva+len) in QEMU: each VMA of
 * /proc/PID/maps that overlaps it is opened through /proc/PID/map_files and mbind()ed, which
 * sets the policy of the shared object itself, so the pages QEMU (or vhost-user, virtiofsd)
 * faults in later follow it. When old is not NULL it gets the policy the backend had (of its
 * first piece).
 */
static int backend_policy(const numa_ops *ops, pid_t pid, uint64_t hva, uint64_t len,
                          const vn_mempolicy *want, vn_mempolicy *old)
{
    char path[64], line[512];
    _cleanup_fclose_ FILE *f = NULL;
    unsigned pieces = 0;
    int r = 0;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f) && r == 0) {
        unsigned long long start, end, off;
        char fpath[128];
        if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3)
            continue;
        if (end <= hva || start >= hva + len)
            continue;
        uint64_t a = VN_MAX(start, hva), b = VN_MIN(end, hva + len);
        snprintf(fpath, sizeof(fpath), "/proc/%d/map_files/%llx-%llx", (int)pid, start, end);
        r = ops->file_policy(fpath, (size_t)(off + (a - start)), (size_t)(b - a), want,
                             pieces == 0 ? old : NULL);
        pieces++;
    }
    if (r == 0 && pieces == 0)
        return -ENOENT;
    return r;
}

bool act_policy_due(const topology *t, const dom_state *st, const snap_cell *sc,
                    const plan_cell *pc)
{
    const ram_range *ram = find_ram(st, pc->cell_id);

    if (!ram || !ram->shared || ram->hugetlb || pc->target_node < 0 ||
        pc->cell_id >= SNAP_MAX_CELLS_PER_DOMAIN || (pc->rules & RULE_BIT(RULE_CPUSET_SKIP)) ||
        sc->mem_pinned != MEM_PIN_NONE || sc->binding.mode != VN_MEM_NONE)
        return false;
    return st->memfd_bound[pc->cell_id] != (int)t->nodes[pc->target_node].os_index + 1;
}

int act_unbind_memfd(const numa_ops *ops, dom_state *st)
{
    int first = 0;

    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        const ram_range *ram;
        int r;
        if (!(st->orig.memfd_cells & (1ULL << k)) || !(ram = find_ram(st, k)) || st->pid <= 0)
            continue;
        r = backend_policy(ops, st->pid, ram->hva, ram->size, &st->orig.memfd_policy[k], NULL);
        if (r < 0 && !first)
            first = r;
        st->memfd_bound[k] = 0;
    }
    return first;
}

/* A restrictive numatune is changed through libvirt (cgroups move the memory). */
static bool all_restrictive(const snap_domain *sd)
{
    for (unsigned k = 0; k < sd->nr_cells; k++)
        if (sd->cells[k].binding.mode != VN_MEM_RESTRICTIVE)
            return false;
    return sd->nr_cells > 0;
}

static int set_restrictive_nodeset(virt_dom *d, const topology *t, const plan_domain *pd)
{
    char want[STATE_NODESET_MAX], cur[STATE_NODESET_MAX];
    vn_cpuset nodes;
    vn_mem_mode mode;
    int r;

    cpuset_zero(&nodes);
    for (unsigned k = 0; k < pd->nr_cells; k++)
        if (pd->cells[k].target_node >= 0)
            cpuset_set(&nodes, t->nodes[pd->cells[k].target_node].os_index);
    if (cpuset_empty(&nodes) || cpuset_format(&nodes, want, sizeof(want)) < 0)
        return 0;
    r = virt_numa_get(d, &mode, cur, sizeof(cur));
    if (r < 0)
        return r;
    if (mode != VN_MEM_RESTRICTIVE || strcmp(cur, want) == 0)
        return 0;
    return virt_numa_set_nodeset(d, want);
}

/* One cell's moves as one mover runs them (move_cells): what it reads, and what it writes
 * only for itself until the movers are joined. */
typedef struct cell_mover {
    const dom_state *st; /* pid, ram[], mem_refused: read only */
    uint64_t *resume;    /* st->move_resume: only the entries of this cell's ranges */
    const topology *t;
    const plan_cell *pc;
    const numa_ops *ops;
    const vn_config *cfg;
    act_cell_result *cr;
    act_budget budget;        /* this mover's share of the pass's tokens */
    double share;             /* the tokens it was given */
    dom_counters count;       /* added to the domain's once joined */
    uint64_t range_moved[64]; /* per range index: pages moved, pages refused (act_mem_refused) */
    uint64_t range_refused[64];
    int r;
} cell_mover;

/* Each of the cell's ranges in turn: its boot RAM, then its memory devices (pc-dimm,
 * virtio-mem); a bulk move's bytes are taken from them in that order. */
static void cell_mover_run(cell_mover *cm)
{
    const dom_state *st = cm->st;
    const plan_cell *pc = cm->pc;
    act_cell_result *cr = cm->cr;
    _cleanup_free_ uint64_t *done = calloc(pc->nr_moves, sizeof(*done)); /* bytes per move */
    int r = 0;

    if (!done) {
        cm->r = -ENOMEM;
        return;
    }
    for (unsigned ri = 0; ri < st->nr_ram && ri < 64; ri++) {
        const ram_range *ram = &st->ram[ri];
        uint64_t moved0 = cr->pages_moved, unmovable0 = cr->pages_unmovable;
        if (ram->cell != pc->cell_id || (st->mem_refused & (1ULL << ri)))
            continue; /* another cell's, or its pages would not move: it stays */
        for (unsigned m = 0; m < pc->nr_moves; m++) {
            const plan_move *mv = &pc->moves[m];
            uint64_t before = cr->bytes_moved;
            move_req req = {
                .pid = st->pid,
                .domain = st->name,
                .page_size = ram->page_size ? ram->page_size : ACT_PAGE_SIZE,
                .shared = ram->shared,
                .hugetlb = ram->hugetlb,
                .to = (int)cm->t->nodes[mv->to_node].os_index,
                .batch = pc->batch_pages ? pc->batch_pages : LOCK_HOLD_MAX_PAGES,
                .reserve = node_reserve(cm->t, cm->cfg, (unsigned)mv->to_node),
            };
            r = 0;
            if (mv->is_range) {
                /* hot ranges inside one of the cell's ranges go first */
                if (mv->gpa < ram->gpa || mv->gpa + mv->length > ram->gpa + ram->size)
                    continue;
                for (unsigned n = 0; n < cm->t->nr_nodes; n++) {
                    uint64_t from_start = 0;
                    if ((int)n == mv->to_node)
                        continue;
                    req.hva = ram->hva + (mv->gpa - ram->gpa);
                    req.len = mv->length;
                    req.from = (int)cm->t->nodes[n].os_index;
                    req.want = mv->length;
                    r = move_range(cm->ops, &req, &cm->budget, &from_start, cr, &cm->count);
                    if (r < 0)
                        break;
                }
            } else if (done[m] < mv->bytes) {
                req.hva = ram->hva;
                req.len = ram->size;
                req.from = (int)cm->t->nodes[mv->from_node].os_index;
                req.want = mv->bytes - done[m];
                r = move_range(cm->ops, &req, &cm->budget, &cm->resume[ri], cr, &cm->count);
            }
            done[m] += cr->bytes_moved - before;
            if (r < 0) {
                cm->r = r;
                return;
            }
            if (cr->budget_exhausted || cr->reserve_hit)
                break;
        }
        cm->range_moved[ri] = cr->pages_moved - moved0;
        cm->range_refused[ri] = cr->pages_unmovable - unmovable0;
        if (cr->budget_exhausted || cr->reserve_hit)
            break;
    }
}

/* The movers of one act stage: each thread takes the next cell not yet taken. */
typedef struct mover_pool {
    cell_mover *movers;
    unsigned nr;
    atomic_uint next;
} mover_pool;

static void *mover_thread(void *arg)
{
    mover_pool *p = arg;
    unsigned k;

    while ((k = atomic_fetch_add(&p->next, 1)) < p->nr)
        cell_mover_run(&p->movers[k]);
    return NULL;
}

/* Bytes a cell's plan moves: its bulk moves and hot ranges. */
static uint64_t cell_planned_bytes(const plan_cell *pc)
{
    uint64_t b = 0;
    for (unsigned m = 0; m < pc->nr_moves; m++)
        b += pc->moves[m].is_range ? pc->moves[m].length : pc->moves[m].bytes;
    return b;
}

/*
 * The memory moves of a plan. Cells move in parallel, up to ACT_MAX_MOVERS at once (a
 * thread each; the calling thread is one of them): move_pages(2) of one process runs in
 * parallel in the kernel (the pages of different ranges are looked up and copied
 * independently), and one thread moved at 0.31-0.32 of memcpy (docs/benchmarks.md). The
 * pass's tokens are split among the cells in proportion to what each plans to move, and
 * the deadline is the pass's; what moved is charged to the budget once all are joined. Two
 * cells moving into one node each check its free memory before every window: together they
 * may take one window more each than a single mover would, within the reserve's slack.
 */
static int move_cells(dom_state *st, const topology *t, const plan_domain *pd, const numa_ops *ops,
                      act_budget *budget, const vn_config *cfg, act_result *res)
{
    _cleanup_free_ cell_mover *movers = calloc(SNAP_MAX_CELLS_PER_DOMAIN, sizeof(*movers));
    pthread_t threads[ACT_MAX_MOVERS];
    mover_pool pool = {.movers = movers};
    uint64_t planned[SNAP_MAX_CELLS_PER_DOMAIN], total = 0;
    unsigned nr_threads = 0, want;
    double spent = 0;
    int r = 0;

    if (st->pid <= 0)
        return 0;
    if (!movers) {
        fail(res, -ENOMEM, "move guest memory");
        return -ENOMEM;
    }
    for (unsigned k = 0; k < res->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        if (!pc->nr_moves)
            continue;
        planned[pool.nr] = VN_MAX(cell_planned_bytes(pc), 1);
        total += planned[pool.nr];
        movers[pool.nr] = (cell_mover){.st = st,
                                       .resume = st->move_resume,
                                       .t = t,
                                       .pc = pc,
                                       .ops = ops,
                                       .cfg = cfg,
                                       .cr = &res->cells[k],
                                       .budget = *budget};
        pool.nr++;
    }
    if (!pool.nr)
        return 0;
    /* each its share; a share is "full" exactly when the bucket is (a page larger than the
     * bucket moves only then: move_range) */
    for (unsigned i = 0; i < pool.nr; i++) {
        double f = (double)planned[i] / (double)total;
        movers[i].share = budget->tokens * f;
        movers[i].budget.tokens = movers[i].share;
        movers[i].budget.max_tokens = budget->max_tokens * f;
    }
    atomic_init(&pool.next, 0);
    want = ops->thread_safe
               ? VN_MIN(pool.nr, VN_MIN(VN_MAX(cfg->move_threads, 1u), (unsigned)ACT_MAX_MOVERS))
               : 1;
    while (nr_threads + 1 < want &&
           pthread_create(&threads[nr_threads], NULL, mover_thread, &pool) == 0)
        nr_threads++;
    mover_thread(&pool);
    for (unsigned i = 0; i < nr_threads; i++)
        pthread_join(threads[i], NULL);
    for (unsigned i = 0; i < pool.nr; i++) {
        cell_mover *cm = &movers[i];
        spent += cm->share - cm->budget.tokens;
        st->count.memory_scans += cm->count.memory_scans;
        st->count.pages_moved += cm->count.pages_moved;
        st->count.bytes_moved += cm->count.bytes_moved;
        st->count.pages_unmovable += cm->count.pages_unmovable;
        for (unsigned ri = 0; ri < st->nr_ram && ri < 64; ri++)
            if (cm->range_refused[ri])
                act_mem_refused(st, ri, cm->range_moved[ri], cm->range_refused[ri], cm->cr);
        if (cm->r < 0 && r == 0)
            r = cm->r;
    }
    budget->tokens -= spent;
    if (r < 0)
        fail(res, r, "move guest memory");
    return r;
}

int act_apply(virt_dom *d, dom_state *st, const topology *t, const snap_domain *sd,
              const plan_domain *pd, const numa_ops *ops, act_budget *budget, const vn_config *cfg,
              act_result *res)
{
    int main_node = -1, r;
    uint64_t main_bytes = 0;
    bool any_pin = false, restrictive = all_restrictive(sd);

    memset(res, 0, sizeof(*res));
    res->nr_cells = VN_MIN(pd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN);
    for (unsigned k = 0; k < res->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        uint64_t bytes = 0;
        for (unsigned n = 0; n < t->nr_nodes; n++)
            bytes += sd->cells[k].pages[n] * sd->cells[k].page_size;
        if (pc->target_node >= 0 && sd->cells[k].nr_vcpus > 0 &&
            (main_node < 0 || bytes > main_bytes)) {
            main_node = pc->target_node;
            main_bytes = bytes;
        }
        for (unsigned i = 0; i < pc->nr_pins; i++) {
            r = pin_vcpu(d, st, pc->pins[i].vcpu, &pc->pins[i].cpus);
            if (r < 0) {
                char what[64];
                snprintf(what, sizeof(what), "pin vCPU %u", pc->pins[i].vcpu);
                fail(res, r, what);
                return r;
            }
            res->cells[k].pins_done++;
            st->count.pins++;
            any_pin = true;
        }
    }
    /* The emulator thread goes with the domain's main node (its largest cell), unless the
     * operator pinned it in the domain's XML (act_operator_pins): an emulator pinned away
     * from realtime vCPUs must stay there. */
    if (any_pin && main_node >= 0) {
        vn_cpuset want = t->nodes[main_node].cpus, cur, allowed;
        cpuset_zero(&allowed);
        for (unsigned k = 0; k < sd->nr_cells; k++)
            for (unsigned v = 0; v < sd->cells[k].nr_vcpus; v++)
                cpuset_or(&allowed, &allowed, &sd->cells[k].vcpus[v].allowed);
        cpuset_and(&want, &want, &allowed);
        if (!cpuset_empty(&want) && st->cputune_known && !st->emulator_explicit &&
            virt_emulator_pin(d, &cur) == 0 && !cpuset_equal(&cur, &want)) {
            r = virt_pin_emulator(d, &want);
            if (r < 0) {
                fail(res, r, "pin emulator");
                return r;
            }
            res->emulator_pinned = true;
        }
        /* IOThreads serve the guest's devices: they go with the emulator */
        if (!cpuset_empty(&want)) {
            _cleanup_free_ unsigned *ids = NULL;
            _cleanup_free_ vn_cpuset *pins = NULL;
            unsigned nio = 0;
            if (virt_iothreads(d, &ids, &pins, &nio) == 0)
                for (unsigned i = 0; i < nio; i++) {
                    if (cpuset_equal(&pins[i], &want) || act_iothread_explicit(st, ids[i]))
                        continue;
                    r = virt_pin_iothread(d, ids[i], &want);
                    if (r < 0) {
                        fail(res, r, "pin IOThread");
                        return r;
                    }
                }
        }
    }
    if (restrictive) {
        r = set_restrictive_nodeset(d, t, pd);
        if (r < 0) {
            fail(res, r, "set restrictive numatune nodeset");
            return r;
        }
        return 0;
    }
    r = move_cells(st, t, pd, ops, budget, cfg, res);
    if (r < 0)
        return r;
    /* Shared (memfd, tmpfs) backends: the target becomes the backend's preferred node, so
     * the pages QEMU or a vhost-user process faults in later land there too (an anonymous
     * backend follows the vCPUs that fault it in). Preferred, not bind: a full node must not
     * OOM the guest. The backend's own policy is saved before the first change and put
     * back on opt-out. hugetlbfs has no shared policy (mbind would set this one mapping's
     * only): nothing is set, and nothing recorded. A cell with a numatune (strict,
     * preferred, interleave) has the operator's policy: it is never replaced. */
    for (unsigned k = 0; k < res->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        const ram_range *ram = find_ram(st, pc->cell_id);
        vn_mempolicy want = {.mode = MPOL_PREFERRED_MODE}, old;
        bool first;
        int node;
        if (st->pid <= 0 || !act_policy_due(t, st, &sd->cells[k], pc))
            continue;
        node = (int)t->nodes[pc->target_node].os_index;
        cpuset_set(&want.nodes, (unsigned)node);
        first = !(st->orig.memfd_cells & (1ULL << pc->cell_id));
        r = backend_policy(ops, st->pid, ram->hva, ram->size, &want, first ? &old : NULL);
        if (r < 0) {
            fail(res, r, "set the shared memory backend's preferred node");
            return r;
        }
        if (first) {
            st->orig.memfd_policy[pc->cell_id] = old;
            st->orig.memfd_cells |= 1ULL << pc->cell_id;
        }
        st->memfd_bound[pc->cell_id] = node + 1;
        res->memfd_bound++;
    }
    return 0;
}
