/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostile: a misbehaving "agent" for the test guest, to prove vnumad's host side
 * (tests/e2e/agent-host.sh). It opens org.vnuma.agent.0 like vnuma-agent, answers
 * the hello correctly, and then answers each vnuma-get-hints request with the next
 * attack:
 *   1 a line of 100 KiB (over the protocol's line limit)
 *   2 nesting 200 deep
 *   3 invalid UTF-8 in a process name (no 0xFF byte: that one resynchronises)
 *   4 a flood of 2000 well-formed replies at once
 *   5 lies: a well-formed hint set naming vCPU 99, guest node 7 and a range at 1 TiB
 *   6 half a line, never finished (slowloris), then silence
 * With the argument "flood" it answers the hello and then writes "a\n" lines as fast as the
 * port takes them, forever (tests/e2e/agent-flood.sh).
 * It writes raw bytes on purpose: an attacker does not use the project's codec.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int open_port(void)
{
    char path[300], name[64];
    struct dirent *de;
    DIR *d;

    for (int tries = 0; tries < 600; tries++) {
        d = opendir("/sys/class/virtio-ports");
        while (d && (de = readdir(d))) {
            FILE *f;
            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
            f = fopen(path, "r");
            if (!f)
                continue;
            if (fgets(name, sizeof(name), f) && !strncmp(name, "org.vnuma.agent.0", 17)) {
                int fd;
                fclose(f);
                snprintf(path, sizeof(path), "/dev/%s", de->d_name);
                closedir(d);
                fd = open(path, O_RDWR);
                if (fd >= 0)
                    return fd;
                d = NULL;
                break;
            }
            fclose(f);
        }
        if (d)
            closedir(d);
        sleep(1);
    }
    return -1;
}

static void put(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

static void say(int fd, const char *s)
{
    put(fd, s, strlen(s));
}

/* Read one request line; returns its id, -1 on EOF/no host (caller retries). */
static long read_request(int fd, char *cmd, size_t cmdlen)
{
    static char buf[70000];
    static size_t len;

    for (;;) {
        char *nl = memchr(buf, '\n', len);
        if (nl) {
            char *id;
            long v = 0;
            *nl = '\0';
            id = strstr(buf, "\"id\":");
            if (id)
                v = strtol(id + 5, NULL, 10);
            snprintf(cmd, cmdlen, "%s", strstr(buf, "vnuma-hello") ? "hello" : "hints");
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len);
            return v;
        }
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0) {
            sleep(1); /* no host client: the port reads EOF */
            continue;
        }
        /* drop the host's 0xFF flush bytes */
        size_t keep = len;
        for (ssize_t i = 0; i < n; i++)
            if ((unsigned char)buf[len + (size_t)i] != 0xFF)
                buf[keep++] = buf[len + (size_t)i];
        len = keep;
        if (len >= sizeof(buf) - 1)
            len = 0;
    }
}

/* "a\n" as fast as the port takes it, forever: vnumad's byte budget is the only brake */
static void flood(int fd)
{
    static char junk[65536];

    for (size_t i = 0; i < sizeof(junk); i += 2) {
        junk[i] = 'a';
        junk[i + 1] = '\n';
    }
    fprintf(stderr, "hostile: flooding\n");
    for (;;)
        put(fd, junk, sizeof(junk));
}

int main(int argc, char **argv)
{
    int fd = open_port(), attack = 0;
    bool flooding = argc > 1 && !strcmp(argv[1], "flood");
    char cmd[16], line[4096];

    if (fd < 0) {
        fprintf(stderr, "hostile: no org.vnuma.agent.0 port\n");
        return 1;
    }
    fprintf(stderr, "hostile: ready\n");
    for (;;) {
        long id = read_request(fd, cmd, sizeof(cmd));
        if (!strcmp(cmd, "hello")) {
            snprintf(line, sizeof(line),
                     "{\"return\":{\"version\":1,\"agent\":\"hostile 6.6.6\",\"capabilities\":"
                     "[\"node-pages\",\"hot-ranges\"],\"nodes\":2,\"vcpus\":2},\"id\":%ld}\n",
                     id);
            say(fd, line);
            if (flooding)
                flood(fd);
            continue;
        }
        attack++;
        fprintf(stderr, "hostile: attack %d\n", attack);
        switch (attack) {
        case 1: {
            static char big[100 * 1024 + 2];
            memset(big, 'a', sizeof(big) - 2);
            big[0] = '{';
            big[sizeof(big) - 2] = '\n';
            put(fd, big, sizeof(big) - 1);
            break;
        }
        case 2: {
            char deep[2048];
            size_t n = 0;
            for (int i = 0; i < 200; i++)
                n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{\"a\":");
            n += (size_t)snprintf(deep + n, sizeof(deep) - n, "1");
            for (int i = 0; i < 200 && n + 2 < sizeof(deep); i++)
                deep[n++] = '}';
            deep[n++] = '\n';
            put(fd, deep, n);
            break;
        }
        case 3:
            snprintf(
                line, sizeof(line),
                "{\"return\":{\"seq\":1,\"uptime_ms\":1,\"processes\":[{\"pid\":1,\"comm\":"
                "\"\xc3\x28\xed\xa0\x80\",\"vcpus\":[0],\"node_pages\":[1],\"ranges\":[]}]},\"id\":%ld}\n",
                id);
            say(fd, line);
            break;
        case 4:
            for (int i = 0; i < 2000; i++) {
                snprintf(line, sizeof(line),
                         "{\"return\":{\"seq\":%d,\"uptime_ms\":1,\"processes\":[]},\"id\":%ld}\n",
                         i, id);
                say(fd, line);
            }
            break;
        case 5:
            snprintf(line, sizeof(line),
                     "{\"return\":{\"seq\":9,\"uptime_ms\":9,\"processes\":[{\"pid\":66,\"comm\":"
                     "\"liar\",\"vcpus\":[0,99],\"node_pages\":[1,2,3,4,5,6,7,8],\"ranges\":[{"
                     "\"gpa\":1099511627776,\"length\":2097152,\"heat\":1000}]}]},\"id\":%ld}\n",
                     id);
            say(fd, line);
            break;
        default:
            say(fd, "{\"return\":{\"seq\":10,\"uptime_ms\":10,\"processes\":[{\"pid\":");
            fprintf(stderr, "hostile: slowloris, now silent\n");
            for (;;)
                pause();
        }
    }
}
