/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket server (host/control.c) on libvirt's default event loop,
 * with dummy handlers: every command round-trips; malformed, hostile, slow
 * and surplus clients get the documented error (or are dropped) and never
 * reach a handler; a non-root peer is refused; file modes; clean shutdown.
 *
 * Clients run in this process on non-blocking sockets while the loop is
 * pumped, except the non-root peer, which is a forked child that drops to
 * uid/gid 65534 before connecting. Needs root (the server serves uid 0 only).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "loop.h"
#include "tap.h"
#include "util.h"
#include "virt.h"

#define TICK_MS 10
/* printf arguments for a reply without its newline */
#define LINE(buf) (int)strcspn((buf), "\n"), (buf)
#define NOBODY    65534

static char tmpdir[64], rundir[128], sockpath[160];

/* ---- dummy handlers: record the call, answer {"cmd": NAME, "domain": DOMAIN|null} ---- */

static struct {
    unsigned calls;
    char cmd[32];
    char domain[512];
    char stage[32];
    bool had_domain;
    void *opaque;
} seen;

#define HUGE_REPLY (8u << 20)

static int handle(const char *name, void *opaque, const char *domain, struct json_object **ret,
                  char *errclass, size_t classlen, char *err, size_t errlen)
{
    struct json_object *o;

    seen.calls++;
    snprintf(seen.cmd, sizeof(seen.cmd), "%s", name);
    seen.had_domain = domain != NULL;
    snprintf(seen.domain, sizeof(seen.domain), "%s", domain ? domain : "");
    seen.opaque = opaque;
    if (domain && strcmp(domain, "nosuch") == 0) {
        snprintf(errclass, classlen, "NoSuchDomain");
        snprintf(err, errlen, "no domain named 'nosuch'");
        return -ENOENT;
    }
    if (domain && strcmp(domain, "broken") == 0)
        return -ENOMEM; /* no class, no message: Internal + strerror */
    if (domain && strcmp(domain, "empty") == 0)
        return 0;                                /* no result: {} */
    if (domain && strcmp(domain, "huge") == 0) { /* a reply no socket buffer holds */
        char *blob = malloc(HUGE_REPLY + 1);
        if (!blob)
            return -ENOMEM;
        memset(blob, 'x', HUGE_REPLY);
        blob[HUGE_REPLY] = '\0';
        o = json_object_new_object();
        json_object_object_add(o, "blob", json_object_new_string(blob));
        free(blob);
        *ret = o;
        return 0;
    }
    o = json_object_new_object();
    json_object_object_add(o, "cmd", json_object_new_string(name));
    json_object_object_add(o, "domain", domain ? json_object_new_string(domain) : NULL);
    *ret = o;
    return 0;
}

#define HANDLER(n)                                                                                 \
    static int h_##n(void *opaque, const control_request *req, struct json_object **ret,           \
                     char *errclass, size_t classlen, char *err, size_t errlen)                    \
    {                                                                                              \
        snprintf(seen.stage, sizeof(seen.stage), "%s", req->stage ? req->stage : "");              \
        return handle(#n, opaque, req->domain, ret, errclass, classlen, err, errlen);              \
    }
HANDLER(status)
HANDLER(decisions)
HANDLER(explain)
HANDLER(advise)
HANDLER(pause)
HANDLER(resume)
HANDLER(hold)

static const control_command commands[] = {
    {.name = "status", .fn = h_status},
    {.name = "decisions", .fn = h_decisions},
    {.name = "explain", .fn = h_explain, .needs_domain = true},
    {.name = "advise", .fn = h_advise, .needs_domain = true},
    {.name = "pause", .fn = h_pause, .needs_domain = true},
    {.name = "resume", .fn = h_resume, .needs_domain = true},
    {.name = "hold", .fn = h_hold, .takes_stage = true},
    {.name = NULL},
};

/* ---- driving the loop ---- */

static void tick(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run the loop for about ms milliseconds. */
static void pump(int ms)
{
    int64_t end = now_ms() + ms;
    while (now_ms() < end)
        (void)loop_run_once();
}

static void set_path(struct sockaddr_un *sa, const char *path)
{
    size_t n = VN_MIN(strlen(path), sizeof(sa->sun_path) - 1);

    memcpy(sa->sun_path, path, n);
    sa->sun_path[n] = '\0';
}

static int client_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    set_path(&sa, path);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read (pumping the loop) until EOF or timeout_ms. Returns bytes read, -1 on timeout. */
static ssize_t read_reply(int fd, char *buf, size_t len, int timeout_ms)
{
    int64_t end = now_ms() + timeout_ms;
    size_t got = 0;

    while (now_ms() < end) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n == 0 || (n < 0 && errno == ECONNRESET) || got == len - 1)
            break;
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (errno != EAGAIN && errno != EINTR)
            break;
        (void)loop_run_once();
    }
    buf[got] = '\0';
    return now_ms() < end ? (ssize_t)got : -1;
}

