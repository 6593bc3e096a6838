/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "stopkind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "util.h"

#define SD_DEST      "org.freedesktop.systemd1"
#define SD_PATH      "/org/freedesktop/systemd1"
#define SD_MANAGER   "org.freedesktop.systemd1.Manager"
#define SD_UNIT      "org.freedesktop.systemd1.Unit"
#define SD_JOB       "org.freedesktop.systemd1.Job"
#define SD_TIMEOUT_U (2 * 1000 * 1000) /* a stop must not wait long on the question */

static void bus_unrefp(sd_bus **b)
{
    sd_bus_flush_close_unref(*b);
}

static void msg_unrefp(sd_bus_message **m)
{
    sd_bus_message_unref(*m);
}

/* PID 1's private socket (root only; no D-Bus daemon needed), else the system bus. */
static int bus_open(sd_bus **out)
{
    sd_bus *b = NULL;
    int r;

    r = sd_bus_new(&b);
    if (r >= 0)
        r = sd_bus_set_address(b, "unix:path=/run/systemd/private");
    if (r >= 0)
        r = sd_bus_start(b);
    if (r < 0) {
        sd_bus_unref(b);
        b = NULL;
        r = sd_bus_open_system(&b);
        if (r < 0)
            return r;
    }
    (void)sd_bus_set_method_call_timeout(b, SD_TIMEOUT_U);
    *out = b;
    return 0;
}

stop_kind stopkind_systemd(char *why, size_t len)
{
    __attribute__((cleanup(bus_unrefp))) sd_bus *bus = NULL;
    __attribute__((cleanup(msg_unrefp))) sd_bus_message *reply = NULL, *job = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    const char *unit_path = NULL, *job_path = NULL;
    _cleanup_free_ char *type = NULL;
    uint32_t job_id = 0;
    int r;

    if (!getenv("INVOCATION_ID")) {
        snprintf(why, len, "not started by systemd");
        return STOP_UNKNOWN;
    }
    r = bus_open(&bus);
    if (r < 0) {
        snprintf(why, len, "cannot reach systemd: %s", strerror(-r));
        return STOP_UNKNOWN;
    }
    r = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnitByPID", &error, &reply, "u",
                           (uint32_t)getpid());
    if (r >= 0)
        r = sd_bus_message_read(reply, "o", &unit_path);
    if (r >= 0)
        r = sd_bus_get_property(bus, SD_DEST, unit_path, SD_UNIT, "Job", &error, &job, "(uo)");
    if (r >= 0)
        r = sd_bus_message_read(job, "(uo)", &job_id, &job_path);
    if (r < 0) {
        snprintf(why, len, "cannot ask systemd for vnumad's unit and job: %s",
                 error.message ? error.message : strerror(-r));
        sd_bus_error_free(&error);
        return STOP_UNKNOWN;
    }
    if (job_id == 0) {
        snprintf(why, len, "systemd runs no job on vnumad's unit (a signal sent by hand)");
        return STOP_STOP;
    }
    r = sd_bus_get_property_string(bus, SD_DEST, job_path, SD_JOB, "JobType", &error, &type);
    if (r < 0) {
        snprintf(why, len, "cannot read systemd's job %u: %s", job_id,
                 error.message ? error.message : strerror(-r));
        sd_bus_error_free(&error);
        return STOP_UNKNOWN;
    }
    snprintf(why, len, "systemd job %u is a %s", job_id, type);
    return strstr(type, "restart") ? STOP_RESTART : STOP_STOP;
}
