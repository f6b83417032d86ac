/*
 * Solgate core: the C ABI between the nginx module and the C++ core.
 *
 * The module translates between nginx and these calls; the core decides.
 *
 * Conventions, the same for every function:
 * - Names are by object: sg_network_*, sg_request_*, sg_response_*,
 *   sg_poller_*, sg_status_*, sg_admin_*, sg_blocks_*, sg_block_call_*,
 *   sg_capture_*; sg_version, sg_text_free and sg_http_error_answer
 *   stand alone.
 *   The object comes first, then the inputs, then the clocks (now_ms:
 *   monotonic, comparable across processes; wall_ms: UTC), then the
 *   outputs, then (err, err_size).
 * - A function that can fail returns an int from sg_status_e.  Where a
 *   message is possible it takes a caller-provided (err, err_size) buffer
 *   and writes a NUL-terminated, nginx-style message into it (lowercase,
 *   no full stop, the bad token quoted); err may be NULL.
 * - Strings are (pointer, length) pairs, never NUL-terminated unless said
 *   so.  Strings handed out are owned by the object named beside them and
 *   stay valid until the next call that changes or frees that object;
 *   copy what must outlive it.
 * - Handles are opaque.  Every sg_*_free accepts NULL.
 * - No function throws (each is noexcept at the boundary), calls back
 *   into nginx, or keeps a pointer the caller passed in after it returns
 *   (unless said so).  On an internal failure (out of memory) each fails
 *   the way its comment says: closed (SG_ERROR, the module answers 500 or
 *   refuses the configuration) or open (the request goes on without what
 *   the call would have added).
 */

#ifndef SOLGATE_SOLGATE_H
#define SOLGATE_SOLGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define SG_NOEXCEPT noexcept
#else
#define SG_NOEXCEPT
#endif

#if defined(SOLGATE_BUILDING_CORE)
#define SG_API __attribute__((visibility("default")))
#else
#define SG_API
#endif


typedef enum {
    SG_OK        =  0,
    SG_ERROR     = -1,   /* internal failure: out of memory, a caught bug */
    SG_INVALID   = -2,   /* the input is refused; err says why */
    SG_NONE      = -3,   /* nothing to give: no upstream left, no change */
    SG_AGAIN     = -4    /* more input is wanted */
} sg_status_e;

typedef struct {
    const char  *data;
    size_t       len;
} sg_str_t;

/* Text the core allocated (malloc); release with sg_text_free. */
typedef struct {
    char        *data;   /* NUL-terminated */
    size_t       len;
} sg_text_t;

SG_API void sg_text_free(sg_text_t *text) SG_NOEXCEPT;

/* Build information, for the startup log line: a static string. */
SG_API const char *sg_version(void) SG_NOEXCEPT;


/* Defaults and limits of the configuration, defined here once. */

#define SG_DEFAULT_DEBOUNCE_MS         400    /* state_poller_debounce */
#define SG_MAX_DEBOUNCE_MS             60000
#define SG_DEFAULT_MAX_FINALIZED_LAG   100    /* max_finalized_slot_lag */
#define SG_DEFAULT_ENFORCE_BLOCK_AVAILABILITY  1  /* enforce_block_availability */
#define SG_DEFAULT_MAX_SLOT_LAG        20     /* max_slot_lag */
#define SG_DEFAULT_USE_UPSTREAM_FROM_CLIENT  1  /* use_upstream_from_client */
#define SG_DEFAULT_RETRY_MISSING_DATA  1      /* retry_missing_data on */
#define SG_DEFAULT_RETRY_ATTEMPTS      2      /*   attempts=2 */
#define SG_DEFAULT_RETRY_DELAY_MS      150    /*   delay=150ms */
#define SG_DEFAULT_MAX_BATCH_SIZE      100    /* max_batch_size */
#define SG_MAX_UPSTREAMS               256    /* per network */


/*
 * A network: a Solana cluster's settings and upstreams, built while nginx
 * reads the solgate_network block, then bound to its shared zone.
 */

typedef struct sg_network_s  sg_network_t;

/* What proxy_pass needs of an upstream (or another region's gateway). */
typedef struct {
    sg_str_t     id;
    sg_str_t     url;        /* the configured URL, "/" added without path */
    sg_str_t     host;       /* the Host header to send */
    sg_str_t     authority;  /* host[:port] of the URL */
    sg_str_t     ws_url;     /* its ws= as proxy_pass takes it (http:// or
                                https://), empty: none */
    sg_str_t     ws_host;    /* the Host header for it */
    sg_str_t     ws_authority; /* host[:port] of ws= */
    size_t       block_server; /* a node's server in its upstream {} block,
                                  from 1; 0: the upstream is one node */
    sg_str_t     warning;    /* sg_network_add_upstream: what `nginx -t`
                                should warn about (empty: nothing) */
} sg_upstream_info_t;

/* A server of an nginx upstream {} block, in the block's order. */
typedef struct {
    sg_str_t     address;    /* its first address, "127.0.0.1:8899" */
    int          is_unix;
    int          backup;     /* server ... backup */
    int          down;       /* server ... down */
} sg_block_server_t;

/* The settings nginx merges from the network and solgate_network_defaults */
typedef struct {
    uint32_t     debounce_ms;             /* state_poller_debounce */
    int64_t      max_finalized_slot_lag;  /* 0: consensus filter off */
    int          enforce_block_availability;
    int64_t      max_slot_lag;            /* 0: lag never excludes */
    int          use_upstream_from_client;
    int          retry_missing_data;      /* retry_missing_data on|off */
    uint32_t     retry_attempts;          /*   attempts= */
    uint32_t     retry_delay_ms;          /*   delay= */
    int64_t      max_batch_size;          /* 0: no limit */
    int64_t      ws_max_connections;      /* 0: no limit */
} sg_network_settings_t;

/* Every setting at its default (the SG_DEFAULT_* values). */
SG_API void sg_network_settings_default(sg_network_settings_t *out)
    SG_NOEXCEPT;

