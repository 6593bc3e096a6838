/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The server side of vnumad's control socket (docs/control-protocol.md): a
 * Unix stream socket on the daemon's event loop (host/loop.h), one
 * JSON request line per connection, one JSON reply line, then close.
 *
 * Only uid 0 is served: every other peer (SO_PEERCRED) gets PermissionDenied
 * before anything is read. Requests are validated here (object, known keys,
 * string types, known command, domain present when needed); the handlers see
 * only well-formed requests. This module does not log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;

#define CONTROL_REQUEST_MAX 4096 /* bytes of one request line, newline included */
/* ... of a command that takes an "xml" (the qemu hook's place): the XML, JSON-escaped */
#define CONTROL_XML_MAX      (1024 * 1024)         /* bytes of the XML itself */
#define CONTROL_XML_LINE_MAX (4 * CONTROL_XML_MAX) /* bytes of such a line */
#define CONTROL_MAX_CLIENTS  16   /* connections served at once; more are refused */
#define CONTROL_TIMEOUT_MS   2000 /* a client that has not sent its line by then is dropped */
#define CONTROL_ERRCLASS_MAX 32
#define CONTROL_ERR_MAX      512
#define CONTROL_STAGE_MAX    15 /* bytes of a test hold's stage name */

/* A request as the handlers see it: validated, strings NUL-free and bounded. */
typedef struct control_request {
    const char *domain;            /* NULL when none; never NULL when the command needs_domain */
    const char *stage;             /* NULL when none; only for a command that takes_stage */
    const char *xml;               /* never NULL for a command that takes_xml; else NULL */
    struct control_client *client; /* the server's (control_defer) */
} control_request;

/*
 * One command. On success return 0 and set *ret_result to a
 * new reference (the server owns it from then on; NULL is sent as {}).
 * On failure return -errno and, when it is the client's fault or a known
 * condition, write the class ("NoSuchDomain", "BadRequest", ...) into errclass
 * and a one-line description into err; an empty errclass is sent as
 * "Internal" with err (or strerror) as its description.
 */
typedef int (*control_handler)(void *opaque, const control_request *req,
                               struct json_object **ret_result, char *errclass, size_t classlen,
                               char *err, size_t errlen);

typedef struct control_command {
    const char *name; /* NULL ends the table */
    control_handler fn;
    bool needs_domain;
    bool takes_stage; /* {"stage": NAME} and an optional domain (vnumactl hold) */
    bool takes_xml;   /* {"xml": TEXT} (at most CONTROL_XML_MAX bytes), the line up to
                       * CONTROL_XML_LINE_MAX (the qemu hook's place) */
} control_command;

typedef struct control_server control_server;

/*
 * A reply sent later: a handler whose answer needs blocking work (a libvirt call, a QEMU
 * command) takes the request's reply with control_defer(), hands the work to a worker thread
 * and returns CONTROL_DEFERRED; the loop goes on, and once the work is back the handler's
 * code sends the reply with control_reply_done() (on the loop thread). The client waits
 * without a timeout of the server's (vnumactl has its own).
 */
typedef struct control_reply control_reply;
#define CONTROL_DEFERRED 1
control_reply *control_defer(const control_request *req);
/* Send the reply (rc 0: result, taken over, NULL sent as {}; rc < 0: the error as a
 * handler's) and close the client. After control_close() it only frees. */
void control_reply_done(control_reply *reply, int rc, struct json_object *result,
                        const char *errclass, const char *err);

/*
 * Listen on `path` and serve `cmds` (a table ended by a NULL name; it must
 * outlive the server) on the event loop; handlers get `opaque`. loop_init()
 * must have been called. Creates the parent directory (mode 0700) when it is
 * missing (one level only); an existing one must be a directory, not a link
 * (-ELOOP), owned by root or this user and writable by no one else (-EPERM).
 * Removes a stale socket, and creates the socket mode 0600 (never through a link).
 * Returns 0, or -ENAMETOOLONG (path does not fit sun_path), -EEXIST (path
 * exists and is not a socket), -EADDRINUSE (a live server answers on it), or
 * another -errno from mkdir/socket/bind/listen/chmod/loop_add_fd.
 */
int control_open(const char *path, const control_command *cmds, void *opaque, control_server **ret);

/* Drop every client, stop listening and unlink the socket (when it is still
 * the one this server created). NULL-safe. Not from inside a handler. */
void control_close(control_server *s);
