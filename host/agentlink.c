/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "agentlink.h"

#include <errno.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "loop.h"
#include "nsroot.h"
#include "util.h"
#include "virt.h"

#define AGENT_PORT_NAME "org.vnuma.agent.0"

struct agentlink {
    int fd;
    int watch;
    agentlink_callbacks cb;
    agentlink_stats *stats;
    proto_reader *reader;
    proto_rate rate;
    proto_expect expect;
    bool outstanding;
    double sent_s;
    unsigned version;
    uint32_t next_id;
    bool ready;
    bool dead;
    /* the byte budget: tokens (bytes) as of tokens_ms, and the timer of a pause (-1: none) */
    double tokens;
    uint64_t tokens_ms;
    int pause_timer;
    bool last_rate; /* the last line was refused over the message rate */
};

static void xml_doc_freep(xmlDocPtr *d)
{
    if (*d)
        xmlFreeDoc(*d);
}

int agentlink_find_channel(const char *domxml, char *path, size_t len, bool *ret_connected)
{
    _cleanup_(xml_doc_freep) xmlDocPtr doc =
        xmlReadMemory(domxml, (int)strlen(domxml), "domain.xml", NULL,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlXPathContextPtr ctx;
    xmlXPathObjectPtr res;
    int r = -ENOENT;

    if (!doc)
        return -EINVAL;
    ctx = xmlXPathNewContext(doc);
    if (!ctx)
        return -ENOMEM;
    res = xmlXPathEvalExpression(
        (const xmlChar *)"/domain/devices/channel[@type='unix'][target/@name='" AGENT_PORT_NAME
                         "']",
        ctx);
    if (res && res->nodesetval && res->nodesetval->nodeNr > 0) {
        xmlNodePtr ch = res->nodesetval->nodeTab[0];
        for (xmlNodePtr n = ch->children; n; n = n->next) {
            xmlChar *v;
            if (n->type != XML_ELEMENT_NODE)
                continue;
            if (!strcmp((const char *)n->name, "source") &&
                (v = xmlGetProp(n, (const xmlChar *)"path"))) {
                if (strlen((const char *)v) < len) {
                    snprintf(path, len, "%s", (const char *)v);
                    r = 0;
                }
                xmlFree(v);
            } else if (!strcmp((const char *)n->name, "target") &&
                       (v = xmlGetProp(n, (const xmlChar *)"state"))) {
                *ret_connected = !strcmp((const char *)v, "connected");
                xmlFree(v);
            }
        }
    }
    xmlXPathFreeObject(res);
    xmlXPathFreeContext(ctx);
    return r;
}

static void count(agentlink *l, int err, const char *why)
{
    unsigned k = (unsigned)(err < 0 ? -err : err);

    if (k < PROTO_ERR_MAX)
        l->stats->errors[k]++;
    snprintf(l->stats->last_error, sizeof(l->stats->last_error), "%s: %.200s",
             proto_error_name((proto_error)(k < PROTO_ERR_MAX ? k : PROTO_ERR_SYNTAX)), why);
}

static void stop_pause(agentlink *l)
{
    if (l->pause_timer >= 0) {
        loop_remove_timer(l->pause_timer);
        l->pause_timer = -1;
    }
}

static void fail(agentlink *l)
{
    if (l->dead)
        return;
    l->dead = true;
    l->ready = false;
    if (l->watch >= 0) {
        loop_remove_fd(l->watch);
        l->watch = -1;
    }
    stop_pause(l);
    if (l->cb.closed)
        l->cb.closed(l->cb.opaque);
}

static int send_line(agentlink *l, const char *line, size_t len)
{
    static const unsigned char flush = PROTO_RESYNC_BYTE;
    ssize_t n;

    /* 0xFF first: whatever half-line the agent's parser holds is dropped */
    if (send(l->fd, &flush, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
        return -errno ? -errno : -EIO;
    n = send(l->fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0)
        return -errno;
    if ((size_t)n != len)
        return -EAGAIN; /* a short request on a local socket: give it up, ask again */
    return 0;
}

static void handle_line(agentlink *l, const char *line, size_t len)
{
    proto_reply rep;
    char err[256];
    int r;

    if (!proto_rate_allow(&l->rate, vn_mono_ms())) {
        if (l->last_rate) /* said already: only counted (a flood's lines cost a clock read) */
            l->stats->errors[PROTO_ERR_RATE]++;
        else
            count(l, PROTO_ERR_RATE, "over the message rate");
        l->last_rate = true;
        return;
    }
    l->last_rate = false;
    r = proto_decode_reply(line, len, l->outstanding ? &l->expect : NULL, &rep, err, sizeof(err));
    if (r < 0) {
        count(l, r, err);
        return;
    }
    l->outstanding = false;
    switch (rep.kind) {
    case PROTO_REPLY_HELLO:
        l->version = rep.hello.version;
        l->ready = true;
        if (l->cb.ready)
            l->cb.ready(l->cb.opaque, &rep.hello);
        break;
    case PROTO_REPLY_HINTS:
        l->stats->hint_sets++;
        if (l->cb.hints) {
            proto_hints *h = malloc(sizeof(*h));
            if (h) {
                *h = rep.hints;
                memset(&rep.hints, 0, sizeof(rep.hints));
                l->cb.hints(l->cb.opaque, h);
            }
        }
        break;
    default:
        l->stats->agent_errors++;
        snprintf(l->stats->last_error, sizeof(l->stats->last_error), "agent error %.32s: %.160s",
                 rep.error.class, rep.error.desc);
        break;
    }
    proto_reply_clear(&rep);
}

static void on_readable(int watch, int fd, int events, void *opaque);

/* The pause is over: read the channel again. */
static void on_resume(int timer, void *opaque)
{
    agentlink *l = opaque;

    (void)timer;
    stop_pause(l);
    if (l->dead || l->watch >= 0)
        return;
    l->watch = loop_add_fd(l->fd, LOOP_READABLE, on_readable, l);
    if (l->watch < 0)
        fail(l);
}

/* The guest wrote its budget's worth: no reading for AGENTLINK_PAUSE_MS. */
static void pause_reading(agentlink *l)
{
    l->stats->throttled++;
    if (l->watch >= 0) {
        loop_remove_fd(l->watch);
        l->watch = -1;
    }
    if (l->pause_timer < 0)
        l->pause_timer = loop_add_timer(AGENTLINK_PAUSE_MS, on_resume, l);
    if (l->pause_timer < 0)
        fail(l);
}

/* The bytes the guest may still write now (the bucket refilled up to its burst). */
static size_t tokens_now(agentlink *l)
{
    uint64_t now = vn_mono_ms();

    if (now > l->tokens_ms) {
        l->tokens = VN_MIN((double)AGENTLINK_BYTES_BURST,
                           l->tokens + (double)(now - l->tokens_ms) * AGENTLINK_BYTES_PER_S / 1000);
        l->tokens_ms = now;
    }
    return (size_t)l->tokens;
}

static void on_readable(int watch, int fd, int events, void *opaque)
{
    agentlink *l = opaque;
    char buf[16384];
    size_t budget = AGENTLINK_READ_BUDGET;

    (void)watch;
    (void)events;
    while (budget > 0 && !l->dead) {
        size_t want = VN_MIN(VN_MIN(sizeof(buf), budget), tokens_now(l));
        if (want == 0) {
            pause_reading(l);
            return;
        }
        ssize_t n = recv(fd, buf, want, MSG_DONTWAIT);
        size_t off = 0;
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            fail(l);
            return;
        }
        if (n < 0)
            return;
        budget -= (size_t)n;
        l->tokens -= (double)n;
        l->stats->bytes += (uint64_t)n;
        while (off < (size_t)n) {
            const char *line = NULL;
            size_t used = 0, linelen = 0;
            int r =
                proto_reader_feed(l->reader, buf + off, (size_t)n - off, &used, &line, &linelen);
            off += used;
            if (r == 1)
                handle_line(l, line, linelen);
            else if (r < 0)
                count(l, r, "line longer than the protocol allows");
            if (used == 0 && r != 1)
                break;
        }
    }
}

/* The effective uid of process pid (/proc/PID/status), or -errno. */
static long process_euid(pid_t pid)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[64], line[256];
    unsigned long real, eff;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Uid: %lu %lu", &real, &eff) == 2)
            return (long)eff;
    return -EINVAL;
}

int agentlink_connect(const char *path, pid_t daemon, pid_t peer, int *ret)
{
    _cleanup_close_ int pfd = -1, fd = -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    struct stat st;
    long uid;

    if (peer <= 0)
        return -ESRCH; /* no QEMU to check the listener against yet */
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    /* a handle on the socket file itself (O_PATH opens nothing), never through a link in its
     * place; the directories above are the operator's (a /var/lib may be a link), or the
     * daemon's, in its root (links there lead nowhere outside it) */
    if (daemon > 0) {
        pfd = nsroot_open("/", daemon, path, O_PATH | O_NOFOLLOW);
        if (pfd < 0)
            return pfd;
    } else {
        pfd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0)
            return -errno;
    }
    if (fstat(pfd, &st) < 0)
        return -errno;
    if (S_ISLNK(st.st_mode))
        return -ELOOP;
    if (!S_ISSOCK(st.st_mode))
        return -ENOTSOCK;
    /* QEMU binds a mode='bind' channel: the socket is its user's, or another's listens */
    uid = process_euid(peer);
    if (uid < 0)
        return (int)uid;
    if ((uid_t)uid != st.st_uid)
        return -EPERM;
    /* the socket the handle names, not whatever the path names by now */
    snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        return -errno;
    /* and the process listening is the domain's QEMU, nobody else */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
        return -errno;
    if (cred.pid != peer)
        return -EPERM;
    *ret = fd;
    fd = -1;
    return 0;
}

