/*
 * Solgate: the structures the module's files share, and their prototypes
 * grouped by the file that defines them.
 *
 * The module translates between nginx and libcore (solgate.h): it reads
 * directives, requests and responses, hands them to libcore, and carries
 * out what libcore decided.  Decisions, limits, defaults and the answers
 * Solgate writes are libcore's.
 */

#ifndef NGX_HTTP_SOLGATE_MODULE_H
#define NGX_HTTP_SOLGATE_MODULE_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <solgate/solgate.h>


/* Room for a message from libcore about a directive. */
#define NGX_HTTP_SOLGATE_ERR_SIZE  512


/* Where a directive or block was written, for errors found after it. */
typedef struct {
    ngx_str_t                    file;
    ngx_uint_t                   line;
} ngx_http_solgate_conf_at_t;


/* ws_idle_timeout's default: a subscription may go quiet for long */
#define NGX_HTTP_SOLGATE_WS_IDLE_TIMEOUT  3600000


/* An error answer longer than this is never judged whole (-32005 is ~100) */
#define NGX_HTTP_SOLGATE_WHOLE_ANSWER_MAX  4096


/*
 * Where solgate_dispatch sends an attempt: the upstream {} block its URL
 * names, or its address; `unfit` says why neither, if it cannot.
 */
typedef struct {
    ngx_http_upstream_srv_conf_t  *block;
    ngx_http_upstream_resolved_t  *address;
    const char                    *unfit;
} ngx_http_solgate_target_t;


/*
 * What proxy_pass needs of an upstream (a node) or of another region's
 * gateway.  A node that is one server of an upstream {} block is pinned to
 * it by solgate_balancer: `peer` is that server's first address in the
 * block's round-robin list (its primary list, or its backup list).
 */
typedef struct {
    ngx_str_t                      id;
    ngx_str_t                      url;       /* with a path */
    ngx_str_t                      host;      /* the Host header to send */
    ngx_str_t                      authority; /* an upstream {} or address */
    ngx_str_t                      ws_url;    /* ws= for proxy_pass, or "" */
    ngx_str_t                      ws_host;
    ngx_str_t                      ws_authority;
    ngx_http_solgate_conf_at_t     at;
    ngx_http_upstream_srv_conf_t  *block;     /* pinned in it; else NULL */
    ngx_uint_t                     peer;
    unsigned                       backup_peer:1;
    unsigned                       by_name:1; /* its host must be resolved */
    unsigned                       ws_by_name:1;  /* ... and its ws= host */
    ngx_http_solgate_target_t      target;    /* for solgate_dispatch */
    ngx_http_solgate_target_t      ws_target;
} ngx_http_solgate_upstream_t;


/*
 * Slot-tracking settings.  Unset values (NGX_CONF_UNSET*) take the value of
 * solgate_network_defaults, then libcore's default; an explicit "off" or 0
 * is a value and is kept.
 */
/* broadcast, consensus, hedge: their words, checked, handed to libcore */
#define NGX_HTTP_SOLGATE_POLICIES  3
#define NGX_HTTP_SOLGATE_CONSENSUS  1   /* its place in policies[] */

typedef struct {
    sg_str_t                    *args;      /* NULL: not given */
    ngx_uint_t                   n;
    ngx_http_solgate_conf_at_t   at;        /* the directive's file:line */
    unsigned                     warned:1;  /* its warning said, once for
                                               all the networks it is of */
} ngx_http_solgate_policy_args_t;

typedef struct {
    ngx_msec_t                   debounce;
    ngx_int_t                    max_finalized_slot_lag;
    ngx_flag_t                   enforce_block_availability;
    ngx_int_t                    max_slot_lag;
    ngx_flag_t                   use_upstream_from_client;
    ngx_flag_t                   retry_missing_data;
    ngx_uint_t                   retry_attempts;
    ngx_msec_t                   retry_delay;
    ngx_int_t                    max_batch_size;
    ngx_msec_t                   ws_idle_timeout;
    ngx_int_t                    ws_max_connections;
    ngx_http_solgate_policy_args_t  policies[NGX_HTTP_SOLGATE_POLICIES];
} ngx_http_solgate_settings_t;


