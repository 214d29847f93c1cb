/*
 * daemon/ctl/ctl_common.c: what the rankmapctl subcommands share (see ctl_common.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include "ctl_common.h"
#include "topo_gpu.h"
#include "hostlist.h"
#include "rm_client.h"
#include "rm_tmpfile.h"
#include "order.h"
#include "mapping.h"

int ctl_fail(const char *cmd, const rm_error_t *err, const char *what)
{
	char buf[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];
	int e = errno;

	fprintf(stderr, "rankmapctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	if (err && rm_error_isset(err))
		fprintf(stderr, "%s\n", rm_error_format(err, buf, sizeof(buf)));
	else
		fprintf(stderr, "%s: %s\n", what ? what : "error", strerror(e));
	return 1;
}

int ctl_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rankmapctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'rankmapctl %s --help'.\n", cmd);
	return 2;
}

int ctl_usage_hint(const char *cmd)
{
	fprintf(stderr, "Try 'rankmapctl %s --help'.\n", cmd);
	return 2;
}

int ctl_daemon_opt(ctl_daemon_t *d, int c, const char *arg, const char *cmd)
{
	char *end;
	long v;

	switch (c) {
	case CTL_OPT_SOCKET: d->socket = arg; return 1;
	case CTL_OPT_TIMEOUT:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (end == arg || *end || errno || v <= 0 || v > 3600000)
			exit(ctl_usage_error(cmd, "--timeout: '%s' is not a number of milliseconds (1 to 3600000)",
					     arg));
		d->timeout_ms = (int)v;
		return 1;
	case CTL_OPT_PROGRESS: d->progress = 1; return 1;
	case CTL_OPT_VERSION: printf("rankmapctl %s\n", RANKMAP_VERSION); exit(0);
	case CTL_OPT_SERVER_UID: d->server_uid = arg; return 1; /* checked before a call (ctl_daemon_check) */
	default: return 0;
	}
}

int ctl_daemon_set(const ctl_daemon_t *d)
{
	return d->socket != NULL;
}

int ctl_daemon_env(ctl_daemon_t *d)
{
	if (!ctl_daemon_set(d))
		d->socket = rm_client_socket_from_env();
	return ctl_daemon_set(d);
}

int ctl_daemon_default(ctl_daemon_t *d)
{
	if (!ctl_daemon_env(d))
		d->socket = RM_SOCKET_DEFAULT;
	return 1;
}

const char *ctl_daemon_name(const ctl_daemon_t *d)
{
	return d->socket ? d->socket : "(no daemon)";
}

const char *ctl_socket(const char *opt)
{
	return opt ? opt : rm_client_socket_from_env();
}

void ctl_failover_note(const char *cmd, const rm_client_info_t *info)
{
	if (info->nfailed > 0 && info->server >= 0)
		fprintf(stderr, "rankmapctl %s: warning: %s%s; answered by %s\n", cmd, info->failed,
			info->nfailed > 1 ? " (and more)" : "", info->entry);
}

int ctl_daemon_check(const char *cmd, const ctl_daemon_t *d)
{
	rm_error_t err = { 0 };
	unsigned uid;

	/* the library would name its own source ("server uid"): the user gave the option */
	if (!d->server_uid || rm_auth_server_uid(d->server_uid, &uid, &err) == 0)
		return 0;
	fprintf(stderr, "rankmapctl %s: --server-uid: %s\n", cmd, err.text);
	return -1;
}

json_t *ctl_call(const char *cmd, const ctl_daemon_t *d, json_t *req, int timeout_ms)
{
	const char *socket = d->socket ? d->socket : RM_SOCKET_DEFAULT;
	rm_client_opts_t o = { .servers = socket,
			       .timeout_ms = d->timeout_ms > 0 ? d->timeout_ms : timeout_ms,
			       .server_uid = d->server_uid };
	rm_client_info_t info;
	rm_error_t err = { 0 };
	json_t *resp = NULL;
	char msg[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];

	if (!req) {
		fprintf(stderr, "rankmapctl %s: out of memory\n", cmd);
		return NULL;
	}
	if (ctl_daemon_check(cmd, d) < 0) {
		json_decref(req);
		return NULL;
	}
	if (rm_client_call_opts(&o, req, &resp, &info, &err) == 0) {
		ctl_failover_note(cmd, &info);
		return resp;
	}
	rm_error_format(&err, msg, sizeof(msg));
	if (resp) /* the daemon answered with an error */
		fprintf(stderr, "rankmapctl %s: rankmapd at %s: %s\n", cmd, socket, msg);
	else if (strstr(msg, socket)) /* the client library names the socket */
		fprintf(stderr, "rankmapctl %s: %s\n", cmd, msg);
	else
		fprintf(stderr, "rankmapctl %s: rankmapd at %s: %s\n", cmd, socket, msg);
	json_decref(resp);
	return NULL;
}

