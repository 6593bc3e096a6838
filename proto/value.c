/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The C values the message table (schema.c) describes: integers stored in a field's
 * width, and releasing and comparing decoded values by walking their descriptors.
 */
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* ---- storage ---- */

void proto_store_uint(void *p, size_t width, uint64_t v)
{
    if (width == 4) {
        uint32_t u = (uint32_t)v;
        memcpy(p, &u, sizeof(u));
    } else {
        memcpy(p, &v, sizeof(v));
    }
}

uint64_t proto_load_uint(const void *p, size_t width)
{
    if (width == 4) {
        uint32_t u;
        memcpy(&u, p, sizeof(u));
        return u;
    }
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void proto_free_object(const proto_object *o, void *p);

size_t proto_elem_size(const proto_field *elem)
{
    return elem->type == PROTO_T_OBJECT ? elem->object->size : elem->width;
}

void proto_free_array(const proto_field *f, void *arr, size_t n)
{
    if (!arr)
        return;
    if (f->elem->type == PROTO_T_OBJECT)
        for (size_t i = 0; i < n; i++)
            proto_free_object(f->elem->object, (char *)arr + i * proto_elem_size(f->elem));
    free(arr);
}

/* Free every array that the object at p owns (recursively); p itself is not freed. */
void proto_free_object(const proto_object *o, void *p)
{
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        void **arr;
        unsigned *n;

        if (f->type == PROTO_T_OBJECT) {
            proto_free_object(f->object, (char *)p + f->offset);
            continue;
        }
        if (f->type != PROTO_T_ARRAY)
            continue;
        arr = (void **)((char *)p + f->offset);
        n = (unsigned *)((char *)p + f->count_offset);
        proto_free_array(f, *arr, *n);
        *arr = NULL;
        *n = 0;
    }
}

/* ---- release and comparison ---- */

void proto_reply_clear(proto_reply *r)
{
    if (!r)
        return;
    if (r->kind == PROTO_REPLY_HINTS)
        proto_hints_free(&r->hints);
    memset(r, 0, sizeof(*r));
}

void proto_hints_free(proto_hints *h)
{
    if (!h)
        return;
    proto_free_object(proto_messages[PROTO_MSG_GET_HINTS].reply, h);
    memset(h, 0, sizeof(*h));
}

static bool object_equal(const proto_object *o, const void *a, const void *b);

static bool field_equal(const proto_field *f, const char *pa, const char *pb, const void *a,
                        const void *b)
{
    switch (f->type) {
    case PROTO_T_UINT:
        return proto_load_uint(pa, f->width) == proto_load_uint(pb, f->width);
    case PROTO_T_STRING:
        return strncmp(pa, pb, f->width) == 0;
    case PROTO_T_OBJECT:
        return object_equal(f->object, pa, pb);
    case PROTO_T_VERSIONS:
    case PROTO_T_CAPS:
        return memcmp(pa, pb, sizeof(uint64_t)) == 0;
    case PROTO_T_ARRAY: {
        unsigned na = *(const unsigned *)((const char *)a + f->count_offset);
        unsigned nb = *(const unsigned *)((const char *)b + f->count_offset);
        const char *arr_a, *arr_b;
        size_t size = proto_elem_size(f->elem);

        if (na != nb)
            return false;
        memcpy(&arr_a, pa, sizeof(arr_a));
        memcpy(&arr_b, pb, sizeof(arr_b));
        for (unsigned i = 0; i < na; i++)
            if (!field_equal(f->elem, arr_a + i * size, arr_b + i * size, arr_a + i * size,
                             arr_b + i * size))
                return false;
        return true;
    }
    default:
        return false;
    }
}

static bool object_equal(const proto_object *o, const void *a, const void *b)
{
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        if (!field_equal(f, (const char *)a + f->offset, (const char *)b + f->offset, a, b))
            return false;
    }
    return true;
}

bool proto_hints_equal(const proto_hints *a, const proto_hints *b)
{
    return object_equal(proto_messages[PROTO_MSG_GET_HINTS].reply, a, b);
}
