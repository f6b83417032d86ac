/*
 * Fan-out: broadcast, consensus and hedge send one call to several
 * upstreams as in-memory subrequests through the same location (so
 * proxy_pass, keepalive, TLS and timeouts stay nginx's).  libcore says
 * whom to ask, when a hedge goes out and when the answer is decided; each
 * attempt's end is reported to it as it comes.  Once decided, the attempts
 * still running are cancelled, and when none is left the client gets
 * libcore's answer.  A subrequest never takes an error_page: its failure
 * is its status.  Its answer is read from its in-memory output, so it must
 * fit in subrequest_output_buffer_size; a larger one fails the attempt
 * (never the client's request, as nginx's own "too big subrequest
 * response" would).
 */

#include "ngx_http_solgate_module.h"


struct ngx_http_solgate_attempt_s {
    ngx_http_request_t      *sr;
    ngx_http_solgate_ctx_t  *parent;
    size_t                   upstream;
    off_t                    received;      /* answer bytes kept so far */
    unsigned                 ended:1;
    unsigned                 cancelled:1;
    unsigned                 discard:1;     /* not a 200: its body unused */
    unsigned                 too_big:1;     /* over the in-memory buffer */
    unsigned                 complete:1;    /* its answer's end came */
};


/* how soon to try again to cancel an attempt that had no connection yet */
#define NGX_HTTP_SOLGATE_CANCEL_RETRY  50


struct ngx_http_solgate_fanout_s {
    ngx_array_t              attempts;      /* ngx_http_solgate_attempt_t * */
    ngx_uint_t               running;       /* attempts not ended */
    ngx_msec_t               hedge_after;
    ngx_event_t              hedge_timer;
    ngx_event_t              cancel_event;
    size_t                   launch;        /* a failover libcore asked for */
    unsigned                 launch_wanted:1;
    unsigned                 decided:1;
    unsigned                 cancelling:1;
};


static ngx_int_t ngx_http_solgate_fanout_launch(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, size_t upstream);
static ngx_int_t ngx_http_solgate_fanout_done(ngx_http_request_t *sr,
    void *data, ngx_int_t rc);
static void ngx_http_solgate_fanout_end_of(ngx_http_solgate_attempt_t *a,
    ngx_int_t rc, sg_attempt_end_t *end);
static void ngx_http_solgate_fanout_too_big(ngx_http_solgate_attempt_t *a,
    off_t size);
static void ngx_http_solgate_fanout_hedge(ngx_event_t *ev);
static void ngx_http_solgate_fanout_cancel(ngx_event_t *ev);
static void ngx_http_solgate_fanout_cancel_attempt(ngx_http_request_t *r,
    ngx_http_solgate_attempt_t *a);
static void ngx_http_solgate_fanout_not_started(ngx_http_solgate_ctx_t *ctx,
    size_t upstream);
static void ngx_http_solgate_fanout_cleanup(void *data);


ngx_int_t
ngx_http_solgate_fanout_start(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, const sg_fanout_t *plan, size_t *targets)
{
    size_t                       i;
    ngx_http_cleanup_t          *cln;
    ngx_http_solgate_fanout_t   *fo;

    fo = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_fanout_t));
    cln = ngx_http_cleanup_add(r, 0);

    if (fo == NULL || cln == NULL
        || ngx_array_init(&fo->attempts, r->pool, plan->n + 1,
                          sizeof(ngx_http_solgate_attempt_t *))
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    fo->hedge_timer.handler = ngx_http_solgate_fanout_hedge;
    fo->hedge_timer.data = r;
    fo->hedge_timer.log = r->connection->log;
    fo->cancel_event.handler = ngx_http_solgate_fanout_cancel;
    fo->cancel_event.data = r;
    fo->cancel_event.log = r->connection->log;

    cln->handler = ngx_http_solgate_fanout_cleanup;
    cln->data = fo;

    ctx->fanout = fo;

    for (i = 0; i < plan->n; i++) {
        if (ngx_http_solgate_fanout_launch(r, ctx, targets[i]) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (plan->kind == SG_FANOUT_HEDGE) {
        fo->hedge_after = plan->hedge_after_ms;
        ngx_add_timer(&fo->hedge_timer, fo->hedge_after);
    }

    /* a client that leaves once no subrequest is the active one */
    r->read_event_handler = ngx_http_test_reading;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate fan-out: kind %d to %uz upstream(s)",
                   (int) plan->kind, plan->n);

    return NGX_AGAIN;
}


/* The same call, to `upstream`, as an in-memory subrequest. */
static ngx_int_t
ngx_http_solgate_fanout_launch(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, size_t upstream)
{
    ngx_http_request_t            *sr;
    ngx_http_solgate_ctx_t        *sctx;
    ngx_http_post_subrequest_t    *ps;
    ngx_http_solgate_upstream_t   *upstreams;
    ngx_http_solgate_attempt_t    *a, **slot;

    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
    a = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_attempt_t));
    sctx = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_ctx_t));

    if (ps == NULL || a == NULL || sctx == NULL) {
        return NGX_ERROR;
    }

    a->parent = ctx;
    a->upstream = upstream;
    ps->handler = ngx_http_solgate_fanout_done;
    ps->data = a;

    if (ngx_http_subrequest(r, &r->uri, &r->args, &sr, ps,
                            NGX_HTTP_SUBREQUEST_IN_MEMORY
                            |NGX_HTTP_SUBREQUEST_WAITED)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    sr->method = r->method;
    sr->method_name = r->method_name;
    sr->error_page = 1;

    upstreams = ctx->network->upstreams.elts;
    sctx->network = ctx->network;
    sctx->upstream = &upstreams[upstream];
    ngx_http_set_ctx(sr, sctx, ngx_http_solgate_module);

    slot = ngx_array_push(&ctx->fanout->attempts);
    if (slot == NULL) {
        return NGX_ERROR;   /* the subrequest runs; its end is reported */
    }

    a->sr = sr;
    sctx->attempt = a;
    *slot = a;
    ctx->fanout->running++;

    return NGX_OK;
}


