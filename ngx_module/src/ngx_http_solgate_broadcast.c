/*
 * broadcast: a call of a broadcast method (typically sendTransaction) goes
 * to several upstreams at once, as in-memory subrequests through the same
 * location (so proxy_pass, keepalive, TLS and timeouts stay nginx's); each
 * one's end is reported to libcore as it comes, and once all ended the
 * client gets libcore's answer (the first success).  A subrequest never
 * takes an error_page: its failure is its status.
 */

#include "ngx_http_solgate_module.h"


typedef struct {
    ngx_http_solgate_ctx_t  *parent;
    size_t                   upstream;
    unsigned                 reported:1;
} ngx_http_solgate_broadcast_t;


static ngx_int_t ngx_http_solgate_broadcast_done(ngx_http_request_t *sr,
    void *data, ngx_int_t rc);


ngx_int_t
ngx_http_solgate_broadcast_start(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, size_t *targets, size_t n)
{
    size_t                         i;
    ngx_http_request_t            *sr;
    ngx_http_solgate_ctx_t        *sctx;
    ngx_http_post_subrequest_t    *ps;
    ngx_http_solgate_upstream_t   *upstreams;
    ngx_http_solgate_broadcast_t  *b;

    upstreams = ctx->network->upstreams.elts;

    for (i = 0; i < n; i++) {
        ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
        b = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_broadcast_t));
        sctx = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_ctx_t));
        if (ps == NULL || b == NULL || sctx == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        b->parent = ctx;
        b->upstream = targets[i];
        ps->handler = ngx_http_solgate_broadcast_done;
        ps->data = b;

        if (ngx_http_subrequest(r, &r->uri, &r->args, &sr, ps,
                                NGX_HTTP_SUBREQUEST_IN_MEMORY
                                |NGX_HTTP_SUBREQUEST_WAITED)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        /* the same call, to the upstream chosen for it */
        sr->method = r->method;
        sr->method_name = r->method_name;
        sr->error_page = 1;

        sctx->network = ctx->network;
        sctx->upstream = &upstreams[targets[i]];
        ngx_http_set_ctx(sr, sctx, ngx_http_solgate_module);

        ctx->pending++;
    }

    ctx->broadcasting = 1;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate broadcast: to %uz upstream(s)", n);

    return NGX_AGAIN;
}


/* The access phase, run again as subrequests end: NGX_AGAIN until all did. */
ngx_int_t
ngx_http_solgate_broadcast_continue(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    sg_route_t  route;

    if (ctx->pending > 0) {
        return NGX_AGAIN;
    }

    ctx->broadcasting = 0;

    if (sg_request_broadcast_answer(ctx->rpc, &route) != SG_OK) {
        ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
        return NGX_DONE;
    }

    ctx->answered = 1;
    ngx_http_finalize_request(r,
        ngx_http_solgate_send_json(r, route.http_status,
                                   (u_char *) route.body.data,
                                   route.body.len));
    return NGX_DONE;
}


static ngx_int_t
ngx_http_solgate_broadcast_done(ngx_http_request_t *sr, void *data,
    ngx_int_t rc)
{
    ngx_http_solgate_broadcast_t *b = data;

    ngx_http_upstream_t        *u;
    sg_attempt_end_t            end;
    ngx_http_upstream_state_t  *state;

    if (b->reported) {
        return rc;
    }

    b->reported = 1;
    b->parent->pending--;

    ngx_memzero(&end, sizeof(sg_attempt_end_t));
    end.connected = 1;
    end.http_status = rc >= NGX_HTTP_SPECIAL_RESPONSE ? (unsigned) rc : 0;

    u = sr->upstream;

    if (u != NULL && u->headers_in.status_n > 0) {
        end.http_status = (unsigned) u->headers_in.status_n;
    }

    state = ngx_http_solgate_last_state(sr);

    if (state != NULL && state->header_time == (ngx_msec_t) -1) {
        end.timed_out = rc == NGX_HTTP_GATEWAY_TIME_OUT;
        end.connected = state->connect_time != (ngx_msec_t) -1;
        end.http_status = 0;
    }

    if (end.http_status == NGX_HTTP_OK && u != NULL && u->buffer.pos != NULL
        && u->buffer.last > u->buffer.pos)
    {
        end.answer.data = (char *) u->buffer.pos;
        end.answer.len = u->buffer.last - u->buffer.pos;
    }

    (void) sg_request_broadcast_report(b->parent->rpc, b->upstream, &end,
                                       (int64_t) ngx_current_msec);

    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, sr->connection->log, 0,
                   "solgate broadcast: upstream %uz ended with %ui, "
                   "%ui to go", b->upstream, (ngx_uint_t) end.http_status,
                   b->parent->pending);

    return rc;
}