/* Send req (len bytes; shut the write side when eof), return the reply in buf. */
static ssize_t exchange(const char *req, size_t len, bool eof, char *buf, size_t buflen)
{
    _cleanup_close_ int fd = client_connect(sockpath);
    size_t off = 0;

    if (fd < 0)
        return -1;
    while (off < len) {
        ssize_t n = write(fd, req + off, len - off);
        if (n < 0 && errno == EAGAIN) {
            (void)loop_run_once();
            continue;
        }
        if (n <= 0)
            break; /* the server may have answered and closed already */
        off += (size_t)n;
    }
    if (eof)
        shutdown(fd, SHUT_WR);
    return read_reply(fd, buf, buflen, 60000); /* only says "no reply came" */
}

static ssize_t ask(const char *req, char *buf, size_t buflen)
{
    return exchange(req, strlen(req), false, buf, buflen);
}

/* The reply line as JSON; NULL unless it is exactly one object on one line. */
static struct json_object *parse_reply(const char *buf, ssize_t n)
{
    const char *nl;

    if (n <= 0 || buf[n - 1] != '\n')
        return NULL;
    nl = strchr(buf, '\n');
    if (nl != buf + n - 1)
        return NULL;
    return json_tokener_parse(buf);
}

/* The error class of a reply, "return" for a result, "" when malformed. */
static const char *reply_kind(const char *buf, ssize_t n, char *out, size_t len)
{
    struct json_object *o = parse_reply(buf, n), *e, *c;

    snprintf(out, len, "%s", "");
    if (o && json_object_object_get_ex(o, "return", NULL) && json_object_object_length(o) == 1)
        snprintf(out, len, "return");
    else if (o && json_object_object_get_ex(o, "error", &e) &&
             json_object_object_get_ex(e, "class", &c) &&
             json_object_object_get_ex(e, "desc", NULL))
        snprintf(out, len, "%s", json_object_get_string(c));
    if (o)
        json_object_put(o);
    return out;
}

