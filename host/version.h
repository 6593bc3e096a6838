/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The version of vnumad, vnumactl and the metrics' vnuma_build_info (debian/changelog too). */
#pragma once

#define VNUMA_VERSION "0.1.0"