typedef struct ngx_http_solgate_blocks_s  ngx_http_solgate_blocks_t;

/* A solgate_network block. */
typedef struct {
    ngx_str_t                    name;
    sg_network_t                *core;      /* built as the block is read */
    ngx_str_t                    state_dir; /* state PATH, or empty */
    ngx_array_t                  upstreams; /* ngx_http_solgate_upstream_t */
    ngx_http_solgate_settings_t  settings;
    ngx_shm_zone_t              *shm_zone;
    ngx_http_solgate_blocks_t   *blocks;    /* its solgate_blocks, if any */
    ngx_http_solgate_conf_at_t   at;
    ngx_http_solgate_conf_at_t   default_at; /* use_upstream_default's */
    u_char                      *ws_moves;  /* a worker's, per upstream */
} ngx_http_solgate_network_t;


/* A solgate_blocks block: Cube Runner for one network. */
struct ngx_http_solgate_blocks_s {
    ngx_str_t                    network_name;
    ngx_http_solgate_network_t  *network;
    ngx_str_t                    cache_dir;   /* made by the master */
    ngx_str_t                    state_dir;
    ngx_str_t                    peer_token;  /* $solgate_peer_token */
    ngx_http_complex_value_t    *api_key;
    ngx_http_complex_value_t    *plan;
    ngx_array_t                  peers;     /* ngx_http_solgate_upstream_t */
    ngx_uint_t                   long_terms; /* long_term_storage URLs */
    sg_blocks_t                 *core;
    ngx_shm_zone_t              *shm_zone;
    ngx_http_solgate_conf_at_t   at;
};


/*
 * A solgate_pass (or solgate_health) naming a network; resolved once the
 * http block is read.
 */
typedef struct {
    const char                  *directive;
    ngx_str_t                    name;
    ngx_http_solgate_network_t **target;
    ngx_http_core_srv_conf_t    *server;    /* its server, for @solgate_retry */
    ngx_http_core_loc_conf_t    *location;  /* its location, for resolver */
    ngx_http_solgate_conf_at_t   at;
    unsigned                     health:1;  /* needs no proxying */
} ngx_http_solgate_pass_ref_t;


typedef struct {
    ngx_array_t                  networks;  /* ngx_http_solgate_network_t * */
    ngx_array_t                  blocks;    /* ngx_http_solgate_blocks_t * */
    ngx_array_t                  cores;     /* sg_network_t *, same order */
    ngx_array_t                  pass_refs; /* ngx_http_solgate_pass_ref_t */
    ngx_array_t                  balanced;  /* upstream {} blocks with
                                               solgate_balancer, uscf * */
    ngx_array_t                  dispatchers; /* ... with solgate_dispatch */
    ngx_http_solgate_settings_t  defaults;  /* solgate_network_defaults */
    sg_str_t                    *shared_state; /* its words, or NULL */
    ngx_uint_t                   shared_state_n;
    ngx_str_t                    host_id;   /* solgate_host_id */
    ngx_array_t                  notices;   /* ngx_str_t, for the log */
    sg_fleet_t                  *fleet;     /* built from the two */
    unsigned                     defaults_set:1;
} ngx_http_solgate_main_conf_t;


typedef struct {
    ngx_str_t                    pass_name;
    ngx_http_solgate_network_t  *network;   /* NULL: not a solgate location */
    ngx_str_t                    health_name;
    ngx_http_solgate_network_t  *health;    /* solgate_health's network */
    ngx_flag_t                   cors;      /* solgate_cors */
    unsigned                     dispatched:1; /* proxies to solgate_dispatch */
} ngx_http_solgate_loc_conf_t;


