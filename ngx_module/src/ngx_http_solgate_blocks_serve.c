/*
 * Cube Runner in a request: the access phase asks libcore which source
 * answers a getBlock (the region cache, the ledger, another region, or a
 * local answer), serves cache hits straight from the file, waits while
 * another request fetches the same block, and the body filter copies
 * ledger and region answers into the cache as they stream.
 */

#include "ngx_http_solgate_module.h"


static ngx_int_t ngx_http_solgate_blocks_act(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d);
static ngx_int_t ngx_http_solgate_blocks_wait(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d);
static void ngx_http_solgate_blocks_wake(ngx_event_t *ev);
static ngx_int_t ngx_http_solgate_blocks_answer(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d);
static ngx_int_t ngx_http_solgate_blocks_send_file(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d);
static ngx_int_t ngx_http_solgate_blocks_peer_attempt(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d);
static ngx_int_t ngx_http_solgate_blocks_forward_body(ngx_http_request_t *r,
    sg_blocks_decision_t *d);
static ngx_int_t ngx_http_solgate_blocks_value(ngx_http_request_t *r,
    ngx_http_complex_value_t *cv, sg_str_t *out);


/*
 * NGX_DECLINED: forward, to the peer now in ctx->upstream when
 * ctx->peer_attempt is set, else routed as usual (not Cube Runner's, or
 * the ledger serves it); anything else: what to finalize the request with.
 */
