/*
 * solgate_dispatch: an upstream {} block without servers of its own that
 * hands each Solgate attempt to the upstream Solgate chose for it, so that
 * a location says `proxy_pass http://solgate;` (solgate_dispatch.conf)
 * rather than `proxy_pass $solgate_upstream_url;` (solgate_proxy.conf).
 * nginx then no longer evaluates and parses a URL and searches the upstream
 * blocks by name for every request, about 2 % of a worker's CPU per
 * forwarded call (README, Performance).  The chosen upstream's own block
 * takes over (its servers, keepalive connections, solgate_balancer); an
 * upstream given as an address gets a list of that one address, as
 * proxy_pass makes for an address.
 *
 * A fixed proxy_pass fixes the scheme and sends the client's URI, so it
 * serves a network only when every upstream, ws= endpoint and Cube Runner
 * peer of it is http:// (ws://) without a path, and an upstream {} block or
 * an address: nginx -t checks each location that proxies to the block.
 *
 * The headers only some attempts carry (a WebSocket's upgrade, the token
 * of a Cube Runner peer's attempt) are added here, to those attempts'
 * requests, so that solgate_dispatch.conf sets no variable header and no
 * other attempt evaluates one (about 3 % of a forwarded call's
 * instructions).
 */

#include "ngx_http_solgate_module.h"


/*
 * What a block with solgate_dispatch must not hold, said alike when the
 * directive meets it and when the postconfiguration check does.
 */
#define NGX_HTTP_SOLGATE_DISPATCH_ALONE                                      \
    "takes the block of its own: no \"server\", \"keepalive\", \"zone\" "   \
    "or balancer in it (they go in the nodes' blocks)"


/*
 * Its location configuration (private to it) begins with the
 * ngx_http_upstream_conf_t whose `upstream` a fixed proxy_pass sets; a
 * pointer read there counts only when it is one of our blocks.
 */
extern ngx_module_t  ngx_http_proxy_module;


static ngx_int_t ngx_http_solgate_dispatch_init_upstream(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_solgate_dispatch_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us);
static ngx_int_t ngx_http_solgate_dispatch_headers(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx);
static ngx_int_t ngx_http_solgate_head_with(ngx_http_request_t *r,
    ngx_keyval_t *add, ngx_uint_t n);
static ngx_int_t ngx_http_solgate_check_dispatcher(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *uscf);
static ngx_int_t ngx_http_solgate_aim_all(ngx_conf_t *cf,
    ngx_array_t *upstreams);
static ngx_int_t ngx_http_solgate_aim(ngx_conf_t *cf,
    ngx_http_solgate_target_t *target, ngx_str_t *url, ngx_str_t *authority);
static ngx_int_t ngx_http_solgate_check_aimed(ngx_conf_t *cf,
    ngx_http_solgate_pass_ref_t *ref, ngx_array_t *upstreams,
    const char *what);


