/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Properties of the decide stage (host/decide.c) over hundreds of random
 * snapshots on every bundled topology: allowed sets, capacity, free-memory
 * reserve, determinism, idempotence, that domains which did not opt in never
 * appear, and that the order of domains does not matter; on hosts with a lower
 * memory tier under memory pressure, that no memory moves twice.
 */
#include <dirent.h>
#include <json-c/json.h>
#include <string.h>

#include "decide-fixture.h"
#include "decide.h"
#include "plan_apply.h"
#include "record.h"
#include "rules.h"
#include "tap.h"
#include "util.h"

/* ---------- properties over random snapshots ---------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static unsigned rndn(unsigned n)
{
    return n ? (unsigned)(rnd() % n) : 0;
}

static int random_cpu_node(const topology *t)
{
    unsigned cands[VN_MAX_NODES], nr = 0;

    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (!t->nodes[n].cpuless)
            cands[nr++] = n;
    return nr ? (int)cands[rndn(nr)] : -1;
}

/* random_snapshot() puts some nodes short of room (memory pressure: test_tiers_pressure) */
static bool squeeze;

static void random_snapshot(const topology *t, snapshot *s)
{
    unsigned nd = 1 + rndn(8), vid;
    double budget = t->nr_cpus * 0.4; /* total busy vCPUs stay below 40% of the CPUs */

    snap_init(s);
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        s->other_busy[n] = t->nodes[n].cpuless ? 0 : rndn(2);
        if (squeeze && rndn(4) == 0) { /* a node short of room: little above its reserve */
            s->free_known[n] = true;
            s->free_bytes[n] = VN_MAX(256 * MIB, (uint64_t)((double)t->nodes[n].mem_total * 0.03)) +
                               rnd() % (t->nodes[n].mem_total / 64 + 1);
        }
    }
    for (unsigned i = 0; i < nd; i++) {
        char name[32];
        unsigned m = rndn(10);
        snprintf(name, sizeof(name), "dom%u", i);
        snap_domain *d = add_domain(s, name,
                                    m < 6   ? VN_MODE_AUTO
                                    : m < 8 ? VN_MODE_ADVISE
                                            : VN_MODE_OFF,
                                    rndn(10), rndn(2) ? random_cpu_node(t) : -1);
        d->priority = (int)rndn(3) - 1;
        d->tier = (vn_tier)rndn(VN_TIER_MAX);
        if (rndn(5) == 0)
            d->allowed_nodes = nodeset_from_u64((rnd() & ((1ULL << t->nr_nodes) - 1)) |
                                                (1ULL << random_cpu_node(t)));
        vid = 0;
        for (unsigned k = 0, nc = 1 + rndn(4); k < nc; k++) {
            vn_cpuset allowed = t->cpus, pinned;
            unsigned nv = 1 + rndn(4);
            if (rndn(10) < 2) { /* a cgroup or vcpupin limit that cuts through nodes */
                cpuset_zero(&allowed);
                CPUSET_FOREACH(cpu, &t->cpus)
                if (rndn(10) < 7)
                    cpuset_set(&allowed, (unsigned)cpu);
                cpuset_set(&allowed, (unsigned)cpuset_first(&t->nodes[random_cpu_node(t)].cpus));
            } else if (rndn(10) < 3) {
                cpuset_zero(&allowed);
                for (unsigned n = 0; n < t->nr_nodes; n++)
                    if (rndn(2))
                        cpuset_or(&allowed, &allowed, &t->nodes[n].cpus);
                cpuset_or(&allowed, &allowed, &t->nodes[random_cpu_node(t)].cpus);
            }
            pinned = allowed;
            if (rndn(2)) {
                cpuset_and(&pinned, &allowed, &t->nodes[random_cpu_node(t)].cpus);
                if (cpuset_empty(&pinned))
                    pinned = allowed;
            }
            snap_cell *c = add_cell(d, nv, vid, 0, &allowed, &pinned);
            vid += nv;
            for (unsigned v = 0; v < nv; v++) {
                double b = (double)rndn(101) / 100.0;
                if (b > 0.25 && budget < 1)
                    b = 0.1;
                if (b > 0.25)
                    budget -= 1;
                c->vcpus[v].busy = b;
                c->vcpus[v].cpu = rndn(2) ? cpuset_first(&pinned) : -1;
            }
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                uint64_t cap = t->nodes[n].mem_total / 64 / PAGE;
                if (rndn(3) == 0 && cap)
                    c->pages[n] = rnd() % cap;
            }
            if (rndn(3) == 0) { /* all on one node */
                uint64_t tot = 0;
                int home = (int)rndn(t->nr_nodes);
                for (unsigned n = 0; n < t->nr_nodes; n++) {
                    tot += c->pages[n];
                    c->pages[n] = 0;
                }
                c->pages[home] = VN_MIN(tot, t->nodes[home].mem_total / 64 / PAGE);
            }
            m = rndn(20);
            if (m == 0)
                c->binding =
                    (vn_mem_binding){VN_MEM_STRICT, nodeset_from_u64(1ULL << random_cpu_node(t))};
            else if (m == 1)
                c->binding = (vn_mem_binding){VN_MEM_INTERLEAVE, nodeset_first_n(t->nr_nodes)};
            else if (m == 2)
                c->binding =
                    (vn_mem_binding){VN_MEM_RESTRICTIVE,
                                     nodeset_from_u64((rnd() & ((1ULL << t->nr_nodes) - 1)) | 1)};
            c->last_candidate = rndn(2) ? (int)rndn(t->nr_nodes) : -1;
            if (rndn(5) == 0) {
                c->nr_hot = 1 + rndn(3);
                c->hot = calloc(c->nr_hot, sizeof(*c->hot));
                for (unsigned h = 0; h < c->nr_hot; h++)
                    c->hot[h] = (snap_hot_range){.gpa = (uint64_t)h << 30,
                                                 .length = 2 * MIB,
                                                 .heat = 1.0 - h * 0.1,
                                                 .shared = rndn(3) == 0};
                if (rndn(2) && snap_cell_hot_nodes(c) == 0) /* counted: some of each node's */
                    for (unsigned n = 0; n < t->nr_nodes; n++)
                        c->hot_pages[n] = c->pages[n] ? rnd() % (c->pages[n] / 2 + 1) : 0;
            }
        }
    }
}

