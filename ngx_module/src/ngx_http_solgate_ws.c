/*
 * WebSocket subscriptions through a solgate_pass location: an upgrade
 * request (GET with Upgrade: websocket) is routed by libcore as one
 * subscription connection among the upstreams with a ws= endpoint, and
 * nginx's own upgrade support proxies it.  Once the upstream switched
 * protocols, the connection's timeouts become ws_idle_timeout, and the
 * worker keeps it in a list: every tick, libcore says whose subscribers
 * move (a cordoned or lagging node's), and each of those connections is
 * ended between two of the node's frames with a close frame 1012
 * ("service restart"), so its client reconnects and lands on a good node.
 * A worker that is shutting down (an old worker after a reload) moves all
 * of its subscribers that way, to the new workers.  The closes of one
 * node are spread over NGX_HTTP_SOLGATE_WS_SPREAD.
 */

#include "ngx_http_solgate_module.h"


#define NGX_HTTP_SOLGATE_WS_TICK    200     /* ms between two looks */
#define NGX_HTTP_SOLGATE_WS_SPREAD  1000    /* ms over which closes spread */
#define NGX_HTTP_SOLGATE_WS_DRAIN   1000    /* ms to reach a frame's end */


struct ngx_http_solgate_ws_s {
    ngx_queue_t                  queue;
    ngx_http_request_t          *request;
    ngx_http_solgate_network_t  *network;
    ngx_uint_t                   upstream;    /* its index in the network */
    sg_ws_frames_t              *frames;      /* of the upstream's stream */
    ngx_recv_pt                  recv;        /* the upstream connection's */
    ngx_recv_pt                  client_recv; /* the client connection's */
    uint64_t                     to_client;   /* bytes, read from the node */
    uint64_t                     from_client; /* bytes, read from the client */
    ngx_msec_t                   move_at;     /* 0: it stays */
    ngx_msec_t                   give_up_at;  /* draining: no frame's end */
    unsigned                     move:8;      /* why, sg_ws_move_cause */
    unsigned                     draining:1;  /* read up to a frame's end */
    unsigned                     ended:1;     /* its upstream reads EOF */
};


static ngx_int_t ngx_http_solgate_ws_track(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static void ngx_http_solgate_ws_untrack(void *data);
static ssize_t ngx_http_solgate_ws_recv(ngx_connection_t *c, u_char *buf,
    size_t size);
static ssize_t ngx_http_solgate_ws_client_recv(ngx_connection_t *c,
    u_char *buf, size_t size);
static void ngx_http_solgate_ws_tick(ngx_event_t *ev);
static void ngx_http_solgate_ws_look(ngx_http_solgate_main_conf_t *smcf);
static void ngx_http_solgate_ws_step(ngx_http_solgate_ws_t *ws,
    ngx_msec_t now);
static void ngx_http_solgate_ws_end(ngx_http_solgate_ws_t *ws,
    ngx_uint_t say_why);


/* this worker's upgraded connections, and the tick that looks at them */
static ngx_queue_t  ngx_http_solgate_ws_all;
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

    return (r->method & NGX_HTTP_GET)
           && upgrade != NULL
           && ngx_strlcasestrn(upgrade->value.data,
                               upgrade->value.data + upgrade->value.len,
                               (u_char *) "websocket", 9 - 1)
              != NULL;
}


/*
 * The upstream answered 101 and nginx is about to pipe the two
 * connections: they carry subscriptions, idle for minutes between
 * notifications, so the per-attempt timeouts of solgate_proxy.conf give
 * way to the network's ws_idle_timeout.  u->conf is the location's and is
 * shared, so this connection gets its own copy.
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
    ngx_http_solgate_ws_t  *ws;

    peer = r->upstream->peer.connection;

    ws = ngx_pcalloc(r->pool, sizeof(ngx_http_solgate_ws_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (ws == NULL || cln == NULL || peer == NULL) {
        return NGX_ERROR;
    }

    if (sg_ws_frames_new(&ws->frames) != SG_OK) {
        return NGX_ERROR;
    }

    ws->request = r;
    ws->network = ctx->network;
    ws->upstream = ctx->upstream
                   - (ngx_http_solgate_upstream_t *)
                     ctx->network->upstreams.elts;

    /* every byte the upstream sends passes here, so its frames are known */
    ws->recv = peer->recv;
    peer->recv = ngx_http_solgate_ws_recv;
    ws->client_recv = r->connection->recv;
    r->connection->recv = ngx_http_solgate_ws_client_recv;
    ctx->ws = ws;

    sg_network_ws_opened(ws->network->core, ws->upstream);

    cln->handler = ngx_http_solgate_ws_untrack;
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

    return NGX_OK;
}