char *
ngx_http_solgate_dispatch(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    ngx_http_upstream_server_t    *server;
    ngx_http_upstream_srv_conf_t  *uscf, **slot;

    uscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_upstream_module);

    if (ngx_http_solgate_is_dispatch_block(uscf)) {
        return "is duplicate";
    }

    if (uscf->peer.init_upstream != NULL
        || (uscf->servers != NULL && uscf->servers->nelts > 0))
    {
        return NGX_HTTP_SOLGATE_DISPATCH_ALONE;
    }

    /*
     * nginx refuses an upstream {} block without a server: this one has a
     * server that is down, never used (the block's peers are the nodes').
     */
    if (uscf->servers == NULL) {
        uscf->servers = ngx_array_create(cf->pool, 1,
                                         sizeof(ngx_http_upstream_server_t));
        if (uscf->servers == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    server = ngx_array_push(uscf->servers);
    if (server == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(server, sizeof(ngx_http_upstream_server_t));
    ngx_str_set(&server->name, "solgate_dispatch");
    server->down = 1;

    uscf->peer.init_upstream = ngx_http_solgate_dispatch_init_upstream;

    slot = ngx_array_push(&smcf->dispatchers);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = uscf;

    return NGX_CONF_OK;
}


/*
 * The precontent phase of a location that proxies to the dispatcher: the
 * upstream gets "/", as the URL solgate_proxy.conf sends ("/" added to a
 * URL without a path), never the client's path or arguments, which may
 * hold its API key.  A fixed proxy_pass without a URI sends the request's
 * URI, and nginx allows none in @solgate_retry, so the URI itself changes:
 * $uri and $args read "/" and "" from here on; $request_uri keeps the
 * client's.  The context keeps the client's, which the access phase gets
 * back when failover re-enters it (selectors, API keys and the location of
 * the subrequests it may start read them).
 */
ngx_int_t
ngx_http_solgate_dispatch_uri_handler(ngx_http_request_t *r)
{
    ngx_http_solgate_ctx_t       *ctx;
    ngx_http_solgate_loc_conf_t  *slcf;

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (!slcf->dispatched) {
        return NGX_DECLINED;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_solgate_module);

    if (ctx != NULL && !ctx->client_uri_kept) {
        ctx->client_uri = r->uri;
        ctx->client_args = r->args;
        ctx->client_unparsed_uri = r->valid_unparsed_uri;
        ctx->client_uri_kept = 1;
    }

    ngx_str_set(&r->uri, "/");
    ngx_str_null(&r->args);
    r->valid_unparsed_uri = 0;

    return NGX_DECLINED;
}


void
ngx_http_solgate_dispatch_restore_uri(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    if (ctx->client_uri_kept) {
        r->uri = ctx->client_uri;
        r->args = ctx->client_args;
        r->valid_unparsed_uri = ctx->client_unparsed_uri;
    }
}


/* Nodes never name it: an attempt sent there would come back forever. */
ngx_uint_t
ngx_http_solgate_is_dispatch_block(ngx_http_upstream_srv_conf_t *uscf)
{
    return uscf->peer.init_upstream == ngx_http_solgate_dispatch_init_upstream;
}


static ngx_int_t
ngx_http_solgate_dispatch_init_upstream(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *us)
{
    us->peer.init = ngx_http_solgate_dispatch_init_peer;

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_dispatch_init_peer(ngx_http_request_t *r,
    ngx_http_upstream_srv_conf_t *us)
{
    ngx_http_solgate_ctx_t        *ctx;
    ngx_http_solgate_target_t     *target;
    ngx_http_solgate_loc_conf_t   *slcf;
    ngx_http_upstream_srv_conf_t  *block;

    ctx = ngx_http_solgate_get_ctx(r);

    if (ctx == NULL || ctx->upstream == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "upstream \"%V\" has solgate_dispatch: only a "
                      "location with solgate_pass may proxy to it", &us->host);
        return NGX_ERROR;
    }

    target = ctx->websocket ? &ctx->upstream->ws_target
                            : &ctx->upstream->target;

    block = target->block;

    if (ctx->websocket || ctx->peer_attempt) {
        slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

        /* the head is proxy's text: not what fastcgi_pass and the like send */
        if (!slcf->dispatched) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                          "upstream \"%V\" has solgate_dispatch: only "
                          "proxy_pass may send a WebSocket or another "
                          "region's request to it", &us->host);
            return NGX_ERROR;
        }

        if (ngx_http_solgate_dispatch_headers(r, ctx) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    if (block != NULL) {
        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "solgate dispatch: \"%V\" through upstream \"%V\"",
                       &ctx->upstream->id, &block->host);

        r->upstream->upstream = block;

        return block->peer.init(r, block);
    }

    if (target->address != NULL) {
        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "solgate dispatch: \"%V\" at %V",
                       &ctx->upstream->id, &target->address->host);

        return ngx_http_upstream_create_round_robin_peer(r, target->address);
    }

    /* nginx -t refuses this for every location it can see proxy to us */
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "upstream \"%V\" cannot be reached through "
                  "solgate_dispatch: %s", &ctx->upstream->id,
                  target->unfit ? target->unfit : "no ws= endpoint");

    return NGX_ERROR;
}


/*
 * What solgate_proxy.conf sends with $solgate_connection, $solgate_upgrade
 * and $solgate_peer_token, for the attempts that have them.
 */
static ngx_int_t
ngx_http_solgate_dispatch_headers(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_uint_t        n;
    ngx_keyval_t      add[3];

    n = 0;

    if (ctx->websocket) {
        ngx_str_set(&add[n].key, "Connection");
        ngx_str_set(&add[n].value, NGX_HTTP_SOLGATE_CONNECTION_UPGRADE);
        n++;
        ngx_str_set(&add[n].key, "Upgrade");
        ngx_str_set(&add[n].value, NGX_HTTP_SOLGATE_UPGRADE);
        n++;
    }

    if (ctx->peer_attempt) {
        /* a block with peers always has a token (checked at configuration) */
        ngx_str_set(&add[n].key, "X-Solgate-Peer");
        add[n].value = ctx->network->blocks->peer_token;
        n++;
    }

    return ngx_http_solgate_head_with(r, add, n);
}


