/*
 * The solgate_blocks block (Cube Runner: getBlock from the region cache,
 * the ledger, other regions and long-term storage), its shared zone, and
 * its life in each worker: the cache opened after fork and closed at exit.
 * Its disk work (commits, request scores, evictions) runs on the worker's
 * poller thread, never on the event loop.
 */

#include "ngx_http_solgate_module.h"


#define NGX_HTTP_SOLGATE_MIN_PEER_TOKEN 16    /* kMinPeerTokenBytes */


static char *ngx_http_solgate_blocks_directive(ngx_conf_t *cf,
    ngx_command_t *dummy, void *conf);
static char *ngx_http_solgate_blocks_region(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_blocks_cache(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_blocks_state(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_blocks_peer(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_blocks_peer_token(ngx_conf_t *cf,
    void *target, ngx_str_t *value);
static char *ngx_http_solgate_blocks_long_term(ngx_conf_t *cf,
    void *target, ngx_str_t *value);
static char *ngx_http_solgate_blocks_api_key(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_blocks_plan(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_blocks_plan_define(ngx_conf_t *cf,
    void *target, ngx_str_t *value);
static char *ngx_http_solgate_blocks_variable(ngx_conf_t *cf,
    ngx_str_t *value, ngx_http_complex_value_t **cv);
static ngx_int_t ngx_http_solgate_blocks_zone(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *blocks);
static ngx_int_t ngx_http_solgate_blocks_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_int_t ngx_http_solgate_blocks_path(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *b, ngx_str_t *dir);
static void ngx_http_solgate_blocks_free_core(void *data);


static ngx_http_solgate_block_cmd_t  ngx_http_solgate_blocks_cmds[] = {
    { ngx_string("region"), 1, 1, ngx_http_solgate_blocks_region, 0 },
    { ngx_string("cache"), 1, 2, ngx_http_solgate_blocks_cache, 0 },
    { ngx_string("state"), 1, 1, ngx_http_solgate_blocks_state, 0 },
    { ngx_string("peer"), 2, 3, ngx_http_solgate_blocks_peer, 0 },
    { ngx_string("peer_token"), 1, 1, ngx_http_solgate_blocks_peer_token, 0 },
    { ngx_string("long_term_storage"), 1, 8,
      ngx_http_solgate_blocks_long_term, 0 },
    { ngx_string("api_key"), 1, 1, ngx_http_solgate_blocks_api_key, 0 },
    { ngx_string("plan"), 1, 1, ngx_http_solgate_blocks_plan, 0 },
    { ngx_string("plan_define"), 2, 8, ngx_http_solgate_blocks_plan_define,
      0 },
    { ngx_null_string, 0, 0, NULL, 0 }
};


char *
ngx_http_solgate_blocks_block(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    char                        *rv;
    ngx_str_t                   *value;
    ngx_uint_t                   i;
    ngx_conf_t                   save;
    sg_blocks_conf_t             core_conf;
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
    if (blocks == NULL) {
        return NGX_CONF_ERROR;
    }

    blocks->network_name = value[1];
    blocks->max_size = NGX_CONF_UNSET;
    blocks->conf_file = cf->conf_file->file.name;
    blocks->conf_line = cf->conf_file->line;

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

    save = *cf;
    cf->handler = ngx_http_solgate_blocks_directive;
    cf->handler_conf = (char *) blocks;

    rv = ngx_conf_parse(cf, NULL);

    *cf = save;

    if (rv != NGX_CONF_OK) {
        sg_blocks_free(blocks->core);
        return rv;
    }

    if (blocks->peers.nelts && blocks->peer_token.len == 0) {
        sg_blocks_free(blocks->core);
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "solgate_blocks \"%V\" has a \"peer\" but no "
                           "\"peer_token\"", &blocks->network_name);
        return NGX_CONF_ERROR;
    }

    if (blocks->region.len == 0 || blocks->cache_dir.len == 0
        || blocks->state_dir.len == 0 || blocks->api_key == NULL
        || blocks->plan == NULL)
    {
        sg_blocks_free(blocks->core);
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "solgate_blocks \"%V\" needs \"region\", "
                           "\"cache\", \"state\", \"api_key\" and \"plan\"",
                           &blocks->network_name);
        return NGX_CONF_ERROR;
    }

    slot = ngx_array_push(&smcf->blocks);
    if (slot == NULL) {
        sg_blocks_free(blocks->core);
        return NGX_CONF_ERROR;
    }

    *slot = blocks;

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_blocks_directive(ngx_conf_t *cf, ngx_command_t *dummy,
    void *conf)
{
    return ngx_http_solgate_block_directive(cf, ngx_http_solgate_blocks_cmds,
                                            "solgate_blocks", conf, NULL);
}


static char *
ngx_http_solgate_blocks_region(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    const char  *err;

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
ngx_http_solgate_blocks_cache(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    ngx_str_t  size;

    if (blocks->cache_dir.len) {
        return "is duplicate";
    }

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
ngx_http_solgate_blocks_state(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    if (blocks->state_dir.len) {
        return "is duplicate";
    }

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
ngx_http_solgate_blocks_peer(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    char                          err[160];
    sg_str_t                      name, url;
    ngx_uint_t                    i, copy;
    const char                   *msg;
    ngx_http_solgate_url_t        parsed;
    ngx_http_solgate_upstream_t  *peer;

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

    if (ngx_http_solgate_init_upstream(cf, peer, &value[1], &value[2],
                                       &parsed)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    name.data = (char *) peer->id.data;
    name.len = peer->id.len;
    url.data = (char *) peer->url.data;
    url.len = peer->url.len;

    if (sg_blocks_add_peer(blocks->core, name, url, copy, err, sizeof(err))
        != SG_OK)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_blocks_peer_token(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    if (blocks->peer_token.len) {
        return "is duplicate";
    }

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
ngx_http_solgate_blocks_long_term(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    char                     err[160];
    sg_str_t                 url;
    ngx_uint_t               i;
    const char              *msg;
    ngx_http_solgate_url_t   parsed;

    for (i = 1; i < cf->args->nelts; i++) {
        msg = ngx_http_solgate_parse_url(value[i].data, value[i].len,
                                         &parsed);
        if (msg != NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid long_term_storage URL \"%V\": %s",
                               &value[i], msg);
            return NGX_CONF_ERROR;
        }

        url.data = (char *) value[i].data;
        url.len = value[i].len;

        if (sg_blocks_add_long_term(blocks->core, url, err, sizeof(err))
            != SG_OK)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_blocks_api_key(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    if (blocks->api_key != NULL) {
        return "is duplicate";
    }

    return ngx_http_solgate_blocks_variable(cf, &value[1], &blocks->api_key);
}


static char *
ngx_http_solgate_blocks_plan(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    if (blocks->plan != NULL) {
        return "is duplicate";
    }

    return ngx_http_solgate_blocks_variable(cf, &value[1], &blocks->plan);
}


static char *
ngx_http_solgate_blocks_variable(ngx_conf_t *cf, ngx_str_t *value,
    ngx_http_complex_value_t **cv)
{
    ngx_http_compile_complex_value_t   ccv;

    *cv = ngx_palloc(cf->pool, sizeof(ngx_http_complex_value_t));
    if (*cv == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(&ccv, sizeof(ngx_http_compile_complex_value_t));

    ccv.cf = cf;
    ccv.value = value;
    ccv.complex_value = *cv;

    if (ngx_http_compile_complex_value(&ccv) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* plan_define NAME tier=... getblock_rate=... ...: checked by libcore */
static char *
ngx_http_solgate_blocks_plan_define(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_blocks_t *blocks = target;

    char         err[160];
    sg_str_t     name, args[8];
    ngx_uint_t   i, n;

    n = cf->args->nelts - 2;

    for (i = 0; i < n; i++) {
        args[i].data = (char *) value[i + 2].data;
        args[i].len = value[i + 2].len;
    }

    name.data = (char *) value[1].data;
    name.len = value[1].len;

    if (sg_blocks_define_plan(blocks->core, name, args, n, err, sizeof(err))
        != SG_OK)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
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
    ngx_pool_cleanup_t           *cln;
    ngx_http_solgate_blocks_t   **blocks, *b;

    blocks = smcf->blocks.elts;

    for (i = 0; i < smcf->blocks.nelts; i++) {
        b = blocks[i];

        cln = ngx_pool_cleanup_add(cf->pool, 0);
        if (cln == NULL) {
            return NGX_ERROR;
        }

        cln->handler = ngx_http_solgate_blocks_free_core;
        cln->data = b->core;

        b->network = ngx_http_solgate_find_network(smcf, &b->network_name);

        if (b->network == NULL) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "solgate_blocks names unknown network \"%V\" "
                          "(no solgate_network \"%V\" block) in %V:%ui",
                          &b->network_name, &b->network_name, &b->conf_file,
                          b->conf_line);
            return NGX_ERROR;
        }

        b->network->blocks = b;

        conf.region.data = (char *) b->region.data;
        conf.region.len = b->region.len;
        conf.cache_dir.data = (char *) b->cache_dir.data;
        conf.cache_dir.len = b->cache_dir.len;
        conf.state_dir.data = (char *) b->state_dir.data;
        conf.state_dir.len = b->state_dir.len;
        conf.max_size = b->max_size == NGX_CONF_UNSET ? 0
                                                      : (uint64_t) b->max_size;
        conf.peer_token.data = (char *) b->peer_token.data;
        conf.peer_token.len = b->peer_token.len;

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
    path->conf_file = b->conf_file.data;
    path->line = b->conf_line;

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
    size_t           size;
    ngx_str_t        name;
    ngx_shm_zone_t  *shm_zone;

    name.len = sizeof("solgate_blocks_") - 1 + b->network_name.len;
    name.data = ngx_pnalloc(cf->pool, name.len);
    if (name.data == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(name.data, "solgate_blocks_%V", &b->network_name);

    /* the slab pool's headers (a page descriptor per 4k page) come on top */
    size = sg_blocks_shared_size(b->core);
    shm_zone = ngx_shared_memory_add(cf, &name, size + size / 64 + 64 * 1024,
                                     &ngx_http_solgate_module);
    if (shm_zone == NULL) {
        return NGX_ERROR;
    }

    shm_zone->init = ngx_http_solgate_blocks_init_zone;
    shm_zone->data = b;
    b->shm_zone = shm_zone;

    return NGX_OK;
}


/* As for the network zone, a reload keeps the counters and the keys. */
static ngx_int_t
ngx_http_solgate_blocks_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    int                         fresh;
    char                        err[160];
    void                       *shared;
    ngx_slab_pool_t            *shpool;
    ngx_http_solgate_blocks_t  *b;

    b = shm_zone->data;
    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (data != NULL || shm_zone->shm.exists) {
        shared = shpool->data;
        fresh = 0;

    } else {
        shared = ngx_slab_calloc(shpool, sg_blocks_shared_size(b->core));
        if (shared == NULL) {
            return NGX_ERROR;
        }

        shpool->data = shared;
        fresh = 1;
    }

    if (sg_blocks_bind(b->core, shared, fresh, err, sizeof(err)) != SG_OK) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                      "solgate_blocks \"%V\": %s", &b->network_name, err);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * In each worker: open the cache and its LMDB index (never before fork).
 * The first worker also reconciles the
 * cache directory with the index.  A cache that cannot be opened is
 * logged and left out: getBlock is then served by the other sources.
 */
ngx_int_t
ngx_http_solgate_blocks_start(ngx_cycle_t *cycle)
{
    char                           err[256];
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
