/*
 * A batch that goes call by call (libcore cut it into pieces, in the
 * client's order): the answers made here are written in their places, and
 * each call that goes alone, and each run of the calls between those, is a
 * subrequest through the same location that runs the single-call path on
 * a body of its own (Cube Runner with the request's key, retries and
 * failover, the policies, getSlot correction).  nginx's postpone filter
 * writes their answers in order as they stream; a subrequest that is not
 * yet first holds at most its proxy buffers, as its event pipe stops
 * reading the upstream until it is.
 */

#include "ngx_http_solgate_module.h"


struct ngx_http_solgate_pieces_s {
    ngx_array_t              calls;     /* ngx_http_solgate_ctx_t *, the
                                           subrequests' contexts */
};


static ngx_buf_t *ngx_http_solgate_pieces_text(ngx_http_request_t *r,
    ngx_chain_t ***ll, const char *text, size_t len);
static ngx_int_t ngx_http_solgate_pieces_launch(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_piece_t *piece);


/* What to finalize the request with once the pieces are under way. */
ngx_int_t
ngx_http_solgate_pieces_start(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, size_t n)
{
    size_t                      i;
    ngx_int_t                   rc;
    sg_piece_t                  piece;
    ngx_uint_t                  answers;
    ngx_buf_t                  *last;
    ngx_chain_t                *out, **ll;
    ngx_http_solgate_pieces_t  *pieces;

    pieces = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_pieces_t));

    if (pieces == NULL
        || ngx_array_init(&pieces->calls, r->pool, n,
                          sizeof(ngx_http_solgate_ctx_t *))
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->pieces = pieces;
    ctx->answered = 1;

    rc = ngx_http_solgate_send_json_header(r, NGX_HTTP_OK, -1);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out = NULL;
    ll = &out;
    answers = 0;

    if (ngx_http_solgate_pieces_text(r, &ll, "[", 1) == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (sg_request_piece(ctx->rpc, i, &piece) != SG_OK) {
            return NGX_ERROR;
        }

        if (piece.answers && answers++ > 0
            && ngx_http_solgate_pieces_text(r, &ll, ",", 1) == NULL)
        {
            return NGX_ERROR;
        }

        if (piece.kind == SG_PIECE_LOCAL) {
            if (ngx_http_solgate_pieces_text(r, &ll, piece.text.data,
                                             piece.text.len)
                == NULL)
            {
                return NGX_ERROR;
            }

            continue;
        }

        /* what comes before the subrequest goes first (or waits for the
         * subrequest before it) */
        if (out != NULL) {
            *ll = NULL;

            if (ngx_http_output_filter(r, out) == NGX_ERROR) {
                return NGX_ERROR;
            }

            out = NULL;
            ll = &out;
        }

        if (ngx_http_solgate_pieces_launch(r, ctx, &piece) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    last = ngx_http_solgate_pieces_text(r, &ll, "]", 1);
    if (last == NULL) {
        return NGX_ERROR;
    }

    last->last_buf = 1;
    last->last_in_chain = 1;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate batch: %ui call(s) by subrequest",
                   pieces->calls.nelts);

    return ngx_http_output_filter(r, out);
}


/* Appends a buffer of text that lives as long as the request. */
static ngx_buf_t *
ngx_http_solgate_pieces_text(ngx_http_request_t *r, ngx_chain_t ***ll,
    const char *text, size_t len)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);

    if (b == NULL || cl == NULL) {
        return NULL;
    }

    b->pos = (u_char *) text;
    b->last = b->pos + len;
    b->memory = 1;

    cl->buf = b;
    cl->next = NULL;

    **ll = cl;
    *ll = &cl->next;

    return b;
}


/*
 * A call that goes alone, or a run: a subrequest through this location
 * with the piece as its body; the precontent phase routes it
 * (ngx_http_solgate_piece_handler).
 */
static ngx_int_t
ngx_http_solgate_pieces_launch(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_piece_t *piece)
{
    ngx_buf_t                 *b;
    ngx_chain_t               *body, **ll;
    ngx_http_request_t        *sr;
    ngx_http_solgate_ctx_t    *sctx, **slot;
    ngx_http_request_body_t   *rb;

    if (ngx_http_subrequest(r, &r->uri, &r->args, &sr, NULL, 0) != NGX_OK) {
        return NGX_ERROR;
    }

    sr->method = r->method;
    sr->method_name = r->method_name;

    body = NULL;
    ll = &body;

    rb = ngx_pcalloc(r->pool, sizeof(ngx_http_request_body_t));
    b = ngx_http_solgate_pieces_text(r, &ll, piece->text.data,
                                     piece->text.len);
    sctx = ngx_http_solgate_create_ctx(sr);
    slot = ngx_array_push(&ctx->pieces->calls);

    if (rb == NULL || b == NULL || sctx == NULL || slot == NULL) {
        return NGX_ERROR;
    }

    /* start and end too: proxy rewinds a body it sends again */
    b->start = b->pos;
    b->end = b->last;
    b->last_buf = 1;

    rb->bufs = body;
    rb->buf = b;

    /* its own body, and its length for proxy */
    sr->request_body = rb;
    sr->headers_in.content_length_n = (off_t) piece->text.len;
    sr->headers_in.chunked = 0;
    sr->preserve_body = 1;

    sctx->network = ctx->network;
    sctx->selectors = ctx->selectors;
    sctx->is_piece = 1;
    sctx->run = piece->kind == SG_PIECE_RUN;
    sctx->piece.data = (u_char *) piece->text.data;
    sctx->piece.len = piece->text.len;
    sctx->piece_start = ngx_current_msec;

    *slot = sctx;

    return NGX_OK;
}


/*
 * The log phase: each call that went alone is counted under its method,
 * timed from its start to its answer's end (the batch counts once, as
 * "batch"; a run is part of it).
 */
void
ngx_http_solgate_pieces_finish(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, int64_t duration_ms)
{
    ngx_uint_t                i;
    ngx_http_solgate_ctx_t  **calls, *sctx;

    calls = ctx->pieces->calls.elts;

    for (i = 0; i < ctx->pieces->calls.nelts; i++) {
        sctx = calls[i];

        if (sctx->rpc == NULL || sctx->peer_attempt || sctx->run) {
            continue;
        }

        sg_request_finish(sctx->rpc,
                          (unsigned) sctx->owner->headers_out.status,
                          sctx->rpc_error, sctx->rpc_error_code,
                          sctx->piece_end != 0
                          ? (int64_t) (sctx->piece_end - sctx->piece_start)
                          : duration_ms);
    }
}
