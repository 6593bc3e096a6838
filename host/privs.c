/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The capabilities vnumad keeps (privs.h), through libcap-ng. */
#include "privs.h"

#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "util.h"

/* What each is for: docs/operations.md "What vnumad touches" */
static const int privs_keep[] = {
    CAP_SYS_NICE,        /* move_pages MPOL_MF_MOVE_ALL, other users' threads' affinity */
    CAP_SYS_PTRACE,      /* QEMU's /proc (another uid): maps, pagemap, move_pages */
    CAP_DAC_OVERRIDE,    /* QEMU's files, the metrics file's directory */
    CAP_DAC_READ_SEARCH, /* the agent channels under /var/lib/libvirt/qemu */
    CAP_SYS_ADMIN,       /* /proc/PID/map_files (shared backends), pagemap's frames */
};

int privs_drop(char *err, size_t errlen)
{
    bool bounding;

    if (geteuid() != 0)
        return 0;
    if (capng_get_caps_process() < 0)
        return vn_fail(err, errlen, -EPERM, "cannot read this process's capabilities");
    /* the bounding set only changes with CAP_SETPCAP (systemd's unit has already cut it) */
    bounding = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
    bool have[VN_ARRAY_SIZE(privs_keep)];
    for (size_t i = 0; i < VN_ARRAY_SIZE(privs_keep); i++)
        have[i] = capng_have_capability(CAPNG_PERMITTED, (unsigned)privs_keep[i]);
    capng_clear(bounding ? CAPNG_SELECT_BOTH : CAPNG_SELECT_CAPS);
    for (size_t i = 0; i < VN_ARRAY_SIZE(privs_keep); i++)
        if (have[i] && capng_update(CAPNG_ADD,
                                    (capng_type_t)(CAPNG_EFFECTIVE | CAPNG_PERMITTED |
                                                   (bounding ? CAPNG_BOUNDING_SET : 0)),
                                    (unsigned)privs_keep[i]) < 0)
            return vn_fail(err, errlen, -EPERM, "cannot keep capability %d", privs_keep[i]);
    if (capng_apply(bounding ? CAPNG_SELECT_BOTH : CAPNG_SELECT_CAPS) < 0)
        return vn_fail(err, errlen, -EPERM, "cannot drop the other capabilities");
    return 0;
}
