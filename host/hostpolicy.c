/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Host policy: the rules files, read and checked (hostpolicy.h). */
#include "hostpolicy.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

#define RULE_LINE_MAX  1024
#define RULE_ECHO_MAX  64
#define RULE_FILES_MAX 256

static const char *const key_names[HP_KEY_MAX] = {
    [HP_NAME] = "name",
    [HP_NOVA_FLAVOR] = "nova.flavor",
    [HP_NOVA_PROJECT] = "nova.project",
    [HP_NOVA_IMAGE] = "nova.image",
    [HP_KUBEVIRT_NAMESPACE] = "kubevirt.namespace",
    [HP_KUBEVIRT_NAME] = "kubevirt.name",
    [HP_KUBEVIRT_UID] = "kubevirt.uid",
    [HP_NOVA] = "nova",
    [HP_KUBEVIRT] = "kubevirt",
    [HP_DEDICATED] = "dedicated",
};

/* The bare words: a fact with no value */
static bool key_bare(hp_key k)
{
    return k == HP_NOVA || k == HP_KUBEVIRT || k == HP_DEDICATED;
}

int hostpolicy_mode_parse(const char *s, vn_mode *ret)
{
    if (!strcmp(s, "off"))
        *ret = VN_MODE_OFF;
    else if (!strcmp(s, "advise"))
        *ret = VN_MODE_ADVISE;
    else if (!strcmp(s, "auto"))
        *ret = VN_MODE_AUTO;
    else
        return -EINVAL;
    return 0;
}