void ctl_print_last_reload(FILE *f, const json_t *lr)
{
	time_t at = (time_t)json_integer_value(json_object_get(lr, "at"));
	char when[64];

	if (!json_is_object(lr) || !at) {
		fprintf(f, "last reload: none since start\n");
		return;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&at));
	if (json_is_true(json_object_get(lr, "ok")))
		fprintf(f, "last reload: %s, ok\n", when);
	else
		fprintf(f, "last reload: %s, FAILED (the previous model serves): %s\n", when,
			json_string_value(json_object_get(lr, "error"))
				? json_string_value(json_object_get(lr, "error"))
				: "?");
}

FILE *ctl_open_output(const char *cmd, const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	if (!(f = fopen(path, "w")))
		fprintf(stderr, "rankmapctl %s: %s: cannot create the output file: %s\n", cmd, path, strerror(errno));
	return f;
}

int ctl_close_output(const char *cmd, FILE *f, const char *path, int rc)
{
	int bad = f == stdout ? fflush(f) != 0 : fclose(f) != 0;

	if (bad && rc == 0) {
		fprintf(stderr, "rankmapctl %s: %s: write failed: %s\n", cmd, f == stdout ? "standard output" : path,
			strerror(errno));
		return 1;
	}
	return rc;
}

void ctl_print_json(FILE *f, const json_t *o, size_t flags)
{
	json_t *v = (json_t *)o;

	if (json_is_object(o) && !json_object_get(o, "schema_version")) { /* first, for the eye */
		v = json_pack("{s:i}", "schema_version", RM_SCHEMA_VERSION);
		json_object_update(v, (json_t *)o);
	}
	rm_json_print(f, v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | flags);
	if (v != o)
		json_decref(v);
}

char **ctl_job_hosts(topo_cluster_t c, const char *list, size_t *n, rm_error_t *err)
{
	size_t h, k = 0, nh = topo_nhosts(c);
	char **names;

	if (list)
		return hostlist_expand(list, n, 0, err);
	names = calloc(nh + 1, sizeof(*names));
	for (h = 0; names && h < nh; h++) {
		if (topo_host_npus(c, h) == 0)
			continue;
		names[k] = strdup(topo_host_name(c, h));
		if (!names[k++]) {
			hostlist_free(names);
			return NULL;
		}
	}
	if (names && k == 0) {
		rm_error_set(err, "--cluster", 0, 0, "no host of the cluster has hardware data");
		hostlist_free(names);
		return NULL;
	}
	*n = k;
	return names;
}

/* The logical index, in host h's hwloc tree, of the core (per_pu: the PU) of PU pu. */
static unsigned slot_cpu(topo_cluster_t c, size_t h, unsigned pu, int per_pu)
{
	hwloc_topology_t topo = topo_host_hwloc(c, h);
	hwloc_obj_t o = topo ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, pu) : NULL, core;

	if (!o || per_pu)
		return pu;
	core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, o);
	return core ? core->logical_index : pu;
}

/* One object per slot of a GPU target: where the slot is and which GPU it drives. */
static json_t *gpu_slots_json(topo_cluster_t c, const topo_target_t *t)
{
	json_t *arr = json_array();
	uint32_t s;

	for (s = 0; arr && s < t->nslots; s++) {
		const topo_gpu_t *g = topo_host_gpu(c, t->slot[s].host, t->slot_gpu[s]);
		const topo_nic_t *nic = g && g->nic >= 0 ? topo_host_nic(c, t->slot[s].host, (size_t)g->nic) : NULL;
		char cpus[1024];

		if (!g || hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), g->cpuset) < 0)
			cpus[0] = '\0';
		json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:s, s:s, s:s*}", "host",
						     t->host_name[t->slot_host[s]], "gpu", g ? g->name : "", "index",
						     (int)t->slot_gpu[s], "busid", g ? g->busid : "", "cpus", cpus,
						     "nic", nic ? nic->name : NULL));
	}
	return arr;
}

