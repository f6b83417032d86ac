/*
 * A subscription connection, taken over from nginx.  nginx's upgrade pipe
 * keeps the whole request for the connection's life: its pool (three or
 * four blocks by the end of proxying), a buffer for each direction, the
 * upstream's state.  An idle subscriber would cost some 14 KB that way.
 * Right after nginx set the pipe up, this file takes both connections,
 * lets nginx log and free the request, and relays the bytes itself: what
 * one side sends is read into one buffer of the worker's and written to
 * the other side at once, so an idle subscription holds no buffer, only
 * what the other side could not take yet.
 *
 * It ends as nginx's pipe ends: when either side closes (once what it sent
 * is passed on), on an error, and when the node sends nothing for
 * ws_idle_timeout, or a write stalls as long.  A move ends it between two
 * of the node's frames, with a close frame for the client.
 */

#include "ngx_http_solgate_module.h"


/* a read from either side, passed on before the next */
#define NGX_HTTP_SOLGATE_WS_READ  16384
/* ms for a move to reach the end of the node's frame, and for a client
 * that is behind to take the rest and the close frame */
#define NGX_HTTP_SOLGATE_WS_DRAIN    1000
#define NGX_HTTP_SOLGATE_WS_CLOSING  5000
/* a move reads the rest of the node's frame for a client that is behind
 * when it is no longer than this */
#define NGX_HTTP_SOLGATE_WS_FRAME_REST  (1024 * 1024)
/* the 101 not yet sent whole: look again this often, this many times */
#define NGX_HTTP_SOLGATE_WS_DETACH_RETRY  100
#define NGX_HTTP_SOLGATE_WS_DETACH_TRIES  50


static ngx_int_t ngx_http_solgate_ws_detachable(ngx_http_request_t *r);
static void ngx_http_solgate_ws_pin(ngx_http_solgate_ws_t *ws);
static void ngx_http_solgate_ws_forget_unsent(
    ngx_http_solgate_ws_unsent_t *unsent);
static ngx_int_t ngx_http_solgate_ws_keep(ngx_http_solgate_ws_unsent_t *unsent,
    u_char *data, size_t len);
static ngx_int_t ngx_http_solgate_ws_take_unsent(ngx_http_solgate_ws_t *ws,
    ngx_http_request_t *r);
static void ngx_http_solgate_ws_release_upstream(ngx_http_request_t *r);
static void ngx_http_solgate_ws_release_header_buffers(
    ngx_http_connection_t *hc, ngx_connection_t *c);
static void ngx_http_solgate_ws_client_read(ngx_event_t *ev);
static void ngx_http_solgate_ws_client_write(ngx_event_t *ev);
static void ngx_http_solgate_ws_node_read(ngx_event_t *ev);
static void ngx_http_solgate_ws_node_write(ngx_event_t *ev);
static ngx_int_t ngx_http_solgate_ws_relay(ngx_http_solgate_ws_t *ws,
    ngx_uint_t from_node);
static ngx_int_t ngx_http_solgate_ws_pass(ngx_http_solgate_ws_t *ws,
    ngx_uint_t from_node);
static ngx_int_t ngx_http_solgate_ws_flush(ngx_connection_t *dst,
    ngx_http_solgate_ws_unsent_t *unsent);
static ngx_int_t ngx_http_solgate_ws_wait(ngx_http_solgate_ws_t *ws);
static ngx_int_t ngx_http_solgate_ws_node_gone(ngx_http_solgate_ws_t *ws);
static void ngx_http_solgate_ws_moved(ngx_http_solgate_ws_t *ws,
    ngx_uint_t with_frame);
static void ngx_http_solgate_ws_end(ngx_http_solgate_ws_t *ws,
    unsigned move);


/* one for the worker: nothing stays in it between two events */
static u_char  ngx_http_solgate_ws_read_buf[NGX_HTTP_SOLGATE_WS_READ];


