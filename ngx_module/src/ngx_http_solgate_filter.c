/*
 * The filters of a solgate location.  Error pages nginx itself generates
 * (413 for a body over client_max_body_size, 408, 500, ...) are turned into
 * JSON-RPC errors: a JSON-RPC client must never have to parse an HTML page.
 * Successful upstream responses go to ngx_http_solgate_response.c (getSlot
 * correction, context.slot harvest); other upstream responses pass through
 * untouched.
 */

#include "ngx_http_solgate_module.h"


static ngx_int_t ngx_http_solgate_header_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_error_header(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_fail_over(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in);
static ngx_uint_t ngx_http_solgate_answer_cut(ngx_http_request_t *r,
    ngx_chain_t *in);
static ngx_int_t ngx_http_solgate_error_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);
static ngx_int_t ngx_http_solgate_piece_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t **in);
static sg_str_t ngx_http_solgate_error_text(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_uint_t status);


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_next_body_filter;


ngx_int_t
ngx_http_solgate_filter_init(ngx_conf_t *cf)
{
    ngx_http_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_solgate_header_filter;

    ngx_http_next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = ngx_http_solgate_body_filter;

    return NGX_OK;
}


ngx_int_t
ngx_http_solgate_next_header_filter(ngx_http_request_t *r)
{
    return ngx_http_next_header_filter(r);
}


ngx_int_t
ngx_http_solgate_next_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
    return ngx_http_next_body_filter(r, in);
}