topo_target_t *ctl_load_target_kind(const char *tleaf, const char *cluster, const char *hosts, int per_pu,
				    const char *slots, unsigned **cpu, json_t **gpus, rm_error_t *err)
{
	topo_cluster_t c;
	topo_target_t *t = NULL;
	topo_slot_kind_t kind = TOPO_SLOTS_CORE;
	char **names = NULL;
	size_t n = 0;
	uint32_t s;

	if (cpu)
		*cpu = NULL;
	if (gpus)
		*gpus = NULL;
	if (slots && topo_slot_kind_parse(slots, &kind) < 0) {
		errno = EINVAL;
		rm_error_set(err, "--slots", 0, 0, "expected core or gpu, got '%s'", slots);
		return NULL;
	}
	if (tleaf) {
		if (kind == TOPO_SLOTS_GPU) {
			errno = EINVAL;
			rm_error_set(err, "--slots", 0, 0, "GPU slots need --cluster or the daemon, not --topology");
			return NULL;
		}
		return topo_target_from_tleaf(tleaf, err);
	}
	if (!(c = topo_cluster_create()))
		return NULL;
	if (topo_load_cluster_file(c, cluster, err) == 0 && topo_cluster_finalize(c, err) == 0)
		names = ctl_job_hosts(c, hosts, &n, err);
	if (names && !slots)
		kind = topo_cluster_slot_kind(c);
	if (names && kind == TOPO_SLOTS_GPU)
		t = topo_target_from_gpus(c, (const char *const *)names, n, err);
	else if (names)
		t = topo_target_from_hosts(c, (const char *const *)names, n, !per_pu, err);
	if (t && cpu && t->slot && (*cpu = malloc(((size_t)t->nslots + 1) * sizeof(**cpu))))
		for (s = 0; s < t->nslots; s++)
			(*cpu)[s] = slot_cpu(c, t->slot[s].host, t->slot[s].pu, per_pu);
	if (t && gpus && t->slot_gpu)
		*gpus = gpu_slots_json(c, t);
	hostlist_free(names);
	topo_cluster_destroy(c);
	return t;
}

topo_target_t *ctl_load_target_cpus(const char *tleaf, const char *cluster, const char *hosts, int per_pu,
				    unsigned **cpu, rm_error_t *err)
{
	return ctl_load_target_kind(tleaf, cluster, hosts, per_pu, NULL, cpu, NULL, err);
}

topo_target_t *ctl_load_target(const char *tleaf, const char *cluster, const char *hosts, int per_pu, rm_error_t *err)
{
	return ctl_load_target_cpus(tleaf, cluster, hosts, per_pu, NULL, err);
}

int ctl_write_placement(const char *cmd, const char *rankfile, const char *hostfile, const uint32_t *perm, uint32_t n,
			const char *const *slot_host, const unsigned *slot_cpu, int per_pu)
{
	rm_error_t err;
	char *tmp = NULL;
	FILE *f;
	uint32_t r;
	int rc;

	rm_error_clear(&err);
	if (rankfile) {
		if (!(f = ctl_atomic_open(rankfile, &tmp, &err)))
			return ctl_fail(cmd, &err, rankfile);
		fprintf(f,
			"# Open MPI rankfile from rankmapctl map: %u ranks. Each line: rank R=HOST slot=N, N the\n"
			"# logical %s of HOST (hwloc's numbering, as mpirun's rankfile expects).\n"
			"# Use: mpirun --rankfile FILE%s -np %u ./app\n",
			n, per_pu ? "hardware thread (PU)" : "core", per_pu ? " --use-hwthread-cpus" : "", n);
		for (r = 0; r < n; r++)
			fprintf(f, "rank %u=%s slot=%u\n", r, slot_host[perm[r]], slot_cpu[perm[r]]);
		rc = ferror(f) ? -1 : 0;
		if (ctl_atomic_commit(f, tmp, rankfile, rc, &err) < 0)
			return ctl_fail(cmd, &err, rankfile);
	}
	if (hostfile) {
		if (!(f = ctl_atomic_open(hostfile, &tmp, &err)))
			return ctl_fail(cmd, &err, hostfile);
		for (r = 0; r < n; r++) /* SLURM_HOSTFILE for srun --distribution=arbitrary: line R, rank R's host */
			fprintf(f, "%s\n", slot_host[perm[r]]);
		rc = ferror(f) ? -1 : 0;
		if (ctl_atomic_commit(f, tmp, hostfile, rc, &err) < 0)
			return ctl_fail(cmd, &err, hostfile);
	}
	return 0;
}