static unsigned count_fds(void)
{
    unsigned n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

/* ---- the checks ---- */

static void test_files(void)
{
    struct stat st;

    CHECK(stat(sockpath, &st) == 0 && S_ISSOCK(st.st_mode), "socket file exists");
    CHECK((st.st_mode & 07777) == 0600, "socket mode is 0600 (got %04o)", st.st_mode & 07777);
    if (stat(rundir, &st) < 0)
        st.st_mode = 0;
    CHECK((st.st_mode & 07777) == 0700, "created parent directory mode is 0700 (got %04o)",
          st.st_mode & 07777);
}

static void test_roundtrips(void)
{
    static const struct {
        const char *cmd, *domain;
    } cases[] = {
        {"status", NULL},      {"status", "vm1"},  {"decisions", NULL},
        {"decisions", "vm-2"}, {"explain", "vm1"}, {"advise", "vm1"},
        {"pause", "vm1"},      {"resume", "vm1"},  {"status", "ünïcode domain"},
    };
    char req[512], buf[4096], kind[64];

    for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
        struct json_object *o, *r, *v;
        unsigned before = seen.calls;
        ssize_t n;

        if (cases[i].domain)
            snprintf(req, sizeof(req), "{\"command\": \"%s\", \"domain\": \"%s\"}\n", cases[i].cmd,
                     cases[i].domain);
        else
            snprintf(req, sizeof(req), "{\"command\":\"%s\"}\n", cases[i].cmd);
        n = exchange(req, strlen(req), false, buf, sizeof(buf));
        CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0,
              "%s %s: one {\"return\"} line (got '%.*s')", cases[i].cmd,
              cases[i].domain ? cases[i].domain : "(none)", LINE(buf));
        CHECK(seen.calls == before + 1 && strcmp(seen.cmd, cases[i].cmd) == 0 &&
                  seen.had_domain == (cases[i].domain != NULL) &&
                  strcmp(seen.domain, cases[i].domain ? cases[i].domain : "") == 0 &&
                  seen.opaque == (void *)tmpdir,
              "%s: handler called once with the domain and opaque", cases[i].cmd);
        o = parse_reply(buf, n);
        CHECK(o && json_object_object_get_ex(o, "return", &r) &&
                  json_object_object_get_ex(r, "cmd", &v) &&
                  strcmp(json_object_get_string(v), cases[i].cmd) == 0,
              "%s: the handler's result is the return value", cases[i].cmd);
        if (o)
            json_object_put(o);
    }

    /* handler errors */
    ssize_t n = ask("{\"command\":\"explain\",\"domain\":\"nosuch\"}\n", buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "NoSuchDomain") == 0 &&
              strstr(buf, "no domain named 'nosuch'"),
          "handler's class and message are passed on (got '%.*s')", LINE(buf));
    n = ask("{\"command\":\"pause\",\"domain\":\"broken\"}\n", buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "Internal") == 0 &&
              strstr(buf, strerror(ENOMEM)),
          "handler error without class is Internal with strerror (got '%.*s')", LINE(buf));
    n = ask("{\"command\":\"resume\",\"domain\":\"empty\"}\n", buf, sizeof(buf));
    CHECK(n > 0 && strcmp(buf, "{\"return\":{}}\n") == 0, "no result is sent as {} (got '%.*s')",
          LINE(buf));
    n = ask("  {\"domain\":\"vm1\",\"command\":\"advise\"} \r\n", buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0,
          "blanks around the object and CRLF are accepted (got '%.*s')", LINE(buf));
    n = ask("{\"command\":\"status\"}\nrest of the stream", buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0,
          "bytes after the newline are ignored");

    /* a command that takes a stage (the test holds) gets it where others get the domain */
    {
        unsigned before = seen.calls;
        snprintf(req, sizeof(req), "{\"command\":\"hold\",\"stage\":\"act\"}\n");
        n = exchange(req, strlen(req), false, buf, sizeof(buf));
        CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0 &&
                  seen.calls == before + 1 && !strcmp(seen.cmd, "hold") &&
                  !strcmp(seen.stage, "act") && !seen.had_domain,
              "hold's stage reaches its handler (got '%.*s')", LINE(buf));
        snprintf(req, sizeof(req),
                 "{\"command\":\"hold\",\"stage\":\"move\",\"domain\":\"vm1\"}\n");
        n = exchange(req, strlen(req), false, buf, sizeof(buf));
        CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0 &&
                  seen.calls == before + 2 && !strcmp(seen.stage, "move") &&
                  !strcmp(seen.domain, "vm1"),
              "... with the domain it is for (got '%.*s')", LINE(buf));
    }
    /* hostile domain names (as libvirt allows them) reach the handler byte for byte */
    {
        static const struct {
            const char *json, *raw;
        } names[] = {
            {"sp ace 'q' \\\"dq\\\"", "sp ace 'q' \"dq\""},
            {"back\\\\slash\\\\", "back\\slash\\"},
            {"$(touch x);`id`|&*?<>", "$(touch x);`id`|&*?<>"},
            {"cr\\rtab\\t..", "cr\rtab\t.."},
            {"vm-\xc3\xa9-\xe5\x90\x8d\xe5\x89\x8d", "vm-\xc3\xa9-\xe5\x90\x8d\xe5\x89\x8d"},
            {"x' action=acted reason='y", "x' action=acted reason='y"},
        };
        for (size_t i = 0; i < VN_ARRAY_SIZE(names); i++) {
            unsigned before = seen.calls;
            snprintf(req, sizeof(req), "{\"command\":\"pause\",\"domain\":\"%s\"}\n",
                     names[i].json);
            n = exchange(req, strlen(req), false, buf, sizeof(buf));
            CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0 &&
                      seen.calls == before + 1 && strcmp(seen.domain, names[i].raw) == 0,
                  "hostile name %zu reaches the handler exactly (got '%.*s')", i, LINE(buf));
        }
    }
}