static void
ngx_http_solgate_ws_untrack(void *data)
{
    ngx_http_solgate_ws_t *ws = data;

    sg_network_ws_closed(ws->network->core, ws->upstream,
                         ws->ended ? ws->move : 0, ws->to_client,
                         ws->from_client);

    /* the client connection outlives the request only to be closed */
    ws->request->connection->recv = ws->client_recv;

    ngx_queue_remove(&ws->queue);
    sg_ws_frames_free(ws->frames);
}


/*
 * The upstream connection's recv: it follows the frames, and while the
 * connection drains reads no further than the current frame's end, then
 * nothing (the node's later frames stay unread); once ended, end of
 * stream, which nginx answers by closing both sides.
 */
static ssize_t
ngx_http_solgate_ws_recv(ngx_connection_t *c, u_char *buf, size_t size)
{
    ssize_t                  n;
    uint64_t                 left;
    ngx_http_solgate_ws_t   *ws;
    ngx_http_solgate_ctx_t  *ctx;

    ctx = ngx_http_solgate_get_ctx(c->data);
    ws = ctx->ws;

    if (ws->ended) {
        c->read->ready = 0;
        c->read->eof = 1;
        return 0;
    }

    if (ws->draining) {
        left = sg_ws_frames_to_boundary(ws->frames);

        if (left == 0) {
            c->read->ready = 0;
            return NGX_AGAIN;
        }

        size = (size_t) ngx_min((uint64_t) size, left);
    }

    n = ws->recv(c, buf, size);

    if (n > 0) {
        sg_ws_frames_feed(ws->frames, buf, (size_t) n);
        ws->to_client += (uint64_t) n;
    }

    return n;
}


/* The client connection's recv, counting what the client sends. */
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
        ws->from_client += (uint64_t) n;
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

    ngx_http_solgate_ws_look(ngx_http_cycle_get_module_main_conf(
                                 ngx_cycle, ngx_http_solgate_module));

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


/* libcore's verdicts, one per upstream of each network, for this tick */
static void
ngx_http_solgate_ws_look(ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i, n;
    ngx_http_solgate_network_t  **network;

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
    }
}


static void
ngx_http_solgate_ws_step(ngx_http_solgate_ws_t *ws, ngx_msec_t now)
{
    ngx_uint_t            move;
    ngx_http_upstream_t  *u;

    if (ws->ended) {
        return;
    }

    u = ws->request->upstream;
    move = ws->network->ws_moves != NULL
           ? ws->network->ws_moves[ws->upstream] : 0;

    if (!ws->draining) {
        if (move == 0) {
            ws->move_at = 0;        /* the node recovered in time */
            return;
        }

        if (ws->move_at == 0) {
            /* a node's thousands of clients must not reconnect at once */
            ws->move = move;
            ws->move_at = now + 1 + ngx_random() % NGX_HTTP_SOLGATE_WS_SPREAD;
            return;
        }

        if ((ngx_msec_int_t) (now - ws->move_at) < 0) {
            return;
        }

        ws->draining = 1;
        ws->give_up_at = now + NGX_HTTP_SOLGATE_WS_DRAIN;
    }

    if (sg_ws_frames_to_boundary(ws->frames) == 0
        && u->buffer.pos == u->buffer.last)
    {
        ngx_http_solgate_ws_end(ws, 1);     /* between two frames */

    } else if ((ngx_msec_int_t) (now - ws->give_up_at) >= 0) {
        ngx_http_solgate_ws_end(ws, 0);     /* a frame that never ends */
    }
}


/*
 * Ends the connection the way nginx ends one whose upstream closed: the
 * upstream's read event, posted, finds end of stream.  say_why: the client
 * first gets a close frame, 1012 "service restart" (19 bytes, which an
 * idle socket takes whole; a client that stopped reading gets none).
 */
static void
ngx_http_solgate_ws_end(ngx_http_solgate_ws_t *ws, ngx_uint_t say_why)
{
    static u_char     close_frame[] = "\x88\x11\x03\xf4" "service restart";

    ngx_str_t         cause;
    sg_str_t          why;
    ngx_connection_t *c, *peer;

    c = ws->request->connection;
    peer = ws->request->upstream->peer.connection;
    why = sg_ws_move_cause(ws->move);
    cause.len = why.len;
    cause.data = (u_char *) why.data;

    if (say_why) {
        (void) c->send(c, close_frame, sizeof(close_frame) - 1);
    }

    ngx_log_error(NGX_LOG_INFO, c->log, 0,
                  "solgate: closing websocket on upstream \"%V\" of network "
                  "\"%V\" (%V)%s, so its client reconnects to %s",
                  &((ngx_http_solgate_upstream_t *)
                    ws->network->upstreams.elts)[ws->upstream].id,
                  &ws->network->name, &cause,
                  say_why ? " with 1012" : " mid-frame",
                  ngx_exiting ? "a worker of the current configuration"
                              : "another node");

    ws->ended = 1;
    peer->read->ready = 1;
    ngx_post_event(peer->read, &ngx_posted_events);
}