int ctl_sources_opt(ctl_sources_t *s, const char *cmd, int c, const char *arg)
{
	switch (c) {
	case CTL_OPT_HWLOC:
	case CTL_OPT_IB:
		if ((c == CTL_OPT_HWLOC ? s->nhwloc : s->nib) >= CTL_MAX_SOURCES)
			return ctl_usage_error(cmd, "at most %d --%s options", CTL_MAX_SOURCES,
					       c == CTL_OPT_HWLOC ? "hwloc" : "ib");
		if (c == CTL_OPT_HWLOC)
			s->hwloc[s->nhwloc++] = arg;
		else
			s->ib[s->nib++] = arg;
		return 1;
	case CTL_OPT_IB_CACHE: s->ib_cache = arg; return 1;
	case CTL_OPT_IB_LIVE: s->ib_live = 1; return 1;
	case CTL_OPT_NAME_MAP: s->name_map = arg; return 1;
	case CTL_OPT_TORUS: s->torus = arg; return 1;
	case CTL_OPT_CLUSTER: s->cluster = arg; return 1;
	case CTL_OPT_STRICT: s->strict = 1; return 1;
	default: return 0;
	}
}

int ctl_sources_any(const ctl_sources_t *s)
{
	return s->nhwloc || s->nib || s->ib_cache || s->ib_live || s->torus || s->cluster;
}

/* Runs hwloc on the description of a "synthetic:DESC[@HOSTS]" spec with HWLOC_SYNTHETIC_VERBOSE set and
 * its standard error captured, so that a refusal carries hwloc's own reason (rankmapctl is one thread
 * here: setenv and the redirection of fd 2 are safe). Returns 0, or -1 with err naming the option. */
int ctl_synthetic_check(const char *spec, rm_error_t *err)
{
	char *desc, *at, why[512] = "";
	hwloc_topology_t topo;
	int saved, ok = 0;
	FILE *cap;
	size_t len;

	if (strncmp(spec, "synthetic:", 10) || !(desc = strdup(spec + 10)))
		return 0;
	if ((at = strrchr(desc, '@')))
		*at = '\0';
	fflush(stderr);
	cap = tmpfile();
	saved = cap ? dup(2) : -1;
	if (saved >= 0 && dup2(fileno(cap), 2) >= 0) {
		setenv("HWLOC_SYNTHETIC_VERBOSE", "1", 1);
		if (hwloc_topology_init(&topo) == 0) {
			ok = hwloc_topology_set_synthetic(topo, desc) == 0 && hwloc_topology_load(topo) == 0;
			hwloc_topology_destroy(topo);
		}
		unsetenv("HWLOC_SYNTHETIC_VERBOSE");
		fflush(stderr);
		dup2(saved, 2);
	} else {
		ok = 1; /* cannot capture: let the loader say what it says */
	}
	if (saved >= 0)
		close(saved);
	if (cap && !ok) {
		rewind(cap);
		if (!fgets(why, sizeof(why), cap))
			why[0] = '\0';
		len = strlen(why);
		while (len && (why[len - 1] == '\n' || why[len - 1] == '\r'))
			why[--len] = '\0';
	}
	if (cap)
		fclose(cap);
	if (!ok)
		rm_error_set(err, "--hwloc", 0, 0, "'%s': hwloc refuses the synthetic description '%s': %s", spec, desc,
			     why[0] ? why : "no reason given");
	free(desc);
	return ok ? 0 : -1;
}