static char *plan_text(const topology *t, const plan *p)
{
    struct json_object *j = record_plan_json(t, p);
    char *s = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    return s;
}

static const snap_domain *snap_find(const snapshot *s, const char *name)
{
    for (unsigned i = 0; i < s->nr_domains; i++)
        if (strcmp(s->domains[i].name, name) == 0)
            return &s->domains[i];
    return NULL;
}

/* Returns a description of the first violated invariant, or NULL. */
/* A wide cell's pin: inside one node of its span. */
static bool in_span(const topology *t, const plan_cell *pc, const vn_cpuset *cpus)
{
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (nodeset_isset(&pc->span, n) && cpuset_subset(cpus, &t->nodes[n].cpus))
            return true;
    return false;
}

static const char *check_invariants(const topology *t, const snapshot *s, const plan *p)
{
    static char why[256];
    vn_config cfg;
    uint64_t into[VN_MAX_NODES] = {0};

    config_defaults(&cfg);
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        const snap_domain *d = snap_find(s, pd->name);
        if (!d || d->mode == VN_MODE_OFF || d->mode != pd->mode)
            return "a planned domain is unknown, not opted in, or has the wrong mode";
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            const snap_cell *c = &d->cells[k];
            bool acts = pc->nr_pins + pc->nr_moves > 0;
            if (acts != (pc->reason == REASON_NONE))
                return "a cell with actions has a no-change reason, or one without has none";
            if (acts && !pc->rules)
                return "actions without a rule";
            if (pc->target_node >= 0 && pc->nr_pins && t->nodes[pc->target_node].cpuless)
                return "vCPUs pinned to a CPU-less node";
            if (pc->target_node >= 0 && pc->nr_pins &&
                !nodeset_allows(&d->allowed_nodes, (unsigned)pc->target_node))
                return "placed outside the domain's allowed nodes";
            for (unsigned m = 0; m < pc->nr_pins; m++) {
                const plan_pin *pin = &pc->pins[m];
                const snap_vcpu *v = NULL;
                for (unsigned x = 0; x < c->nr_vcpus; x++)
                    if (c->vcpus[x].id == pin->vcpu)
                        v = &c->vcpus[x];
                if (!v || cpuset_empty(&pin->cpus) || !cpuset_subset(&pin->cpus, &v->allowed))
                    return "a pin outside the vCPU's allowed set (or empty)";
                if (!cpuset_subset(&pin->cpus, &t->nodes[pc->target_node].cpus) &&
                    !in_span(t, pc, &pin->cpus))
                    return "a pin outside the target node (or a wide cell's span)";
                if (!pin->rules)
                    return "a pin without a rule";
            }
            if (rule_binding_single_node(&c->binding) >= 0 &&
                (c->binding.mode == VN_MEM_STRICT || c->binding.mode == VN_MEM_RESTRICTIVE) &&
                pc->nr_moves)
                return "memory moved although bound to one node (rule 2)";
            if (c->binding.mode == VN_MEM_INTERLEAVE && pc->nr_moves)
                return "interleaved memory moved";
            for (unsigned m = 0; m < pc->nr_moves; m++) {
                const plan_move *mv = &pc->moves[m];
                bool down = mv->to_node == pc->lower_tier && pc->lower_tier >= 0 &&
                            (mv->rules & RULE_BIT(RULE_LOWER_TIER));
                if ((mv->to_node != pc->target_node &&
                     !nodeset_isset(&pc->span, (unsigned)mv->to_node) && !down) ||
                    !mv->rules)
                    return "a move not to the target (or its span, or its lower tier), or without "
                           "a rule";
                if (down && (d->tier == VN_TIER_OFF || t->nodes[pc->lower_tier].cpus.nw ||
                             !nodeset_allows(&d->allowed_nodes, (unsigned)mv->to_node)))
                    return "a move down with tier off, to a node with CPUs or outside the "
                           "domain's nodes";
                if (down && !pc->tier.hints && d->tier != VN_TIER_COLD_FIRST)
                    return "a move down without hints (a uniformly warm cell) and not cold-first";
                if (mv->is_range)
                    continue;
                if (mv->from_node == mv->to_node ||
                    mv->bytes > c->pages[mv->from_node] * c->page_size || mv->bytes == 0)
                    return "a move of more bytes than the source has";
                if (pd->mode == VN_MODE_AUTO) /* (advice is decided as if alone: never summed) */
                    into[mv->to_node] += mv->bytes;
            }
        }
    }
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        uint64_t free = s->free_known[n] ? s->free_bytes[n] : t->nodes[n].mem_free;
        uint64_t reserve = VN_MAX(cfg.reserve_bytes,
                                  (uint64_t)((double)t->nodes[n].mem_total * cfg.reserve_fraction));
        if (into[n] && (free < reserve || into[n] > free - reserve)) {
            snprintf(why, sizeof(why), "node %u would fall below its free-memory reserve", n);
            return why;
        }
    }
    return NULL;
}

