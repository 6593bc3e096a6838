/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "detach.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DETACH_READY 'R'

static int ready_fd = -1;

/* The parent: wait for the child's word or its exit, and exit with what the start came to. */
static _Noreturn void parent_wait(int fd, pid_t child)
{
    char c = 0;
    ssize_t n;
    int status;

    do
        n = read(fd, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n == 1 && c == DETACH_READY)
        _exit(0);
    /* EOF: the child closed the pipe without starting, that is it exited */
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            _exit(1);
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
    fprintf(stderr, "vnumad: died during its start (signal %d)\n",
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    _exit(1);
}

int detach_begin(void)
{
    int p[2];
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return -e;
    }
    if (pid > 0) {
        close(p[1]);
        parent_wait(p[0], pid);
    }
    close(p[0]);
    ready_fd = p[1];
    if (setsid() < 0 || chdir("/") < 0)
        return -errno;
    log_set_echo(stderr);
    return 0;
}

static int to_devnull(void)
{
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    for (int i = 0; i < 3; i++)
        if (dup2(fd, i) < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
    close(fd);
    return 0;
}

int detach_done(const char *pid_file, char *err, size_t errlen)
{
    char c = DETACH_READY;
    int r;

    if (pid_file[0]) {
        r = pidfile_write(pid_file, getpid());
        if (r < 0) {
            snprintf(err, errlen, "cannot write the pid file %s: %s", pid_file, strerror(-r));
            return r;
        }
    }
    log_set_echo(NULL);
    r = to_devnull();
    if (r < 0) {
        snprintf(err, errlen, "cannot leave the terminal: %s", strerror(-r));
        return r;
    }
    if (write(ready_fd, &c, 1) != 1) {
        r = -errno;
        snprintf(err, errlen, "cannot tell the starting process: %s", strerror(-r));
        return r;
    }
    close(ready_fd);
    ready_fd = -1;
    return 0;
}

int pidfile_write(const char *path, pid_t pid)
{
    char tmp[PATH_MAX], text[32];
    int fd, n, r = 0;

    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = snprintf(text, sizeof(text), "%ld\n", (long)pid);
    errno = 0;
    if (write(fd, text, (size_t)n) != n || fchmod(fd, 0644) < 0 || fsync(fd) < 0)
        r = errno ? -errno : -EIO;
    if (close(fd) < 0 && !r)
        r = -errno;
    if (!r && rename(tmp, path) < 0)
        r = -errno;
    if (r)
        unlink(tmp);
    return r;
}

void detach_remove_pidfile(const char *pid_file)
{
    char text[32];
    ssize_t n;
    int fd;

    if (!pid_file[0])
        return;
    fd = open(pid_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    if (strtol(text, NULL, 10) == (long)getpid())
        unlink(pid_file);
}
