/*
 * Solgate core: the C ABI between the nginx module and the C++ core.
 *
 * Rules of this boundary:
 * - plain C types only; strings are (pointer, length) pairs, never
 *   NUL-terminated unless said so;
 * - handles are opaque and freed by the function named beside them;
 * - no function throws, calls back into nginx, or keeps a pointer the
 *   caller passed in after it returns (unless said so);
 * - functions that can fail return SG_OK or a negative SG_ code.
 */

#ifndef SOLGATE_SOLGATE_H
#define SOLGATE_SOLGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SOLGATE_BUILDING_CORE)
#define SG_API __attribute__((visibility("default")))
#else
#define SG_API
#endif

#define SG_OK          0
#define SG_ERROR      -1     /* internal failure, e.g. out of memory */
#define SG_DECLINED   -2     /* input not recognised / nothing to do */

typedef struct {
    const char  *data;
    size_t       len;
} sg_str_t;


/* Clusters and their genesis hashes */

typedef enum {
    SG_CLUSTER_MAINNET_BETA = 0,
    SG_CLUSTER_DEVNET,
    SG_CLUSTER_TESTNET,
    SG_CLUSTER_CUSTOM
} sg_cluster_t;

/* SG_OK, or SG_DECLINED for a name that is not a cluster */
SG_API int sg_cluster_parse(const char *name, size_t len, sg_cluster_t *out);
SG_API sg_str_t sg_cluster_name(sg_cluster_t cluster);
/* empty for SG_CLUSTER_CUSTOM: a custom cluster's hash is not known */
SG_API sg_str_t sg_cluster_genesis_hash(sg_cluster_t cluster);


/* Commitment levels; legacy names map to the current three */

typedef enum {
    SG_COMMITMENT_NONE = 0,
    SG_COMMITMENT_PROCESSED,
    SG_COMMITMENT_CONFIRMED,
    SG_COMMITMENT_FINALIZED
} sg_commitment_t;

SG_API int sg_commitment_parse(const char *name, size_t len,
    sg_commitment_t *out);
SG_API sg_str_t sg_commitment_name(sg_commitment_t commitment);


/* A network: settings, upstreams and their shared state */

typedef struct sg_network_s  sg_network_t;

typedef struct {
    sg_cluster_t     cluster;
    sg_commitment_t  default_commitment;  /* NONE: Solana's own default */
    uint32_t         debounce_ms;         /* state_poller_debounce */
    int64_t          max_finalized_slot_lag;  /* 0: filter disabled */
    int              enforce_block_availability;
} sg_network_conf_t;

/* How the poller reaches an upstream (see HttpTarget in libcore). */
typedef struct {
    sg_str_t         id;
    sg_str_t         poll_url;
    sg_str_t         host_header;   /* may be empty */
    sg_str_t         connect_to;    /* curl CONNECT_TO entry, may be empty */
    sg_str_t         tags;          /* "k:v,k:v", may be empty */
    sg_str_t         methods;       /* "getBlock|getTransaction", may be empty */
    sg_str_t         ignore_methods;
} sg_upstream_conf_t;

SG_API sg_network_t *sg_network_new(const char *name, size_t name_len,
    const sg_network_conf_t *conf);
SG_API void sg_network_free(sg_network_t *net);
SG_API int sg_network_add_upstream(sg_network_t *net,
    const sg_upstream_conf_t *upstream);

/* NULL when `text` is a valid use-upstream selector, else a message (a
 * static buffer of the calling thread). */
SG_API const char *sg_selector_check(const char *text, size_t len);

/* Bytes of shared memory a network's state takes. */
SG_API size_t sg_network_shared_size(void);
/*
 * Attaches the network to its shared state.  `fresh` memory is set up;
 * reused memory keeps the state of upstreams still configured (by id).
 * now_ms is the monotonic clock.  On failure writes a message into err.
 */
SG_API int sg_network_bind(sg_network_t *net, void *shared, int fresh,
    int64_t now_ms, char *err, size_t err_size);


/* One HTTP request body: a JSON-RPC call or a batch of them */

typedef struct sg_request_s  sg_request_t;

typedef enum {
    SG_ROUTE_FORWARD = 0,    /* send the body to an upstream */
    SG_ROUTE_ANSWER          /* answer with http_status and body */
} sg_route_kind_t;

typedef struct {
    sg_route_kind_t  kind;
    unsigned         http_status;
    sg_str_t         body;           /* owned by the request */
} sg_route_t;

/*
 * Parses a request body.  Never fails on bad input: a body that is not
 * valid JSON-RPC yields a request whose route is the matching error
 * answer.  NULL only when memory ran out.
 */
SG_API sg_request_t *sg_request_parse(const char *body, size_t len);
SG_API void sg_request_free(sg_request_t *req);

/*
 * Decides whether to answer locally or forward, for the request's
 * use-upstream selector (empty: none).  now_ms is the monotonic clock.
 * SG_OK or SG_ERROR.
 */
