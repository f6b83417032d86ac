/*
 * The access phase: read the JSON-RPC body, hand it to libcore, then
 * either send libcore's answer or point proxy_pass at the upstream it
 * picked.
 *
 * Failover: solgate_proxy.conf sends 429, 500, 502, 503 and 504 (and
 * transport errors, which proxy reports as 502/504) to a named location
 * that runs this handler again.  Each attempt's end is reported to
 * libcore (passive health: max_fails, a 429's Retry-After).  The context survives that redirect, and libcore's
 * request remembers the upstreams already tried, so the next attempt goes
 * to another one; when none is left the client gets libcore's answer.
 */

#include "ngx_http_solgate_module.h"


static void ngx_http_solgate_body_handler(ngx_http_request_t *r);
static void ngx_http_solgate_go_on(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, ngx_int_t rc);
static ngx_int_t ngx_http_solgate_ws_route(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_wait_to_retry(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static void ngx_http_solgate_retry_after_wait(ngx_http_request_t *r);
static void ngx_http_solgate_piece_retry(ngx_event_t *ev);
static ngx_int_t ngx_http_solgate_retry(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_route(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_route_parsed(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_attempt(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_fail_all(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static void ngx_http_solgate_log_no_data(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_answer(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_route_t *route);
static ngx_int_t ngx_http_solgate_reject_method(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_json_post(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_selector_sources(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_selector_sources_t *sources);
static ngx_uint_t ngx_http_solgate_last_status(ngx_http_request_t *r);
static sg_str_t ngx_http_solgate_whole_answer(ngx_http_upstream_t *u);
static u_char *ngx_http_solgate_log_error(ngx_http_request_t *r,
    ngx_http_request_t *sr, u_char *buf, size_t len);
/* nginx's own log context of a request, which Solgate's wraps */
static ngx_http_log_handler_pt  ngx_http_solgate_core_log_error;


static ngx_int_t ngx_http_solgate_write_not_retried(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);


/*
 * NGX_AGAIN from routing means a fan-out or a retry delay is under way,
 * unless the request was answered: then it is the answer's output waiting
 * for the client to read (a body larger than the socket buffer), and the
 * request is finalized so that nginx's writer sends the rest.
 */
static ngx_inline ngx_uint_t
ngx_http_solgate_waiting(ngx_http_solgate_ctx_t *ctx, ngx_int_t rc)
{
    return rc == NGX_AGAIN && !ctx->answered;
}


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
        /* phases re-run after the body was read, or as subrequests end */
        return ctx->fanout != NULL ? ngx_http_solgate_fanout_continue(r, ctx)
                                   : ctx->status;
    }

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx != NULL) {
        ngx_http_solgate_dispatch_restore_uri(r, ctx);
    }

    if (ctx != NULL && ctx->rpc != NULL) {
        /* back from the retry redirect: the last attempt failed */
        rc = ngx_http_solgate_retry(r, ctx);

        if (rc == NGX_DECLINED || ngx_http_solgate_waiting(ctx, rc)) {
            return rc;
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

    if (r->log_handler != ngx_http_solgate_log_error) {
        ngx_http_solgate_core_log_error = r->log_handler;
        r->log_handler = ngx_http_solgate_log_error;
    }

    if (ngx_http_solgate_ws_requested(r)) {
        rc = ngx_http_solgate_ws_refuse(r, ctx);

        if (rc != NGX_DECLINED) {
            ngx_http_finalize_request(r, rc);
            return NGX_DONE;
        }

        return ngx_http_solgate_ws_route(r, ctx);
    }

    if (!(r->method & NGX_HTTP_POST)) {
        ctx->cors_origin = ngx_http_solgate_cors_origin(r);

        rc = (r->method & NGX_HTTP_OPTIONS)
             ? ngx_http_solgate_cors_preflight(r, ctx) : NGX_DECLINED;

        ngx_http_finalize_request(r, rc != NGX_DECLINED
                                     ? rc
                                     : ngx_http_solgate_reject_method(r, ctx));
        return NGX_DONE;
    }

    rc = ngx_http_solgate_json_post(r, ctx);

    if (rc != NGX_DECLINED) {
        ngx_http_finalize_request(r, rc);
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


/*
 * The precontent phase, for a call (or run of calls) of a batch that goes
 * call by call: a subrequest, which the access phase skips.  Its body is
 * there already, so it is routed at once; it then goes on as the access
 * handler does, on re-entry and back from @solgate_retry.  Other
 * subrequests (a fan-out's attempts) pass.
 */
ngx_int_t
ngx_http_solgate_piece_handler(ngx_http_request_t *r)
{
    ngx_int_t                     rc;
    ngx_http_solgate_ctx_t       *ctx;
    ngx_http_solgate_loc_conf_t  *slcf;

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (slcf->network == NULL || r == r->main) {
        return NGX_DECLINED;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    if (ctx == NULL) {
        ctx = ngx_http_solgate_get_ctx(r);

        if (ctx == NULL || !ctx->is_piece || ctx->rpc == NULL) {
            return NGX_DECLINED;
        }

        /* back from the retry redirect: the last attempt failed */
        rc = ngx_http_solgate_retry(r, ctx);

        if (rc == NGX_DECLINED || ngx_http_solgate_waiting(ctx, rc)) {
            return rc;
        }

        ngx_http_finalize_request(r, rc);
        return NGX_DONE;
    }

    if (!ctx->is_piece) {
        return NGX_DECLINED;
    }

    if (ctx->started) {
        return ctx->fanout != NULL ? ngx_http_solgate_fanout_continue(r, ctx)
                                   : ctx->status;
    }

    ctx->started = 1;
    r->write_event_handler = ngx_http_core_run_phases;

    rc = ngx_http_solgate_route(r, ctx);

    if (rc == NGX_DECLINED || ngx_http_solgate_waiting(ctx, rc)) {
        /* AGAIN: a fan-out, whose attempts wake this subrequest */
        ctx->status = rc;
        return rc;
    }

    ngx_http_finalize_request(r, rc);
    return NGX_DONE;
}


/* A WebSocket upgrade has no body: it is routed at once. */
static ngx_int_t
ngx_http_solgate_ws_route(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    ngx_int_t  rc;

    ctx->websocket = 1;

    rc = ngx_http_solgate_route(r, ctx);

    if (rc == NGX_DECLINED) {
        ctx->status = NGX_DECLINED;
        return NGX_DECLINED;
    }

    ngx_http_finalize_request(r, rc);
    return NGX_DONE;
}


static void
ngx_http_solgate_body_handler(ngx_http_request_t *r)
{
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    ngx_http_solgate_go_on(r, ctx, ngx_http_solgate_route(r, ctx));
}


/*
 * A getBlock that waited for another request's fetch of its block was
 * decided (rc as from Cube Runner's step of routing): the ledger's turn
 * is routed as usual, then the request goes on as after its body.
 */
void
ngx_http_solgate_resume(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    ngx_int_t rc)
{
    if (rc == NGX_DECLINED && !ctx->peer_attempt) {
        rc = ngx_http_solgate_route_parsed(r, ctx);
    }

    ngx_http_solgate_go_on(r, ctx, rc);
}


/* The main request routed (rc): forward, wait, or finalize with rc. */
static void
ngx_http_solgate_go_on(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    ngx_int_t rc)
{
    if (ngx_http_solgate_waiting(ctx, rc)) {
        /* a fan-out (the phases run again as its subrequests end), or a
         * getBlock waiting for another's fetch (its timer resumes it) */
        ctx->status = NGX_AGAIN;
        r->write_event_handler = ngx_http_core_run_phases;
        return;
    }

    if (rc != NGX_DECLINED) {
        ngx_http_finalize_request(r, rc);
        return;
    }

    ctx->status = NGX_DECLINED;
    r->preserve_body = 1;
    r->write_event_handler = ngx_http_core_run_phases;
    ngx_http_core_run_phases(r);
}


/*
 * retry_missing_data's delay= before asking the next upstream: the request
 * sleeps on its write event (as limit_req's delay does), then the phases
 * run on from this access handler with the attempt decided.
 */
static ngx_int_t
ngx_http_solgate_wait_to_retry(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate access handler: next attempt in %M ms",
                   ctx->retry_delay);

    ctx->status = NGX_AGAIN;

    if (r != r->main) {
        /* a piece of a batch: the connection's write events are the
         * client's; a client that leaves meanwhile is noticed */
        ngx_http_solgate_sleep(r, ctx, ngx_http_solgate_piece_retry,
                               ctx->retry_delay);

        return NGX_AGAIN;
    }

    r->read_event_handler = ngx_http_test_reading;
    r->write_event_handler = ngx_http_solgate_retry_after_wait;
    r->connection->write->delayed = 1;
    ngx_add_timer(r->connection->write, ctx->retry_delay);

    return NGX_AGAIN;
}


static void
ngx_http_solgate_retry_after_wait(ngx_http_request_t *r)
{
    ngx_int_t                rc;
    ngx_event_t             *wev;
    ngx_http_solgate_ctx_t  *ctx;

    wev = r->connection->write;

    if (wev->delayed && !wev->timedout) {
        if (ngx_handle_write_event(wev, 0) != NGX_OK) {
            ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
        }
        return;
    }

    wev->delayed = 0;
    wev->timedout = 0;

    if (ngx_handle_read_event(r->connection->read, 0) != NGX_OK) {
        ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }

    ctx = ngx_http_solgate_get_ctx(r);
    ctx->retry_delay = 0;

    rc = ngx_http_solgate_attempt(r, ctx);

    if (rc != NGX_DECLINED) {
        ngx_http_finalize_request(r, rc);
        return;
    }

    /* the access handler, run again, answers ctx->status: forward */
    ctx->status = NGX_DECLINED;

    r->read_event_handler = ngx_http_block_reading;
    r->write_event_handler = ngx_http_core_run_phases;
    ngx_http_core_run_phases(r);
}


static void
ngx_http_solgate_piece_retry(ngx_event_t *ev)
{
    ngx_int_t                rc;
    ngx_connection_t        *c;
    ngx_http_request_t      *r = ev->data;
    ngx_http_solgate_ctx_t  *ctx;

    c = r->connection;

    if (c->error) {
        return;     /* the client left: the batch is being ended */
    }

    ngx_http_set_log_request(c->log, r);
    r->read_event_handler = ngx_http_block_reading;

    ctx = ngx_http_solgate_get_ctx(r);
    ctx->retry_delay = 0;

    rc = ngx_http_solgate_attempt(r, ctx);

    if (rc != NGX_DECLINED) {
        ngx_http_finalize_request(r, rc);

    } else {
        /* the piece handler, run again, answers ctx->status: forward */
        ctx->status = NGX_DECLINED;
        ngx_http_core_run_phases(r);
    }

    ngx_http_run_posted_requests(c);
}


/* NGX_DECLINED to forward to the next attempt, else what to finalize with */
static ngx_int_t
ngx_http_solgate_retry(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    ngx_int_t  rc;

    if (!ctx->peer_attempt) {
        if (ngx_http_solgate_report_attempt(r, ctx) == NGX_DONE) {
            return ngx_http_solgate_write_not_retried(r, ctx);
        }

        if (ctx->retry_delay > 0) {
            return ngx_http_solgate_wait_to_retry(r, ctx);
        }

        return ngx_http_solgate_attempt(r, ctx);
    }

    rc = ngx_http_solgate_blocks_retry(r, ctx);

    if (rc == NGX_DECLINED && !ctx->peer_attempt) {
        return NGX_HTTP_BAD_GATEWAY;    /* no source after a region */
    }

    return rc;                          /* the next region, or an answer */
}


/* NGX_DECLINED to forward, else what to finalize the request with */
static ngx_int_t
ngx_http_solgate_route(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    size_t      len;
    u_char     *data;
    ngx_int_t   rc;

    if (ctx->websocket) {
        rc = sg_request_subscription(&ctx->rpc);

    } else if (ngx_http_solgate_body_bytes(r, &data, &len) == NGX_OK) {
        rc = sg_request_parse((char *) data, len, &ctx->rpc);

    } else {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rc != SG_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "solgate: could not parse the request (out of memory)");
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ctx->run) {
        sg_request_set_run(ctx->rpc);
    }

    if (ctx->network->blocks != NULL && !ctx->websocket) {
        rc = ngx_http_solgate_blocks_route(r, ctx);

        if (rc != NGX_DECLINED || ctx->peer_attempt) {
            /* answered, to another region, or waiting for another's fetch */
            return rc;
        }
    }

    return ngx_http_solgate_route_parsed(r, ctx);
}


/* The parsed request past Cube Runner: answered, fanned out or forwarded. */
static ngx_int_t
ngx_http_solgate_route_parsed(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    size_t                 targets[NGX_HTTP_SOLGATE_MAX_FANOUT];
    sg_route_t             route;
    sg_fanout_t            fanout;
    sg_selector_sources_t  sources;

    if (ngx_http_solgate_selector_sources(r, ctx, &sources) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (sg_request_route(ctx->rpc, ctx->network->core, &sources,
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

    if (route.pieces > 0 && r == r->main) {
        return ngx_http_solgate_pieces_start(r, ctx, route.pieces);
    }

    if (route.fan_out) {
        if (sg_request_fanout(ctx->rpc, (int64_t) ngx_current_msec, targets,
                              NGX_HTTP_SOLGATE_MAX_FANOUT, &fanout)
            != SG_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        if (fanout.kind != SG_FANOUT_NONE) {
            return ngx_http_solgate_fanout_start(r, ctx, &fanout, targets);
        }
    }

    if (route.body.len > 0
        && ngx_http_solgate_replace_body(r, route.body) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->batch_split = route.merged ? 1 : 0;

    return ngx_http_solgate_attempt(r, ctx);
}


static ngx_int_t
ngx_http_solgate_attempt(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    int                           rc;
    sg_pick_t                     pick;
    ngx_uint_t                    status;
    ngx_http_solgate_network_t   *network;
    ngx_http_solgate_upstream_t  *upstreams;

    network = ctx->network;
    upstreams = network->upstreams.elts;

    /*
     * Each failover is an internal redirect to @solgate_retry, and nginx
     * allows 10 of them per request: past that, answer rather than fail
     * with "rewrite or internal redirection cycle".
     */
    rc = r->uri_changes > 1
         ? sg_request_pick(ctx->rpc, (int64_t) ngx_current_msec, &pick)
         : SG_NONE;

    if (rc == SG_NONE) {
        return ngx_http_solgate_fail_all(r, ctx);
    }

    if (rc != SG_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (pick.warn_all_cordoned) {
        ngx_http_solgate_log_by_id(NGX_LOG_WARN, r,
                      "solgate: every upstream of network \"%V\" is "
                      "cordoned, routing to all of them", &network->name);
    }

    if (ctx->upstream != NULL && ctx->data_retry) {
        ngx_http_solgate_log_by_id(NGX_LOG_INFO, r,
                      "solgate: upstream \"%V\" lacks the data (%V), "
                      "asking \"%V\"", &ctx->upstream->id, &ctx->last_cause,
                      &upstreams[pick.upstream].id);

    } else if (ctx->upstream != NULL && ctx->client_slot) {
        /* the client's minContextSlot: no failure of the node's */
        ngx_http_solgate_log_by_id(NGX_LOG_INFO, r,
                      "solgate: upstream \"%V\" has not reached the call's "
                      "minContextSlot, asking \"%V\"", &ctx->upstream->id,
                      &upstreams[pick.upstream].id);

    } else if (ctx->upstream != NULL) {
        status = ngx_http_solgate_last_status(r);

        if (status == 0) {
            ngx_http_solgate_log_by_id(NGX_LOG_WARN, r,
                          "solgate: upstream \"%V\" failed (%V, no answer), "
                          "retrying on \"%V\"", &ctx->upstream->id,
                          &ctx->last_cause, &upstreams[pick.upstream].id);

        } else {
            ngx_http_solgate_log_by_id(NGX_LOG_WARN, r,
                          "solgate: upstream \"%V\" failed (%V, status %ui), "
                          "retrying on \"%V\"", &ctx->upstream->id,
                          &ctx->last_cause, status,
                          &upstreams[pick.upstream].id);
        }
    }

    ctx->upstream = &upstreams[pick.upstream];
    ctx->reported = 0;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate access handler: attempt to \"%V\"",
                   &ctx->upstream->id);

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_solgate_fail_all(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    int         rc;
    ngx_uint_t  status;
    sg_route_t  route;

    rc = sg_request_fail(ctx->rpc, &route);

    if (rc != SG_OK && rc != SG_NONE) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rc == SG_NONE) {
        /* no upstream held the data: one's own answer says so */
        ngx_http_solgate_log_no_data(r, ctx);

        return ngx_http_solgate_answer(r, ctx, &route);
    }

    status = ngx_http_solgate_last_status(r);

    if (status == 0) {
        ngx_http_solgate_log_by_id(NGX_LOG_ERR, r,
                      "solgate: all %uz upstream(s) of network \"%V\" "
                      "failed, last \"%V\" with no answer (%V)",
                      sg_request_attempts(ctx->rpc), &ctx->network->name,
                      &ctx->upstream->id, &ctx->last_cause);

    } else {
        ngx_http_solgate_log_by_id(NGX_LOG_ERR, r,
                      "solgate: all %uz upstream(s) of network \"%V\" "
                      "failed, last \"%V\" with status %ui",
                      sg_request_attempts(ctx->rpc), &ctx->network->name,
                      &ctx->upstream->id, status);
    }

    return ngx_http_solgate_answer(r, ctx, &route);
}


/* retry_missing_data gave up: no upstream asked holds the data */
static void
ngx_http_solgate_log_no_data(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_http_solgate_log_by_id(NGX_LOG_INFO, r,
                  "solgate: none of %uz upstream(s) of network \"%V\" "
                  "holds the data; answering the best error they gave",
                  sg_request_attempts(ctx->rpc), &ctx->network->name);
}


static ngx_int_t
ngx_http_solgate_answer(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    sg_route_t *route)
{
    if (ngx_http_solgate_set_retry_after(r, route->retry_after) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->answered = 1;

    return ngx_http_solgate_send_json(r, route->http_status,
                                      (u_char *) route->body.data,
                                      route->body.len);
}


/* JSON-RPC is POSTed (an upgrade is a GET, but not one a 405 invites) */
static ngx_int_t
ngx_http_solgate_reject_method(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    static ngx_str_t  post = ngx_string("POST");

    if (ngx_http_solgate_set_allow(r, &post) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_refuse(r, ctx, NGX_HTTP_NOT_ALLOWED,
                                   sg_http_error_answer(NGX_HTTP_NOT_ALLOWED));
}


/*
 * A POST's body goes to nodes as the JSON Solgate reads: libcore judges the
 * headers that say how to read it (a compressed body, two Content-Types or
 * Content-Encodings), and the body goes with the Content-Type nodes take.
 * The pass over the headers finds the selector's too.  NGX_DECLINED when
 * it may be read.
 */
static ngx_int_t
ngx_http_solgate_json_post(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    sg_str_t                      body;
    ngx_uint_t                    status, count[5];
    ngx_table_elt_t              *found[5];
    sg_post_headers_t             headers;
    ngx_http_solgate_loc_conf_t  *slcf;

    static ngx_str_t  names[5] = {
        NGX_HTTP_SOLGATE_SELECTORS,
        ngx_string("content-encoding"), ngx_string("content-type"),
        ngx_string("origin")
    };

    ngx_http_solgate_find_in_list(&r->headers_in.headers, names, found,
                                  count, 5);

    ngx_http_solgate_keep_selectors(ctx, found, count);

    if (found[4] != NULL) {
        slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);
        ctx->cors_origin = slcf->cors ? 1 : 0;
    }

    ngx_memzero(&headers, sizeof(sg_post_headers_t));

    if (found[2] != NULL) {
        headers.content_encoding = ngx_http_solgate_sg_str(&found[2]->value);
    }

    headers.content_encodings = count[2];
    headers.content_types = count[3];

    status = sg_post_refusal(&headers, &body);

    if (status != 0) {
        return ngx_http_solgate_refuse(r, ctx, status, body);
    }

    if (ngx_http_solgate_json_content_type(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_DECLINED;
}


/*
 * Where the request may name its use-upstream selector (its headers were
 * found in the access phase); libcore applies the precedence and the
 * network's default.
 */
static ngx_int_t
ngx_http_solgate_selector_sources(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx, sg_selector_sources_t *sources)
{
    ngx_int_t          rc;
    ngx_str_t          query;
    ngx_uint_t         twice;
    ngx_table_elt_t  **h;

    ngx_memzero(sources, sizeof(sg_selector_sources_t));

    h = ctx->selectors.header;

    if (h[0] != NULL) {
        sources->header = ngx_http_solgate_sg_str(&h[0]->value);
        sources->has_header = 1;
        sources->header_twice = ctx->selectors.twice[0];
    }

    if (h[1] != NULL) {
        sources->erpc_header = ngx_http_solgate_sg_str(&h[1]->value);
        sources->has_erpc_header = 1;
        sources->erpc_header_twice = ctx->selectors.twice[1];
    }

    rc = ngx_http_solgate_query_arg(r, "use-upstream", 0, &query, &twice);

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    if (rc == NGX_OK) {
        sources->query = ngx_http_solgate_sg_str(&query);
        sources->has_query = 1;
        sources->query_twice = twice;
    }

    return NGX_OK;
}


/* The state proxy recorded for the last upstream attempt, or NULL. */
ngx_http_upstream_state_t *
ngx_http_solgate_last_state(ngx_http_request_t *r)
{
    ngx_http_upstream_state_t  *state;

    if (r->upstream_states == NULL || r->upstream_states->nelts == 0) {
        return NULL;
    }

    state = r->upstream_states->elts;

    return &state[r->upstream_states->nelts - 1];
}


/* The status of the last upstream attempt, 0 if none answered. */
/*
 * The status the upstream answered the last attempt with; 0 when it sent
 * none (no connection, a reset, a timeout: the 502 or 504 is nginx's own).
 */
static ngx_uint_t
ngx_http_solgate_last_status(ngx_http_request_t *r)
{
    ngx_http_upstream_state_t  *state;

    state = ngx_http_solgate_last_state(r);

    if (state == NULL || state->header_time == (ngx_msec_t) -1) {
        return 0;
    }

    return state->status;
}


/* A failed write that may have reached the node: libcore's answer. */
static ngx_int_t
ngx_http_solgate_write_not_retried(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    sg_route_t  route;

    ngx_http_solgate_log_by_id(NGX_LOG_ERR, r,
                  "solgate: upstream \"%V\" failed (%V) after a write may "
                  "have reached it; not retried elsewhere",
                  &ctx->upstream->id, &ctx->last_cause);

    if (sg_request_write_answer(ctx->rpc, &route) != SG_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_answer(r, ctx, &route);
}


/*
 * Tells libcore how the current attempt ended, once: from the retry
 * location (it failed) or the header filter (it answered).  Proxy records
 * a failure without an HTTP answer as 502 or 504 with no header time, and
 * one that never connected with no connect time.  NGX_DONE when the
 * request must not be retried (a write that may have reached the node);
 * NGX_DECLINED when an answer is a failure all the same (a node that says
 * it is behind), so the header filter fails it over.
 */
ngx_int_t
ngx_http_solgate_report_attempt(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_str_t                   name = ngx_string("retry-after");
    ngx_table_elt_t            *retry_after;
    sg_attempt_end_t            end;
    sg_attempt_report_t         report;
    ngx_http_upstream_state_t  *state;

    if (ctx->reported || ctx->rpc == NULL || ctx->upstream == NULL
        || ctx->peer_attempt)
    {
        return NGX_OK;
    }

    ctx->reported = 1;
    ngx_memzero(&end, sizeof(sg_attempt_end_t));
    end.connected = 1;

    state = ngx_http_solgate_last_state(r);

    if (state != NULL) {
        end.http_status = (unsigned) state->status;
        end.connected = state->connect_time != (ngx_msec_t) -1;

        if (state->header_time == (ngx_msec_t) -1) {
            end.timed_out = state->status == NGX_HTTP_GATEWAY_TIME_OUT;
            end.http_status = 0;
        }
    }

    /* Cube Runner chooses its own sources for the blocks it serves */
    if (end.http_status == NGX_HTTP_OK && r->upstream != NULL
        && ctx->block_call == NULL)
    {
        end.answer = ngx_http_solgate_whole_answer(r->upstream);
    }

    if (end.http_status == NGX_HTTP_TOO_MANY_REQUESTS && r->upstream != NULL) {
        ngx_http_solgate_find_in_list(&r->upstream->headers_in.headers,
                                      &name, &retry_after, NULL, 1);
        if (retry_after != NULL) {
            end.retry_after = ngx_http_solgate_sg_str(&retry_after->value);
        }
    }

    if (sg_request_report(ctx->rpc, &end, (int64_t) ngx_current_msec, &report)
        != SG_OK)
    {
        return NGX_OK;
    }

    ctx->last_cause.data = (u_char *) report.cause.data;
    ctx->last_cause.len = report.cause.len;
    ctx->data_retry = report.retry ? 1 : 0;
    ctx->client_slot = report.not_node_fault ? 1 : 0;
    ctx->retry_delay = report.retry_delay_ms;

    if (report.ejected_ms > 0) {
        ngx_http_solgate_log_by_id(NGX_LOG_WARN, r,
                      "solgate: upstream \"%V\" of network \"%V\" out of "
                      "rotation for %uD ms after a failed attempt (%V)",
                      &ctx->upstream->id, &ctx->network->name,
                      report.ejected_ms, &ctx->last_cause);
    }

    if (report.write_not_retried) {
        return NGX_DONE;
    }

    if (report.data_given_up && !report.failed) {
        /* this answer goes to the client (a kept one is logged so when
         * it is sent in its place) */
        ngx_http_solgate_log_no_data(r, ctx);
    }

    return report.failed ? NGX_DECLINED : NGX_OK;
}


/*
 * The answer of an attempt reported as answered ended short (the body
 * filter saw nginx's flush after the upstream's connection was gone): too
 * late to fail over, but a failed attempt for the upstream's health.
 * `reported` says ngx_http_solgate_report_attempt counted the attempt, so
 * it had a request and a node of the network (not another region).
 */
void
ngx_http_solgate_report_cut(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    uint32_t  ejected_ms;

    if (!ctx->reported || ctx->cut_reported || ctx->websocket) {
        return;
    }

    ctx->cut_reported = 1;

    if (sg_request_report_cut(ctx->rpc, (int64_t) ngx_current_msec,
                              &ejected_ms)
        != SG_OK
        || ejected_ms == 0)
    {
        return;
    }

    ngx_http_solgate_log_by_id(NGX_LOG_WARN, r,
                  "solgate: upstream \"%V\" of network \"%V\" out of "
                  "rotation for %uD ms after a failed attempt (its answer "
                  "was cut short)",
                  &ctx->upstream->id, &ctx->network->name, ejected_ms);
}


/*
 * An answer small enough to judge whole, when all of it came in with its
 * headers (it is then in the upstream's buffer, not yet passed on): what
 * an error answer is, since nodes write headers and body at once.
 */
static sg_str_t
ngx_http_solgate_whole_answer(ngx_http_upstream_t *u)
{
    off_t     length;
    sg_str_t  answer = { NULL, 0 };

    length = u->headers_in.content_length_n;

    if (length <= 0 || length > NGX_HTTP_SOLGATE_WHOLE_ANSWER_MAX
        || u->buffer.pos == NULL
        || u->buffer.last - u->buffer.pos < length
        || !sg_looks_like_rpc_error((char *) u->buffer.pos, (size_t) length))
    {
        return answer;
    }

    answer.data = (char *) u->buffer.pos;
    answer.len = (size_t) length;

    return answer;
}


/* The log phase: the request is over, count it. */
ngx_int_t
ngx_http_solgate_log_handler(ngx_http_request_t *r)
{
    ngx_msec_int_t                ms;
    ngx_time_t                   *tp;
    ngx_http_solgate_ctx_t       *ctx;
    ngx_http_solgate_loc_conf_t  *slcf;

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (slcf->network == NULL || r != r->main) {
        return NGX_OK;
    }

    ctx = ngx_http_solgate_get_ctx(r);

    /* a WebSocket's life is no request's duration: its own counters */
    if (ctx == NULL || ctx->rpc == NULL || ctx->peer_attempt
        || ctx->websocket)
    {
        return NGX_OK;
    }

    tp = ngx_timeofday();
    ms = (ngx_msec_int_t) ((tp->sec - r->start_sec) * 1000
                           + (tp->msec - r->start_msec));

    sg_request_finish(ctx->rpc, (unsigned) r->headers_out.status,
                      ctx->rpc_error, ctx->rpc_error_code,
                      (int64_t) ngx_max(ms, 0));

    if (ctx->pieces != NULL) {
        ngx_http_solgate_pieces_finish(r, ctx, (int64_t) ngx_max(ms, 0));
    }

    return NGX_OK;
}


/*
 * nginx's log context names the upstream of a failed attempt as scheme,
 * address and URI ("upstream: \"http://10.0.0.5:8899/v1/KEY\""), and a
 * vendor's key lives in that URI: its lines keep the address, not the path.
 */
static u_char *
ngx_http_solgate_log_error(ngx_http_request_t *r, ngx_http_request_t *sr,
    u_char *buf, size_t len)
{
    u_char               *p;
    ngx_str_t             uri;
    ngx_http_upstream_t  *u;

    u = sr->upstream;

    if (u == NULL) {
        return ngx_http_solgate_core_log_error(r, sr, buf, len);
    }

    uri = u->uri;
    ngx_str_null(&u->uri);

    p = ngx_http_solgate_core_log_error(r, sr, buf, len);

    u->uri = uri;

    return p;
}
