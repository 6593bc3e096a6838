/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The answers to vnumactl (commands.c), over the control socket (control.c). Below the
 * daemon, which serves them; reads domain tracking and publishing.
 */
#pragma once

#include "core.h"

/* The vnumactl commands, for control_open() with the vnumad as opaque. */
extern const control_command commands_table[];

/* state_dir/paused is there: `vnumactl pause --all` was in force when vnumad stopped. */
bool commands_host_paused_at_start(const vnumad *dm);
