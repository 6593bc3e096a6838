/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The topology as text for people (`vnumactl topology`). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "topology.h"

/* Print the topology as a human table (json=false) or JSON to f. */
void topo_print(const topology *t, bool json, FILE *f);