static ngx_int_t
ngx_http_solgate_header_filter(ngx_http_request_t *r)
{
    ngx_http_solgate_ctx_t       *ctx;
    ngx_http_solgate_loc_conf_t  *slcf;

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (slcf->network == NULL) {
        return ngx_http_next_header_filter(r);
    }

    ctx = ngx_http_solgate_get_ctx(r);

    /* of subrequests, a piece of a batch is answered as a request is */
    if (r != r->main && (ctx == NULL || !ctx->is_piece)) {
        return ctx != NULL && ctx->attempt != NULL
               ? ngx_http_solgate_fanout_header(r, ctx->attempt)
               : ngx_http_next_header_filter(r);
    }

    if (ctx != NULL && ctx->cors_origin && r == r->main
        && ngx_http_solgate_cors_allow_origin(r) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx != NULL && ctx->answered) {
        return ngx_http_next_header_filter(r);
    }

    /* err_status is set only for the error pages nginx generates */
    if (r->err_status >= NGX_HTTP_BAD_REQUEST) {
        return ngx_http_solgate_error_header(r);
    }

    /* an answer that is a failure all the same is failed over, while
     * nginx allows one more internal redirect (else it is the client's) */
    if (ctx != NULL && ctx->upstream != NULL && r->upstream != NULL
        && ngx_http_solgate_report_attempt(r, ctx) == NGX_DECLINED
        && r->uri_changes > 1)
    {
        return ngx_http_solgate_fail_over(r);
    }

    if (ctx != NULL && ctx->websocket
        && r->headers_out.status == NGX_HTTP_SWITCHING_PROTOCOLS)
    {
        if (ngx_http_solgate_ws_switched(r, ctx) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_next_header_filter(r);
    }

    /* a piece's answer that is no 200 has no place in the client's array:
     * its calls get errors there instead */
    if (r != r->main && r->headers_out.status != NGX_HTTP_OK) {
        return ngx_http_solgate_error_header(r);
    }

    if (ctx != NULL && ctx->rpc != NULL && ctx->upstream != NULL
        && r->upstream != NULL && r->headers_out.status == NGX_HTTP_OK)
    {
        if (ctx->block_call != NULL
            && ngx_http_solgate_blocks_header(r, ctx) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (ctx->peer_attempt) {
            return ngx_http_next_header_filter(r);
        }

        if (ctx->batch_split
            && ngx_http_solgate_batch_header(r, ctx) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (ctx->batch_held) {
            return NGX_OK;      /* sent with the merged answer */
        }

        return ngx_http_solgate_response_header(r, ctx);
    }

    return ngx_http_next_header_filter(r);
}


/*
 * The answer is a failure (a node that says it is behind) and nothing of it
 * has reached the client: drop the headers proxy copied from it and end the
 * attempt with 503, which error_page sends to @solgate_retry as any failed
 * attempt.  The upstream connection is closed, its body unread.
 */
static ngx_int_t
ngx_http_solgate_fail_over(ngx_http_request_t *r)
{
    ngx_memzero(&r->headers_out.status,
                sizeof(ngx_http_headers_out_t)
                - offsetof(ngx_http_headers_out_t, status));

    r->headers_out.headers.part.nelts = 0;
    r->headers_out.headers.part.next = NULL;
    r->headers_out.headers.last = &r->headers_out.headers.part;

    r->headers_out.content_length_n = -1;
    r->headers_out.last_modified_time = -1;

    return NGX_HTTP_SERVICE_UNAVAILABLE;
}


static ngx_int_t
ngx_http_solgate_error_header(ngx_http_request_t *r)
{
    sg_str_t                 body;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx == NULL) {
        ctx = ngx_http_solgate_create_ctx(r);
        if (ctx == NULL) {
            return NGX_ERROR;
        }

        /* refused before the access phase (a Content-Length over
         * client_max_body_size): the Origin is read here */
        if (r == r->main && ngx_http_solgate_cors_origin(r)
            && ngx_http_solgate_cors_allow_origin(r) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    ctx->rewrite_error = 1;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate filter: error page %ui as JSON-RPC error",
                   r->headers_out.status);

    r->headers_out.content_length_n = -1;
    ngx_http_clear_content_length(r);

    if (r == r->main) {
        /* its length, and its message as the reason phrase (413, ...) */
        body = ngx_http_solgate_error_text(r, ctx, r->headers_out.status);
        r->headers_out.content_length_n = body.len;

        if (ngx_http_solgate_reason(r, r->headers_out.status,
                                    (u_char *) body.data, body.len)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    ngx_http_clear_accept_ranges(r);
    ngx_http_clear_last_modified(r);
    ngx_http_clear_etag(r);

    ngx_str_set(&r->headers_out.content_type,
                "application/json; charset=utf-8");
    r->headers_out.content_type_len = sizeof("application/json") - 1;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.charset.len = 0;

    return ngx_http_next_header_filter(r);
}


static ngx_int_t
ngx_http_solgate_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    if (ctx == NULL) {
        return ngx_http_next_body_filter(r, in);
    }

    if (ctx->attempt != NULL) {
        return ngx_http_solgate_fanout_body(r, ctx->attempt, in);
    }

    if (ctx->rewrite_error) {
        return ngx_http_solgate_error_body(r, ctx, in);
    }

    if (ctx->is_piece && !ctx->answered
        && ngx_http_solgate_piece_body(r, ctx, &in) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (!ctx->body_seen && !ctx->answered && ctx->upstream != NULL
        && in != NULL && in->buf != NULL && in->buf->pos != NULL
        && in->buf->last > in->buf->pos)
    {
        /* for the request metrics: a JSON-RPC error or a result */
        ctx->body_seen = 1;
        ctx->rpc_error = sg_looks_like_rpc_error((char *) in->buf->pos,
                                          in->buf->last - in->buf->pos) != 0;

        if (ctx->rpc_error) {
            /* the client's mistake or the node's error: its code says */
            ctx->rpc_error_code = sg_rpc_error_code((char *) in->buf->pos,
                                          in->buf->last - in->buf->pos);
        }
    }

    if (ctx->reported && !ctx->cut_reported
        && ngx_http_solgate_answer_cut(r, in))
    {
        ngx_http_solgate_report_cut(r, ctx);
    }

    if (ctx->capture != NULL) {
        ngx_http_solgate_blocks_body(r, ctx, in);
    }

    if (ctx->merge != NULL) {
        return ngx_http_solgate_batch_body(r, ctx, in);
    }

    if (ctx->response != NULL) {
        return ngx_http_solgate_response_body(r, ctx, in);
    }

    return ngx_http_next_body_filter(r, in);
}


/*
 * nginx ends an answer whose upstream closed or timed out before its end
 * with a flush (a whole one ends with the last buffer), once the upstream
 * connection is gone.  Not a cut: a WebSocket's idle end (504 after the
 * 101), or an unbuffered answer all read whose client was too slow to
 * take it (nginx times the upstream out while it waits for the client).
 */
static ngx_uint_t
ngx_http_solgate_answer_cut(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_chain_t          *cl;
    ngx_http_upstream_t  *u;

    u = r->upstream;

    if (u == NULL || u->peer.connection != NULL || u->upgrade
        || (!u->buffering && u->length == 0))
    {
        return 0;
    }

    for (cl = in; cl; cl = cl->next) {
        if (cl->buf->flush && !cl->buf->last_buf && !cl->buf->last_in_chain) {
            return 1;
        }
    }

    return 0;
}


/*
 * The HTML page (or a piece's upstream answer) is dropped; libcore's
 * JSON-RPC error replaces it.
 */
static ngx_int_t
ngx_http_solgate_error_body(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    ngx_chain_t *in)
{
    sg_str_t      body;
    ngx_buf_t    *b;
    ngx_chain_t   out, *cl;

    for (cl = in; cl; cl = cl->next) {
        cl->buf->pos = cl->buf->last;
        cl->buf->file_pos = cl->buf->file_last;
    }

    if (ctx->rewrite_sent) {
        return ngx_http_solgate_next_body_filter(r, NULL);
    }

    ctx->rewrite_sent = 1;

    body = ngx_http_solgate_error_text(r, ctx, r->headers_out.status);

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->pos = (u_char *) body.data;
    b->last = b->pos + body.len;
    b->memory = body.len > 0;
    b->sync = body.len == 0;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_solgate_next_body_filter(r, &out);
}


/*
 * A piece's answer as it passes: its end is timed, and an empty one (a
 * call that went alone always has an answer) gets its error.
 */
static ngx_int_t
ngx_http_solgate_piece_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t **in)
{
    sg_str_t      text;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;
    ngx_uint_t    last;

    last = 0;

    for (cl = *in; cl; cl = cl->next) {
        if (!ngx_buf_special(cl->buf)) {
            ctx->piece_bytes += ngx_buf_size(cl->buf);
        }

        last = last || ngx_http_solgate_is_last(r, cl->buf);
    }

    if (!last) {
        return NGX_OK;
    }

    ctx->piece_end = ngx_current_msec;

    if (ctx->piece_bytes > 0 || ctx->run || ctx->rpc == NULL) {
        return NGX_OK;
    }

    text = ngx_http_solgate_error_text(r, ctx, 0);

    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL || text.len == 0) {
        return b == NULL || cl == NULL ? NGX_ERROR : NGX_OK;
    }

    b->pos = (u_char *) text.data;
    b->last = b->pos + text.len;
    b->memory = 1;

    cl->buf = b;
    cl->next = *in;
    *in = cl;

    return NGX_OK;
}


/* A piece's calls' errors in their places; else one error, id null. */
static sg_str_t
ngx_http_solgate_error_text(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_uint_t status)
{
    sg_str_t  body;

    if (r != r->main && ctx->rpc != NULL
        && sg_request_status_answer(ctx->rpc, (unsigned) status, &body)
           == SG_OK)
    {
        return body;
    }

    return sg_http_error_answer(status);
}