/* The node whose CPUs hold cpus, or -1. */
static int node_of(const topology *t, const vn_cpuset *cpus)
{
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (!cpuset_empty(cpus) && cpuset_subset(cpus, &t->nodes[n].cpus))
            return (int)n;
    return -1;
}

/* Where a planned cell's busy vCPU will run: its new pin's node, else its pin's, else the
 * target (a wide cell's vCPUs are spread over its span). */
static int vcpu_planned_node(const topology *t, const plan_cell *pc, const snap_vcpu *v)
{
    for (unsigned m = 0; m < pc->nr_pins; m++)
        if (pc->pins[m].vcpu == v->id)
            return node_of(t, &pc->pins[m].cpus);
    if (!nodeset_empty(&pc->span)) {
        int n = node_of(t, &v->pinned);
        if (n >= 0)
            return n;
    }
    return pc->target_node;
}

/* CPU capacity: the busy vCPUs a plan puts on a node never exceed its CPUs, unless a cell
 * placed there is flagged cpu_overcommit (none of its allowed nodes had room). */
static const char *check_capacity(const topology *t, const snapshot *s, const plan *p)
{
    static char why[128];
    double load[VN_MAX_NODES] = {0};
    bool flagged[VN_MAX_NODES] = {0};

    for (unsigned n = 0; n < t->nr_nodes; n++)
        load[n] = s->other_busy[n];
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        const snap_domain *d = snap_find(s, pd->name);
        if (pd->mode != VN_MODE_AUTO)
            continue;
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            if (pc->target_node < 0 || pc->reason == REASON_CPUSET_SKIP)
                continue;
            for (unsigned v = 0; v < d->cells[k].nr_vcpus; v++) {
                int n = vcpu_planned_node(t, pc, &d->cells[k].vcpus[v]);
                if (n >= 0)
                    load[n] += d->cells[k].vcpus[v].busy > 0.25;
            }
            flagged[pc->target_node] |= pc->cpu_overcommit;
            for (unsigned n = 0; n < t->nr_nodes; n++)
                if (nodeset_isset(&pc->span, n))
                    flagged[n] |= pc->cpu_overcommit;
        }
    }
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (load[n] > t->nodes[n].nr_cpus && !flagged[n]) {
            snprintf(why, sizeof(why), "node %u gets %.1f busy vCPUs on %u CPUs, not flagged", n,
                     load[n], t->nodes[n].nr_cpus);
            return why;
        }
    return NULL;
}