static void test_bad_requests(void)
{
    static char long_line[5001], long_domain[400];
    static const struct {
        const char *desc, *req;
        size_t len; /* 0: strlen */
        bool eof;   /* shut the write side after sending */
    } cases[] = {
        {"not JSON", "not json\n", 0, false},
        {"empty line", "\n", 0, false},
        {"JSON array", "[1,2]\n", 0, false},
        {"JSON string", "\"status\"\n", 0, false},
        {"JSON number", "42\n", 0, false},
        {"JSON null", "null\n", 0, false},
        {"empty object", "{}\n", 0, false},
        {"unknown key", "{\"command\":\"status\",\"extra\":1}\n", 0, false},
        {"unknown key only", "{\"execute\":\"status\"}\n", 0, false},
        {"unknown command", "{\"command\":\"bogus\"}\n", 0, false},
        {"command of another case", "{\"command\":\"STATUS\"}\n", 0, false},
        {"explain without domain", "{\"command\":\"explain\"}\n", 0, false},
        {"advise without domain", "{\"command\":\"advise\"}\n", 0, false},
        {"pause without domain", "{\"command\":\"pause\"}\n", 0, false},
        {"resume without domain", "{\"command\":\"resume\"}\n", 0, false},
        {"command is a number", "{\"command\":5}\n", 0, false},
        {"command is an object", "{\"command\":{\"a\":1}}\n", 0, false},
        {"domain is a number", "{\"command\":\"status\",\"domain\":7}\n", 0, false},
        {"domain is null", "{\"command\":\"pause\",\"domain\":null}\n", 0, false},
        {"domain is empty", "{\"command\":\"pause\",\"domain\":\"\"}\n", 0, false},
        {"domain too long", long_domain, 0, false},
        {"trailing garbage", "{\"command\":\"status\"} x\n", 0, false},
        {"two objects", "{\"command\":\"status\"}{\"command\":\"status\"}\n", 0, false},
        {"the same key twice", "{\"command\":\"pause\",\"command\":\"status\"}\n", 0, false},
        {"single-quoted key", "{'command':\"status\"}\n", 0, false},
        {"raw tab in a string", "{\"command\":\"explain\",\"domain\":\"vm\t1\"}\n", 0, false},
        {"deep nesting", "{\"command\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}\n", 0, false},
        {"unterminated object", "{\"command\":\"status\"\n", 0, false},
        {"NUL byte", "{\"command\":\"sta\0tus\"}\n", 22, false},
        {"invalid UTF-8", "{\"command\":\"status\",\"domain\":\"\xff\xfe\"}\n", 0, false},
        {"escaped NUL in the domain", "{\"command\":\"pause\",\"domain\":\"vm1\\u0000x\"}\n", 0,
         false},
        {"escaped NUL in the command", "{\"command\":\"status\\u0000x\"}\n", 0, false},
        {"5000-byte line", long_line, 0, false},
        {"EOF before the newline", "{\"command\":\"status\"}", 0, true},
        {"a stage for a command that takes none", "{\"command\":\"status\",\"stage\":\"act\"}\n", 0,
         false},
        {"hold without a stage", "{\"command\":\"hold\",\"domain\":\"vm1\"}\n", 0, false},
        {"stage is empty", "{\"command\":\"hold\",\"stage\":\"\"}\n", 0, false},
        {"stage too long", "{\"command\":\"hold\",\"stage\":\"0123456789abcdef\"}\n", 0, false},
        {"stage is a number", "{\"command\":\"hold\",\"stage\":1}\n", 0, false},
    };
    char buf[4096], kind[64];

    memset(long_line, 'a', sizeof(long_line) - 1);
    memcpy(long_line, "{\"command\":\"status\",\"domain\":\"", 30);
    memcpy(long_line + sizeof(long_line) - 4, "\"}\n", 3);
    snprintf(long_domain, sizeof(long_domain), "{\"command\":\"pause\",\"domain\":\"%0300d\"}\n",
             0);

    for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
        unsigned before = seen.calls;
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].req);
        ssize_t n = exchange(cases[i].req, len, cases[i].eof, buf, sizeof(buf));

        CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "BadRequest") == 0 &&
                  seen.calls == before,
              "%s: BadRequest, handler not called (got '%.*s')", cases[i].desc, LINE(buf));
    }
}

