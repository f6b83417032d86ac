/*
 * The response of a forwarded request: a getSlot answer is read whole
 * (it is a few dozen bytes), corrected and sent with its header; an
 * envelope response streams through untouched while libcore peeks for
 * context.slot and stops peeking once it has it.
 */

#include "ngx_http_solgate_module.h"


/*
 * A getSlot answer is held until it ends, to be corrected: room for a
 * usual one first, grown for one with a long id up to the largest a
 * client's id can make it (client_max_body_size's default); past that it
 * is sent as it came.
 */
#define NGX_HTTP_SOLGATE_SLOT_ANSWER_FIRST  128
#define NGX_HTTP_SOLGATE_SLOT_ANSWER_HELD   (1024 * 1024)


static ngx_int_t ngx_http_solgate_harvest(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);
static ngx_int_t ngx_http_solgate_rewrite_slot(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);
static ngx_int_t ngx_http_solgate_send_slot_answer(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_buf_t *ngx_http_solgate_grow_held(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, size_t more);
static ngx_int_t ngx_http_solgate_release_held(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in);


ngx_int_t
ngx_http_solgate_response_header(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    if (ctx->response != NULL) {    /* freed with the context otherwise */
        sg_response_free(ctx->response);
        ctx->response = NULL;
    }

    if (sg_response_new(ctx->rpc, (int64_t) ngx_current_msec, &ctx->response)
        != SG_OK)
    {
        return ngx_http_solgate_next_header_filter(r);
    }

    if (sg_response_kind(ctx->response) == SG_RESPONSE_HARVEST) {
        return ngx_http_solgate_next_header_filter(r);
    }

    /* hold the header until the answer is read and corrected */
    r->filter_need_in_memory = 1;
    r->allow_ranges = 0;

    ngx_memzero(&ctx->held_buf, sizeof(ngx_buf_t));
    ctx->held_link.buf = &ctx->held_buf;
    ctx->held_link.next = NULL;
    ctx->held = &ctx->held_link;

    return NGX_OK;
}


ngx_int_t
ngx_http_solgate_response_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in)
{
    if (sg_response_kind(ctx->response) == SG_RESPONSE_HARVEST) {
        return ngx_http_solgate_harvest(r, ctx, in);
    }

    if (ctx->held == NULL) {
        /* already sent (corrected or given up on) */
        return ngx_http_solgate_next_body_filter(r, in);
    }

    return ngx_http_solgate_rewrite_slot(r, ctx, in);
}


static ngx_int_t
ngx_http_solgate_harvest(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    ngx_chain_t *in)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    for (cl = in; cl && !ctx->harvest_done; cl = cl->next) {
        b = cl->buf;

        if (!ngx_buf_in_memory(b)) {
            if (ngx_buf_size(b) > 0) {
                ctx->harvest_done = 1;  /* file buffers are not read */
            }

        } else if (b->last > b->pos
                   && sg_response_feed(ctx->response, (char *) b->pos,
                                       b->last - b->pos,
                                       (int64_t) ngx_current_msec)
                      != SG_AGAIN)
        {
            ctx->harvest_done = 1;
        }

        if (ngx_http_solgate_is_last(r, b) && !ctx->harvest_done) {
            sg_response_finish(ctx->response, (int64_t) ngx_current_msec);
            ctx->harvest_done = 1;
        }
    }

    return ngx_http_solgate_next_body_filter(r, in);
}


static ngx_int_t
ngx_http_solgate_rewrite_slot(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in)
{
    size_t        n;
    ngx_buf_t    *held, *b;
    ngx_chain_t  *cl;
    ngx_uint_t    last;

    held = ctx->held->buf;
    last = 0;

    for (cl = in; cl; cl = cl->next) {
        b = cl->buf;
        n = b->last - b->pos;

        if (n > (size_t) (held->end - held->last)) {
            held = ngx_http_solgate_grow_held(r, ctx, n);

            if (held == NULL) {
                return ngx_http_solgate_release_held(r, ctx, cl);
            }
        }

        if (n > 0) {    /* a special buffer (last_buf) has no memory */
            held->last = ngx_cpymem(held->last, b->pos, n);
            b->pos = b->last;
        }

        if (ngx_http_solgate_is_last(r, b)) {
            last = 1;
        }
    }

    if (!last) {
        return NGX_OK;
    }

    return ngx_http_solgate_send_slot_answer(r, ctx);
}


static ngx_int_t
ngx_http_solgate_send_slot_answer(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_int_t         rc;
    ngx_buf_t        *held;
    ngx_chain_t       out;
    sg_correction_t   fix;

    held = ctx->held->buf;
    ctx->held = NULL;

    if (sg_response_rewrite(ctx->response, (char *) held->pos,
                            held->last - held->pos, (int64_t) ngx_current_msec,
                            &fix)
        == SG_OK)
    {
        ngx_log_debug3(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "solgate: upstream returned older slot than we know, "
                       "falling back to highest known slot: "
                       "knownHighestSlot=%uL responseSlot=%uL upstreamId=%V",
                       fix.to, fix.from, &ctx->upstream->id);

        /* libcore's memory, until the request's end: not ours to write */
        held->pos = (u_char *) fix.body.data;
        held->last = held->pos + fix.body.len;
        held->temporary = 0;
        held->memory = 1;
    }

    /* a subrequest's end, as ngx_http_send_special marks it */
    held->last_buf = (r == r->main) ? 1 : 0;
    held->sync = (r == r->main) ? 0 : 1;
    held->last_in_chain = 1;

    ngx_http_clear_content_length(r);
    r->headers_out.content_length_n = held->last - held->pos;

    rc = ngx_http_solgate_next_header_filter(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = held;
    out.next = NULL;

    return ngx_http_solgate_next_body_filter(r, &out);
}


/*
 * Room for `more` bytes in the held answer (its memory is taken when the
 * first bytes come), or NULL past the limit.
 */
static ngx_buf_t *
ngx_http_solgate_grow_held(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    size_t more)
{
    size_t      used, size;
    u_char     *p;
    ngx_buf_t  *held;

    held = ctx->held->buf;
    used = held->last - held->pos;

    if (used + more > NGX_HTTP_SOLGATE_SLOT_ANSWER_HELD) {
        return NULL;
    }

    size = ngx_max(2 * (size_t) (held->end - held->start), used + more);
    size = ngx_max(size, NGX_HTTP_SOLGATE_SLOT_ANSWER_FIRST);
    size = ngx_min(size, NGX_HTTP_SOLGATE_SLOT_ANSWER_HELD);

    p = ngx_pnalloc(r->pool, size);
    if (p == NULL) {
        return NULL;
    }

    /* the first time there is nothing to copy, and no memory (NULL) */
    held->last = used > 0 ? ngx_cpymem(p, held->pos, used) : p;
    held->pos = p;
    held->start = p;
    held->end = p + size;
    held->temporary = 1;

    return held;
}


/*
 * Not a getSlot answer after all, or too long to hold: send what was read
 * (nothing, when the first chunk was already too long), then the rest.
 */
static ngx_int_t
ngx_http_solgate_release_held(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in)
{
    ngx_int_t     rc;
    ngx_chain_t  *held;

    held = ctx->held;
    ctx->held = NULL;

    if (held->buf->last > held->buf->pos) {
        held->next = in;
    } else {
        held = in;   /* an empty buffer would be a "zero size buf" */
    }

    rc = ngx_http_solgate_next_header_filter(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    return ngx_http_solgate_next_body_filter(r, held);
}

