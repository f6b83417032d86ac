/*
 * A batch sent upstream in part: the calls Solgate answers itself (errors,
 * the genesis hash, the getBlock guard) stay here, the others go upstream
 * as one batch in place of the client's body, and the upstream's answer is
 * merged with the local answers as it streams (libcore says where each
 * goes).  A chunk that holds no boundary passes as it is; one that does is
 * copied once, so the copies per response stay within (calls + 2) proxy
 * buffers whatever the answers' size.  An upstream answer of a known
 * length up to NGX_HTTP_SOLGATE_BATCH_HELD_MAX (a batch of small calls) is
 * merged whole before the header goes, so the client gets its length
 * rather than chunks; a longer one streams, chunked.
 */

#include "ngx_http_solgate_module.h"


#define NGX_HTTP_SOLGATE_BATCH_HELD_MAX  16384


static ngx_buf_t *ngx_http_solgate_merged_buf(ngx_http_request_t *r,
    const sg_merge_segment_t *seg, size_t n, u_char *input);
static ngx_int_t ngx_http_solgate_batch_cut(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_batch_release(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static void ngx_http_solgate_free_merge(void *data);


/*
 * The body to send instead of the client's (a batch in part, Cube Runner's
 * canonical call); its length is proxy's.
 */
ngx_int_t
ngx_http_solgate_replace_body(ngx_http_request_t *r, sg_str_t body)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    b = ngx_create_temp_buf(r->pool, body.len);
    cl = ngx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return NGX_ERROR;
    }

    b->last = ngx_cpymem(b->pos, body.data, body.len);
    b->last_buf = 1;

    cl->buf = b;
    cl->next = NULL;

    r->request_body->bufs = cl;
    r->request_body->buf = b;
    r->headers_in.content_length_n = (off_t) body.len;
    r->headers_in.chunked = 0;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate: a body of %uz bytes goes upstream", body.len);

    return NGX_OK;
}


/*
 * The answer's length changes: it goes out chunked, or, when it is held
 * (ctx->batch_held), with its length once it is merged.
 */
ngx_int_t
ngx_http_solgate_batch_header(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    off_t                length;
    ngx_pool_cleanup_t  *cln;

    if (sg_merge_new(ctx->rpc, &ctx->merge) != SG_OK) {
        return NGX_OK;
    }

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        sg_merge_free(ctx->merge);
        ctx->merge = NULL;
        return NGX_ERROR;
    }

    cln->handler = ngx_http_solgate_free_merge;
    cln->data = ctx->merge;

    r->filter_need_in_memory = 1;
    r->allow_ranges = 0;
    r->headers_out.content_length_n = -1;
    ngx_http_clear_content_length(r);
    ngx_http_clear_accept_ranges(r);

    length = r->upstream->headers_in.content_length_n;

    /* a piece's answer goes into the client's array: never held */
    if (r == r->main && length >= 0
        && length <= NGX_HTTP_SOLGATE_BATCH_HELD_MAX)
    {
        ctx->batch_held = 1;
        ctx->batch_left = length;
        ctx->batch_out = NULL;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_solgate_batch_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in)
{
    size_t                     n, len;
    ngx_uint_t                 last;
    ngx_buf_t                 *b, *nb;
    ngx_chain_t               *out, **ll, *cl;
    const sg_merge_segment_t  *seg;

    if (ctx->batch_merged) {
        /* after a held answer's last byte: nginx's end of it, as it is */
        return ngx_http_solgate_next_body_filter(r, in);
    }

    out = NULL;
    ll = &out;
    last = 0;

    /* a held answer ends at its last byte: what follows is nginx's */
    for ( /* void */ ; in != NULL && !(last && ctx->batch_held);
         in = in->next)
    {
        b = in->buf;
        len = ngx_buf_in_memory(b) ? (size_t) (b->last - b->pos) : 0;

        last = ngx_http_solgate_is_last(r, b);

        if (ctx->batch_held) {
            ctx->batch_left -= (off_t) len;
            last = last || ctx->batch_left <= 0;

            /* nginx flushes what it has when the upstream closed or timed
             * out short of its answer's length */
            if (!last && b->flush && r->upstream != NULL
                && r->upstream->peer.connection == NULL)
            {
                return ngx_http_solgate_batch_cut(r, ctx);
            }
        }

        if (sg_merge_feed(ctx->merge, (char *) b->pos, len, last,
                          (int64_t) ngx_current_msec, &seg, &n)
            != SG_OK)
        {
            return NGX_ERROR;
        }

        cl = ngx_alloc_chain_link(r->pool);
        if (cl == NULL) {
            return NGX_ERROR;
        }

        /* a held answer never keeps proxy's buffer, which is read into
         * again once this returns */
        if (n == 1 && seg[0].input && seg[0].offset == 0
            && seg[0].length == len && !last && !ctx->batch_held)
        {
            cl->buf = b;                    /* no boundary in it */

        } else {
            nb = ngx_http_solgate_merged_buf(r, seg, n, b->pos);
            if (nb == NULL) {
                return NGX_ERROR;
            }

            nb->last_buf = b->last_buf;
            nb->last_in_chain = b->last_in_chain;
            nb->flush = b->flush;
            nb->sync = nb->last == nb->pos && !b->last_buf;  /* special, so not "zero size" */

            b->pos = b->last;               /* consumed: proxy reuses it */
            cl->buf = nb;
        }

        *ll = cl;
        ll = &cl->next;
    }

    *ll = NULL;

    if (!ctx->batch_held) {
        return ngx_http_solgate_next_body_filter(r, out);
    }

    /* held: kept until the answer is all merged, then sent with its
     * length, and whatever followed its last byte after it */
    for (ll = &ctx->batch_out; *ll; ll = &(*ll)->next) { /* void */ }
    *ll = out;

    if (!last) {
        return NGX_OK;
    }

    for ( /* void */ ; *ll; ll = &(*ll)->next) { /* void */ }
    *ll = in;

    return ngx_http_solgate_batch_release(r, ctx);
}