/* Random lines and single-byte mutations of valid ones: always one well-formed reply. */
static void test_fuzz(void)
{
    static const char *valid[] = {
        "{\"command\":\"status\"}",
        "{\"command\":\"explain\",\"domain\":\"vm1\"}",
        "{\"domain\":\"nosuch\",\"command\":\"pause\"}",
    };
    unsigned bad = 0, total = 0;
    char line[300], buf[4096], kind[64];

    srand(12345);
    for (unsigned i = 0; i < 400; i++) {
        size_t len;
        ssize_t n;
        if (i % 2) {
            len = (size_t)(rand() % 200);
            for (size_t k = 0; k < len; k++)
                line[k] = (char)(rand() % 256);
        } else {
            const char *v = valid[rand() % VN_ARRAY_SIZE(valid)];
            len = strlen(v);
            memcpy(line, v, len);
            for (int m = 1 + rand() % 3; m > 0; m--)
                line[rand() % len] = (char)(rand() % 256);
        }
        for (size_t k = 0; k < len; k++)
            if (line[k] == '\n')
                line[k] = ' ';
        line[len++] = '\n';
        n = exchange(line, len, false, buf, sizeof(buf));
        reply_kind(buf, n, kind, sizeof(kind));
        total++;
        bad += !(strcmp(kind, "return") == 0 || strcmp(kind, "BadRequest") == 0 ||
                 strcmp(kind, "NoSuchDomain") == 0 || strcmp(kind, "Internal") == 0);
    }
    CHECK(bad == 0, "fuzz: %u of %u hostile lines got one well-formed reply", total - bad, total);
}

static void test_slow_clients(void)
{
    unsigned before = seen.calls;
    _cleanup_close_ int silent = client_connect(sockpath);
    _cleanup_close_ int partial = client_connect(sockpath);
    int64_t start = now_ms(), t_silent = -1, t_partial = -1;
    char buf[4096];

    CHECK(silent >= 0 && partial >= 0, "slow clients connect");
    if (silent < 0 || partial < 0)
        return;
    CHECK(write(partial, "{\"command\":", 11) == 11, "partial request sent");
    /* how late past 2 s they are dropped depends on the machine: waited for up to 60 s, only
     * the lower bound is the rule (issue 28) */
    while (now_ms() - start < 60000 && (t_silent < 0 || t_partial < 0)) {
        struct pollfd p[2] = {{.fd = silent, .events = POLLIN}, {.fd = partial, .events = POLLIN}};
        (void)loop_run_once();
        if (poll(p, 2, 0) > 0) {
            if (t_silent < 0 && p[0].revents && read_reply(silent, buf, sizeof(buf), 100) >= 0)
                t_silent = now_ms() - start;
            if (t_partial < 0 && p[1].revents && read_reply(partial, buf, sizeof(buf), 100) >= 0)
                t_partial = now_ms() - start;
        }
    }
    CHECK(t_silent >= 1800, "silent client dropped, not before 2 s (%lld ms)", (long long)t_silent);
    CHECK(t_partial >= 1800, "client without a newline dropped, not before 2 s (%lld ms)",
          (long long)t_partial);
    CHECK(seen.calls == before, "no handler called for slow clients");
}