/*
 * The headers that may name a request's use-upstream selector, in lower
 * case for ngx_http_solgate_find_in_list: the first names of each list of
 * headers the access phase looks for, kept in ctx->selectors.
 */
#define NGX_HTTP_SOLGATE_SELECTORS                                            \
    ngx_string("x-solgate-use-upstream"), ngx_string("x-erpc-use-upstream")


/*
 * A WebSocket attempt's Upgrade and Connection values: $solgate_upgrade
 * and $solgate_connection (solgate_proxy.conf), or what the
 * solgate_dispatch block adds.
 */
#define NGX_HTTP_SOLGATE_UPGRADE             "websocket"
#define NGX_HTTP_SOLGATE_CONNECTION_UPGRADE  "upgrade"


/*
 * What those headers say, found with the others the access phase reads
 * (one pass): a batch's pieces take the main request's.
 */
typedef struct {
    ngx_table_elt_t             *header[2];  /* the first of each name */
    u_char                       twice[2];   /* ... and the name again */
} ngx_http_solgate_selectors_t;


typedef struct ngx_http_solgate_fanout_s  ngx_http_solgate_fanout_t;
typedef struct ngx_http_solgate_attempt_s  ngx_http_solgate_attempt_t;

/*
 * Per-request state.  It must survive the internal redirect to the retry
 * location, which clears r->ctx, so it is found again through its pool
 * cleanup (see ngx_http_solgate_get_ctx).  The attempts themselves (which
 * upstreams were tried) are kept by libcore in the request.
 */
typedef struct ngx_http_solgate_pieces_s  ngx_http_solgate_pieces_t;
typedef struct ngx_http_solgate_ws_s  ngx_http_solgate_ws_t;

typedef struct {
    ngx_http_request_t          *owner;     /* the request it belongs to */
    ngx_http_solgate_network_t  *network;
    sg_request_t                *rpc;
    ngx_http_solgate_upstream_t *upstream;  /* the current attempt's */
    ngx_int_t                    status;    /* returned on re-entry */
    ngx_str_t                    last_cause; /* of the last attempt's end */
    ngx_msec_t                   retry_delay; /* before the next attempt */

    sg_response_t               *response;  /* getSlot rewrite or harvest */
    sg_merge_t                  *merge;     /* a batch sent in part */
    ngx_chain_t                 *held;      /* getSlot answer being read:
                                               held_link, or NULL */
    ngx_chain_t                  held_link;
    ngx_buf_t                    held_buf;  /* its memory taken as it comes */
    ngx_chain_t                 *batch_out; /* merged, its header held */
    off_t                        batch_left; /* upstream bytes to come */

    ngx_http_solgate_fanout_t   *fanout;    /* subrequests under way */
    ngx_http_solgate_attempt_t  *attempt;   /* a subrequest's: which one */
    ngx_http_solgate_pieces_t   *pieces;    /* a batch going call by call */
    ngx_str_t                    piece;     /* a piece's: its body */
    ngx_event_t                  retry_timer; /* a piece's retry delay, or
                                                 a getBlock waiting for
                                                 another's fetch */
    ngx_msec_t                   piece_start;
    ngx_msec_t                   piece_end;   /* its answer's last buffer */
    off_t                        piece_bytes; /* of its answer, passed on */

    sg_block_call_t             *block_call;     /* Cube Runner's call */
    sg_capture_t                *capture;        /* copy into the cache */
    ngx_http_solgate_ws_t       *ws;             /* an upgraded connection */
    ngx_str_t                    client_uri;     /* solgate_dispatch sends
                                                    "/": the client's */
    ngx_str_t                    client_args;
    ngx_http_solgate_selectors_t selectors;
    int64_t                      rpc_error_code; /* of rpc_error's answer */

    unsigned                     answered:1;     /* we wrote the response */
    unsigned                     data_retry:1;   /* the last one lacked data */
    unsigned                     client_slot:1;  /* the last one had not
                                                    reached minContextSlot */
    unsigned                     batch_split:1;  /* part of it goes upstream */
    unsigned                     batch_held:1;   /* ... its header held */
    unsigned                     batch_merged:1; /* ... the answer all read */
    unsigned                     peer_attempt:1; /* upstream is a region */
    unsigned                     block_served:1;
    unsigned                     rewrite_error:1;
    unsigned                     rewrite_sent:1;
    unsigned                     harvest_done:1;
    unsigned                     reported:1;     /* the attempt's end */
    unsigned                     cut_reported:1; /* ... came short of it */
    unsigned                     body_seen:1;    /* the upstream's first bytes */
    unsigned                     rpc_error:1;    /* ... were a JSON-RPC error */
    unsigned                     is_piece:1;     /* a subrequest for a piece */
    unsigned                     run:1;          /* ... that is a run */
    unsigned                     started:1;      /* ... routed */
    unsigned                     websocket:1;    /* an upgrade request */
    unsigned                     client_uri_kept:1; /* solgate_dispatch's */
    unsigned                     client_unparsed_uri:1;
    unsigned                     cors_origin:1;  /* a browser's call */
} ngx_http_solgate_ctx_t;


