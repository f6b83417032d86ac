/*
 * The per-request context.  An internal redirect (to @solgate_retry)
 * clears r->ctx, so the context is anchored in the request pool through
 * the cleanup that frees it, and found there again (the realip pattern).
 * The subrequests of a batch that goes call by call share that pool, each
 * with a context of its own: a context knows its request.
 */

#include "ngx_http_solgate_module.h"


static void ngx_http_solgate_cleanup_ctx(void *data);


ngx_http_solgate_ctx_t *
ngx_http_solgate_get_ctx(ngx_http_request_t *r)
{
    ngx_pool_cleanup_t      *cln;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    if (ctx != NULL || !r->internal) {
        return ctx;
    }

    for (cln = r->pool->cleanup; cln; cln = cln->next) {
        if (cln->handler == ngx_http_solgate_cleanup_ctx
            && ((ngx_http_solgate_ctx_t *) cln->data)->owner == r)
        {
            ctx = cln->data;
            ngx_http_set_ctx(r, ctx, ngx_http_solgate_module);
            return ctx;
        }
    }

    return NULL;
}


ngx_http_solgate_ctx_t *
ngx_http_solgate_create_ctx(ngx_http_request_t *r)
{
    ngx_pool_cleanup_t      *cln;
    ngx_http_solgate_ctx_t  *ctx;

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_http_solgate_ctx_t));
    if (cln == NULL) {
        return NULL;
    }

    ctx = cln->data;
    ngx_memzero(ctx, sizeof(ngx_http_solgate_ctx_t));
    ctx->owner = r;

    cln->handler = ngx_http_solgate_cleanup_ctx;
    ngx_http_set_ctx(r, ctx, ngx_http_solgate_module);

    return ctx;
}


/*
 * The request sleeps on its context's own timer (a piece's retry delay, a
 * getBlock waiting for another's fetch), which its end deletes; a client
 * that leaves meanwhile is noticed.
 */
void
ngx_http_solgate_sleep(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    ngx_event_handler_pt wake, ngx_msec_t ms)
{
    r->read_event_handler = ngx_http_test_reading;

    ctx->retry_timer.handler = wake;
    ctx->retry_timer.data = r;
    ctx->retry_timer.log = r->connection->log;
    ngx_add_timer(&ctx->retry_timer, ms);
}


static void
ngx_http_solgate_cleanup_ctx(void *data)
{
    ngx_http_solgate_ctx_t  *ctx = data;

    if (ctx->retry_timer.timer_set) {
        ngx_del_timer(&ctx->retry_timer);
    }

    if (ctx->response != NULL) {
        sg_response_free(ctx->response);   /* it reads the request's */
        ctx->response = NULL;
    }

    /* a capture still open here belongs to a response cut short */
    sg_capture_free(ctx->capture);
    sg_block_call_free(ctx->block_call);
    sg_request_free(ctx->rpc);

    ctx->capture = NULL;
    ctx->block_call = NULL;
    ctx->rpc = NULL;
}