/* `retry_missing_data on|off [attempts=N] [delay=TIME]`, checked: *out
 * filled (the unnamed options at their defaults), or SG_INVALID with the
 * message. */
SG_API int sg_parse_retry_missing_data(const sg_str_t *args, size_t nargs,
    int *on, uint32_t *attempts, uint32_t *delay_ms, char *err,
    size_t err_size) SG_NOEXCEPT;

/* SG_INVALID for a bad name.  Fails closed. */
SG_API int sg_network_new(sg_str_t name, sg_network_t **out, char *err,
    size_t err_size) SG_NOEXCEPT;
SG_API void sg_network_free(sg_network_t *net) SG_NOEXCEPT;

/* nginx's configuration directory (cycle->conf_prefix): where an upstream's
 * relative tls_* files are, as for proxy_ssl_trusted_certificate.  Before
 * the first sg_network_add_upstream. */
SG_API int sg_network_set_conf_prefix(sg_network_t *net, sg_str_t prefix,
    char *err, size_t err_size) SG_NOEXCEPT;

/* cluster NAME, commitment LEVEL, use_upstream_default SELECTOR: each once;
 * SG_INVALID with the message for a bad or repeated value. */
SG_API int sg_network_set_cluster(sg_network_t *net, sg_str_t value,
    char *err, size_t err_size) SG_NOEXCEPT;
SG_API int sg_network_set_commitment(sg_network_t *net, sg_str_t value,
    char *err, size_t err_size) SG_NOEXCEPT;
SG_API int sg_network_set_default_selector(sg_network_t *net,
    sg_str_t value, char *err, size_t err_size) SG_NOEXCEPT;

/*
 * upstream ID URL [host=] [tags=] [methods=] [ignore_methods=] ... [tls_*=]:
 * args are the directive's arguments after its name; the tls_* files are
 * read now (the workers need no access to them).  On SG_OK *info describes
 * the new upstream (strings owned by net); SG_INVALID with the message.
 */
/*
 * A failsafe policy: "broadcast" (METHOD|METHOD... [to=N|all]),
 * "consensus" (METHOD|METHOD... [participants=N] [agreement=M]
 * [dispute=error|most_common]) or "hedge" (METHOD|METHOD... [after=TIME]
 * [max=N]).  sg_check_policy only checks the words (a defaults block's).
 */
SG_API int sg_network_set_policy(sg_network_t *net, sg_str_t policy,
    const sg_str_t *args, size_t nargs, char *err, size_t err_size)
    SG_NOEXCEPT;
/* What the last sg_network_set_policy warned (a method name that is no
 * Solana method), for `nginx -t`; empty when nothing.  Owned by net. */
SG_API sg_str_t sg_network_warning(const sg_network_t *net) SG_NOEXCEPT;
SG_API int sg_check_policy(sg_str_t policy, const sg_str_t *args,
    size_t nargs, char *err, size_t err_size) SG_NOEXCEPT;
SG_API int sg_network_add_upstream(sg_network_t *net, const sg_str_t *args,
    size_t nargs, sg_upstream_info_t *info, char *err, size_t err_size)
    SG_NOEXCEPT;

/*
 * The upstream's URL names an nginx upstream {} block with these servers:
 * the poller, which does not go through nginx, connects to them.  With one
 * server the upstream stays one node.  With several it becomes *nodes nodes
 * in its place, one per server not marked down, named "ID.N" (N from 1 in
 * the block's order); the upstreams after it move up by *nodes - 1.  A unix
 * socket, which the poller cannot reach, is SG_INVALID with the message.
 */
SG_API int sg_network_reach_through_block(sg_network_t *net, size_t upstream,
    const sg_block_server_t *servers, size_t n, size_t *nodes, char *err,
    size_t err_size) SG_NOEXCEPT;

/* Upstream (or node) i as proxy_pass needs it; SG_INVALID past the end. */
SG_API int sg_network_upstream(const sg_network_t *net, size_t i,
    sg_upstream_info_t *info) SG_NOEXCEPT;

/* Once the http block is read: the merged settings; SG_INVALID when the
 * network is incomplete (no upstream) or a setting is out of range. */
SG_API int sg_network_configure(sg_network_t *net,
    const sg_network_settings_t *settings, char *err, size_t err_size)
    SG_NOEXCEPT;

/* Once every upstream is added: SG_INVALID with the message when
 * use_upstream_default matches none of them (sg_network_configure refuses
 * it too; asked first, the error can name the directive's line). */
SG_API int sg_network_check_default_selector(sg_network_t *net, char *err,
    size_t err_size) SG_NOEXCEPT;

/* Once its upstreams are split into nodes: SG_INVALID with the message
 * when "consensus" asks more upstreams to agree than the network has. */
SG_API int sg_network_check_consensus(sg_network_t *net, char *err,
    size_t err_size) SG_NOEXCEPT;

/*
 * state PATH: the directory (absolute) where the network's operator
 * cordons and WebSocket drains are kept on disk, in the file that
 * sg_network_state_file names (owned by net; empty without state).
 * SG_INVALID with the message when repeated, relative, not a directory
 * or not writable by this process; a directory that does not exist yet is
 * taken (nginx makes it).
 */
SG_API int sg_network_set_state(sg_network_t *net, sg_str_t dir, char *err,
    size_t err_size) SG_NOEXCEPT;
SG_API sg_str_t sg_network_state_file(const sg_network_t *net) SG_NOEXCEPT;

/* Bytes of shared memory a network's state takes. */
SG_API size_t sg_network_shared_size(void) SG_NOEXCEPT;

/*
 * Attaches the network to its shared state.  `fresh` memory is set up;
 * reused memory (a reload) keeps the state of upstreams still configured
 * (by id).  Fails closed.
 */
SG_API int sg_network_bind(sg_network_t *net, void *shared, int fresh,
    int64_t now_ms, char *err, size_t err_size) SG_NOEXCEPT;