/* The selector's headers, the first two names of a pass over the request's
 * (NGX_HTTP_SOLGATE_SELECTORS): kept for routing. */
static ngx_inline void
ngx_http_solgate_keep_selectors(ngx_http_solgate_ctx_t *ctx,
    ngx_table_elt_t **found, ngx_uint_t *count)
{
    ngx_uint_t  k;

    for (k = 0; k < 2; k++) {
        ctx->selectors.header[k] = found[k];
        ctx->selectors.twice[k] = count[k] > 1;
    }
}


/*
 * A shared memory zone of the module: libcore's table for a network or a
 * solgate_blocks, bound to the zone (kept across reloads) by `bind`.
 */
typedef ngx_int_t (*ngx_http_solgate_zone_bind_pt)(void *owner, void *shared,
    ngx_uint_t fresh, ngx_log_t *log, char *err, size_t err_size);
/* A reload replaces the zone: told the old zone's table, before the bind */
typedef void (*ngx_http_solgate_zone_supersede_pt)(void *old_shared);

typedef struct {
    const char                    *block;   /* "solgate_network", for errors */
    ngx_str_t                      name;    /* the network's name */
    ngx_http_solgate_conf_at_t     at;      /* where the block is */
    void                          *owner;
    size_t                         shared_size;
    ngx_http_solgate_zone_bind_pt  bind;
    ngx_http_solgate_zone_supersede_pt  supersede;  /* or NULL */
    const char                    *afresh;  /* what a reload that cannot
                                               keep the zone loses, and what
                                               comes back, for the log */
} ngx_http_solgate_zone_t;


extern ngx_module_t  ngx_http_solgate_module;


/* ngx_http_solgate_conf.c */
ngx_int_t ngx_http_solgate_conf_notice(ngx_conf_t *cf, const char *fmt,
    ...);
char *ngx_http_solgate_conf_block(ngx_conf_t *cf, ngx_command_t *cmds,
    const char *block, void *conf);
char *ngx_http_solgate_conf_failed(ngx_conf_t *cf, int rc, const char *err);
sg_str_t ngx_http_solgate_sg_str(ngx_str_t *s);
char *ngx_http_solgate_conf_args(ngx_conf_t *cf, ngx_uint_t first,
    sg_str_t **args, ngx_uint_t *n);
void ngx_http_solgate_conf_here(ngx_conf_t *cf,
    ngx_http_solgate_conf_at_t *at);
ngx_int_t ngx_http_solgate_copy_info(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, sg_upstream_info_t *info);

