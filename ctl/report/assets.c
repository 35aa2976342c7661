// SPDX-License-Identifier: MIT
/*
 * report.html's script and style, linked into rdmactl so that the page is
 * one file that opens offline: dygraphs (Debian's libjs-dygraphs, MIT; the
 * build copies it without its source-map line into RTB_ASSETS and refuses
 * one that holds "</script") and our own charts.js and charts.css. Each
 * is a NUL-terminated string.
 */
#include "ctl/report/plot.h"

#ifndef RTB_ASSETS
#error "RTB_ASSETS: the directory of the generated assets (the Makefile sets it)"
#endif

#define ASSET(sym, file)                                                                   \
	".pushsection .rodata\n.global " sym "\n.type " sym ", @object\n" sym ":\n.incbin \"" \
	file "\"\n.byte 0\n.size " sym ", . - " sym "\n.popsection\n"

__asm__(ASSET("rtb_asset_dygraph_js", RTB_ASSETS "/dygraph.min.js")
	ASSET("rtb_asset_dygraph_css", RTB_ASSETS "/dygraph.min.css")
	ASSET("rtb_asset_charts_js", "ctl/report/charts.js")
	ASSET("rtb_asset_charts_css", "ctl/report/charts.css"));