/*
 * The access phase, run again as subrequests end: starts the failover
 * libcore asked for, cancels what is left once the answer is decided, and
 * answers when no attempt is running.
 */
ngx_int_t
ngx_http_solgate_fanout_continue(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    sg_route_t                  route;
    ngx_http_solgate_fanout_t  *fo = ctx->fanout;

    if (fo->launch_wanted) {
        fo->launch_wanted = 0;

        if (ngx_http_solgate_fanout_launch(r, ctx, fo->launch) != NGX_OK) {
            ngx_http_solgate_fanout_not_started(ctx, fo->launch);
        }
    }

    if (fo->running > 0) {
        if (fo->decided && !fo->cancelling) {
            /* not from inside this phase: a cancelled subrequest ends at
             * once, and its end wakes this request again */
            fo->cancelling = 1;
            ngx_post_event(&fo->cancel_event, &ngx_posted_events);
        }

        return NGX_AGAIN;
    }

    ngx_http_solgate_fanout_cleanup(fo);
    ctx->fanout = NULL;

    if (sg_request_fanout_answer(ctx->rpc, &route) != SG_OK) {
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
ngx_http_solgate_fanout_done(ngx_http_request_t *sr, void *data,
    ngx_int_t rc)
{
    ngx_http_solgate_attempt_t *a = data;

    sg_fanout_step_t            step;
    sg_attempt_end_t            end;
    ngx_http_solgate_fanout_t  *fo;

    if (a->ended || rc == NGX_AGAIN) {
        return rc;
    }

    a->ended = 1;
    fo = a->parent->fanout;

    if (fo == NULL) {
        return rc;
    }

    fo->running--;

    /* the client went away: nothing the upstream did, no say either */
    if (rc == NGX_HTTP_CLIENT_CLOSED_REQUEST
        || rc == NGX_HTTP_REQUEST_TIME_OUT || sr->connection->error)
    {
        a->cancelled = 1;
    }

    ngx_http_solgate_fanout_end_of(a, rc, &end);

    if (sg_request_fanout_report(a->parent->rpc, a->upstream, &end,
                                 a->cancelled, (int64_t) ngx_current_msec,
                                 &step)
        == SG_OK)
    {
        fo->decided = fo->decided || step.decided;

        if (step.launch) {
            fo->launch = step.upstream;
            fo->launch_wanted = 1;
        }
    }

    ngx_log_debug4(NGX_LOG_DEBUG_HTTP, sr->connection->log, 0,
                   "solgate fan-out: upstream %uz ended with %ui%s, "
                   "%ui running", a->upstream, (ngx_uint_t) end.http_status,
                   a->cancelled ? " (cancelled)" : "", fo->running);

    /*
     * The attempt is over whatever happened to it: a failure after its
     * header (an answer too big for its buffer, a cancel) must end the
     * subrequest, not the client's request, as NGX_ERROR would.
     */
    if (rc == NGX_ERROR || rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        return sr->header_sent ? NGX_OK
                               : (rc == NGX_ERROR ? NGX_HTTP_BAD_GATEWAY : rc);
    }

    return rc;
}


/* How the subrequest ended, with its whole answer when it gave one. */
static void
ngx_http_solgate_fanout_end_of(ngx_http_solgate_attempt_t *a, ngx_int_t rc,
    sg_attempt_end_t *end)
{
    ngx_buf_t                  *b;
    ngx_http_request_t         *sr = a->sr;
    ngx_http_upstream_t        *u;
    ngx_http_upstream_state_t  *state;

    ngx_memzero(end, sizeof(sg_attempt_end_t));
    end->connected = 1;
    end->http_status = rc >= NGX_HTTP_SPECIAL_RESPONSE ? (unsigned) rc : 0;

    u = sr->upstream;

    if (u != NULL && u->headers_in.status_n > 0) {
        end->http_status = (unsigned) u->headers_in.status_n;
    }

    state = ngx_http_solgate_last_state(sr);

    if (state != NULL && state->header_time == (ngx_msec_t) -1) {
        end->timed_out = rc == NGX_HTTP_GATEWAY_TIME_OUT;
        end->connected = state->connect_time != (ngx_msec_t) -1;
        end->http_status = 0;
    }

    /*
     * An answer cut off while its body came (the upstream closed, timed out
     * or was cancelled) ends with a flush, never with the last buffer: it
     * is no answer.
     */
    if (rc == NGX_ERROR || (rc >= NGX_HTTP_SPECIAL_RESPONSE && sr->header_sent)
        || (end->http_status == NGX_HTTP_OK && !a->complete))
    {
        end->http_status = 0;
        return;
    }

    if (a->too_big) {
        return;   /* it answered: no vote, and no fault of the node's */
    }

    if (end->http_status == NGX_HTTP_OK && sr->out != NULL) {
        b = sr->out->buf;
        end->answer.data = (char *) b->pos;
        end->answer.len = b->last - b->pos;
    }
}


/* after= passed without a decided answer: libcore may send another. */
static void
ngx_http_solgate_fanout_hedge(ngx_event_t *ev)
{
    int                         again;
    size_t                      upstream;
    ngx_connection_t           *c;
    ngx_http_request_t         *r = ev->data;
    ngx_http_solgate_ctx_t     *ctx;
    ngx_http_solgate_fanout_t  *fo;

    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);
    fo = ctx != NULL ? ctx->fanout : NULL;

    if (fo == NULL || fo->decided || c->error) {
        return;
    }

    if (sg_request_hedge(ctx->rpc, (int64_t) ngx_current_msec, &upstream,
                         &again)
        != SG_OK)
    {
        return;
    }

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "solgate hedge: no answer yet, also asking upstream %uz",
                   upstream);

    if (ngx_http_solgate_fanout_launch(r, ctx, upstream) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, c->log, 0,
                      "solgate hedge: could not start a subrequest");
        ngx_http_solgate_fanout_not_started(ctx, upstream);
        return;
    }

    if (again) {
        ngx_add_timer(&fo->hedge_timer, fo->hedge_after);
    }

    ngx_http_run_posted_requests(c);
}


