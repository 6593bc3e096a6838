/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Untrusted XML text (domain XML, metadata a tenant may reach), parsed one way everywhere:
 * libxml2 without network, entity substitution, DTD loading, attribute defaulting or
 * XInclude, and not XML_PARSE_HUGE (libxml2 keeps its depth and text-size limits); the size
 * bounded before parsing; UTF-8 whatever an XML declaration says (libvirt hands out UTF-8);
 * a document with a DTD refused (it can only be there to play entity tricks); errors not
 * printed.
 */
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stddef.h>

/* The document of at most max bytes of xml (name: for libxml2's messages), NULL when it is
 * longer, does not parse or has a DTD. Free with xmlFreeDoc (or _cleanup_(xmlsafe_docp)). */
xmlDoc *xmlsafe_read(const char *xml, size_t max, const char *name);

static inline void xmlsafe_docp(xmlDoc **d)
{
    if (*d)
        xmlFreeDoc(*d);
}

static inline void xmlsafe_charp(xmlChar **s)
{
    if (*s)
        xmlFree(*s);
}
