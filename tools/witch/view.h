/*
 * view: what every renderer of `witch report` renders from, built once by
 * report.c: the merged model (profile_read.h), its symbolizer, the totals,
 * and which pairs to show in which order.  Reading, the model and the
 * renderers stay apart, as perf keeps session, hists and ui.
 */
#ifndef WITCH_TOOL_VIEW_H
#define WITCH_TOOL_VIEW_H

#include "object_view.h"
#include "profile_read.h"
#include "source.h"
#include "summary.h"
#include "symbolize.h"

#include <stddef.h>
#include <stdint.h>

struct witch_view {
	const struct witch_profile *p;
	struct witch_symbolizer *sym;	/* names frames; caches as it goes */
	struct witch_totals t;
	const uint32_t *order;		/* pair indices by waste, largest first */
	size_t shown;			/* the first `shown` of order are reported */
	size_t width;			/* text frame lines, in columns; 0 = no limit */
	struct witch_source *src;	/* source lines of the top pairs (text
					 * --source, HTML); NULL: not shown */
	const struct witch_objects *objects;	/* named objects; n == 0 in
						 * profiles without object records */
	size_t objects_shown;		/* the first of objects->rows the text
					 * report lists (--top, as for pairs) */
	int sampled_all;		/* JSON lists every sampled context
					 * (--top 0), not the largest 200 */
};

#endif