/* The segments of a chunk (its bytes at `input`) copied into one buffer. */
static ngx_buf_t *
ngx_http_solgate_merged_buf(ngx_http_request_t *r,
    const sg_merge_segment_t *seg, size_t n, u_char *input)
{
    size_t      i, total;
    u_char     *p;
    ngx_buf_t  *b;

    total = 0;
    for (i = 0; i < n; i++) {
        total += seg[i].length;
    }

    b = total > 0 ? ngx_create_temp_buf(r->pool, total)
                  : ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NULL;
    }

    p = b->last;
    for (i = 0; i < n; i++) {
        p = ngx_cpymem(p, seg[i].input ? (char *) input + seg[i].offset
                                       : seg[i].text,
                       seg[i].length);
    }

    b->last = p;

    return b;
}


/*
 * A held answer cut short: nothing of it has gone, so the client's batch
 * is answered as if the upstream had answered no call, from a new merge
 * of nothing: the local answers in their places, -32603 for the rest.
 */
static ngx_int_t
ngx_http_solgate_batch_cut(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    size_t                     n;
    ngx_buf_t                 *b;
    sg_merge_t                *empty;
    ngx_chain_t               *cl;
    const sg_merge_segment_t  *seg;

    if (sg_merge_new(ctx->rpc, &empty) != SG_OK) {
        return NGX_ERROR;
    }

    sg_merge_cut_short(empty);

    b = NULL;
    cl = ngx_alloc_chain_link(r->pool);

    if (cl != NULL
        && sg_merge_feed(empty, "", 0, 1, (int64_t) ngx_current_msec, &seg,
                         &n)
           == SG_OK)
    {
        b = ngx_http_solgate_merged_buf(r, seg, n, NULL);
    }

    sg_merge_free(empty);

    if (b == NULL) {
        return NGX_ERROR;
    }

    b->last_buf = 1;
    b->last_in_chain = 1;

    cl->buf = b;
    cl->next = NULL;
    ctx->batch_out = cl;

    return ngx_http_solgate_batch_release(r, ctx);
}


/* The held answer, merged: its header with its length, then itself. */
static ngx_int_t
ngx_http_solgate_batch_release(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    off_t         length;
    ngx_int_t     rc;
    ngx_chain_t  *cl;

    length = 0;
    for (cl = ctx->batch_out; cl; cl = cl->next) {
        length += ngx_buf_size(cl->buf);
    }

    ctx->batch_held = 0;
    ctx->batch_merged = 1;
    r->headers_out.content_length_n = length;

    rc = ngx_http_solgate_next_header_filter(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    cl = ctx->batch_out;
    ctx->batch_out = NULL;

    return ngx_http_solgate_next_body_filter(r, cl);
}


static void
ngx_http_solgate_free_merge(void *data)
{
    sg_merge_free(data);
}