/* s made printable for an error message (at most RULE_ECHO_MAX bytes). */
static const char *echo(const char *s, size_t n, char *out, size_t len)
{
    size_t i;

    for (i = 0; i < n && s[i] && i < RULE_ECHO_MAX && i + 4 < len; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (i < n && s[i] && i + 3 < len)
        out[i++] = '.', out[i++] = '.', out[i++] = '.';
    out[i] = '\0';
    return out;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The next word of *p (a "quoted" one without its quotes) into word; advances *p. 0, 1 at the
 * end of the line or a comment, -EINVAL. */
static int next_word(const char **p, char *word, size_t len, char *err, size_t errlen)
{
    const char *s = *p, *start;
    size_t n = 0;
    char b[RULE_ECHO_MAX + 4];

    while (blank(*s))
        s++;
    if (!*s || *s == '#')
        return 1;
    start = s;
    while (*s && !blank(*s)) {
        if (*s == '"') {
            const char *q = strchr(s + 1, '"');
            if (!q)
                return vn_fail(err, errlen, -EINVAL, "unterminated quote in '%s'",
                               echo(start, SIZE_MAX, b, sizeof(b)));
            if (n + (size_t)(q - s - 1) >= len)
                goto long_word;
            memcpy(word + n, s + 1, (size_t)(q - s - 1));
            n += (size_t)(q - s - 1);
            s = q + 1;
            continue;
        }
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return vn_fail(err, errlen, -EINVAL, "control character 0x%02x in the line",
                           (unsigned char)*s);
        if (n + 1 >= len)
            goto long_word;
        word[n++] = *s++;
    }
    word[n] = '\0';
    *p = s;
    return 0;
long_word:
    return vn_fail(err, errlen, -EINVAL, "'%s' is longer than %u bytes",
                   echo(start, SIZE_MAX, b, sizeof(b)), HOSTPOLICY_GLOB_MAX + 32);
}

int hostpolicy_parse_line(const char *line, const char *where, hp_rule *ret, char *err,
                          size_t errlen)
{
    char word[HOSTPOLICY_GLOB_MAX + 32], b[RULE_ECHO_MAX + 4];
    const char *p = line;
    hp_rule r = {0};
    int k;

    k = next_word(&p, word, sizeof(word), err, errlen);
    if (k != 0)
        return k;
    if (hostpolicy_mode_parse(word, &r.mode) < 0)
        return vn_fail(err, errlen, -EINVAL, "expected a mode (off, advise or auto), got '%s'",
                       echo(word, SIZE_MAX, b, sizeof(b)));
    while ((k = next_word(&p, word, sizeof(word), err, errlen)) == 0) {
        char *eq = strchr(word, '=');
        size_t klen = eq ? (size_t)(eq - word) : strlen(word);
        hp_key key;

        for (key = 0; key < HP_KEY_MAX; key++)
            if (strlen(key_names[key]) == klen && !strncmp(word, key_names[key], klen))
                break;
        if (key == HP_KEY_MAX)
            return vn_fail(err, errlen, -EINVAL,
                           "unknown match '%s' (name=, nova.flavor=, nova.project=, "
                           "nova.image=, kubevirt.namespace=, kubevirt.name=, kubevirt.uid=, "
                           "nova, kubevirt, dedicated)",
                           echo(word, klen, b, sizeof(b)));
        if (key_bare(key) && eq)
            return vn_fail(err, errlen, -EINVAL, "'%s' takes no value", key_names[key]);
        if (!key_bare(key) && (!eq || !eq[1]))
            return vn_fail(err, errlen, -EINVAL, "'%s' needs a glob: %s=GLOB", key_names[key],
                           key_names[key]);
        if (eq && strlen(eq + 1) >= HOSTPOLICY_GLOB_MAX)
            return vn_fail(err, errlen, -EINVAL, "the glob of '%s' is longer than %u bytes",
                           key_names[key], HOSTPOLICY_GLOB_MAX - 1);
        if (r.nr == HOSTPOLICY_MAX_MATCHES)
            return vn_fail(err, errlen, -EINVAL, "more than %u matches in one rule",
                           HOSTPOLICY_MAX_MATCHES);
        r.m[r.nr].key = key;
        snprintf(r.m[r.nr].glob, sizeof(r.m[r.nr].glob), "%s", eq ? eq + 1 : "");
        r.nr++;
    }
    if (k < 0)
        return k;
    if (r.nr == 0)
        return vn_fail(err, errlen, -EINVAL,
                       "a rule needs a match (name=* for every domain, or default_mode in "
                       "vnumad.conf)");
    snprintf(r.where, sizeof(r.where), "rule %s", where);
    *ret = r;
    return 0;
}

static int load_file(const char *path, host_policy *p, char *err, size_t errlen)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char line[RULE_LINE_MAX + 1], why[512], where[PATH_MAX + 16];
    unsigned lineno = 0;
    ssize_t n;
    int r;

    if (!f)
        return vn_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    if ((r = config_file_trusted(f, path, err, errlen)) < 0)
        return r;
    while ((n = config_read_line(f, line, sizeof(line))) != -1) {
        hp_rule rule;
        lineno++;
        if (n == -E2BIG)
            return vn_fail(err, errlen, -EINVAL, "%s:%u: line longer than %d bytes", path, lineno,
                           RULE_LINE_MAX);
        if (strlen(line) != (size_t)n)
            return vn_fail(err, errlen, -EINVAL, "%s:%u: NUL byte in the line", path, lineno);
        snprintf(where, sizeof(where), "%s:%u", path, lineno);
        r = hostpolicy_parse_line(line, where, &rule, why, sizeof(why));
        if (r < 0)
            return vn_fail(err, errlen, r, "%s: %s", where, why);
        if (r > 0)
            continue;
        if (p->nr_rules == HOSTPOLICY_MAX_RULES)
            return vn_fail(err, errlen, -E2BIG, "%s: more than %u rules", where,
                           HOSTPOLICY_MAX_RULES);
        p->rules[p->nr_rules++] = rule;
    }
    if (ferror(f))
        return vn_fail(err, errlen, -EIO, "%s: read error", path);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool rules_name(const char *n)
{
    size_t l = strlen(n);

    return n[0] != '.' && l > 6 && !strcmp(n + l - 6, ".rules");
}

/* Who may add a rules file may say which domains vnumad (root) changes: the directory is
 * held to what its files are (root's, no other user's or group's to write). */
static int dir_trusted(DIR *d, const char *dir, char *err, size_t errlen)
{
    struct stat st;

    if (fstat(dirfd(d), &st) < 0)
        return vn_fail(err, errlen, -errno, "policy_dir: %s: %s", dir, strerror(errno));
    if (st.st_uid != 0 && st.st_uid != geteuid())
        return vn_fail(err, errlen, -EPERM,
                       "policy_dir: %s is owned by uid %u, not root; refusing it (chown root)", dir,
                       (unsigned)st.st_uid);
    if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != 0))
        return vn_fail(err, errlen, -EPERM,
                       "policy_dir: %s is writable by other users (mode %04o); refusing it "
                       "(chmod go-w)",
                       dir, (unsigned)(st.st_mode & 07777));
    return 0;
}

