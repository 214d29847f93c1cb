/*
 * topo/node_anomaly.c: per-host fault isolation of the hardware loaders (topo.h, "per-host fault
 * isolation"): the strict flag, the list of load anomalies, and their part of the cluster report,
 * with the one restricted_cpuset anomaly naming the hosts whose XML was gathered in a restricted cpuset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"
#include "hostlist.h"
#include "topo_view.h"

void topo_cluster_set_strict(topo_cluster_t c, int strict)
{
	c->strict = strict != 0;
}

int topo_cluster_strict(topo_cluster_t c)
{
	return c->strict;
}

int topo_cluster_add_anomaly(topo_cluster_t c, const char *kind, const char *host, const rm_error_t *e)
{
	topo_anomaly_t *a;
	char *k, *name, *file, *reason;

	if (c->nanomalies == c->anomalies_cap) {
		size_t cap = c->anomalies_cap ? c->anomalies_cap * 2 : 16;

		if (!(a = realloc(c->anomalies, cap * sizeof(*a)))) {
			errno = ENOMEM;
			return -1;
		}
		c->anomalies = a;
		c->anomalies_cap = cap;
	}
	k = strdup(kind);
	name = strdup(host ? host : "");
	file = strdup(e && e->source[0] ? e->source : "");
	reason = strdup(e && e->text[0] ? e->text : "unknown error");
	if (!k || !name || !file || !reason) {
		free(k);
		free(name);
		free(file);
		free(reason);
		errno = ENOMEM;
		return -1;
	}
	c->anomalies[c->nanomalies++] = (topo_anomaly_t){ k, name, file, e ? e->line : 0, reason };
	return 0;
}

size_t topo_cluster_nanomalies(topo_cluster_t c)
{
	return c->nanomalies;
}

const topo_anomaly_t *topo_cluster_anomaly(topo_cluster_t c, size_t i)
{
	return i < c->nanomalies ? &c->anomalies[i] : NULL;
}

void topo_anomalies_truncate(struct topo_cluster *c, size_t n)
{
	while (c->nanomalies > n) {
		topo_anomaly_t *a = &c->anomalies[--c->nanomalies];

		free((char *)a->kind);
		free((char *)a->host);
		free((char *)a->file);
		free((char *)a->reason);
	}
	if (!n) {
		free(c->anomalies);
		c->anomalies = NULL;
		c->anomalies_cap = 0;
	}
}

/* ---- report ------------------------------------------------------------------------------------ */

static json_t *anomaly_json(const topo_anomaly_t *a)
{
	char text[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 320];
	const char *what = !strcmp(a->kind, "diff_hunk") ? "kept the reference's value" : "left out";

	if (a->line > 0)
		snprintf(text, sizeof(text), "host %s %s: %s:%d: %s", a->host[0] ? a->host : "?", what, a->file,
			 a->line, a->reason);
	else
		snprintf(text, sizeof(text), "host %s %s: %s: %s", a->host[0] ? a->host : "?", what, a->file,
			 a->reason);
	rm_utf8_fix(text);
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:s}", "kind", a->kind, "text", text, "host", a->host, "file",
			 a->file, "line", a->line, "reason", a->reason);
}

/* Compressed list of the hosts whose type passes keep(); NULL when none. Caller frees. */
static char *hosts_where(struct topo_cluster *c, int (*keep)(const struct topo_nodetype *), size_t *n, size_t *pus)
{
	const char **names = malloc((c->nhosts ? c->nhosts : 1) * sizeof(*names));
	char *list = NULL;
	size_t i;

	*n = *pus = 0;
	for (i = 0; names && i < c->nhosts; i++) {
		const struct topo_nodetype *t = c->hosts[i].type;

		if (t && keep(t)) {
			names[(*n)++] = c->hosts[i].name;
			*pus += keep(t) == 1 ? t->disallowed_pus : t->missing_pus;
		}
	}
	if (*n)
		list = hostlist_compress(names, *n);
	free(names);
	return list;
}

static int is_restricted(const struct topo_nodetype *t)
{
	return t->disallowed_pus || t->missing_pus;
}

static int has_disallowed(const struct topo_nodetype *t)
{
	return t->disallowed_pus ? 1 : 0;
}

static int has_missing(const struct topo_nodetype *t)
{
	return t->missing_pus ? 2 : 0;
}

/* One anomaly for the cluster: the hosts whose XML was gathered in a restricted cpuset. */
static json_t *restricted_json(struct topo_cluster *c)
{
	size_t n, nd, nm, pus, dpus, mpus;
	char *all = hosts_where(c, is_restricted, &n, &pus), *dis = NULL, *mis = NULL, text[1200];
	int o;
	json_t *j = NULL;

	if (!all)
		return NULL;
	dis = hosts_where(c, has_disallowed, &nd, &dpus);
	mis = hosts_where(c, has_missing, &nm, &mpus);
	o = snprintf(text, sizeof(text),
		     "%zu host%s with hardware data gathered in a restricted cpuset (allowed_cpuset "
		     "smaller than the machine): %.300s",
		     n, n > 1 ? "s" : "", all);
	if (dis && o > 0 && (size_t)o < sizeof(text))
		o += snprintf(text + o, sizeof(text) - (size_t)o, "; %zu PU%s outside it counted (%.300s)", dpus,
			      dpus > 1 ? "s" : "", dis);
	if (mis && o > 0 && (size_t)o < sizeof(text))
		snprintf(text + o, sizeof(text) - (size_t)o,
			 "; the hwloc 1.x XML of %.300s leaves out %zu disallowed "
			 "PU%s, which cannot be counted",
			 mis, mpus, mpus > 1 ? "s" : "");
	rm_utf8_fix(text);
	j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I}", "kind", "restricted_cpuset", "text", text, "hosts", all,
		      "count", (json_int_t)n, "disallowed_pus_counted", (json_int_t)dpus, "hosts_missing_pus",
		      mis ? mis : "", "missing_pus", (json_int_t)mpus);
	free(all);
	free(dis);
	free(mis);
	return j;
}

void topo_anomalies_report(struct topo_cluster *c, json_t *an)
{
	json_t *r = restricted_json(c);
	size_t i;

	for (i = 0; i < c->nanomalies; i++) {
		json_t *e = anomaly_json(&c->anomalies[i]);

		if (e)
			json_array_append_new(an, e);
	}
	if (r)
		json_array_append_new(an, r);
}
