/*
 * Fleet mode: solgate_shared_state names the Redis server the hosts of a
 * fleet share their state through, solgate_host_id this host's name there.
 * libcore checks both (errors name the directive's file and line) and the
 * poller thread of each worker does the sharing.
 */

#include "ngx_http_solgate_module.h"


static void ngx_http_solgate_free_fleet(void *data);


char *
ngx_http_solgate_shared_state(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    int          rc;
    char        *rv;
    char         err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t    *args, none = { NULL, 0 };
    ngx_uint_t   n;
    sg_fleet_t  *fleet;

    if (smcf->shared_state != NULL) {
        return "is duplicate";
    }

    rv = ngx_http_solgate_conf_args(cf, 1, &args, &n);
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    /* checked now, for the error's place; made again with the host id */
    rc = sg_fleet_new(args, n, none, &fleet, err, sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    sg_fleet_free(fleet);

    smcf->shared_state = ngx_palloc(cf->pool, n * sizeof(sg_str_t));
    if (smcf->shared_state == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memcpy(smcf->shared_state, args, n * sizeof(sg_str_t));
    smcf->shared_state_n = n;

    return NGX_CONF_OK;
}


char *
ngx_http_solgate_host_id(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    int         rc;
    char        err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t  *value;

    if (smcf->host_id.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    rc = sg_fleet_check_host_id(ngx_http_solgate_sg_str(&value[1]), err,
                                sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    smcf->host_id = value[1];

    return NGX_CONF_OK;
}


/* Once the http block is read: the fleet, if there is one. */
ngx_int_t
ngx_http_solgate_fleet_build(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    char                 err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_pool_cleanup_t  *cln;

    if (smcf->shared_state == NULL) {
        return NGX_OK;
    }

    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    if (sg_fleet_new(smcf->shared_state, smcf->shared_state_n,
                     ngx_http_solgate_sg_str(&smcf->host_id), &smcf->fleet,
                     err, sizeof(err))
        != SG_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "solgate_shared_state: %s", err);
        return NGX_ERROR;
    }

    cln->handler = ngx_http_solgate_free_fleet;
    cln->data = smcf->fleet;

    return NGX_OK;
}


static void
ngx_http_solgate_free_fleet(void *data)
{
    sg_fleet_free(data);
}