int ctl_sources_load(topo_cluster_t c, const ctl_sources_t *s, rm_error_t *err)
{
	int i;

	for (i = 0; i < s->nhwloc; i++)
		if (ctl_synthetic_check(s->hwloc[i], err) < 0)
			return -1;

	topo_cluster_set_strict(c, s->strict);
	if (s->cluster && topo_load_cluster_file(c, s->cluster, err) < 0)
		return -1;
	for (i = 0; i < s->nhwloc; i++)
		if (topo_load_hwloc_spec(c, s->hwloc[i], err) < 0)
			return -1;
	if (s->name_map && topo_load_node_name_map(c, s->name_map, err) < 0)
		return -1;
	for (i = 0; i < s->nib; i++)
		if (topo_load_ib_file(c, s->ib[i], err) < 0)
			return -1;
	if (s->ib_cache && topo_load_ib_cache(c, s->ib_cache, err) < 0)
		return -1;
	if (s->ib_live && topo_load_ib_live(c, NULL, 0, err) < 0)
		return -1;
	if (s->torus && topo_load_torus(c, s->torus, err) < 0)
		return -1;
	return topo_cluster_finalize(c, err);
}

FILE *ctl_atomic_open(const char *path, char **tmp, rm_error_t *err)
{
	size_t len = strlen(path) + 32;
	FILE *f = NULL;
	int fd;

	if (!(*tmp = malloc(len))) {
		rm_error_set(err, path, 0, 0, "out of memory");
		return NULL;
	}
	fd = rm_tmpfile_beside(path, 0666, *tmp, len); /* a name of its own: concurrent writers never share it */
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rm_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
	}
	return f;
}

int ctl_atomic_commit(FILE *f, char *tmp, const char *path, int rc, rm_error_t *err)
{
	if (fclose(f) != 0 || rc < 0 || rename(tmp, path) < 0) {
		rm_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
		unlink(tmp);
		rc = -1;
	}
	free(tmp);
	return rc;
}

int ctl_torus_request(json_t *req, const ctl_torus_args_t *t, rm_error_t *err)
{
	topo_torus_spec_t spec = { .link_cost = { 1, 1, 1 } };
	int mesh = t->mesh;

	if (t->axes)
		json_object_set_new(req, "axes", json_string(t->axes));
	if (!t->dims)
		return 0;
	if (order_parse_dims(t->dims, &spec, err) < 0 || (t->cost && order_parse_link_cost(t->cost, &spec, err) < 0))
		return -1;
	json_object_update_new(req, json_pack("{s:[iii], s:[bbb], s:[fff], s:i}", "dims", spec.dims[0], spec.dims[1],
					      spec.dims[2], "wrap", !mesh, !mesh, !mesh, "link_cost", spec.link_cost[0],
					      spec.link_cost[1], spec.link_cost[2], "nodes_per_router",
					      spec.nodes_per_router));
	return 0;
}

int ctl_torus_opt(ctl_torus_args_t *t, int c, const char *arg, const char *cmd)
{
	switch (c) {
	case CTL_OPT_TORUS: t->torus = arg; return 1;
	case CTL_OPT_DIMS: t->dims = arg; return 1;
	case CTL_OPT_LINK_COST: t->cost = arg; return 1;
	case CTL_OPT_MESH: t->mesh = 1; return 1;
	case CTL_OPT_AXES: t->axes = arg; return 1;
	case CTL_OPT_METHOD: t->method = arg; return 1;
	default: return ctl_daemon_opt(&t->d, c, arg, cmd);
	}
}

int ctl_torus_check(ctl_torus_args_t *t, const char *cmd)
{
	if (!t->torus && !t->dims) /* no torus given: ask rankmapd, as report does without files */
		ctl_daemon_default(&t->d);
	if (ctl_daemon_set(&t->d) && t->torus)
		return ctl_usage_error(cmd, "--socket replaces --torus (the daemon's torus is used)");
	if (ctl_daemon_set(&t->d) && !t->dims && (t->cost || t->mesh))
		return ctl_usage_error(cmd, "with --socket, --link-cost and --mesh need --dims");
	if (!ctl_daemon_set(&t->d) && !t->torus == !t->dims) {
		fprintf(stderr, "rankmapctl %s: give exactly one of --torus FILE and --dims XxYxZ\n", cmd);
		return 2;
	}
	return -1;
}

