/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures.h - fixtures shared by unit tests (prefix fx_),
 * linked into every unit test binary (Makefile: every non-test .c of
 * tests/unit/).
 *
 * API fixtures (tests/unit/fixtures_api.c): the project's API server
 * (tests/apiserver) in-process on a fresh libev loop, a scratch
 * directory, an api/ client to it, requests whose answers a test waits
 * for by running the loop. For Criterion .init/.fini: fx_setup (server and
 * client), fx_setup_server_only, fx_teardown.
 *
 * Store fixtures (tests/unit/fixtures_store.c): a private directory per
 * test holding the ledger path, store_open asserting success, and raw
 * SQL on a ledger file underneath the store API. For Criterion
 * .init/.fini: fx_tdir_setup, fx_tdir_teardown.
 *
 * Framework document fixtures (tests/unit/fixtures_docjob.c): a job of
 * any framework descriptor read as JSON (REC_JOB_DOC) from test text,
 * its Workload admitted with a given admission, merge patches applied.
 *
 * Topology placement fixtures (tests/unit/fixtures_tas.c): an
 * assignment rendered as "host:count,...", a placement's outcome checked
 * against a table row.
 *
 * Queue model fixtures (tests/unit/fixtures_queues.c): one ClusterQueue
 * of cpu with its LocalQueues.
 *
 * The fixtures assert with Criterion (a failed step fails the test).
 * Globals are the fixture's state for the running test: each test runs
 * in its own process.
 */
#ifndef CUEUE_TESTS_UNIT_FIXTURES_H
#define CUEUE_TESTS_UNIT_FIXTURES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "api/client.h"
#include "queues/queues.h"
#include "reconcile/reconcile.h"
#include "store/store.h"
#include "tests/apiserver/apiserver.h"
#include "tests/apiserver/tls.h"

/* ---- API server and client ------------------------------------------- */

/* The bearer token the fixture's server accepts. */
#define FX_TOKEN "good-token"

extern struct ev_loop *fx_loop;	      /* owned by the fixture */
extern struct as_server fx_srv;	      /* the running server */
extern struct as_tls_material fx_tls; /* with TLS: its material */
extern api_client *fx_cl;	      /* owned; NULL until fx_client_start */
extern char fx_tmpdir[64]; /* scratch directory, removed by teardown */
extern char fx_url[128];   /* the server's base URL */

/* What one request's callback saw. */
struct fx_result {
	bool done;
	int code, err, attempts;
	bool canceled;
	json_t *body; /* owned: fx_result_dispose */
	char reason[64];
	char msg[512];
	char *lines; /* stream: concatenated lines, '|' separated [owned] */
	int nlines;
};

void fx_result_dispose(struct fx_result *r);
/* An api_response_fn filling the struct fx_result in payload. */
void fx_on_resp(const struct api_response *resp, void *payload);

/* An ev_timer callback: sets *(bool *)w->data. */
void fx_on_deadline(struct ev_loop *l, ev_timer *w, int revents);
/* Run fx_loop until *flag or `seconds` pass; returns *flag. */
bool fx_run_until(bool *flag, double seconds);
void fx_run_for(double seconds);

/* A new loop, the server on it (TLS material in fx_tls when with_tls),
 * fx_url and fx_tmpdir. */
void fx_server_start(bool with_tls);
/* Replace the server's fault rules: rules_json is the body of POST
 * /__test/faults ({"rules": [...]}); asserts success. */
void fx_faults(const char *rules_json);
/* fx_cl from *o, defaulting server (fx_url), token (FX_TOKEN) and
 * retry_base_ms (50); o may be modified. */
void fx_client_start(struct api_client_opts *o);
/* Remove fx_tmpdir (plain files only). */
void fx_remove_tmpdir(void);

void fx_setup(void);
void fx_setup_server_only(void);
void fx_teardown(void);

/* Send one request on fx_cl without waiting; asserts the callback did
 * not run inside api_request. body [consumed]. */
void fx_send_nowait(struct fx_result *r, const char *method, const char *path,
    const char *ctype, json_t *body);
/* Send one request and wait (20 s at most) for its answer. body
 * [consumed]. */
void fx_call(struct fx_result *r, const char *method, const char *path,
    const char *ctype, json_t *body);

/* A ConfigMap `name` in namespace default with data k=value [owned]. */
json_t *fx_configmap(const char *name, const char *value);

/* ---- store ------------------------------------------------------------ */

extern char fx_tdir[256];  /* the test's private directory */
extern char fx_tpath[300]; /* fx_tdir/ledger.db */

void fx_tdir_setup(void);
void fx_tdir_teardown(void);

/* store_open(path), asserting success [owned: store_close]. */
store *fx_open_ok(const char *path);
/* Run SQL on the file directly (no store), asserting success. */
void fx_raw_exec(const char *path, const char *sql);
/* The first column of the first row of a query on the file directly. */
int64_t fx_raw_int(const char *path, const char *sql);
/* A file's size in bytes, -1 when it does not exist. */
int64_t fx_file_size(const char *path);
/* Lower (or, with RLIM_INFINITY, lift) the soft file size limit; SIGXFSZ
 * ignored, so a write past it fails with EFBIG (as in the controller). */
