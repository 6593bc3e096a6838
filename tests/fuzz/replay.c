/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs the fuzz harness (fuzz-proto-host.c) once on each file named on the
 * command line, without libFuzzer or sanitizers: tests/cli/valgrind.sh runs
 * the seed corpus through it under memcheck, which sees what ASan does not
 * (a branch on an uninitialised byte). Exits 1 when a file cannot be read;
 * a finding aborts, as in the fuzzer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs beyond the protocol's 64 KiB line are not more interesting. */
#define REPLAY_MAX (1u << 20)

static void freep(void *p)
{
    free(*(void **)p);
}

static void fclosep(FILE **f)
{
    if (*f)
        (void)fclose(*f);
}

/* The input goes in a block of exactly its size, as libFuzzer passes it: memcheck then
 * reports a read past its end. */
static int replay_file(const char *path)
{
    __attribute__((cleanup(fclosep))) FILE *f = fopen(path, "rb");
    __attribute__((cleanup(freep))) uint8_t *buf = NULL;
    __attribute__((cleanup(freep))) uint8_t *exact = NULL;
    size_t n;

    if (!f)
        return -errno;
    buf = malloc(REPLAY_MAX);
    if (!buf)
        return -ENOMEM;
    n = fread(buf, 1, REPLAY_MAX, f);
    if (ferror(f))
        return -EIO;
    exact = malloc(n ? n : 1);
    if (!exact)
        return -ENOMEM;
    memcpy(exact, buf, n);
    (void)LLVMFuzzerTestOneInput(exact, n);
    return 0;
}

int main(int argc, char **argv)
{
    int ret = 0;

    (void)LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        int r = replay_file(argv[i]);

        if (r < 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(-r));
            ret = 1;
        }
    }
    printf("replayed %d inputs\n", argc - 1);
    return ret;
}