/* Advise domains are never acted on, so they plan the same actions every pass:
 * idempotence and convergence are about the domains vnumad changes. */
static bool plan_has_pins(const plan *p)
{
    for (unsigned i = 0; i < p->nr_domains; i++)
        for (unsigned k = 0; k < p->domains[i].nr_cells; k++)
            if (p->domains[i].mode == VN_MODE_AUTO && p->domains[i].cells[k].nr_pins)
                return true;
    return false;
}

static void debug_dump(const topology *t, const char *what, const snapshot *s, const plan *p)
{
    if (!getenv("VN_TEST_DEBUG"))
        return;
    printf("# ---- %s\n", what);
    record_snapshot_table(t, s, stdout);
    record_plan_table(t, p, stdout);
}

static bool same_targets(const plan *a, const plan *b)
{
    if (a->nr_domains != b->nr_domains)
        return false;
    for (unsigned i = 0; i < a->nr_domains; i++)
        for (unsigned k = 0; k < a->domains[i].nr_cells; k++)
            if (a->domains[i].cells[k].target_node != b->domains[i].cells[k].target_node)
                return false;
    return true;
}

/* A cell whose vCPUs rule 3's filter held at home, its home over capacity: they may leave
 * for the candidate next pass, and the cells placed around them with them. */
static bool plan_defers_vcpus(const plan *p)
{
    for (unsigned i = 0; i < p->nr_domains; i++)
        for (unsigned k = 0; k < p->domains[i].nr_cells; k++) {
            const plan_cell *pc = &p->domains[i].cells[k];
            if (!pc->nr_pins && pc->candidate_node >= 0 && /* (advise: what auto would do) */
                pc->candidate_node != pc->target_node &&
                (pc->rules & RULE_BIT(RULE_TWO_STAGE_FILTER)))
                return true;
        }
    return false;
}

