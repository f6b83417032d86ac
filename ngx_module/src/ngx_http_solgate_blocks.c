/*
 * The solgate_blocks block (Cube Runner: getBlock from the region cache,
 * the ledger, other regions and long-term storage), its shared zone, and
 * its life in each worker: the cache opened after fork and closed at exit.
 * Its disk work (commits, request scores, evictions) runs on the worker's
 * poller thread, never on the event loop.
 */

#include "ngx_http_solgate_module.h"


typedef int (*ngx_http_solgate_blocks_set_pt)(sg_blocks_t *blocks,
    sg_str_t value, char *err, size_t err_size);

static char *ngx_http_solgate_blocks_word(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_solgate_blocks_cache(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_state(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_peer(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_solgate_blocks_long_term(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_blocks_plan_define(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_solgate_blocks_zone(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *blocks);
static ngx_int_t ngx_http_solgate_bind_blocks(void *owner, void *shared,
    ngx_uint_t fresh, ngx_log_t *log, char *err, size_t err_size);
static ngx_int_t ngx_http_solgate_blocks_reach(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *b);
static ngx_int_t ngx_http_solgate_blocks_path(ngx_conf_t *cf,
    ngx_http_solgate_blocks_t *b, ngx_str_t *dir);
static void ngx_http_solgate_blocks_free_core(void *data);
static void ngx_http_solgate_blocks_log_opening(ngx_cycle_t *cycle,
    ngx_http_solgate_blocks_t *b);


/* A one-word directive (cmd->post): libcore's setter, and whether the
 * module keeps a copy of the word at cmd->offset. */
typedef struct {
    ngx_http_solgate_blocks_set_pt   set;
    ngx_flag_t                       keep;
} ngx_http_solgate_blocks_word_t;

static ngx_http_solgate_blocks_word_t  ngx_http_solgate_region_word = {
    sg_blocks_set_region, 0
};

static ngx_http_solgate_blocks_word_t  ngx_http_solgate_keyless_plan_word = {
    sg_blocks_set_keyless_plan, 0
};

static ngx_http_solgate_blocks_word_t  ngx_http_solgate_lock_timeout_word = {
    sg_blocks_set_cache_lock_timeout, 0
};

/* the module keeps the token: it sends it as $solgate_peer_token */
static ngx_http_solgate_blocks_word_t  ngx_http_solgate_peer_token_word = {
    sg_blocks_set_peer_token, 1
};


static ngx_command_t  ngx_http_solgate_blocks_commands[] = {

    { ngx_string("region"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_word,
      0,
      0,
      &ngx_http_solgate_region_word },

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
      ngx_http_solgate_blocks_word,
      0,
      offsetof(ngx_http_solgate_blocks_t, peer_token),
      &ngx_http_solgate_peer_token_word },

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

    { ngx_string("keyless_plan"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_word,
      0,
      0,
      &ngx_http_solgate_keyless_plan_word },

    { ngx_string("cache_lock_timeout"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_word,
      0,
      0,
      &ngx_http_solgate_lock_timeout_word },

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

    int                          rc;
    char                        *rv, err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t                   *value;
    ngx_uint_t                   i;
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
    ngx_http_solgate_conf_here(cf, &blocks->at);

    if (ngx_array_init(&blocks->peers, cf->pool, 2,
                       sizeof(ngx_http_solgate_upstream_t))
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* the core is built now so each directive reports at file:line; it is
     * attached to its network once the http block is read */
    if (sg_blocks_new(&blocks->core) != SG_OK) {
        return NGX_CONF_ERROR;
    }

    cln->handler = ngx_http_solgate_blocks_free_core;
    cln->data = blocks->core;

    rv = ngx_http_solgate_conf_block(cf, ngx_http_solgate_blocks_commands,
                                     "solgate_blocks", blocks);
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    rc = sg_blocks_check(blocks->core, blocks->api_key != NULL,
                         blocks->plan != NULL, err, sizeof(err));
    if (rc != SG_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "solgate_blocks \"%V\" %s",
                           &blocks->network_name, err);
        return NGX_CONF_ERROR;
    }

    slot = ngx_array_push(&smcf->blocks);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = blocks;

    return NGX_CONF_OK;
}


/* A one-word directive libcore checks and keeps (cmd->post says how). */
static char *
ngx_http_solgate_blocks_word(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    int                              rc;
    char                             err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t                       *value;
    ngx_http_solgate_blocks_word_t  *word;

    value = cf->args->elts;
    word = cmd->post;

    rc = word->set(blocks->core, ngx_http_solgate_sg_str(&value[1]), err,
                   sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    if (word->keep) {
        *(ngx_str_t *) ((u_char *) blocks + cmd->offset) = value[1];
    }

    return NGX_CONF_OK;
}


/* cache PATH [max_size=SIZE]: nginx makes the path absolute and reads the
 * size; libcore keeps both. */
static char *
ngx_http_solgate_blocks_cache(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    int         rc;
    char        err[NGX_HTTP_SOLGATE_ERR_SIZE];
    off_t       max_size;
    ngx_str_t  *value, dir, size;

    value = cf->args->elts;
    dir = value[1];
    max_size = 0;

    if (ngx_conf_full_name(cf->cycle, &dir, 0) != NGX_OK) {
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

        max_size = ngx_parse_offset(&size);

        if (max_size <= 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid max_size \"%V\"", &size);
            return NGX_CONF_ERROR;
        }
    }

    rc = sg_blocks_set_cache(blocks->core, ngx_http_solgate_sg_str(&dir),
                             (uint64_t) max_size, err, sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    blocks->cache_dir = dir;

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_blocks_state(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    int         rc;
    char        err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t  *value, dir;

    value = cf->args->elts;
    dir = value[1];

    if (ngx_conf_full_name(cf->cycle, &dir, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_blocks_set_state(blocks->core, ngx_http_solgate_sg_str(&dir), err,
                             sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    blocks->state_dir = dir;

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

    int                           rc;
    char                          err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t                     *args;
    ngx_uint_t                    n;
    sg_upstream_info_t            info;
    ngx_http_solgate_upstream_t  *peer;

    if (ngx_http_solgate_conf_args(cf, 1, &args, &n) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_blocks_add_peer(blocks->core, args, n, &info, err, sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    peer = ngx_array_push(&blocks->peers);
    if (peer == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_copy_info(cf, peer, &info) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/*
 * long_term_storage URL [URL ...]: JSON-RPC endpoints that answer getBlock
 * for every slot since genesis, asked in order by the poller thread (not
 * through nginx: a URL naming an upstream {} block is reached at the
 * block's servers, ngx_http_solgate_blocks_reach).
 */
static char *
ngx_http_solgate_blocks_long_term(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_blocks_t *blocks = conf;

    int          rc;
    char         err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t   *value;
    ngx_uint_t   i;

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        rc = sg_blocks_add_long_term(blocks->core,
                                     ngx_http_solgate_sg_str(&value[i]), err,
                                     sizeof(err));
        if (rc != SG_OK) {
            return ngx_http_solgate_conf_failed(cf, rc, err);
        }

        blocks->long_terms++;
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
    ngx_uint_t   n;

    if (ngx_http_solgate_conf_args(cf, 1, &args, &n) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_blocks_define_plan(blocks->core, args, n, err, sizeof(err));

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
    int                           rc;
    char                          err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_uint_t                    i;
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

        if (ngx_http_solgate_blocks_reach(cf, b) != NGX_OK) {
            return NGX_ERROR;
        }

        rc = sg_blocks_attach(b->core, b->network->core, err, sizeof(err));
        if (rc != SG_OK) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "solgate_blocks \"%V\" %s in %V:%ui",
                          &b->network_name, err, &b->at.file, b->at.line);
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
 * A long_term_storage URL or a peer naming an upstream {} block, as
 * `upstream` may: the poller thread, which does not go through nginx,
 * reaches the block's servers (libcore decides which).
 */
static ngx_int_t
ngx_http_solgate_blocks_reach(ngx_conf_t *cf, ngx_http_solgate_blocks_t *b)
{
    int                            rc;
    char                           err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t                       written;
    ngx_str_t                      authority;
    ngx_uint_t                     i;
    sg_block_server_t             *servers;
    ngx_http_solgate_upstream_t   *peer;
    ngx_http_upstream_srv_conf_t  *uscf;

    /* last to first: a URL made into several endpoints moves the later */
    for (i = b->long_terms; i-- > 0; /* void */) {
        written = sg_blocks_long_term_authority(b->core, i);
        authority.len = written.len;
        authority.data = (u_char *) written.data;

        uscf = ngx_http_solgate_find_block(cf, &authority);
        if (uscf == NULL) {
            continue;
        }

        servers = ngx_http_solgate_block_servers(cf, uscf);
        if (servers == NULL) {
            return NGX_ERROR;
        }

        rc = sg_blocks_long_term_through_block(b->core, i, servers,
                                               uscf->servers->nelts, err,
                                               sizeof(err));
        if (rc != SG_OK) {
            goto failed;
        }
    }

    peer = b->peers.elts;

    for (i = 0; i < b->peers.nelts; i++) {
        uscf = ngx_http_solgate_find_block(cf, &peer[i].authority);
        if (uscf == NULL) {
            continue;
        }

        servers = ngx_http_solgate_block_servers(cf, uscf);
        if (servers == NULL) {
            return NGX_ERROR;
        }

        rc = sg_blocks_peer_through_block(b->core, i, servers,
                                          uscf->servers->nelts, err,
                                          sizeof(err));
        if (rc != SG_OK) {
            goto failed;
        }
    }

    return NGX_OK;

failed:

    ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "solgate_blocks \"%V\" %s in %V:%ui",
                  &b->network_name, err, &b->at.file, b->at.line);
    return NGX_ERROR;
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
                      "of \"%V\" in %V:%ui", &b->network_name, dir,
                      &b->at.file, b->at.line);
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
    size_t                   size;
    ngx_http_solgate_zone_t  zone;

    /* the slab pool's headers (a page descriptor per 4k page) come on top */
    size = sg_blocks_shared_size(b->core);

    zone.block = "solgate_blocks";
    zone.name = b->network_name;
    zone.at = b->at;
    zone.owner = b;
    zone.shared_size = size;
    zone.bind = ngx_http_solgate_bind_blocks;
    zone.supersede = NULL;
    zone.afresh = "Cube Runner's counters, key table and long-term queues "
                  "start again (the cache, its index and the allowances are "
                  "on disk and stay)";

    b->shm_zone = ngx_http_solgate_zone_add(cf, "solgate_blocks_",
                                            size + size / 64 + 64 * 1024,
                                            &zone);

    return b->shm_zone ? NGX_OK : NGX_ERROR;
}


/* As for the network zone, a reload keeps the counters and the keys. */
static ngx_int_t
ngx_http_solgate_bind_blocks(void *owner, void *shared, ngx_uint_t fresh,
    ngx_log_t *log, char *err, size_t err_size)
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
    int                            rc;
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

        rc = sg_blocks_open(b->core, ngx_worker == 0, err, sizeof(err));

        /* what it found, even when the key ledger then failed */
        ngx_http_solgate_blocks_log_opening(cycle, b);

        if (rc != SG_OK) {
            ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                          "solgate_blocks \"%V\": cannot open the cache "
                          "\"%V\" with its index in \"%V\": %s; serving "
                          "getBlock without it", &b->network_name,
                          &b->cache_dir, &b->state_dir, err);
        }
    }

    return NGX_OK;
}


/*
 * What opening found, once (by the worker that reconciles): an index or a
 * key ledger that could not be read and was started over, and what the
 * reconcile removed.
 */
static void
ngx_http_solgate_blocks_log_opening(ngx_cycle_t *cycle,
    ngx_http_solgate_blocks_t *b)
{
    ngx_uint_t           level;
    sg_blocks_opening_t  o;

    sg_blocks_opening(b->core, &o);

    if (o.index_damage.len > 0) {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                      "solgate_blocks \"%V\": the block index in "
                      "\"%V/blocks\" could not be read (%*s); it was moved "
                      "to \"%V/blocks.corrupt\" and the cache \"%V\" "
                      "emptied", &b->network_name, &b->state_dir,
                      o.index_damage.len, o.index_damage.data,
                      &b->state_dir, &b->cache_dir);
    }

    if (o.ledger_damage.len > 0) {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                      "solgate_blocks \"%V\": the key ledger in "
                      "\"%V/keys\" could not be read (%*s); it was moved "
                      "to \"%V/keys.corrupt\" and started empty: the keys' "
                      "allowances and repeat counts start from zero",
                      &b->network_name, &b->state_dir,
                      o.ledger_damage.len, o.ledger_damage.data,
                      &b->state_dir);
    }

    if (!o.reconciled || o.index_damage.len > 0) {
        return;     /* a cache emptied: the alert above says it */
    }

    level = (o.items_removed > 0 || o.entries_dropped > 0) ? NGX_LOG_WARN
                                                          : NGX_LOG_NOTICE;

    ngx_log_error(level, cycle->log, 0,
                  "solgate_blocks \"%V\": cache \"%V\" checked against its "
                  "index: %uL cached block(s) kept, %uL entr(ies) dropped "
                  "(file missing or not the file indexed), %uL stray or "
                  "mismatched item(s) removed from it",
                  &b->network_name, &b->cache_dir, o.entries_kept,
                  o.entries_dropped, o.items_removed);
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