/* A posted event, so no request's handler is on the stack. */
static void
ngx_http_solgate_fanout_cancel(ngx_event_t *ev)
{
    ngx_uint_t                   i, waiting;
    ngx_connection_t            *c;
    ngx_http_request_t          *r = ev->data;
    ngx_http_solgate_ctx_t      *ctx;
    ngx_http_solgate_attempt_t **attempts;

    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    if (ctx == NULL || ctx->fanout == NULL) {
        return;
    }

    attempts = ctx->fanout->attempts.elts;
    waiting = 0;

    for (i = 0; i < ctx->fanout->attempts.nelts; i++) {
        if (!attempts[i]->ended && !attempts[i]->cancelled) {
            ngx_http_solgate_fanout_cancel_attempt(r, attempts[i]);
            waiting += !attempts[i]->ended && !attempts[i]->cancelled;
        }
    }

    /* one not connected yet (a name being resolved): again shortly */
    if (waiting > 0 && !ctx->fanout->cancel_event.timer_set) {
        ngx_add_timer(&ctx->fanout->cancel_event,
                      NGX_HTTP_SOLGATE_CANCEL_RETRY);
    }

    ngx_http_run_posted_requests(c);
}


/*
 * Ends an attempt whose answer is no longer wanted through nginx's own
 * timeout path (the upstream connection is closed, the subrequest ends
 * with 504 and reports itself as cancelled), without the "upstream timed
 * out" error line that would otherwise follow every won race.  One not
 * connected yet is left to end by itself.
 */
