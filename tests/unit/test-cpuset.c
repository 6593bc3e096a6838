/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of vn_cpuset (host/cpuset.c): list parsing and printing, set algebra. */
#include <errno.h>
#include <string.h>

#include "cpuset.h"
#include "tap.h"

static void test_parse_format(void)
{
    static const struct {
        const char *in;
        int ret;
        unsigned weight;
        const char *out;
    } cases[] = {
        {"0-3,8", 0, 5, "0-3,8"},
        {"", 0, 0, ""},
        {"7", 0, 1, "7"},
        {"0,1,2,3", 0, 4, "0-3"},
        {"1023", 0, 1, "1023"},
        {"0-1023", 0, 1024, "0-1023"},
        {"1024", -ERANGE, 0, NULL},
        {"0-4096", -ERANGE, 0, NULL},
        {"a", -EINVAL, 0, NULL},
        {"0-", -EINVAL, 0, NULL},
        {"1 2", -EINVAL, 0, NULL},
        {"-1", -EINVAL, 0, NULL},
        {"3-1", -EINVAL, 0, NULL},
        {"3-1,5", -EINVAL, 0, NULL},
        {"1,,2", -EINVAL, 0, NULL},
        {"1-2-3", -EINVAL, 0, NULL},
        {"1,", -EINVAL, 0, NULL},
        {",1", -EINVAL, 0, NULL},
        /* refused before hwloc sizes a bitmap by the number (512 MiB for the first) */
        {"99999999999999999999", -ERANGE, 0, NULL},
        {"0-2147483647", -ERANGE, 0, NULL},
        {"0-18446744073709551616", -ERANGE, 0, NULL},
        {"1,4294967296", -ERANGE, 0, NULL},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        vn_cpuset s;
        char buf[64] = "";
        int r;
        memset(&s, 0xAB, sizeof(s));
        r = cpuset_parse(cases[i].in, &s);
        if (cases[i].ret == 0) {
            (void)cpuset_format(&s, buf, sizeof(buf));
            CHECK(r == 0 && cpuset_weight(&s) == cases[i].weight && strcmp(buf, cases[i].out) == 0,
                  "parse '%s' -> %u CPUs, prints '%s' (got %d, '%s')", cases[i].in, cases[i].weight,
                  cases[i].out, r, buf);
        } else {
            CHECK(r == cases[i].ret && s.w[0] == 0xABABABABABABABABULL,
                  "parse '%s' fails with %d and leaves the output alone (got %d)", cases[i].in,
                  cases[i].ret, r);
        }
    }
}

static void test_algebra(void)
{
    vn_cpuset a, b, c;
    int seen = 0, last = -1;

    (void)cpuset_parse("0-7", &a);
    (void)cpuset_parse("4-11", &b);
    cpuset_and(&c, &a, &b);
    CHECK(cpuset_weight(&c) == 4 && cpuset_first(&c) == 4, "and: 4-7");
    cpuset_or(&c, &a, &b);
    CHECK(cpuset_weight(&c) == 12, "or: 0-11");
    CHECK(cpuset_intersects(&a, &b) && !cpuset_subset(&a, &b) && cpuset_subset(&a, &c),
          "intersects and subset");
    (void)cpuset_parse("63-65,1000", &c);
    CPUSET_FOREACH(cpu, &c)
    {
        seen++;
        last = cpu;
    }
    CHECK(seen == 4 && last == 1000, "iteration crosses word boundaries (%d CPUs, last %d)", seen,
          last);
    cpuset_zero(&c);
    CHECK(cpuset_empty(&c) && cpuset_first(&c) == -1, "empty set");
    char small[4];
    (void)cpuset_parse("0-3,8-11", &a);
    CHECK(cpuset_format(&a, small, sizeof(small)) == -ENOSPC, "format into a short buffer: ENOSPC");
}

int main(void)
{
    test_parse_format();
    test_algebra();
    return tap_done();
}