/* ngx_http_solgate_zone.c */
ngx_shm_zone_t *ngx_http_solgate_zone_add(ngx_conf_t *cf, const char *prefix,
    size_t size, ngx_http_solgate_zone_t *zone);

/* ngx_http_solgate_network.c */
char *ngx_http_solgate_network_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_solgate_defaults_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
void ngx_http_solgate_init_settings(ngx_http_solgate_settings_t *settings);
ngx_http_solgate_network_t *ngx_http_solgate_find_network(
    ngx_http_solgate_main_conf_t *smcf, ngx_str_t *name);
ngx_int_t ngx_http_solgate_build_cores(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);
ngx_int_t ngx_http_solgate_reach(ngx_conf_t *cf, ngx_str_t *authority,
    ngx_http_solgate_target_t *target);
ngx_http_upstream_srv_conf_t *ngx_http_solgate_find_block(ngx_conf_t *cf,
    ngx_str_t *authority);
ngx_uint_t ngx_http_solgate_block_listed(ngx_array_t *blocks,
    ngx_http_upstream_srv_conf_t *uscf);
sg_block_server_t *ngx_http_solgate_block_servers(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *uscf);

/* ngx_http_solgate_balancer.c */
char *ngx_http_solgate_balancer(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* ngx_http_solgate_dispatch.c */
char *ngx_http_solgate_dispatch(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_int_t ngx_http_solgate_dispatch_check(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);
ngx_uint_t ngx_http_solgate_is_dispatch_block(
    ngx_http_upstream_srv_conf_t *uscf);
ngx_int_t ngx_http_solgate_dispatch_uri_handler(ngx_http_request_t *r);
void ngx_http_solgate_dispatch_restore_uri(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);

/* ngx_http_solgate_blocks.c */
char *ngx_http_solgate_blocks_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_int_t ngx_http_solgate_blocks_build(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);
ngx_int_t ngx_http_solgate_blocks_start(ngx_cycle_t *cycle);
void ngx_http_solgate_blocks_stop(ngx_cycle_t *cycle);

/* ngx_http_solgate_ctx.c */
ngx_http_solgate_ctx_t *ngx_http_solgate_get_ctx(ngx_http_request_t *r);
ngx_http_solgate_ctx_t *ngx_http_solgate_create_ctx(ngx_http_request_t *r);
void ngx_http_solgate_sleep(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_event_handler_pt wake, ngx_msec_t ms);

/* ngx_http_solgate_variables.c */
ngx_int_t ngx_http_solgate_add_variables(ngx_conf_t *cf);

/* ngx_http_solgate_request.c */
ngx_int_t ngx_http_solgate_body_bytes(ngx_http_request_t *r, u_char **data,
    size_t *len);
ngx_table_elt_t *ngx_http_solgate_find_header(ngx_http_request_t *r,
    ngx_str_t *name);
void ngx_http_solgate_find_in_list(ngx_list_t *headers, ngx_str_t *names,
    ngx_table_elt_t **found, ngx_uint_t *count, ngx_uint_t n);
ngx_int_t ngx_http_solgate_json_content_type(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_query_arg(ngx_http_request_t *r, char *name,
    ngx_uint_t plus_is_space, ngx_str_t *value, ngx_uint_t *twice);
int64_t ngx_http_solgate_wall_ms(void);
ngx_int_t ngx_http_solgate_read_only(ngx_http_request_t *r);

/* ngx_http_solgate_cors.c */
ngx_int_t ngx_http_solgate_cors_preflight(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_uint_t ngx_http_solgate_cors_origin(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_cors_allow_origin(ngx_http_request_t *r);

/* ngx_http_solgate_send.c */
ngx_int_t ngx_http_solgate_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *content_type, u_char *body, size_t len);
ngx_int_t ngx_http_solgate_add_header(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *value);
ngx_int_t ngx_http_solgate_set_allow(ngx_http_request_t *r,
    ngx_str_t *methods);
ngx_int_t ngx_http_solgate_set_retry_after(ngx_http_request_t *r,
    ngx_uint_t seconds);
ngx_int_t ngx_http_solgate_send_json(ngx_http_request_t *r,
    ngx_uint_t status, u_char *body, size_t len);
ngx_int_t ngx_http_solgate_reason(ngx_http_request_t *r, ngx_uint_t status,
    u_char *body, size_t len);
ngx_int_t ngx_http_solgate_send_json_header(ngx_http_request_t *r,
    ngx_uint_t status, off_t length);
ngx_int_t ngx_http_solgate_refuse(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_uint_t status, sg_str_t body);
ngx_int_t ngx_http_solgate_send_text(ngx_http_request_t *r,
    ngx_uint_t status, ngx_str_t *content_type, sg_text_t *text);

/*
 * Solgate's lines name upstreams by id.  nginx's log context would append
 * the upstream's URL, whose path may hold a vendor key: hidden meanwhile.
 * So is its "while ..." (what the connection did last, "sending to
 * client" after a failed read as well): the line says what happened.
 */
#define ngx_http_solgate_log_by_id(level, r, ...)                           \
    do {                                                                    \
        ngx_http_upstream_t  *saved_ = (r)->upstream;                       \
        char                 *action_ = (r)->connection->log->action;       \
        (r)->upstream = NULL;                                               \
        (r)->connection->log->action = NULL;                                \
        ngx_log_error(level, (r)->connection->log, 0, __VA_ARGS__);         \
        (r)->upstream = saved_;                                             \
        (r)->connection->log->action = action_;                             \
    } while (0)

/* ngx_http_solgate_access.c */
ngx_int_t ngx_http_solgate_access_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_piece_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_log_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_report_attempt(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
void ngx_http_solgate_report_cut(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_http_upstream_state_t *ngx_http_solgate_last_state(ngx_http_request_t *r);
void ngx_http_solgate_resume(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_int_t rc);

/* ngx_http_solgate_blocks_serve.c */
ngx_int_t ngx_http_solgate_blocks_route(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_int_t ngx_http_solgate_blocks_retry(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_int_t ngx_http_solgate_blocks_header(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
void ngx_http_solgate_blocks_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);

/* ngx_http_solgate_filter.c */
ngx_int_t ngx_http_solgate_filter_init(ngx_conf_t *cf);
ngx_int_t ngx_http_solgate_next_header_filter(ngx_http_request_t *r);

/*
 * A subscription connection (an upgraded request).  Right after the
 * upstream switched protocols nginx pipes it (the request attached); then
 * Solgate takes both connections over and frees the request, whose memory
 * (three or four pool blocks, the buffers of both directions) would
 * otherwise be kept for the connection's life: a detached subscription
 * holds only this and what is still unsent.
 */
typedef struct {
    u_char                      *start;     /* ngx_alloc'd, or NULL */
    u_char                      *pos;
    u_char                      *last;
} ngx_http_solgate_ws_unsent_t;

struct ngx_http_solgate_ws_s {
    ngx_queue_t                  queue;
    ngx_http_request_t          *request;     /* while attached */
    ngx_pool_cleanup_t          *cleanup;     /* ... on its pool */
    ngx_connection_t            *client;      /* once detached */
    ngx_connection_t            *node;
    ngx_http_solgate_network_t  *network;
    ngx_uint_t                   upstream;    /* its index in the network */
    sg_ws_frames_t              *frames;      /* of the node's stream */
    ngx_recv_pt                  recv;        /* the node connection's */
    ngx_recv_pt                  client_recv; /* the client connection's */
    ngx_event_t                  detach;      /* posted at the upgrade */
    ngx_uint_t                   detach_tries;
    ngx_msec_t                   idle_timeout;
    ngx_http_solgate_ws_unsent_t to_client;   /* read from the node */
    ngx_http_solgate_ws_unsent_t to_node;     /* read from the client */
    uint64_t                     to_client_bytes;
    uint64_t                     from_client_bytes;
    ngx_msec_t                   move_at;     /* 0: it stays */
    ngx_msec_t                   give_up_at;  /* draining: no frame's end */
    unsigned                     move:8;      /* why, sg_ws_move_cause */
    unsigned                     draining:1;  /* read up to a frame's end */
    unsigned                     closing:1;   /* its 1012 is queued */
    unsigned                     node_gone:1; /* takes no more bytes */
    unsigned                     detached:1;
    unsigned                     pinned:1;    /* kept with nginx's pipe */
    unsigned                     ended:1;     /* ... and ended by a move */
};

/* ngx_http_solgate_ws.c */
ngx_uint_t ngx_http_solgate_ws_requested(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_ws_refuse(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_int_t ngx_http_solgate_ws_switched(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
void ngx_http_solgate_ws_untrack(ngx_http_solgate_ws_t *ws, unsigned move);

/* ngx_http_solgate_ws_relay.c */
void ngx_http_solgate_ws_detach(ngx_event_t *ev);
void ngx_http_solgate_ws_drain(ngx_http_solgate_ws_t *ws, ngx_msec_t now);
ngx_int_t ngx_http_solgate_next_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in);

/* ngx_http_solgate_fanout.c */
#define NGX_HTTP_SOLGATE_MAX_FANOUT  SG_MAX_UPSTREAMS   /* broadcast to=all */
ngx_int_t ngx_http_solgate_fanout_start(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, const sg_fanout_t *plan, size_t *targets);
ngx_int_t ngx_http_solgate_fanout_continue(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_int_t ngx_http_solgate_fanout_header(ngx_http_request_t *sr,
    ngx_http_solgate_attempt_t *a);
ngx_int_t ngx_http_solgate_fanout_body(ngx_http_request_t *sr,
    ngx_http_solgate_attempt_t *a, ngx_chain_t *in);

/* ngx_http_solgate_pieces.c */
ngx_int_t ngx_http_solgate_pieces_start(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, size_t n);
void ngx_http_solgate_pieces_finish(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, int64_t duration_ms);

/* ngx_http_solgate_batch.c */
ngx_int_t ngx_http_solgate_replace_body(ngx_http_request_t *r,
    sg_str_t body);
ngx_int_t ngx_http_solgate_batch_header(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_int_t ngx_http_solgate_batch_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);

/* ngx_http_solgate_response.c */
ngx_int_t ngx_http_solgate_response_header(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
ngx_int_t ngx_http_solgate_response_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);

/* ngx_http_solgate_fleet.c */
char *ngx_http_solgate_shared_state(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_solgate_host_id(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_int_t ngx_http_solgate_fleet_build(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);

/* ngx_http_solgate_poller.c */
ngx_int_t ngx_http_solgate_poller_start(ngx_cycle_t *cycle);
ngx_int_t ngx_http_solgate_poller_reload(ngx_cycle_t *cycle);
void ngx_http_solgate_poller_stop(ngx_cycle_t *cycle);

/* ngx_http_solgate_module.c */
ngx_int_t ngx_http_solgate_add_pass_ref(ngx_conf_t *cf, const char *directive,
    ngx_str_t *name, ngx_http_solgate_network_t **target, ngx_uint_t health);

/* ngx_http_solgate_health.c */
char *ngx_http_solgate_health(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* ngx_http_solgate_admin.c */
char *ngx_http_solgate_admin(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_solgate_metrics(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_solgate_status(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* ngx_http_solgate_body.c */
ssize_t ngx_http_solgate_chain_copy(ngx_chain_t *in, u_char *dst,
    size_t size);
ngx_uint_t ngx_http_solgate_is_last(ngx_http_request_t *r, ngx_buf_t *b);

#endif /* NGX_HTTP_SOLGATE_MODULE_H */
