/*
 * Solgate: Solana JSON-RPC routing for nginx.  This file holds the module
 * tables, the main and location configuration, solgate_pass, and the
 * process hooks that start and stop the poller thread.
 */

#include "ngx_http_solgate_module.h"


static ngx_int_t ngx_http_solgate_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_solgate_init_module(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_solgate_init_process(ngx_cycle_t *cycle);
static void ngx_http_solgate_exit_process(ngx_cycle_t *cycle);
static void *ngx_http_solgate_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_solgate_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_solgate_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static char *ngx_http_solgate_pass(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_solgate_resolve_pass_refs(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);
static ngx_int_t ngx_http_solgate_check_retry_locations(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);
static ngx_int_t ngx_http_solgate_check_forwarding(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);
static ngx_int_t ngx_http_solgate_check_resolvers(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf);


static ngx_command_t  ngx_http_solgate_commands[] = {

    { ngx_string("solgate_network"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_BLOCK|NGX_CONF_TAKE1,
      ngx_http_solgate_network_block,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_network_defaults"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_BLOCK|NGX_CONF_NOARGS,
      ngx_http_solgate_defaults_block,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_blocks"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_BLOCK|NGX_CONF_TAKE1,
      ngx_http_solgate_blocks_block,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_shared_state"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_solgate_shared_state,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_host_id"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_solgate_host_id,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_balancer"),
      NGX_HTTP_UPS_CONF|NGX_CONF_NOARGS,
      ngx_http_solgate_balancer,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_dispatch"),
      NGX_HTTP_UPS_CONF|NGX_CONF_NOARGS,
      ngx_http_solgate_dispatch,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_pass"),
      NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_solgate_pass,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_cors"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_solgate_loc_conf_t, cors),
      NULL },

    { ngx_string("solgate_health"),
      NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_solgate_health,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_admin"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_solgate_admin,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_metrics"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_solgate_metrics,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("solgate_status"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_solgate_status,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_solgate_module_ctx = {
    ngx_http_solgate_add_variables,        /* preconfiguration */
    ngx_http_solgate_init,                 /* postconfiguration */

    ngx_http_solgate_create_main_conf,     /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_solgate_create_loc_conf,      /* create location configuration */
    ngx_http_solgate_merge_loc_conf        /* merge location configuration */
};


ngx_module_t  ngx_http_solgate_module = {
    NGX_MODULE_V1,
    &ngx_http_solgate_module_ctx,          /* module context */
    ngx_http_solgate_commands,             /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    ngx_http_solgate_init_module,          /* init module */
    ngx_http_solgate_init_process,         /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    ngx_http_solgate_exit_process,         /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_int_t
ngx_http_solgate_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt           *h;
    ngx_http_core_main_conf_t     *cmcf;
    ngx_http_solgate_main_conf_t  *smcf;

    smcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_solgate_module);

    if (ngx_http_solgate_resolve_pass_refs(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_solgate_build_cores(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_solgate_fleet_build(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_solgate_blocks_build(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_solgate_check_forwarding(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_solgate_check_resolvers(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_solgate_dispatch_check(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    /* after the dispatch check: it marks the locations that dispatch */
    if (ngx_http_solgate_check_retry_locations(cf, smcf) != NGX_OK) {
        return NGX_ERROR;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_ACCESS_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_solgate_access_handler;

    /*
     * A phase runs its handlers last pushed first: the URI becomes "/" for
     * solgate_dispatch after a call of a batch is routed, and after any
     * fan-out it starts took the client's URI for its subrequests.
     */
    if (smcf->dispatchers.nelts > 0) {
        h = ngx_array_push(&cmcf->phases[NGX_HTTP_PRECONTENT_PHASE].handlers);
        if (h == NULL) {
            return NGX_ERROR;
        }

        *h = ngx_http_solgate_dispatch_uri_handler;
    }

    /* the calls of a batch that goes call by call are subrequests, which
     * skip the access phase */
    h = ngx_array_push(&cmcf->phases[NGX_HTTP_PRECONTENT_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_solgate_piece_handler;

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_LOG_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_solgate_log_handler;

    return ngx_http_solgate_filter_init(cf);
}


static void *
ngx_http_solgate_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_solgate_main_conf_t  *smcf;

    smcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_solgate_main_conf_t));
    if (smcf == NULL) {
        return NULL;
    }

    if (ngx_array_init(&smcf->networks, cf->pool, 2,
                       sizeof(ngx_http_solgate_network_t *))
        != NGX_OK)
    {
        return NULL;
    }

    if (ngx_array_init(&smcf->blocks, cf->pool, 1,
                       sizeof(ngx_http_solgate_blocks_t *))
        != NGX_OK)
    {
        return NULL;
    }

    if (ngx_array_init(&smcf->pass_refs, cf->pool, 4,
                       sizeof(ngx_http_solgate_pass_ref_t))
        != NGX_OK)
    {
        return NULL;
    }

    if (ngx_array_init(&smcf->balanced, cf->pool, 2,
                       sizeof(ngx_http_upstream_srv_conf_t *))
        != NGX_OK)
    {
        return NULL;
    }

    if (ngx_array_init(&smcf->dispatchers, cf->pool, 1,
                       sizeof(ngx_http_upstream_srv_conf_t *))
        != NGX_OK)
    {
        return NULL;
    }

    if (ngx_array_init(&smcf->notices, cf->pool, 2, sizeof(ngx_str_t))
        != NGX_OK)
    {
        return NULL;
    }

    ngx_http_solgate_init_settings(&smcf->defaults);

    /*
     * set by ngx_pcalloc():
     *
     *     smcf->cores = { 0 };   built in postconfiguration
     *     smcf->defaults_set = 0;
     */

    return smcf;
}


static void *
ngx_http_solgate_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_solgate_loc_conf_t  *slcf;

    slcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_solgate_loc_conf_t));
    if (slcf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     slcf->pass_name = { 0, NULL };
     *     slcf->network = NULL;
     *     slcf->health_name = { 0, NULL };
     *     slcf->health = NULL;
     */

    slcf->cors = NGX_CONF_UNSET;

    return slcf;
}


static char *
ngx_http_solgate_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_solgate_loc_conf_t  *prev = parent;
    ngx_http_solgate_loc_conf_t  *conf = child;

    /*
     * solgate_pass is not inherited: a nested location without it is not
     * routed.  Browsers are answered as a node answers them unless told.
     */

    ngx_conf_merge_value(conf->cors, prev->cors, 1);

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_pass(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_loc_conf_t *slcf = conf;

    ngx_str_t  *value;

    if (slcf->pass_name.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;
    slcf->pass_name = value[1];

    if (ngx_http_solgate_add_pass_ref(cf, "solgate_pass", &value[1],
                                      &slcf->network, 0)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/*
 * A location directive naming a network, which may be defined further
 * down the http block: *target is set once the block is read.
 */
ngx_int_t
ngx_http_solgate_add_pass_ref(ngx_conf_t *cf, const char *directive,
    ngx_str_t *name, ngx_http_solgate_network_t **target, ngx_uint_t health)
{
    ngx_http_solgate_pass_ref_t   *ref;
    ngx_http_solgate_main_conf_t  *smcf;

    smcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_solgate_module);

    ref = ngx_array_push(&smcf->pass_refs);
    if (ref == NULL) {
        return NGX_ERROR;
    }

    ref->directive = directive;
    ref->name = *name;
    ref->target = target;
    ref->server = ngx_http_conf_get_module_srv_conf(cf, ngx_http_core_module);
    ref->location = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    ref->health = health;
    ngx_http_solgate_conf_here(cf, &ref->at);

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_resolve_pass_refs(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i;
    ngx_http_solgate_pass_ref_t  *ref;

    ref = smcf->pass_refs.elts;

    for (i = 0; i < smcf->pass_refs.nelts; i++) {
        *ref[i].target = ngx_http_solgate_find_network(smcf, &ref[i].name);

        if (*ref[i].target == NULL) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "%s names unknown network \"%V\" "
                          "(no solgate_network \"%V\" block) in %V:%ui",
                          ref[i].directive, &ref[i].name, &ref[i].name,
                          &ref[i].at.file, ref[i].at.line);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * solgate_proxy.conf fails over through "location @solgate_retry": a
 * server without it would answer every failover with HTTP 500.  Named
 * locations are known once the http block is read.
 */
static ngx_int_t
ngx_http_solgate_check_retry_locations(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i;
    ngx_http_core_loc_conf_t    **named;
    ngx_http_solgate_loc_conf_t  *slcf;
    ngx_http_solgate_pass_ref_t  *ref;

    static ngx_str_t  retry = ngx_string("@solgate_retry");

    ref = smcf->pass_refs.elts;

    for (i = 0; i < smcf->pass_refs.nelts; i++) {
        if (ref[i].health) {
            continue;
        }

        named = ref[i].server->named_locations;

        while (named != NULL && *named != NULL) {
            if ((*named)->name.len == retry.len
                && ngx_strncmp((*named)->name.data, retry.data, retry.len)
                   == 0)
            {
                break;
            }
            named++;
        }

        if (named == NULL || *named == NULL) {
            slcf = ref[i].location->loc_conf[ngx_http_solgate_module.ctx_index];

            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "solgate_pass in %V:%ui: its server has no "
                          "\"location @solgate_retry\", which failover "
                          "needs (every failed attempt would answer HTTP "
                          "500); add one with \"solgate_pass %V;\" and "
                          "the forwarding snippet (\"include "
                          "/etc/nginx/snippets/%s;\")",
                          &ref[i].at.file, ref[i].at.line, &ref[i].name,
                          slcf->dispatched ? "solgate_dispatch.conf"
                                           : "solgate_proxy.conf");
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * A solgate_pass location forwards through the snippet's proxy_pass (or
 * another *_pass): without one, every call Solgate does not answer itself
 * would fall to the static handler and get a 404.
 */
static ngx_int_t
ngx_http_solgate_check_forwarding(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i;
    ngx_http_solgate_pass_ref_t  *ref;

    ref = smcf->pass_refs.elts;

    for (i = 0; i < smcf->pass_refs.nelts; i++) {
        if (ref[i].health || ref[i].location->handler != NULL) {
            continue;
        }

        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "solgate_pass in %V:%ui: its location forwards "
                      "nothing (no proxy_pass), so every call Solgate does "
                      "not answer itself would get a 404; include the "
                      "forwarding snippet beside it (\"include "
                      "/etc/nginx/snippets/solgate_proxy.conf;\")",
                      &ref[i].at.file, ref[i].at.line);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * proxy_pass with a variable finds an upstream's host among the upstream
 * {} blocks, or reads it as an address; any other host name is resolved
 * per request by the location's resolver, and fails every request without
 * one ("no resolver defined").
 */
static ngx_int_t
ngx_http_solgate_check_resolvers(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i, u;
    ngx_resolver_t               *resolver;
    ngx_http_solgate_network_t   *network;
    ngx_http_solgate_pass_ref_t  *ref;
    ngx_http_solgate_upstream_t  *upstream;

    ref = smcf->pass_refs.elts;

    for (i = 0; i < smcf->pass_refs.nelts; i++) {
        if (ref[i].health) {
            continue;
        }

        resolver = ref[i].location->resolver;

        if (resolver != NULL && resolver->connections.nelts > 0) {
            continue;
        }

        network = *ref[i].target;
        upstream = network->upstreams.elts;

        for (u = 0; u < network->upstreams.nelts; u++) {
            if (!upstream[u].by_name && !upstream[u].ws_by_name) {
                continue;
            }

            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "upstream \"%V\" of network \"%V\": its host "
                          "\"%V\" is neither an upstream {} block nor an "
                          "address, and the location of solgate_pass in "
                          "%V:%ui has no \"resolver\" to find it (every "
                          "request would fail); define an upstream {} "
                          "block named so, or set \"resolver\" in %V:%ui",
                          &upstream[u].id, &network->name,
                          upstream[u].by_name ? &upstream[u].authority
                                              : &upstream[u].ws_authority,
                          &ref[i].at.file,
                          ref[i].at.line, &upstream[u].at.file,
                          upstream[u].at.line);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * The startup line goes to the error log of the configuration just read
 * (init_module runs once it is open), not to the terminal of `nginx -t`
 * or `nginx -s reload`, where a notice reads like a problem.
 */
static ngx_int_t
ngx_http_solgate_init_module(ngx_cycle_t *cycle)
{
    ngx_uint_t                     i, upstreams;
    ngx_str_t                     *notice;
    ngx_http_solgate_network_t   **network;
    ngx_http_solgate_main_conf_t  *smcf;

    smcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_solgate_module);

    if (smcf != NULL && smcf->networks.nelts > 0) {
        network = smcf->networks.elts;
        upstreams = 0;

        for (i = 0; i < smcf->networks.nelts; i++) {
            upstreams += network[i]->upstreams.nelts;
        }

        ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0,
                      "solgate %s: %ui network(s), %ui upstream(s)",
                      sg_version(), smcf->networks.nelts, upstreams);
    }

    if (smcf != NULL) {
        notice = smcf->notices.elts;

        for (i = 0; i < smcf->notices.nelts; i++) {
            ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0, "solgate: %V",
                          &notice[i]);
        }
    }

    return ngx_http_solgate_poller_reload(cycle);
}


/*
 * A notice about the configuration being read, kept for init_module to
 * log with the startup line (see there).
 */
ngx_int_t
ngx_http_solgate_conf_notice(ngx_conf_t *cf, const char *fmt, ...)
{
    u_char                        *p, buf[NGX_MAX_CONF_ERRSTR];
    va_list                        args;
    ngx_str_t                     *notice;
    ngx_http_solgate_main_conf_t  *smcf;

    smcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_solgate_module);

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    notice = ngx_array_push(&smcf->notices);
    if (notice == NULL) {
        return NGX_ERROR;
    }

    notice->len = p - buf;
    notice->data = ngx_pnalloc(cf->pool, notice->len);
    if (notice->data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(notice->data, buf, notice->len);

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_init_process(ngx_cycle_t *cycle)
{
    if (ngx_http_solgate_blocks_start(cycle) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_solgate_poller_start(cycle);
}


static void
ngx_http_solgate_exit_process(ngx_cycle_t *cycle)
{
    /* the poller thread uses the cache too: it stops first */
    ngx_http_solgate_poller_stop(cycle);
    ngx_http_solgate_blocks_stop(cycle);
}
