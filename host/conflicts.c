/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "conflicts.h"

#include <ctype.h>
#include <dirent.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static bool read_line(const char *path, char *buf, size_t len)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");

    if (!f || !fgets(buf, (int)len, f))
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

unsigned conflicts_host(const char *root)
{
    char path[512], buf[64];
    unsigned found = 0;
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "%s/proc/sys/kernel/numa_balancing", root);
    /* 1 = NUMA_BALANCING_NORMAL (moves pages and tasks toward each other); 2 alone is
     * memory tiering, which promotes hot pages between tiers and leaves NUMA nodes alone */
    if (read_line(path, buf, sizeof(buf)) && isdigit((unsigned char)buf[0]) &&
        (strtoul(buf, NULL, 10) & 1))
        found |= CONFLICT_NUMA_BALANCING;

    snprintf(path, sizeof(path), "%s/proc", root);
    d = opendir(path);
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "%s/proc/%s/comm", root, e->d_name);
        if (read_line(path, buf, sizeof(buf)) && strcmp(buf, "numad") == 0) {
            found |= CONFLICT_NUMAD;
            break;
        }
    }
    if (d)
        closedir(d);
    return found;
}

bool conflicts_placement_auto(const char *domxml)
{
    xmlDocPtr doc = xmlReadMemory(domxml, (int)strlen(domxml), "domain.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlXPathContextPtr ctx = doc ? xmlXPathNewContext(doc) : NULL;
    xmlXPathObjectPtr res = NULL;
    bool found = false;

    if (ctx)
        res = xmlXPathEvalExpression((const xmlChar *)"/domain/vcpu[@placement='auto'] | "
                                                      "/domain/numatune/memory[@placement='auto']",
                                     ctx);
    found = res && res->nodesetval && res->nodesetval->nodeNr > 0;
    xmlXPathFreeObject(res);
    xmlXPathFreeContext(ctx);
    xmlFreeDoc(doc);
    return found;
}
