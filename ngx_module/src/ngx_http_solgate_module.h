/*
 * Solgate: structures shared by the module's files, and their prototypes
 * grouped by the file that defines them.
 */

#ifndef NGX_HTTP_SOLGATE_MODULE_H
#define NGX_HTTP_SOLGATE_MODULE_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <solgate/solgate.h>

#include "ngx_http_solgate_parse.h"


#define NGX_HTTP_SOLGATE_MAX_UPSTREAMS  256
#define NGX_HTTP_SOLGATE_DEFAULT_ZONE   (1024 * 1024)


typedef struct {
    ngx_str_t                    id;
    ngx_str_t                    url;       /* with a path, for proxy_pass */
    ngx_str_t                    host;      /* the Host header to send */
    ngx_str_t                    tags;      /* "k:v,k:v" as configured */
} ngx_http_solgate_upstream_t;


/* Lives in the network's shared memory zone, shared by all workers. */
typedef struct {
    ngx_atomic_t                 rr_turn;
} ngx_http_solgate_shctx_t;


typedef struct {
    ngx_str_t                    name;
    sg_network_conf_t            core;      /* cluster, commitment */
    ngx_array_t                  upstreams; /* ngx_http_solgate_upstream_t */
    ngx_shm_zone_t              *shm_zone;
    ngx_http_solgate_shctx_t    *sh;

    ngx_str_t                    conf_file; /* where it was defined */
    ngx_uint_t                   conf_line;
} ngx_http_solgate_network_t;


/* A solgate_pass naming a network; resolved once the http block is read. */
typedef struct {
    ngx_str_t                    name;
    ngx_http_solgate_network_t **target;
    ngx_str_t                    conf_file;
    ngx_uint_t                   conf_line;
} ngx_http_solgate_pass_ref_t;


typedef struct {
    ngx_array_t                  networks;  /* ngx_http_solgate_network_t * */
    ngx_array_t                  pass_refs; /* ngx_http_solgate_pass_ref_t */
} ngx_http_solgate_main_conf_t;


typedef struct {
    ngx_str_t                    pass_name;
    ngx_http_solgate_network_t  *network;   /* NULL: not a solgate location */
} ngx_http_solgate_loc_conf_t;


/*
 * Per-request state.  It must survive the internal redirect to the retry
 * location, which clears r->ctx, so it is found again through its pool
 * cleanup (see ngx_http_solgate_get_ctx).
 */
typedef struct {
    ngx_http_solgate_network_t  *network;
    sg_request_t                *rpc;
    u_char                      *tried;     /* one flag per upstream */
    ngx_http_solgate_upstream_t *upstream;  /* the current attempt's */
    ngx_uint_t                   attempts;
    ngx_int_t                    status;    /* returned on re-entry */

    unsigned                     answered:1;     /* we wrote the response */
    unsigned                     rewrite_error:1;
    unsigned                     rewrite_sent:1;
} ngx_http_solgate_ctx_t;


extern ngx_module_t  ngx_http_solgate_module;


/* ngx_http_solgate_module.c */
ngx_http_solgate_ctx_t *ngx_http_solgate_get_ctx(ngx_http_request_t *r);
ngx_http_solgate_ctx_t *ngx_http_solgate_create_ctx(ngx_http_request_t *r);

/* ngx_http_solgate_network.c */
char *ngx_http_solgate_network_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_http_solgate_network_t *ngx_http_solgate_find_network(
    ngx_http_solgate_main_conf_t *smcf, ngx_str_t *name);

/* ngx_http_solgate_access.c */
ngx_int_t ngx_http_solgate_access_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_solgate_send_json(ngx_http_request_t *r,
    ngx_uint_t status, u_char *body, size_t len);

/* ngx_http_solgate_filter.c */
ngx_int_t ngx_http_solgate_filter_init(ngx_conf_t *cf);

/* ngx_http_solgate_body.c */
ssize_t ngx_http_solgate_chain_copy(ngx_chain_t *in, u_char *dst,
    size_t size);

#endif /* NGX_HTTP_SOLGATE_MODULE_H */