/*
 * After sg_network_bind: when the zone started empty (fresh memory, or
 * another version's layout), the operator cordons (with their reason and
 * time) and the drains still running that the state file holds are put
 * into it.  SG_NONE when there is nothing to say (the zone kept its state,
 * no state, no file yet); else SG_OK with *line to log (free it with
 * sg_text_free) at *level (nginx's numbering): what was taken back, or why
 * the file was ignored (unreadable, not an operator state: it changes
 * nothing).  Fails open.
 */
SG_API int sg_network_restore(sg_network_t *net, int64_t now_ms,
    int64_t wall_ms, int *level, sg_text_t *line) SG_NOEXCEPT;

/*
 * A reload could not keep the network's zone (its size changed) and
 * binds a fresh one: call with the old zone's table before binding the
 * new one.  The old workers still on it keep no operator change for 10 s
 * (answered 503 by the admin API), so none is lost between the state
 * file's reading and their stop.  Ignores memory that is not a table of
 * this version.
 */
SG_API void sg_network_supersede(void *old_shared, int64_t now_ms)
    SG_NOEXCEPT;

/*
 * solgate_health: whether a load balancer may send the network client
 * traffic.  http_status 200 with body {"status":"ok","eligible":N} while
 * N > 0 upstreams could take it (not cordoned, not out of rotation after
 * failed attempts, not lagging: the router's own standing), else 503 with
 * {"status":"unavailable","eligible":0,"reason":"..."}.  No lock, no
 * allocation.
 */
#define SG_HEALTH_BODY_MAX  192

typedef struct {
    unsigned     http_status;
    size_t       eligible;
    size_t       len;
    char         body[SG_HEALTH_BODY_MAX];
} sg_health_t;

SG_API int sg_network_health(const sg_network_t *net, int64_t now_ms,
    sg_health_t *out) SG_NOEXCEPT;

/* One HTTP request body: a JSON-RPC call or a batch of them */

typedef struct sg_request_s  sg_request_t;

/* Where a request may name its use-upstream selector; the core applies the
 * precedence (header, X-ERPC alias, query, the network's default).  Each
 * the first one's value; *_twice: the request names it again (an error). */
typedef struct {
    sg_str_t     header;         /* X-Solgate-Use-Upstream */
    sg_str_t     erpc_header;    /* X-ERPC-Use-Upstream */
    sg_str_t     query;          /* ?use-upstream=, URL-decoded */
    int          has_header;
    int          has_erpc_header;
    int          has_query;
    int          header_twice;
    int          erpc_header_twice;
    int          query_twice;
} sg_selector_sources_t;

typedef enum {
    SG_ROUTE_FORWARD = 0,    /* send the body to an upstream */
    SG_ROUTE_ANSWER          /* answer with http_status and body */
} sg_route_kind_e;

typedef struct {
    int          kind;           /* sg_route_kind_e */
    unsigned     http_status;
    sg_str_t     body;           /* owned by the request; FORWARD: the body
                                  * to send instead of the client's (the
                                  * calls of a batch not answered here),
                                  * empty to send the client's */
    int          merged;         /* FORWARD: the batch's answer goes
                                  * through sg_merge_* */
    size_t       pieces;         /* FORWARD: a batch that goes call by call
                                  * in this many pieces (sg_request_piece);
                                  * then body is empty, merged 0 */
    int          fan_out;        /* FORWARD: a fan-out policy takes it: ask
                                  * sg_request_fanout (else it is one
                                  * attempt, and the call is not needed) */
    unsigned     retry_after;    /* ANSWER: seconds for a Retry-After
                                  * header; 0: none */
} sg_route_t;

/*
 * A piece of a batch that goes call by call, in the client's order: an
 * answer made here (text), a call that goes alone (text: the call, to be
 * parsed and routed as a request of its own), or a run of the calls
 * between them (text: the sub-batch, a request of its own marked with
 * sg_request_set_run before its route).  answers: it puts an element in
 * the client's array (a run of notifications puts none), so a comma goes
 * between it and the previous one that did.
 */
typedef enum {
    SG_PIECE_LOCAL = 0,
    SG_PIECE_ALONE,
    SG_PIECE_RUN
} sg_piece_kind_e;

typedef struct {
    int          kind;           /* sg_piece_kind_e */
    sg_str_t     text;           /* owned by the request */
    int          answers;
} sg_piece_t;

SG_API int sg_request_piece(const sg_request_t *req, size_t i,
    sg_piece_t *out) SG_NOEXCEPT;
/* Before sg_request_route: req is a run of a client's batch.  Its answer
 * (merged, failed, or made here) has no brackets, and nothing for its
 * notifications. */
SG_API void sg_request_set_run(sg_request_t *req) SG_NOEXCEPT;
/* A piece that ended with an HTTP error no failover took (http_status 0:
 * an empty answer): one JSON-RPC error per call (without brackets for a
 * run), for the client's array.  Fails closed. */
SG_API int sg_request_status_answer(sg_request_t *req, unsigned http_status,
    sg_str_t *out) SG_NOEXCEPT;

typedef struct {
    size_t       upstream;       /* index in configuration order */
    int          warn_all_cordoned;  /* log that every upstream is out */
} sg_pick_t;

/*
 * Parses a request body.  Never refuses bad input: a body that is not
 * valid JSON-RPC yields a request whose route is the matching error
 * answer.  The body must stay as it is until sg_request_route returns (the
 * calls of a batch that go upstream are cut from it).  Fails closed
 * (SG_ERROR: out of memory).
 */
SG_API int sg_request_parse(const char *body, size_t len, sg_request_t **out)
    SG_NOEXCEPT;
/*
 * A WebSocket upgrade (a subscription connection): no body, no calls.  It
 * is routed and picked as a call is, among the upstreams with a pubsub
 * endpoint (ws=, sg_upstream_info_t ws_url); a route that answers (no
 * such upstream, a bad selector) has an HTTP error status.  Fails closed.
 */