static void test_client_limit(void)
{
    int fds[20];
    unsigned refused = 0, idle = 0, before = seen.calls;
    char buf[4096], kind[64];
    ssize_t n;

    for (unsigned i = 0; i < VN_ARRAY_SIZE(fds); i++)
        fds[i] = client_connect(sockpath);
    /* the loop runs until the refusals are there to read (at most 60 s: "never came") */
    for (int64_t end = now_ms() + 60000; now_ms() < end;) {
        unsigned ready = 0;
        pump(50);
        for (unsigned i = 0; i < VN_ARRAY_SIZE(fds); i++) {
            struct pollfd p = {.fd = fds[i], .events = POLLIN};
            ready += fds[i] >= 0 && poll(&p, 1, 0) == 1;
        }
        if (ready >= VN_ARRAY_SIZE(fds) - CONTROL_MAX_CLIENTS)
            break;
    }
    for (unsigned i = 0; i < VN_ARRAY_SIZE(fds); i++) {
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        if (fds[i] < 0)
            continue;
        if (poll(&p, 1, 0) == 1) {
            n = read_reply(fds[i], buf, sizeof(buf), 60000);
            refused += n > 0 && strcmp(reply_kind(buf, n, kind, sizeof(kind)), "Internal") == 0 &&
                       strstr(buf, "too many");
        } else {
            idle++;
        }
    }
    CHECK(refused == 20 - CONTROL_MAX_CLIENTS && idle == CONTROL_MAX_CLIENTS,
          "20 idle clients: %u kept, %u refused at once with 'too many'", idle, refused);
    n = ask("{\"command\":\"status\"}\n", buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "Internal") == 0,
          "while full, another client is refused");
    for (unsigned i = 0; i < VN_ARRAY_SIZE(fds); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    /* until the server saw them hang up (at most 60 s) */
    for (int64_t end = now_ms() + 60000; now_ms() < end;) {
        pump(50);
        n = ask("{\"command\":\"status\"}\n", buf, sizeof(buf));
        if (strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0)
            break;
    }
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0 && seen.calls == before + 1,
          "once they hang up, the server serves again");
}

/* A client that sends and hangs up without reading: the reply hits a closed socket. */
static void test_hangup(void)
{
    char buf[4096], kind[64];
    ssize_t n;

    for (unsigned i = 0; i < 5; i++) {
        int fd = client_connect(sockpath);
        if (fd >= 0) {
            if (write(fd, "{\"command\":\"status\"}\n", 21) < 0)
                _exit(3);
            close(fd);
        }
    }
    pump(100);
    n = ask("{\"command\":\"status\"}\n", buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return") == 0,
          "clients that hang up before the reply do not hurt the server (no SIGPIPE)");
}

/* Fork a child that becomes uid/gid 65534 and connects: writes to `out` the reply or
 * "connect: <errno>". Pumps the loop until the child is done. */
static void as_nobody(char *out, size_t len)
{
    int pfd[2];
    pid_t pid;
    ssize_t n;

    out[0] = '\0';
    if (pipe(pfd) < 0)
        return;
    pid = fork();
    if (pid == 0) {
        struct timeval tv = {.tv_sec = 5};
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char buf[4096];
        size_t got = 0;
        int fd;

        close(pfd[0]);
        if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
            _exit(2);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        set_path(&sa, sockpath);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            dprintf(pfd[1], "connect: %d", errno);
            _exit(0);
        }
        /* the server may have answered and closed already: no SIGPIPE, ignore errors */
        (void)!send(fd, "{\"command\":\"status\"}\n", 21, MSG_NOSIGNAL);
        while (got < sizeof(buf)) {
            ssize_t r = read(fd, buf + got, sizeof(buf) - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (write(pfd[1], buf, got) < 0)
            _exit(4);
        _exit(0);
    }
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        return;
    }
    for (int64_t end = now_ms() + 10000; now_ms() < end;) {
        (void)loop_run_once();
        if (waitpid(pid, NULL, WNOHANG) == pid)
            break;
    }
    n = read(pfd[0], out, len - 1);
    out[n > 0 ? n : 0] = '\0';
    close(pfd[0]);
}

