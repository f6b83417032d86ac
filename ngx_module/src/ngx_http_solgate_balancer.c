/*
 * solgate_balancer: an upstream {} block's balancer that sends a Solgate
 * attempt to the one server Solgate chose for it (each server of the block
 * is a node of its own, polled and scored apart), and every other request
 * by round robin.  It sits under `keepalive` like hash or least_conn do, so
 * the block's cached connections and TLS sessions still serve the attempt:
 * keepalive asks it for the peer, then reuses a connection to that address.
 */

#include "ngx_http_solgate_module.h"


typedef struct {
    /* first: round robin's free and TLS session handlers take it as data */
    ngx_http_upstream_rr_peer_data_t   rrp;
    ngx_uint_t                         peer;
    unsigned                           backup:1;
} ngx_http_solgate_balancer_peer_t;


static ngx_int_t ngx_http_solgate_balancer_init_upstream(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_solgate_balancer_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_solgate_balancer_get_peer(ngx_peer_connection_t *pc,
    void *data);


char *
ngx_http_solgate_balancer(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    ngx_http_upstream_srv_conf_t  *uscf, **slot;

    uscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_upstream_module);

    if (uscf->peer.init_upstream == ngx_http_solgate_balancer_init_upstream) {
        return "is duplicate";
    }

    /* keepalive keeps the balancer it finds: it must find this one */
    if (uscf->peer.init_upstream != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"solgate_balancer\" must come before "
                           "\"keepalive\" in upstream \"%V\", and replaces "
                           "hash, ip_hash, least_conn and random",
                           &uscf->host);
        return NGX_CONF_ERROR;
    }

    uscf->peer.init_upstream = ngx_http_solgate_balancer_init_upstream;

    uscf->flags = NGX_HTTP_UPSTREAM_CREATE
                  |NGX_HTTP_UPSTREAM_WEIGHT
                  |NGX_HTTP_UPSTREAM_MAX_CONNS
                  |NGX_HTTP_UPSTREAM_MAX_FAILS
                  |NGX_HTTP_UPSTREAM_FAIL_TIMEOUT
                  |NGX_HTTP_UPSTREAM_DOWN
                  |NGX_HTTP_UPSTREAM_BACKUP;

    slot = ngx_array_push(&smcf->balanced);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = uscf;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_solgate_balancer_init_upstream(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *us)
{
    if (ngx_http_upstream_init_round_robin(cf, us) != NGX_OK) {
        return NGX_ERROR;
    }

    us->peer.init = ngx_http_solgate_balancer_init_peer;

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_balancer_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us)
{
    ngx_http_solgate_ctx_t            *ctx;
    ngx_http_solgate_upstream_t       *node;
    ngx_http_solgate_balancer_peer_t  *bp;

    ctx = ngx_http_solgate_get_ctx(r);
    node = ctx != NULL ? ctx->upstream : NULL;

    if (node == NULL || node->block != us) {
        return ngx_http_upstream_init_round_robin_peer(r, us);
    }

    bp = ngx_palloc(r->pool, sizeof(ngx_http_solgate_balancer_peer_t));
    if (bp == NULL) {
        return NGX_ERROR;
    }

    r->upstream->peer.data = &bp->rrp;

    if (ngx_http_upstream_init_round_robin_peer(r, us) != NGX_OK) {
        return NGX_ERROR;
    }

    bp->peer = node->peer;
    bp->backup = node->backup_peer;

    r->upstream->peer.get = ngx_http_solgate_balancer_get_peer;

    /*
     * One try: when the server fails, Solgate's failover (not round robin)
     * chooses the next node, which may be in another block.
     */
    r->upstream->peer.tries = 1;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate balancer: \"%V\" pinned to peer %ui",
                   &node->id, node->peer);

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_balancer_get_peer(ngx_peer_connection_t *pc, void *data)
{
    ngx_http_solgate_balancer_peer_t  *bp = data;

    time_t                          now;
    ngx_uint_t                      i;
    ngx_http_upstream_rr_peer_t    *peer;
    ngx_http_upstream_rr_peers_t   *peers;

    /*
     * As every balancer does: keepalive sets cached for a connection it
     * hands out and nothing else clears it, and a stale "cached" makes
     * ngx_http_upstream_next give a failed connect its try back forever.
     */
    pc->cached = 0;
    pc->connection = NULL;

    peers = bp->rrp.peers;

    if (bp->backup) {
        /* round robin's free locks the list the peer is in */
        peers = peers->next;
        bp->rrp.peers = peers;
    }

    if (peers == NULL) {
        return NGX_BUSY;
    }

    ngx_http_upstream_rr_peers_rlock(peers);

    peer = peers->peer;

    for (i = 0; i < bp->peer && peer != NULL; i++) {
        peer = peer->next;
    }

    if (peer == NULL) {
        ngx_http_upstream_rr_peers_unlock(peers);
        return NGX_BUSY;
    }

    ngx_http_upstream_rr_peer_lock(peers, peer);

    now = ngx_time();

    bp->rrp.current = peer;
    peer->conns++;

    if (now - peer->checked > peer->fail_timeout) {
        peer->checked = now;
    }

    ngx_http_upstream_rr_peer_unlock(peers, peer);
    ngx_http_upstream_rr_peers_unlock(peers);

    pc->sockaddr = peer->sockaddr;
    pc->socklen = peer->socklen;
    pc->name = &peer->name;

    return NGX_OK;
}