void fx_fsize_limit(rlim_t soft);

/* ---- framework documents (fixtures_docjob.c) ----------------------- */

/* ResourceFlavor spot (node label pool=spot, a NoSchedule toleration
 * spot) and a pod set assignment of n to it for c pods of 1 cpu, as JSON
 * text. */
#define FX_SPOT_FLAVOR                                                         \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"spot\"},\"spec\":{"       \
	"\"nodeLabels\":{\"pool\":\"spot\"},\"tolerations\":[{\"key\":"        \
	"\"spot\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}"
#define FX_ASSIGN(n, c)                                                        \
	"{\"name\":\"" n "\",\"flavors\":{\"cpu\":\"spot\"},"                  \
	"\"resourceUsage\":{\"cpu\":\"" #c "\"},\"count\":" #c "}"

/* A job document of a framework descriptor and its view. */
struct fx_docjob {
	json_t *doc; /* owned */
	struct api_meta meta;
	struct rec_job view;
};

/* JSON text parsed, asserting it is valid [owned]. */
json_t *fx_parse(const char *text);
/* A decoder of a JSON document (api/wire.h's, wrapped). */
typedef int (*fx_decode_fn)(const json_t *, cu_error *);
/* dec refuses the JSON text doc with exactly the message msg. */
void fx_refused(fx_decode_fn dec, const char *doc, const char *msg);
/* d loaded from text as a job of framework fw (rec_fw_by_name). */
void fx_docjob_load(struct fx_docjob *d, const char *fw, const char *text);
/* d viewing doc [stolen] as the same framework as like. */
void fx_docjob_adopt(
    struct fx_docjob *d, const struct fx_docjob *like, json_t *doc);
void fx_docjob_dispose(struct fx_docjob *d);
/* *wl: the Workload rec_wl_build makes of d, status admission `adm`
 * (JSON text) and Admitted; api_workload_dispose it. */
void fx_docjob_workload(
    const struct fx_docjob *d, const char *adm, struct api_workload *wl);
/* rec_job_view callbacks of empty caches: no admitted ResourceFlavor
 * (admitted_flavors) and no LocalQueue (local_queue_exists). */
int fx_no_flavors(const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, void *payload, cu_error *err);
bool fx_no_lq(const char *ns, const char *name, void *payload);
/* *v a managed view of empty caches (fx_no_flavors, fx_no_lq) and *in
 * the input of rec_job_reconcile for the Pod job [borrowed] "ns/p" whose
 * Workload is wl [borrowed]. */
void fx_pod_reconcile_in(struct rec_job_view *v, struct rec_job_in *in,
    const struct rec_job *job, const struct api_workload *wl);
/* doc with the merge patch applied [owned]. */
json_t *fx_apply(const json_t *doc, const json_t *patch);
/* The pod sets of the job of framework fw read from text, as
 * "name:count:cpu-milli:memory-bytes,..." into out [n bytes]; returns
 * rec_job_podsets' code (out "" unless CU_OK). */
int fx_docjob_podsets(const char *fw, const char *text, char *out, size_t n);

/* What the descriptor readers say of a job document. */
struct fx_state {
	bool suspended, finished, success, active, ready;
	const char *message; /* when finished */
};

/* The job of framework fw read from text reads as want says. */
void fx_docjob_check_state(
    const char *fw, const char *text, const struct fx_state *want);

/* The job of framework fw read from text, started on a Workload with
 * admission adm (JSON text) and the one ResourceFlavor flavor (JSON
 * text): returns the started document, *stopped the same stopped
 * (suspended in one step) [both owned]. */
json_t *fx_docjob_start_stop(const char *fw, const char *text,
    const char *flavor, const char *adm, json_t **stopped);

/* ---- topology placement (fixtures_tas.c) --------------------------- */

/* a [borrowed] as "host:count,..." (each domain's lowest value) into
 * buf [len bytes]. */
void fx_tas_render(
    const struct api_topology_assignment *a, char *buf, size_t len);
/* A placement's outcome: rc is want_rc; on CU_OK a [borrowed] renders
 * as want, otherwise msg is want and a is empty. name: the row. */
void fx_tas_expect(const char *name, int rc, int want_rc, const char *msg,
    const struct api_topology_assignment *a, const char *want);

/* ---- queue model (fixtures_queues.c) --------------------------------- */

/* A new state [owned: que_state_free]: ResourceFlavor default,
 * ClusterQueue cq of cpu_milli cpu with queueing, and the LocalQueues
 * lqs [borrowed; nlqs of them]. */
que_state *fx_one_cq(int64_t cpu_milli, enum que_queueing queueing,
    const struct que_lq_spec *lqs, size_t nlqs);

#endif