/*
 * Posted by ngx_http_solgate_ws_switched: by now nginx's upgrade has run
 * (handlers set, the 101 passed to the client, a first pass of the pipe).
 * A 101 still on its way, or a request something else still holds, is
 * looked at again a little later; one that never frees stays nginx's.
 */
void
ngx_http_solgate_ws_detach(ngx_event_t *ev)
{
    ngx_connection_t       *c, *node;
    ngx_http_request_t     *r;
    ngx_http_connection_t  *hc;
    ngx_http_solgate_ws_t  *ws;

    ws = (ngx_http_solgate_ws_t *)
         ((u_char *) ev - offsetof(ngx_http_solgate_ws_t, detach));
    r = ws->request;
    c = r->connection;

    if (ngx_http_solgate_ws_detachable(r) != NGX_OK) {
        if (++ws->detach_tries < NGX_HTTP_SOLGATE_WS_DETACH_TRIES) {
            ngx_add_timer(ev, NGX_HTTP_SOLGATE_WS_DETACH_RETRY);
            return;
        }

        ngx_http_solgate_ws_pin(ws);
        return;
    }

    node = r->upstream->peer.connection;
    hc = r->http_connection;

#if (NGX_SSL)
    /* what a side could not take is sent again from another buffer */
    if (c->ssl) {
        SSL_set_mode(c->ssl->connection, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    }

    if (node->ssl) {
        SSL_set_mode(node->ssl->connection,
                     SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    }
#endif

    if (ngx_http_solgate_ws_take_unsent(ws, r) != NGX_OK) {
        ngx_http_solgate_ws_pin(ws);    /* no memory */
        return;
    }

    /* the hooks count and follow frames from here on */
    node->recv = ws->recv;
    c->recv = ws->client_recv;

    ngx_http_solgate_ws_release_upstream(r);

    ws->cleanup->handler = NULL;
    ws->request = NULL;
    ws->client = c;
    ws->node = node;
    ws->detached = 1;

    c->data = ws;
    node->data = ws;
    c->read->handler = ngx_http_solgate_ws_client_read;
    c->write->handler = ngx_http_solgate_ws_client_write;
    node->read->handler = ngx_http_solgate_ws_node_read;
    node->write->handler = ngx_http_solgate_ws_node_write;

    /* logged (status 101) and freed; its connection stays open */
    ngx_http_free_request(r, 0);
    c->destroyed = 0;
    c->log->action = "relaying websocket";

    ngx_http_solgate_ws_release_header_buffers(hc, c);

#if (NGX_SSL)
    /* the upgrade request's buffer; the relay writes without one */
    if (node->ssl) {
        ngx_ssl_free_buffer(node);
    }
#endif

    ngx_add_timer(node->read, ws->idle_timeout);

    /* both directions' turn: the client's posted, as ending the node's
     * turn would close the client (and take the posted event away) */
    ngx_post_event(c->read, &ngx_posted_events);
    (void) ngx_http_solgate_ws_relay(ws, 1);
}


/*
 * Whether nothing but the pipe holds the request, nothing of the 101 is
 * held but in the write filter's chain (taken over), and neither TLS
 * connection waits on the other direction (its saved handler would be
 * put back over the relay's).
 */
static ngx_int_t
ngx_http_solgate_ws_detachable(ngx_http_request_t *r)
{
    ngx_chain_t          *cl;
    ngx_connection_t     *c;
    ngx_http_upstream_t  *u;

    u = r->upstream;
    c = r->connection;

    if (r != r->main || r->count != 1 || r->blocked || r->postponed
        || r->posted_requests != NULL
        || (c->buffered & ~NGX_HTTP_WRITE_BUFFERED))
    {
        return NGX_DECLINED;
    }

#if (NGX_HTTP_V2)
    if (r->stream) {
        return NGX_DECLINED;
    }
#endif

    if (u == NULL || !u->upgrade || u->cleanup == NULL
        || u->peer.connection == NULL)
    {
        return NGX_DECLINED;
    }

    for (cl = r->out; cl; cl = cl->next) {
        if (!ngx_buf_in_memory(cl->buf) || cl->buf->in_file) {
            return NGX_DECLINED;
        }
    }

#if (NGX_SSL)
    if ((c->ssl && (c->ssl->saved_read_handler
                    || c->ssl->saved_write_handler))
        || (u->peer.connection->ssl
            && (u->peer.connection->ssl->saved_read_handler
                || u->peer.connection->ssl->saved_write_handler)))
    {
        return NGX_DECLINED;
    }
#endif

    return NGX_OK;
}


/*
 * One that cannot be taken over stays with nginx's pipe, as it would
 * without Solgate; a move ends it without a close frame.
 */
static void
ngx_http_solgate_ws_pin(ngx_http_solgate_ws_t *ws)
{
    ngx_http_solgate_ws_forget_unsent(&ws->to_client);
    ngx_http_solgate_ws_forget_unsent(&ws->to_node);
    ws->pinned = 1;

    ngx_http_solgate_log_by_id(NGX_LOG_WARN, ws->request,
                  "solgate: websocket on upstream \"%V\" stays with "
                  "nginx's pipe (its request is still in use): a move "
                  "closes it without a close frame",
                  &((ngx_http_solgate_upstream_t *)
                    ws->network->upstreams.elts)[ws->upstream].id);
}


/*
 * What nginx holds and has not sent yet: the rest of the 101 first, then
 * what it read from either side and could not pass on.
 */
static ngx_int_t
ngx_http_solgate_ws_take_unsent(ngx_http_solgate_ws_t *ws,
    ngx_http_request_t *r)
{
    ngx_buf_t            *b;
    ngx_chain_t          *cl;
    ngx_http_upstream_t  *u;

    u = r->upstream;
    b = r->header_in;

    for (cl = r->out; cl; cl = cl->next) {
        if (ngx_http_solgate_ws_keep(&ws->to_client, cl->buf->pos,
                                     cl->buf->last - cl->buf->pos)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    /* nginx passes the client's early bytes (after the request's headers)
     * from header_in before anything it reads into from_client */
    if (ngx_http_solgate_ws_keep(&ws->to_client, u->buffer.pos,
                                 u->buffer.last - u->buffer.pos) != NGX_OK
        || ngx_http_solgate_ws_keep(&ws->to_node, b->pos, b->last - b->pos)
           != NGX_OK
        || ngx_http_solgate_ws_keep(&ws->to_node, u->from_client.pos,
                                    u->from_client.last - u->from_client.pos)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    r->out = NULL;
    r->connection->buffered &= ~NGX_HTTP_WRITE_BUFFERED;
    b->pos = b->last;

    return NGX_OK;
}


static void
ngx_http_solgate_ws_forget_unsent(ngx_http_solgate_ws_unsent_t *unsent)
{
    if (unsent->start != NULL) {
        ngx_free(unsent->start);
    }

    unsent->start = NULL;
    unsent->pos = NULL;
    unsent->last = NULL;
}


/*
 * Appends len bytes to what waits for one side.  Rarely called: only
 * what a side could not take at once waits.
 */
static ngx_int_t
ngx_http_solgate_ws_keep(ngx_http_solgate_ws_unsent_t *unsent, u_char *data,
    size_t len)
{
    u_char  *p;
    size_t   waiting;

    if (len == 0 || data == NULL) {
        return NGX_OK;
    }

    waiting = unsent->last - unsent->pos;

    p = ngx_alloc(waiting + len, ngx_cycle->log);
    if (p == NULL) {
        return NGX_ERROR;
    }

    if (waiting > 0) {
        ngx_memcpy(p, unsent->pos, waiting);
    }

    ngx_memcpy(p + waiting, data, len);

    if (unsent->start != NULL) {
        ngx_free(unsent->start);
    }

    unsent->start = p;
    unsent->pos = p;
    unsent->last = p + waiting + len;

    return NGX_OK;
}


/*
 * What ngx_http_upstream_finalize_request does for a request whose
 * connection to the upstream lives on elsewhere: the state logged, the
 * balancer told the peer is done, the upstream's cleanup disarmed, so
 * freeing the request leaves the connection open.
 */
static void
ngx_http_solgate_ws_release_upstream(ngx_http_request_t *r)
{
    ngx_connection_t     *node;
    ngx_http_upstream_t  *u;

    u = r->upstream;
    node = u->peer.connection;

    *u->cleanup = NULL;
    u->cleanup = NULL;

    if (u->state && u->state->response_time == (ngx_msec_t) -1) {
        u->state->response_time = ngx_current_msec - u->start_time;
        u->state->bytes_sent = node->sent;
    }

    u->finalize_request(r, 0);

    if (u->peer.free && u->peer.sockaddr) {
        u->peer.free(&u->peer, u->peer.data, 0);
        u->peer.sockaddr = NULL;
    }

    u->peer.connection = NULL;

    /* nginx's pipe timers; the relay sets its own */
    if (node->read->timer_set) {
        ngx_del_timer(node->read);
    }

    if (node->write->timer_set) {
        ngx_del_timer(node->write);
    }

    if (r->connection->read->timer_set) {
        ngx_del_timer(r->connection->read);
    }

    if (r->connection->write->timer_set) {
        ngx_del_timer(r->connection->write);
    }
}


/*
 * The client's header buffers and TLS write buffer, done with: freed as
 * ngx_http_set_keepalive frees them for an idle connection.
 */
static void
ngx_http_solgate_ws_release_header_buffers(ngx_http_connection_t *hc,
    ngx_connection_t *c)
{
    ngx_uint_t    i;
    ngx_chain_t  *cl, *ln, *chains[2];

    if (c->buffer != NULL && c->buffer->start != NULL
        && ngx_pfree(c->pool, c->buffer->start) == NGX_OK)
    {
        c->buffer->start = NULL;
        c->buffer->pos = NULL;
        c->buffer->last = NULL;
        c->buffer->end = NULL;
    }

    chains[0] = hc->busy;
    chains[1] = hc->free;

    for (i = 0; i < 2; i++) {
        for (cl = chains[i]; cl; /* void */) {
            ln = cl;
            cl = cl->next;
            (void) ngx_pfree(c->pool, ln->buf->start);
            ngx_free_chain(c->pool, ln);
        }
    }

    hc->busy = NULL;
    hc->nbusy = 0;
    hc->free = NULL;

#if (NGX_HTTP_SSL)
    if (c->ssl) {
        ngx_ssl_free_buffer(c);
    }
#endif
}


/*
 * The relay's four event handlers.  A connection nginx wants closed (its
 * worker_shutdown_timeout has passed) ends; a write that timed out ends
 * quietly (no TLS goodbye to a side that takes nothing).
 */
static void
ngx_http_solgate_ws_client_read(ngx_event_t *ev)
{
    ngx_connection_t       *c = ev->data;
    ngx_http_solgate_ws_t  *ws = c->data;

    if (c->close) {
        ngx_http_solgate_ws_end(ws, 0);
        return;
    }

    (void) ngx_http_solgate_ws_relay(ws, 0);
}


static void
ngx_http_solgate_ws_client_write(ngx_event_t *ev)
{
    ngx_connection_t       *c = ev->data;
    ngx_http_solgate_ws_t  *ws = c->data;

    if (ev->timedout) {
        c->timedout = 1;
        ngx_log_error(NGX_LOG_INFO, c->log, NGX_ETIMEDOUT,
                      "solgate: websocket client took nothing for %M ms",
                      ws->idle_timeout);
        ngx_http_solgate_ws_end(ws, 0);
        return;
    }

    (void) ngx_http_solgate_ws_relay(ws, 1);
}


/* The node's read event also carries the idle timeout. */
static void
ngx_http_solgate_ws_node_read(ngx_event_t *ev)
{
    ngx_connection_t       *c = ev->data;
    ngx_http_solgate_ws_t  *ws = c->data;

    if (c->close) {
        ngx_http_solgate_ws_end(ws, 0);
        return;
    }

    if (ev->timedout) {
        ev->timedout = 0;

        /* only quiet while its bytes are read as they come */
        if (!ev->ready && ws->to_client.pos == ws->to_client.last) {
            ngx_log_error(NGX_LOG_INFO, c->log, 0,
                          "solgate: websocket node sent nothing for %M ms "
                          "(ws_idle_timeout), closing",
                          ws->idle_timeout);
            ngx_http_solgate_ws_end(ws, 0);
            return;
        }

        ngx_add_timer(ev, ws->idle_timeout);
    }

    (void) ngx_http_solgate_ws_relay(ws, 1);
}


static void
ngx_http_solgate_ws_node_write(ngx_event_t *ev)
{
    ngx_connection_t       *c = ev->data;
    ngx_http_solgate_ws_t  *ws = c->data;

    if (ev->timedout) {
        c->timedout = 1;
        ngx_log_error(NGX_LOG_INFO, c->log, NGX_ETIMEDOUT,
                      "solgate: websocket node took nothing for %M ms",
                      ws->idle_timeout);
        ngx_http_solgate_ws_end(ws, 0);
        return;
    }

    (void) ngx_http_solgate_ws_relay(ws, 0);
}


/*
 * One direction's turn, as nginx's ngx_http_upstream_process_upgraded:
 * what waits goes first, then what can be read is passed on; then whether
 * the connection is over (NGX_DONE: it is closed), else the events and
 * timers to wait on.
 */
static ngx_int_t
ngx_http_solgate_ws_relay(ngx_http_solgate_ws_t *ws, ngx_uint_t from_node)
{
    ngx_connection_t  *node, *client;

    if (ngx_http_solgate_ws_pass(ws, from_node) != NGX_OK
        || (!from_node && ws->node_gone
            && ngx_http_solgate_ws_pass(ws, 1) != NGX_OK))
    {
        ngx_http_solgate_ws_end(ws, 0);
        return NGX_DONE;
    }

    node = ws->node;
    client = ws->client;

    if (ws->closing && ws->to_client.pos == ws->to_client.last) {
        ngx_http_solgate_ws_moved(ws, 1);   /* its close frame is out */
        return NGX_DONE;
    }

    if ((node->read->eof && ws->to_client.pos == ws->to_client.last)
        || (client->read->eof && ws->to_node.pos == ws->to_node.last)
        || (node->read->eof && client->read->eof))
    {
        ngx_log_debug0(NGX_LOG_DEBUG_HTTP, client->log, 0,
                       "solgate websocket relay done");
        ngx_http_solgate_ws_end(ws, 0);
        return NGX_DONE;
    }

    if (ngx_http_solgate_ws_wait(ws) != NGX_OK) {
        ngx_http_solgate_ws_end(ws, 0);
        return NGX_DONE;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_ws_pass(ngx_http_solgate_ws_t *ws, ngx_uint_t from_node)
{
    u_char                        *buf;
    size_t                         size;
    ssize_t                        n, sent;
    uint64_t                       left;
    ngx_connection_t              *src, *dst;
    ngx_http_solgate_ws_unsent_t  *unsent;

    src = from_node ? ws->node : ws->client;
    dst = from_node ? ws->client : ws->node;
    unsent = from_node ? &ws->to_client : &ws->to_node;
    buf = ngx_http_solgate_ws_read_buf;

    /* a node that stopped taking the client's bytes may still say why
     * (a close frame): its side goes on until it closes */
    if (!from_node && ws->node_gone) {
        return NGX_OK;
    }

    if (ngx_http_solgate_ws_flush(dst, unsent) != NGX_OK) {
        return from_node ? NGX_ERROR : ngx_http_solgate_ws_node_gone(ws);
    }

    while (src->read->ready && !src->read->eof) {
        size = NGX_HTTP_SOLGATE_WS_READ;

        if (from_node && ws->draining) {
            /* a move reads no further than the end of the node's frame,
             * and reads that far even for a client that is behind, so
             * its close frame can follow */
            left = sg_ws_frames_to_boundary(ws->frames);

            if (left == 0 || ws->closing
                || (unsent->pos != unsent->last
                    && left > NGX_HTTP_SOLGATE_WS_FRAME_REST))
            {
                break;
            }

            size = (size_t) ngx_min((uint64_t) size, left);

        } else if (unsent->pos != unsent->last) {
            break;                  /* the other side is behind */
        }

        n = src->recv(src, buf, size);

        if (n == NGX_AGAIN) {
            break;
        }

        if (n == 0 || n == NGX_ERROR) {
            src->read->eof = 1;
            break;
        }

        if (from_node) {
            sg_ws_frames_feed(ws->frames, buf, (size_t) n);
            ws->to_client_bytes += (uint64_t) n;
            ngx_add_timer(src->read, ws->idle_timeout);

        } else {
            ws->from_client_bytes += (uint64_t) n;
        }

        /* never ahead of what already waits */
        sent = unsent->pos == unsent->last && dst->write->ready
               ? dst->send(dst, buf, (size_t) n) : 0;

        if (sent == NGX_ERROR) {
            return from_node ? NGX_ERROR : ngx_http_solgate_ws_node_gone(ws);
        }

        if (sent == NGX_AGAIN) {
            sent = 0;
        }

        if (sent < n
            && ngx_http_solgate_ws_keep(unsent, buf + sent, n - sent)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* The client's bytes go nowhere any more; the node's still come. */
static ngx_int_t
ngx_http_solgate_ws_node_gone(ngx_http_solgate_ws_t *ws)
{
    ws->node_gone = 1;
    ngx_http_solgate_ws_forget_unsent(&ws->to_node);

    return NGX_OK;
}


/*
 * Sends what waits for dst; freed once sent.  Progress restarts the
 * stall timer (ngx_http_solgate_ws_wait arms it again).
 */
static ngx_int_t
ngx_http_solgate_ws_flush(ngx_connection_t *dst,
    ngx_http_solgate_ws_unsent_t *unsent)
{
    ssize_t  n;

    if (unsent->pos == unsent->last || !dst->write->ready) {
        return NGX_OK;
    }

    n = dst->send(dst, unsent->pos, unsent->last - unsent->pos);

    if (n == NGX_ERROR) {
        return NGX_ERROR;
    }

    if (n > 0) {
        unsent->pos += n;

        if (dst->write->timer_set) {
            ngx_del_timer(dst->write);
        }
    }

    if (unsent->pos == unsent->last) {
        ngx_http_solgate_ws_forget_unsent(unsent);
    }

    return NGX_OK;
}


/*
 * The events both connections wait on, and a write that waits is given
 * ws_idle_timeout (the node's read always has it: the connection always
 * has a timer, so a worker that exits waits for it to be moved off).
 */
static ngx_int_t
ngx_http_solgate_ws_wait(ngx_http_solgate_ws_t *ws)
{
    ngx_uint_t                     i;
    ngx_connection_t              *c[2];
    ngx_http_solgate_ws_unsent_t  *unsent[2];

    c[0] = ws->client;
    c[1] = ws->node;
    unsent[0] = &ws->to_client;
    unsent[1] = &ws->to_node;

    for (i = 0; i < 2; i++) {
        if (ngx_handle_read_event(c[i]->read, 0) != NGX_OK
            || ngx_handle_write_event(c[i]->write, 0) != NGX_OK)
        {
            return NGX_ERROR;
        }

        /* armed when a side stops taking bytes, not pushed back by the
         * other side's traffic */
        if (unsent[i]->pos != unsent[i]->last && !c[i]->write->ready) {
            if (!c[i]->write->timer_set) {
                ngx_add_timer(c[i]->write, ws->idle_timeout);
            }

        } else if (c[i]->write->timer_set) {
            ngx_del_timer(c[i]->write);
        }
    }

    return NGX_OK;
}


/*
 * A move's turn, every tick once its moment in the spread came: the
 * node's stream is read up to the end of its current frame (even for a
 * client that is behind, when the rest is short), then the client gets a
 * close frame, 1012 "service restart", behind whatever it has not taken,
 * and the connection ends once it took that.  A frame that does not end
 * within NGX_HTTP_SOLGATE_WS_DRAIN, or a client that does not take the
 * rest within NGX_HTTP_SOLGATE_WS_CLOSING, ends it without.
 */
void
ngx_http_solgate_ws_drain(ngx_http_solgate_ws_t *ws, ngx_msec_t now)
{
    static u_char  close_frame[] = "\x88\x11\x03\xf4" "service restart";

    if (!ws->draining) {
        ws->draining = 1;
        ws->give_up_at = now + NGX_HTTP_SOLGATE_WS_DRAIN;
    }

    if (!ws->closing && sg_ws_frames_to_boundary(ws->frames) > 0
        && ngx_http_solgate_ws_relay(ws, 1) == NGX_DONE)
    {
        return;
    }

    if (!ws->closing && sg_ws_frames_to_boundary(ws->frames) == 0
        && ngx_http_solgate_ws_keep(&ws->to_client, close_frame,
                                    sizeof(close_frame) - 1) == NGX_OK)
    {
        ws->closing = 1;
        ws->give_up_at = now + NGX_HTTP_SOLGATE_WS_CLOSING;
        (void) ngx_http_solgate_ws_relay(ws, 1);
        return;
    }

    if ((ngx_msec_int_t) (now - ws->give_up_at) >= 0) {
        ngx_http_solgate_ws_moved(ws, 0);
    }
}


/* The move's end, logged; with_frame: the client took the close frame. */
static void
ngx_http_solgate_ws_moved(ngx_http_solgate_ws_t *ws, ngx_uint_t with_frame)
{
    sg_str_t          why;
    ngx_str_t         cause;
    ngx_connection_t *c;

    c = ws->client;
    why = sg_ws_move_cause(ws->move);
    cause.len = why.len;
    cause.data = (u_char *) why.data;

    ngx_log_error(NGX_LOG_INFO, c->log, 0,
                  "solgate: closing websocket on upstream \"%V\" of network "
                  "\"%V\" (%V)%s, so its client reconnects%s",
                  &((ngx_http_solgate_upstream_t *)
                    ws->network->upstreams.elts)[ws->upstream].id,
                  &ws->network->name, &cause,
                  with_frame ? " with 1012" : " mid-frame",
                  ngx_exiting ? " (this worker is exiting: a reload or a "
                                "stop)"
                              : " to another node");

    ngx_http_solgate_ws_end(ws, ws->move);
}


/* Both connections closed (the node's as nginx closes an upstream's). */
static void
ngx_http_solgate_ws_end(ngx_http_solgate_ws_t *ws, unsigned move)
{
    ngx_pool_t        *pool;
    ngx_connection_t  *node, *client;

    node = ws->node;
    client = ws->client;

    ngx_http_solgate_ws_untrack(ws, move);

#if (NGX_HTTP_SSL)
    if (node->ssl) {
        node->ssl->no_wait_shutdown = 1;
        (void) ngx_ssl_shutdown(node);
    }
#endif

    pool = node->pool;
    ngx_close_connection(node);

    if (pool != NULL) {
        ngx_destroy_pool(pool);
    }

    ngx_http_close_connection(client);
}