SG_API int sg_request_subscription(sg_request_t **out) SG_NOEXCEPT;

/*
 * Moving subscribers off bad nodes.  sg_network_ws_moves writes one byte
 * per upstream (n at least the network's upstreams): 0 when its WebSocket
 * subscribers stay, else why they move to another node (cordoned,
 * lagging, drained by the operator; never while no other upstream with
 * ws= is fit; every one while the worker is shutting_down), named by
 * sg_ws_move_cause (static memory, "" for 0).
 */
SG_API int sg_network_ws_moves(const sg_network_t *net, int64_t now_ms,
    int shutting_down, unsigned char *out, size_t n) SG_NOEXCEPT;
SG_API sg_str_t sg_ws_move_cause(unsigned move) SG_NOEXCEPT;

/* A subscription connection on upstream i was upgraded, or ended: move is
 * what ended it (0: its client, its node or the idle timeout; else the
 * move of sg_network_ws_moves), with the bytes it carried each way.  For
 * the solgate_ws_* metrics and ws_max_connections.  Fail open. */
SG_API void sg_network_ws_opened(const sg_network_t *net, size_t i)
    SG_NOEXCEPT;
SG_API void sg_network_ws_closed(const sg_network_t *net, size_t i,
    unsigned move, uint64_t to_client, uint64_t from_client) SG_NOEXCEPT;

/*
 * Where an upstream's stream of WebSocket frames, piped to the client, is
 * between two frames: feed every byte read; sg_ws_frames_to_boundary is
 * how many more may be read at most before the next boundary (0: at one),
 * so the gateway can stop there and send its own close frame.
 */
typedef struct sg_ws_frames_s  sg_ws_frames_t;

/*
 * A client's WebSocket upgrade (RFC 6455 4.2.1), before it goes to a node:
 * each header's value (data NULL: absent) and whether it carries a body.
 * Returns 0 when it may go on, else the HTTP status to answer (400, or 426
 * for a version other than 13, with "Sec-WebSocket-Version: 13") with
 * *body the JSON-RPC error (static memory).
 */
typedef struct {
    sg_str_t     connection;
    sg_str_t     key;        /* Sec-WebSocket-Key */
    sg_str_t     version;    /* Sec-WebSocket-Version */
    int          has_body;
} sg_ws_handshake_t;

SG_API unsigned sg_ws_handshake_refusal(const sg_ws_handshake_t *handshake,
    sg_str_t *body) SG_NOEXCEPT;

SG_API int sg_ws_frames_new(sg_ws_frames_t **out) SG_NOEXCEPT;
SG_API void sg_ws_frames_free(sg_ws_frames_t *frames) SG_NOEXCEPT;
SG_API void sg_ws_frames_feed(sg_ws_frames_t *frames,
    const unsigned char *data, size_t n) SG_NOEXCEPT;
SG_API uint64_t sg_ws_frames_to_boundary(const sg_ws_frames_t *frames)
    SG_NOEXCEPT;
SG_API void sg_request_free(sg_request_t *req) SG_NOEXCEPT;

/* Answer locally or forward, against net (which must outlive req).
 * Fails closed. */
SG_API int sg_request_route(sg_request_t *req, const sg_network_t *net,
    const sg_selector_sources_t *sources, int64_t now_ms, sg_route_t *out)
    SG_NOEXCEPT;

/*
 * The upstream for the next attempt, never one tried before for this
 * request.  SG_NONE when none is left.  Call after sg_request_route said
 * forward.  Fails closed.
 */
SG_API int sg_request_pick(sg_request_t *req, int64_t now_ms, sg_pick_t *out)
    SG_NOEXCEPT;

/* How the current attempt ended, for failover and passive health. */
typedef struct {
    unsigned     http_status;    /* the upstream's, 0: no HTTP answer */
    int          timed_out;      /* no answer in time (status 0) */
    int          connected;      /* the connection was made: the request
                                  * may have reached the upstream */
    sg_str_t     retry_after;    /* a 429's Retry-After header, or empty */
    sg_str_t     answer;         /* the whole answer when it arrived with its
                                  * headers and is small, else empty: a read
                                  * answered -32005 fails over */
} sg_attempt_end_t;

typedef struct {
    int          failed;         /* the node failed, or lacks the data:
                                  * fail over (the next pick may be none) */
    int          retry;          /* it answered, but lacks the data: ask
                                  * another after retry_delay_ms */
    uint32_t     retry_delay_ms;
    uint32_t     ejected_ms;     /* out of rotation for this long now, 0: not
                                  * (max_fails reached, or a Retry-After) */
    sg_str_t     cause;          /* "ok", "transport", "timeout", "http_429",
                                  * "http_5xx", "node_behind", or for a
                                  * retry "missing_data", "skipped_slot":
                                  * static memory */
    int          write_not_retried;  /* answer with sg_request_write_answer:
                                  * a write that may have reached the node
                                  * is never sent to another */
    int          data_given_up;  /* retry_missing_data gave up: no upstream
                                  * left holds the data (log it) */
    int          not_node_fault; /* failed over, but not the node's failure:
                                  * it had not reached the call's
                                  * minContextSlot (-32016), which the client
                                  * chose */
} sg_attempt_report_t;

/* Records how the attempt of the last sg_request_pick ended.  Fails
 * open: without a report the upstream simply keeps its standing. */
SG_API int sg_request_report(sg_request_t *req, const sg_attempt_end_t *end,
    int64_t now_ms, sg_attempt_report_t *out) SG_NOEXCEPT;

/* The attempt reported as answered was cut short: its connection closed or
 * timed out before the answer's end, after its status went on (too late
 * to fail over).  It counts as a failed attempt for the upstream's health
 * (max_fails) and in its cut answers.  *ejected_ms: how long that took the
 * upstream out of rotation, 0: not.  Fails open. */