json_t *ctl_map_request(const map_graph_t *g, const char *cart, const json_t *where, const char *key,
			rm_map_request_t *q)
{
	size_t n = json_array_size(where), ne = g ? g->xadj[g->n] : 0, i, k = 0;
	int slots = !strcmp(key, "slots"), bad = 0;
	rm_slot_t *sl = calloc(n + 1, sizeof(*sl));
	const char **names = calloc(n + 1, sizeof(*names));
	uint32_t *src = malloc((ne + 1) * sizeof(*src)), *dst = malloc((ne + 1) * sizeof(*dst)), u;
	double *w = malloc((ne + 1) * sizeof(*w));
	json_t *req = NULL;

	for (u = 0; g && src && dst && w && u < g->n; u++)
		for (uint64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++)
			if (g->adj[e] > u)
				src[k] = u, dst[k] = g->adj[e], w[k++] = g->w[e];
	for (i = 0; sl && names && i < n; i++) {
		const json_t *v = json_array_get(where, i);

		if (slots) {
			sl[i].host = json_string_value(json_array_get(v, 0));
			sl[i].pu = (int32_t)json_integer_value(json_array_get(v, 1));
		} else
			names[i] = json_string_value(v);
		bad |= slots ? !sl[i].host : !names[i];
	}
	q->n = g ? g->n : 0, q->nedges = k, q->src = src, q->dst = dst, q->w = w, q->cart = g ? NULL : cart;
	q->slots = slots ? sl : NULL, q->nslots = slots ? n : 0;
	q->hosts = slots ? NULL : names, q->nhosts = slots ? 0 : n;
	if (sl && names && src && dst && w && !bad)
		req = rm_map_request_json(q);
	free(sl), free(names), free(src), free(dst), free(w);
	q->slots = NULL, q->hosts = NULL, q->src = q->dst = NULL, q->w = NULL;
	return req;
}

/* ---- progress on standard error ------------------------------------------------------------------ */

struct ctl_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct timespec t0; /* CLOCK_MONOTONIC */
	const char *cmd, *phase;
	int stop, tty, printed;
};

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The ticker: nothing for the first CTL_PROGRESS_AFTER_S seconds, then on a terminal one line rewritten
 * every second, elsewhere (--progress) one line every CTL_PROGRESS_AFTER_S seconds. */
#define CTL_PROGRESS_AFTER_S 2
static void *progress_thread(void *arg)
{
	struct ctl_progress *p = arg;
	long next = CTL_PROGRESS_AFTER_S;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec until;
		double el = since(&p->t0);

		if (el >= (double)next) {
			if (p->tty)
				fprintf(stderr, "\rrankmapctl %s: %.0f s, %s...\033[K", p->cmd, el, p->phase);
			else
				fprintf(stderr, "rankmapctl %s: %.0f s, %s...\n", p->cmd, el, p->phase);
			fflush(stderr);
			p->printed = 1;
			next = (long)el + (p->tty ? 1 : CTL_PROGRESS_AFTER_S);
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 250000000L;
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&p->cond, &p->lock, &until);
	}
	if (p->printed && p->tty)
		fprintf(stderr, "\r\033[K"); /* leave the terminal's line clean for the result */
	else if (p->printed)
		fprintf(stderr, "rankmapctl %s: done in %.1f s\n", p->cmd, since(&p->t0));
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

ctl_progress_t *ctl_progress_start(const char *cmd, const ctl_daemon_t *d, const char *phase)
{
	struct ctl_progress *p;
	int tty = isatty(2);

	if (!(d && d->progress) && !tty)
		return NULL;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->cmd = cmd, p->phase = phase, p->tty = tty;
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (pthread_create(&p->thread, NULL, progress_thread, p) != 0) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		free(p);
		return NULL;
	}
	return p;
}

void ctl_progress_phase(ctl_progress_t *p, const char *phase)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->phase = phase;
	pthread_mutex_unlock(&p->lock);
}

void ctl_progress_stop(ctl_progress_t *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
