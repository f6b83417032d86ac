/*
 * The solgate_blocks block (Cube Runner: getBlock from the region cache,
 * the ledger, other regions and long-term storage), its shared zone, and
 * its life in each worker: the cache opened after fork and closed at exit.
 * Its disk work (commits, request scores, evictions) runs on the worker's
 * poller thread, never on the event loop.
 */

#include "ngx_http_solgate_module.h"
#include "ngx_http_solgate_parse.h"


#define NGX_HTTP_SOLGATE_MIN_PEER_TOKEN 16    /* kMinPeerTokenBytes */


static char *ngx_http_solgate_blocks_region(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_cache(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_state(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_peer(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_solgate_blocks_peer_token(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_long_term(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_plan_define(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_missing(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *blocks);
static ngx_int_t ngx_http_solgate_init_peer(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *peer, ngx_str_t *id, ngx_str_t *url,
    ngx_http_solgate_url_t *parsed);
static ngx_int_t ngx_http_solgate_blocks_zone(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *blocks);
static ngx_int_t ngx_http_solgate_bind_blocks(void *owner, void *shared,
    ngx_uint_t fresh, char *err, size_t err_size);
static ngx_int_t ngx_http_solgate_blocks_path(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *b, ngx_str_t *dir);
static void ngx_http_solgate_blocks_free_core(void *data);


static ngx_command_t  ngx_http_solgate_blocks_commands[] = {

    { ngx_string("region"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_region,
      0,
      0,
      NULL },

    { ngx_string("cache"),
      NGX_CONF_TAKE12,
      ngx_http_solgate_blocks_cache,
      0,
      0,
      NULL },

    { ngx_string("state"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_state,
      0,
      0,
      NULL },

    { ngx_string("peer"),
      NGX_CONF_TAKE23,
      ngx_http_solgate_blocks_peer,
      0,
      0,
      NULL },

    { ngx_string("peer_token"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_peer_token,
      0,
      0,
      NULL },

    { ngx_string("long_term_storage"),
      NGX_CONF_1MORE,
      ngx_http_solgate_blocks_long_term,
      0,
      0,
      NULL },

    { ngx_string("api_key"),
      NGX_CONF_TAKE1,
      ngx_http_set_complex_value_slot,
      0,
      offsetof(ngx_http_solgate_blocks_t, api_key),
      NULL },

    { ngx_string("plan"),
      NGX_CONF_TAKE1,
      ngx_http_set_complex_value_slot,
      0,
      offsetof(ngx_http_solgate_blocks_t, plan),
      NULL },

    { ngx_string("plan_define"),
      NGX_CONF_2MORE,
      ngx_http_solgate_blocks_plan_define,
      0,
      0,
      NULL },

      ngx_null_command
};


char *
ngx_http_solgate_blocks_block(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    char                        *rv;
    ngx_str_t                   *value;
    ngx_uint_t                   i;
    sg_blocks_conf_t             core_conf;
    ngx_pool_cleanup_t          *cln;
    ngx_http_solgate_blocks_t   *blocks, **slot, **existing;

    value = cf->args->elts;
    existing = smcf->blocks.elts;

    for (i = 0; i < smcf->blocks.nelts; i++) {
        if (existing[i]->network_name.len == value[1].len
            && ngx_strncmp(existing[i]->network_name.data, value[1].data,
                           value[1].len) == 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "duplicate solgate_blocks \"%V\"", &value[1]);
            return NGX_CONF_ERROR;
        }
    }

    blocks = ngx_pcalloc(cf->pool, sizeof(ngx_http_solgate_blocks_t));
    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (blocks == NULL || cln == NULL) {
        return NGX_CONF_ERROR;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     blocks->api_key = NULL;
     *     blocks->plan = NULL;
     *     blocks->network = NULL;
     *     blocks->shm_zone = NULL;
     */

    blocks->network_name = value[1];
    blocks->max_size = NGX_CONF_UNSET;
    ngx_http_solgate_conf_here(cf, &blocks->at);

    if (ngx_array_init(&blocks->peers, cf->pool, 2,
                       sizeof(ngx_http_solgate_upstream_t))
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* the core is built now so plan_define and peer report at file:line;
     * it is attached to its network once the http block is read */
    ngx_memzero(&core_conf, sizeof(sg_blocks_conf_t));

    blocks->core = sg_blocks_new(&core_conf);
    if (blocks->core == NULL) {
        return NGX_CONF_ERROR;
    }

    cln->handler = ngx_http_solgate_blocks_free_core;
    cln->data = blocks->core;

    rv = ngx_http_solgate_conf_block(cf, ngx_http_solgate_blocks_commands,
                                     "solgate_blocks", blocks);
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    if (blocks->peers.nelts && blocks->peer_token.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "solgate_blocks \"%V\" has a \"peer\" but no "
                           "\"peer_token\"", &blocks->network_name);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_blocks_missing(cf, blocks) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    slot = ngx_array_push(&smcf->blocks);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = blocks;

    return NGX_CONF_OK;
}


/* Names the first required directive the block lacks. */
static char *
ngx_http_solgate_blocks_missing(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *blocks)
{
    char  *missing;

    missing = blocks->region.len == 0 ? "region"
              : blocks->cache_dir.len == 0 ? "cache"
              : blocks->state_dir.len == 0 ? "state"
              : blocks->api_key == NULL ? "api_key"
              : blocks->plan == NULL ? "plan"
              : NULL;

    if (missing == NULL) {
        return NGX_CONF_OK;
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "solgate_blocks \"%V\" has no \"%s\"",
                       &blocks->network_name, missing);
    return NGX_CONF_ERROR;
}


static char *
ngx_http_solgate_blocks_region(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    ngx_str_t   *value;
    const char  *err;

    if (blocks->region.len) {
        return "is duplicate";
    }

    value = cf->args->elts;

    err = ngx_http_solgate_check_id(value[1].data, value[1].len);
    if (err != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid region name \"%V\": %s", &value[1], err);
        return NGX_CONF_ERROR;
    }

    blocks->region = value[1];

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_blocks_cache(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    ngx_str_t  *value, size;

    if (blocks->cache_dir.len) {
        return "is duplicate";
    }

    value = cf->args->elts;
    blocks->cache_dir = value[1];

    if (ngx_conf_full_name(cf->cycle, &blocks->cache_dir, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (cf->args->nelts == 3) {
        if (ngx_strncmp(value[2].data, "max_size=", 9) != 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\"", &value[2]);
            return NGX_CONF_ERROR;
        }

        size.data = value[2].data + 9;
        size.len = value[2].len - 9;

        blocks->max_size = ngx_parse_offset(&size);

        if (blocks->max_size <= 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid max_size \"%V\"", &size);
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_blocks_state(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    ngx_str_t  *value;

    if (blocks->state_dir.len) {
        return "is duplicate";
    }

    value = cf->args->elts;
    blocks->state_dir = value[1];

    if (ngx_conf_full_name(cf->cycle, &blocks->state_dir, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/*
 * peer NAME URL [copy=on|off]: another region's gateway, reached through
 * proxy_pass; copy=off asks it for blocks but copies nothing from it in
 * the background.
 */
static char *
ngx_http_solgate_blocks_peer(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    char                          err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t                    *value;
    ngx_uint_t                    i, copy;
    const char                   *msg;
    ngx_http_solgate_url_t        parsed;
    ngx_http_solgate_upstream_t  *peer;

    value = cf->args->elts;

    msg = ngx_http_solgate_check_id(value[1].data, value[1].len);
    if (msg != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid peer name \"%V\": %s", &value[1], msg);
        return NGX_CONF_ERROR;
    }

    msg = ngx_http_solgate_parse_url(value[2].data, value[2].len, &parsed);
    if (msg != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid peer URL \"%V\": %s", &value[2], msg);
        return NGX_CONF_ERROR;
    }

    copy = 1;

    if (cf->args->nelts == 4) {
        if (value[3].len == 8
            && ngx_strncmp(value[3].data, "copy=off", 8) == 0)
        {
            copy = 0;

        } else if (value[3].len != 7
                   || ngx_strncmp(value[3].data, "copy=on", 7) != 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\", it must be "
                               "\"copy=on\" or \"copy=off\"", &value[3]);
            return NGX_CONF_ERROR;
        }
    }

    peer = blocks->peers.elts;

    for (i = 0; i < blocks->peers.nelts; i++) {
        if (peer[i].id.len == value[1].len
            && ngx_strncmp(peer[i].id.data, value[1].data, value[1].len) == 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "duplicate peer \"%V\"", &value[1]);
            return NGX_CONF_ERROR;
        }
    }

    peer = ngx_array_push(&blocks->peers);
    if (peer == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_init_peer(cf, peer, &value[1], &value[2], &parsed)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (sg_blocks_add_peer(blocks->core, ngx_http_solgate_sg_str(&peer->id),
                           ngx_http_solgate_sg_str(&peer->url), (int) copy,
                           err, sizeof(err))
        != SG_OK)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/*
 * Another region's gateway from its name and URL: proxy_pass gets the URL
 * with a path ("/" added when it has none, so the client's own URI is
 * never sent), and the Host header is the URL's authority.
 */
static ngx_int_t
ngx_http_solgate_init_peer(ngx_conf_t *cf, ngx_http_solgate_upstream_t *peer,
    ngx_str_t *id, ngx_str_t *url, ngx_http_solgate_url_t *parsed)
{
    u_char  *p;

    ngx_memzero(peer, sizeof(ngx_http_solgate_upstream_t));

    peer->id = *id;
    peer->url = *url;
    peer->host.data = (u_char *) parsed->authority;
    peer->host.len = parsed->authority_len;
    peer->authority = peer->host;
    ngx_http_solgate_conf_here(cf, &peer->at);

    if (parsed->path_len == 0) {
        p = ngx_pnalloc(cf->pool, url->len + 1);
        if (p == NULL) {
            return NGX_ERROR;
        }

        peer->url.data = p;
        peer->url.len = ngx_cpymem(p, url->data, url->len) - p;
        peer->url.data[peer->url.len++] = '/';
    }

    return NGX_OK;
}


static char *
ngx_http_solgate_blocks_peer_token(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    ngx_str_t  *value;

    if (blocks->peer_token.len) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (value[1].len < NGX_HTTP_SOLGATE_MIN_PEER_TOKEN) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "peer_token must be at least %d bytes: it is "
                           "all that tells another region from a client",
                           NGX_HTTP_SOLGATE_MIN_PEER_TOKEN);
        return NGX_CONF_ERROR;
    }

    blocks->peer_token = value[1];

    return NGX_CONF_OK;
}


/*
 * long_term_storage URL [URL ...]: JSON-RPC endpoints that answer getBlock
 * for every slot since genesis, asked in order by the poller thread (not
 * through nginx: URLs name reachable hosts, not upstream blocks).
 */
static char *
ngx_http_solgate_blocks_long_term(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    int                      rc;
    char                     err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t               *value;
    ngx_uint_t               i;
    const char              *msg;
    ngx_http_solgate_url_t   parsed;

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        msg = ngx_http_solgate_parse_url(value[i].data, value[i].len,
                                         &parsed);
        if (msg != NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid long_term_storage URL \"%V\": %s",
                               &value[i], msg);
            return NGX_CONF_ERROR;
        }

        rc = sg_blocks_add_long_term(blocks->core,
                                     ngx_http_solgate_sg_str(&value[i]), err,
                                     sizeof(err));
        if (rc != SG_OK) {
            return ngx_http_solgate_conf_failed(cf, rc, err);
        }
    }

    return NGX_CONF_OK;
}


/* plan_define NAME tier=... getblock_rate=... ...: checked by libcore */
static char *
ngx_http_solgate_blocks_plan_define(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    int          rc;
    char         err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t    *args;
    ngx_str_t   *value;
    ngx_uint_t   i, n;

    value = cf->args->elts;
    n = cf->args->nelts - 2;

    args = ngx_palloc(cf->temp_pool, n * sizeof(sg_str_t));
    if (args == NULL) {
        return NGX_CONF_ERROR;
    }

    for (i = 0; i < n; i++) {
        args[i] = ngx_http_solgate_sg_str(&value[i + 2]);
    }

    rc = sg_blocks_define_plan(blocks->core,
                               ngx_http_solgate_sg_str(&value[1]), args, n,
                               err, sizeof(err));

    return rc == SG_OK ? NGX_CONF_OK
                       : ngx_http_solgate_conf_failed(cf, rc, err);
}


/*
 * Once the http block is read and the networks are built: each
 * solgate_blocks is attached to its network and gets its zone.
 */
ngx_int_t
ngx_http_solgate_blocks_build(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i;
    sg_blocks_conf_t              conf;
    ngx_http_solgate_blocks_t   **blocks, *b;

    blocks = smcf->blocks.elts;

    for (i = 0; i < smcf->blocks.nelts; i++) {
        b = blocks[i];

        b->network = ngx_http_solgate_find_network(smcf, &b->network_name);

        if (b->network == NULL) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "solgate_blocks names unknown network \"%V\" "
                          "(no solgate_network \"%V\" block) in %V:%ui",
                          &b->network_name, &b->network_name, &b->at.file,
                          b->at.line);
            return NGX_ERROR;
        }

        b->network->blocks = b;

        conf.region = ngx_http_solgate_sg_str(&b->region);
        conf.cache_dir = ngx_http_solgate_sg_str(&b->cache_dir);
        conf.state_dir = ngx_http_solgate_sg_str(&b->state_dir);
        conf.max_size = b->max_size == NGX_CONF_UNSET ? 0
                                                      : (uint64_t) b->max_size;
        conf.peer_token = ngx_http_solgate_sg_str(&b->peer_token);

        if (sg_blocks_attach(b->core, b->network->core, &conf) != SG_OK) {
            return NGX_ERROR;
        }

        if (ngx_http_solgate_blocks_zone(cf, b) != NGX_OK
            || ngx_http_solgate_blocks_path(cf, b, &b->cache_dir) != NGX_OK
            || ngx_http_solgate_blocks_path(cf, b, &b->state_dir) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * The cache and state directories are made by the master and given to the
 * workers' user, as nginx does for its temp paths: workers running as an
 * unprivileged user could not create them under a root-owned parent.
 * nginx creates only the last component, so the parents are made here.
 */
static ngx_int_t
ngx_http_solgate_blocks_path(ngx_conf_t *cf, ngx_http_solgate_blocks_t *b,
    ngx_str_t *dir)
{
    u_char      *name;
    ngx_err_t    err;
    ngx_path_t  *path;

    name = ngx_pnalloc(cf->pool, dir->len + 1);
    path = ngx_pcalloc(cf->pool, sizeof(ngx_path_t));
    if (name == NULL || path == NULL) {
        return NGX_ERROR;
    }

    ngx_cpystrn(name, dir->data, dir->len + 1);

    err = ngx_create_full_path(name, 0755);
    if (err) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, err,
                      "solgate_blocks \"%V\": cannot create the parents "
                      "of \"%V\"", &b->network_name, dir);
        return NGX_ERROR;
    }

    path->name.data = name;
    path->name.len = dir->len;
    path->conf_file = b->at.file.data;
    path->line = b->at.line;

    return ngx_add_path(cf, &path);
}


static void
ngx_http_solgate_blocks_free_core(void *data)
{
    sg_blocks_free(data);
}


static ngx_int_t
ngx_http_solgate_blocks_zone(ngx_conf_t *cf, ngx_http_solgate_blocks_t *b)
{
    size_t  size;

    /* the slab pool's headers (a page descriptor per 4k page) come on top */
    size = sg_blocks_shared_size(b->core);

    b->shm_zone = ngx_http_solgate_zone_add(cf, "solgate_blocks_",
                                            &b->network_name,
                                            size + size / 64 + 64 * 1024, b,
                                            size,
                                            ngx_http_solgate_bind_blocks);

    return b->shm_zone ? NGX_OK : NGX_ERROR;
}


/* As for the network zone, a reload keeps the counters and the keys. */
static ngx_int_t
ngx_http_solgate_bind_blocks(void *owner, void *shared, ngx_uint_t fresh,
    char *err, size_t err_size)
{
    ngx_http_solgate_blocks_t *b = owner;

    return sg_blocks_bind(b->core, shared, (int) fresh, err, err_size)
           == SG_OK ? NGX_OK : NGX_ERROR;
}


/*
 * In each worker: open the cache and its LMDB index (never before fork).
 * The first worker also reconciles the cache directory with the index.  A
 * cache that cannot be opened is logged and left out: getBlock is then
 * served by the other sources.
 */
ngx_int_t
ngx_http_solgate_blocks_start(ngx_cycle_t *cycle)
{
    char                           err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_uint_t                     i;
    ngx_http_solgate_blocks_t    **blocks, *b;
    ngx_http_solgate_main_conf_t  *smcf;

    /* not in the cache manager or loader: they serve no request */
    if (ngx_process != NGX_PROCESS_WORKER
        && ngx_process != NGX_PROCESS_SINGLE)
    {
        return NGX_OK;
    }

    smcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_solgate_module);

    if (smcf == NULL) {
        return NGX_OK;
    }

    blocks = smcf->blocks.elts;

    for (i = 0; i < smcf->blocks.nelts; i++) {
        b = blocks[i];

        if (sg_blocks_open(b->core, ngx_worker == 0, err, sizeof(err))
            != SG_OK)
        {
            ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                          "solgate_blocks \"%V\": cannot open the cache "
                          "\"%V\" with its index in \"%V\": %s; serving "
                          "getBlock without it", &b->network_name,
                          &b->cache_dir, &b->state_dir, err);
        }
    }

    return NGX_OK;
}


void
ngx_http_solgate_blocks_stop(ngx_cycle_t *cycle)
{
    ngx_uint_t                     i;
    ngx_http_solgate_blocks_t    **blocks;
    ngx_http_solgate_main_conf_t  *smcf;

    smcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_solgate_module);

    if (smcf == NULL) {
        return;
    }

    blocks = smcf->blocks.elts;

    for (i = 0; i < smcf->blocks.nelts; i++) {
        sg_blocks_close(blocks[i]->core);
    }
}