SG_API int sg_request_report_cut(sg_request_t *req, int64_t now_ms,
    uint32_t *ejected_ms) SG_NOEXCEPT;

/* The request is over (log phase): counts it by upstream, method and
 * outcome, and the answering upstream's latency.  rpc_error: the
 * upstream's answer looked like a JSON-RPC error (sg_looks_like_rpc_error
 * on its first bytes); error_code: its code (sg_rpc_error_code), which
 * tells a client's mistake (outcome client_error) from the upstream's
 * error.  Fails open. */
SG_API void sg_request_finish(sg_request_t *req, unsigned http_status,
    int rpc_error, int64_t error_code, int64_t duration_ms) SG_NOEXCEPT;
SG_API int sg_looks_like_rpc_error(const char *data, size_t len) SG_NOEXCEPT;

/* The code of the JSON-RPC error answer in data (whole, as its first
 * bytes usually are), or SG_RPC_ERROR_CODE_UNREAD when it has none there. */
#define SG_RPC_ERROR_CODE_UNREAD  INT64_MIN
SG_API int64_t sg_rpc_error_code(const char *data, size_t len) SG_NOEXCEPT;

/*
 * The message of a JSON-RPC error answer as an HTTP reason phrase
 * (printable ASCII, at most SG_MAX_REASON_PHRASE bytes), written to out
 * (not terminated); its length, 0 when the answer is not one error (of a
 * batch's answer, an array: its first error's).  For
 * the status line of Solgate's own error answers: clients such as
 * @solana/kit show only "HTTP error (429): <reason>".
 */
#define SG_MAX_REASON_PHRASE  160
SG_API size_t sg_error_reason(const char *answer, size_t len, char *out,
    size_t size) SG_NOEXCEPT;

/*
 * Fan-out policies (broadcast, consensus, hedge): once, after
 * sg_request_route said forward with fan_out set, the policy the request
 * falls under and the upstreams (indices, up to cap) of the attempts to
 * start at once; kind SG_FANOUT_NONE (n 0) for one attempt as usual.  Each
 * attempt's end is reported with its whole answer (or as cancelled); a
 * report may say the answer is decided (cancel the rest) or name an
 * attempt to start.  Once none is pending, sg_request_fanout_answer gives
 * the answer.
 */
typedef enum {
    SG_FANOUT_NONE = 0,
    SG_FANOUT_BROADCAST,
    SG_FANOUT_CONSENSUS,
    SG_FANOUT_HEDGE
} sg_fanout_kind_t;

typedef struct {
    sg_fanout_kind_t  kind;
    size_t            n;               /* targets written */
    uint32_t          hedge_after_ms;  /* hedge: when to ask another */
} sg_fanout_t;

typedef struct {
    int          decided;   /* cancel the attempts still running */
    int          launch;    /* start an attempt on `upstream` now */
    size_t       upstream;
    size_t       pending;   /* attempts not ended, the new one included */
} sg_fanout_step_t;

SG_API int sg_request_fanout(sg_request_t *req, int64_t now_ms,
    size_t *targets, size_t cap, sg_fanout_t *out) SG_NOEXCEPT;
SG_API int sg_request_fanout_report(sg_request_t *req, size_t upstream,
    const sg_attempt_end_t *end, int cancelled, int64_t now_ms,
    sg_fanout_step_t *out) SG_NOEXCEPT;
/* The hedge timer fired: SG_OK with the next hedge's upstream, SG_NONE
 * when none is left; *again: set the timer again (another may follow). */
SG_API int sg_request_hedge(sg_request_t *req, int64_t now_ms,
    size_t *upstream, int *again) SG_NOEXCEPT;
SG_API int sg_request_fanout_answer(sg_request_t *req, sg_route_t *out)
    SG_NOEXCEPT;

/* After a report with write_not_retried: HTTP 502 and one JSON-RPC error
 * per call saying so.  Fails closed. */
SG_API int sg_request_write_answer(sg_request_t *req, sg_route_t *out)
    SG_NOEXCEPT;

/* The answer when no attempt is left: SG_NONE with an upstream's
 * missing-data answer (HTTP 200) when one gave it; else SG_OK with one
 * JSON-RPC error per call sent, HTTP 502 (200 for a batch that also holds
 * a result answered here).  Fails closed. */
SG_API int sg_request_fail(sg_request_t *req, sg_route_t *out) SG_NOEXCEPT;

/* Attempts made so far (picks), for the log. */
SG_API size_t sg_request_attempts(const sg_request_t *req) SG_NOEXCEPT;

/* The upstream the request counts as answered by: SG_OK with its index
 * (the current attempt's; after a fan-out, the one whose answer was
 * taken), SG_NONE when none is (not routed yet, or Solgate's own answer,
 * such as a consensus dispute). */
SG_API int sg_request_upstream(const sg_request_t *req, size_t *upstream)
    SG_NOEXCEPT;

/* $solgate_method: "getSlot" for a single call, "batch", "" unreadable. */
SG_API sg_str_t sg_request_method(const sg_request_t *req) SG_NOEXCEPT;
/* $solgate_lane: "all", a group's name, or "" when it has none. */
SG_API sg_str_t sg_request_lane(const sg_request_t *req) SG_NOEXCEPT;

/* The JSON-RPC error body for an HTTP error status nginx answers itself
 * (413, 408, 405, other 4xx, 5xx), id null: static memory. */
SG_API sg_str_t sg_http_error_answer(unsigned http_status) SG_NOEXCEPT;

/*
 * A JSON-RPC POST's headers that say how to read its body, before it is
 * read: its first Content-Encoding (data NULL: none) and how many
 * Content-Encoding and Content-Type headers it has.  Returns 0 when the
 * body may be read, else the HTTP status to answer (415 a compressed body,
 * 400) with *body the JSON-RPC error (static memory).
 */
typedef struct {
    sg_str_t     content_encoding;
    size_t       content_encodings;
    size_t       content_types;
} sg_post_headers_t;