int agentlink_open(const char *path, pid_t daemon, pid_t qemu, const agentlink_callbacks *cb,
                   agentlink_stats *stats, agentlink **ret)
{
    agentlink *l;
    proto_hello hello = {.versions = 0, .caps = proto_known_caps()};
    _cleanup_free_ char *line = NULL;
    size_t len = 0;
    int fd = -1, r;

    r = agentlink_connect(path, daemon, qemu, &fd);
    if (r < 0)
        return r;
    l = calloc(1, sizeof(*l));
    if (!l) {
        close(fd);
        return -ENOMEM;
    }
    l->fd = fd;
    l->watch = -1;
    l->pause_timer = -1;
    l->tokens = AGENTLINK_BYTES_BURST;
    l->tokens_ms = vn_mono_ms();
    l->cb = *cb;
    l->stats = stats;
    l->next_id = 1;
    l->reader = malloc(sizeof(*l->reader));
    if (!l->reader) {
        agentlink_close(l);
        return -ENOMEM;
    }
    proto_reader_init(l->reader);
    proto_rate_init(&l->rate, PROTO_RATE_PER_SEC, PROTO_RATE_BURST);
    for (unsigned v = PROTO_VERSION_MIN; v <= PROTO_VERSION_MAX; v++)
        hello.versions |= UINT64_C(1) << v;
    r = proto_encode_hello(l->next_id, &hello, &line, &len);
    if (r < 0 || (r = send_line(l, line, len)) < 0) {
        agentlink_close(l);
        return r < 0 ? r : -EIO;
    }
    l->expect = (proto_expect){.msg = PROTO_MSG_HELLO, .id = l->next_id++, .version = 0};
    l->outstanding = true;
    l->sent_s = (double)vn_mono_ms() / 1000; /* CLOCK_MONOTONIC, as the callers' now_s */
    l->watch = loop_add_fd(l->fd, LOOP_READABLE, on_readable, l);
    if (l->watch < 0) {
        r = l->watch;
        agentlink_close(l);
        return r;
    }
    stats->connects++;
    *ret = l;
    return 0;
}

