/*
 * WebSocket subscriptions through a solgate_pass location: an upgrade
 * request (GET with Upgrade: websocket) is routed by libcore as one
 * subscription connection among the upstreams with a ws= endpoint, and
 * nginx's own upgrade support opens it.  Once the upstream switched
 * protocols, the connection's timeouts become ws_idle_timeout, and
 * Solgate takes the two connections over from the request
 * (ngx_http_solgate_ws_relay.c).  The worker keeps them in a list: every
 * tick, libcore says whose subscribers move (a cordoned or lagging
 * node's), and each of those connections is ended between two of the
 * node's frames with a close frame 1012 ("service restart"), so its
 * client reconnects and lands on a good node.  A worker that is shutting
 * down (an old worker after a reload) moves all of its subscribers that
 * way, to the new workers.  The closes of one node are spread over
 * NGX_HTTP_SOLGATE_WS_SPREAD.
 */

#include "ngx_http_solgate_module.h"


#define NGX_HTTP_SOLGATE_WS_TICK    200     /* ms between two looks */
#define NGX_HTTP_SOLGATE_WS_SPREAD  1000    /* ms over which closes spread */


static ngx_int_t ngx_http_solgate_ws_track(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static void ngx_http_solgate_ws_request_done(void *data);
static ssize_t ngx_http_solgate_ws_recv(ngx_connection_t *c, u_char *buf,
    size_t size);
static ssize_t ngx_http_solgate_ws_client_recv(ngx_connection_t *c,
    u_char *buf, size_t size);
static void ngx_http_solgate_ws_tick(ngx_event_t *ev);
static ngx_uint_t ngx_http_solgate_ws_look(
    ngx_http_solgate_main_conf_t *smcf);
static void ngx_http_solgate_ws_step(ngx_http_solgate_ws_t *ws,
    ngx_msec_t now);
static void ngx_http_solgate_ws_end_pinned(ngx_http_solgate_ws_t *ws,
    ngx_uint_t move);


/* this worker's upgraded connections, and the tick that looks at them */
static ngx_queue_t  ngx_http_solgate_ws_all;
/* of them, those with a move under way (move_at set) */
static ngx_uint_t   ngx_http_solgate_ws_moving;
static ngx_uint_t   ngx_http_solgate_ws_ready;
static ngx_event_t  ngx_http_solgate_ws_timer;
/* a timer's data is read as a connection (its fd) by the debug log */
static ngx_connection_t  ngx_http_solgate_ws_timer_owner;


/* Whether the request asks to become a WebSocket. */
ngx_uint_t
ngx_http_solgate_ws_requested(ngx_http_request_t *r)
{
    ngx_table_elt_t  *upgrade;

    upgrade = r->headers_in.upgrade;

    /* an upgrade is HTTP/1.1's (an HTTP/2 stream has no connection of
     * its own to hand over) */
    return (r->method & NGX_HTTP_GET)
           && r->http_version == NGX_HTTP_VERSION_11
           && upgrade != NULL
           && ngx_strlcasestrn(upgrade->value.data,
                               upgrade->value.data + upgrade->value.len,
                               (u_char *) "websocket", 9 - 1)
              != NULL;
}


/* RFC 6455 4.2.2: another version than ours is answered with ours */
#define NGX_HTTP_SOLGATE_UPGRADE_REQUIRED  426


/*
 * A malformed upgrade (RFC 6455 4.2.1, libcore judges) is answered here
 * with a JSON-RPC error: NGX_DECLINED when it may go on, else what to
 * finalize the request with.
 */
ngx_int_t
ngx_http_solgate_ws_refuse(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    sg_str_t            body;
    ngx_uint_t          status, count[5];
    ngx_table_elt_t    *found[5], *h;
    sg_ws_handshake_t   handshake;

    /* nginx 1.22 keeps no pointer to Connection (only what it says of
     * keep-alive); the selector's headers are found in the same pass */
    static ngx_str_t  names[5] = {
        NGX_HTTP_SOLGATE_SELECTORS,
        ngx_string("connection"), ngx_string("sec-websocket-key"),
        ngx_string("sec-websocket-version")
    };

    ngx_http_solgate_find_in_list(&r->headers_in.headers, names, found,
                                  count, 5);

    ngx_http_solgate_keep_selectors(ctx, found, count);

    ngx_memzero(&handshake, sizeof(sg_ws_handshake_t));

    if (found[2] != NULL) {
        handshake.connection = ngx_http_solgate_sg_str(&found[2]->value);
    }

    if (found[3] != NULL) {
        handshake.key = ngx_http_solgate_sg_str(&found[3]->value);
    }

    if (found[4] != NULL) {
        handshake.version = ngx_http_solgate_sg_str(&found[4]->value);
    }

    handshake.has_body = r->headers_in.content_length_n > 0
                         || r->headers_in.chunked;

    status = sg_ws_handshake_refusal(&handshake, &body);

    if (status == 0) {
        return NGX_DECLINED;
    }

    if (status == NGX_HTTP_SOLGATE_UPGRADE_REQUIRED) {
        h = ngx_list_push(&r->headers_out.headers);
        if (h == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        h->hash = 1;
        ngx_str_set(&h->key, "Sec-WebSocket-Version");
        ngx_str_set(&h->value, "13");
    }

    return ngx_http_solgate_refuse(r, ctx, status, body);
}


/*
 * The upstream answered 101 and nginx is about to pipe the two
 * connections: they carry subscriptions, idle for minutes between
 * notifications, so the per-attempt timeouts of solgate_proxy.conf give
 * way to the network's ws_idle_timeout.  u->conf is the location's and is
 * shared, so this connection gets its own copy.  Once nginx has set the
 * pipe up, Solgate takes it over (ngx_http_solgate_ws_detach, posted).
 */
ngx_int_t
ngx_http_solgate_ws_switched(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_msec_t                 idle;
    ngx_http_upstream_t       *u;
    ngx_http_upstream_conf_t  *conf;

    u = r->upstream;
    idle = ctx->network->settings.ws_idle_timeout;

    if (u == NULL || !u->upgrade) {
        return NGX_OK;
    }

    conf = ngx_palloc(r->pool, sizeof(ngx_http_upstream_conf_t));
    if (conf == NULL) {
        return NGX_ERROR;
    }

    *conf = *u->conf;
    conf->read_timeout = idle;
    conf->send_timeout = idle;
    u->conf = conf;

    ngx_http_solgate_log_by_id(NGX_LOG_INFO, r,
                  "solgate: websocket of network \"%V\" on upstream \"%V\"",
                  &ctx->network->name, &ctx->upstream->id);

    return ngx_http_solgate_ws_track(r, ctx);
}


static ngx_int_t
ngx_http_solgate_ws_track(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx)
{
    ngx_connection_t       *peer;
    ngx_pool_cleanup_t     *cln;
    ngx_http_upstream_t    *u;
    ngx_http_solgate_ws_t  *ws;

    peer = r->upstream->peer.connection;

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL || peer == NULL) {
        return NGX_ERROR;
    }

    /* outside the request's pool: it outlives the request */
    ws = ngx_calloc(sizeof(ngx_http_solgate_ws_t), r->connection->log);
    if (ws == NULL) {
        return NGX_ERROR;
    }

    if (sg_ws_frames_new(&ws->frames) != SG_OK) {
        ngx_free(ws);
        return NGX_ERROR;
    }

    ws->request = r;
    ws->cleanup = cln;
    ws->network = ctx->network;
    ws->upstream = ctx->upstream
                   - (ngx_http_solgate_upstream_t *)
                     ctx->network->upstreams.elts;
    ws->idle_timeout = ctx->network->settings.ws_idle_timeout;
    /* what the client sent with its upgrade request, read with it */
    ws->from_client_bytes = r->header_in->last - r->header_in->pos;

    /* what the node sent right behind its 101 came with it, and every
     * later byte passes the hook: its frames are known from the first */
    u = r->upstream;
    if (u->buffer.pos != NULL && u->buffer.last > u->buffer.pos) {
        sg_ws_frames_feed(ws->frames, u->buffer.pos,
                          u->buffer.last - u->buffer.pos);
        ws->to_client_bytes = u->buffer.last - u->buffer.pos;
    }

    ws->recv = peer->recv;
    peer->recv = ngx_http_solgate_ws_recv;
    ws->client_recv = r->connection->recv;
    r->connection->recv = ngx_http_solgate_ws_client_recv;
    ctx->ws = ws;

    sg_network_ws_opened(ws->network->core, ws->upstream);

    cln->handler = ngx_http_solgate_ws_request_done;
    cln->data = ws;

    if (!ngx_http_solgate_ws_ready) {
        ngx_queue_init(&ngx_http_solgate_ws_all);
        ngx_http_solgate_ws_timer_owner.fd = (ngx_socket_t) -1;
        ngx_http_solgate_ws_timer.data = &ngx_http_solgate_ws_timer_owner;
        ngx_http_solgate_ws_timer.handler = ngx_http_solgate_ws_tick;
        ngx_http_solgate_ws_timer.log = ngx_cycle->log;
        ngx_http_solgate_ws_timer.cancelable = 1;
        ngx_http_solgate_ws_ready = 1;
    }

    ngx_queue_insert_tail(&ngx_http_solgate_ws_all, &ws->queue);

    if (!ngx_http_solgate_ws_timer.timer_set) {
        ngx_add_timer(&ngx_http_solgate_ws_timer, NGX_HTTP_SOLGATE_WS_TICK);
    }

    /* after nginx's ngx_http_upstream_upgrade, which follows this filter */
    ws->detach.handler = ngx_http_solgate_ws_detach;
    ws->detach.data = r->connection;
    ws->detach.log = r->connection->log;
    ws->detach.cancelable = 1;
    ngx_post_event(&ws->detach, &ngx_posted_events);

    return NGX_OK;
}


/* The request ended while still attached: nginx closed the connection. */
static void
ngx_http_solgate_ws_request_done(void *data)
{
    ngx_http_solgate_ws_t *ws = data;

    /* the client connection outlives the request only to be closed */
    ws->request->connection->recv = ws->client_recv;

    ngx_http_solgate_ws_untrack(ws, ws->ended ? ws->move : 0);
}


/*
 * A subscription ended (move: what ended it, or 0): counted, forgotten
 * and freed.  Its connections are closed or being closed by the caller.
 */
void
ngx_http_solgate_ws_untrack(ngx_http_solgate_ws_t *ws, unsigned move)
{
    sg_network_ws_closed(ws->network->core, ws->upstream, move,
                         ws->to_client_bytes, ws->from_client_bytes);

    if (ws->move_at != 0) {
        ngx_http_solgate_ws_moving--;
    }

    if (ws->detach.posted) {
        ngx_delete_posted_event(&ws->detach);
    }

    if (ws->detach.timer_set) {
        ngx_del_timer(&ws->detach);
    }

    ngx_queue_remove(&ws->queue);
    sg_ws_frames_free(ws->frames);

    if (ws->to_client.start != NULL) {
        ngx_free(ws->to_client.start);
    }

    if (ws->to_node.start != NULL) {
        ngx_free(ws->to_node.start);
    }

    ngx_free(ws);
}


/*
 * While nginx pipes the connection (until Solgate takes it over), the
 * upstream connection's recv follows the node's frames and counts them,
 * and the client connection's counts what the client sends.
 */
static ssize_t
ngx_http_solgate_ws_recv(ngx_connection_t *c, u_char *buf, size_t size)
{
    ssize_t                  n;
    ngx_http_solgate_ws_t   *ws;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_solgate_get_ctx(c->data);
    ws = ctx->ws;

    /* one kept with nginx's pipe and moved: end of stream, which nginx
     * answers by closing both sides */
    if (ws->ended) {
        c->read->ready = 0;
        c->read->eof = 1;
        return 0;
    }

    n = ws->recv(c, buf, size);

    if (n > 0) {
        sg_ws_frames_feed(ws->frames, buf, (size_t) n);
        ws->to_client_bytes += (uint64_t) n;
    }

    return n;
}


static ssize_t
ngx_http_solgate_ws_client_recv(ngx_connection_t *c, u_char *buf,
    size_t size)
{
    ssize_t                  n;
    ngx_http_solgate_ws_t   *ws;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_solgate_get_ctx(c->data);
    ws = ctx->ws;

    n = ws->client_recv(c, buf, size);

    if (n > 0) {
        ws->from_client_bytes += (uint64_t) n;
    }

    return n;
}


static void
ngx_http_solgate_ws_tick(ngx_event_t *ev)
{
    ngx_queue_t            *q, *next;
    ngx_http_solgate_ws_t  *ws;

    if (ngx_queue_empty(&ngx_http_solgate_ws_all)) {
        return;                     /* the next upgrade starts it again */
    }

    /* a walk of 10,000 idle connections takes milliseconds (a cache miss
     * each), which would delay the notifications passing meanwhile: it is
     * made only while some node's subscribers move */
    if (!ngx_http_solgate_ws_look(ngx_http_cycle_get_module_main_conf(
                                      ngx_cycle, ngx_http_solgate_module))
        && ngx_http_solgate_ws_moving == 0)
    {
        ngx_add_timer(ev, NGX_HTTP_SOLGATE_WS_TICK);
        return;
    }

    for (q = ngx_queue_head(&ngx_http_solgate_ws_all);
         q != ngx_queue_sentinel(&ngx_http_solgate_ws_all);
         q = next)
    {
        next = ngx_queue_next(q);
        ws = ngx_queue_data(q, ngx_http_solgate_ws_t, queue);
        ngx_http_solgate_ws_step(ws, ngx_current_msec);
    }

    ngx_add_timer(ev, NGX_HTTP_SOLGATE_WS_TICK);
}


/*
 * libcore's verdicts, one per upstream of each network, for this tick:
 * whether any node's subscribers are to move.
 */
static ngx_uint_t
ngx_http_solgate_ws_look(ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i, j, n, any;
    ngx_http_solgate_network_t  **network;

    any = 0;
    network = smcf->networks.elts;

    for (i = 0; i < smcf->networks.nelts; i++) {
        n = network[i]->upstreams.nelts;

        if (network[i]->ws_moves == NULL) {
            network[i]->ws_moves = ngx_pcalloc(ngx_cycle->pool, n);
            if (network[i]->ws_moves == NULL) {
                continue;
            }
        }

        if (sg_network_ws_moves(network[i]->core, (int64_t) ngx_current_msec,
                                ngx_exiting, network[i]->ws_moves, n)
            != SG_OK)
        {
            ngx_memzero(network[i]->ws_moves, n);
        }

        for (j = 0; j < n; j++) {
            any |= network[i]->ws_moves[j];
        }
    }

    return any;
}


/*
 * One connection's part in a move: its close is given a moment within
 * the spread, then the node's stream is read up to a frame's end, where
 * the connection is closed.  One still attached waits for its hand-over.
 */
static void
ngx_http_solgate_ws_step(ngx_http_solgate_ws_t *ws, ngx_msec_t now)
{
    ngx_uint_t  move;

    move = ws->network->ws_moves != NULL
           ? ws->network->ws_moves[ws->upstream] : 0;

    if (!ws->detached) {
        /* one about to be taken over waits for it; one kept with
         * nginx's pipe is ended, without a close frame */
        if (move != 0 && ws->pinned && !ws->ended) {
            ngx_http_solgate_ws_end_pinned(ws, move);
        }

        return;
    }

    if (!ws->draining) {
        if (move == 0) {
            if (ws->move_at != 0) {
                ws->move_at = 0;    /* the node recovered in time */
                ngx_http_solgate_ws_moving--;
            }

            return;
        }

        if (ws->move_at == 0) {
            /* a node's thousands of clients must not reconnect at once */
            ws->move = move;
            ws->move_at = now + 1 + ngx_random() % NGX_HTTP_SOLGATE_WS_SPREAD;
            ngx_http_solgate_ws_moving++;
            return;
        }

        if ((ngx_msec_int_t) (now - ws->move_at) < 0) {
            return;
        }
    }

    ngx_http_solgate_ws_drain(ws, now);
}


/*
 * A connection kept with nginx's pipe (never taken over) whose node's
 * subscribers move: its node's stream ends (the recv hook says so), and
 * nginx closes both sides.
 */
static void
ngx_http_solgate_ws_end_pinned(ngx_http_solgate_ws_t *ws, ngx_uint_t move)
{
    sg_str_t           why;
    ngx_str_t          cause;
    ngx_connection_t  *peer;

    peer = ws->request->upstream->peer.connection;

    if (peer == NULL) {
        return;
    }

    ws->move = move;
    ws->ended = 1;
    why = sg_ws_move_cause(move);
    cause.len = why.len;
    cause.data = (u_char *) why.data;

    ngx_http_solgate_log_by_id(NGX_LOG_INFO, ws->request,
                  "solgate: closing websocket on upstream \"%V\" of "
                  "network \"%V\" (%V) without a close frame",
                  &((ngx_http_solgate_upstream_t *)
                    ws->network->upstreams.elts)[ws->upstream].id,
                  &ws->network->name, &cause);

    peer->read->ready = 1;
    ngx_post_event(peer->read, &ngx_posted_events);
}