/*
 * The head of the request proxy built for this attempt (the first buffer
 * of u->request_bufs: the request line and the headers, then the blank
 * line) copied with `add` before its blank line.  A line of one of those
 * names already there (a location that still sets them itself, with the
 * variables) is left out, so each is sent once.  The copy starts its own
 * buffer: nginx rewinds a buffer to its start to send it again.
 */
static ngx_int_t
ngx_http_solgate_head_with(ngx_http_request_t *r, ngx_keyval_t *add,
    ngx_uint_t n)
{
    size_t        size;
    u_char       *copy, *p, *line, *lf, *colon;
    ngx_buf_t    *head;
    ngx_uint_t    i, first, keep;
    ngx_chain_t  *cl;

    cl = r->upstream->request_bufs;

    if (cl == NULL || !ngx_buf_in_memory_only(cl->buf)) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "solgate dispatch: the upstream request has no head "
                      "in memory");
        return NGX_ERROR;
    }

    head = cl->buf;
    size = head->last - head->pos;

    for (i = 0; i < n; i++) {
        size += add[i].key.len + sizeof(": ") - 1 + add[i].value.len
                + sizeof(CRLF) - 1;
    }

    copy = ngx_pnalloc(r->pool, size);
    if (copy == NULL) {
        return NGX_ERROR;
    }

    p = copy;
    first = 1;

    for (line = head->pos; line < head->last; line = lf + 1) {
        lf = ngx_strlchr(line, head->last, LF);

        if (lf == NULL) {
            break;
        }

        if (lf == line + 1 && line[0] == CR) {
            /* the blank line: ours go before it, then it and the rest */
            for (i = 0; i < n; i++) {
                p = ngx_cpymem(p, add[i].key.data, add[i].key.len);
                *p++ = ':'; *p++ = ' ';
                p = ngx_cpymem(p, add[i].value.data, add[i].value.len);
                *p++ = CR; *p++ = LF;
            }

            p = ngx_cpymem(p, line, head->last - line);

            head->start = copy;
            head->pos = copy;
            head->last = p;
            head->end = copy + size;
            head->temporary = 1;
            head->memory = 0;
            head->mmap = 0;

            return NGX_OK;
        }

        keep = 1;

        if (!first) {
            colon = ngx_strlchr(line, lf, ':');

            for (i = 0; colon != NULL && i < n; i++) {
                if ((size_t) (colon - line) == add[i].key.len
                    && ngx_strncasecmp(line, add[i].key.data, add[i].key.len)
                       == 0)
                {
                    keep = 0;
                    break;
                }
            }
        }

        if (keep) {
            p = ngx_cpymem(p, line, lf + 1 - line);
        }

        first = 0;
    }

    ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                  "solgate dispatch: the upstream request's head has no end");

    return NGX_ERROR;
}


/*
 * Once every block is read: where each upstream and peer would be sent,
 * and, for each location that proxies to a dispatcher, that its network's
 * all can be.
 */