void agentlink_close(agentlink *l)
{
    if (!l)
        return;
    if (l->watch >= 0)
        loop_remove_fd(l->watch);
    stop_pause(l);
    if (l->fd >= 0)
        close(l->fd);
    free(l->reader);
    free(l);
}

bool agentlink_ready(const agentlink *l)
{
    return l && l->ready && !l->dead;
}

int agentlink_request_hints(agentlink *l, const proto_get_hints *g, double now_s)
{
    _cleanup_free_ char *line = NULL;
    size_t len = 0;
    int r;

    if (l && !l->dead && !l->ready && l->outstanding &&
        now_s - l->sent_s >= AGENTLINK_REPLY_TIMEOUT_S) {
        /* No answer to the hello: the guest can miss QEMU's "host connected" when its port
         * reopens right after the host side closed (its write then fails with EPIPE and the
         * agent waits for a host that is there). A new connection announces it again. */
        snprintf(l->stats->last_error, sizeof(l->stats->last_error),
                 "no hello reply within %.0f s: reconnecting", AGENTLINK_REPLY_TIMEOUT_S);
        fail(l);
        return -ETIMEDOUT;
    }
    if (!agentlink_ready(l))
        return -ENOTCONN;
    if (l->outstanding && now_s - l->sent_s < AGENTLINK_REPLY_TIMEOUT_S)
        return 0;
    r = proto_encode_get_hints(l->next_id, g, &line, &len);
    if (r < 0)
        return -EINVAL;
    r = send_line(l, line, len);
    if (r < 0) {
        if (r != -EAGAIN)
            fail(l);
        return r;
    }
    l->expect =
        (proto_expect){.msg = PROTO_MSG_GET_HINTS, .id = l->next_id++, .version = l->version};
    l->outstanding = true;
    l->sent_s = now_s;
    return 0;
}