int hostpolicy_load(const char *dir, bool optional, vn_mode default_mode, host_policy **ret,
                    char *err, size_t errlen)
{
    _cleanup_(hostpolicy_freep) host_policy *p = calloc(1, sizeof(*p));
    char *names[RULE_FILES_MAX];
    size_t nr = 0;
    DIR *d;
    int r = 0;

    if (!p || !(p->rules = calloc(HOSTPOLICY_MAX_RULES, sizeof(*p->rules))))
        return vn_fail(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
    p->default_mode = default_mode;
    d = opendir(dir);
    if (!d && errno == ENOENT && optional) {
        *ret = p;
        p = NULL;
        return 0;
    }
    if (!d)
        return vn_fail(err, errlen, -errno, "policy_dir: %s: %s", dir, strerror(errno));
    if ((r = dir_trusted(d, dir, err, errlen)) < 0) {
        closedir(d);
        return r;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!rules_name(e->d_name))
            continue;
        if (nr == RULE_FILES_MAX) {
            r = vn_fail(err, errlen, -E2BIG, "policy_dir: more than %u *.rules files in %s",
                        RULE_FILES_MAX, dir);
            break;
        }
        if (!(names[nr] = strdup(e->d_name))) {
            r = vn_fail(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
            break;
        }
        nr++;
    }
    closedir(d);
    qsort(names, nr, sizeof(names[0]), name_cmp);
    for (size_t i = 0; i < nr; i++) {
        char path[PATH_MAX];
        if (r == 0) {
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
            r = load_file(path, p, err, errlen);
        }
        free(names[i]);
    }
    if (r < 0)
        return r;
    *ret = p;
    p = NULL;
    return 0;
}

void hostpolicy_free(host_policy *p)
{
    if (!p)
        return;
    free(p->rules);
    free(p);
}

unsigned hostpolicy_needs(const host_policy *p)
{
    unsigned needs = 0;

    if (!p || (p->nr_rules == 0 && p->default_mode == VN_MODE_OFF))
        return 0;
    needs = p->nr_rules ? HOSTPOLICY_NEEDS_LIVE : HOSTPOLICY_NEEDS_DEFAULT;
    for (unsigned i = 0; i < p->nr_rules; i++)
        for (unsigned k = 0; k < p->rules[i].nr; k++)
            if (p->rules[i].m[k].key == HP_DEDICATED)
                needs |= HOSTPOLICY_NEEDS_INACTIVE;
    return needs;
}

bool hostpolicy_equal(const host_policy *a, const host_policy *b)
{
    if (!a || !b)
        return a == b;
    if (a->default_mode != b->default_mode || a->nr_rules != b->nr_rules)
        return false;
    for (unsigned i = 0; i < a->nr_rules; i++) {
        const hp_rule *x = &a->rules[i], *y = &b->rules[i];
        if (x->mode != y->mode || x->nr != y->nr || strcmp(x->where, y->where))
            return false;
        for (unsigned k = 0; k < x->nr; k++)
            if (x->m[k].key != y->m[k].key || strcmp(x->m[k].glob, y->m[k].glob))
                return false;
    }
    return true;
}
