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
        {"8191", 0, 1, "8191"},
        {"8192", -ERANGE, 0, NULL},
        {"0-16384", -ERANGE, 0, NULL},
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

/* Sets of different widths (only the words in use are read): a set that held CPU 8191 and
 * lost it equals one that never held it; the words past a set's width are never read, even
 * when they hold garbage. */
static void test_widths(void)
{
    vn_cpuset lo, hi, out, junk;

    cpuset_zero(&lo);
    cpuset_set(&lo, 3);
    cpuset_zero(&hi);
    cpuset_set(&hi, 3);
    cpuset_set(&hi, 8191);
    CHECK(!cpuset_equal(&lo, &hi) && cpuset_subset(&lo, &hi) && !cpuset_subset(&hi, &lo),
          "{3} is a proper subset of {3,8191}");
    cpuset_and(&out, &lo, &hi);
    CHECK(cpuset_equal(&out, &lo) && cpuset_weight(&out) == 1, "{3} & {3,8191} = {3}");
    cpuset_or(&out, &lo, &hi);
    CHECK(cpuset_equal(&out, &hi) && cpuset_weight(&out) == 2 && cpuset_isset(&out, 8191),
          "{3} | {3,8191} = {3,8191}");
    cpuset_andnot(&out, &hi, &lo);
    CHECK(cpuset_first(&out) == 8191 && cpuset_next(&out, 8191) == -1, "{3,8191} & ~{3} = {8191}");
    cpuset_andnot(&out, &lo, &hi);
    CHECK(cpuset_empty(&out) && cpuset_first(&out) == -1, "{3} & ~{3,8191} is empty");
    /* hi loses 8191: wide, but equal to lo */
    cpuset_andnot(&hi, &hi, &out); /* out is empty: no change */
    cpuset_zero(&junk);
    cpuset_set(&junk, 8191);
    cpuset_andnot(&hi, &hi, &junk);
    CHECK(cpuset_equal(&hi, &lo) && cpuset_equal(&lo, &hi) && cpuset_subset(&hi, &lo) &&
              cpuset_weight(&hi) == 1 && !cpuset_isset(&hi, 8191),
          "{3,8191} without 8191 equals {3}");
    CHECK(!cpuset_intersects(&junk, &lo) && cpuset_intersects(&hi, &lo), "intersects");
    /* a zeroed set whose words hold garbage: nothing past its width is seen */
    memset(&junk, 0xff, sizeof(junk));
    cpuset_zero(&junk);
    CHECK(cpuset_empty(&junk) && cpuset_weight(&junk) == 0 && !cpuset_isset(&junk, 5) &&
              cpuset_first(&junk) == -1,
          "a zeroed set is empty whatever its words held");
    cpuset_set(&junk, 70);
    CHECK(cpuset_weight(&junk) == 1 && cpuset_first(&junk) == 70 && !cpuset_isset(&junk, 0),
          "setting a bit clears the words it adds to the width");
}

int main(void)
{
    test_parse_format();
    test_algebra();
    test_widths();
    return tap_done();
}
