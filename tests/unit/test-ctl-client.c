/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vnumactl's control-socket client (host/ctl_client.c): the text hygiene of what it prints. */
#include <json-c/json.h>
#include <string.h>

#include "ctl_client.h"
#include "tap.h"

/* vnumactl's text output of a reply: a guest's process name (the agent's "top") and a domain
 * name reach the terminal without C1 controls, bidi overrides or bytes that are not UTF-8; a
 * newline of a multi-line text stays. */
static void test_printable(void)
{
    struct json_object *o = json_tokener_parse(
        "{\"name\":\"vm\\u202egnp\",\"top\":[{\"comm\":\"a\\u009b31mb\"}],\"text\":\"x\\ny\"}");
    struct json_object *v;
    const char *top = NULL;

    if (!CHECK(o != NULL, "a reply with hostile strings parses"))
        return;
    ctl_json_printable(o);
    if (json_object_object_get_ex(o, "top", &v))
        top =
            json_object_get_string(json_object_object_get(json_object_array_get_idx(v, 0), "comm"));
    CHECK(json_object_object_get_ex(o, "name", &v) &&
              strcmp(json_object_get_string(v), "vm???gnp") == 0 && top &&
              strcmp(top, "a??31mb") == 0,
          "vnumactl's text: a bidi override in a name and a C1 CSI in a process name become '?' "
          "(%s, %s)",
          json_object_get_string(json_object_object_get(o, "name")), top ? top : "-");
    CHECK(json_object_object_get_ex(o, "text", &v) &&
              strcmp(json_object_get_string(v), "x\ny") == 0,
          "vnumactl's text: a newline stays");
    json_object_put(o);
}

int main(void)
{
    test_printable();
    return tap_done();
}
