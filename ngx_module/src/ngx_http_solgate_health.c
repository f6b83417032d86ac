/*
 * solgate_health NETWORK: the location a load balancer checks.  libcore
 * says whether the network has an upstream that may take client traffic
 * (sg_network_health, by the router's own standing: no lock, no
 * allocation); this handler sends its answer, 200 or 503 with a short
 * JSON body, to GET and HEAD.
 */

#include "ngx_http_solgate_module.h"


static ngx_int_t ngx_http_solgate_health_handler(ngx_http_request_t *r);


char *
ngx_http_solgate_health(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_loc_conf_t *slcf = conf;

    ngx_str_t                 *value;
    ngx_http_core_loc_conf_t  *clcf;

    if (slcf->health_name.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;
    slcf->health_name = value[1];

    if (ngx_http_solgate_add_pass_ref(cf, "solgate_health", &value[1],
                                      &slcf->health, 1)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_solgate_health_handler;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_solgate_health_handler(ngx_http_request_t *r)
{
    u_char                       *body;
    ngx_int_t                     rc;
    sg_health_t                   health;
    ngx_http_solgate_loc_conf_t  *slcf;

    rc = ngx_http_solgate_read_only(r);
    if (rc != NGX_OK) {
        return rc;
    }

    /* a browser's dashboard reads a node's /health from another origin */
    if (ngx_http_solgate_cors_origin(r)
        && ngx_http_solgate_cors_allow_origin(r) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (sg_network_health(slcf->health->core, (int64_t) ngx_current_msec,
                          &health)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    body = ngx_pnalloc(r->pool, health.len);
    if (body == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memcpy(body, health.body, health.len);

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "solgate health: %ui, %uz eligible",
                   (ngx_uint_t) health.http_status, health.eligible);

    return ngx_http_solgate_send_json(r, health.http_status, body,
                                      health.len);
}
