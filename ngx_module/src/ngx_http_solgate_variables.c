/*
 * The module's variables: $solgate_upstream_url, $solgate_upstream_host
 * and $solgate_upstream (the current attempt's upstream, for proxy_pass;
 * for a WebSocket the URL and Host of its ws=), $solgate_method and
 * $solgate_lane (from libcore's request), $solgate_peer_token
 * (X-Solgate-Peer when asking another region), and $solgate_upgrade and
 * $solgate_connection (the Upgrade and Connection headers to send: the
 * upgrade for a WebSocket, else none and keep-alive).  None is cacheable:
 * a retry picks another upstream.
 */

#include "ngx_http_solgate_module.h"


typedef struct {
    ngx_str_t                  name;
    ngx_http_get_variable_pt   get;
    uintptr_t                  data;
} ngx_http_solgate_var_t;


static ngx_int_t ngx_http_solgate_upstream_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_solgate_request_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_solgate_peer_token_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_solgate_upgrade_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static void ngx_http_solgate_set_value(ngx_http_variable_value_t *v,
    u_char *data, size_t len);


static ngx_http_solgate_var_t  ngx_http_solgate_vars[] = {

    { ngx_string("solgate_upstream_url"), ngx_http_solgate_upstream_variable,
      offsetof(ngx_http_solgate_upstream_t, url) },

    { ngx_string("solgate_upstream_host"), ngx_http_solgate_upstream_variable,
      offsetof(ngx_http_solgate_upstream_t, host) },

    { ngx_string("solgate_upstream"), ngx_http_solgate_upstream_variable,
      offsetof(ngx_http_solgate_upstream_t, id) },

    { ngx_string("solgate_method"), ngx_http_solgate_request_variable,
      (uintptr_t) sg_request_method },

    { ngx_string("solgate_lane"), ngx_http_solgate_request_variable,
      (uintptr_t) sg_request_lane },

    { ngx_string("solgate_peer_token"), ngx_http_solgate_peer_token_variable,
      0 },

    { ngx_string("solgate_upgrade"), ngx_http_solgate_upgrade_variable,
      (uintptr_t) NGX_HTTP_SOLGATE_UPGRADE },

    { ngx_string("solgate_connection"), ngx_http_solgate_upgrade_variable,
      (uintptr_t) NGX_HTTP_SOLGATE_CONNECTION_UPGRADE },

    { ngx_null_string, NULL, 0 }
};


ngx_int_t
ngx_http_solgate_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t     *var;
    ngx_http_solgate_var_t  *v;

    for (v = ngx_http_solgate_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, NGX_HTTP_VAR_NOCACHEABLE);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get;
        var->data = v->data;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_upstream_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    size_t                        i;
    ngx_str_t                    *field;
    ngx_http_solgate_ctx_t       *ctx;
    ngx_http_solgate_upstream_t  *upstream;

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    upstream = ctx->upstream;

    /* a fan-out's (hedge, consensus, broadcast) attempts are its
     * subrequests': the request itself counts as answered by the upstream
     * whose answer was taken.  Its ID only, for logs: the URL and host
     * are proxy_pass's, which must never see an upstream not picked for
     * the attempt at hand */
    if (upstream == NULL && data == offsetof(ngx_http_solgate_upstream_t, id)
        && ctx->rpc != NULL && ctx->network != NULL
        && sg_request_upstream(ctx->rpc, &i) == SG_OK
        && i < ctx->network->upstreams.nelts)
    {
        upstream = (ngx_http_solgate_upstream_t *) ctx->network->upstreams.elts
                   + i;
    }

    if (upstream == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    if (ctx->websocket) {
        if (data == offsetof(ngx_http_solgate_upstream_t, url)) {
            data = offsetof(ngx_http_solgate_upstream_t, ws_url);

        } else if (data == offsetof(ngx_http_solgate_upstream_t, host)) {
            data = offsetof(ngx_http_solgate_upstream_t, ws_host);
        }
    }

    field = (ngx_str_t *) ((u_char *) upstream + data);
    ngx_http_solgate_set_value(v, field->data, field->len);

    return NGX_OK;
}


/* data is the value for a WebSocket; other requests get "". */
static ngx_int_t
ngx_http_solgate_upgrade_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                  *value;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_solgate_get_ctx(r);
    value = (u_char *) data;

    if (ctx != NULL && ctx->websocket) {
        ngx_http_solgate_set_value(v, value, ngx_strlen(value));

    } else {
        ngx_http_solgate_set_value(v, (u_char *) "", 0);
    }

    return NGX_OK;
}


/* data is the libcore accessor; the string lives as long as the request. */
static ngx_int_t
ngx_http_solgate_request_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    sg_str_t                (*get)(const sg_request_t *req);
    sg_str_t                  value;
    ngx_http_solgate_ctx_t   *ctx;

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx == NULL || ctx->rpc == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    get = (sg_str_t (*)(const sg_request_t *)) data;
    value = get(ctx->rpc);
    ngx_http_solgate_set_value(v, (u_char *) value.data, value.len);

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_peer_token_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_solgate_ctx_t     *ctx;
    ngx_http_solgate_blocks_t  *b;

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx == NULL || !ctx->peer_attempt) {
        v->not_found = 1;
        return NGX_OK;
    }

    /* a block with peers always has a token (checked at configuration) */
    b = ctx->network->blocks;
    ngx_http_solgate_set_value(v, b->peer_token.data, b->peer_token.len);

    return NGX_OK;
}


static void
ngx_http_solgate_set_value(ngx_http_variable_value_t *v, u_char *data,
    size_t len)
{
    v->data = data;
    v->len = len;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
}
