/*
 * The solgate_network block: a Solana cluster's upstreams and settings,
 * and the shared memory zone its workers share.
 */

#include "ngx_http_solgate_module.h"


typedef char *(*ngx_http_solgate_setter_pt)(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value);

typedef struct {
    ngx_str_t                    name;
    ngx_uint_t                   min_args;   /* after the directive name */
    ngx_uint_t                   max_args;
    ngx_http_solgate_setter_pt   set;
} ngx_http_solgate_network_cmd_t;


static char *ngx_http_solgate_network_directive(ngx_conf_t *cf,
    ngx_command_t *dummy, void *conf);
static char *ngx_http_solgate_set_cluster(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value);
static char *ngx_http_solgate_set_zone(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value);
static char *ngx_http_solgate_set_commitment(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value);
static char *ngx_http_solgate_add_upstream(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value);
static char *ngx_http_solgate_upstream_option(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, ngx_str_t *option);
static ngx_int_t ngx_http_solgate_add_zone(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ssize_t size);
static ngx_int_t ngx_http_solgate_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);


static ngx_http_solgate_network_cmd_t  ngx_http_solgate_network_cmds[] = {
    { ngx_string("cluster"), 1, 1, ngx_http_solgate_set_cluster },
    { ngx_string("zone"), 1, 1, ngx_http_solgate_set_zone },
    { ngx_string("commitment"), 1, 1, ngx_http_solgate_set_commitment },
    { ngx_string("upstream"), 2, 4, ngx_http_solgate_add_upstream },
    { ngx_null_string, 0, 0, NULL }
};


char *
ngx_http_solgate_network_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    char                         *rv;
    ngx_str_t                    *value;
    const char                   *err;
    ngx_conf_t                    save;
    ngx_http_solgate_network_t   *network, **slot;

    value = cf->args->elts;

    err = ngx_http_solgate_check_id(value[1].data, value[1].len);
    if (err != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid network name \"%V\": %s", &value[1], err);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_find_network(smcf, &value[1]) != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "duplicate solgate_network \"%V\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    network = ngx_pcalloc(cf->pool, sizeof(ngx_http_solgate_network_t));
    if (network == NULL) {
        return NGX_CONF_ERROR;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     network->shm_zone = NULL;
     *     network->sh = NULL;
     *     network->core.default_commitment = SG_COMMITMENT_NONE;
     */

    network->name = value[1];
    network->core.cluster = SG_CLUSTER_CUSTOM;
    network->conf_file = cf->conf_file->file.name;
    network->conf_line = cf->conf_file->line;

    if (ngx_array_init(&network->upstreams, cf->pool, 4,
                       sizeof(ngx_http_solgate_upstream_t))
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    save = *cf;
    cf->handler = ngx_http_solgate_network_directive;
    cf->handler_conf = (char *) network;

    rv = ngx_conf_parse(cf, NULL);

    *cf = save;

    if (rv != NGX_CONF_OK) {
        return rv;
    }

    if (network->upstreams.nelts == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "solgate_network \"%V\" has no \"upstream\"",
                           &network->name);
        return NGX_CONF_ERROR;
    }

    if (network->shm_zone == NULL
        && ngx_http_solgate_add_zone(cf, network,
                                     NGX_HTTP_SOLGATE_DEFAULT_ZONE)
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    slot = ngx_array_push(&smcf->networks);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = network;

    return NGX_CONF_OK;
}


ngx_http_solgate_network_t *
ngx_http_solgate_find_network(ngx_http_solgate_main_conf_t *smcf,
    ngx_str_t *name)
{
    ngx_uint_t                    i;
    ngx_http_solgate_network_t  **network;

    network = smcf->networks.elts;

    for (i = 0; i < smcf->networks.nelts; i++) {
        if (network[i]->name.len == name->len
            && ngx_strncmp(network[i]->name.data, name->data, name->len) == 0)
        {
            return network[i];
        }
    }

    return NULL;
}


static char *
ngx_http_solgate_network_directive(ngx_conf_t *cf, ngx_command_t *dummy,
    void *conf)
{
    ngx_http_solgate_network_t *network = conf;

    ngx_uint_t                       nargs;
    ngx_str_t                       *value;
    ngx_http_solgate_network_cmd_t  *c;

    value = cf->args->elts;
    nargs = cf->args->nelts - 1;

    for (c = ngx_http_solgate_network_cmds; c->name.len; c++) {
        if (c->name.len != value[0].len
            || ngx_strncmp(c->name.data, value[0].data, value[0].len) != 0)
        {
            continue;
        }

        if (nargs < c->min_args || nargs > c->max_args) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid number of arguments in \"%V\" "
                               "in \"solgate_network\"", &value[0]);
            return NGX_CONF_ERROR;
        }

        return c->set(cf, network, value);
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "unknown directive \"%V\" in \"solgate_network\"",
                       &value[0]);
    return NGX_CONF_ERROR;
}


