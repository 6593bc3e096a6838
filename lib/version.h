/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one version of every vnuma program: vnumad, vnumactl, vnuma-agent and the metrics'
 * vnuma_build_info. debian/changelog and the man pages carry the same number.
 */
#pragma once

#define VNUMA_VERSION "0.1.0"
