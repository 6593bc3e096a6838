/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's own record of a domain's originals (what it found before it changed anything), in
 * state_dir/originals/UUID, root's, 0600, written before the first change and again when the
 * originals change, removed once they are put back or the domain is gone. The one source of
 * what a restore puts back: the copy in the domain's live metadata (<state>) is for readers and
 * for telling an arrival from another host, and whoever may write metadata can write it.
 *
 * A record is of one QEMU run on one boot: it names the host's boot id and the domain's running
 * id. A record of another run (the domain stopped and started, the host rebooted) is stale: it
 * is applied to the new run only when that run is the old one brought back (a save image
 * restored here: the live metadata it carried holds the same originals, origfile_same), and
 * removed otherwise (domains.c). A stopped domain's record stays while libvirt knows the domain
 * (a managed save is restored at the next start); origfile_prune removes the others.
 *
 * The file:
 *   vnuma-originals 1 boot=<boot id> id=<running id>
 *   <state><original ...>...</original></state>        (meta_format_state, no decision)
 */
#ifndef VNUMA_ORIGFILE_H
#define VNUMA_ORIGFILE_H

#include <stdbool.h>

#include "metadata.h"
#include "state.h"

/* The largest record read: the header and a <state> element as long as the metadata takes. */
#define ORIGFILE_MAX_BYTES (META_MAX_BYTES + 128)

/*
 * Write (o->saved) or remove (not saved) the record of domain `uuid`, running id `id`, under
 * `state_dir`. The subdirectory is made 0700 when missing and must be vnumad's user's, not a
 * link, and writable by no one else. 0 or -errno (-EINVAL: not a canonical uuid; -EPERM: the
 * directory is not vnumad's own).
 */
int origfile_write(const char *state_dir, const char *uuid, int id, const dom_originals *o);

/*
 * The record of domain `uuid`'s run `id` into *ret (ret->saved). 0; -ESTALE: a record of another
 * run or boot, in *ret (left in place); -ENOENT: none; -EPERM: a file or directory that is not
 * vnumad's own (a link, another owner, writable by others: left as it is); -EINVAL: not a record
 * (left as it is).
 */
int origfile_read(const char *state_dir, const char *uuid, int id, dom_originals *ret);

/* Whether two sets of originals are the same (as a record or a <state> would write them). */
bool origfile_same(const dom_originals *a, const dom_originals *b);

/* Remove the record of domain `uuid` (0 also when there was none). */
int origfile_remove(const char *state_dir, const char *uuid);

/* Remove every record (and temporary file) of a domain keep(uuid, arg) says is gone, and every
 * file that is not a record. The number removed, or -errno. */
int origfile_prune(const char *state_dir, bool (*keep)(const char *uuid, void *arg), void *arg);

/* Whether s is a canonical lower-case uuid (8-4-4-4-12 hex digits), the only names used. */
bool origfile_uuid_ok(const char *s);

#endif
