/*
 * solgate_admin: libcore answers GET .../state, POST .../cordon,
 * .../uncordon and .../drain (sg_admin_handle); this handler hands it the
 * path, the method and the query arguments, logs what it says to log, and
 * sends the answer.  solgate_metrics: libcore's Prometheus text.
 * solgate_status: libcore's HTML status page.
 */

#include "ngx_http_solgate_module.h"


static ngx_int_t ngx_http_solgate_admin_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_metrics_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_status_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_admin_arg(ngx_http_request_t *r,
    char *name, sg_str_t *value, int *present);


static ngx_str_t  ngx_http_solgate_admin_type = ngx_string("application/json");
static ngx_str_t  ngx_http_solgate_metrics_type =
    ngx_string("text/plain; version=0.0.4");
static ngx_str_t  ngx_http_solgate_status_type =
    ngx_string("text/html; charset=utf-8");


char *
ngx_http_solgate_admin(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_solgate_admin_handler;

    return NGX_CONF_OK;
}


char *
ngx_http_solgate_metrics(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_solgate_metrics_handler;

    return NGX_CONF_OK;
}


char *
ngx_http_solgate_status(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_solgate_status_handler;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_solgate_admin_handler(ngx_http_request_t *r)
{
    ngx_int_t                      rc;
    ngx_str_t                      allow;
    sg_admin_answer_t              answer;
    sg_admin_request_t             req;
    ngx_http_solgate_main_conf_t  *smcf;

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_memzero(&req, sizeof(sg_admin_request_t));

    req.uri = ngx_http_solgate_sg_str(&r->uri);
    req.get = (r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD)) != 0;
    req.post = (r->method & NGX_HTTP_POST) != 0;

    if (ngx_http_solgate_admin_arg(r, "network", &req.network,
                                   &req.has_network)
        != NGX_OK
        || ngx_http_solgate_admin_arg(r, "upstream", &req.upstream,
                                      &req.has_upstream)
           != NGX_OK
        || ngx_http_solgate_admin_arg(r, "reason", &req.reason,
                                      &req.has_reason)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    smcf = ngx_http_get_module_main_conf(r, ngx_http_solgate_module);

    if (sg_admin_handle(smcf->cores.elts, smcf->cores.nelts, &req,
                        (int64_t) ngx_current_msec, ngx_http_solgate_wall_ms(),
                        &answer)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (answer.log.len) {
        ngx_log_error((ngx_uint_t) answer.log_level, r->connection->log, 0,
                      "solgate: %*s", answer.log.len, answer.log.data);
    }

    sg_text_free(&answer.log);

    if (answer.allow.len > 0) {
        allow.data = (u_char *) answer.allow.data;
        allow.len = answer.allow.len;

        if (ngx_http_solgate_set_allow(r, &allow) != NGX_OK) {
            sg_text_free(&answer.body);
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    return ngx_http_solgate_send_text(r, answer.http_status,
                                      &ngx_http_solgate_admin_type,
                                      &answer.body);
}


static ngx_int_t
ngx_http_solgate_metrics_handler(ngx_http_request_t *r)
{
    sg_text_t                      text;
    ngx_int_t                      rc;
    ngx_http_solgate_main_conf_t  *smcf;

    rc = ngx_http_solgate_read_only(r);
    if (rc != NGX_OK) {
        return rc;
    }

    smcf = ngx_http_get_module_main_conf(r, ngx_http_solgate_module);

    if (sg_status_render_metrics(smcf->cores.elts, smcf->cores.nelts,
                                 (int64_t) ngx_current_msec, &text)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_send_text(r, NGX_HTTP_OK,
                                      &ngx_http_solgate_metrics_type, &text);
}


/*
 * The page refreshes itself (a script, or a meta refresh without one):
 * a cached copy would freeze it.
 */
static ngx_int_t
ngx_http_solgate_status_handler(ngx_http_request_t *r)
{
    sg_text_t                      text;
    ngx_int_t                      rc;
    ngx_table_elt_t               *h;
    ngx_http_solgate_main_conf_t  *smcf;

    rc = ngx_http_solgate_read_only(r);
    if (rc != NGX_OK) {
        return rc;
    }

    smcf = ngx_http_get_module_main_conf(r, ngx_http_solgate_module);

    if (sg_status_render_page(smcf->cores.elts, smcf->cores.nelts,
                              (int64_t) ngx_current_msec,
                              ngx_http_solgate_wall_ms(), &text)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        sg_text_free(&text);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Cache-Control");
    ngx_str_set(&h->value, "no-store");

    return ngx_http_solgate_send_text(r, NGX_HTTP_OK,
                                      &ngx_http_solgate_status_type, &text);
}


/* A query argument, URL-decoded ('+' is a space), for libcore. */
static ngx_int_t
ngx_http_solgate_admin_arg(ngx_http_request_t *r, char *name,
    sg_str_t *value, int *present)
{
    ngx_int_t  rc;
    ngx_str_t  text;

    rc = ngx_http_solgate_query_arg(r, name, 1, &text, NULL);

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    *present = rc == NGX_OK;

    if (*present) {
        *value = ngx_http_solgate_sg_str(&text);
    }

    return NGX_OK;
}
