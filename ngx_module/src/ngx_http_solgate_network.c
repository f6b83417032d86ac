/*
 * The solgate_network block (a Solana cluster's upstreams and settings),
 * the solgate_network_defaults block, the core network built from them,
 * and the shared memory zone its workers share.
 */

#include "ngx_http_solgate_module.h"


#define NGX_HTTP_SOLGATE_DEFAULT_DEBOUNCE  400
#define NGX_HTTP_SOLGATE_DEFAULT_MAX_LAG   100


static char *ngx_http_solgate_network_directive(ngx_conf_t *cf,
    ngx_command_t *dummy, void *conf);
static char *ngx_http_solgate_defaults_directive(ngx_conf_t *cf,
    ngx_command_t *dummy, void *conf);
static char *ngx_http_solgate_set_cluster(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_set_zone(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_set_commitment(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_set_debounce(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_set_max_lag(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_set_enforce(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_set_use_upstream_default(ngx_conf_t *cf,
    void *target, ngx_str_t *value);
static char *ngx_http_solgate_add_upstream(ngx_conf_t *cf, void *target,
    ngx_str_t *value);
static char *ngx_http_solgate_method_list(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, ngx_str_t *arg, ngx_str_t *list);
static char *ngx_http_solgate_upstream_option(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, ngx_str_t *option);
static ngx_int_t ngx_http_solgate_add_zone(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ssize_t size);
static ngx_int_t ngx_http_solgate_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_int_t ngx_http_solgate_build_core(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network);
static ngx_int_t ngx_http_solgate_add_core_upstream(ngx_conf_t *cf,
    sg_network_t *core, ngx_http_solgate_upstream_t *upstream);
static ngx_str_t ngx_http_solgate_block_address(ngx_conf_t *cf,
    ngx_str_t *authority);
static void ngx_http_solgate_free_core(void *data);


static ngx_http_solgate_block_cmd_t  ngx_http_solgate_network_cmds[] = {
    { ngx_string("cluster"), 1, 1, ngx_http_solgate_set_cluster, 0 },
    { ngx_string("zone"), 1, 1, ngx_http_solgate_set_zone, 0 },
    { ngx_string("commitment"), 1, 1, ngx_http_solgate_set_commitment, 0 },
    { ngx_string("upstream"), 2, 6, ngx_http_solgate_add_upstream, 0 },
    { ngx_string("use_upstream_default"), 1, 1,
      ngx_http_solgate_set_use_upstream_default, 0 },
    { ngx_string("state_poller_debounce"), 1, 1,
      ngx_http_solgate_set_debounce, 1 },
    { ngx_string("max_finalized_slot_lag"), 1, 1,
      ngx_http_solgate_set_max_lag, 1 },
    { ngx_string("enforce_block_availability"), 1, 1,
      ngx_http_solgate_set_enforce, 1 },
    { ngx_null_string, 0, 0, NULL, 0 }
};


/* solgate_network_defaults takes only the settings */
static ngx_http_solgate_block_cmd_t  *ngx_http_solgate_defaults_cmds =
    &ngx_http_solgate_network_cmds[5];


void
ngx_http_solgate_init_settings(ngx_http_solgate_settings_t *settings)
{
    settings->debounce = NGX_CONF_UNSET_MSEC;
    settings->max_finalized_slot_lag = NGX_CONF_UNSET;
    settings->enforce_block_availability = NGX_CONF_UNSET;
}


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
     *     network->core = NULL;
     *     network->conf.default_commitment = SG_COMMITMENT_NONE;
     */

    network->name = value[1];
    network->conf.cluster = SG_CLUSTER_CUSTOM;
    network->conf_file = cf->conf_file->file.name;
    network->conf_line = cf->conf_file->line;
    ngx_http_solgate_init_settings(&network->settings);

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


char *
ngx_http_solgate_defaults_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    char        *rv;
    ngx_conf_t   save;

    if (smcf->defaults_set) {
        return "is duplicate";
    }

    smcf->defaults_set = 1;

    save = *cf;
    cf->handler = ngx_http_solgate_defaults_directive;
    cf->handler_conf = (char *) &smcf->defaults;

    rv = ngx_conf_parse(cf, NULL);

    *cf = save;

    return rv;
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

    return ngx_http_solgate_block_directive(cf, ngx_http_solgate_network_cmds,
                                            "solgate_network", network,
                                            &network->settings);
}


static char *
ngx_http_solgate_defaults_directive(ngx_conf_t *cf, ngx_command_t *dummy,
    void *conf)
{
    return ngx_http_solgate_block_directive(cf,
                                            ngx_http_solgate_defaults_cmds,
                                            "solgate_network_defaults", NULL,
                                            conf);
}


/*
 * One directive inside a Solgate block: finds it in cmds, checks the
 * number of arguments, calls its setter on the block (or on the settings).
 */
char *
ngx_http_solgate_block_directive(ngx_conf_t *cf,
    ngx_http_solgate_block_cmd_t *cmds, const char *block, void *network,
    ngx_http_solgate_settings_t *settings)
{
    char                          *rv;
    ngx_uint_t                     nargs;
    ngx_str_t                     *value;
    ngx_http_solgate_block_cmd_t  *c;

    value = cf->args->elts;
    nargs = cf->args->nelts - 1;

    for (c = cmds; c->name.len; c++) {
        if (c->name.len != value[0].len
            || ngx_strncmp(c->name.data, value[0].data, value[0].len) != 0)
        {
            continue;
        }

        if (nargs < c->min_args || nargs > c->max_args) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid number of arguments in \"%V\" "
                               "in \"%s\"", &value[0], block);
            return NGX_CONF_ERROR;
        }

        rv = c->set(cf, c->settings ? (void *) settings : network, value);

        if (rv != NGX_CONF_OK && rv != NGX_CONF_ERROR) {
            /* as ngx_conf_handler does for directives of the main tables */
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\" directive %s",
                               &value[0], rv);
            return NGX_CONF_ERROR;
        }

        return rv;
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "unknown directive \"%V\" in \"%s\"", &value[0],
                       block);
    return NGX_CONF_ERROR;
}


static char *
ngx_http_solgate_set_cluster(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_network_t *network = target;

    if (sg_cluster_parse((char *) value[1].data, value[1].len,
                         &network->conf.cluster)
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
ngx_http_solgate_set_commitment(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_network_t *network = target;

    if (sg_commitment_parse((char *) value[1].data, value[1].len,
                            &network->conf.default_commitment)
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
ngx_http_solgate_set_use_upstream_default(ngx_conf_t *cf, void *target,
    ngx_str_t *value)
{
    ngx_http_solgate_network_t *network = target;

    const char  *err;

    if (network->use_upstream_default.data != NULL) {
        return "is duplicate";
    }

    if (value[1].len) {
        err = sg_selector_check((char *) value[1].data, value[1].len);
        if (err != NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid use_upstream_default \"%V\": %s",
                               &value[1], err);
            return NGX_CONF_ERROR;
        }
    }

    network->use_upstream_default = value[1];

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_debounce(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_settings_t *settings = target;

    ngx_msec_t  msec;

    if (settings->debounce != NGX_CONF_UNSET_MSEC) {
        return "is duplicate";
    }

    msec = ngx_parse_time(&value[1], 0);

    if (msec == (ngx_msec_t) NGX_ERROR || msec > 60000) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid state_poller_debounce \"%V\", it must be "
                           "a time up to 60s", &value[1]);
        return NGX_CONF_ERROR;
    }

    settings->debounce = msec;

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_max_lag(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_settings_t *settings = target;

    ngx_int_t  n;

    if (settings->max_finalized_slot_lag != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    n = ngx_atoi(value[1].data, value[1].len);

    if (n == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid max_finalized_slot_lag \"%V\", it must "
                           "be a number of slots (0 disables the filter)",
                           &value[1]);
        return NGX_CONF_ERROR;
    }

    settings->max_finalized_slot_lag = n;

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_enforce(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_settings_t *settings = target;

    if (settings->enforce_block_availability != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    if (ngx_strcmp(value[1].data, "on") == 0) {
        settings->enforce_block_availability = 1;

    } else if (ngx_strcmp(value[1].data, "off") == 0) {
        settings->enforce_block_availability = 0;

    } else {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid value \"%V\" in "
                           "\"enforce_block_availability\", it must be "
                           "\"on\" or \"off\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_zone(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_network_t *network = target;

    ssize_t  size, min;

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

    /* the upstream table plus the slab allocator's own pages */
    min = (ssize_t) (sg_network_shared_size() + 16 * ngx_pagesize);
    min = ngx_align(min, 64 * 1024);

    if (size < min) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "zone \"%V\" is too small, the minimum is %uzk",
                           &value[1], (size_t) min / 1024);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_add_zone(cf, network, size) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_add_upstream(ngx_conf_t *cf, void *target, ngx_str_t *value)
{
    ngx_http_solgate_network_t *network = target;

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

    if (ngx_http_solgate_init_upstream(cf, upstream, &value[1], &value[2],
                                       &url)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
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


/*
 * An upstream (or another region's gateway) from its id and URL: proxy_pass
 * gets the URL with a path ("/" added when it has none, so the client's own
 * URI is never sent), and the Host header is the URL's authority.
 */
ngx_int_t
ngx_http_solgate_init_upstream(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, ngx_str_t *id, ngx_str_t *url,
    ngx_http_solgate_url_t *parsed)
{
    u_char  *p;

    ngx_memzero(upstream, sizeof(ngx_http_solgate_upstream_t));

    upstream->id = *id;
    upstream->url = *url;
    upstream->host.data = (u_char *) parsed->authority;
    upstream->host.len = parsed->authority_len;

    if (parsed->path_len == 0) {
        p = ngx_pnalloc(cf->pool, url->len + 1);
        if (p == NULL) {
            return NGX_ERROR;
        }

        upstream->url.data = p;
        upstream->url.len = ngx_cpymem(p, url->data, url->len) - p;
        upstream->url.data[upstream->url.len++] = '/';
    }

    return NGX_OK;
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

    if (ngx_strncmp(option->data, "methods=", 8) == 0) {
        arg.data = option->data + 8;
        arg.len = option->len - 8;

        return ngx_http_solgate_method_list(cf, upstream, &arg,
                                            &upstream->methods);
    }

    if (ngx_strncmp(option->data, "ignore_methods=", 15) == 0) {
        arg.data = option->data + 15;
        arg.len = option->len - 15;

        return ngx_http_solgate_method_list(cf, upstream, &arg,
                                            &upstream->ignore_methods);
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "invalid parameter \"%V\" in upstream \"%V\", "
                       "expected \"host=\", \"tags=\", \"methods=\" or "
                       "\"ignore_methods=\"",
                       option, &upstream->id);
    return NGX_CONF_ERROR;
}


static char *
ngx_http_solgate_method_list(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, ngx_str_t *arg, ngx_str_t *list)
{
    const char  *err;

    err = ngx_http_solgate_check_methods(arg->data, arg->len);
    if (err != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid method list \"%V\" in upstream \"%V\": "
                           "%s", arg, &upstream->id, err);
        return NGX_CONF_ERROR;
    }

    *list = *arg;

    return NGX_CONF_OK;
}


/*
 * Called once the http block is read (every network, the defaults and the
 * upstream blocks known): settles each network's settings and builds its
 * core network.
 */
ngx_int_t
ngx_http_solgate_build_cores(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i;
    sg_network_t                **core;
    ngx_http_solgate_network_t  **network;

    if (ngx_array_init(&smcf->cores, cf->pool, smcf->networks.nelts + 1,
                       sizeof(sg_network_t *))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    network = smcf->networks.elts;

    for (i = 0; i < smcf->networks.nelts; i++) {
        if (ngx_http_solgate_build_core(cf, smcf, network[i]) != NGX_OK) {
            return NGX_ERROR;
        }

        core = ngx_array_push(&smcf->cores);
        if (core == NULL) {
            return NGX_ERROR;
        }

        *core = network[i]->core;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_build_core(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network)
{
    ngx_uint_t                    i;
    ngx_pool_cleanup_t           *cln;
    ngx_http_solgate_settings_t  *s, *d;
    ngx_http_solgate_upstream_t  *upstream;

    s = &network->settings;
    d = &smcf->defaults;

    ngx_conf_merge_msec_value(s->debounce, d->debounce,
                              NGX_HTTP_SOLGATE_DEFAULT_DEBOUNCE);
    ngx_conf_merge_value(s->max_finalized_slot_lag, d->max_finalized_slot_lag,
                         NGX_HTTP_SOLGATE_DEFAULT_MAX_LAG);
    ngx_conf_merge_value(s->enforce_block_availability,
                         d->enforce_block_availability, 1);

    network->conf.debounce_ms = (uint32_t) s->debounce;
    network->conf.max_finalized_slot_lag = s->max_finalized_slot_lag;
    network->conf.enforce_block_availability = s->enforce_block_availability;

    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    network->core = sg_network_new((char *) network->name.data,
                                   network->name.len, &network->conf);
    if (network->core == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_solgate_free_core;
    cln->data = network->core;

    upstream = network->upstreams.elts;

    for (i = 0; i < network->upstreams.nelts; i++) {
        if (ngx_http_solgate_add_core_upstream(cf, network->core,
                                               &upstream[i])
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_add_core_upstream(ngx_conf_t *cf, sg_network_t *core,
    ngx_http_solgate_upstream_t *upstream)
{
    u_char                  *p;
    ngx_str_t                authority, connect_to, poll_url;
    sg_upstream_conf_t       conf;
    ngx_http_solgate_url_t   url;

    (void) ngx_http_solgate_parse_url(upstream->url.data, upstream->url.len,
                                      &url);

    authority.data = (u_char *) url.authority;
    authority.len = url.authority_len;
    connect_to = ngx_http_solgate_block_address(cf, &authority);
    poll_url = upstream->url;

    if (connect_to.len == 0 && connect_to.data != NULL) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "upstream \"%V\": the first server of upstream block "
                      "\"%V\" is a unix socket, which the state poller "
                      "cannot reach; list a TCP server first",
                      &upstream->id, &authority);
        return NGX_ERROR;
    }

    /*
     * Through an upstream block, the poller connects to the block's server
     * but names the real host in the URL, so TLS sends the right server
     * name and checks the right certificate.
     */
    if (connect_to.len && (upstream->host.len != authority.len
                           || ngx_strncmp(upstream->host.data, authority.data,
                                          authority.len) != 0))
    {
        poll_url.len = sizeof("https://") - 1 + upstream->host.len
                       + url.path_len;
        poll_url.data = ngx_pnalloc(cf->pool, poll_url.len);
        if (poll_url.data == NULL) {
            return NGX_ERROR;
        }

        p = ngx_sprintf(poll_url.data, "%s://%V", url.https ? "https" : "http",
                        &upstream->host);
        p = ngx_cpymem(p, url.path, url.path_len);
        poll_url.len = p - poll_url.data;
    }

    conf.id.data = (char *) upstream->id.data;
    conf.id.len = upstream->id.len;
    conf.poll_url.data = (char *) poll_url.data;
    conf.poll_url.len = poll_url.len;
    conf.host_header.data = (char *) upstream->host.data;
    conf.host_header.len = upstream->host.len;
    conf.connect_to.data = (char *) connect_to.data;
    conf.connect_to.len = connect_to.len;
    conf.tags.data = (char *) upstream->tags.data;
    conf.tags.len = upstream->tags.len;
    conf.methods.data = (char *) upstream->methods.data;
    conf.methods.len = upstream->methods.len;
    conf.ignore_methods.data = (char *) upstream->ignore_methods.data;
    conf.ignore_methods.len = upstream->ignore_methods.len;

    return sg_network_add_upstream(core, &conf) == SG_OK ? NGX_OK : NGX_ERROR;
}


/*
 * When the URL's host names an nginx upstream block, the poller (which does
 * not go through nginx) connects to that block's first server: a curl
 * CONNECT_TO entry "::ADDRESS" does that for any host and port.  Servers
 * on unix sockets are not supported by the poller.
 */
static ngx_str_t
ngx_http_solgate_block_address(ngx_conf_t *cf, ngx_str_t *authority)
{
    ngx_str_t                        none = ngx_null_string, entry;
    ngx_uint_t                       i;
    ngx_http_upstream_server_t      *server;
    ngx_http_upstream_srv_conf_t   **uscf;
    ngx_http_upstream_main_conf_t   *umcf;

    umcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_upstream_module);
    uscf = umcf->upstreams.elts;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (!(uscf[i]->flags & NGX_HTTP_UPSTREAM_CREATE)
            || uscf[i]->servers == NULL
            || uscf[i]->servers->nelts == 0
            || uscf[i]->host.len != authority->len
            || ngx_strncasecmp(uscf[i]->host.data, authority->data,
                               authority->len) != 0)
        {
            continue;
        }

        server = uscf[i]->servers->elts;

        if (server[0].naddrs == 0) {
            return none;
        }

#if (NGX_HAVE_UNIX_DOMAIN)
        if (server[0].addrs[0].sockaddr->sa_family == AF_UNIX) {
            /* marks the error for the caller: curl cannot reach it */
            entry.data = (u_char *) "unix";
            entry.len = 0;
            return entry;
        }
#endif

        entry.len = 2 + server[0].addrs[0].name.len;
        entry.data = ngx_pnalloc(cf->pool, entry.len);
        if (entry.data == NULL) {
            return none;
        }

        ngx_sprintf(entry.data, "::%V", &server[0].addrs[0].name);

        return entry;
    }

    return none;
}


static void
ngx_http_solgate_free_core(void *data)
{
    sg_network_free(data);
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


/*
 * On reload the old zone's state is kept (as limit_req does) and the core
 * network matches it to the configured upstreams by id.
 */
static ngx_int_t
ngx_http_solgate_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    int                          fresh;
    char                         err[160];
    size_t                       len;
    void                        *shared;
    ngx_slab_pool_t             *shpool;
    ngx_http_solgate_network_t  *network;

    network = shm_zone->data;
    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (data != NULL || shm_zone->shm.exists) {
        shared = shpool->data;
        fresh = 0;

    } else {
        shared = ngx_slab_calloc(shpool, sg_network_shared_size());
        if (shared == NULL) {
            return NGX_ERROR;
        }

        shpool->data = shared;
        fresh = 1;

        len = sizeof(" in solgate zone \"\"") + shm_zone->shm.name.len;

        shpool->log_ctx = ngx_slab_alloc(shpool, len);
        if (shpool->log_ctx == NULL) {
            return NGX_ERROR;
        }

        ngx_sprintf(shpool->log_ctx, " in solgate zone \"%V\"%Z",
                    &shm_zone->shm.name);
    }

    if (sg_network_bind(network->core, shared, fresh,
                        (int64_t) ngx_current_msec, err, sizeof(err))
        != SG_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                      "solgate network \"%V\": %s", &network->name, err);
        return NGX_ERROR;
    }

    return NGX_OK;
}