ngx_int_t
ngx_http_solgate_dispatch_check(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                      i;
    ngx_http_upstream_conf_t       *proxy;
    ngx_http_solgate_loc_conf_t    *slcf;
    ngx_http_solgate_network_t     *network, **networks;
    ngx_http_solgate_pass_ref_t    *ref;
    ngx_http_upstream_srv_conf_t  **dispatcher;

    if (smcf->dispatchers.nelts == 0) {
        return NGX_OK;
    }

    dispatcher = smcf->dispatchers.elts;

    for (i = 0; i < smcf->dispatchers.nelts; i++) {
        if (ngx_http_solgate_check_dispatcher(cf, dispatcher[i]) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    networks = smcf->networks.elts;

    for (i = 0; i < smcf->networks.nelts; i++) {
        if (ngx_http_solgate_aim_all(cf, &networks[i]->upstreams) != NGX_OK) {
            return NGX_ERROR;
        }

        if (networks[i]->blocks != NULL
            && ngx_http_solgate_aim_all(cf, &networks[i]->blocks->peers)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    ref = smcf->pass_refs.elts;

    for (i = 0; i < smcf->pass_refs.nelts; i++) {
        if (ref[i].health) {
            continue;
        }

        proxy = ref[i].location->loc_conf[ngx_http_proxy_module.ctx_index];

        if (proxy == NULL
            || !ngx_http_solgate_block_listed(&smcf->dispatchers,
                                              proxy->upstream))
        {
            continue;
        }

        slcf = ref[i].location->loc_conf[ngx_http_solgate_module.ctx_index];
        slcf->dispatched = 1;

        network = *ref[i].target;

        if (ngx_http_solgate_check_aimed(cf, &ref[i], &network->upstreams,
                                         "upstream")
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (network->blocks != NULL
            && ngx_http_solgate_check_aimed(cf, &ref[i],
                                            &network->blocks->peers, "peer")
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* What came after solgate_dispatch in its block. */
static ngx_int_t
ngx_http_solgate_check_dispatcher(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *uscf)
{
    /* a zone would copy the peers round robin never made for it */
    if (uscf->servers->nelts == 1 && uscf->shm_zone == NULL
        && ngx_http_solgate_is_dispatch_block(uscf))
    {
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                  "upstream \"%V\" has solgate_dispatch, which "
                  NGX_HTTP_SOLGATE_DISPATCH_ALONE " in %s:%ui",
                  &uscf->host, uscf->file_name, uscf->line);

    return NGX_ERROR;
}


static ngx_int_t
ngx_http_solgate_aim_all(ngx_conf_t *cf, ngx_array_t *upstreams)
{
    ngx_uint_t                    i;
    ngx_http_solgate_upstream_t  *u;

    u = upstreams->elts;

    for (i = 0; i < upstreams->nelts; i++) {
        if (ngx_http_solgate_aim(cf, &u[i].target, &u[i].url, &u[i].authority)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (u[i].ws_url.len > 0
            && ngx_http_solgate_aim(cf, &u[i].ws_target, &u[i].ws_url,
                                    &u[i].ws_authority)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * `url` is what $solgate_upstream_url would be: http://AUTHORITY/ (libcore
 * adds the "/" to a URL without a path), or a fixed proxy_pass, which
 * sends "/" (ngx_http_solgate_dispatch_uri_handler), cannot send it there.
 */
static ngx_int_t
ngx_http_solgate_aim(ngx_conf_t *cf, ngx_http_solgate_target_t *target,
    ngx_str_t *url, ngx_str_t *authority)
{
    static ngx_str_t  http = ngx_string("http://");

    ngx_memzero(target, sizeof(ngx_http_solgate_target_t));

    if (url->len < http.len
        || ngx_strncasecmp(url->data, http.data, http.len) != 0)
    {
        target->unfit = "its URL is not http:// (a fixed proxy_pass sends "
                        "every attempt in one scheme)";
        return NGX_OK;
    }

    if (url->len != http.len + authority->len + 1
        || url->data[url->len - 1] != '/')
    {
        target->unfit = "its URL has a path (a fixed proxy_pass sends "
                        "\"/\")";
        return NGX_OK;
    }

    if (ngx_http_solgate_reach(cf, authority, target) != NGX_OK) {
        return NGX_ERROR;
    }

    if (target->block == NULL && target->address == NULL) {
        target->unfit = "its host is neither an upstream {} block nor an "
                        "address (name it in an upstream {} block)";
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_check_aimed(ngx_conf_t *cf, ngx_http_solgate_pass_ref_t *ref,
    ngx_array_t *upstreams, const char *what)
{
    ngx_uint_t                    i;
    ngx_http_solgate_target_t    *unfit;
    ngx_http_solgate_upstream_t  *u;

    u = upstreams->elts;

    for (i = 0; i < upstreams->nelts; i++) {
        unfit = NULL;

        if (u[i].target.unfit != NULL) {
            unfit = &u[i].target;

        } else if (u[i].ws_url.len > 0 && u[i].ws_target.unfit != NULL) {
            unfit = &u[i].ws_target;
        }

        if (unfit == NULL) {
            continue;
        }

        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "%s \"%V\" of network \"%V\" cannot be reached through "
                      "solgate_dispatch, to which the location of "
                      "solgate_pass in %V:%ui proxies: %s%s; proxy there "
                      "with solgate_proxy.conf instead in %V:%ui",
                      what, &u[i].id, &ref->name, &ref->at.file,
                      ref->at.line, unfit == &u[i].ws_target ? "ws=: " : "",
                      unfit->unfit, &u[i].at.file, u[i].at.line);
        return NGX_ERROR;
    }

    return NGX_OK;
}