static void test_properties_on(const char *name, const topology *t, unsigned cases)
{
    unsigned bad_inv = 0, bad_det = 0, bad_idem = 0, bad_cap = 0, bad_conv = 0, deferred = 0;
    const char *first_inv = NULL, *first_cap = NULL;
    uint64_t first_seed = 0;

    for (unsigned i = 0; i < cases; i++) {
        snapshot s, s1, s2;
        plan p1, p1b, p2, p3;
        char *a, *b;
        const char *why;
        vn_config cfg;

        config_defaults(&cfg);
        rng_state = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(i + 1) * 0x2545F4914F6CDD1DULL);
        random_snapshot(t, &s);
        run(t, &s, &p1);
        run(t, &s, &p1b);
        a = plan_text(t, &p1);
        b = plan_text(t, &p1b);
        bad_det += strcmp(a, b) != 0;
        free(a);
        free(b);
        why = check_invariants(t, &s, &p1);
        if (why) {
            if (!bad_inv)
                debug_dump(t, why, &s, &p1);
            if (!bad_inv++) {
                first_inv = why;
                first_seed = i;
            }
        }
        /* vCPUs that rule 3's filter held at home leave one pass later, and the cells placed
         * around them may follow: the properties below hold from the pass after them (at most
         * three such passes) */
        for (unsigned shift = 0; shift < 3 && plan_defers_vcpus(&p1); shift++) {
            snapshot sn;
            plan pn;
            (void)plan_apply(t, &s, &p1, &sn);
            run(t, &sn, &pn);
            snapshot_clear(&s);
            plan_clear(&p1);
            s = sn;
            p1 = pn;
            deferred++;
        }
        /* idempotence: the state the plan produces gets no new pins and keeps its targets;
         * memory deferred by rule 3's filter may follow one pass later, then nothing. */
        (void)plan_apply(t, &s, &p1, &s1);
        why = check_capacity(t, &s, &p1);
        if (why && !bad_cap++)
            first_cap = why;
        run(t, &s1, &p2);
        if (plan_has_pins(&p2) || !same_targets(&p1, &p2)) {
            if (!bad_idem++) {
                printf("# idempotence broken: %s case %u\n", name, i);
                debug_dump(t, "pass 1", &s, &p1);
                debug_dump(t, "pass 2", &s1, &p2);
            }
        }
        (void)plan_apply(t, &s1, &p2, &s2);
        run(t, &s2, &p3);
        if (plan_nr_auto_actions(&p3) != 0 && !bad_conv++) {
            printf("# not converged: %s case %u\n", name, i);
            debug_dump(t, "pass 2", &s1, &p2);
            debug_dump(t, "pass 3", &s2, &p3);
        }
        plan_clear(&p1);
        plan_clear(&p1b);
        plan_clear(&p2);
        plan_clear(&p3);
        snapshot_clear(&s);
        snapshot_clear(&s1);
        snapshot_clear(&s2);
    }
    CHECK(bad_inv == 0,
          "%s: %u random snapshots: allowed sets, CPU-less nodes, allowed nodes, "
          "rule 2, reserve hold (%u bad; first: case %llu: %s)",
          name, cases, bad_inv, (unsigned long long)first_seed, first_inv ? first_inv : "-");
    CHECK(bad_det == 0, "%s: deterministic (%u differ)", name, bad_det);
    CHECK(bad_cap == 0, "%s: CPU capacity holds (%u bad; first: %s)", name, bad_cap,
          first_cap ? first_cap : "-");
    CHECK(bad_idem == 0,
          "%s: idempotent: deciding on the planned state adds no pins and keeps "
          "every target (%u bad; %u cases had vCPUs the filter held a pass)",
          name, bad_idem, deferred);
    CHECK(bad_conv == 0, "%s: converged: the pass after that plans nothing (%u bad)", name,
          bad_conv);
}

static void test_properties(void)
{
    const char *dir = "tests/data/topologies";
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort);
    unsigned files = 0;

    for (int i = 0; i < n; i++) {
        char path[1024];
        size_t len = strlen(ents[i]->d_name);
        if (len > 4 && strcmp(ents[i]->d_name + len - 4, ".xml") == 0) {
            snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
            topology *t = load_xml(path);
            if (CHECK(t != NULL, "load %s", path))
                test_properties_on(ents[i]->d_name, t, 60);
            topo_free(t);
            files++;
        }
        free(ents[i]);
    }
    free(ents);
    CHECK(files >= 10, "properties ran on every bundled topology (%u files)", files);
    {
        topology *t = load_synth("pack:2 numa:4 l3:3 core:8 pu:2");
        test_properties_on("synthetic zen4 nps4", t, 100);
        topo_free(t);
    }
}

/*
 * Tiers under memory pressure: on hosts with a lower tier, with nodes short of room, six passes
 * carried out on paper. Each pass holds the invariants (the reserve, moves down only with the
 * rule and a tier allowed), and no memory moves twice within TIER_SETTLE_PASSES: nothing leaves
 * a node in bulk that a bulk move of the same cell filled in an earlier pass of the window.
 */