static char *
ngx_http_solgate_set_cluster(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value)
{
    if (sg_cluster_parse((char *) value[1].data, value[1].len,
                         &network->core.cluster)
        != SG_OK)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid cluster \"%V\", it must be "
                           "\"mainnet-beta\", \"devnet\", \"testnet\" or "
                           "\"custom\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_commitment(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value)
{
    if (sg_commitment_parse((char *) value[1].data, value[1].len,
                            &network->core.default_commitment)
        != SG_OK)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid commitment \"%V\", it must be "
                           "\"processed\", \"confirmed\" or \"finalized\"",
                           &value[1]);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_zone(ngx_conf_t *cf, ngx_http_solgate_network_t *network,
    ngx_str_t *value)
{
    ssize_t  size;

    if (network->shm_zone != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"zone\" is duplicate");
        return NGX_CONF_ERROR;
    }

    size = ngx_parse_size(&value[1]);

    if (size == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid zone size \"%V\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    if (size < (ssize_t) (8 * ngx_pagesize)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "zone \"%V\" is too small, the minimum is %uzk",
                           &value[1], 8 * ngx_pagesize / 1024);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_add_zone(cf, network, size) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_add_upstream(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_str_t *value)
{
    u_char                       *p;
    ngx_uint_t                    i;
    const char                   *err;
    ngx_http_solgate_url_t        url;
    ngx_http_solgate_upstream_t  *upstream, *existing;

    err = ngx_http_solgate_check_id(value[1].data, value[1].len);
    if (err != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid upstream id \"%V\": %s", &value[1], err);
        return NGX_CONF_ERROR;
    }

    existing = network->upstreams.elts;

    for (i = 0; i < network->upstreams.nelts; i++) {
        if (existing[i].id.len == value[1].len
            && ngx_strncmp(existing[i].id.data, value[1].data, value[1].len)
               == 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "duplicate upstream \"%V\" in network \"%V\"",
                               &value[1], &network->name);
            return NGX_CONF_ERROR;
        }
    }

    if (network->upstreams.nelts >= NGX_HTTP_SOLGATE_MAX_UPSTREAMS) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "too many upstreams in network \"%V\", "
                           "the maximum is %d", &network->name,
                           NGX_HTTP_SOLGATE_MAX_UPSTREAMS);
        return NGX_CONF_ERROR;
    }

    err = ngx_http_solgate_parse_url(value[2].data, value[2].len, &url);
    if (err != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid upstream URL \"%V\": %s", &value[2], err);
        return NGX_CONF_ERROR;
    }

    upstream = ngx_array_push(&network->upstreams);
    if (upstream == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(upstream, sizeof(ngx_http_solgate_upstream_t));

    upstream->id = value[1];
    upstream->url = value[2];
    upstream->host.data = (u_char *) url.authority;
    upstream->host.len = url.authority_len;

    if (url.path_len == 0) {
        /* send "/", never the client's own URI */
        p = ngx_pnalloc(cf->pool, value[2].len + 1);
        if (p == NULL) {
            return NGX_CONF_ERROR;
        }

        upstream->url.data = p;
        upstream->url.len = ngx_cpymem(p, value[2].data, value[2].len) - p;
        upstream->url.data[upstream->url.len++] = '/';
    }

    for (i = 3; i < cf->args->nelts; i++) {
        if (ngx_http_solgate_upstream_option(cf, upstream, &value[i])
            != NGX_CONF_OK)
        {
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_upstream_option(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, ngx_str_t *option)
{
    ngx_str_t    arg;
    const char  *err;

    if (ngx_strncmp(option->data, "host=", 5) == 0) {
        arg.data = option->data + 5;
        arg.len = option->len - 5;

        if (arg.len == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "empty \"host=\" in upstream \"%V\"",
                               &upstream->id);
            return NGX_CONF_ERROR;
        }

        upstream->host = arg;
        return NGX_CONF_OK;
    }

    if (ngx_strncmp(option->data, "tags=", 5) == 0) {
        arg.data = option->data + 5;
        arg.len = option->len - 5;

        err = ngx_http_solgate_check_tags(arg.data, arg.len);
        if (err != NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid tags \"%V\" in upstream \"%V\": %s",
                               &arg, &upstream->id, err);
            return NGX_CONF_ERROR;
        }

        upstream->tags = arg;
        return NGX_CONF_OK;
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "invalid parameter \"%V\" in upstream \"%V\", "
                       "expected \"host=\" or \"tags=\"",
                       option, &upstream->id);
    return NGX_CONF_ERROR;
}


static ngx_int_t
ngx_http_solgate_add_zone(ngx_conf_t *cf, ngx_http_solgate_network_t *network,
    ssize_t size)
{
    ngx_str_t        name;
    ngx_shm_zone_t  *shm_zone;

    name.len = sizeof("solgate_") - 1 + network->name.len;
    name.data = ngx_pnalloc(cf->pool, name.len);
    if (name.data == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(name.data, "solgate_%V", &network->name);

    shm_zone = ngx_shared_memory_add(cf, &name, size,
                                     &ngx_http_solgate_module);
    if (shm_zone == NULL) {
        return NGX_ERROR;
    }

    if (shm_zone->data != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "shared memory zone \"%V\" is already in use",
                           &name);
        return NGX_ERROR;
    }

    shm_zone->init = ngx_http_solgate_init_zone;
    shm_zone->data = network;
    network->shm_zone = shm_zone;

    return NGX_OK;
}


/* On reload the old zone's state is kept, as limit_req does. */
static ngx_int_t
ngx_http_solgate_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_http_solgate_network_t *old = data;

    size_t                       len;
    ngx_slab_pool_t             *shpool;
    ngx_http_solgate_network_t  *network;

    network = shm_zone->data;

    if (old != NULL) {
        network->sh = old->sh;
        return NGX_OK;
    }

    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        network->sh = shpool->data;
        return NGX_OK;
    }

    network->sh = ngx_slab_calloc(shpool, sizeof(ngx_http_solgate_shctx_t));
    if (network->sh == NULL) {
        return NGX_ERROR;
    }

    shpool->data = network->sh;

    len = sizeof(" in solgate zone \"\"") + shm_zone->shm.name.len;

    shpool->log_ctx = ngx_slab_alloc(shpool, len);
    if (shpool->log_ctx == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(shpool->log_ctx, " in solgate zone \"%V\"%Z",
                &shm_zone->shm.name);

    return NGX_OK;
}