static void test_non_root(void)
{
    unsigned before = seen.calls;
    char buf[4096], kind[64], want[32];

    as_nobody(buf, sizeof(buf));
    snprintf(want, sizeof(want), "connect: %d", EACCES);
    CHECK(strcmp(buf, want) == 0, "non-root cannot even reach the socket (got '%.*s')", LINE(buf));

    /* open the file permissions: SO_PEERCRED is the second line of defence */
    (void)chmod(rundir, 0755);
    (void)chmod(sockpath, 0666);
    as_nobody(buf, sizeof(buf));
    CHECK(strcmp(reply_kind(buf, (ssize_t)strlen(buf), kind, sizeof(kind)), "PermissionDenied") ==
              0,
          "non-root peer gets PermissionDenied (got '%.*s')", LINE(buf));
    CHECK(seen.calls == before, "and no handler was called");
    (void)chmod(rundir, 0700);
    (void)chmod(sockpath, 0600);
}

/* A client asks for a reply larger than its socket buffer and does not read it: the loop goes
 * on (another client is answered), and the reply waits for the client, whole, until it reads.
 * Before, the loop sat in send() for up to 5 s and then gave the reply up half sent. */
static void test_slow_reader(void)
{
    static const char req[] = "{\"command\":\"decisions\",\"domain\":\"huge\"}\n";
    size_t big = HUGE_REPLY + 4096;
    char *got = malloc(big), buf[4096], kind[64];
    unsigned before = seen.calls;
    int a = client_connect(sockpath);

    if (!CHECK(got && a >= 0 && write(a, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1,
               "slow reader: asks for an 8 MiB reply"))
        goto out;
    while (seen.calls == before)
        (void)loop_run_once();
    ssize_t n = ask("{\"command\":\"status\"}\n", buf, sizeof(buf));
    CHECK(!strcmp(reply_kind(buf, n, kind, sizeof(kind)), "return"),
          "slow reader: while its reply waits, another client is answered (%s)", kind);
    n = read_reply(a, got, big, 60000); /* only says "it never came" */
    struct json_object *o = n > 0 ? parse_reply(got, n) : NULL, *r, *b;
    CHECK(o && json_object_object_get_ex(o, "return", &r) &&
              json_object_object_get_ex(r, "blob", &b) &&
              json_object_get_string_len(b) == (int)HUGE_REPLY,
          "slow reader: it gets its whole reply when it reads (%zd bytes)", n);
    if (o)
        json_object_put(o);
out:
    if (a >= 0)
        close(a);
    free(got);
}

static void test_open_errors(control_server *live)
{
    char path[200];
    control_server *s = NULL;
    struct stat st;
    int r, fd;

    (void)live;
    r = control_open(sockpath, commands, NULL, &s);
    CHECK(r == -EADDRINUSE && !s, "a second server on a live socket: -EADDRINUSE (got %d)", r);

    snprintf(path, sizeof(path), "%s/regular", tmpdir);
    fd = open(path, O_CREAT | O_WRONLY, 0644);
    close(fd);
    r = control_open(path, commands, NULL, &s);
    CHECK(r == -EEXIST && stat(path, &st) == 0 && S_ISREG(st.st_mode),
          "a path that is not a socket is refused and left alone (got %d)", r);

    snprintf(path, sizeof(path), "%s/stale.sock", tmpdir);
    {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        set_path(&sa, path);
        (void)bind(fd, (struct sockaddr *)&sa, sizeof(sa));
        close(fd);
    }
    r = control_open(path, commands, NULL, &s);
    CHECK(r == 0 && s, "a stale socket is replaced (got %d)", r);
    control_close(s);
    s = NULL;
    CHECK(stat(path, &st) < 0 && errno == ENOENT, "control_close unlinks the stale path");

    memset(path, 'x', sizeof(path) - 1);
    path[0] = '/';
    path[sizeof(path) - 1] = '\0';
    r = control_open(path, commands, NULL, &s);
    CHECK(r == -ENAMETOOLONG, "a path longer than sun_path: -ENAMETOOLONG (got %d)", r);

    snprintf(path, sizeof(path), "%s/no/such/dir.sock", tmpdir);
    r = control_open(path, commands, NULL, &s);
    CHECK(r == -ENOENT, "only the last directory level is created (got %d)", r);

    /* the socket's directory: whoever may write it may swap the socket or put a link there */
    {
        static const struct {
            const char *dir;
            mode_t mode;
            uid_t uid;
            int want;
            const char *what;
        } dirs[] = {
            {"dir-gw", 0770, 0, -EPERM, "a directory its group may write"},
            {"dir-ow", 01777, 0, -EPERM, "a directory every user may write (sticky or not)"},
            {"dir-user", 0700, 65534, -EPERM, "another user's directory"},
            {"dir-ok", 0755, 0, 0, "root's directory that only root writes"},
        };
        char dir[160];
        for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
            snprintf(dir, sizeof(dir), "%s/%s", tmpdir, dirs[i].dir);
            (void)mkdir(dir, 0700);
            (void)chmod(dir, dirs[i].mode);
            (void)chown(dir, dirs[i].uid, 0);
            snprintf(path, sizeof(path), "%s/vnumad.sock", dir);
            s = NULL;
            r = control_open(path, commands, NULL, &s);
            CHECK(r == dirs[i].want && (r == 0) == (s != NULL), "socket directory: %s: %s (got %d)",
                  dirs[i].what, dirs[i].want ? "refused" : "used", r);
            control_close(s);
        }
        snprintf(dir, sizeof(dir), "%s/dir-link", tmpdir);
        snprintf(path, sizeof(path), "%s/dir-ok", tmpdir);
        CHECK(symlink(path, dir) == 0, "a link to a good directory");
        snprintf(path, sizeof(path), "%s/vnumad.sock", dir);
        r = control_open(path, commands, NULL, &s);
        CHECK(r == -ELOOP, "socket directory: a link is refused, even to a good one (got %d)", r);
    }
}