static void test_tiers_pressure(const char *file, unsigned cases, bool has_tier)
{
    char path[256];
    topology *t;
    unsigned bad_inv = 0, twice = 0, tiered = 0, down = 0;
    const char *first = NULL;

    snprintf(path, sizeof(path), "tests/data/topologies/%s", file);
    t = load_xml(path);
    if (!CHECK(t != NULL, "load %s", path))
        return;
    squeeze = true;
    for (unsigned i = 0; i < cases; i++) {
        snapshot s;
        /* filled[dom][cell][node]: the last pass a bulk move of the cell went into the node */
        static unsigned filled[MAX_DOMS][8][VN_MAX_NODES];

        memset(filled, 0, sizeof(filled));
        rng_state = 0x51ED2701ULL ^ ((uint64_t)(i + 1) * 0x2545F4914F6CDD1DULL);
        random_snapshot(t, &s);
        for (unsigned pass = 1; pass <= 6; pass++) {
            plan p;
            snapshot next;
            const char *why;
            run(t, &s, &p);
            why = check_invariants(t, &s, &p);
            if (why && !bad_inv++)
                first = why;
            for (unsigned d = 0; d < p.nr_domains && d < MAX_DOMS; d++) {
                const plan_domain *pd = &p.domains[d];
                if (pd->mode != VN_MODE_AUTO)
                    continue;
                for (unsigned k = 0; k < pd->nr_cells && k < 8; k++) {
                    const plan_cell *pc = &pd->cells[k];
                    tiered += pc->tier.why != TIER_WHY_NONE;
                    for (unsigned m = 0; m < pc->nr_moves; m++) {
                        const plan_move *mv = &pc->moves[m];
                        if (mv->is_range || mv->from_node < 0)
                            continue;
                        down += mv->to_node == pc->lower_tier;
                        unsigned at = filled[d][k][mv->from_node];
                        if (at && pass - at <= TIER_SETTLE_PASSES && !twice++)
                            printf("# moved twice: %s case %u pass %u: %s cell %u node %d -> %d "
                                   "(filled at pass %u)\n",
                                   file, i, pass, pd->name, pc->cell_id, mv->from_node, mv->to_node,
                                   at);
                    }
                    for (unsigned m = 0; m < pc->nr_moves; m++)
                        if (!pc->moves[m].is_range)
                            filled[d][k][pc->moves[m].to_node] = pass;
                }
            }
            (void)plan_apply(t, &s, &p, &next);
            plan_clear(&p);
            snapshot_clear(&s);
            s = next;
        }
        snapshot_clear(&s);
    }
    squeeze = false;
    CHECK(bad_inv == 0,
          "%s under memory pressure: %u cases of 6 passes hold the invariants (%u "
          "bad; first: %s)",
          file, cases, bad_inv, first ? first : "-");
    CHECK(twice == 0 && (has_tier ? tiered > 0 && down > 0 : tiered == 0 && down == 0),
          "%s under memory pressure: no memory moved twice within %d passes (%u times; %u tiered "
          "cell decisions, %u moves down; %s)",
          file, TIER_SETTLE_PASSES, twice, tiered, down,
          has_tier ? "nodes 4-5 are a lower tier"
                   : "no lower tier: MCDRAM is faster, none goes down");
    topo_free(t);
}

static void test_order_independence(void)
{
    topology *t = load_synth("pack:2 numa:2 l3:1 core:4 pu:2");
    snapshot s;
    plan p1, p2;

    rng_state = 42;
    random_snapshot(t, &s);
    run(t, &s, &p1);
    /* reverse the domains */
    for (unsigned i = 0; i < s.nr_domains / 2; i++) {
        snap_domain tmp = s.domains[i];
        s.domains[i] = s.domains[s.nr_domains - 1 - i];
        s.domains[s.nr_domains - 1 - i] = tmp;
    }
    run(t, &s, &p2);
    bool same = p1.nr_domains == p2.nr_domains;
    for (unsigned i = 0; same && i < p1.nr_domains; i++) {
        const plan_domain *a = &p1.domains[i], *b = NULL;
        for (unsigned j = 0; j < p2.nr_domains; j++)
            if (strcmp(p2.domains[j].name, a->name) == 0)
                b = &p2.domains[j];
        same = b && b->nr_cells == a->nr_cells;
        for (unsigned k = 0; same && k < a->nr_cells; k++)
            same = a->cells[k].target_node == b->cells[k].target_node &&
                   a->cells[k].nr_pins == b->cells[k].nr_pins &&
                   a->cells[k].nr_moves == b->cells[k].nr_moves;
    }
    CHECK(same, "the decisions do not depend on the order of domains in the snapshot");
    plan_clear(&p1);
    plan_clear(&p2);
    snapshot_clear(&s);
    topo_free(t);
}

int main(void)
{
    test_tiers_pressure("16amd64-8n2c-cpusets.xml", 60, true);
    test_tiers_pressure("64intel64-fakeKNL-SNC4-hybrid.xml", 60, false);
    test_order_independence();
    test_properties();
    return tap_done();
}