SG_API int sg_request_route(sg_request_t *req, const sg_network_t *net,
    sg_str_t selector, int64_t now_ms, sg_route_t *out);

/* The request's lane: "all", a group's name, or "" when it has none. */
SG_API sg_str_t sg_request_lane(const sg_request_t *req);

/*
 * The upstream (index in configuration order) for the next attempt, among
 * those the request's selector and method allow, never one marked in
 * tried[].  SG_DECLINED when none is left.  *all_cordoned is set when
 * every allowed upstream was cordoned and the pick ignored cordons.
 * Call after sg_request_route.
 */
SG_API int sg_network_pick(const sg_network_t *net, const sg_request_t *req,
    const unsigned char *tried, size_t *picked, int *all_cordoned);

/*
 * The answer given when no upstream could serve the request: one JSON-RPC
 * error per call (an array for a batch), each echoing its call's id.
 */
SG_API int sg_request_fail(sg_request_t *req, unsigned http_status,
    int code, const char *message, size_t message_len, sg_route_t *out);

/* "getSlot" for a single call, "batch" for a batch, "" when unreadable */
SG_API sg_str_t sg_request_method(const sg_request_t *req);
/* number of calls (1 for a single call, N for a batch, 0 if unreadable) */
SG_API size_t sg_request_call_count(const sg_request_t *req);

/*
 * Writes a standalone JSON-RPC error envelope into buf (id null), for errors
 * raised before the body could be read (413, 408, ...).  Returns the length
 * written, or 0 when buf is too small.
 */
SG_API size_t sg_write_error(char *buf, size_t size, int code,
    const char *message, size_t message_len);


/* The response path of a forwarded request */

typedef struct sg_response_s  sg_response_t;

typedef enum {
    SG_RESPONSE_REWRITE = 1,   /* collect the (small) body, then rewrite */
    SG_RESPONSE_HARVEST        /* feed the body while it streams through */
} sg_response_kind_t;

/* NULL when the response needs nothing (or memory ran out). */
SG_API sg_response_t *sg_response_new(const sg_network_t *net,
    const sg_request_t *req, size_t upstream);
SG_API sg_response_kind_t sg_response_kind(const sg_response_t *resp);
/* HARVEST: SG_OK once nothing more is needed, SG_DECLINED for more. */
SG_API int sg_response_feed(sg_response_t *resp, const char *data,
    size_t len, int64_t now_ms);
SG_API void sg_response_finish(sg_response_t *resp, int64_t now_ms);
/*
 * REWRITE: SG_OK with the corrected body in *out (owned by resp) and the
 * slots before and after; SG_DECLINED to send the body unchanged.
 */
SG_API int sg_response_rewrite(sg_response_t *resp, const char *body,
    size_t len, int64_t now_ms, sg_str_t *out, uint64_t *from, uint64_t *to);
SG_API void sg_response_free(sg_response_t *resp);


/* The poller thread (one per worker process) */

typedef struct sg_poller_s  sg_poller_t;

/* level uses nginx's numbering (NGX_LOG_ERR 4 ... NGX_LOG_DEBUG 8) */
typedef void (*sg_log_pt)(void *user, int level, const char *line,
    size_t len);

SG_API sg_poller_t *sg_poller_start(sg_network_t *const *nets, size_t n,
    uint32_t pid, sg_log_pt log, void *user, char *err, size_t err_size);
/* Stops and joins the thread; no thread, fd or timer is left behind. */
SG_API void sg_poller_stop(sg_poller_t *poller);


/* Operator actions and status */

/* SG_DECLINED for an unknown upstream id */
SG_API int sg_network_cordon(sg_network_t *net, sg_str_t id,
    sg_str_t reason);
SG_API int sg_network_uncordon(sg_network_t *net, sg_str_t id);

/* malloc'd text for GET /solgate/state (JSON) and for /metrics
 * (Prometheus); free with sg_text_free.  NULL when memory ran out. */
SG_API char *sg_render_state(sg_network_t *const *nets, size_t n,
    size_t *len);
SG_API char *sg_render_metrics(sg_network_t *const *nets, size_t n,
    size_t *len);
SG_API void sg_text_free(char *text);


/* Cube Runner: getBlock from the region cache, the ledger, other regions */

typedef struct sg_blocks_s      sg_blocks_t;
typedef struct sg_block_call_s  sg_block_call_t;
typedef struct sg_capture_s     sg_capture_t;

typedef struct {
    sg_str_t         region;
    sg_str_t         cache_dir;
    sg_str_t         state_dir;
    uint64_t         max_size;      /* bytes; 0: no limit */
    sg_str_t         peer_token;    /* X-Solgate-Peer value */
} sg_blocks_conf_t;

/*
 * At configuration time: new (peer_token its default), then peers and
 * plans, then attach to the network (which must outlive it) with the rest
 * of the settings; an empty peer_token keeps the default.
 */