SG_API unsigned sg_post_refusal(const sg_post_headers_t *headers,
    sg_str_t *body) SG_NOEXCEPT;


/* The response path of a forwarded request */

typedef struct sg_response_s  sg_response_t;

typedef enum {
    SG_RESPONSE_REWRITE = 1,   /* collect the (small) body, then rewrite */
    SG_RESPONSE_HARVEST        /* feed the body while it streams through */
} sg_response_kind_e;

typedef struct {
    sg_str_t     body;           /* owned by the response */
    uint64_t     from;           /* the slot the upstream answered */
    uint64_t     to;             /* the slot Solgate answers */
} sg_correction_t;

/*
 * A batch sent upstream in part (sg_route_t body): the upstream's answer
 * is merged with the calls answered here as it streams.  sg_merge_new:
 * SG_OK with *out for such a request, SG_NONE otherwise.  sg_merge_feed:
 * the segments to send for one chunk of the upstream's answer, in order
 * (input: a range of the chunk; else `text`); last: the answer ended
 * (then the closing segments follow).  Valid until the next call.  The
 * answers to getSlot calls are corrected as a single getSlot's is.  The
 * request must outlive its merge.
 */
typedef struct sg_merge_s  sg_merge_t;

typedef struct {
    int          input;
    size_t       offset;         /* input: into the chunk */
    size_t       length;
    const char  *text;           /* !input */
} sg_merge_segment_t;

SG_API int sg_merge_new(const sg_request_t *req, sg_merge_t **out)
    SG_NOEXCEPT;
SG_API void sg_merge_free(sg_merge_t *merge) SG_NOEXCEPT;
/* Before the first feed: the upstream's answer was cut short, and the
 * calls it would have answered are told so (not that it left them out). */
SG_API void sg_merge_cut_short(sg_merge_t *merge) SG_NOEXCEPT;
SG_API int sg_merge_feed(sg_merge_t *merge, const char *data, size_t len,
    int last, int64_t now_ms, const sg_merge_segment_t **segments,
    size_t *n) SG_NOEXCEPT;

/*
 * What the response of the request's current attempt needs: SG_OK with
 * *out, SG_NONE when nothing (batches, other methods, an envelope while
 * another response of the upstream was harvested less than 20 ms ago).
 * Fails open.
 */
SG_API int sg_response_new(const sg_request_t *req, int64_t now_ms,
    sg_response_t **out) SG_NOEXCEPT;
SG_API void sg_response_free(sg_response_t *resp) SG_NOEXCEPT;
SG_API int sg_response_kind(const sg_response_t *resp) SG_NOEXCEPT;
/* HARVEST: SG_OK once nothing more is needed, SG_AGAIN for more.  Fails
 * open (SG_OK: stop feeding; the response itself is unaffected). */
SG_API int sg_response_feed(sg_response_t *resp, const char *data,
    size_t len, int64_t now_ms) SG_NOEXCEPT;
/* HARVEST: the body ended.  Fails open. */
SG_API void sg_response_finish(sg_response_t *resp, int64_t now_ms)
    SG_NOEXCEPT;
/* REWRITE: SG_OK with the corrected body, SG_NONE to send the body as it
 * is.  Fails open (SG_NONE). */
SG_API int sg_response_rewrite(sg_response_t *resp, const char *body,
    size_t len, int64_t now_ms, sg_correction_t *out) SG_NOEXCEPT;


/* The poller thread (one per worker process) */

typedef struct sg_poller_s  sg_poller_t;

/* level uses nginx's numbering (NGX_LOG_ERR 4 ... NGX_LOG_DEBUG 8); runs
 * on the poller thread. */
typedef void (*sg_log_pt)(void *user, int level, const char *line,
    size_t len);

/*
 * Fleet mode: solgate_shared_state's words (redis://[:PASSWORD@]HOST:PORT
 * [/DB] [prefix=NAME] [timeout=TIME]) and solgate_host_id (empty: the
 * host name), checked at configuration time.
 */
typedef struct sg_fleet_s  sg_fleet_t;

SG_API int sg_fleet_new(const sg_str_t *args, size_t n, sg_str_t host_id,
    sg_fleet_t **out, char *err, size_t err_size) SG_NOEXCEPT;
SG_API void sg_fleet_free(sg_fleet_t *fleet) SG_NOEXCEPT;
/* solgate_host_id's value: SG_OK, or SG_INVALID with the reason. */
SG_API int sg_fleet_check_host_id(sg_str_t host_id, char *err,
    size_t err_size) SG_NOEXCEPT;

/* Starts the thread over the networks (bound, outliving it); fleet: NULL
 * for a host on its own.  Fails closed: no thread is left behind. */
SG_API int sg_poller_start(sg_network_t *const *nets, size_t n, uint32_t pid,
    const sg_fleet_t *fleet, sg_log_pt log, void *user, sg_poller_t **out,
    char *err, size_t err_size) SG_NOEXCEPT;
/* Stops and joins the thread; no thread, fd or timer is left behind. */
SG_API void sg_poller_stop(sg_poller_t *poller) SG_NOEXCEPT;


/* Status: GET /solgate/state (JSON), /metrics (Prometheus text) and the
 * status page (HTML) */

/* One request to solgate_admin: the query arguments URL-decoded. */
typedef struct {
    sg_str_t     uri;            /* the path: .../state, .../cordon, ... */
    int          get;            /* GET or HEAD */
    int          post;
    sg_str_t     network;        /* ?network= */
    sg_str_t     upstream;       /* ?upstream= */
    sg_str_t     reason;         /* ?reason= */
    int          has_network;
    int          has_upstream;
    int          has_reason;
} sg_admin_request_t;

typedef struct {
    unsigned     http_status;
    sg_text_t    body;           /* JSON */
    sg_text_t    log;            /* a line for the error log; len 0: none */
    int          log_level;      /* its level, nginx's numbering (NOTICE;
                                    ERR when a change could not be saved) */
    sg_str_t     allow;          /* 405: the endpoint's methods, for Allow
                                    (static memory); else empty */
} sg_admin_answer_t;