static void
ngx_http_solgate_fanout_cancel_attempt(ngx_http_request_t *r,
    ngx_http_solgate_attempt_t *a)
{
    ngx_uint_t            level;
    ngx_connection_t     *c;
    ngx_http_upstream_t  *u;

    u = a->sr->upstream;

    if (u == NULL || u->peer.connection == NULL
        || u->read_event_handler == NULL)
    {
        return;
    }

    a->cancelled = 1;
    c = r->connection;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "solgate fan-out: cancelling the attempt on upstream %uz",
                   a->upstream);

    u->peer.tries = 1;      /* no next upstream for it */
    u->peer.connection->read->timedout = 1;

    level = c->log->log_level;
    c->log->log_level = NGX_LOG_CRIT;
    ngx_http_set_log_request(c->log, a->sr);

    u->read_event_handler(a->sr, u);

    c->log->log_level = level;
    ngx_http_set_log_request(c->log, r);
}


/*
 * An attempt's header: its body is read without the event pipe, which
 * lets only the active subrequest write its buffers out (another one
 * would wait for ever once they are full); one that is not a 200, or says
 * it is too big to keep, is read and dropped.
 */
ngx_int_t
ngx_http_solgate_fanout_header(ngx_http_request_t *sr,
    ngx_http_solgate_attempt_t *a)
{
    ngx_http_core_loc_conf_t  *clcf;

    if (sr->upstream != NULL) {
        sr->upstream->buffering = 0;
    }

    clcf = ngx_http_get_module_loc_conf(sr, ngx_http_core_module);

    if (sr->headers_out.status != NGX_HTTP_OK) {
        a->discard = 1;

    } else if (sr->headers_out.content_length_n
               > (off_t) clcf->subrequest_output_buffer_size)
    {
        ngx_http_solgate_fanout_too_big(a, sr->headers_out.content_length_n);
    }

    return ngx_http_solgate_next_header_filter(sr);
}


/* An attempt's body: kept in memory up to subrequest_output_buffer_size. */
ngx_int_t
ngx_http_solgate_fanout_body(ngx_http_request_t *sr,
    ngx_http_solgate_attempt_t *a, ngx_chain_t *in)
{
    off_t                      size;
    ngx_chain_t               *cl;
    ngx_http_core_loc_conf_t  *clcf;

    for (cl = in; cl; cl = cl->next) {
        if (cl->buf->last_in_chain || cl->buf->last_buf) {
            a->complete = 1;
        }
    }

    if (!a->discard) {
        size = 0;

        for (cl = in; cl; cl = cl->next) {
            if (!ngx_buf_special(cl->buf)) {
                size += ngx_buf_size(cl->buf);
            }
        }

        clcf = ngx_http_get_module_loc_conf(sr, ngx_http_core_module);

        if (a->received + size <= (off_t) clcf->subrequest_output_buffer_size)
        {
            a->received += size;
            return ngx_http_solgate_next_body_filter(sr, in);
        }

        ngx_http_solgate_fanout_too_big(a, a->received + size);
    }

    for (cl = in; cl; cl = cl->next) {
        cl->buf->pos = cl->buf->last;
        cl->buf->file_pos = cl->buf->file_last;
    }

    return NGX_OK;
}


static void
ngx_http_solgate_fanout_too_big(ngx_http_solgate_attempt_t *a, off_t size)
{
    ngx_http_core_loc_conf_t     *clcf;
    ngx_http_solgate_upstream_t  *upstreams;

    clcf = ngx_http_get_module_loc_conf(a->sr, ngx_http_core_module);
    upstreams = a->parent->network->upstreams.elts;

    a->discard = 1;
    a->too_big = 1;

    ngx_log_error(NGX_LOG_ERR, a->sr->connection->log, 0,
                  "solgate: the answer of upstream \"%V\" (%O bytes or "
                  "more) is larger than subrequest_output_buffer_size %uz; "
                  "that attempt gets no say", &upstreams[a->upstream].id,
                  size, clcf->subrequest_output_buffer_size);
}


/* libcore counted an attempt that never started: it ends, with no say */
static void
ngx_http_solgate_fanout_not_started(ngx_http_solgate_ctx_t *ctx,
    size_t upstream)
{
    sg_fanout_step_t  step;
    sg_attempt_end_t  end;

    ngx_memzero(&end, sizeof(sg_attempt_end_t));

    if (sg_request_fanout_report(ctx->rpc, upstream, &end, 1,
                                 (int64_t) ngx_current_msec, &step)
        == SG_OK)
    {
        ctx->fanout->decided = ctx->fanout->decided || step.decided;
    }
}


static void
ngx_http_solgate_fanout_cleanup(void *data)
{
    ngx_http_solgate_fanout_t *fo = data;

    if (fo->hedge_timer.timer_set) {
        ngx_del_timer(&fo->hedge_timer);
    }

    if (fo->cancel_event.posted) {
        ngx_delete_posted_event(&fo->cancel_event);
    }

    if (fo->cancel_event.timer_set) {
        ngx_del_timer(&fo->cancel_event);
    }
}