int main(void)
{
    control_server *srv = NULL;
    unsigned fds_before;
    struct stat st;
    int r;

    if (geteuid() != 0) {
        printf("cannot run here: the control server serves uid 0 only; run as root\n");
        return 77;
    }
    signal(SIGPIPE, SIG_DFL); /* a stray SIGPIPE must kill the test, not pass unnoticed */
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-control.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("cannot run here: mkdtemp: %s\n", strerror(errno));
        return 77;
    }
    (void)chmod(tmpdir, 0755); /* so that uid 65534 reaches rundir */
    snprintf(rundir, sizeof(rundir), "%s/run", tmpdir);
    snprintf(sockpath, sizeof(sockpath), "%s/vnumad.sock", rundir);

    r = loop_init();
    CHECK(r == 0, "loop_init");
    if (r < 0)
        return tap_done();
    CHECK(loop_add_timer(TICK_MS, tick, NULL) >= 0, "tick timer");

    fds_before = count_fds();
    r = control_open(sockpath, commands, tmpdir, &srv);
    CHECK(r == 0 && srv, "control_open %s (got %d)", sockpath, r);
    if (r < 0)
        return tap_done();

    test_files();
    test_roundtrips();
    test_bad_requests();
    test_fuzz();
    test_slow_clients();
    test_client_limit();
    test_hangup();
    test_non_root();
    test_slow_reader();
    test_open_errors(srv);

    control_close(srv);
    pump(50); /* libvirt frees removed handles on its next iteration */
    CHECK(stat(sockpath, &st) < 0 && errno == ENOENT, "control_close unlinks the socket");
    CHECK(count_fds() == fds_before, "no file descriptor leaked (%u before, %u after)", fds_before,
          count_fds());
    control_close(NULL);

    {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            printf("# cannot remove %s\n", tmpdir);
    }
    return tap_done();
}