SG_API sg_blocks_t *sg_blocks_new(const sg_blocks_conf_t *conf);
SG_API int sg_blocks_attach(sg_blocks_t *blocks, sg_network_t *net,
    const sg_blocks_conf_t *conf);
SG_API void sg_blocks_free(sg_blocks_t *blocks);
/* copy: copy what the peer holds in the background (else only ask it) */
SG_API int sg_blocks_add_peer(sg_blocks_t *blocks, sg_str_t name,
    sg_str_t url, int copy, char *err, size_t err_size);
/* plan_define NAME ARGS...; an nginx-style message in err on SG_DECLINED */
SG_API int sg_blocks_define_plan(sg_blocks_t *blocks, sg_str_t name,
    const sg_str_t *args, size_t nargs, char *err, size_t err_size);
/* long_term_storage URL: a JSON-RPC endpoint holding every block */
SG_API int sg_blocks_add_long_term(sg_blocks_t *blocks, sg_str_t url,
    char *err, size_t err_size);
/* Bytes of the zone: counters, keys and one queue per archive plan. */
SG_API size_t sg_blocks_shared_size(const sg_blocks_t *blocks);
SG_API int sg_blocks_bind(sg_blocks_t *blocks, void *shared, int fresh,
    char *err, size_t err_size);
/* Opens the cache and its index in this process (after fork). */
SG_API int sg_blocks_open(sg_blocks_t *blocks, int reconcile, char *err,
    size_t err_size);
SG_API void sg_blocks_close(sg_blocks_t *blocks);

typedef enum {
    SG_BLOCKS_PASS = 0,    /* not Cube Runner's: route as usual */
    SG_BLOCKS_ANSWER,      /* answer with http_status, retry_after, body */
    SG_BLOCKS_CACHE,       /* serve the cached file, id spliced in */
    SG_BLOCKS_LEDGER,      /* forward to the network's upstreams */
    SG_BLOCKS_PEER         /* forward to another region's gateway */
} sg_blocks_action_t;

typedef struct {
    sg_blocks_action_t  action;
    unsigned            http_status;
    unsigned            retry_after;   /* seconds; 0: no Retry-After */
    sg_str_t            body;
    sg_str_t            path;          /* CACHE: NUL-terminated */
    uint64_t            size;          /* CACHE: file size */
    uint64_t            file_id;       /* CACHE: its inode (ngx_file_uniq) */
    uint64_t            id_offset;     /* CACHE: the id inside the file */
    uint64_t            id_length;
    sg_str_t            id;            /* CACHE: the client's id */
    sg_str_t            peer_url;      /* PEER */
    sg_str_t            peer_name;
    sg_str_t            peer_token;    /* PEER: send as X-Solgate-Peer */
} sg_blocks_decision_t;

/*
 * Decides for a parsed request.  api_key and plan are the values of the
 * configured variables; peer_token the X-Solgate-Peer header ("" when
 * absent).  On SG_OK, *call is set unless the action is PASS; strings in
 * *out are owned by *call (or static for PASS).
 */
SG_API int sg_blocks_decide(sg_blocks_t *blocks, const sg_request_t *req,
    sg_str_t api_key, sg_str_t plan, sg_str_t peer_token, int64_t now_ms,
    int64_t wall_ms, sg_block_call_t **call, sg_blocks_decision_t *out);
/* The current PEER attempt failed: the next source. */
SG_API int sg_blocks_next(sg_blocks_t *blocks, sg_block_call_t *call,
    int64_t now_ms, sg_blocks_decision_t *out);
/* The current attempt's source answered the call (wall_ms: UTC ms). */
SG_API void sg_blocks_served(sg_blocks_t *blocks, sg_block_call_t *call,
    int64_t wall_ms);
SG_API void sg_block_call_free(sg_block_call_t *call);

/* Copying an answer into the cache while it streams; NULL: not wanted. */
SG_API sg_capture_t *sg_blocks_capture_start(sg_blocks_t *blocks,
    const sg_block_call_t *call, int64_t now_ms);
SG_API int sg_capture_write(sg_capture_t *capture, const char *data,
    size_t len);
/*
 * The answer arrived whole: it is checked and stored on the poller thread
 * (fsync, rename, index), never on nginx's event loop.  Takes the capture:
 * do not free it after this.
 */
SG_API void sg_capture_commit(sg_blocks_t *blocks, sg_capture_t *capture,
    int64_t wall_ms);
/* Abandons a capture (a response cut short). */
SG_API void sg_capture_free(sg_capture_t *capture);

/* The region's cache summary (JSON, malloc'd; free with sg_text_free). */
SG_API char *sg_blocks_render_summary(sg_blocks_t *blocks, int64_t wall_ms,
    size_t *len);


/* Build information, for the startup log line */
SG_API const char *sg_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SOLGATE_SOLGATE_H */