ngx_int_t
ngx_http_solgate_blocks_route(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    sg_str_t                    key, plan, token, client;
    ngx_table_elt_t            *h;
    sg_blocks_decision_t        d;
    ngx_http_solgate_blocks_t  *b;

    static ngx_str_t  peer_header = ngx_string("x-solgate-peer");

    b = ctx->network->blocks;

    if (ngx_http_solgate_blocks_value(r, b->api_key, &key) != NGX_OK
        || ngx_http_solgate_blocks_value(r, b->plan, &plan) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h = ngx_http_solgate_find_header(r, &peer_header);
    token.data = h ? (char *) h->value.data : NULL;
    token.len = h ? h->value.len : 0;

    /* a call without a key, on keyless_plan: the client's address */
    client = ngx_http_solgate_sg_str(&r->connection->addr_text);

    /* a batch's piece is not woken by a timer of its own: it never waits */
    if (sg_blocks_decide(b->core, ctx->rpc, key, plan, token, client,
                         r == r->main, (int64_t) ngx_current_msec,
                         ngx_http_solgate_wall_ms(), &ctx->block_call, &d)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_blocks_act(r, ctx, &d);
}


/* Back from the retry location after a region failed: the next source. */
ngx_int_t
ngx_http_solgate_blocks_retry(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    sg_blocks_decision_t        d;
    ngx_http_solgate_blocks_t  *b;

    b = ctx->network->blocks;

    ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                  "solgate: region \"%V\" could not serve the block, "
                  "trying the next source", &ctx->upstream->id);

    ctx->peer_attempt = 0;
    ctx->upstream = NULL;

    if (sg_blocks_next(b->core, ctx->block_call, (int64_t) ngx_current_msec,
                       &d)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_blocks_act(r, ctx, &d);
}


static ngx_int_t
ngx_http_solgate_blocks_act(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d)
{
    ngx_int_t  rc;

    switch (d->action) {

    case SG_BLOCKS_ANSWER:
        return ngx_http_solgate_blocks_answer(r, ctx, d);

    case SG_BLOCKS_CACHE:
        rc = ngx_http_solgate_blocks_send_file(r, ctx, d);

        if (rc != NGX_DECLINED) {
            return rc;
        }

        /* the entry was evicted between the lookup and the open, or its
         * file is not what the index says: libcore drops it and names the
         * next source (never the cache again for this call) */
        if (sg_blocks_next(ctx->network->blocks->core, ctx->block_call,
                           (int64_t) ngx_current_msec, d)
            != SG_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return ngx_http_solgate_blocks_act(r, ctx, d);

    case SG_BLOCKS_PEER:
        if (ngx_http_solgate_blocks_forward_body(r, d) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return ngx_http_solgate_blocks_peer_attempt(r, ctx, d);

    case SG_BLOCKS_LEDGER:
        if (ngx_http_solgate_blocks_forward_body(r, d) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return NGX_DECLINED;

    case SG_BLOCKS_WAIT:
        return ngx_http_solgate_blocks_wait(r, ctx, d);

    default: /* PASS */
        return NGX_DECLINED;
    }
}


/*
 * Another request (in this worker or another) fetches the block: the
 * request sleeps on its own timer and looks again (the cache lock, as
 * proxy_cache_lock's), ngx_http_solgate_sleep.
 */
static ngx_int_t
ngx_http_solgate_blocks_wait(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d)
{
    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate blocks: another request fetches the block, "
                   "looking again in %uL ms", d->wait_ms);

    /* with level-triggered events, reading was switched off after the body */
    if (ngx_handle_read_event(r->connection->read, 0) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_solgate_sleep(r, ctx, ngx_http_solgate_blocks_wake,
                           (ngx_msec_t) d->wait_ms);

    return NGX_AGAIN;
}


static void
ngx_http_solgate_blocks_wake(ngx_event_t *ev)
{
    ngx_int_t                rc;
    ngx_connection_t        *c;
    sg_blocks_decision_t     d;
    ngx_http_request_t      *r = ev->data;
    ngx_http_solgate_ctx_t  *ctx;

    c = r->connection;
    ngx_http_set_log_request(c->log, r);

    ctx = ngx_http_solgate_get_ctx(r);

    if (sg_blocks_recheck(ctx->network->blocks->core, ctx->block_call,
                          (int64_t) ngx_current_msec, &d)
        != SG_OK)
    {
        rc = NGX_HTTP_INTERNAL_SERVER_ERROR;

    } else {
        rc = ngx_http_solgate_blocks_act(r, ctx, &d);
    }

    if (!(rc == NGX_AGAIN && !ctx->answered && ctx->retry_timer.timer_set)) {
        r->read_event_handler = ngx_http_block_reading;
        ngx_http_solgate_resume(r, ctx, rc);
    }

    ngx_http_run_posted_requests(c);
}


static ngx_int_t
ngx_http_solgate_blocks_answer(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d)
{
    if (ngx_http_solgate_set_retry_after(r, d->retry_after) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->answered = 1;

    return ngx_http_solgate_send_json(r, d->http_status,
                                      (u_char *) d->body.data, d->body.len);
}


/*
 * A cache hit: the file as stored, with the client's id in place of the
 * one the entry was written with.  The id is near the end of a Solana
 * answer ("...,\"id\":1}\n"), so the file up to it goes with sendfile and
 * the id and the few bytes after it in one memory buffer: one sendfile
 * and one write per answer, not a third call for a two-byte tail.
 * NGX_DECLINED when the file is gone.
 */
static ngx_int_t
ngx_http_solgate_blocks_send_file(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d)
{
    off_t                      tail_at;
    size_t                     tail_len;
    ssize_t                    n;
    ngx_fd_t                   fd;
    ngx_int_t                  rc;
    ngx_buf_t                 *head, *rest;
    ngx_file_t                *file;
    ngx_chain_t                out[2];
    ngx_file_info_t            fi;
    ngx_pool_cleanup_t        *cln;
    ngx_pool_cleanup_file_t   *clnf;

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_pool_cleanup_file_t));
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    fd = ngx_open_file(d->path.data, NGX_FILE_RDONLY | NGX_FILE_NONBLOCK,
                       NGX_FILE_OPEN, 0);

    if (fd == NGX_INVALID_FILE) {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, ngx_errno,
                      "solgate: cached block \"%s\" vanished; dropped from "
                      "the cache, asking the next source", d->path.data);
        return NGX_DECLINED;
    }

    cln->handler = ngx_pool_cleanup_file;
    clnf = cln->data;
    clnf->fd = fd;
    clnf->name = (u_char *) d->path.data;
    clnf->log = r->pool->log;

    tail_at = (off_t) (d->id_offset + d->id_length);
    tail_len = (size_t) (d->size - d->id_offset - d->id_length);

    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR
        || ngx_file_size(&fi) != (off_t) d->size
        || (uint64_t) ngx_file_uniq(&fi) != d->file_id
        || d->id_offset + d->id_length > d->size)
    {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "solgate: cached block \"%s\" is not the file its "
                      "index describes; dropped from the cache, asking the "
                      "next source", d->path.data);
        /* not held until the request ends (a whole proxied answer) */
        cln->handler = NULL;
        ngx_close_file(fd);
        return NGX_DECLINED;
    }

    file = ngx_pcalloc(r->pool, sizeof(ngx_file_t));
    head = ngx_calloc_buf(r->pool);
    rest = ngx_create_temp_buf(r->pool, d->id.len + tail_len);

    if (file == NULL || head == NULL || rest == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    file->fd = fd;
    file->name.data = (u_char *) d->path.data;
    file->name.len = d->path.len;
    file->log = r->connection->log;

    rest->last = ngx_cpymem(rest->pos, d->id.data, d->id.len);

    /* the bytes after the id: a few, read once (the file is in cache) */
    n = ngx_read_file(file, rest->last, tail_len, tail_at);

    if (n != (ssize_t) tail_len) {
        cln->handler = NULL;
        ngx_close_file(fd);
        return NGX_DECLINED;
    }

    rest->last += tail_len;
    rest->last_buf = (r == r->main) ? 1 : 0;
    rest->last_in_chain = 1;

    head->in_file = 1;
    head->file = file;
    head->file_pos = 0;
    head->file_last = (off_t) d->id_offset;

    out[0].buf = head;
    out[0].next = &out[1];
    out[1].buf = rest;
    out[1].next = NULL;

    ctx->answered = 1;
    sg_blocks_served(ctx->network->blocks->core, ctx->block_call,
                     ngx_http_solgate_wall_ms());

    rc = ngx_http_solgate_send_json_header(r, NGX_HTTP_OK,
                                           (off_t) (d->size - d->id_length
                                                    + d->id.len));

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    return ngx_http_output_filter(r, &out[0]);
}


/* The peer becomes this attempt's upstream for $solgate_upstream_url. */
/*
 * The ledger and the peers get the call as libcore parsed it, written
 * anew, never the client's bytes (which another parser could read
 * otherwise); a call without a variant goes as it came.
 */
static ngx_int_t
ngx_http_solgate_blocks_forward_body(ngx_http_request_t *r,
    sg_blocks_decision_t *d)
{
    if (d->body.len == 0) {
        return NGX_OK;
    }

    return ngx_http_solgate_replace_body(r, d->body);
}


static ngx_int_t
ngx_http_solgate_blocks_peer_attempt(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_blocks_decision_t *d)
{
    ngx_http_solgate_upstream_t  *peers;
    ngx_http_solgate_blocks_t    *b;

    b = ctx->network->blocks;
    peers = b->peers.elts;

    /* the peers are in configuration order, as libcore has them */
    if (d->peer >= b->peers.nelts) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->upstream = &peers[d->peer];
    ctx->peer_attempt = 1;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate blocks: asking region \"%V\"",
                   &ctx->upstream->id);

    return NGX_DECLINED;
}


/* A 200 from the ledger or a region: count it, copy it into the cache. */
ngx_int_t
ngx_http_solgate_blocks_header(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    int                         encoded;
    ngx_http_solgate_blocks_t  *b;

    b = ctx->network->blocks;

    if (b == NULL || ctx->block_call == NULL || ctx->block_served) {
        return NGX_OK;
    }

    ctx->block_served = 1;
    sg_blocks_served(b->core, ctx->block_call, ngx_http_solgate_wall_ms());

    encoded = r->headers_out.content_encoding != NULL
              && r->headers_out.content_encoding->value.len > 0;

    (void) sg_capture_start(b->core, ctx->block_call, encoded,
                            (int64_t) ngx_current_msec, &ctx->capture);

    return NGX_OK;
}


void
ngx_http_solgate_blocks_body(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_chain_t *in)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    for (cl = in; cl && ctx->capture; cl = cl->next) {
        b = cl->buf;

        if (ngx_buf_special(b) && !ngx_http_solgate_is_last(r, b)) {
            continue;
        }

        if (!ngx_buf_in_memory(b) && ngx_buf_size(b) > 0) {
            /* a body spooled to a file is not copied: let it go */
            sg_capture_free(ctx->capture);
            ctx->capture = NULL;
            return;
        }

        if (ngx_buf_size(b) > 0
            && sg_capture_write(ctx->capture, (char *) b->pos,
                                b->last - b->pos)
               != SG_OK)
        {
            sg_capture_free(ctx->capture);
            ctx->capture = NULL;
            return;
        }

        if (ngx_http_solgate_is_last(r, b)) {
            /* checked and stored on the poller thread */
            sg_capture_commit(ctx->capture, ngx_http_solgate_wall_ms());
            ctx->capture = NULL;
        }
    }
}


static ngx_int_t
ngx_http_solgate_blocks_value(ngx_http_request_t *r,
    ngx_http_complex_value_t *cv, sg_str_t *out)
{
    ngx_str_t  value;

    if (ngx_http_complex_value(r, cv, &value) != NGX_OK) {
        return NGX_ERROR;
    }

    out->data = (char *) value.data;
    out->len = value.len;

    return NGX_OK;
}
