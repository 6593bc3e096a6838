/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host policy: which domains are balanced without a <balancer> element in their XML
 * (docs/configuration.md "Host policy"). vnumad.conf says the host default (default_mode =
 * off|advise|auto, off unless set) and where the rules are (policy_dir, *.rules files read in
 * name order). One rule a line:
 *
 *     MODE MATCH [MATCH ...]        # all of its matches must hold
 *
 * MODE is off, advise or auto; a MATCH is KEY=GLOB (fnmatch(3) without flags: '*' matches '/'
 * and a leading '.'; a value with blanks in double quotes) or a bare word:
 *     name=GLOB            the domain's name
 *     nova.flavor=GLOB     <nova:flavor name=...> of Nova's <nova:instance>
 *     nova.project=GLOB    <nova:owner><nova:project uuid=...>NAME: its uuid or its name
 *     nova.image=GLOB      <nova:root type="image" uuid=...>
 *     kubevirt.namespace=GLOB, kubevirt.name=GLOB   a KubeVirt VMI (<kubevirt xmlns=
 *                          "http://kubevirt.io"> present; its domain is named NAMESPACE_NAME)
 *     kubevirt.uid=GLOB    the VMI's <uid>
 *     nova, kubevirt       the block is there
 *     dedicated            the persistent XML pins each vCPU to a CPU of its own
 * The first rule whose matches all hold gives the mode; none: the default. A domain's own
 * <balancer> element always wins over both (domains.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

#define HOSTPOLICY_MAX_RULES   1024 /* over every file */
#define HOSTPOLICY_MAX_MATCHES 8    /* a rule's */
#define HOSTPOLICY_GLOB_MAX    256  /* bytes of a glob */
#define HOSTPOLICY_VALUE_MAX   256  /* a longer value of a domain's never matches a glob */
#define HOSTPOLICY_WHERE_MAX   320  /* "rule FILE:LINE" */

typedef enum hp_key {
    HP_NAME,
    HP_NOVA_FLAVOR,
    HP_NOVA_PROJECT,
    HP_NOVA_IMAGE,
    HP_KUBEVIRT_NAMESPACE,
    HP_KUBEVIRT_NAME,
    HP_KUBEVIRT_UID,
    HP_NOVA,
    HP_KUBEVIRT,
    HP_DEDICATED,
    HP_KEY_MAX,
} hp_key;

typedef struct hp_match {
    hp_key key;
    char glob[HOSTPOLICY_GLOB_MAX]; /* "" for the bare words */
} hp_match;

typedef struct hp_rule {
    vn_mode mode;
    char where[HOSTPOLICY_WHERE_MAX]; /* "rule FILE:LINE" */
    unsigned nr;
    hp_match m[HOSTPOLICY_MAX_MATCHES];
} hp_rule;

typedef struct host_policy {
    vn_mode default_mode;
    unsigned nr_rules;
    hp_rule *rules;
} host_policy;

/* What the rules need read of a domain besides its live XML. */
#define HOSTPOLICY_NEEDS_LIVE     1u /* a rule: the live XML */
#define HOSTPOLICY_NEEDS_INACTIVE 2u /* a `dedicated` rule: the definition too */
#define HOSTPOLICY_NEEDS_DEFAULT  4u /* no rule, a default other than off: nothing to read */

/* "off", "advise", "auto" into *ret: 0, or -EINVAL. */
int hostpolicy_mode_parse(const char *s, vn_mode *ret);

/*
 * Read the rules of every *.rules file in `dir` in name order (strcmp; other names and
 * dot-files are skipped) over `default_mode` into a new *ret. A missing dir is no rules when
 * `optional`. Files are held to what vnumad.conf is (root's, writable by no one else). Returns
 * 0, or -errno with "FILE:LINE: reason" in err; *ret is untouched on error.
 */
int hostpolicy_load(const char *dir, bool optional, vn_mode default_mode, host_policy **ret,
                    char *err, size_t errlen);

/* Parse one rule line (comments and blanks already gone or not: 1 for "nothing on the line")
 * into *ret; where is its "FILE:LINE". 0, 1, or -EINVAL with the reason in err. */
int hostpolicy_parse_line(const char *line, const char *where, hp_rule *ret, char *err,
                          size_t errlen);

void hostpolicy_free(host_policy *p);
static inline void hostpolicy_freep(host_policy **p)
{
    hostpolicy_free(*p);
}

/* HOSTPOLICY_NEEDS_* of p (0: NULL, or no rule and default off: nothing is read). */
unsigned hostpolicy_needs(const host_policy *p);

/* Whether two policies say the same (same default, same rules in the same order). */
bool hostpolicy_equal(const host_policy *a, const host_policy *b);