/* Answers (and carries out) an admin request; free body and log with
 * sg_text_free.  A cordon, uncordon or drain of a network with `state` is
 * saved to its state file before the answer: one that cannot be saved is
 * in force but answered 500; one made on a zone a reload replaced
 * (sg_network_supersede) is answered 503.  Fails closed. */
SG_API int sg_admin_handle(sg_network_t *const *nets, size_t n,
    const sg_admin_request_t *req, int64_t now_ms, int64_t wall_ms,
    sg_admin_answer_t *out) SG_NOEXCEPT;

SG_API int sg_status_render_metrics(sg_network_t *const *nets, size_t n,
    int64_t now_ms, sg_text_t *out) SG_NOEXCEPT;

/* The HTML status page of solgate_status (self-contained: inline CSS, SVG
 * and script); free with sg_text_free.  Fails closed. */
SG_API int sg_status_render_page(sg_network_t *const *nets, size_t n,
    int64_t now_ms, int64_t wall_ms, sg_text_t *out) SG_NOEXCEPT;


/*
 * Cube Runner: getBlock from the region cache, the ledger, other regions
 * and long-term storage, with plans and limits.  One sg_blocks_t per
 * solgate_blocks block.
 */

typedef struct sg_blocks_s      sg_blocks_t;
typedef struct sg_block_call_s  sg_block_call_t;
typedef struct sg_capture_s     sg_capture_t;

/*
 * At configuration time: new, then one call per directive as nginx reads
 * it (each checks its words and refuses with the message), then check
 * when the block ends, and attach once the http block is read.  Fails
 * closed.
 */
SG_API int sg_blocks_new(sg_blocks_t **out) SG_NOEXCEPT;
SG_API void sg_blocks_free(sg_blocks_t *blocks) SG_NOEXCEPT;
/* region NAME */
SG_API int sg_blocks_set_region(sg_blocks_t *blocks, sg_str_t name,
    char *err, size_t err_size) SG_NOEXCEPT;
/* cache PATH [max_size=SIZE]: the absolute path, the size in bytes (0:
 * no limit) */
SG_API int sg_blocks_set_cache(sg_blocks_t *blocks, sg_str_t dir,
    uint64_t max_size, char *err, size_t err_size) SG_NOEXCEPT;
/* state PATH: the absolute path */
SG_API int sg_blocks_set_state(sg_blocks_t *blocks, sg_str_t dir,
    char *err, size_t err_size) SG_NOEXCEPT;
/* keyless_plan NAME: calls without an API key are served on that plan,
 * each client address a key of its own */
SG_API int sg_blocks_set_keyless_plan(sg_blocks_t *blocks, sg_str_t name,
    char *err, size_t err_size) SG_NOEXCEPT;
/* cache_lock_timeout TIME: how long a miss waits for another request's
 * fetch of the same block (default 5s; 0: never) */
SG_API int sg_blocks_set_cache_lock_timeout(sg_blocks_t *blocks,
    sg_str_t time, char *err, size_t err_size) SG_NOEXCEPT;
/* peer_token TOKEN: what regions send each other as X-Solgate-Peer */
SG_API int sg_blocks_set_peer_token(sg_blocks_t *blocks, sg_str_t token,
    char *err, size_t err_size) SG_NOEXCEPT;
/* peer NAME URL [copy=on|off]: args after the directive's name; *info
 * describes the peer for proxy_pass (strings owned by blocks). */
SG_API int sg_blocks_add_peer(sg_blocks_t *blocks, const sg_str_t *args,
    size_t nargs, sg_upstream_info_t *info, char *err, size_t err_size)
    SG_NOEXCEPT;
/* long_term_storage URL (once per URL) */
SG_API int sg_blocks_add_long_term(sg_blocks_t *blocks, sg_str_t url,
    char *err, size_t err_size) SG_NOEXCEPT;
/* The host[:port] of long_term_storage URL i as written (configuration
 * order; "" past the end), valid until the next call on the block: for
 * nginx to tell whether it names an upstream {} block. */
SG_API sg_str_t sg_blocks_long_term_authority(const sg_blocks_t *blocks,
    size_t i) SG_NOEXCEPT;
/* Before sg_blocks_attach, once nginx knows that long_term_storage URL i
 * (or peer `peer`, in configuration order) names an upstream {} block:
 * the poller reaches the block's servers, each a long-term endpoint of its
 * own in URL i's place (backups last, servers down left out; call from the
 * last URL to the first), a peer its first server up.  SG_INVALID, with
 * the reason, when no server can be reached. */
SG_API int sg_blocks_long_term_through_block(sg_blocks_t *blocks, size_t i,
    const sg_block_server_t *servers, size_t n, char *err, size_t err_size)
    SG_NOEXCEPT;
SG_API int sg_blocks_peer_through_block(sg_blocks_t *blocks, size_t peer,
    const sg_block_server_t *servers, size_t n, char *err, size_t err_size)
    SG_NOEXCEPT;
/* plan_define NAME tier=... getblock_rate=... ...: args after the name */
SG_API int sg_blocks_define_plan(sg_blocks_t *blocks, const sg_str_t *args,
    size_t nargs, char *err, size_t err_size) SG_NOEXCEPT;
/* What only the whole block can tell (a directive missing; api_key and plan
 * are nginx variables the module holds, so it says whether they were
 * given): SG_INVALID with `needs "..."`, to follow `solgate_blocks
 * "NETWORK" `. */
SG_API int sg_blocks_check(const sg_blocks_t *blocks, int has_api_key,
    int has_plan, char *err, size_t err_size) SG_NOEXCEPT;
/* Serves net (which must outlive blocks); no directive is taken after. */
SG_API int sg_blocks_attach(sg_blocks_t *blocks, sg_network_t *net,
    char *err, size_t err_size) SG_NOEXCEPT;

