/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vnumactl's side of vnumad's control socket (ctl_client.c; docs/control-protocol.md). */
#ifndef VNUMA_CTL_CLIENT_H
#define VNUMA_CTL_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_REPLY_MAX  (16u * 1024 * 1024) /* bytes of one reply */
#define CTL_TIMEOUT_MS 30000               /* one exchange (advise samples first) */

/*
 * Send {"command": command, "domain": domain (NULL: none)} to the vnumad listening on
 * socket_path and put the reply's "return" value in *ret (a new reference): 0. On any
 * failure (no vnumad, an error reply, no reply within timeout_ms, a malformed reply) -1,
 * with one line saying why in err_buf.
 */
int ctl_call(const char *socket_path, const char *command, const char *domain, int timeout_ms,
             struct json_object **ret, char *err_buf, size_t err_len);
/* The same with a "stage" too (NULL: none), for the test holds. */
int ctl_call_stage(const char *socket_path, const char *command, const char *domain,
                   const char *stage, int timeout_ms, struct json_object **ret, char *err_buf,
                   size_t err_len);

/* The same with an "xml" too (NULL: none), for the qemu hook's place. */
int ctl_call_xml(const char *socket_path, const char *command, const char *domain,
                 const char *stage, const char *xml, int timeout_ms, struct json_object **ret,
                 char *err_buf, size_t err_len);

/* Control characters of s (C0 but the newline, DEL, C1 as UTF-8) replaced by '?' in place:
 * true when something was replaced. */
bool ctl_printable_inplace(char *s);
/* Every string in o made printable (ctl_printable_inplace), for output to people. */
void ctl_json_printable(struct json_object *o);
/* o as pretty JSON and a newline on stdout. */
void ctl_print_json(struct json_object *o);

/* Lenient readers: a missing or mistyped field gives the default (NULL, def, false, 0). */
struct json_object *jget(struct json_object *o, const char *key);
const char *jstr(struct json_object *o, const char *key, const char *def);
bool jnum(struct json_object *o, const char *key, double *ret);
uint64_t ju64(struct json_object *o, const char *key);
bool jbool(struct json_object *o, const char *key);
size_t jlen(struct json_object *a); /* array length, 0 for anything else */
/* An integer field as text into buf, "-" for null or missing. */
const char *jint_str(struct json_object *o, const char *key, char *buf, size_t len);
/* An array of strings as "a,b,c" into buf ("-" when empty). */
const char *jlist_str(struct json_object *a, char *buf, size_t len);

#endif
