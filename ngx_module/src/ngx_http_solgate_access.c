/*
 * The access phase: read the JSON-RPC body, let libcore decide, then
 * either answer locally or choose the upstream proxy_pass sends it to.
 *
 * Failover: solgate_proxy.conf sends 502/503/504 (and transport errors,
 * which proxy reports as 502/504) to a named location that runs this
 * handler again.  The context survives that redirect, so the next attempt
 * goes to an upstream not tried yet; when none is left the client gets one
 * JSON-RPC error.
 */

#include "ngx_http_solgate_module.h"


static void ngx_http_solgate_body_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_route(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_attempt(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_fail_all(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_answer(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_route_t *route);
static ngx_int_t ngx_http_solgate_reject_method(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_body_bytes(ngx_http_request_t *r,
    u_char **data, size_t *len);
static ngx_int_t ngx_http_solgate_selector(ngx_http_request_t *r,
    ngx_http_solgate_network_t *network, ngx_str_t *selector);
static ngx_uint_t ngx_http_solgate_last_status(ngx_http_request_t *r);


ngx_int_t
ngx_http_solgate_access_handler(ngx_http_request_t *r)
{
    ngx_int_t                     rc;
    ngx_http_solgate_ctx_t       *ctx;
    ngx_http_solgate_loc_conf_t  *slcf;

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (slcf->network == NULL || r != r->main) {
        return NGX_DECLINED;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    if (ctx != NULL) {
        /* phases re-run after the body was read */
        return ctx->status;
    }

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx != NULL && ctx->rpc != NULL) {
        /* back from the retry redirect: the last attempt failed */
        if (ctx->peer_attempt) {
            rc = ngx_http_solgate_blocks_retry(r, ctx);

            if (rc == NGX_DECLINED) {
                if (ctx->peer_attempt) {
                    return NGX_DECLINED;    /* the next region */
                }

                rc = NGX_HTTP_BAD_GATEWAY;  /* no source after a region */
            }

            ngx_http_finalize_request(r, rc);
            return NGX_DONE;
        }

        rc = ngx_http_solgate_attempt(r, ctx);

        if (rc == NGX_DECLINED) {
            return NGX_DECLINED;
        }

        ngx_http_finalize_request(r, rc);
        return NGX_DONE;
    }

    if (ctx == NULL) {
        ctx = ngx_http_solgate_create_ctx(r);
        if (ctx == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    ctx->network = slcf->network;

    if (!(r->method & NGX_HTTP_POST)) {
        ngx_http_finalize_request(r, ngx_http_solgate_reject_method(r, ctx));
        return NGX_DONE;
    }

    ngx_log_debug0(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate access handler: reading body");

    ctx->status = NGX_DONE;
    r->request_body_in_single_buf = 1;

    rc = ngx_http_read_client_request_body(r, ngx_http_solgate_body_handler);

    if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        return rc;
    }

    ngx_http_finalize_request(r, NGX_DONE);
    return NGX_DONE;
}


static void
ngx_http_solgate_body_handler(ngx_http_request_t *r)
{
    ngx_int_t                rc;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    rc = ngx_http_solgate_route(r, ctx);

    if (rc != NGX_DECLINED) {
        ngx_http_finalize_request(r, rc);
        return;
    }

    ctx->status = NGX_DECLINED;
    r->preserve_body = 1;
    r->write_event_handler = ngx_http_core_run_phases;
    ngx_http_core_run_phases(r);
}


/* NGX_DECLINED to forward, else what to finalize the request with */
static ngx_int_t
ngx_http_solgate_route(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    size_t       len;
    u_char      *data;
    sg_str_t     use;
    ngx_int_t    rc;
    ngx_str_t    selector;
    sg_route_t   route;

    if (ngx_http_solgate_body_bytes(r, &data, &len) != NGX_OK
        || ngx_http_solgate_selector(r, ctx->network, &selector) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    use.data = (char *) selector.data;
    use.len = selector.len;

    ctx->rpc = sg_request_parse((char *) data, len);

    if (ctx->rpc == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "solgate: could not parse the request (out of memory)");
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ctx->network->blocks != NULL) {
        rc = ngx_http_solgate_blocks_route(r, ctx);

        if (rc != NGX_DECLINED || ctx->peer_attempt) {
            return rc;                  /* answered, or to another region */
        }
    }

    if (sg_request_route(ctx->rpc, ctx->network->core, use,
                         (int64_t) ngx_current_msec, &route)
        != SG_OK)
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "solgate: could not route the request (out of memory)");
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (route.kind == SG_ROUTE_ANSWER) {
        ngx_log_debug0(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "solgate access handler: answered locally");
        return ngx_http_solgate_answer(r, ctx, &route);
    }

    return ngx_http_solgate_attempt(r, ctx);
}


static ngx_int_t
ngx_http_solgate_attempt(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    int                           all_cordoned, rc;
    size_t                        picked;
    ngx_http_solgate_network_t   *network;
    ngx_http_solgate_upstream_t  *upstreams;

    network = ctx->network;
    upstreams = network->upstreams.elts;

    if (ctx->tried == NULL) {
        ctx->tried = ngx_pcalloc(r->pool, network->upstreams.nelts);
        if (ctx->tried == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    rc = sg_network_pick(network->core, ctx->rpc, ctx->tried, &picked,
                         &all_cordoned);

    if (rc == SG_ERROR) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rc == SG_DECLINED) {
        return ngx_http_solgate_fail_all(r, ctx);
    }

    /* at most one line per worker every 10 s: it lasts a whole outage */
    if (all_cordoned && ngx_time() - network->all_cordoned_logged >= 10) {
        network->all_cordoned_logged = ngx_time();
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "solgate: every upstream of network \"%V\" is "
                      "cordoned, routing to all of them", &network->name);
    }

    if (ctx->upstream != NULL) {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "solgate: upstream \"%V\" failed (status %ui), "
                      "retrying on \"%V\"", &ctx->upstream->id,
                      ngx_http_solgate_last_status(r), &upstreams[picked].id);
    }

    ctx->tried[picked] = 1;
    ctx->upstream = &upstreams[picked];
    ctx->upstream_index = picked;
    ctx->attempts++;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate access handler: attempt %ui to \"%V\"",
                   ctx->attempts, &ctx->upstream->id);

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_solgate_fail_all(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    u_char      *p, msg[128];
    sg_route_t   route;

    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "solgate: all %ui upstream(s) of network \"%V\" failed, "
                  "last \"%V\" with status %ui", ctx->attempts,
                  &ctx->network->name, &ctx->upstream->id,
                  ngx_http_solgate_last_status(r));

    p = ngx_snprintf(msg, sizeof(msg),
                     "Internal error: no upstream could serve the request "
                     "(%ui tried)", ctx->attempts);

    if (sg_request_fail(ctx->rpc, NGX_HTTP_BAD_GATEWAY, -32603, (char *) msg,
                        p - msg, &route)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_answer(r, ctx, &route);
}


static ngx_int_t
ngx_http_solgate_answer(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    sg_route_t *route)
{
    ctx->answered = 1;

    return ngx_http_solgate_send_json(r, route->http_status,
                                      (u_char *) route->body.data,
                                      route->body.len);
}


static ngx_int_t
ngx_http_solgate_reject_method(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    size_t   len;
    u_char  *body;

    static const char  message[] =
        "Invalid request: JSON-RPC requests must be sent with POST";

    if (ngx_http_discard_request_body(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    body = ngx_pnalloc(r->pool, sizeof(message) + 64);
    if (body == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    len = sg_write_error((char *) body, sizeof(message) + 64, -32600,
                         message, sizeof(message) - 1);

    ctx->answered = 1;

    return ngx_http_solgate_send_json(r, NGX_HTTP_NOT_ALLOWED, body, len);
}


/* The headers of a JSON answer Solgate writes itself, sent. */
ngx_int_t
ngx_http_solgate_send_json_header(ngx_http_request_t *r, ngx_uint_t status,
    off_t length)
{
    r->headers_out.status = status;
    r->headers_out.content_length_n = length;
    ngx_str_set(&r->headers_out.content_type,
                "application/json; charset=utf-8");
    r->headers_out.content_type_len = sizeof("application/json") - 1;
    r->headers_out.content_type_lowcase = NULL;

    return ngx_http_send_header(r);
}


/* body points at memory that lives as long as the request */
ngx_int_t
ngx_http_solgate_send_json(ngx_http_request_t *r, ngx_uint_t status,
    u_char *body, size_t len)
{
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    rc = ngx_http_solgate_send_json_header(r, status, (off_t) len);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->pos = body;
    b->last = body + len;
    b->memory = 1;
    b->last_buf = 1;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/* The request body as one contiguous range, read back from a temp file
 * when nginx spilled it there. */
static ngx_int_t
ngx_http_solgate_body_bytes(ngx_http_request_t *r, u_char **data,
    size_t *len)
{
    off_t                      size;
    ssize_t                    n;
    ngx_buf_t                 *b;
    ngx_chain_t               *cl;
    ngx_http_request_body_t   *rb;

    rb = r->request_body;

    if (rb == NULL || rb->bufs == NULL) {
        *data = (u_char *) "";
        *len = 0;
        return NGX_OK;
    }

    b = rb->bufs->buf;

    if (rb->bufs->next == NULL && ngx_buf_in_memory(b)) {
        *data = b->pos;
        *len = b->last - b->pos;
        return NGX_OK;
    }

    size = 0;

    for (cl = rb->bufs; cl; cl = cl->next) {
        size += ngx_buf_size(cl->buf);
    }

    *data = ngx_pnalloc(r->pool, (size_t) size + 1);
    if (*data == NULL) {
        return NGX_ERROR;
    }

    n = ngx_http_solgate_chain_copy(rb->bufs, *data, (size_t) size);

    if (n != (ssize_t) size) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "solgate: could not read the request body "
                      "(%O bytes)", size);
        return NGX_ERROR;
    }

    *len = (size_t) size;

    return NGX_OK;
}


/*
 * The request's use-upstream selector: the X-Solgate-Use-Upstream header
 * (or X-ERPC-Use-Upstream), else ?use-upstream=, else the network's
 * use_upstream_default.  Empty when there is none.
 */
static ngx_int_t
ngx_http_solgate_selector(ngx_http_request_t *r,
    ngx_http_solgate_network_t *network, ngx_str_t *selector)
{
    u_char            *dst, *src;
    ngx_str_t          raw;
    ngx_table_elt_t   *h;

    static ngx_str_t   headers[] = {
        ngx_string("X-Solgate-Use-Upstream"),
        ngx_string("X-ERPC-Use-Upstream")
    };

    h = ngx_http_solgate_find_headers(r, headers, 2);

    if (h != NULL) {
        *selector = h->value;
        return NGX_OK;
    }

    if (ngx_http_arg(r, (u_char *) "use-upstream", 12, &raw) == NGX_OK) {
        selector->data = ngx_pnalloc(r->pool, raw.len + 1);
        if (selector->data == NULL) {
            return NGX_ERROR;
        }

        src = raw.data;
        dst = selector->data;
        ngx_unescape_uri(&dst, &src, raw.len, NGX_UNESCAPE_URI);
        selector->len = dst - selector->data;
        return NGX_OK;
    }

    *selector = network->use_upstream_default;

    return NGX_OK;
}


ngx_table_elt_t *
ngx_http_solgate_find_header(ngx_http_request_t *r, ngx_str_t *name)
{
    return ngx_http_solgate_find_headers(r, name, 1);
}


/* The request header with the first of names[] that is present, in one
 * pass over the headers. */
ngx_table_elt_t *
ngx_http_solgate_find_headers(ngx_http_request_t *r, ngx_str_t *names,
    ngx_uint_t n)
{
    ngx_uint_t        i, k;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h, *found;
    ngx_uint_t        found_rank;

    found = NULL;
    found_rank = n;

    part = &r->headers_in.headers.part;
    h = part->elts;

    for (i = 0; /* void */; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                return found;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        for (k = 0; k < found_rank; k++) {
            if (h[i].key.len == names[k].len
                && ngx_strncasecmp(h[i].key.data, names[k].data,
                                   names[k].len) == 0)
            {
                found = &h[i];
                found_rank = k;

                if (k == 0) {
                    return found;
                }

                break;
            }
        }
    }
}


/* The status of the last upstream attempt, 0 if none answered. */
static ngx_uint_t
ngx_http_solgate_last_status(ngx_http_request_t *r)
{
    ngx_http_upstream_state_t  *state;

    if (r->upstream_states == NULL || r->upstream_states->nelts == 0) {
        return 0;
    }

    state = r->upstream_states->elts;

    return state[r->upstream_states->nelts - 1].status;
}