/* Bytes of the zone (counters, keys, one queue per archive plan); 0
 * before attach. */
SG_API size_t sg_blocks_shared_size(const sg_blocks_t *blocks) SG_NOEXCEPT;
/* As sg_network_bind.  Fails closed. */
SG_API int sg_blocks_bind(sg_blocks_t *blocks, void *shared, int fresh,
    char *err, size_t err_size) SG_NOEXCEPT;
/* In each process after fork: opens the cache and its index; reconcile
 * in the first worker only.  Fails open (getBlock goes on without the
 * cache; the message says why). */
SG_API int sg_blocks_open(sg_blocks_t *blocks, int reconcile, char *err,
    size_t err_size) SG_NOEXCEPT;

/* What sg_blocks_open found, for the log (the texts live until the next
 * open or close). */
typedef struct {
    int          reconciled;        /* this process reconciled the cache */
    uint64_t     items_removed;     /* files no entry describes (or not as
                                     * described), stray directories */
    uint64_t     entries_dropped;   /* file missing, or not the file */
    uint64_t     entries_kept;
    sg_str_t     index_damage;      /* the unreadable index's error: it was
                                     * moved aside and the cache emptied;
                                     * empty: it was read */
    sg_str_t     ledger_damage;     /* the same for the key ledger: moved
                                     * aside, started empty */
} sg_blocks_opening_t;

SG_API void sg_blocks_opening(const sg_blocks_t *blocks,
    sg_blocks_opening_t *out) SG_NOEXCEPT;
SG_API void sg_blocks_close(sg_blocks_t *blocks) SG_NOEXCEPT;

typedef enum {
    SG_BLOCKS_PASS = 0,    /* not Cube Runner's: route as usual */
    SG_BLOCKS_ANSWER,      /* answer with http_status, retry_after, body */
    SG_BLOCKS_CACHE,       /* serve the cached file, id spliced in */
    SG_BLOCKS_LEDGER,      /* forward to the network's upstreams */
    SG_BLOCKS_PEER,        /* forward to another region's gateway */
    SG_BLOCKS_WAIT         /* another request fetches the block: call
                              sg_blocks_recheck in wait_ms */
} sg_blocks_action_e;

typedef struct {
    int                 action;        /* sg_blocks_action_e */
    unsigned            http_status;
    unsigned            retry_after;   /* seconds; 0: no Retry-After */
    sg_str_t            body;          /* ANSWER: the answer; LEDGER, PEER:
                                          the request to send instead of
                                          the client's (empty: its own) */
    sg_str_t            path;          /* CACHE: NUL-terminated */
    uint64_t            size;          /* CACHE: file size */
    uint64_t            file_id;       /* CACHE: its inode (ngx_file_uniq) */
    uint64_t            id_offset;     /* CACHE: the id inside the file */
    uint64_t            id_length;
    sg_str_t            id;            /* CACHE: the client's id */
    size_t              peer;          /* PEER: index in configuration order */
    uint64_t            wait_ms;       /* WAIT: when to look again */
} sg_blocks_decision_t;

/*
 * Decides for a parsed request.  api_key and plan are the values of the
 * configured variables; peer_token the X-Solgate-Peer header ("" when
 * absent); client the client's address (the key of a call without one,
 * on keyless_plan).  may_wait: the caller can wait for another request's
 * fetch of the block (WAIT); else it is never told to.  On SG_OK, *call
 * is set unless the action is PASS; strings in *out are owned by *call.
 * Fails closed.
 */
SG_API int sg_blocks_decide(sg_blocks_t *blocks, const sg_request_t *req,
    sg_str_t api_key, sg_str_t plan, sg_str_t peer_token, sg_str_t client,
    int may_wait, int64_t now_ms, int64_t wall_ms, sg_block_call_t **call,
    sg_blocks_decision_t *out) SG_NOEXCEPT;
/* After a WAIT: CACHE once the block is stored, WAIT again while the other
 * fetch goes on (at most cache_lock_timeout), else the next source.
 * Fails closed. */
SG_API int sg_blocks_recheck(sg_blocks_t *blocks, sg_block_call_t *call,
    int64_t now_ms, sg_blocks_decision_t *out) SG_NOEXCEPT;
/* The current PEER attempt (or the cached file) failed: the next source.
 * Fails closed. */
SG_API int sg_blocks_next(sg_blocks_t *blocks, sg_block_call_t *call,
    int64_t now_ms, sg_blocks_decision_t *out) SG_NOEXCEPT;
/* The current attempt's source answered the call.  Fails open. */
SG_API void sg_blocks_served(sg_blocks_t *blocks, sg_block_call_t *call,
    int64_t wall_ms) SG_NOEXCEPT;
SG_API void sg_block_call_free(sg_block_call_t *call) SG_NOEXCEPT;

/*
 * Copying the answer of the call's current attempt into the cache while it
 * streams: SG_OK with *out, SG_NONE when it is not to be cached (among
 * others an answer sent with a Content-Encoding).  Fails open.
 */
SG_API int sg_capture_start(sg_blocks_t *blocks, sg_block_call_t *call,
    int content_encoded, int64_t now_ms, sg_capture_t **out) SG_NOEXCEPT;
/* SG_OK, or SG_NONE once the capture gave up (free it). */
SG_API int sg_capture_write(sg_capture_t *capture, const char *data,
    size_t len) SG_NOEXCEPT;
/*
 * The answer arrived whole: it is checked and stored on the poller thread
 * (fsync, rename, index), never on nginx's event loop.  Takes the capture:
 * do not free it after this.
 */
SG_API void sg_capture_commit(sg_capture_t *capture, int64_t wall_ms)
    SG_NOEXCEPT;
/* Abandons a capture (a response cut short). */
SG_API void sg_capture_free(sg_capture_t *capture) SG_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SOLGATE_SOLGATE_H */
