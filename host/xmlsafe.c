/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Untrusted XML text parsed one way (xmlsafe.h). */
#include "xmlsafe.h"

#include <limits.h>
#include <string.h>

xmlDoc *xmlsafe_read(const char *xml, size_t max, const char *name)
{
    size_t len = strnlen(xml, max + 1);
    xmlDoc *doc;

    if (len > max || len > INT_MAX)
        return NULL;
    doc = xmlReadMemory(xml, (int)len, name, "UTF-8",
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc && (doc->intSubset || doc->extSubset)) {
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}
