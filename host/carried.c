/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The source's last decision record, as the destination reads it (carried.h). */
#include "carried.h"

#include <json-c/json.h>
#include <string.h>

#include "json.h"
#include "metadata.h"
#include "proto.h"

static bool get_u64(struct json_object *o, const char *key, uint64_t *ret)
{
    struct json_object *v;
    int64_t i;

    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return false;
    i = json_object_get_int64(v);
    if (i < 0)
        return false;
    *ret = (uint64_t)i;
    return true;
}

/* One hot range of the record, validated: what the guest agent's protocol allows. */
static bool read_range(struct json_object *o, carried_range *ret)
{
    struct json_object *heat, *shared;
    uint64_t gpa, len;

    if (!json_object_is_type(o, json_type_object) || !get_u64(o, "gpa", &gpa) ||
        !get_u64(o, "length", &len) || !json_object_object_get_ex(o, "heat", &heat) ||
        !(json_object_is_type(heat, json_type_double) || json_object_is_type(heat, json_type_int)))
        return false;
    if (gpa % PROTO_PAGE_SIZE || !len || len % PROTO_PAGE_SIZE || gpa >= PROTO_GPA_LIMIT ||
        len > PROTO_GPA_LIMIT - gpa)
        return false;
    ret->gpa = gpa;
    ret->length = len;
    ret->heat = json_object_get_double(heat);
    if (!(ret->heat >= 0.0 && ret->heat <= 1.0))
        return false;
    ret->shared = json_object_object_get_ex(o, "shared", &shared) &&
                  json_object_is_type(shared, json_type_boolean) && json_object_get_boolean(shared);
    return true;
}

void carried_parse(const char *json, carried_info *ret)
{
    _cleanup_json_ struct json_object *root = NULL;
    struct json_object *cells;
    bool seen[SNAP_MAX_CELLS_PER_DOMAIN] = {false};
    vn_json_doc doc;
    size_t len = json ? strnlen(json, META_MAX_BYTES + 1) : 0;

    memset(ret, 0, sizeof(*ret));
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        ret->cells[k].busy_vcpus = -1;
    if (!len || len > META_MAX_BYTES || vn_json_parse(json, len, 8, &doc) != VN_JSON_OK)
        return;
    root = doc.root;
    if (!json_object_object_get_ex(root, "cells", &cells) ||
        !json_object_is_type(cells, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(cells) && i < SNAP_MAX_CELLS_PER_DOMAIN; i++) {
        struct json_object *c = json_object_array_get_idx(cells, i), *hot;
        uint64_t id, busy;
        carried_cell *cc;

        if (!json_object_is_type(c, json_type_object) || !get_u64(c, "cell", &id) ||
            id >= SNAP_MAX_CELLS_PER_DOMAIN || seen[id])
            continue;
        seen[id] = true;
        cc = &ret->cells[id];
        if (get_u64(c, "busy_vcpus", &busy) && busy <= SNAP_MAX_VCPUS_PER_CELL) {
            cc->busy_vcpus = (int)busy;
            ret->busy_known = true;
        }
        if (!json_object_object_get_ex(c, "hot", &hot) ||
            !json_object_is_type(hot, json_type_array))
            continue;
        for (size_t h = 0; h < json_object_array_length(hot) && cc->nr_hot < CARRIED_HOT_PER_CELL;
             h++)
            if (read_range(json_object_array_get_idx(hot, h), &cc->hot[cc->nr_hot])) {
                cc->nr_hot++;
                ret->nr_hot++;
            }
    }
}
